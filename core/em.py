"""Expectation-maximisation for LC and HLC models (Kocka & Zhang 2002, Section 2.3).

The scores of Section 2.3 need the maximum-likelihood (ML) or maximum a
posteriori (MAP) estimate of the parameters of a model with hidden variables,
which the paper obtains with EM. This module runs EM on *any* HLC tree, not
only on LC models.

E-step: exact, by message passing on the tree
-----------------------------------------------
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

All patterns are handled at once as arrays (patterns along the contiguous
axis), and all observed leaves at once through the one-hot design
``Z = B E`` (:meth:`ModelData._design`), so the cost depends on the number of
*unique* patterns: 243,000 rows over 5 binary columns cost what their at most
32 distinct patterns cost. Large products avoid multi-threaded BLAS, which
is very slow on thin matrices when the cores are shared.

M-step
------
With the expected counts ``N'_ijk`` of the E-step (family ``i`` = a node and
its parent, ``j`` the parent state, ``k`` the node state; the root's family is
the root alone), ``theta_ijk = (N'_ijk + a) / (N'_ij + a r_i)``, where ``a`` is
the ``prior`` pseudo-count (0 for ML). ``prior = a`` maximises
``log p(D | theta) + a sum log theta_ijk``: the MAP estimate under a
Dirichlet(a + 1) prior; ``prior = 1`` adds one pseudo-count per cell
(Laplace's rule, the posterior mean under the uniform Dirichlet(1) prior).
With ML, a row whose parent state has no expected mass at all keeps its
previous value (it does not affect the likelihood).

Restarts with pruning (Chickering & Heckerman 1997)
---------------------------------------------------
``restarts`` random starts (every CPT row uniform on the simplex), plus any
given ``init`` starts, follow the schedule of :mod:`effdim.restarts`: run a
few steps together, keep the better half, double the steps, until one start
remains, which then runs to convergence (``docs/theory.md``, section
"8. EM restarts and nested models"). All starts of a stage are computed as
one batch of arrays, so five starts cost little more than one on compressed
data. A larger model grown from a fitted smaller one gets that solution with
one hidden state split in two as an extra start (:mod:`effdim.nested`).

Acceleration: SQUAREM
---------------------
By default every iteration is a SQUAREM cycle (Varadhan & Roland 2008;
:mod:`effdim.squarem`): two EM steps, an extrapolation along them kept
inside the simplex, one stabilising EM step, and a fallback to the plain EM
point whenever the extrapolated objective is lower. Models whose effective
dimension is below the standard one have flat directions along which plain
EM crawls; on the Table 2 fits (``benchmarks/bench_em_accuracy.py``) the
share of fits meeting ``tol`` within 1000 steps rose from 13% to 100%.
``accelerate=False`` runs plain EM.

Convergence: the objective (log-likelihood, plus ``a sum log theta`` under
MAP) rose by less than ``tol`` per data row (``tol * |D|`` in total) per
E-step in the last iteration (one step of plain EM, a whole SQUAREM cycle
divided by its E-steps), or ``max_iter`` E-steps were made. The objective
never falls; :attr:`EMResult.trace` records it for the returned start.

Hidden states are returned in a stable order: every hidden node's states by
decreasing marginal probability, so state 1 (state 0 in code) is the largest
class (:meth:`effdim.distribution.Parameters.size_order`;
:meth:`~effdim.distribution.Parameters.relabeled` reorders them).

The returned parameters are the ones of the final E-step: the expected
counts, the log-likelihood and the parameters belong together, as the
Cheeseman-Stutz score requires (:mod:`effdim.scores`).

Natural logarithms throughout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from .model import HLCModel
from .restarts import best_starts, restart_schedule
from .squarem import adapt_step_max, extrapolate

__all__ = [
    "Cancelled",
    "ConvergenceWarning",
    "Degeneracy",
    "EMResult",
    "ModelData",
    "fit_em",
    "e_step",
    "loglikelihood",
    "posterior",
    "pattern_loglik",
    "messages",
]

#: Probabilities are floored here before taking logarithms.
TINY = 1e-300
#: The block design matrix is held dense up to this many entries, sparse beyond.
DENSE_LIMIT = 4_000_000
#: Consecutive columns are grouped while their joint states number at most this.
BLOCK_STATES = 256
#: Matrix products with at most this many multiply-adds go to BLAS; larger ones
#: use numpy's own loops (einsum, gathers, scipy.sparse). Multi-threaded BLAS
#: on thin products is slow when the cores are shared: up to 50 times slower
#: than one thread was measured on a busy two-core machine.
BLAS_MAX = 1 << 17


def _small(a: int, b: int, c: int) -> bool:
    return a * b * c <= BLAS_MAX


def _mm2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x @ y`` for 2-d arrays, kept off threaded BLAS when large."""
    if _small(x.shape[0], x.shape[1], y.shape[1]):
        return x @ y
    return np.einsum("ab,bc->ac", x, y)


