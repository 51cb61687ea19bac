"""The exact E-step of EM on an HLC tree, by message passing (Kocka & Zhang 2002, Section 2.3).

For every unique data pattern ``p`` (with count ``N(p)``; see
:mod:`effdim.data`) and every hidden node ``H`` the upward message is

    lambda_H(h) = log P(evidence below H | H = h)
                = sum_{O observed child} log P(o_p | h)
                + sum_{C hidden child} log sum_c P(c | h) exp(lambda_C(c)),

and the downward (outside) message of a hidden child ``C`` of ``H`` is

    alpha_C(c) = log sum_h exp(alpha_H(h) + lambda_H(h) - mu_C(h)) P(c | h),

with ``alpha_root = log P(root)`` and ``mu_C`` the upward message of ``C``
into ``H``. Everything is computed in log space, each log-sum-exp shifted by
its maximum, and logarithms of probabilities floored at ``log(1e-300)``: no
NaN or infinity arises for any data, zero counts included. A missing cell
(code ``-1``) contributes ``log 1 = 0``: the leaf is marginalised out (the
full-information likelihood under missing at random).

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
    up: list | None = None  # per hidden index: (S, k_i, m) log P(evidence below i | i)
    belief: list | None = None  # per hidden index: (S, k_i, m) log P(evidence, i)

    def select(self, idx: np.ndarray) -> EStepStats:
        """The statistics of the starts ``idx`` (E-step fields only; no posteriors)."""
        return EStepStats(
            self.ll[idx],
            self.obj[idx],
            self.root[idx],
            [None if p is None else p[idx] for p in self.pair],
            self.leaf[idx],
            self.mass[idx],
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
        return out


def estep(md: ModelData, st: BatchState, prior: float, counts: bool = True, keep_post: bool = False) -> EStepStats:
    """One exact E-step for ``S`` starts at once.

    Arrays are laid out ``(S, states, m)``: patterns along the contiguous
    axis, so every operation is a long vectorised loop and sums over states
    are additions of whole rows.
    """
    S, m, K = st.S, md.n_patterns, md.n_hidden_states
    logleaf = np.log(np.maximum(st.leaf, TINY))
    logleaf *= md.leaf_mask_float
    leaf = md.leaf_messages(logleaf)
    H = md.n_hidden
    up: list = [None] * H
    msg: list = [None] * H
    upmax: list = [None] * H
    upexp: list = [None] * H
    for i in range(H - 1, -1, -1):  # children before parents
        u = leaf[:, md.hidden_slices[i], :]
        for c in md.hidden_children[i]:
            u = u + msg[c]
        up[i] = u
        if i == 0:
            break
        mx = u.max(axis=1, keepdims=True)  # (S, 1, m)
        e = u - mx
        np.exp(e, out=e)
        p = batched_matmul(st.theta[i], e)  # (S, k_parent, k_i) @ (S, k_i, m)
        np.maximum(p, TINY, out=p)
        np.log(p, out=p)
        p += mx
        msg[i] = p
        upmax[i], upexp[i] = mx, e
    logpi = np.log(np.maximum(st.pi, TINY))
    b0 = up[0] + logpi[:, :, None]  # (S, k_root, m)
    mx = b0.max(axis=1, keepdims=True)
    e0 = b0 - mx
    np.exp(e0, out=e0)
    tot = e0.sum(axis=1, keepdims=True)  # >= 1: the largest term is exp(0)
    llp = np.log(tot)
    llp += mx  # (S, 1, m) log P(pattern)
    ll = np.einsum("sm,m->s", llp[:, 0, :], md.counts)
    obj = ll
    if prior:
        logprior = logpi.sum(axis=1) + logleaf.sum(axis=(1, 2))
        for i in range(1, H):
            logprior = logprior + np.log(np.maximum(st.theta[i], TINY)).sum(axis=(1, 2))
        obj = ll + prior * logprior
    if not counts:
        return EStepStats(ll, obj, llp=llp[:, 0, :] if keep_post else None)
    e0 /= tot
    post: list = [None] * H
    post[0] = e0
    belief: list = [None] * H
    belief[0] = b0
    pair: list = [None] * H
    w = md.counts
    for i in range(H):
        for c in md.hidden_children[i]:
            b = belief[i] - msg[c]  # log P(evidence outside the subtree of c, H_i = h)
            mb = b.max(axis=1, keepdims=True)
            q = batched_matmul(st.theta[c].transpose(0, 2, 1), np.exp(b - mb))  # (S, k_c, m)
            np.maximum(q, TINY, out=q)
            np.log(q, out=q)
            q += mb
            q += up[c]
            belief[c] = q
            post[c] = np.exp(q - llp)
            # expected family counts sum_p N(p) P(H_i = h, C = c | p), computed as
            # theta(h, c) * sum_p [N(p) A_p(h)] B_p(c) with each factor scaled
            log_a = b - llp
            log_a += upmax[c]
            shift = log_a.max(axis=2, keepdims=True)  # (S, k_i, 1): over patterns
            log_a -= shift
            a = np.exp(log_a, out=log_a)
            a *= w
            g = np.einsum("sim,scm->sic", a, upexp[c])  # (S, k_i, k_c)
            th = st.theta[c]
            logpair = np.log(th, out=np.full(th.shape, -np.inf), where=th > 0)
            logpair += shift
            logpair += np.log(g, out=np.full(g.shape, -np.inf), where=g > 0)
            pair[c] = np.exp(logpair)
    if H == 1:
        R = e0 * w if keep_post else np.multiply(e0, w, out=e0)
    else:
        R = np.empty((S, K, m))
        for i in range(H):
            np.multiply(post[i], w, out=R[:, md.hidden_slices[i], :])
    leafc = md.leaf_counts(R, st.leaf)
    mass = R.sum(axis=2)
    root = mass[:, md.hidden_slices[0]].copy()
    if keep_post:
        return EStepStats(ll, obj, root, pair, leafc, mass, post, llp[:, 0, :], up, belief)
    return EStepStats(ll, obj, root, pair, leafc, mass)
