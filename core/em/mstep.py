"""The M-step of EM: expected counts to conditional probability tables.

With the expected counts ``N'_ijk`` of the E-step (:mod:`effdim.em.estep`;
family ``i`` = a node and its parent, ``j`` the parent state, ``k`` the node
state; the root's family is the root alone),
``theta_ijk = (N'_ijk + a) / (N'_ij + a r_i)``, where ``a`` is the ``prior``
pseudo-count (0 for ML). ``prior = a`` maximises
``log p(D | theta) + a sum log theta_ijk``: the MAP estimate under a
Dirichlet(a + 1) prior; ``prior = 1`` adds one pseudo-count per cell
(Laplace's rule, the posterior mean under the uniform Dirichlet(1) prior).
With ML, a row whose parent state has no expected mass at all keeps its
previous value (it does not affect the likelihood).
"""

from __future__ import annotations

import numpy as np

from ..mlogit import newton_step
from .design import ModelData
from .estep import EStepStats
from .state import BatchState

__all__ = ["mstep", "normalised"]


def normalised(md: ModelData, weights: BatchState, old: BatchState) -> BatchState:
    """Every CPT row of ``weights`` divided by its sum; a row summing to 0 takes ``old``'s values.
    A regression's root (its coefficients and their ``pi``) is taken as it is."""

    def rows(w, fallback):
        rs = w.sum(axis=-1, keepdims=True)
        return np.divide(w, rs, out=fallback.copy(), where=rs > 0)

    pi = rows(weights.pi, old.pi) if weights.beta is None else weights.pi
    theta = [None] + [rows(weights.theta[i], old.theta[i]) for i in range(1, md.n_hidden)]
    den = np.add.reduceat(weights.leaf, md.observed_offsets[:-1], axis=2)[:, :, md.leaf_column]
    leaf = np.divide(weights.leaf, den, out=old.leaf.copy(), where=(den > 0) & md.leaf_mask)
    return BatchState(pi, theta, leaf, weights.beta, weights.design)


def mstep(
    md: ModelData, st: BatchState, stats: EStepStats, prior: float, active: np.ndarray | None = None
) -> BatchState:
    """``theta_ijk = (N'_ijk + a) / (N'_ij + a r_i)`` for the ``active`` starts (all by default).

    Rows without expected mass keep their old values (they do not affect the likelihood). In a
    regression the root's coefficients make one Newton step on their expected log-likelihood
    (:func:`effdim.mlogit.newton_step`), without pseudo-counts.
    """
    a = float(prior or 0.0)
    counts = BatchState(stats.root, [None] + stats.pair[1:], stats.leaf)
    if a:
        counts = counts.like([c + a for c in counts.arrays()])
    if st.beta is not None:
        design = st.design
        beta, _ = newton_step(design.rows, st.beta, design.sums(stats.root_rows), md.design_counts)
        counts = BatchState(design.probabilities(beta), counts.theta, counts.leaf, beta, design)
    new = normalised(md, counts, st)
    if active is not None and not active.all():
        new = new.where(active, st)
    return new
