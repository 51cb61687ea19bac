"""Write the synthetic example data sets bundled in ``core/datasets/``.

Run from the repository root::

    python -m benchmarks.engine.make_datasets

For each synthetic entry of :mod:`effdim.datasets` (``lc-8-2222``,
``hlc-figure2``) this draws random parameters for the generating model
(every CPT row Dirichlet(1), as in Kocka & Zhang 2002, Section 6), samples
10,000 cases by forward sampling, and writes

* ``<name>.csv`` -- the unique response patterns with a ``count`` column;
* ``<name>_parameters.csv`` -- the generating CPTs, one row per entry
  (``node, parent, parent_state, state, probability``; the root has no
  parent), written with full float precision.

Both depend only on the seed recorded in the registry (numpy's PCG64
``Generator``), so the script reproduces the committed files; the
parameters are bundled anyway so that loading them never depends on the
random number generator of the installed numpy.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from effdim.datasets import info
from effdim.distribution import random_parameters, sample
from effdim.model import HLCModel

OUT = Path(__file__).resolve().parents[2] / "core" / "datasets"
N_CASES = 10_000


def write_parameters(params, path: Path) -> None:
    model = params.model
    with path.open("w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["node", "parent", "parent_state", "state", "probability"])
        for node in model.nodes:
            parent = model.parent(node)
            table = np.atleast_2d(params.cpts[node])
            for u, row in enumerate(table):
                for x, prob in enumerate(row):
                    out.writerow([node, parent or "", "" if parent is None else u, x, repr(float(prob))])


def main(names=("lc-8-2222", "hlc-figure2")) -> None:
    for name in names:
        entry = info(name)
        model = HLCModel.parse(entry.model)
        rng = np.random.default_rng(entry.seed)
        params = random_parameters(model, rng, concentration=1.0)
        data = sample(params, N_CASES, rng)
        frame = data.to_frame()
        frame.to_csv(OUT / entry.filename, index=False, lineterminator="\n")
        write_parameters(params, OUT / entry.parameters_file)
        print(f"{name}: {data} -> {entry.filename}, {entry.parameters_file}", file=sys.stderr)


if __name__ == "__main__":
    main()
