"""The exact E-step of EM on an HLC tree, by message passing (Kocka & Zhang 2002, Section 2.3).

For every unique data pattern ``p`` (with count ``N(p)``; see
:mod:`effdim.data`) and every hidden node ``H`` the upward message is

    lambda_H(h) = P(evidence below H | H = h)
                = prod_{O observed child} P(o_p | h) prod_{C hidden child} sum_c P(c | h) lambda_C(c),

the posterior of a hidden child ``C`` of ``H`` is

    P(c | p) = lambda_C(c) sum_h P(c | h) P(h | p) / mu_C(h),   mu_C(h) = sum_c P(c | h) lambda_C(c),

and the expected count of the pair is ``N(p) P(c | h) P(h | p) lambda_C(c) / mu_C(h)``. The leaves'
evidence is summed in log space (logarithms of probabilities floored at ``log(1e-300)``) and taken out
of it once per node; the messages are products in linear space, each node's rescaled per pattern so that
its largest state is 1, the logarithms of the scales adding up (the scaled forward-backward recursion):
no NaN or infinity arises for any data, zero counts included. A missing cell (code ``-1``) contributes
``log 1 = 0``: the leaf is marginalised out (the full-information likelihood under missing at random).

All starts of a batch (:class:`~effdim.em.state.BatchState`) and all
patterns are computed at once (:mod:`effdim.em.design`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design import ModelData
from .products import batched_matmul
from .state import BatchState

__all__ = ["TINY", "EStepStats", "estep"]

#: Probabilities are floored here before taking logarithms.
TINY = 1e-300


@dataclass
class EStepStats:
    ll: np.ndarray  # (S,) log-likelihood
    obj: np.ndarray  # (S,) objective: ll (+ prior * sum log theta)
    root: np.ndarray | None = None  # (S, k_root)
    pair: list | None = None  # per hidden index: (S, k_parent, k_i)
    leaf: np.ndarray | None = None  # (S, K, D)
    mass: np.ndarray | None = None  # (S, K) expected count of each hidden state
    post: list | None = None  # per hidden index: (S, k_i, m) posteriors
    llp: np.ndarray | None = None  # (S, m) log P(pattern)
    below: list | None = None  # per hidden index: (S, k_i, m) log P(evidence below i | i)
    outside: list | None = None  # per hidden index: (S, k_i, m) log P(evidence outside the subtree of i, i)
    root_rows: np.ndarray | None = None  # (S, k_root, m) N(p) P(root | p), in a regression (pi per pattern)

    def select(self, idx: np.ndarray) -> EStepStats:
        """The statistics of the starts ``idx`` (E-step fields only; no posteriors)."""
        return EStepStats(
            self.ll[idx],
            self.obj[idx],
            self.root[idx],
            [None if p is None else p[idx] for p in self.pair],
            self.leaf[idx],
            self.mass[idx],
            root_rows=None if self.root_rows is None else self.root_rows[idx],
        )

    def replace(self, idx: np.ndarray, other: EStepStats) -> EStepStats:
        """These statistics with starts ``idx`` taken from ``other`` (computed for those starts only)."""
        out = self.select(np.arange(len(self.ll)))
        out.ll[idx], out.obj[idx], out.root[idx], out.leaf[idx], out.mass[idx] = (
            other.ll,
            other.obj,
            other.root,
            other.leaf,
            other.mass,
        )
        for p, q in zip(out.pair, other.pair):
            if p is not None:
                p[idx] = q
        if out.root_rows is not None:
            out.root_rows[idx] = other.root_rows
        return out


def estep(md: ModelData, st: BatchState, prior: float, counts: bool = True, keep_post: bool = False) -> EStepStats:
    """One exact E-step for ``S`` starts at once.

    Arrays are laid out ``(S, states, m)``: patterns along the contiguous
    axis, so every operation is a long vectorised loop and sums over states
    are additions of whole rows. ``U[i]`` is ``lambda_i`` divided by
    ``exp(logc[i])`` (per pattern), ``M[i] = theta_i U[i]`` its message to
    the parent in the same scale. In a regression the root's distribution
    ``st.pi`` is per pattern, ``(S, k_root, m)``: its expected counts per
    pattern are kept (``root_rows``, for the coefficients' M-step) and the
    MAP pseudo-counts leave it out (a regression's coefficients are ML).
    """
    S, m, K = st.S, md.n_patterns, md.n_hidden_states
    logleaf = np.log(np.maximum(st.leaf, TINY))
    logleaf *= md.leaf_mask_float
    leaf = md.leaf_messages(logleaf)
    H = md.n_hidden
    U: list = [None] * H
    M: list = [None] * H
    logc: list = [None] * H
    for i in range(H - 1, -1, -1):  # children before parents
        u = leaf[:, md.hidden_slices[i], :]  # the leaves' evidence, made this node's message in place
        scale = u.max(axis=1, keepdims=True)  # (S, 1, m)
        np.exp(np.subtract(u, scale, out=u), out=u)
        for c in md.hidden_children[i]:
            u *= M[c]
            top = np.maximum(u.max(axis=1, keepdims=True), TINY)  # rescale after each product: no underflow
            u /= top
            scale += np.log(top)
            scale += logc[c]
        U[i], logc[i] = u, scale
        if i:
            message = batched_matmul(st.theta[i], u)  # (S, k_parent, k_i) @ (S, k_i, m)
            M[i] = np.maximum(message, TINY, out=message)
    root_prior = st.pi[:, :, None] if st.pi.ndim == 2 else st.pi
    logpi = np.log(np.maximum(root_prior, TINY))
    joint = U[0] * root_prior  # (S, k_root, m)
    tot = np.maximum(joint.sum(axis=1, keepdims=True), TINY)
    llp = np.log(tot)
    llp += logc[0]  # (S, 1, m) log P(pattern)
    ll = np.einsum("sm,m->s", llp[:, 0, :], md.counts)
    obj = ll
    if prior:
        logprior = logleaf.sum(axis=(1, 2)) + (logpi[:, :, 0].sum(axis=1) if st.pi.ndim == 2 else 0.0)
        for i in range(1, H):
            logprior = logprior + np.log(np.maximum(st.theta[i], TINY)).sum(axis=(1, 2))
        obj = ll + prior * logprior
    if not counts:
        return EStepStats(ll, obj, llp=llp[:, 0, :] if keep_post else None)
    # Downward in expected counts R_i = N(p) P(i | p), the posteriors weighted by the patterns' counts:
    # R_c = U_c * theta_c^T (R_i / M_c) and the family counts theta_c * ((R_i / M_c) U_c^T).
    R = np.empty((S, K, m))
    np.multiply(joint, md.counts / tot, out=R[:, md.hidden_slices[0], :])
    pair: list = [None] * H
    for i in range(H):
        for c in md.hidden_children[i]:
            ratio = R[:, md.hidden_slices[i], :] / M[c]  # (S, k_i, m)
            below = R[:, md.hidden_slices[c], :]
            np.multiply(U[c], batched_matmul(st.theta[c].transpose(0, 2, 1), ratio), out=below)
            # expected family counts sum_p N(p) P(H_i = h, C = c | p) = theta(h, c) sum_p N(p) ratio(h) U_c(c)
            pair[c] = st.theta[c] * batched_matmul(ratio, U[c].transpose(0, 2, 1))
    leafc = md.leaf_counts(R, st.leaf)
    mass = R.sum(axis=2)
    stats = EStepStats(ll, obj, mass[:, md.hidden_slices[0]].copy(), pair, leafc, mass)
    if st.pi.ndim == 3:
        stats.root_rows = R[:, md.hidden_slices[0], :].copy()
    if keep_post:
        stats.post, stats.below, stats.outside = _posteriors(md, st, U, M, logc, joint, tot, llp, logpi)
        stats.llp = llp[:, 0, :]
    return stats


def _posteriors(md: ModelData, st: BatchState, U, M, logc, joint, tot, llp, logpi) -> tuple[list, list, list]:
    """Each hidden node's posteriors per pattern and the logarithms of its evidence below and outside its
    subtree (:class:`EStepStats` ``post``, ``below``, ``outside``; for :mod:`effdim.em.queries`), from the
    upward messages of :func:`estep`: downward in posteriors."""
    H = md.n_hidden
    post: list = [None] * H
    post[0] = joint / tot
    down: list = [None] * H  # P(evidence outside the subtree of i, i) / P(pattern), per pattern
    for i in range(H):
        for c in md.hidden_children[i]:
            ratio = post[i] / M[c]  # (S, k_i, m)
            down[c] = batched_matmul(st.theta[c].transpose(0, 2, 1), ratio)  # (S, k_c, m)
            post[c] = U[c] * down[c]
    below = [np.log(np.maximum(U[i], TINY)) + logc[i] for i in range(H)]
    outside = [np.broadcast_to(logpi, U[0].shape).copy()]
    outside += [np.log(np.maximum(down[i], TINY)) + llp - logc[i] for i in range(1, H)]
    return post, below, outside
