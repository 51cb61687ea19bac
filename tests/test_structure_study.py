"""The study `effdim experiment structure` (effdim.experiments.structure): its random trees, metrics, cache keys,
time limit, paired comparison and command line.
"""

import json
import time

import numpy as np
import pytest
from structure_cases import CLEAR_TREE, SMALL_STUDY_CONFIG, run_row

from effdim.distribution import random_parameters, sample
from effdim.experiments.structure import separated_parameters
from effdim.notation import parse_model
from effdim.structure import (
    SEARCH_VERSION,
    leaf_bipartitions,
    learn_structure,
    robinson_foulds,
)


def test_robinson_foulds_counts_differing_splits():
    a = parse_model("H1:2(A:2,B:2,H2:2(C:2,D:2,E:2))")
    b = parse_model("H1:2(A:2,C:2,H2:2(B:2,D:2,E:2))")
    assert robinson_foulds(a, a.rerooted("H2")) == 0
    assert leaf_bipartitions(a) == {frozenset({"C", "D", "E"})}
    assert robinson_foulds(a, b) == 2


def test_random_latent_trees_are_regular_with_the_asked_sizes():
    from effdim.experiments.structure import random_latent_tree

    rng = np.random.default_rng(0)
    for _ in range(30):
        tree = random_latent_tree(rng, (8, 12), (2, 4))
        assert 2 <= len(tree.hidden) <= 4 and 8 <= len(tree.observed) <= 12
        assert all(len(tree.neighbors(h)) >= 3 for h in tree.hidden)
        assert set(tree.card(o) for o in tree.observed) <= {2, 3}


def test_hidden_signatures_match_nodes_across_roots_and_names():
    from effdim.experiments.structure import hidden_signatures

    a = parse_model("H1:2(A:2,B:2,H2:3(C:2,D:2,E:2))")
    b = parse_model("X:3(C:2,D:2,E:2,Y:2(A:2,B:2))")
    sa, sb = hidden_signatures(a), hidden_signatures(b)
    assert sa.keys() == sb.keys()
    assert {a.card(sa[k]) for k in sa} == {b.card(sb[k]) for k in sb} == {2, 3}


def test_monte_carlo_kl_agrees_with_the_exact_one(monkeypatch):
    from effdim.experiments import structure as study

    truth = separated_parameters(CLEAR_TREE, 0.8)
    other = random_parameters(CLEAR_TREE, np.random.default_rng(5))
    exact, was_exact = study.kl_to_truth(truth, other, np.random.default_rng(0))
    monkeypatch.setattr(study, "EXACT_KL_STATES", 0)
    estimate, was_mc = study.kl_to_truth(truth, other, np.random.default_rng(0))
    assert was_exact and not was_mc
    assert estimate == pytest.approx(exact, rel=0.05)


def test_structure_job_reports_every_metric_per_score():
    from effdim.experiments.structure import structure_job

    config = {
        "replicate": 0,
        "n": 600,
        "seed": 0,
        "scores": ["bic", "bic+"],
        "leaves": [5, 5],
        "hidden": [2, 2],
        "restarts": 2,
        "max_time": 30.0,
    }
    out = structure_job(config)
    assert [r["score"] for r in out["runs"]] == ["bic", "bic+"]
    for r in out["runs"]:
        assert r["rf"] >= 0 and r["kl_bits"] >= 0 and r["hidden_true"] == 2
        assert r["exact"] == (r["rf"] == 0 and r["card_errors"] == 0 and r["hidden_learned"] == 2)
        assert r["gap"] == pytest.approx(r["score_learned"] - r["score_truth"])  # the optimality gap, measured
    again = structure_job({**config, "scores": ["bic"]})  # seeded per score: a rerun gives the same rows
    timeless = lambda r: {k: v for k, v in r.items() if k != "seconds"}  # noqa: E731
    assert timeless(again["runs"][0]) == timeless(out["runs"][0])


