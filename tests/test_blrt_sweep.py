"""The bootstrap LRT of a sweep's fits (effdim.bootstrap: blrt_plan, blrt_fits, blrt_sweep)."""

import threading

import numpy as np
import pytest

from effdim import sweep
from effdim.bootstrap import blrt_fits, blrt_plan, blrt_sweep, bootstrap_job
from effdim.distribution import Parameters, sample
from effdim.em import Cancelled
from effdim.errors import EffdimError
from effdim.executor import Execution
from effdim.model import HLCModel

TWO = Parameters(
    HLCModel.parse("2:2,2,2,2"),
    {"H1": [0.6, 0.4], **{f"O{i}": [[0.85, 0.15], [0.15, 0.85]] for i in range(1, 5)}},
)
SERIAL = Execution("serial")


@pytest.fixture(scope="module")
def fits():
    return sweep(sample(TWO, 300, 5), cards=[1, 2, 3], restarts=2, seed=1)


def test_a_sweeps_tests_run_together_and_repeat_with_the_seed(fits):
    seen = []
    results = blrt_sweep(fits, 6, restarts=2, seed=3, execution=SERIAL, progress=lambda d, t: seen.append((d, t)))
    assert sorted(results) == [2, 3]
    assert seen[0] == (0, 12) and seen[-1] == (12, 12)
    assert results[2].p_value == pytest.approx(1 / 7)  # two real classes: no replicate reaches the data's LR
    assert results[2].statistic == pytest.approx(2 * (fits[1].loglik - fits[0].loglik))
    assert results[3].null_model == str(fits[1].model) and results[3].alternative == str(fits[2].model)
    again = blrt_sweep(fits, 6, restarts=2, seed=3, execution=Execution("processes", workers=2))
    for k in (2, 3):
        assert np.allclose(np.sort(again[k].replicates), np.sort(results[k].replicates))


def test_two_fits_alone_give_the_same_test_as_a_plan_run_by_hand(fits):
    one = blrt_fits(fits[1], fits[2], 4, restarts=2, seed=9, execution=SERIAL)
    plan = blrt_plan(fits[1], fits[2], restarts=2)
    values = [v for chunk in plan.chunks(9, 4) for v in bootstrap_job(chunk)["values"]]
    assert plan.result(values).replicates == pytest.approx(one.replicates)
    assert all(v >= 0 for v in values) and plan.k == 3


def test_replicates_refit_the_null_from_its_own_parameters_and_the_alternative_from_every_split(monkeypatch, fits):
    import effdim.em

    starts = []
    real = effdim.em.fit_em

    def spy(data, model, settings=None, **kw):
        starts.append((model.card(model.root), len(kw.get("init") or [])))
        return real(data, model, settings, **kw)

    monkeypatch.setattr(effdim.em, "fit_em", spy)
    bootstrap_job({**blrt_plan(fits[1], fits[2], restarts=1).config, "seeds": [1]})
    assert starts == [(2, 1), (3, 2)]  # the 2-class truth; each of its 2 states split


def test_bad_pairs_and_cancel_are_refused_in_words(fits):
    with pytest.raises(EffdimError, match="one hidden node"):
        blrt_plan(fits[0], fits[2])
    with pytest.raises(EffdimError, match="B"):
        blrt_fits(fits[0], fits[1], 0, execution=SERIAL)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        blrt_sweep(fits, 3, restarts=1, seed=0, execution=SERIAL, cancel=stop)
    assert blrt_sweep(fits[:1], 3, execution=SERIAL) == {}
