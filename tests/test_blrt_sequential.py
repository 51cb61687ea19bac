"""The sequential bootstrap LRT (Besag & Clifford 1991; effdim.bootstrap) and the replicates' refit rule:
where a test stops, its p-value and decision, that it repeats with its seed on any executor, its CLI option,
and the executor's ``skip`` that drops the chunks a stopped test no longer needs."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import sweep
from effdim.bootstrap import blrt_plan, blrt_sweep, bootstrap_job, p_value, sequential_p_value, stopping_point
from effdim.distribution import Parameters, sample
from effdim.enumeration import enumeration_table
from effdim.errors import EffdimError
from effdim.executor import Execution, run_each
from effdim.model import HLCModel
from effdim.validation import as_seed

TWO = Parameters(
    HLCModel.parse("2:2,2,2,2"),
    {"H1": [0.6, 0.4], **{f"O{i}": [[0.85, 0.15], [0.15, 0.85]] for i in range(1, 5)}},
)
SERIAL = Execution("serial")


@pytest.fixture(scope="module")
def fits():
    return sweep(sample(TWO, 300, 5), cards=[1, 2, 3], restarts=2, seed=1)


def test_the_test_stops_at_the_h_th_replicate_reaching_the_statistic():
    reps = [0.0, 5.0, 1.0, 6.0, 7.0, 9.0]
    assert stopping_point(5.0, reps, 2) == 4
    p, used = sequential_p_value(5.0, reps, 2)
    assert p == pytest.approx(2 / 4) and used.tolist() == reps[:4]
    p, used = sequential_p_value(5.0, reps, 5)  # never 5 at or above: every replicate, the fixed-B p
    assert p == pytest.approx(p_value(5.0, reps)) == pytest.approx(5 / 7) and len(used) == 6
    assert sequential_p_value(5.0, reps, None)[0] == pytest.approx(5 / 7)


@settings(max_examples=300, deadline=None)
@given(
    reps=st.lists(st.integers(0, 20), min_size=1, max_size=120),
    statistic=st.integers(0, 21),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    extra=st.integers(0, 5),
)
def test_with_h_at_least_alpha_B_plus_1_the_decision_is_that_of_all_B_replicates(reps, statistic, alpha, extra):
    B = len(reps)
    h = max(1, int(np.ceil(alpha * (B + 1)))) + extra
    p_seq, used = sequential_p_value(statistic, reps, h)
    assert (p_seq <= alpha) == (p_value(statistic, reps) <= alpha)
    assert 0 < p_seq <= 1 and 1 <= len(used) <= B


def test_a_sweep_stops_the_test_under_its_null_and_not_the_one_it_rejects(fits):
    seen = []
    serial = blrt_sweep(
        fits, 20, restarts=2, max_iter=200, seed=3, execution=SERIAL, stop_after=1, progress=lambda d, t: seen.append(t)
    )
    two, three = serial[2], serial[3]
    assert two.B == 20 and not two.stopped_early and two.p_value == pytest.approx(1 / 21)
    assert three.stopped_early and three.B < 20 and three.planned == 20 and three.stop_after == 1
    assert three.p_value == pytest.approx(1 / three.B) and np.sum(three.replicates >= three.statistic - 1e-9) == 1
    assert seen[0] == 40 and seen[-1] < 40  # the chunks a stopped test no longer needs leave the total
    first = blrt_plan(fits[1], fits[2], restarts=2, max_iter=200).chunks(as_seed(3).spawn(2)[1], 20)[
        0
    ]  # the test's own stream
    shown = min(three.B, len(first["seeds"]))
    assert bootstrap_job(first)["values"][:shown] == three.replicates[:shown].tolist()  # the same seeds, in order
    table = enumeration_table(fits, serial)
    assert table.blrt_B == 20 and table.blrt_stop == 1 and "stops once 1 replicates" in table.caption()
    assert any("stopped early" in note for note in table.notes) and table.to_json()["blrt_stop"] == 1


def test_a_stopped_test_is_the_same_on_worker_processes(fits):
    here = blrt_sweep(fits[1:], 20, restarts=2, max_iter=200, seed=4, execution=SERIAL, stop_after=1)[3]
    pooled = blrt_sweep(
        fits[1:], 20, restarts=2, max_iter=200, seed=4, execution=Execution("processes", workers=2), stop_after=1
    )
    assert here.stopped_early and pooled[3].replicates.tolist() == here.replicates.tolist()
    assert pooled[3].p_value == here.p_value


def test_a_bad_stopping_rule_is_refused_in_words(fits):
    with pytest.raises(EffdimError, match="reach the data's LR"):
        blrt_sweep(fits, 5, restarts=1, execution=SERIAL, stop_after=0)


def test_replicates_refit_the_null_from_its_parameters_alone_and_test_the_log_likelihood_only(monkeypatch, fits):
    import effdim.em

    calls = []
    real = effdim.em.fit_em

    def spy(data, model, settings=None, **kw):
        calls.append((model.card(model.root), settings.restarts, settings.param_tol, len(kw.get("init") or [])))
        return real(data, model, settings, **kw)

    monkeypatch.setattr(effdim.em, "fit_em", spy)
    bootstrap_job({**blrt_plan(fits[1], fits[2], restarts=3).config, "seeds": [1]})
    assert calls == [(2, 0, None, 1), (3, 3, None, 2)]


@pytest.mark.parametrize("execution", [SERIAL, Execution("processes", workers=2)])
def test_skipped_jobs_are_not_run(execution):
    finished = []
    keys = [str(i) for i in range(8)]
    configs = {k: {"value": int(k)} for k in keys}

    def finish(key, result, seconds):
        finished.append(key)

    def fail(key, err):
        raise AssertionError(err)

    run_each(_echo, configs, keys, finish, fail, execution, skip=lambda key: int(key) % 2 == 1)
    assert sorted(finished) == ["0", "2", "4", "6"]


def test_skipped_jobs_are_not_run_on_a_dask_cluster_either():
    import distributed  # in the test extra: CI runs the Dask path

    keys = [str(i) for i in range(8)]
    finished = []
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as c:
        used, _ = run_each(
            _echo,
            {k: {"value": int(k)} for k in keys},
            keys,
            lambda key, result, seconds: finished.append(key),
            lambda key, err: finished.append(f"failed {key}"),
            Execution(scheduler=c.scheduler_address),
            skip=lambda key: key in {"1", "5"} or "6" in finished and key == "7",
        )
    assert used == "dask" and "1" not in finished and "5" not in finished and sorted(finished)[:3] == ["0", "2", "3"]
    assert len(finished) in (5, 6) and all(not k.startswith("failed") for k in finished)


def _echo(config: dict) -> dict:
    return config


def test_the_cli_stops_the_sweeps_blrt_and_refuses_the_option_without_it(cli):
    base = ["sweep", "stouffer-toby", "--max-card", "3", "--restarts", "2", "--seed", "1", "--quiet", "--workers", "1"]
    status, out, _ = cli(*base, "--json", "--blrt", "10", "--stop-after", "1", "--max-iter", "200")
    table = json.loads(out)["table"]
    assert status == 0 and table["blrt_stop"] == 1 and table["blrt_B"] == 10
    status, _, err = cli(*base, "--stop-after", "2")
    assert status == 2 and "--blrt" in err and len(err.strip().splitlines()) == 1
    status, _, err = cli(*base, "--blrt", "5", "--stop-after", "0")
    assert status == 2 and "--stop-after" in err and len(err.strip().splitlines()) == 1