def _mm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Batched ``x @ y`` for (S, a, b) @ (S, b, c), kept off threaded BLAS when large."""
    if _small(x.shape[1], x.shape[2], y.shape[2]):
        return np.matmul(x, y)
    return np.einsum("sab,sbc->sac", x, y)


class Cancelled(Exception):
    """Raised when the ``cancel`` event was set; the computation stopped cleanly."""


class ConvergenceWarning(UserWarning):
    """EM's best start did not converge, or no other start reached its log-likelihood
    (as scikit-learn's warning of the same name; :meth:`EMResult.convergence_notes`)."""


# ---------------------------------------------------------------------------- data
class ModelData:
    """Data arranged for one model: the design matrix and index bookkeeping.

    Built once per (data, model) pair and reused by every EM run and E-step.

    Hidden nodes are numbered in pre-order (``hidden``, ``hidden_index``) and
    their states laid end to end (``n_hidden_states`` in all,
    ``hidden_slices[i]`` for node ``i``); the leaves' states likewise
    (``n_leaf_states``, ``observed_offsets``, ``leaf_column`` = the leaf of
    each leaf state). ``counts`` holds the count of each of the
    ``n_patterns`` unique patterns, ``n_rows`` their sum ``|D|``.

    Parameters
    ----------
    model:
        The HLC model.
    dataset:
        A :class:`effdim.data.Dataset` (arranged with
        :func:`effdim.data.check_matches_model`; ``mapping`` is passed on) or a
        pandas DataFrame (converted by :func:`effdim.validation.as_dataset`).
    """

    def __init__(self, model: HLCModel, dataset: Any, mapping: dict[str, str] | None = None):
        from .data import check_matches_model
        from .validation import as_dataset

        data = check_matches_model(as_dataset(dataset), model, mapping)
        self.model = model
        self.dataset = data
        self.patterns = data.patterns
        self.counts = np.ascontiguousarray(data.counts, dtype=np.float64)
        self.n_rows = float(data.n_rows)
        self.n_patterns = int(self.patterns.shape[0])
        self._compile(model)

    def _compile(self, model: HLCModel) -> None:
        hidden = model.hidden  # pre-order: the root first, parents before children
        self.hidden = hidden
        self.hidden_index = {h: i for i, h in enumerate(hidden)}
        self.n_hidden = len(hidden)
        self.hidden_cards = [model.card(h) for h in hidden]
        self.hidden_offsets = np.concatenate([[0], np.cumsum(self.hidden_cards)]).astype(int)
        self.n_hidden_states = int(self.hidden_offsets[-1])
        offsets = self.hidden_offsets
        self.hidden_slices = [slice(int(offsets[i]), int(offsets[i + 1])) for i in range(self.n_hidden)]
        self.hidden_parent = [-1 if i == 0 else self.hidden_index[model.parent(h)] for i, h in enumerate(hidden)]
        self.hidden_children = [[self.hidden_index[c] for c in model.children(h) if model.is_hidden(c)] for h in hidden]
        observed = model.observed
        self.observed = observed
        self.observed_cards = [model.card(o) for o in observed]
        self.observed_parent = [self.hidden_index[model.parent(o)] for o in observed]
        self.observed_offsets = np.concatenate([[0], np.cumsum(self.observed_cards)]).astype(int)
        self.n_leaf_states = int(self.observed_offsets[-1])
        self.leaf_column = np.repeat(np.arange(len(observed)), self.observed_cards)
        mask = np.zeros((self.n_hidden_states, self.n_leaf_states), dtype=bool)
        for j, p in enumerate(self.observed_parent):
            mask[self.leaf_block(j)] = True
        self.leaf_mask = mask
        self.leaf_mask_float = mask.astype(np.float64)
        self._design()

    def _design(self) -> None:
        """Block one-hot design: ``Z = B E`` without forming ``Z``.

        ``Z`` (patterns x leaf states, ``Z[p, off_j + v] = 1`` when pattern
        ``p`` has value ``v`` in column ``j``) would be read twice per EM step.
        Instead consecutive columns are grouped into blocks of at most
        :data:`BLOCK_STATES` joint states (a missing cell is one more state of
        its column); ``B`` (patterns x block states) has one 1 per block and
        row, ``E`` (block states x leaf states) spells each joint state out.
        ``Em`` marks which block states leave column ``j`` missing.
        """
        patterns = self.patterns
        ncol = len(self.observed)
        missing = patterns < 0
        self.has_missing = bool(missing.any())
        radix = [self.observed_cards[j] + int(missing[:, j].any()) for j in range(ncol)]
        blocks: list[list[int]] = []
        size = 0
        for j in range(ncol):
            if blocks and size * radix[j] <= BLOCK_STATES:
                blocks[-1].append(j)
                size *= radix[j]
            else:
                blocks.append([j])
                size = radix[j]
        offsets, total = [], 0
        code_cols = []
        e_rows, e_cols, m_rows, m_cols = [], [], [], []
        for block in blocks:
            rad = [radix[j] for j in block]
            n_states = math.prod(rad)
            code = np.zeros(self.n_patterns, dtype=np.int64)
            for j, r in zip(block, rad):
                digit = np.where(patterns[:, j] < 0, self.observed_cards[j], patterns[:, j])
                code = code * r + digit
            code_cols.append(code + total)
            states = np.arange(n_states)
            rest = states.copy()
            for j, r in reversed(list(zip(block, rad))):
                digit = rest % r
                rest //= r
                seen = digit < self.observed_cards[j]
                e_rows.append(total + states[seen])
                e_cols.append(self.observed_offsets[j] + digit[seen])
                m_rows.append(total + states[~seen])
                m_cols.append(np.full(int((~seen).sum()), j))
            offsets.append(total)
            total += n_states
        self.n_block_states = total
        E = np.zeros((total, self.n_leaf_states))
        E[np.concatenate(e_rows), np.concatenate(e_cols)] = 1.0
        self.block_leaf = E
        self.block_leaf_t = np.ascontiguousarray(E.T)
        if self.has_missing:
            Em = np.zeros((total, ncol))
            Em[np.concatenate(m_rows), np.concatenate(m_cols)] = 1.0
            self.block_missing = Em
        else:
            self.block_missing = None
        codes = np.stack(code_cols, axis=1)  # (m, n_blocks)
        self.block_codes = [np.ascontiguousarray(codes[:, b]) for b in range(codes.shape[1])]
        rows = np.repeat(np.arange(self.n_patterns), len(blocks))
        self.pattern_block_sparse = sparse.csr_matrix((np.ones(rows.size), (rows, codes.reshape(-1))),
                                                      shape=(self.n_patterns, total))
        self.pattern_block_t_sparse = self.pattern_block_sparse.T.tocsr()
        self.dense = self.n_patterns * total <= DENSE_LIMIT
        if self.dense:
            B = np.zeros((self.n_patterns, total))
            B[rows, codes.reshape(-1)] = 1.0
            self.pattern_block = B
            self.pattern_block_t = np.ascontiguousarray(B.T)

    def leaf_block(self, j: int) -> tuple[slice, slice]:
        """Where leaf ``j``'s CPT ``P(O_j | parent)`` sits in a (hidden states, leaf states) array."""
        return (self.hidden_slices[self.observed_parent[j]],
                slice(int(self.observed_offsets[j]), int(self.observed_offsets[j + 1])))

    def leaf_messages(self, x: np.ndarray) -> np.ndarray:
        """``x Z^T`` = ``(x E^T) B^T``: (rows, D) -> (rows, m), each pattern's sum of leaf entries."""
        y = _mm2(x, self.block_leaf_t)  # (rows, block states)
        if self.dense and _small(y.shape[0], self.n_block_states, self.n_patterns):
            return y @ self.pattern_block_t
        out = np.take(y, self.block_codes[0], axis=1)
        for code in self.block_codes[1:]:
            out += np.take(y, code, axis=1)
        return out

    def block_counts(self, r: np.ndarray) -> np.ndarray:
        """``r B``: (rows, m) -> (rows, block states), pattern weights summed per block state."""
        if self.dense and _small(r.shape[0], self.n_patterns, self.n_block_states):
            return r @ self.pattern_block
        return np.ascontiguousarray((self.pattern_block_t_sparse @ np.ascontiguousarray(r.T)).T)


# --------------------------------------------------------------------------- state
@dataclass
class _State:
    """Parameters of ``S`` starts at once, in the layout of :class:`ModelData`."""

    pi: np.ndarray  # (S, k_root)
    theta: list  # per hidden index: None for the root, else (S, k_parent, k_i)
    leaf: np.ndarray  # (S, K, D), zero outside the blocks of ``mask``

    @property
    def S(self) -> int:
        return self.pi.shape[0]

    def select(self, idx: np.ndarray) -> "_State":
        return _State(
            self.pi[idx],
            [None if t is None else t[idx] for t in self.theta],
            self.leaf[idx],
        )

    def arrays(self) -> list[np.ndarray]:
        """Every parameter array (first axis: the starts), for arithmetic on whole states."""
        return [self.pi, *(t for t in self.theta if t is not None), self.leaf]

    def like(self, arrays: Sequence[np.ndarray]) -> "_State":
        """A state laid out as this one, from arrays in the order of :meth:`arrays`."""
        it = iter(arrays)
        pi = next(it)
        theta = [None if t is None else next(it) for t in self.theta]
        return _State(pi, theta, next(it))

    def where(self, mask: np.ndarray, other: "_State") -> "_State":
        """Per start: this state where ``mask``, else ``other``."""
        return self.like([np.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)
                          for a, b in zip(self.arrays(), other.arrays())])

    @staticmethod
    def stack(states: Sequence["_State"]) -> "_State":
        return _State(
            np.concatenate([s.pi for s in states]),
            [None if t is None else np.concatenate([s.theta[i] for s in states])
             for i, t in enumerate(states[0].theta)],
            np.concatenate([s.leaf for s in states]),
        )


