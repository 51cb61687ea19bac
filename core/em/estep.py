"""The exact E-step of EM on an HLC tree, by message passing (Kocka & Zhang 2002, Section 2.3).

For every unique data pattern ``p`` (with count ``N(p)``; see
:mod:`effdim.data`) and every hidden node ``H`` the upward message is

    lambda_H(h) = P(evidence below H | H = h)
                = prod_{O observed child} P(o_p | h) prod_{C hidden child} sum_c P(c | h) lambda_C(c),

the posterior of a hidden child ``C`` of ``H`` is

    P(c | p) = lambda_C(c) sum_h P(c | h) P(h | p) / mu_C(h),   mu_C(h) = sum_c P(c | h) lambda_C(c),

and the expected count of the pair is ``N(p) P(c | h) P(h | p) lambda_C(c) / mu_C(h)``. The leaves'
evidence of a block of columns is summed in log space (logarithms of probabilities floored at
``log(1e-300)``) per joint state and taken out of it once per joint state; the messages are products in
linear space, each node's rescaled per pattern so that its largest state is 1, the logarithms of the
scales adding up (the scaled forward-backward recursion): no NaN or infinity arises for any data, zero
counts included. A missing cell (code ``-1``) contributes ``log 1 = 0``: the leaf is marginalised out (the
full-information likelihood under missing at random).

The pass over the patterns is compiled (:mod:`effdim.em.kernel`): every start of a batch
(:class:`~effdim.em.state.BatchState`), one pattern after another, on every core; what is left here is
the work the size of the parameters (the blocks' tables before, the family counts after).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .design import ModelData
from .kernel import run_pass
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
    """One exact E-step for ``S`` starts at once: the compiled pass over the patterns
    (:func:`effdim.em.kernel.estep_pass`), side by side on the machine's cores, and the parameter-sized
    sums around it. ``keep_post`` also returns every node's posteriors and messages per pattern. In a
    regression the root's distribution ``st.pi`` is per pattern, ``(S, k_root, m)``: its expected counts per
    pattern are kept (``root_rows``, for the coefficients' M-step) and the MAP pseudo-counts leave it out (a
    regression's coefficients are ML)."""
    lay = md.layout
    S, H = st.S, md.n_hidden
    logleaf = np.log(np.maximum(st.leaf, TINY))
    logleaf *= md.leaf_mask_float
    table_log, log_max = md.block_tables(logleaf)
    table_lin = np.exp(table_log - np.repeat(log_max, _table_repeats(md), axis=1))
    theta = np.concatenate([st.theta[i].reshape(S, -1) for i in range(1, H)], axis=1) if H > 1 else np.zeros((S, 0))
    pi = np.ascontiguousarray(st.pi[:, :, None] if st.pi.ndim == 2 else st.pi)  # (S, k_root, 1 or m)
    out = run_pass(lay, md.counts, pi, theta, (table_lin, table_log, log_max), counts=counts, keep=keep_post)
    ll = out.ll + log_max @ md.joint_counts  # the blocks' column maxima, left out per pattern
    obj = ll
    if prior:  # a regression's root is ML: its coefficients get no pseudo-counts
        logprior = logleaf.sum(axis=(1, 2)) + (np.log(np.maximum(st.pi, TINY)).sum(axis=1) if st.pi.ndim == 2 else 0.0)
        for i in range(1, H):
            logprior = logprior + np.log(np.maximum(st.theta[i], TINY)).sum(axis=(1, 2))
        obj = ll + prior * logprior
    if not counts:
        return EStepStats(ll, obj, llp=out.llp)
    pairs: list = [None] * H
    for i in range(1, H):
        lo, hi = lay.theta_offset[i], lay.theta_offset[i + 1]
        pairs[i] = st.theta[i] * out.pair[:, lo:hi].reshape(st.theta[i].shape)
    leafc = md.leaf_counts(out.per_state, st.leaf)
    root = out.root
    mass = np.concatenate([root, *(pairs[i].sum(axis=1) for i in range(1, H))], axis=1)  # a family's column sums
    stats = EStepStats(ll, obj, root, pairs, leafc, mass)
    stats.root_rows = out.root_rows
    if keep_post:
        stats.post, stats.below, stats.outside = _posteriors(md, st, out.up, out.message, out.log_below, out.llp)
        stats.llp = out.llp
    return stats


def _table_repeats(md: ModelData) -> np.ndarray:
    """How many table entries each joint state of each block has (its node's states), in table order."""
    lay = md.layout
    joints = np.diff(lay.joint_offset)
    per_block = np.diff(lay.table_offset) // np.maximum(joints, 1)
    return np.repeat(per_block, joints)


def _posteriors(md: ModelData, st: BatchState, up, message, log_below, llp) -> tuple[list, list, list]:
    """Each hidden node's posteriors per pattern and the logarithms of its evidence below and outside its
    subtree (:class:`EStepStats` ``post``, ``below``, ``outside``; for :mod:`effdim.em.queries`), from the
    kernel's scaled upward messages ``up``, messages to the parents ``message`` and log scales ``log_below``:
    downward in posteriors."""
    H, lay = md.n_hidden, md.layout
    U = [up[:, md.hidden_slices[i], :] for i in range(H)]
    M = [None] + [message[:, lay.msg_offset[i] : lay.msg_offset[i + 1], :] for i in range(1, H)]
    logc = [log_below[:, i : i + 1, :] for i in range(H)]
    root_prior = st.pi[:, :, None] if st.pi.ndim == 2 else st.pi
    joint = U[0] * root_prior
    post: list = [None] * H
    post[0] = joint / np.maximum(joint.sum(axis=1, keepdims=True), TINY)
    down: list = [None] * H  # P(evidence outside the subtree of i, i) / P(pattern), per pattern
    for i in range(H):
        for c in md.hidden_children[i]:
            ratio = post[i] / M[c]  # (S, k_i, m)
            down[c] = batched_matmul(st.theta[c].transpose(0, 2, 1), ratio)  # (S, k_c, m)
            post[c] = U[c] * down[c]
    logpi = np.log(np.maximum(root_prior, TINY))
    below = [np.log(np.maximum(U[i], TINY)) + logc[i] for i in range(H)]
    outside = [np.broadcast_to(logpi, U[0].shape).copy()]
    outside += [np.log(np.maximum(down[i], TINY)) + llp[:, None, :] - logc[i] for i in range(1, H)]
    return post, below, outside
