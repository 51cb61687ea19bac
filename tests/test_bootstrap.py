"""Parametric bootstrap of G2 and the bootstrap likelihood-ratio test (effdim.bootstrap)."""

import threading

import numpy as np
import pytest
from scipy import stats

from effdim import fit
from effdim.bootstrap import blrt, bootstrap_g2, p_value
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import Cancelled
from effdim.errors import EffdimError
from effdim.executor import Execution
from effdim.model import HLCModel

SERIAL = Execution("serial")


def test_p_value_counts_the_observed_statistic():
    assert p_value(3.0, np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(3 / 5)
    assert p_value(10.0, np.zeros(9)) == pytest.approx(1 / 10)


def test_bootstrap_g2_p_values_are_roughly_uniform_under_the_null():
    # independence (one class) is true; 40 data sets, B = 19 each
    model = HLCModel.parse("1:2,3,2")
    truth = random_parameters(model, 0, concentration=3.0)
    ps = []
    for rep in range(40):
        data = sample(truth, 150, rep)
        result = fit(data, model, restarts=1, seed=rep, warn=False)
        ps.append(bootstrap_g2(result, 19, seed=rep, restarts=1, execution=SERIAL).p_value)
    ps = np.array(ps)
    assert stats.kstest(ps, "uniform").pvalue > 0.001
    assert 0.3 < ps.mean() < 0.7


def test_bootstrap_g2_rejects_a_model_that_is_wrong():
    truth = Parameters(
        HLCModel.parse("2:2,2,2"),
        {
            "H1": [0.5, 0.5],
            "O1": [[0.9, 0.1], [0.1, 0.9]],
            "O2": [[0.9, 0.1], [0.1, 0.9]],
            "O3": [[0.9, 0.1], [0.1, 0.9]],
        },
    )
    data = sample(truth, 400, 1)
    result = fit(data, "1:2,2,2", restarts=1, seed=0, warn=False)
    assert bootstrap_g2(result, 19, seed=0, restarts=1, execution=SERIAL).p_value == pytest.approx(1 / 20)


def test_blrt_finds_a_real_second_class_and_not_a_spurious_one():
    two = Parameters(
        HLCModel.parse("2:2,2,2,2"),
        {
            "H1": [0.6, 0.4],
            **{f"O{i}": [[0.85, 0.15], [0.15, 0.85]] for i in range(1, 5)},
        },
    )
    data = sample(two, 300, 7)
    seen = []
    result = blrt(
        data, "2:2,2,2,2", B=9, seed=0, restarts=2, execution=SERIAL, progress=lambda d, t: seen.append((d, t))
    )
    assert result.p_value == pytest.approx(1 / 10) and result.statistic > 20
    assert seen[-1] == (9, 9)
    assert (result.null_model, result.alternative) == ("1:2,2,2,2", "2:2,2,2,2")
    # under the null (one class) the p-values spread out: not all near 0
    one = Parameters(HLCModel.parse("1:2,2,2,2"), {"H1": [1.0], **{f"O{i}": [[0.7, 0.3]] for i in range(1, 5)}})
    ps = [blrt(sample(one, 200, s), "2:2,2,2,2", B=9, seed=s, restarts=2, execution=SERIAL).p_value for s in range(6)]
    assert np.mean(ps) > 0.25


def test_blrt_can_be_cancelled_and_checks_its_input():
    data = sample(random_parameters(HLCModel.parse("2:2,2,2,2"), 0), 100, 0)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        blrt(data, "2:2,2,2,2", B=5, execution=SERIAL, cancel=stop)
    stop = threading.Event()

    def progress(done, total):
        stop.set()  # cancel after the first chunk

    with pytest.raises(Cancelled):
        blrt(data, "2:2,2,2,2", B=25, seed=0, restarts=1, execution=SERIAL, progress=progress, cancel=stop)
    with pytest.raises(EffdimError, match="replicates B must be at least 1"):
        blrt(data, "2:2,2,2,2", B=0, execution=SERIAL)
    with pytest.raises(EffdimError, match="replicates B must be a whole number"):
        blrt(data, "2:2,2,2,2", B=2.5, execution=SERIAL)
    with pytest.raises(EffdimError, match="not a hidden node"):
        blrt(data, "2:2,2,2,2", node="O1", B=5, execution=SERIAL)