def test_study_jobs_are_keyed_by_the_search_version():
    """A new search must not reuse the cached jobs of an older one."""
    from effdim.experiments import StructureStudy
    from effdim.experiments.runner import job_key

    config = StructureStudy(replicates=1, sizes=(1000,)).jobs()[0]
    assert config["search"] == SEARCH_VERSION
    assert job_key("structure", config) != job_key("structure", {**config, "search": SEARCH_VERSION - 1})


def test_a_search_stopped_by_time_is_not_counted_as_stopping_below_the_truth():
    """The study's gap table counts a run more than 1 nat below the truth as a local optimum only when its
    search converged; one cut short by the time limit is reported apart."""
    from effdim.experiments import StructureStudy
    from effdim.experiments.runner import JobRecord, RunStats

    study = StructureStudy(replicates=3, sizes=(1000,), scores=("bic",))
    stops = ["converged", "max_time", "max_time"]
    records = [
        JobRecord(
            {"replicate": rep, "n": 1000},
            {"truth": "t", "leaves": 8, "runs": [run_row("bic", "a", rf, 0.001, stopped=stop)]},
            1.0,
            True,
        )
        for rep, (rf, stop) in enumerate(zip([5, 5, 0], stops))
    ]
    result = study.result(records, RunStats())
    row = result.summary().iloc[0]
    assert (row["below_truth"], row["timed_out_below"], row["timed_out"]) == (1, 1, 2)
    assert "1 below (+1 stopped by time)" in result.markdown()
    assert row["rounds_gained"] == 0  # records of a study without rounds
    records[2].result["runs"][0]["rounds"] = 2
    for rec in records[:2]:
        rec.result["runs"][0]["rounds"] = 0
    assert study.result(records, RunStats()).summary().iloc[0]["rounds_gained"] == 1


def test_study_limits_each_search_in_cpu_seconds():
    """The study's time limit counts CPU seconds, so where a search stops does not depend on the load: a
    search that waits (here in its progress callback, as a loaded machine makes it wait) is not cut short."""
    from effdim.experiments import StructureStudy

    assert StructureStudy(replicates=1, sizes=(1000,)).jobs()[0]["clock"] == "cpu"
    data = sample(separated_parameters(parse_model("2(2,2,2,2(2,2,2))")), 2000, 1)
    waiting = lambda progress: time.sleep(0.06)  # noqa: E731
    t = time.perf_counter()
    # the search needs about half the limit in CPU seconds, and its ~45 candidates' waits more than the limit
    result = learn_structure(data, seed=0, max_time=2.5, cpu_time=True, progress=waiting, rounds=0)
    assert time.perf_counter() - t > 2.5 and result.stopped == "converged"
    assert learn_structure(data, seed=0, max_time=2.5, progress=waiting, rounds=0).stopped == "max_time"


