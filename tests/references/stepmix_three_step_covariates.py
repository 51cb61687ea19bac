"""StepMix's three-step estimates of covariates of the classes, the reference tests/test_threestep_covariates.py
compares with.

StepMix is a peer, not a dependency: run this in an environment of its own, from the repository's root::

    python3 -m venv benchmarks/.venv-peers
    benchmarks/.venv-peers/bin/pip install stepmix
    benchmarks/.venv-peers/bin/python tests/references/stepmix_three_step_covariates.py

It writes ``tests/references/three_step_covariates.csv``, 3,000 rows drawn here with a fixed seed from a
latent class regression (6 binary items, 3 classes whose log odds against the first depend on a number ``x``
and a category ``g``), and ``tests/references/stepmix_three_step_covariates.json``: StepMix's ``n_steps=3``
estimates with ``structural="covariate"`` (Newton-Raphson steps to a gradient below 1e-10 in each M-step)
and ``correction="BCH"``, ``"ML"`` and ``None`` (modal assignment), each a fit of its own from StepMix's
public API, with the measurement model it ended at (class shares, item probabilities, log-likelihood) and
its classification error matrix. Classes are listed by decreasing share of the measurement model, as effdim
lists them; StepMix gives every class coefficients, and the reference keeps each class's minus class 1's.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
from stepmix_three_step import measurement  # the script beside this one

HERE = Path(__file__).resolve().parent
DATA = HERE / "three_step_covariates.csv"
OUT = HERE / "stepmix_three_step_covariates.json"
SETTINGS = {"n_init": 10, "abs_tol": 1e-13, "rel_tol": 0.0, "max_iter": 100000, "random_state": 7}
STRUCTURAL = {"method": "newton-raphson", "max_iter": 100, "tol": 1e-10}
TRUTH = {
    "n": 3000,
    "items": [[0.8] * 6, [0.8] * 3 + [0.2] * 3, [0.2] * 6],
    "coefficients": [[0.0, 0.0, 0.0], [0.3, 1.0, 0.5], [-0.5, -1.0, 1.0]],  # per class: intercept, x, g = b
}


def simulate(seed: int = 61) -> None:
    rng = np.random.default_rng(seed)
    n = TRUTH["n"]
    x, g = rng.normal(size=n).round(4), rng.choice(["a", "b"], size=n)
    eta = np.column_stack([np.ones(n), x, g == "b"]) @ np.array(TRUTH["coefficients"]).T
    p = np.exp(eta - eta.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    classes = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    items = (rng.random((n, 6)) < np.array(TRUTH["items"])[classes]).astype(int) + 1
    with open(DATA, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([f"i{j + 1}" for j in range(6)] + ["x", "g"])
        for i in range(n):
            out.writerow([*items[i], f"{x[i]:.4f}", g[i]])


def fit(X, Y, correction):
    from stepmix.stepmix import StepMix

    model = StepMix(
        n_components=3,
        measurement="categorical",
        structural="covariate",
        structural_params=STRUCTURAL,
        n_steps=3,
        correction=correction,
        assignment="modal",
        progress_bar=0,
        verbose=0,
        **SETTINGS,
    )
    model.fit(X, Y)
    found, order = measurement(model, X)
    beta = model.get_parameters()["structural"]["beta"][order]  # (classes, intercept + covariates)
    found["coefficients"] = (beta[1:] - beta[0]).T.tolist()  # terms by classes 2..3, as effdim's
    return found


def main() -> None:
    from importlib.metadata import version

    simulate()
    with open(DATA, newline="") as f:
        rows = list(csv.DictReader(f))
    X = np.array([[int(r[f"i{j + 1}"]) - 1 for j in range(6)] for r in rows])
    Y = np.array([[float(r["x"]), float(r["g"] == "b")] for r in rows])
    reference = {"stepmix": version("stepmix"), "settings": SETTINGS, "structural": STRUCTURAL, "truth": TRUTH}
    for label, correction in (("bch", "BCH"), ("ml", "ML"), ("modal", None)):
        print(f"covariates by {label}", file=sys.stderr)
        reference[label] = fit(X, Y, correction)
    OUT.write_text(json.dumps(reference, indent=1) + "\n")


if __name__ == "__main__":
    main()