def _random_state(md: ModelData, S: int, rng: np.random.Generator) -> _State:
    """``S`` starts with every CPT row uniform on its simplex (Dirichlet(1))."""

    def rows(shape):
        x = rng.standard_exponential(shape) + 1e-12
        return x / x.sum(axis=-1, keepdims=True)

    pi = rows((S, md.hidden_cards[0]))
    theta = [None] + [rows((S, md.hidden_cards[md.hidden_parent[i]], md.hidden_cards[i]))
                      for i in range(1, md.n_hidden)]
    leaf = np.zeros((S, md.n_hidden_states, md.n_leaf_states))
    for j, p in enumerate(md.observed_parent):
        leaf[:, *md.leaf_block(j)] = rows((S, md.hidden_cards[p], md.observed_cards[j]))
    return _State(pi, theta, leaf)


def _state_from_params(md: ModelData, params: Any) -> _State:
    """One start from a :class:`effdim.distribution.Parameters` of the same model."""
    model = md.model
    cpts = params.cpts
    if getattr(params, "model", model) != model:
        pm = params.model
        same = sorted(pm.nodes) == sorted(model.nodes) and all(pm.card(n) == model.card(n) for n in pm.nodes)
        if not same:
            raise ValueError(f"initial parameters are for {pm}, not for {model}")
        if pm.root != model.root:
            params = params.rerooted(model.root)
            cpts = params.cpts
    pi = np.asarray(cpts[md.hidden[0]], dtype=float)[None, :].copy()
    theta = [None] + [np.asarray(cpts[h], dtype=float)[None].copy() for h in md.hidden[1:]]
    leaf = np.zeros((1, md.n_hidden_states, md.n_leaf_states))
    for j, o in enumerate(md.observed):
        leaf[0, *md.leaf_block(j)] = np.asarray(cpts[o], dtype=float)
    return _State(pi, theta, leaf)


