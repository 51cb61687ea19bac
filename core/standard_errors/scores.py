"""Scores of the log-likelihood in the log-ratio parameters (:mod:`.parameters`): per pattern, and summed.

By Fisher's identity the score of an observed pattern is the expected score of the completed data
given the pattern. For the parameter of category ``c`` in the row of ``node`` given parent state ``h``
(mass ``s`` off the boundary ``B``) that is

    P(h, c | p) - (P(h | p) - P(h, B | p)) theta_c / s,

zero for a pattern whose ``node`` is a missing answer (the answer is marginalised), and for a
regression's coefficient of design column ``l`` and root state ``k``: ``x_pl (P(k | p) - pi_k(x_p))``.
Summed over the patterns with their counts they are expected counts, which one E-step
(:func:`effdim.em.estep.estep`) gives for a whole batch of points at once (:func:`gradients`); per
pattern they need the posteriors of every family (:func:`pattern_scores`).
"""

from __future__ import annotations

import numpy as np

from ..em.design import ModelData
from ..em.estep import TINY, estep
from ..em.state import BatchState
from .parameters import Parametrisation

__all__ = ["gradients", "pattern_scores", "state_at"]


def state_at(md: ModelData, cpts: dict, beta: np.ndarray | None) -> BatchState:
    """EM's state for a batch of points (CPTs with a first axis of points, coefficients or ``None``)."""
    S = next(iter(cpts.values())).shape[0]
    root = md.hidden[0]
    theta = [None] + [cpts[h] for h in md.hidden[1:]]
    leaf = np.zeros((S, md.n_hidden_states, md.n_leaf_states))
    for j, o in enumerate(md.observed):
        leaf[:, *md.leaf_block(j)] = cpts[o]
    if beta is None:
        return BatchState(cpts[root], theta, leaf)
    return BatchState(md.design.probabilities(beta), theta, leaf, beta, md.design)


def gradients(par: Parametrisation, md: ModelData, etas: np.ndarray) -> np.ndarray:
    """The log-likelihood's gradient at each of the ``(S, n_free)`` points ``etas``: ``(S, n_free)``."""
    cpts, beta = par.points(etas)
    st = state_at(md, cpts, beta)
    stats = estep(md, st, 0.0)
    counts = {md.hidden[0]: stats.root}
    for i in range(1, md.n_hidden):
        counts[md.hidden[i]] = stats.pair[i]
    for j, o in enumerate(md.observed):
        counts[o] = stats.leaf[:, *md.leaf_block(j)]
    out = np.zeros(etas.shape)
    for row in par.rows:
        if not row.free:
            continue
        n = counts[row.node] if row.parent_state is None else counts[row.node][:, row.parent_state, :]
        theta = cpts[row.node] if row.parent_state is None else cpts[row.node][:, row.parent_state, :]
        kept = [row.reference, *row.free]
        mass = theta[:, kept].sum(axis=1, keepdims=True)
        off_boundary = n[:, kept].sum(axis=1, keepdims=True)
        free = list(row.free)
        out[:, row.offset : row.offset + len(free)] = n[:, free] - off_boundary * theta[:, free] / mass
    if beta is not None:
        residual = stats.root_rows[:, 1:, :] - md.counts * st.pi[:, 1:, :]  # (S, k - 1, m)
        design = md.design.rows[md.design.index]  # (m, p)
        out[:, par.beta_offset :] = np.matmul(residual, design).transpose(0, 2, 1).reshape(len(etas), -1)
    return out


def pattern_scores(par: Parametrisation, md: ModelData) -> np.ndarray:
    """Each pattern's score at the estimate: ``(m, n_free)`` (one copy of the pattern, not its count)."""
    cpts, beta = par.points(par.eta()[None, :])
    st = state_at(md, cpts, beta)
    stats = estep(md, st, 0.0, keep_post=True)
    post = [p[0] for p in stats.post]  # per hidden index: (k_i, m)
    m = md.n_patterns
    family: dict = {}  # node -> (k_parent, k_node, m) P(parent, node | p); the root's: (1, k, m)
    family[md.hidden[0]] = post[0][None]
    for i in range(md.n_hidden):
        for c in md.hidden_children[i]:
            below = stats.below[c][0]  # (k_c, m)
            log_theta = np.log(np.maximum(st.theta[c][0], TINY))  # (k_i, k_c)
            joint_log = log_theta[:, :, None] + below[None, :, :]  # (k_i, k_c, m)
            top = joint_log.max(axis=1, keepdims=True)
            weights = np.exp(joint_log - top)
            weights /= weights.sum(axis=1, keepdims=True)  # P(c | h, evidence below c)
            family[md.hidden[c]] = post[i][:, None, :] * weights
    for j, o in enumerate(md.observed):
        parent = post[md.observed_parent[j]]  # (k_parent, m)
        codes = md.patterns[:, j]
        k = md.observed_cards[j]
        onehot = (codes[None, :] == np.arange(k)[:, None]).astype(float)  # (k, m); all zero where missing
        theta = st.leaf[0, *md.leaf_block(j)]  # (k_parent, k)
        missing = codes < 0
        joint = parent[:, None, :] * onehot[None, :, :]
        joint[:, :, missing] = parent[:, None, missing] * theta[:, :, None]
        family[o] = joint
    out = np.zeros((m, par.n_free))
    for row in par.rows:
        if not row.free:
            continue
        joint = family[row.node][0 if row.parent_state is None else row.parent_state]  # (k, m)
        theta = Parametrisation.table_row(cpts, row)[0]
        kept = [row.reference, *row.free]
        mass = theta[kept].sum()
        off_boundary = joint[kept].sum(axis=0)  # (m,)
        free = list(row.free)
        out[:, row.offset : row.offset + len(free)] = (joint[free] - off_boundary[None, :] * theta[free, None] / mass).T
    if beta is not None:
        residual = post[0][1:] - st.pi[0, 1:]  # (k - 1, m)
        design = md.design.rows[md.design.index]  # (m, p)
        out[:, par.beta_offset :] = (design[:, :, None] * residual.T[:, None, :]).reshape(m, -1)
    return out
