"""Where the structure search's tasks run (its candidates' local EM and refits, effdim.structure.tasks) does not
change what it learns: this process, local worker processes and a real Dask cluster of two worker processes learn
the same tree, by the same steps, for the same seed."""

import numpy as np
import pytest
from structure_cases import CLEAR_TREE

from effdim.distribution import sample
from effdim.errors import InvalidArgument
from effdim.executor import Execution
from effdim.experiments.structure import separated_parameters
from effdim.structure import learn_structure


def _search(data, execution):
    """From the LC model, so the search takes steps: the islands start is this tree already."""
    result = learn_structure(data, score="bic", start="lc", seed=0, restarts=1, rounds=0, execution=execution)
    return result, [(s.operator, s.text, s.score) for s in result.steps]


@pytest.mark.timeout(900)  # three searches, two pools of workers started, on a shared machine
def test_serial_processes_and_a_dask_cluster_learn_the_same_tree():
    import distributed  # in the test extra: CI runs the Dask path

    data = sample(separated_parameters(CLEAR_TREE, 0.75), 2000, np.random.default_rng(3))
    serial, serial_steps = _search(data, Execution("serial"))
    assert serial_steps and serial.candidates > 20  # a search with steps to get wrong
    local, local_steps = _search(data, Execution("processes", 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dask, dask_steps = _search(data, Execution(scheduler=cluster.scheduler_address))
    for other, steps in ((local, local_steps), (dask, dask_steps)):
        assert other.model == serial.model and steps == serial_steps
        assert other.candidates == serial.candidates  # (workers refit side by side: more refits, the same winner)
        assert other.fit.loglik == pytest.approx(serial.fit.loglik, rel=1e-12, abs=0)


def test_the_execution_setting_is_checked():
    with pytest.raises(InvalidArgument, match="execution must be an Execution"):
        learn_structure(sample(separated_parameters(CLEAR_TREE, 0.75), 50, 1), execution="dask")
