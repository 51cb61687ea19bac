"""The paper's experiments as studies (Sections 5 and 6): tiny end-to-end runs, the cache and
resume, the Dask path on an in-process cluster, the climb rule, the statistics."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from effdim.cli import main
from effdim.distribution import observed_distribution
from effdim.errors import InvalidArgument
from effdim.executor import Execution
from effdim.experiments import (
    HLCStudy,
    LCStudy,
    build_study,
    climb_all,
    deterministic_parameters,
    lc_job,
    mark_best,
    mean_se,
    paired_pvalue,
    run_jobs,
    write_outputs,
)
from effdim.experiments.plots import find_chromium
from effdim.experiments.runner import ExperimentError, job_key
from effdim.model import HLCModel
from effdim.nested import grown_node

TINY_LC = dict(
    generators=("3:2,2,2,2",),
    deterministic=("4:2,2,2,2",),
    replicates=2,
    sizes=(200, 800),
    cards=(1, 2, 3),
    restarts=2,
    max_iter=60,
)
TINY_HLC = dict(model="2(2(2,2),2,2(2,2))", replicates=2, sizes=(300, 1000), restarts=1, max_iter=40)


# ---------------------------------------------------------------- end to end
def test_tiny_lc_study_end_to_end(tmp_path):
    study = LCStudy(**TINY_LC)
    result = study.run(cache_dir=tmp_path / "cache", execution=Execution("serial"), progress=False)
    assert result.stats.executed == len(study.jobs()) == 2 * 2 * 2
    fits = result.fits()
    assert len(fits) == 8 * 3 and set(fits["card"]) == {1, 2, 3}
    assert (fits["kl_bits"] >= 0).all() and np.isfinite(fits["kl_bits"]).all()
    runs = result.runs()
    assert len(runs) == 8 * 4 and set(runs["score"]) == {"bic", "bic+", "cs", "cs+"}
    # the selection is the arg-max of each score among the fits of that data set
    for _, row in runs.iterrows():
        group = fits[
            (fits["label"] == row["label"]) & (fits["replicate"] == row["replicate"]) & (fits["n"] == row["n"])
        ]
        col = {"bic": "bic", "bic+": "bic_plus", "cs": "cs", "cs+": "cs_plus"}[row["score"]]
        assert group[col].max() == pytest.approx(group.loc[group["card"] == row["card"], col].iloc[0])
    summary = result.summary()
    assert len(summary) == 2 * 2 * 4
    assert set(summary["label"]) == {"3:2,2,2,2", "4:2,2,2,2 deterministic"}
    for _, g in summary.groupby(["label", "n"]):
        assert g["best"].sum() == 1 and g.loc[g["best"], "marked"].all()
        assert g.loc[g["best"], "kl_mean"].iloc[0] == pytest.approx(g["kl_mean"].min())
    assert "#### Generated from 3:2,2,2,2" in result.markdown()

    paths, notes = write_outputs(result, tmp_path / "out", plots=False)
    assert {p.name for p in paths} == {"lc_fits.csv", "lc_runs.csv", "lc_summary.csv", "lc_summary.md", "lc_run.json"}
    back = pd.read_csv(tmp_path / "out" / "lc_summary.csv")
    assert list(back.columns[:5]) == ["generator", "kind", "label", "n", "score"]
    meta = json.loads((tmp_path / "out" / "lc_run.json").read_text())
    assert meta["jobs"] == 8 and meta["config"]["replicates"] == 2


def test_plots_of_a_tiny_study(tmp_path):
    import holoviews  # noqa: F401 - a dependency of effdim: missing, the test fails rather than skips

    study = LCStudy(**{**TINY_LC, "deterministic": (), "sizes": (200, 800)})
    result = study.run(cache_dir=tmp_path / "cache", execution=Execution("serial"), progress=False)
    paths, notes = write_outputs(result, tmp_path / "out", plots=True, png=find_chromium() is not None)
    names = {p.name for p in paths}
    assert "lc_figure4.html" in names and "lc_figure5.html" not in names  # no deterministic generator
    assert "bokeh" in (tmp_path / "out" / "lc_figure4.html").read_text().lower()
    if find_chromium() is not None:
        png = tmp_path / "out" / "lc_figure4.png"
        assert not notes and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tiny_hlc_study_end_to_end(tmp_path):
    study = HLCStudy(**TINY_HLC)
    result = study.run(cache_dir=tmp_path / "cache", execution=Execution("serial"), progress=False)
    runs = result.runs()
    assert len(runs) == 2 * 2 * 4
    assert runs["cards"].str.match(r"^\d+,\d+,\d+$").all()
    table = result.table2()
    assert len(table) == 2 * 4
    assert table.loc[table["n"] == 300, "paper_kl_mean_1e3"].isna().all()  # not one of the paper's sizes
    assert table.loc[(table["n"] == 1000) & (table["score"] == "bic"), "paper_kl_mean_1e3"].iloc[0] == 6.1
    for _, g in table.groupby("n"):
        assert g["best"].sum() == 1 and g.loc[g["best"], "marked"].all()
    # every climb starts all-binary and only moves up by one cardinality per step
    for rec in result.records:
        for climb in rec.result["climbs"].values():
            models = [HLCModel.parse(m) for m in climb["path"]]
            assert all(models[0].card(h) == 2 for h in models[0].hidden)
            for a, b in zip(models, models[1:]):
                assert sum(b.card(h) - a.card(h) for h in a.hidden) == 1
    md = result.markdown()
    assert "| SS | BIC | BIC+ | CS | CS+ |" in md and "paired t-test" in md
    paths, _ = write_outputs(result, tmp_path / "out", plots=False)
    assert {p.name for p in paths} == {
        "hlc_fits.csv",
        "hlc_runs.csv",
        "hlc_table2.csv",
        "hlc_table2.md",
        "hlc_run.json",
    }


def test_jobs_are_reproducible_and_independent_of_the_rest_of_the_run():
    a = LCStudy(**TINY_LC).jobs()[3]
    bigger = LCStudy(**{**TINY_LC, "replicates": 3, "sizes": (100, 200, 800)})
    b = next(c for c in bigger.jobs() if c == a)  # the same job exists in a larger design ...
    assert lc_job(a) == lc_job(b)  # ... and gives the same result


# --------------------------------------------------------- cache and resume
_CALLS: list[int] = []


def test_interrupted_run_resumes_where_it_stopped(tmp_path):
    _CALLS.clear()
    configs = [{"x": x} for x in range(6)]
    # first run: the fourth job is interrupted (Ctrl-C); jobs 0-2 are cached
    _CALLS.clear()
    with pytest.raises(KeyboardInterrupt):
        run_jobs(
            _interruptible,
            [dict(c) for c in configs],
            cache_dir=tmp_path,
            execution=Execution("serial"),
            progress=False,
        )
    assert _CALLS == [0, 1, 2, 3]
    _STOP.clear()
    _CALLS.clear()
    records, stats = run_jobs(
        _interruptible, configs, cache_dir=tmp_path, execution=Execution("serial"), progress=False
    )
    assert _CALLS == [3, 4, 5]  # only the unfinished jobs ran
    assert stats.executed == 3 and stats.cached == 3
    assert [r.result["y"] for r in records] == [x * x for x in range(6)]
    assert [r.cached for r in records] == [True, True, True, False, False, False]


_STOP = {3}


def _square(config: dict) -> dict:
    _CALLS.append(config["x"])
    return {"y": config["x"] ** 2}


def _interruptible(config: dict) -> dict:
    _CALLS.append(config["x"])
    if config["x"] in _STOP:
        raise KeyboardInterrupt
    return {"y": config["x"] ** 2}


def test_cached_only_reports_the_cached_jobs_and_runs_none(tmp_path):
    _CALLS.clear()
    run_jobs(_square, [{"x": 1}, {"x": 3}], cache_dir=tmp_path, execution=Execution("serial"), progress=False)
    _CALLS.clear()
    configs = [{"x": x} for x in range(5)]
    records, stats = run_jobs(_square, configs, cache_dir=tmp_path, progress=False, cached_only=True)
    assert _CALLS == []  # nothing ran
    assert [r.config["x"] for r in records] == [1, 3] and (stats.cached, stats.missing, stats.executed) == (2, 3, 0)
    assert stats.to_json()["missing"] == 3
    with pytest.raises(ValueError, match="needs a cache directory"):
        run_jobs(_square, configs, cache_dir=None, progress=False, cached_only=True)


def test_truncated_or_foreign_cache_files_are_recomputed(tmp_path):
    _CALLS.clear()
    configs = [{"x": 1}, {"x": 2}]
    run_jobs(_square, configs, cache_dir=tmp_path, execution=Execution("serial"), progress=False)
    files = sorted(tmp_path.glob("job-*.json"))
    assert len(files) == 2
    path_1 = tmp_path / f"job-{job_key(_square, configs[0])[:24]}.json"
    path_1.write_text(path_1.read_text()[:20])  # cut short, as by a crash while writing
    _CALLS.clear()
    records, stats = run_jobs(_square, configs, cache_dir=tmp_path, execution=Execution("serial"), progress=False)
    assert _CALLS == [1] and stats.executed == 1 and records[0].result == {"y": 1}


def test_failed_jobs_are_reported_after_the_others_finish(tmp_path):
    with pytest.raises(ExperimentError, match="1 of 3 jobs failed"):
        run_jobs(
            _fails_on_two,
            [{"x": 1}, {"x": 2}, {"x": 3}],
            cache_dir=tmp_path,
            execution=Execution("serial"),
            progress=False,
        )
    records, stats = run_jobs(
        _fails_on_two, [{"x": 1}, {"x": 3}], cache_dir=tmp_path, execution=Execution("serial"), progress=False
    )
    assert stats.cached == 2


def _fails_on_two(config: dict) -> dict:
    if config["x"] == 2:
        raise ValueError("boom")
    return {"y": config["x"]}


def _refuses_two(config: dict) -> dict:
    if config["x"] == 2:
        raise InvalidArgument("x = 2 is out of range")
    return {"y": config["x"]}


def test_a_failed_job_is_named_by_its_settings_and_told_refused_or_failed_inside():
    """A refusal of the study's settings (an EffdimError) and a failure inside effdim are told apart."""
    configs = [{"x": 1}, {"x": 2}, {"x": 3}]
    with pytest.raises(ExperimentError) as refused:
        run_jobs(_refuses_two, configs, cache_dir=None, execution=Execution("serial"), progress=False)
    assert not refused.value.inside
    assert str(refused.value) == (
        "1 of 3 jobs refused the study's settings (the others ran); first: job x=2: x = 2 is out of range"
    )
    with pytest.raises(ExperimentError) as inside:
        run_jobs(_fails_on_two, configs, cache_dir=None, execution=Execution("serial"), progress=False)
    assert inside.value.inside
    assert str(inside.value) == (
        "1 of 3 jobs failed, 1 of them inside effdim, not on the study's settings (the others ran; please "
        "report it); first: job x=2: ValueError: boom"
    )