def _params_from_state(md: ModelData, st: _State, s: int = 0):
    from .distribution import Parameters

    cpts = {md.hidden[0]: st.pi[s].copy()}
    for i in range(1, md.n_hidden):
        cpts[md.hidden[i]] = st.theta[i][s].copy()
    for j, o in enumerate(md.observed):
        cpts[o] = st.leaf[s, *md.leaf_block(j)].copy()
    # renormalise away rounding so that Parameters' row-sum check never trips
    for n, t in cpts.items():
        cpts[n] = t / t.sum(axis=-1, keepdims=True)
    return Parameters(md.model, cpts)


# -------------------------------------------------------------------------- E-step
@dataclass
class _Stats:
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

    def select(self, idx: np.ndarray) -> "_Stats":
        """The statistics of the starts ``idx`` (E-step fields only; no posteriors)."""
        return _Stats(self.ll[idx], self.obj[idx], self.root[idx], [None if p is None else p[idx] for p in self.pair],
                      self.leaf[idx], self.mass[idx])

    def replace(self, idx: np.ndarray, other: "_Stats") -> "_Stats":
        """These statistics with starts ``idx`` taken from ``other`` (computed for those starts only)."""
        out = self.select(np.arange(len(self.ll)))
        out.ll[idx], out.obj[idx], out.root[idx], out.leaf[idx], out.mass[idx] = (
            other.ll, other.obj, other.root, other.leaf, other.mass)
        for p, q in zip(out.pair, other.pair):
            if p is not None:
                p[idx] = q
        return out


def _estep(md: ModelData, st: _State, prior: float, counts: bool = True, keep_post: bool = False) -> _Stats:
    """One exact E-step for ``S`` starts at once.

    Arrays are laid out ``(S, states, m)``: patterns along the contiguous
    axis, so every operation is a long vectorised loop and sums over states
    are additions of whole rows.
    """
    S, m, K, D = st.S, md.n_patterns, md.n_hidden_states, md.n_leaf_states
    logleaf = np.log(np.maximum(st.leaf, TINY))
    logleaf *= md.leaf_mask_float
    leaf = md.leaf_messages(logleaf.reshape(S * K, D)).reshape(S, K, m)
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
        p = _mm(st.theta[i], e)  # (S, k_parent, k_i) @ (S, k_i, m)
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
        return _Stats(ll, obj, llp=llp[:, 0, :] if keep_post else None)
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
            q = _mm(st.theta[c].transpose(0, 2, 1), np.exp(b - mb))  # (S, k_c, m)
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
    R2 = R.reshape(S * K, m)
    bc = md.block_counts(R2)
    leafc = _mm2(bc, md.block_leaf).reshape(S, K, D)
    if md.has_missing:
        # a missing leaf o under H: N'(h, o) gains sum_p N(p) P(h | p) P(o | h)
        gone = _mm2(bc, md.block_missing).reshape(S, K, -1)[:, :, md.leaf_column]
        leafc += st.leaf * gone
    mass = R.sum(axis=2)
    root = mass[:, md.hidden_slices[0]].copy()
    if keep_post:
        return _Stats(ll, obj, root, pair, leafc, mass, post, llp[:, 0, :], up, belief)
    return _Stats(ll, obj, root, pair, leafc, mass)


def _normalised(md: ModelData, weights: _State, old: _State) -> _State:
    """Every CPT row of ``weights`` divided by its sum; a row summing to 0 takes ``old``'s values."""

    def rows(w, fallback):
        rs = w.sum(axis=-1, keepdims=True)
        return np.divide(w, rs, out=fallback.copy(), where=rs > 0)

    pi = rows(weights.pi, old.pi)
    theta = [None] + [rows(weights.theta[i], old.theta[i]) for i in range(1, md.n_hidden)]
    den = np.add.reduceat(weights.leaf, md.observed_offsets[:-1], axis=2)[:, :, md.leaf_column]
    leaf = np.divide(weights.leaf, den, out=old.leaf.copy(), where=(den > 0) & md.leaf_mask)
    return _State(pi, theta, leaf)


def _mstep(md: ModelData, st: _State, stats: _Stats, prior: float, active: np.ndarray | None = None) -> _State:
    """``theta_ijk = (N'_ijk + a) / (N'_ij + a r_i)`` for the ``active`` starts (all by default).

    Rows without expected mass keep their old values (they do not affect the likelihood).
    """
    a = float(prior or 0.0)
    counts = _State(stats.root, [None] + stats.pair[1:], stats.leaf)
    if a:
        counts = counts.like([c + a for c in counts.arrays()])
    new = _normalised(md, counts, st)
    if active is not None and not active.all():
        new = new.where(active, st)
    return new


