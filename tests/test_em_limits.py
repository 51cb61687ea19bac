"""EM's size limits: a model, data or number of restarts too large for memory is refused
before anything is allocated (:mod:`effdim.em.memory`), with one line naming the culprit."""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from effdim.data import from_patterns
from effdim.distribution import random_parameters, sample
from effdim.em import ModelData, fit_em
from effdim.em.memory import em_memory
from effdim.limits import SizeLimitError
from effdim.model import HLCModel
from effdim.scores import model_dimensions

#: The CLI runs with this much address space, so code that allocates first fails fast instead of swapping.
ADDRESS_SPACE = 3 * 1024**3


def _limited_address_space():  # pragma: no cover - runs in the child process
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize(
    ("model", "extra", "culprit"),
    [
        ("1000000000:2,2,2", [], "hidden node H1 has 1,000,000,000 states"),
        ("3:2,2,1000000000", [], "leaf O3 has 1,000,000,000 states"),
        ("3:2,2,2", ["--restarts", "100000000"], "for 100,000,000 starts"),
    ],
)
def test_cli_fit_refuses_oversized_em_before_allocating(tmp_path, model, extra, culprit):
    data = tmp_path / "d.csv"
    data.write_text("A,B,C\n0,1,0\n1,1,0\n0,0,1\n1,0,1\n0,0,0\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "effdim.cli", "fit", str(data), "--model", model, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited_address_space,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert proc.returncode == 2, proc.stderr
    # stderr: the reader's line saying how it read the file, then the refusal in one line
    lines = [line for line in proc.stderr.strip().splitlines() if not line.startswith("effdim: read ")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert culprit in lines[0] and "more than the limit of 2.0 GiB" in lines[0]
    # CPU seconds, not wall-clock ones, so that the other tests running meanwhile do not count: the import
    # dominates; nothing the size of the model is built
    assert cpu_seconds < 30, cpu_seconds


def test_fit_em_refuses_too_many_starts_and_honours_its_budget():
    model = HLCModel.parse("3:2,2,2,2")
    data = sample(random_parameters(model, 0), 200, 0)
    cost = em_memory(model, ModelData(model, data).n_patterns, [2, 2, 2, 2])
    with pytest.raises(SizeLimitError, match="for 10 starts") as err:
        fit_em(data, model, restarts=10, max_bytes=cost.total(9))
    assert err.value.needed == cost.total(10) and err.value.limit == cost.total(9)
    assert fit_em(data, model, restarts=9, seed=0, max_bytes=cost.total(9)).restarts == 9
    with pytest.raises(SizeLimitError, match=f"the data have {len(data.patterns)} distinct response patterns"):
        ModelData(model, data, max_bytes=1000)


@pytest.mark.parametrize(
    ("text", "n_rows", "starts", "missing"),
    [
        ("40:3,3,3,3", 3000, 5, 0.0),
        ("5:400,3,3", 4000, 3, 0.0),
        ("6(4(3,3,3),5(3,3,3),3,3)", 5000, 5, 0.1),
        ("300:2,2,2,2,2,2,2,2,2,2", 20000, 2, 0.0),
        ("2:2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2", 30000, 10, 0.0),
    ],
)
def test_memory_estimate_bounds_the_measured_peak(text, n_rows, starts, missing):
    """The closed-form estimate is above the peak that tracemalloc measures, and within a small factor."""
    model = HLCModel.parse(text)
    rng = np.random.default_rng(0)
    data = sample(random_parameters(model, rng), n_rows, rng)
    if missing:
        codes = np.repeat(data.patterns, data.counts.astype(int), axis=0)
        codes = np.where(rng.random(codes.shape) < missing, -1, codes)
        data = from_patterns(codes, columns=data.columns, cardinalities=[model.card(o) for o in model.observed])
    model_dimensions(model)  # de (cached) decides EM's stopping rule; its rank has its own limit
    fit_em(data, model, restarts=1, seed=0, max_iter=1)  # the E-step's compiled pass loaded once per process
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fit_em(data, model, restarts=starts, seed=0, max_iter=10)  # the peak is the first SQUAREM cycle's (3 steps)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    md = ModelData(model, data)
    estimate = em_memory(model, md.n_patterns, md.radix).total(starts)
    assert peak <= estimate <= 4 * peak