@pytest.mark.parametrize("sizes", ["1e400", "inf", "nan", "1k,nan"])
def test_sample_sizes_that_are_no_finite_number_are_refused_in_one_line(capsys, sizes):
    """int() of an infinite or NaN size escaped as OverflowError or ValueError (a traceback)."""
    assert main(["experiment", "lc", "--quick", "--sizes", sizes, "--no-cache", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("effdim experiment: sample sizes must be positive whole numbers, got ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "culprit"),
    [
        (["structure", "--sizes", "100000000000"], "sample size 100,000,000,000 is above"),
        (["lc", "--sizes", "20m"], "sample size 20,000,000 is above"),
        (["lc", "--replicates", "1000000000"], "replicates must be from 1 to 10,000, got 1000000000"),
        (["structure", "--quick", "--replicates", "10001"], "replicates must be from 1 to 10,000"),
        (["hlc", "--restarts", "1000000000"], "restarts must be from 1 to 1,000, got 1000000000"),
        (["structure", "--leaves", "100000000"], "leaves must be a range low..high from 3 to 200"),
        (["structure", "--leaves", "8..201"], "got 8..201"),
        (["structure", "--hidden", "100000"], "hidden must be a range low..high from 1 to 100"),
    ],
)
def test_study_settings_too_large_to_run_are_refused_before_any_job(capsys, argv, culprit):
    """A mistyped count used to fill the memory (``--replicates 1000000000`` listed a billion jobs and died in a
    MemoryError traceback; ``--restarts 1000000000`` killed the job's process) or to run for days (a sample of
    1e11 rows, a tree of 1e8 leaves): now one line naming the setting, exit 2, before any job or data."""
    assert main(["experiment", *argv, "--no-cache", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("effdim experiment: ") and culprit in err and err.count("\n") == 1, err


def _broken_hlc_job(config: dict) -> dict:
    raise KeyError("fits")


def test_experiment_exits_2_on_refused_settings_and_1_on_a_failure_inside(tmp_path, capsys, monkeypatch):
    """One line each; a job that cannot fit the model it is given is the user's input (exit 2, as any bad
    input), a job that breaks is effdim's (exit 1)."""
    argv = ["experiment", "hlc", "--quick", "--replicates", "1", "--sizes", "100", "--workers", "1"]
    argv += ["--no-cache", "--no-plots", "--quiet", "--out", str(tmp_path)]
    assert main([*argv, "--model", "2:2,2,100000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "effdim: 1 of 1 job refused the study's settings; first: job model=2:2,2,100000, n=100, replicate=0: "
        "fitting 2:2,2,100000 by EM would need about"
    )
    monkeypatch.setattr(HLCStudy, "job", staticmethod(_broken_hlc_job))
    with pytest.raises(SystemExit) as info:
        main([*argv, "--model", "2:2,2,2"])
    err = capsys.readouterr().err
    assert info.value.code == 1 and err.count("\n") == 1
    assert err.startswith("effdim: 1 of 1 job failed, 1 of them inside effdim") and "job model=2:2,2,2" in err


def test_process_pool_resume_with_the_real_jobs(tmp_path):
    study = LCStudy(**{**TINY_LC, "deterministic": (), "sizes": (200,)})
    first = study.run(cache_dir=tmp_path, execution=Execution("processes", 2), progress=False)
    assert first.stats.executed == 2
    (next(tmp_path.glob("lc-*.json"))).unlink()  # lose one finished job
    more = LCStudy(**{**TINY_LC, "deterministic": (), "sizes": (200, 800)})
    second = more.run(cache_dir=tmp_path, execution=Execution("processes", 2), progress=False)
    assert second.stats.executed == 1 + 2 and second.stats.cached == 1
    pd.testing.assert_frame_equal(first.fits(), second.fits()[second.fits()["n"] == 200].reset_index(drop=True))


# ---------------------------------------------------------------------- Dask
def test_dask_scheduler_path_on_an_in_process_cluster(tmp_path):
    import distributed  # in the test extra: CI runs the Dask path

    study = HLCStudy(**{**TINY_HLC, "replicates": 1})
    serial = study.run(cache_dir=None, execution=Execution("serial"), progress=False)
    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as cluster:
        result = study.run(cache_dir=tmp_path, execution=Execution(scheduler=cluster.scheduler_address), progress=False)
        assert result.stats.executor == "dask" and result.stats.executed == 2 and result.stats.workers == 1
        again = study.run(cache_dir=tmp_path, execution=Execution(scheduler=cluster.scheduler_address), progress=False)
        assert again.stats.executed == 0 and again.stats.cached == 2
    assert [r.result for r in result.records] == [r.result for r in serial.records]


# ----------------------------------------------------------- pieces of the design
def test_climb_all_follows_the_hill_climbing_rule_and_fits_each_model_once():
    model = HLCModel.parse("2(2(2,2),2,2(2,2))")
    calls: list[tuple] = []

    class Fake:
        def __init__(self, m):
            self.model = m
            a, b, c = (m.card(h) for h in m.hidden)
            # bic peaks at 3,2,2; cs+ keeps rising with |H2| and |H3| up to their maxima
            bic = -((a - 3) ** 2) - (b - 2) ** 2 - (c - 2) ** 2
            self.scores = SimpleNamespace(bic=bic, bic_plus=bic, cs=bic, cs_plus=b + c + 0.1 * a, ds=a + b + c, n=1)
            self.loglik = float(a + b + c)

    def fit_model(m, smaller):
        if smaller is not None:  # grown from the climb's current model: one hidden card one lower
            assert grown_node(smaller.model, m) is not None
        calls.append((None if smaller is None else str(smaller.model), str(m)))
        return Fake(m)

    paths, fits, used = climb_all(model, ["bic", "cs+"], fit_model)
    assert [tuple(f.model.card(h) for h in f.model.hidden) for f in paths["bic"]] == [(2, 2, 2), (3, 2, 2)]
    # cs+: H2 first (tie with H3 goes to pre-order), up to the regular maxima 4 and 4
    last = paths["cs+"][-1].model
    assert (last.card("H2"), last.card("H3")) == (4, 4)
    assert len(calls) == len(set(calls))  # shared: each (start, model) pair fitted once
    assert sorted(fits) == sorted({m for _, m in calls})
    assert used["bic"] == 1 + 3 + 3


def test_deterministic_parameters_map_hidden_states_to_leaf_states():
    model = HLCModel.parse("8:2,2,2,2")
    params = deterministic_parameters(model, 7)
    for leaf in ("O1", "O2", "O3"):
        assert set(np.unique(params.cpts[leaf])) == {0.0, 1.0}
    joint = observed_distribution(params).sum(axis=3).reshape(-1)  # P(O1, O2, O3)
    np.testing.assert_allclose(joint, params.cpts["H1"], atol=1e-12)  # state x <-> binary digits of x
    with pytest.raises(ValueError, match="exceeds"):
        deterministic_parameters(HLCModel.parse("9:2,2,2,2"), 0)


def test_paired_statistics():
    assert mean_se([1.0, 2.0, 3.0]) == pytest.approx((2.0, 1.0 / math.sqrt(3)))
    assert paired_pvalue([1, 2, 3], [1, 2, 3]) == 1.0
    assert paired_pvalue([1, 2, 3], [1, 2, 3], "wilcoxon") == 1.0
    rng = np.random.default_rng(0)
    a = rng.normal(size=40)
    assert paired_pvalue(a + 1.0 + 0.1 * rng.normal(size=40), a) < 1e-6
    # one difference on every replicate (four RF distances one apart): the exact sign test's p, not 0
    assert paired_pvalue([3, 4, 1, 2], [2, 3, 0, 1]) == 0.125
    assert paired_pvalue(np.arange(40) + 1, np.arange(40)) == pytest.approx(2 * 0.5**40)
    marks = mark_best({"bic": a + 5, "cs": a + 5.01 + 0.5 * rng.normal(size=40), "cs+": a})
    assert marks["cs+"] == (True, 1.0) and not marks["bic"][0]
    with pytest.raises(ValueError):
        paired_pvalue([1, 2], [1, 2], "anova")


def test_presets_and_bad_settings():
    assert len(LCStudy.preset("full").jobs()) == 8 * 10 * 5
    assert len(HLCStudy.preset("full").jobs()) == 50 * 6
    assert HLCStudy.preset("full").sizes == (1000, 3000, 9000, 27000, 81000, 243000)
    assert LCStudy().fitted_cards() == tuple(range(1, 9))
    assert build_study("hlc", quick=True, sizes="1k,3k").sizes == (1000, 3000)
    with pytest.raises(ValueError, match="no setting"):
        build_study("hlc", generators=("2:2,2,2,2",))
    with pytest.raises(ValueError):
        build_study("lc", sizes="0")
    with pytest.raises(ValueError):
        LCStudy(generators=("2(2(2,2),2,2(2,2))",))


# ------------------------------------------------------------------------ CLI
def test_cli_experiment_lc(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "experiment",
        "lc",
        "--quick",
        "--replicates",
        "1",
        "--sizes",
        "300",
        "--generator",
        "2:2,2,2,2",
        "--no-deterministic",
        "--restarts",
        "1",
        "--workers",
        "1",
        "--no-plots",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Generated from 2:2,2,2,2" in printed and "1 run, 0 from the cache" in printed
    assert (out / "lc_summary.csv").exists()
    assert main(argv) == 0
    assert "0 run, 1 from the cache" in capsys.readouterr().out


def test_cli_experiment_bad_input(capsys):
    assert main(["experiment", "hlc", "--sizes", "1k,abc"]) == 2
    assert "abc" in capsys.readouterr().err
    assert main(["experiment", "lc", "--generator", "5(3(2,2),2,3(2,2))"]) == 2


def test_cli_experiment_on_a_dask_scheduler(tmp_path, capsys):
    import distributed

    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        argv = [
            "experiment",
            "hlc",
            "--model",
            "2(2(2,2),2,2(2,2))",
            "--replicates",
            "1",
            "--sizes",
            "300",
            "--restarts",
            "1",
            "--max-iter",
            "30",
            "--scheduler",
            cluster.scheduler_address,
            "--no-plots",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(tmp_path / "out"),
            "--json",
            "--quiet",
        ]
        assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["run"]["executor"] == "dask" and payload["run"]["executed"] == 1
    assert {row["score"] for row in payload["summary"]} == {"bic", "bic+", "cs", "cs+"}


@pytest.mark.parametrize(
    "address, culprit",
    [
        ("tcp://127.0.0.1:9", "no Dask scheduler answers at 'tcp://127.0.0.1:9' within 0.5 s"),
        ("nonsense", "'nonsense' is not a Dask scheduler address"),
    ],
)
def test_a_scheduler_that_does_not_answer_is_refused_before_the_work(monkeypatch, capsys, address, culprit):
    import effdim.executor
    import effdim.fitting

    def fitted(*args, **options):
        pytest.fail("fitted before the scheduler was checked")

    monkeypatch.setattr(effdim.executor, "SCHEDULER_TIMEOUT", 0.5)
    monkeypatch.setattr(effdim.fitting, "fit", fitted)
    monkeypatch.setattr(effdim, "fit", fitted, raising=False)
    assert main(["fit", "stouffer-toby", "--model", "2", "--bootstrap", "10", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert culprit in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_progress_bar_goes_to_stderr(tmp_path, capsys):
    run_jobs(_square, [{"x": x} for x in range(4)], cache_dir=None, execution=Execution("serial"), label="demo")
    err = capsys.readouterr().err
    assert "demo [" in err and "4/4 jobs" in err


def test_studies_carry_the_cs_prior_and_the_generating_concentration():
    study = HLCStudy.preset("quick", cs_prior="K2", concentration=0.3)
    assert {(j["cs_prior"], j["concentration"]) for j in study.jobs()} == {("k2:1", 0.3)}
    assert job_key("hlc_job", study.jobs()[0]) != job_key("hlc_job", HLCStudy.preset("quick").jobs()[0])
    assert {j["cs_prior"] for j in LCStudy.preset("quick").jobs()} == {"bdeu:1"}
    with pytest.raises(ValueError, match="concentration must be a positive number"):
        HLCStudy(concentration=0)
    with pytest.raises(ValueError, match="unknown CS prior 'x'"):
        LCStudy(cs_prior="x")


# ------------------------------------------------------------- damaged cache
def test_damaged_cache_files_are_named_and_recomputed(tmp_path, capsys):
    """result {}, a wrong-typed field, a changed value, bad JSON: each named and its job run again."""
    from effdim.cli import main

    cache, out = tmp_path / "cache", tmp_path / "out"
    argv = [
        "experiment",
        "lc",
        "--generator",
        "3:2,2,2,2",
        "--no-deterministic",
        "--replicates",
        "2",
        "--sizes",
        "200,400",
        "--restarts",
        "1",
        "--max-iter",
        "30",
        "--workers",
        "1",
        "--cache-dir",
        str(cache),
        "--out",
        str(out),
        "--no-plots",
        "--quiet",
        "--json",
    ]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)["summary"]
    files = sorted(cache.glob("lc-*.json"))
    assert len(files) == 4

    def edit(path, change):
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    edit(files[0], lambda d: d.update(result={}))
    edit(files[1], lambda d: d["result"]["fits"][0].update(ds="many"))
    edit(files[2], lambda d: d["result"]["fits"][1].update(bic=123.0))  # a plausible value: only the checksum sees it
    files[3].write_text(files[3].read_text()[:50])
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"] == first  # recomputed, the same results
    assert set(captured.err.strip().splitlines()) == {
        f"effdim: cached job {files[0].name} was changed after it was written (checksum mismatch); computed again",
        f"effdim: cached job {files[1].name} was changed after it was written (checksum mismatch); computed again",
        f"effdim: cached job {files[2].name} was changed after it was written (checksum mismatch); computed again",
        f"effdim: cached job {files[3].name} is not valid JSON (cut short by an interruption?); computed again",
    }
    assert main(argv) == 0 and capsys.readouterr().err == ""  # rewritten sound


def test_cache_files_without_a_checksum_are_checked_by_schema(tmp_path):
    """Files written before checksums existed: used when their result fits the study's schema."""
    from effdim.experiments.runner import _read_cache

    schema = LCStudy(**TINY_LC).schema
    row = {
        "model": "2:2,2,2,2",
        "loglik": -1.0,
        "bic": -2.0,
        "bic_plus": -2.0,
        "cs": -2.0,
        "cs_plus": -2.0,
        "aic": -2.0,
        "ds": 9,
        "de": 9,
        "kl_bits": "inf",
        "degenerate": 0,
        "card": 2,
    }
    path = tmp_path / "lc-old.json"
    path.write_text(json.dumps({"config": {"x": 1}, "result": {"fits": [row]}, "seconds": 1.5}))
    record, why = _read_cache(path, {"x": 1}, schema)
    assert why is None and record.result["fits"][0]["ds"] == 9
    for change, words in [
        ({"ds": 9.5}, "result['fits'][0]['ds'] is float, not int"),
        ({"degenerate": True}, "result['fits'][0]['degenerate'] is bool, not int"),
        ({"model": None}, "result['fits'][0]['model'] is NoneType, not str"),
    ]:
        path.write_text(json.dumps({"config": {"x": 1}, "result": {"fits": [{**row, **change}]}, "seconds": 1}))
        assert _read_cache(path, {"x": 1}, schema) == (None, f"does not hold a valid result ({words})")
    path.write_text(json.dumps({"config": {"x": 1}, "result": {"fits": []}, "seconds": "soon"}))
    assert _read_cache(path, {"x": 1}, schema) == (None, "'seconds' is str, not a number")