# ------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Degeneracy:
    """A degenerate feature of a fitted model.

    ``kind`` is ``"empty"`` (hidden state ``states[0]`` of ``node`` has
    near-zero mass; ``value`` = its probability) or ``"duplicate"`` (states
    ``states[0]`` and ``states[1]`` of ``node`` give near-identical
    distributions to every child; ``value`` = the largest total-variation
    distance between their conditional rows). Either way the model uses fewer
    effective hidden states than its cardinality. ``states`` are 0-based codes;
    the sentence numbers states from 1, as the readable tables do
    (:mod:`effdim.profiles`).
    """

    node: str
    kind: str
    states: tuple[int, ...]
    value: float

    def __str__(self) -> str:
        if self.kind == "empty":
            return f"{self.node}: state {self.states[0] + 1} has near-zero mass ({self.value:.2g})"
        return (
            f"{self.node}: states {self.states[0] + 1} and {self.states[1] + 1} are near-duplicates "
            f"(children's rows differ by at most {self.value:.2g} in total variation)"
        )


@dataclass(frozen=True)
class EMResult:
    """The outcome of :func:`fit_em`.

    Attributes
    ----------
    model, params:
        The model and the estimate ``theta`` (a :class:`effdim.distribution.Parameters`).
    loglik:
        ``log p(D | theta)`` (natural log) at ``params``.
    objective:
        What EM maximised: ``loglik`` (ML) or ``loglik + prior * sum log theta`` (MAP).
    n:
        Sample size ``|D|`` (sum of the pattern counts).
    n_iter, converged:
        E-steps made by the returned start (its EM steps; a SQUAREM cycle
        counts the 2 to 4 E-steps it makes); whether its objective settled
        within ``tol`` (else ``max_iter`` stopped it).
    trace:
        The objective at each point the returned start passed through: the
        start, then every EM step, or per SQUAREM cycle its first EM step and
        the point it moved to (a rejected extrapolation is not a point of the
        path). Never decreasing, up to rounding.
    start_logliks, start_iters:
        Every start's log-likelihood at its last E-step and its number of EM
        steps (pruned starts stop early; the returned start is
        ``best_start``).
    n_best:
        How many starts ended within ``agree_tol`` of the best log-likelihood
        (more than one: the optimum was found repeatedly).
    expected_counts:
        ``N'_ijk`` of the final E-step, keyed by node, shaped like the CPTs:
        ``(|root|,)`` for the root, ``(|parent|, |X|)`` for every other node,
        hidden families included.
    degenerate:
        :class:`Degeneracy` findings (empty or duplicate hidden states).
    """

    model: HLCModel
    params: Any
    loglik: float
    objective: float
    n: float
    n_iter: int
    converged: bool
    trace: np.ndarray = field(repr=False)
    start_logliks: np.ndarray = field(repr=False)
    start_iters: np.ndarray = field(repr=False)
    best_start: int
    n_best: int
    expected_counts: dict = field(repr=False)
    degenerate: tuple
    prior: float | None = None
    tol: float = 0.0
    seed: Any = None

    @property
    def restarts(self) -> int:
        """Number of starts."""
        return int(len(self.start_logliks))

    def convergence_notes(self) -> list[str]:
        """Sentences on doubtful convergence (empty when all is well).

        The best start stopped at ``max_iter`` before its log-likelihood
        settled; or, with several starts, it was the only one to reach the
        best log-likelihood (the optimum may not be global: more restarts
        would tell).
        """
        notes = []
        if not self.converged:
            notes.append(f"the best EM start stopped after {self.n_iter} steps without converging; "
                         "raise the step limit (max_iter, --max-iter)")
        if self.restarts > 1 and self.n_best < 2:
            notes.append(f"only 1 of {self.restarts} EM starts reached the best log-likelihood; "
                         "more restarts may find a better one")
        return notes

    def warn(self) -> None:
        """Issue a :class:`ConvergenceWarning` for each of :meth:`convergence_notes`."""
        import warnings

        for note in self.convergence_notes():
            warnings.warn(f"{self.model}: {note}", ConvergenceWarning, stacklevel=3)

    def relabeled(self, node: str, order: Any) -> "EMResult":
        """The same fit with hidden ``node``'s states renumbered: new state ``i`` is old ``order[i]``.

        Parameters (:meth:`effdim.distribution.Parameters.relabeled`),
        expected counts and the state numbers of :attr:`degenerate` follow.
        """
        from dataclasses import replace

        from .distribution import permute_states

        params = self.params.relabeled(node, order)  # checks node and order
        new = {int(old): i for i, old in enumerate(order)}
        degenerate = tuple(
            Degeneracy(d.node, d.kind, tuple(sorted(new[s] for s in d.states)), d.value) if d.node == node else d
            for d in self.degenerate
        )
        counts = permute_states(self.model, self.expected_counts, node, list(order))
        return replace(self, params=params, expected_counts=counts, degenerate=degenerate)

    def restarts_info(self) -> dict:
        """A JSON-ready summary of the restarts."""
        return {
            "restarts": self.restarts,
            "start_logliks": [float(x) for x in self.start_logliks],
            "start_iters": [int(x) for x in self.start_iters],
            "best_start": int(self.best_start),
            "n_best": int(self.n_best),
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
        }


def _expected_counts(md: ModelData, stats: _Stats, s: int) -> dict:
    out = {md.hidden[0]: stats.root[s].copy()}
    for i in range(1, md.n_hidden):
        out[md.hidden[i]] = stats.pair[i][s].copy()
    for j, o in enumerate(md.observed):
        out[o] = stats.leaf[s, *md.leaf_block(j)].copy()
    return out


