"""How well a fitted model's modal class sorts the rows: the classification table and its error.

Assign every row to its most probable state of a hidden node ``H`` (the
modal class, the first on ties); the rows assigned to ``s`` hold, by the
posteriors, an expected number ``sum_{rows -> s} P(H = c | row)`` of members
of each class ``c``. The table of these sums (rows: the assigned class,
columns: the class by the posteriors) is what Mplus prints as "classification
probabilities for the most likely latent class membership" before dividing
each row by its total, and Latent GOLD as its classification table: its
diagonal holds the rows assigned to their own class; everything off it is
expected misclassification. The **classification error** is the share off
the diagonal, ``1 - sum_c T[c, c] / N`` (Latent GOLD's "classification
errors"; Vermunt & Magidson 2005, *Technical Guide for Latent GOLD 4.0*). It
is 0 only for perfectly separated classes.

Missing answers are marginalised (the posteriors use the observed answers
only), as everywhere in :mod:`effdim.em`; pattern counts weight the rows.
Where ``de < ds`` the posteriors, and so this table, are not unique
(:mod:`effdim.diagnostics`, "Which fitted quantities are unique").

Examples
--------
>>> from effdim import datasets, fit
>>> table = classification_table(fit(datasets.load("stouffer-toby"), "2:2,2,2,2", seed=0, warn=False))
>>> table.counts.shape, round(float(table.counts.sum()), 6), 0 <= table.error < 0.2
((2, 2), 216.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ClassificationTable", "classification_table"]


@dataclass(frozen=True)
class ClassificationTable:
    """The modal assignment of ``node``'s states against its posteriors (module docstring).

    ``counts[s, c]``: the rows assigned to state ``s + 1`` that belong to state ``c + 1`` by the
    posteriors (an expected count; each row's sum is the rows assigned there); ``error``: the share of the
    rows off the diagonal.
    """

    node: str
    counts: np.ndarray

    @property
    def error(self) -> float:
        """``1 - trace / N``: the expected share of rows assigned to another state than their own."""
        total = float(self.counts.sum())
        return float(1.0 - np.trace(self.counts) / total) if total > 0 else 0.0

    @property
    def assigned(self) -> np.ndarray:
        """How many rows are assigned to each state (the rows' sums)."""
        return self.counts.sum(axis=1)

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame: a row per assigned state, a column per state by the posteriors, and the
        rows' total."""
        states = [f"{self.node} = {s + 1}" for s in range(self.counts.shape[0])]
        frame = pd.DataFrame(self.counts, index=[f"assigned {s}" for s in states], columns=states)
        frame["rows"] = self.assigned
        return frame

    def to_json(self) -> dict[str, Any]:
        """``node``, ``counts`` (rows: assigned state, columns: state by the posteriors) and ``error``."""
        return {"node": self.node, "counts": self.counts.tolist(), "error": self.error}


def classification_table(fit: Any, node: str | None = None) -> ClassificationTable:
    """The classification table of hidden ``node`` (default: the root) of an :class:`effdim.FitResult`."""
    from .em import posterior

    model = fit.model
    node = model.root if node is None else node
    md, post = posterior(fit.params, fit._data(), node)
    modal = np.argmax(post, axis=1)
    k = post.shape[1]
    counts = np.zeros((k, k))
    np.add.at(counts, modal, md.counts[:, None] * post)
    return ClassificationTable(fit.labels.name(node), counts)