def test_paired_comparison_of_each_de_score_with_its_ds_twin():
    from effdim.experiments import StructureStudy
    from effdim.experiments.runner import JobRecord, RunStats

    study = StructureStudy(replicates=3, sizes=(1000,))
    records = []
    for rep, (rf_plus, kl_plus) in enumerate([(0, 0.001), (2, 0.004), (2, 0.005)]):
        runs = [
            run_row("bic", "a", 0, 0.001),
            run_row(
                "bic+",
                "a" if rep == 0 else "b",
                rf_plus,
                kl_plus,
                card_errors=int(rep > 0),
                hidden=3 if rep else 2,
                de=18,
            ),
            run_row("cs", "c", 1, 0.002),
            run_row("cs+", "c", 1, 0.002),
        ]
        records.append(JobRecord({"replicate": rep, "n": 1000}, {"truth": "t", "leaves": 8, "runs": runs}, 1.0, True))
    result = study.result(records, RunStats())
    pairs = result.paired().set_index("pair")
    bic = pairs.loc["BIC+ - BIC"]
    assert (bic["replicates"], bic["same_tree"], bic["rf_better"], bic["rf_worse"]) == (3, 1, 0, 2)
    assert bic["rf_diff"] == pytest.approx(4 / 3) and bic["kl_diff_1e3"] == pytest.approx((3 + 4) / 3)
    assert bic["card_errors_diff"] == pytest.approx(2 / 3) and bic["deficit_diff"] == pytest.approx(2)
    assert bic["hidden_diff"] == pytest.approx(2 / 3) and 0 < bic["kl_p"] < 1
    cs = pairs.loc["CS+ - CS"]
    assert (cs["same_tree"], cs["rf_diff"], cs["rf_p"], cs["kl_p"]) == (3, 0, 1.0, 1.0)
    text = result.markdown()
    assert "| 1,000 | BIC+ - BIC | 1/3 | 0 / 2 | +1.33 (" in text
    assert "| n | replicates | BIC | BIC+ | CS | CS+ |" in text and "| 1,000 | 3 | 0 ± 0 | 1.33 ± 0.67 |" in text


def test_cli_experiment_cached_only_reports_a_partial_run(tmp_path, cli):
    common = [
        "experiment",
        "structure",
        "--quick",
        "--sizes",
        "300",
        "--leaves",
        "5..6",
        "--hidden",
        "2",
        "--restarts",
        "1",
        "--rounds",
        "0",
        "--workers",
        "1",
        "--no-plots",
        "--quiet",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "out"),
    ]
    status, _, err = cli(*common, "--cached-only")
    assert status == 2 and "none of the 6 jobs of this design is in the cache" in err  # nothing cached yet
    assert cli(*common, "--replicates", "1").status == 0
    status, out, _ = cli(*common, "--replicates", "2", "--cached-only")
    assert status == 0  # the second replicate is not run
    assert "2 jobs: 0 run, 1 from the cache, 1 not run (--cached-only)" in out
    assert json.loads((tmp_path / "out" / "structure_run.json").read_text())["run"]["missing"] == 1
    assert (tmp_path / "out" / "structure_paired.csv").is_file()
    status, _, err = cli(*common, "--cached-only", "--no-cache")
    assert status == 2 and "cannot go with --no-cache" in err
    run = json.loads((tmp_path / "out" / "structure_run.json").read_text())
    assert run["config"]["leaves"] == [5, 6] and run["config"]["hidden"] == [2, 2]  # the design as asked


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["structure", "--leaves", "9..3"], "leaves must be a range low..high from 3 to 200, got 9..3"),
        (["structure", "--hidden", "two"], "expected a range LOW..HIGH of whole numbers, got 'two'"),
        (["hlc", "--leaves", "5"], "--leaves applies to structure only"),
    ],
)
def test_cli_experiment_structure_design_options_are_checked(argv, said, cli):
    status, _, err = cli("experiment", *argv, "--no-cache", "--quiet")
    assert status == 2
    err = err.strip()
    assert said in err and len(err.splitlines()) == 1, err


def test_the_search_ends_alike_in_every_process():
    """The same configuration gives the same tree under any hash seed: the job cache assumes a job's result depends
    on its configuration alone (groups of equal cohesion ranked in a set's order, by the strings' hashes, which
    Python draws anew per process, would not)."""
    import os
    import subprocess
    import sys

    script = (
        "from effdim.experiments.structure import _search_seed, replicate_data\n"
        "from effdim.structure import learn_structure\n"
        f"config = {SMALL_STUDY_CONFIG!r}\n"
        "_, _, data = replicate_data(config)\n"
        "r = learn_structure(data, score='cs+', restarts=5, seed=_search_seed(config), rounds=0)\n"
        "print(r.model, repr(r.fit.score('cs+')), [s.text for s in r.steps])\n"
    )
    ends = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": str(h)},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for h in (0, 1)
    }
    assert len(ends) == 1, ends