def _degeneracies(md: ModelData, st: _State, mass: np.ndarray, s: int, mass_tol: float, dup_tol: float) -> tuple:
    found: list[Degeneracy] = []
    kids_obs: list[list[int]] = [[] for _ in range(md.n_hidden)]
    for j, p in enumerate(md.observed_parent):
        kids_obs[p].append(j)
    total = md.n_rows if md.n_rows > 0 else 1.0
    for i, h in enumerate(md.hidden):
        k = md.hidden_cards[i]
        frac = mass[s, md.hidden_slices[i]] / total
        empty = set(np.flatnonzero(frac < mass_tol).tolist())
        for state in sorted(empty):
            found.append(Degeneracy(h, "empty", (state,), float(frac[state])))
        if k < 2:
            continue
        blocks = [st.theta[c][s] for c in md.hidden_children[i]]  # (k, k_c)
        blocks += [st.leaf[s, *md.leaf_block(j)] for j in kids_obs[i]]
        for x in range(k):
            for y in range(x + 1, k):
                if x in empty or y in empty:
                    continue
                tv = max(0.5 * float(np.abs(b[x] - b[y]).sum()) for b in blocks)
                if tv <= dup_tol:
                    found.append(Degeneracy(h, "duplicate", (x, y), tv))
    return tuple(found)


