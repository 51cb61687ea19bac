"""StepMix's three-step estimates of distal outcomes, the reference tests/test_threestep_stepmix.py compares with.

StepMix is a peer, not a dependency: run this in an environment of its own, from the repository's root::

    python3 -m venv benchmarks/.venv-peers
    benchmarks/.venv-peers/bin/pip install stepmix
    benchmarks/.venv-peers/bin/python tests/references/stepmix_three_step.py

It writes ``tests/references/three_step_simulated.csv`` (data drawn here with a fixed seed from a
3-class model whose distal means and probabilities are known) and ``tests/references/stepmix_three_step.json``:
for each data set and distal outcome, StepMix's ``n_steps=3`` estimates with ``correction="BCH"``,
``correction="ML"`` and ``correction=None`` (modal assignment), each a fit of its own from
StepMix's public API, with the measurement model's log-likelihood, class shares and item probabilities
of that fit and StepMix's classification error matrix (``stepmix.corrections.compute_bch_matrix``) at
it. Classes are listed by decreasing share of the measurement model, as effdim lists them. The tests
start effdim's EM from StepMix's measurement model, so both work on the same local maximum (on the
election data effdim's restarts find a higher one, ``docs/three-step.md``).

The data sets: the simulated one (6 binary items, 3 classes, a continuous ``z`` and a 3-category
``zc``) and poLCA's election data (``tests/data/election.csv``: 12 items of 4 categories with
missing answers, 3 classes, the distal outcomes ``VOTE3`` and ``AGE``; bundled as
``core/datasets/election.csv``).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIMULATED = HERE / "three_step_simulated.csv"
ELECTION = HERE.parent.parent / "core" / "datasets" / "election.csv"
OUT = HERE / "stepmix_three_step.json"
SETTINGS = {"n_init": 10, "abs_tol": 1e-13, "rel_tol": 0.0, "max_iter": 100000, "random_state": 7}

#: The simulated data's truth: class shares, P(item = 2 | class) of 6 binary items, and the distal outcomes.
TRUTH = {
    "n": 2000,
    "shares": [0.5, 0.3, 0.2],
    "items": [[0.8] * 6, [0.8] * 3 + [0.2] * 3, [0.2] * 6],
    "z_means": [0.0, 1.0, 2.0],
    "z_sds": [1.0, 1.5, 0.5],
    "zc_probabilities": [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]],
}


def simulate(seed: int = 61) -> None:
    rng = np.random.default_rng(seed)
    n = TRUTH["n"]
    x = rng.choice(3, size=n, p=TRUTH["shares"])
    items = (rng.random((n, 6)) < np.array(TRUTH["items"])[x]).astype(int) + 1
    z = rng.normal(np.array(TRUTH["z_means"])[x], np.array(TRUTH["z_sds"])[x])
    cumulative = np.cumsum(np.array(TRUTH["zc_probabilities"])[x], axis=1)
    zc = (rng.random(n)[:, None] > cumulative).sum(axis=1) + 1
    with open(SIMULATED, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([f"i{j + 1}" for j in range(6)] + ["z", "zc"])
        for i in range(n):
            out.writerow([*items[i], f"{z[i]:.6f}", zc[i]])


def read(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def codes(column: list[str]) -> tuple[np.ndarray, list[str]]:
    """Category codes 0..J-1 in effdim's order (numbers sorted as numbers, labels "1 ..." by their number),
    NaN where empty."""
    present = sorted({v for v in column if v != ""}, key=lambda v: float(v.split()[0]))
    index = {v: i for i, v in enumerate(present)}
    return np.array([index[v] if v != "" else np.nan for v in column], dtype=float), present


def numbers(column: list[str]) -> np.ndarray:
    return np.array([float(v) if v != "" else np.nan for v in column])


def measurement(model, X) -> tuple[dict, np.ndarray]:
    """What a fitted StepMix model says of its measurement model, its classes by decreasing share, and that
    order: the log-likelihood, the shares, the item probabilities, the classification error matrix."""
    from stepmix.corrections import compute_bch_matrix

    order = np.argsort(-model.weights_, kind="stable")
    error, _ = compute_bch_matrix(model.predict_proba_class(X), "modal")
    pis = model.get_parameters()["measurement"]["pis"]
    k = len(order)
    found = {
        "measurement_loglik": float(model.score(X) * X.shape[0]),
        "shares": model.weights_[order].tolist(),
        # P(item j = category l | class): StepMix's one-hot columns are item-major, max_n_outcomes per item
        "items": pis[order].reshape(k, X.shape[1], -1).transpose(1, 0, 2).tolist(),
        "error_matrix": error[np.ix_(order, order)].tolist(),
        "converged": bool(model.converged_),
    }
    return found, order


def fit(k, X, Y, structural, correction):
    from stepmix.stepmix import StepMix

    model = StepMix(
        n_components=k,
        measurement="categorical_nan",
        structural=structural,
        n_steps=3,
        correction=correction,
        assignment="modal",
        progress_bar=0,
        verbose=0,
        **SETTINGS,
    )
    model.fit(X, Y)
    out, order = measurement(model, X)
    params = model.get_parameters()["structural"]
    if "means" in params:
        out["means"] = params["means"][order, 0].tolist()
        out["variances"] = params["covariances"][order, 0].tolist()
    else:
        out["probabilities"] = params["pis"][order].tolist()
    return out


def study(name: str, header: list[str], rows: list[list[str]], items: list[str], outcomes: dict, k: int) -> dict:
    columns = {h: [r[j] for r in rows] for j, h in enumerate(header)}
    X = np.column_stack([codes(columns[c])[0] for c in items])
    result = {"items": items, "classes": k, "n": len(rows), "outcomes": {}}
    for column, kind in outcomes.items():
        if kind == "continuous":
            Y, structural, categories = numbers(columns[column])[:, None], "gaussian_diag_nan", None
        else:
            y, categories = codes(columns[column])
            Y, structural = y[:, None], "categorical_nan"
        found = {"type": kind, "categories": categories}
        for label, correction in (("bch", "BCH"), ("ml", "ML"), ("modal", None)):
            print(f"{name}: {column} by {label}", file=sys.stderr)
            found[label] = fit(k, X, Y, structural, correction)
        result["outcomes"][column] = found
    return result


def main() -> None:
    import stepmix

    simulate()
    header, rows = read(SIMULATED)
    reference = {
        "stepmix": getattr(stepmix, "__version__", None) or _version(),
        "settings": SETTINGS,
        "truth": TRUTH,
        "simulated": study(
            "simulated", header, rows, [f"i{j + 1}" for j in range(6)], {"z": "continuous", "zc": "categorical"}, 3
        ),
    }
    header, rows = read(ELECTION)
    items = header[:12]
    reference["election"] = study("election", header, rows, items, {"VOTE3": "categorical", "AGE": "continuous"}, 3)
    OUT.write_text(json.dumps(reference, indent=1) + "\n")


def _version() -> str:
    from importlib.metadata import version

    return version("stepmix")


if __name__ == "__main__":
    main()