# ------------------------------------------------------------------------ the driver
def fit_em(
    dataset: Any,
    model: HLCModel | str,
    *,
    restarts: int = 5,
    seed: Any = None,
    tol: float | None = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    init: Any = None,
    prune: bool = True,
    prune_steps: int = 50,
    accelerate: bool = True,
    agree_tol: float | None = None,
    mass_tol: float | None = None,
    dup_tol: float = 1e-3,
    mapping: dict[str, str] | None = None,
    cancel: Any = None,
    order_states: bool = True,
) -> EMResult:
    """Fit ``model`` to ``dataset`` by EM with random restarts and pruning.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset`, a pandas DataFrame, or a
        :class:`ModelData` prepared for ``model`` (reused: cheapest when the
        same data and model are fitted repeatedly).
    model:
        An :class:`~effdim.model.HLCModel` or its notation.
    restarts:
        Number of random starts (each CPT row uniform on its simplex).
    seed:
        Seed or :class:`numpy.random.Generator` for the starts.
    tol:
        Convergence tolerance on the rise of the objective per data row in
        one step (total rise below ``tol * |D|``). ``None``: no test, every
        start runs ``max_iter`` steps (for timing).
    max_iter:
        Maximum E-steps (EM steps) of any start, pruning stages included.
    prior:
        ``None`` or 0: maximum likelihood. ``a > 0``: add ``a`` pseudo-counts
        to every CPT cell (MAP under Dirichlet(a + 1); ``a = 1`` is
        Laplace smoothing). The log-likelihood is still reported separately.
    init:
        Optional :class:`~effdim.distribution.Parameters` (or a list of them)
        used as extra starts besides the random ones.
    prune:
        Prune starts (Chickering & Heckerman): run all ``prune_steps`` steps,
        keep the better half, double the steps, until one remains, then run it
        to convergence. ``False``: run every start to convergence.
    prune_steps:
        Steps before the first cut (default 50). Starts run as one batch, so
        on compressed data a longer first stage costs little; with 10 steps
        the survivor missed the best optimum noticeably more often (LC 3 and
        4 on the Stouffer-Toby data, 20 seeds).
    accelerate:
        ``True`` (default): SQUAREM cycles (:mod:`effdim.squarem`), which
        cut the EM steps many-fold where EM crawls along flat directions;
        the objective still never falls. ``False``: plain EM steps.
    agree_tol:
        Starts whose final log-likelihood is within this of the best count as
        reaching it (:attr:`EMResult.n_best`); default ``max(1e-3, 100 * tol * |D|)``.
    mass_tol:
        A hidden state with probability below this is flagged empty; default
        ``min(1e-3, 1 / |D|)`` (less than one observation's worth).
    dup_tol:
        Two hidden states whose children's conditional rows all differ by at
        most this in total variation are flagged duplicates.
    mapping:
        Leaf -> column mapping for :func:`effdim.data.check_matches_model`.
    cancel:
        A ``threading.Event``; when set, :class:`Cancelled` is raised at the
        next EM step.
    order_states:
        Return every hidden node's states by decreasing share (the default;
        see the module docstring); ``False`` keeps the order EM ended in
        (e.g. the labels of ``init``).
    """
    if isinstance(model, str):
        model = HLCModel.parse(model)
    md = dataset if isinstance(dataset, ModelData) and dataset.model == model else ModelData(model, dataset, mapping)
    if md.n_patterns == 0 or not md.n_rows > 0:
        raise ValueError("the data have no rows to learn from")
    if isinstance(restarts, bool) or int(restarts) != restarts or restarts < 0:
        raise ValueError(f"restarts must be a non-negative integer, got {restarts!r}")
    if tol is not None and not (tol >= 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a non-negative number or None, got {tol!r}")
    if isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    prior = float(prior) if prior else 0.0
    if prior < 0 or not math.isfinite(prior):
        raise ValueError(f"prior must be a non-negative pseudo-count, got {prior!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    states = []
    if init is not None:
        inits = [init] if not isinstance(init, (list, tuple)) else list(init)
        states += [_state_from_params(md, p) for p in inits]
    if restarts:
        states.append(_random_state(md, int(restarts), rng))
    if not states:
        raise ValueError("need at least one start: restarts >= 1 or init")
    st = _State.stack(states) if len(states) > 1 else states[0]
    S0 = st.S
    tol_abs = -np.inf if tol is None else tol * md.n_rows
    if agree_tol is None:
        agree_tol = max(1e-3, 100.0 * (tol or 0.0) * md.n_rows)
    if mass_tol is None:
        mass_tol = min(1e-3, 1.0 / md.n_rows) if md.n_rows > 0 else 1e-3

    def check_cancel():
        if cancel is not None and cancel.is_set():
            raise Cancelled("EM cancelled")

    run = _Run(md, st, prior, tol_abs, int(max_iter), accelerate, check_cancel)
    for stage in restart_schedule(S0, prune_steps, prune):
        run.advance(stage.steps)
        if stage.keep < len(run.ids):
            run.keep(best_starts(run.last_obj[run.ids], stage.keep))
    pos = int(np.argmax(run.last_obj[run.ids]))
    best = int(run.ids[pos])
    best_ll = float(run.last_ll[best])
    n_best = int(np.sum(run.last_ll >= best_ll - agree_tol))
    params = _params_from_state(md, run.st, pos)
    counts = _expected_counts(md, run.stats, pos)
    degenerate = _degeneracies(md, run.st, run.stats.mass, pos, mass_tol, dup_tol)
    result = EMResult(
        model=model,
        params=params,
        loglik=best_ll,
        objective=float(run.last_obj[best]),
        n=md.n_rows,
        n_iter=int(run.n_iter[best]),
        converged=bool(run.converged[best]),
        trace=np.asarray(run.traces[best]),
        start_logliks=run.last_ll.copy(),
        start_iters=run.n_iter.copy(),
        best_start=best,
        n_best=n_best,
        expected_counts=counts,
        degenerate=degenerate,
        prior=prior or None,
        tol=tol if tol is not None else 0.0,
        seed=seed if not isinstance(seed, np.random.Generator) else None,
    )
    if order_states:  # every hidden node's states by decreasing share (module docstring)
        for node, order in params.size_order().items():
            result = result.relabeled(node, order)
    return result


class _Run:
    """The EM iterations of a batch of starts, and the bookkeeping :class:`EMResult` reports.

    ``ids`` are the starts still in the batch (pruning removes the others);
    per start (indexed by its original number): EM steps made ``n_iter``,
    the last log-likelihood and objective, ``converged``, ``done`` (converged
    or out of steps), the objective ``traces`` and the SQUAREM ``step_max``.

    With ``accelerate`` every iteration is a SQUAREM cycle
    (:mod:`effdim.squarem`): two EM steps, the extrapolated point, one EM
    step from it (stabilisation), and that point's E-step. A result whose
    objective is below the first EM step's is replaced by the second EM step
    (one more E-step), so the objective never falls. ``n_iter`` counts
    E-steps (2 for a cycle that does not extrapolate, 3 for an accepted
    extrapolation, 4 for a rejected one), the work of as many plain EM steps;
    the budget ``max_iter`` is in the same unit, and a start with fewer than
    4 steps left makes plain EM steps.
    """

    def __init__(self, md: ModelData, st: _State, prior: float, tol_abs: float, max_iter: int,
                 accelerate: bool, check_cancel):
        S = st.S
        self.md, self.prior, self.tol_abs, self.max_iter = md, prior, tol_abs, max_iter
        self.accelerate, self.check_cancel = accelerate, check_cancel
        self.ids = np.arange(S)
        self.n_iter = np.zeros(S, dtype=int)
        self.step_max = np.ones(S)
        self.converged = np.zeros(S, dtype=bool)
        check_cancel()
        self.st = st
        self.stats = _estep(md, st, prior)
        self.last_ll = self.stats.ll.copy()
        self.last_obj = self.stats.obj.copy()
        self.traces: list[list[float]] = [[float(v)] for v in self.stats.obj]
        self.done = self.n_iter >= max_iter

    def keep(self, positions: np.ndarray) -> None:
        """Keep only the starts at ``positions`` of the batch."""
        self.ids = self.ids[positions]
        self.st = self.st.select(positions)
        self.stats = self.stats.select(positions)

    def advance(self, steps: int | None) -> None:
        """Up to ``steps`` more EM steps per start (``None``: until converged or ``max_iter``)."""
        limit = np.full(len(self.ids), self.max_iter)
        if steps is not None:
            limit = np.minimum(limit, self.n_iter[self.ids] + int(steps))
        while True:
            budget = limit - self.n_iter[self.ids]
            active = ~self.done[self.ids] & (budget > 0)
            if not active.any():
                return
            self.check_cancel()
            if self.accelerate:
                self._squarem_cycle(active, budget)
            else:
                st = _mstep(self.md, self.st, self.stats, self.prior, active)
                self._record(active, st, _estep(self.md, st, self.prior), np.ones(len(self.ids), dtype=int))

    def _squarem_cycle(self, active: np.ndarray, budget: np.ndarray) -> None:
        md, prior = self.md, self.prior
        st0, s0 = self.st, self.stats
        st1 = _mstep(md, st0, s0, prior, active)
        s1 = _estep(md, st1, prior)
        one = active & (budget == 1)
        st2 = _mstep(md, st1, s1, prior, active & ~one)
        x, alpha = extrapolate(st0.arrays(), st1.arrays(), st2.arrays(), self.step_max[self.ids])
        extrapolated = active & (budget >= 4) & (alpha > 1)
        # rows of the SQUAREM point sum to 1 only up to rounding, which (a - 1)^2 would amplify cycle after cycle
        st_new = _normalised(md, st0.like(x), st2).where(extrapolated, st2)
        if extrapolated.any():  # stabilise with one EM step from the SQUAREM point, as the SQUAREM R package does
            st_new = _mstep(md, st_new, _estep(md, st_new, prior), prior, extrapolated)
        s_new = _estep(md, st_new, prior)
        rejected = extrapolated & ~(s_new.obj >= s1.obj)
        if rejected.any():
            idx = np.flatnonzero(rejected)
            st_new = st2.where(rejected, st_new)
            s_new = s_new.replace(idx, _estep(md, st2.select(idx), prior))
        eligible = active & (budget >= 4)
        step_max = self.step_max[self.ids]
        tried = np.where(extrapolated, alpha, 1.0)
        self.step_max[self.ids] = np.where(eligible, adapt_step_max(step_max, tried, ~rejected), step_max)
        used = np.where(one, 1, np.where(rejected, 4, np.where(extrapolated, 3, 2)))
        self._record(active, st_new, s_new, used, middle=np.where(one, np.nan, s1.obj))

    def _record(self, active: np.ndarray, st: _State, stats: _Stats, used: np.ndarray,
                middle: np.ndarray | None = None) -> None:
        """Move the batch to ``st`` (inactive starts are unchanged in it) and book the ``used`` steps."""
        self.st, self.stats = st, stats
        act = self.ids[active]
        self.n_iter[act] += used[active]
        new_obj = stats.obj[active]
        rise = new_obj - self.last_obj[act]
        mid = middle[active] if middle is not None else np.full(len(act), np.nan)
        for s, m, v in zip(act, mid, new_obj):
            if not np.isnan(m):
                self.traces[s].append(float(m))
            self.traces[s].append(float(v))
        self.last_ll[act] = stats.ll[active]
        self.last_obj[act] = stats.obj[active]
        conv = rise / used[active] < self.tol_abs  # per E-step, as for plain EM
        self.converged[act[conv]] = True
        self.done[act] = conv | (self.n_iter[act] >= self.max_iter)


# -------------------------------------------------------------- single-parameter tools
def _single(params: Any, data: Any) -> tuple[ModelData, _State]:
    md = data if isinstance(data, ModelData) and data.model == params.model else ModelData(params.model, data)
    return md, _state_from_params(md, params)


def e_step(params: Any, data: Any) -> tuple[float, dict]:
    """``(log p(D | theta), expected counts N'_ijk)`` at ``params`` (one exact E-step)."""
    md, st = _single(params, data)
    stats = _estep(md, st, 0.0)
    return float(stats.ll[0]), _expected_counts(md, stats, 0)


def loglikelihood(params: Any, data: Any) -> float:
    """``log p(D | theta) = sum_p N(p) log P(p)`` (natural log), missing cells marginalised."""
    md, st = _single(params, data)
    return float(_estep(md, st, 0.0, counts=False).ll[0])


def pattern_loglik(params: Any, data: Any) -> tuple[ModelData, np.ndarray]:
    """``log P(p)`` of every unique pattern; returns ``(ModelData, (m,) array)``."""
    md, st = _single(params, data)
    stats = _estep(md, st, 0.0, counts=False, keep_post=True)
    return md, stats.llp[0]


def posterior(params: Any, data: Any, node: str | None = None) -> tuple[ModelData, np.ndarray]:
    """Posterior ``P(node | pattern)`` of a hidden node for every unique pattern.

    Returns ``(ModelData, (m, |node|) array)``; rows follow ``ModelData.patterns``.
    ``node`` defaults to the root.
    """
    md, st = _single(params, data)
    node = md.hidden[0] if node is None else node
    if node not in md.hidden_index:
        raise ValueError(f"{node!r} is not a hidden node of {md.model}; hidden nodes: {', '.join(md.hidden)}")
    stats = _estep(md, st, 0.0, keep_post=True)
    return md, np.ascontiguousarray(stats.post[md.hidden_index[node]][0].T)


def messages(params: Any, data: Any) -> tuple[ModelData, dict, dict]:
    """The per-pattern messages of one exact E-step at ``params``.

    Returns ``(ModelData, below, outside)``: for every hidden node ``H``,
    ``below[H]`` is ``log P(evidence below H | H)`` and ``outside[H]`` is
    ``log P(evidence outside the subtree of H, H)``, each ``(|H|, m)`` with
    patterns ordered as ``ModelData.patterns``; ``below + outside`` is
    ``log P(pattern, H)``. :mod:`effdim.structure` uses them to hold the
    untouched part of a tree fixed while it fits the touched families
    (the restricted likelihood of EAST).
    """
    md, st = _single(params, data)
    stats = _estep(md, st, 0.0, keep_post=True)
    below = {h: stats.up[i][0] for i, h in enumerate(md.hidden)}
    outside = {h: stats.belief[i][0] - stats.up[i][0] for i, h in enumerate(md.hidden)}
    return md, below, outside
