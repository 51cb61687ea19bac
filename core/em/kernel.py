"""The E-step's pass over the patterns, compiled: one pattern at a time, every hidden node, every start.

:func:`effdim.em.estep.estep` hands this kernel the tree as flat integer
arrays (:class:`Layout`) and, per start, each leaf block's table in linear
space (every joint state's column scaled to a largest entry of 1, its
logarithm kept apart); the kernel walks each pattern up the tree and back
down and adds the pattern's share to the log-likelihood and to the expected
counts. Nothing the size of (hidden states x patterns) is made unless the
caller asks for the messages themselves (``keep``): the pass reads each
pattern's block codes once and writes nothing per pattern, so its cost is
arithmetic, not memory traffic.

Numerics (the scaled forward-backward recursion of :mod:`effdim.em.estep`):
each node's message is rescaled to a largest state of 1 after its leaves'
evidence and after each hidden child's message, the scales kept as a running
product whose logarithm is taken only when it nears the bottom of the float64
range, and once per pattern at the end. Where a node's leaf evidence would
underflow in linear space (blocks that each rule out another state, with
probabilities floored at :data:`effdim.em.estep.TINY`), that node is
recomputed from the blocks' logarithms. All arithmetic is float64: the pass
is bound by its arithmetic per pattern, where float32 halves no memory
traffic (docs/performance.md, "EM at the machine's limit").

The patterns are cut into :data:`CHUNKS_PER_THREAD` chunks per thread
(:func:`run_chunks`), which the threads take as they come free: on a machine
shared with other processes a thread held up leaves its chunks to the
others, instead of the pass waiting for a fixed half. The kernel releases the
GIL, so the chunks run side by side, each adding into its own accumulators,
summed afterwards in chunk order (the same sums whatever the scheduling).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields

import numpy as np
from numba import njit

__all__ = [
    "CHUNKS_PER_THREAD",
    "MIN_WORK_PER_THREAD",
    "Layout",
    "Pass",
    "chunks",
    "estep_pass",
    "load",
    "run_chunks",
    "run_pass",
    "threads",
]

#: Probabilities are floored here (as :data:`effdim.em.estep.TINY`).
TINY = 1e-300
#: A running product of scales below this has its logarithm taken and restarts at 1.
SCALE_FLOOR = 1e-250
#: Leaf evidence whose largest state is below this after the linear product is recomputed from logarithms.
UNDERFLOW = 1e-280
#: A message whose largest state falls below this is rescaled to a largest state of 1 (before another factor).
RESCALE = 1e-100
#: Patterns per tile of :func:`estep_pass`.
TILE = 256
#: A chunk of less work than this (patterns x starts x (hidden states + blocks)) is not worth a thread of its own.
MIN_WORK_PER_THREAD = 1 << 18
#: Chunks of a pass per thread that runs it (:func:`chunks`), taken by the threads as they come free.
CHUNKS_PER_THREAD = 8
#: Entries of the accumulators of all the chunks of one pass beyond one chunk per thread, at most.
SPARE_ACCUMULATORS = 1 << 22


@dataclass(frozen=True)
class Layout:
    """A model's tree and design as the kernel reads them (built once per :class:`~effdim.em.design.ModelData`).

    Hidden nodes in pre-order; ``parent[i]`` (-1 for the root), ``card[i]``,
    ``offset[i]`` (their states laid end to end); ``kid_ptr``/``kids`` the
    hidden children of each node (CSR); ``msg_offset[i]`` where node ``i``'s
    message to its parent (``card[parent[i]]`` entries) sits; ``theta_offset[i]``
    where its CPT (parent states x its states, row-major) sits in the flat
    parameter vector. Blocks: ``block_ptr``/``blocks`` each node's blocks (CSR),
    ``table_offset[b]`` where block ``b``'s table (joint states x the node's
    states, row-major) starts and ``joint_offset[b]`` where its joint states
    start; ``codes`` (blocks x patterns) each pattern's joint state in each block.
    """

    parent: np.ndarray
    card: np.ndarray
    offset: np.ndarray
    kid_ptr: np.ndarray
    kids: np.ndarray
    msg_offset: np.ndarray
    theta_offset: np.ndarray
    block_ptr: np.ndarray
    blocks: np.ndarray
    table_offset: np.ndarray
    joint_offset: np.ndarray
    codes: np.ndarray

    def arrays(self) -> tuple:
        """The arrays in field order, as :func:`estep_pass` takes them."""
        return tuple(getattr(self, f.name) for f in fields(self))

    @property
    def n_table(self) -> int:
        return int(self.table_offset[-1])

    @property
    def n_theta(self) -> int:
        return int(self.theta_offset[-1])

    @property
    def n_messages(self) -> int:
        return int(self.msg_offset[-1])


@njit(nogil=True, cache=True, error_model="numpy")
def _largest(u, o, k, n, mx):
    """``mx[q]``: the largest of ``u[o:o + k, q]`` for the first ``n`` patterns of the tile."""
    for q in range(n):
        mx[q] = u[o, q]
    for h in range(1, k):
        for q in range(n):
            mx[q] = max(mx[q], u[o + h, q])


@njit(nogil=True, cache=True, error_model="numpy")
def _rescale(u, o, k, n, mx, mant, lg, own, keep):
    """Where ``mx[q]`` (the largest of ``u[o:o + k, q]``) is below :data:`RESCALE`, divide the pattern's
    entries by it and fold it into the pattern's running product of scales ``mant[q]`` (``lg[q]``: the
    logarithm already taken out of it); with ``keep`` add its logarithm to ``own[q]``. ``mx`` becomes 1 there."""
    for q in range(n):
        if mx[q] < RESCALE:
            top = max(mx[q], TINY)
            inv = 1.0 / top
            for h in range(k):
                u[o + h, q] *= inv
            prod = mant[q] * top
            if prod < SCALE_FLOOR:
                lg[q] += math.log(mant[q]) + math.log(top)
                prod = 1.0
            mant[q] = prod
            if keep:
                own[q] += math.log(top)
            mx[q] = 1.0


@njit(nogil=True, cache=True, error_model="numpy")
def _leaf_evidence(s, i, p0, n, lay, model, evidence, u, mx, lg, own):
    """``u[o:o + k, q]`` (``o``, ``k`` node ``i``'s offset and states): node ``i``'s own evidence for the
    tile's patterns, the product of its blocks' linear tables (where that underflows, recomputed from the
    blocks' logarithms, the difference of scales added to ``lg[q]`` and ``own[q]``) and, where
    ``has_ev[i]``, of its fixed evidence ``ev[o:o + k, p]``. Leaves ``mx[q]``, the largest entry."""
    card, offset, block_ptr, blocks, table_offset, joint_offset, codes = (
        lay[1], lay[2], lay[7], lay[8], lay[9], lay[10], lay[11],
    )  # fmt: skip
    lin, logs, log_max = model[2], model[3], model[4]
    has_ev, ev = evidence
    o, k = offset[i], card[i]
    first, last = block_ptr[i], block_ptr[i + 1]
    if first == last:
        for h in range(k):
            for q in range(n):
                u[o + h, q] = ev[o + h, p0 + q] if has_ev[i] else 1.0
        _largest(u, o, k, n, mx)
        return
    row = lin[s]
    for t in range(first, last):
        b = blocks[t]
        off = table_offset[b]
        code = codes[b, p0 : p0 + n]
        if t == first:
            for q in range(n):
                base = off + code[q] * k
                for h in range(k):
                    u[o + h, q] = row[base + h]
        else:
            for q in range(n):
                base = off + code[q] * k
                for h in range(k):
                    u[o + h, q] *= row[base + h]
    _largest(u, o, k, n, mx)
    for q in range(n):
        if mx[q] >= UNDERFLOW:
            continue
        top = -np.inf
        dropped = 0.0
        for t in range(first, last):
            b = blocks[t]
            dropped += log_max[s, joint_offset[b] + codes[b, p0 + q]]
        for h in range(k):
            acc = 0.0
            for t in range(first, last):
                b = blocks[t]
                acc += logs[s, table_offset[b] + codes[b, p0 + q] * k + h]
            u[o + h, q] = acc
            top = max(top, acc)
        for h in range(k):
            u[o + h, q] = math.exp(u[o + h, q] - top)
        lg[q] += top - dropped
        own[q] += top - dropped
        mx[q] = 1.0
    if has_ev[i]:
        for h in range(k):
            for q in range(n):
                u[o + h, q] *= ev[o + h, p0 + q]
        _largest(u, o, k, n, mx)


@njit(nogil=True, cache=True, error_model="numpy")
def estep_pass(lo, hi, lay, weights, model, evidence, sums, rows, counts, keep):
    """The E-step over patterns ``lo:hi`` for every start ``s`` (the first axis of every parameter array),
    a tile of :data:`TILE` patterns at a time (the tile's messages stay in the processor's cache, and every
    inner loop runs along the tile's patterns).

    ``lay``: the tree's arrays in :class:`Layout`'s field order (:meth:`Layout.arrays`); ``model``:
    ``(pi, theta, table_lin, table_log, log_max)``, the root's distribution, the CPTs and the blocks'
    tables; ``evidence``: ``(has_ev, ev)``, a node ``i`` with ``has_ev[i]`` also carrying fixed evidence
    ``ev[offset[i] + h, p]`` (linear, the same for every start: the rest of a tree held fixed,
    :mod:`effdim.structure.local_em`); ``sums``: ``(ll, root_acc, pair_acc, block_acc)``, what is added to;
    ``rows``: ``(llp, root_rows, up, message, log_below)``, what is written per pattern.

    Adds ``weights[p] log P(p)`` to ``ll[s]``, less the blocks' column maxima ``log_max`` of the pattern's
    joint states, which the caller adds for all patterns at once (``llp`` includes them); with ``counts``,
    each pattern's expected counts ``w P(state | p)`` to ``root_acc``, ``block_acc`` (per block joint state
    and node state, laid out as the tables) and ``pair_acc`` (``sum_p ratio(parent state) * up(child
    state)``, which times the CPT is the family's expected count). The root's distribution ``pi`` is
    ``(S, k_root, 1)``, or ``(S, k_root, m)`` per pattern in a latent class regression, whose expected root
    counts per pattern go to ``root_rows[s, :, p]``. With ``keep`` it writes per pattern
    ``llp[s, p]``, the scaled upward messages ``up[s, :, p]``, the messages to the parents ``message[s, :,
    p]`` and the log of each node's scale ``log_below[s, i, p]`` (``log P(evidence below i | i) = log(up) +
    log_below``).
    """
    card, offset, msg_offset = lay[1], lay[2], lay[5]
    pi = model[0]
    root_rows = rows[1]
    H = card.size
    K = offset[H]
    kmax = 1
    for i in range(H):
        kmax = max(kmax, card[i])
    u = np.empty((K, TILE))
    msg = np.empty((max(msg_offset[H], 1), TILE))
    R = np.empty((K, TILE))
    ratio = np.empty((kmax, TILE))
    mx = np.empty(TILE)
    mant = np.empty(TILE)
    lg = np.empty(TILE)
    own = np.zeros((H, TILE))
    tot = np.empty(TILE)
    per_pattern = pi.shape[2] > 1
    for s in range(pi.shape[0]):
        for p0 in range(lo, hi, TILE):
            n = min(TILE, hi - p0)
            mant[:n] = 1.0
            lg[:n] = 0.0  # each pattern's log scale, less its blocks' column maxima
            for i in range(H - 1, -1, -1):  # children before parents
                _upward(s, i, p0, n, lay, model, evidence, rows, keep, u, msg, mx, mant, lg, own)
            sums[0][s] += _root(s, p0, n, lay, weights, model, rows, keep, u, R, tot, mant, lg)
            if counts:
                _downward(s, p0, n, lay, weights, model[1], sums, u, msg, R, ratio, tot)
                if per_pattern:  # a regression's root counts per pattern
                    for h in range(card[0]):
                        for q in range(n):
                            root_rows[s, h, p0 + q] = R[h, q]


@njit(nogil=True, cache=True, error_model="numpy")
def _upward(s, i, p0, n, lay, model, evidence, rows, keep, u, msg, mx, mant, lg, own):
    """Node ``i``'s scaled message for the tile's patterns in ``u[offset[i]:]`` (its own evidence times its
    hidden children's messages), and ``theta_i u_i``, its message to its parent, in ``msg``; ``own[i]``
    its log scales. With ``keep``, written per pattern to ``rows`` (:func:`estep_pass`)."""
    parent, card, offset, kid_ptr, kids, msg_offset, theta_offset, block_ptr, blocks = lay[:9]
    joint_offset, codes = lay[10], lay[11]
    theta, log_max = model[1], model[4]
    up, message, log_below = rows[2], rows[3], rows[4]
    o = offset[i]
    k = card[i]
    mine = own[i]  # this node's log scales (kept only for ``keep``)
    mine[:n] = 0.0
    _leaf_evidence(s, i, p0, n, lay, model, evidence, u, mx, lg, mine)
    if keep:
        for t in range(block_ptr[i], block_ptr[i + 1]):
            b = blocks[t]
            for q in range(n):
                mine[q] += log_max[s, joint_offset[b] + codes[b, p0 + q]]
    for t in range(kid_ptr[i], kid_ptr[i + 1]):
        c = kids[t]
        _rescale(u, o, k, n, mx, mant, lg, mine, keep)
        mo = msg_offset[c]
        for h in range(k):
            for q in range(n):
                u[o + h, q] *= msg[mo + h, q]
        _largest(u, o, k, n, mx)
        if keep:
            for q in range(n):
                mine[q] += own[c, q]
    _rescale(u, o, k, n, mx, mant, lg, mine, keep)
    if keep:
        for q in range(n):
            log_below[s, i, p0 + q] = mine[q]
            for h in range(k):
                up[s, o + h, p0 + q] = u[o + h, q]
    if i > 0:  # the message to the parent, theta_i u_i, in the same scale
        kp = card[parent[i]]
        tb = theta_offset[i]
        mo = msg_offset[i]
        for a in range(kp):
            for q in range(n):
                msg[mo + a, q] = 0.0
            for h in range(k):
                th = theta[s, tb + a * k + h]
                for q in range(n):
                    msg[mo + a, q] += th * u[o + h, q]
            for q in range(n):
                msg[mo + a, q] = max(msg[mo + a, q], TINY)
                if keep:
                    message[s, mo + a, p0 + q] = msg[mo + a, q]


@njit(nogil=True, cache=True, error_model="numpy")
def _root(s, p0, n, lay, weights, model, rows, keep, u, R, tot, mant, lg):
    """The tile's ``sum_q weights[q] log P(q)``, less the blocks' column maxima: ``R[h, q]`` becomes
    ``pi[h] u[h, q]`` at the root and ``tot[q]`` its sum; with ``keep`` each pattern's ``llp`` (with the
    maxima) is written to ``rows[0]``."""
    card, block_ptr, blocks, joint_offset, codes = lay[1], lay[7], lay[8], lay[10], lay[11]
    pi, log_max = model[0], model[4]
    llp = rows[0]
    per_pattern = pi.shape[2] > 1
    for q in range(n):
        tot[q] = 0.0
    for h in range(card[0]):
        if per_pattern:
            for q in range(n):
                R[h, q] = pi[s, h, p0 + q] * u[h, q]
                tot[q] += R[h, q]
        else:
            ph = pi[s, h, 0]
            for q in range(n):
                R[h, q] = ph * u[h, q]
                tot[q] += R[h, q]
    total = 0.0
    for q in range(n):
        t_q = max(tot[q], TINY)
        tot[q] = t_q
        scaled = t_q * mant[q]
        logp = (math.log(scaled) if scaled > TINY else math.log(t_q) + math.log(mant[q])) + lg[q]
        total += weights[p0 + q] * logp
        if keep:
            llp[s, p0 + q] = logp + _leaf_maxima(s, p0 + q, block_ptr, blocks, codes, joint_offset, log_max)
    return total


@njit(nogil=True, cache=True, error_model="numpy")
def _downward(s, p0, n, lay, weights, theta, sums, u, msg, R, ratio, tot):
    """The tile's expected counts, down from the root, added to ``sums`` (:func:`estep_pass`): ``R`` holds
    ``w P(state | p)`` (at the root, ``pi u`` until divided by the total ``tot``)."""
    card, offset, kid_ptr, kids, msg_offset, theta_offset, block_ptr, blocks, table_offset = lay[1:10]
    codes = lay[11]
    root_acc, pair_acc, block_acc = sums[1], sums[2], sums[3]
    H = card.size
    k0 = card[0]
    for q in range(n):
        tot[q] = weights[p0 + q] / tot[q]
    for h in range(k0):
        acc = 0.0
        for q in range(n):
            R[h, q] *= tot[q]
            acc += R[h, q]
        root_acc[s, h] += acc
    into = block_acc[s]
    for i in range(H):  # parents before children
        o = offset[i]
        k = card[i]
        for t in range(block_ptr[i], block_ptr[i + 1]):
            b = blocks[t]
            off = table_offset[b]
            code = codes[b, p0 : p0 + n]
            for q in range(n):
                base = off + code[q] * k
                for h in range(k):
                    into[base + h] += R[o + h, q]
        for t in range(kid_ptr[i], kid_ptr[i + 1]):
            c = kids[t]
            kc = card[c]
            oc = offset[c]
            tb = theta_offset[c]
            mo = msg_offset[c]
            for a in range(k):
                for q in range(n):
                    ratio[a, q] = R[o + a, q] / msg[mo + a, q]
            for a in range(k):
                for h in range(kc):
                    acc = 0.0
                    for q in range(n):
                        acc += ratio[a, q] * u[oc + h, q]
                    pair_acc[s, tb + a * kc + h] += acc
            for h in range(kc):
                for q in range(n):
                    R[oc + h, q] = 0.0
                for a in range(k):
                    th = theta[s, tb + a * kc + h]
                    for q in range(n):
                        R[oc + h, q] += th * ratio[a, q]
                for q in range(n):
                    R[oc + h, q] *= u[oc + h, q]


@njit(nogil=True, cache=True, error_model="numpy")
def _leaf_maxima(s, p, block_ptr, blocks, codes, joint_offset, log_max):
    """The sum of the column maxima of pattern ``p``'s joint states over every block (start ``s``)."""
    total = 0.0
    for t in range(block_ptr[-1]):
        b = blocks[t]
        total += log_max[s, joint_offset[b] + codes[b, p]]
    return total


@dataclass
class Pass:
    """What :func:`run_pass` returns, summed over the chunks: ``ll`` (S,) without the blocks' column maxima,
    ``root`` (S, k_root) and ``pair`` (S, CPT entries) and ``per_state`` (S, table entries) the expected
    counts as :func:`estep_pass` accumulates them, and the per-pattern arrays it writes (``root_rows``;
    with ``keep``, ``llp``, ``up``, ``message``, ``log_below``; ``None`` when not asked for)."""

    ll: np.ndarray
    root: np.ndarray
    pair: np.ndarray
    per_state: np.ndarray
    root_rows: np.ndarray | None = None
    llp: np.ndarray | None = None
    up: np.ndarray | None = None
    message: np.ndarray | None = None
    log_below: np.ndarray | None = None


def run_pass(
    lay: Layout,
    weights: np.ndarray,
    pi: np.ndarray,
    theta: np.ndarray,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    counts: bool = True,
    keep: bool = False,
    evidence: tuple[np.ndarray, np.ndarray] | None = None,
) -> Pass:
    """:func:`estep_pass` over all patterns, cut into chunks side by side on the machine's cores
    (:func:`chunks`, :func:`run_chunks`), each with accumulators of its own, summed in chunk order.

    ``pi`` (S, k_root, 1 or m), ``theta`` (S, CPT entries), ``tables`` the blocks' linear and log tables
    and their column maxima, ``evidence`` a node's fixed evidence ``(has_ev, ev)``; a per-pattern ``pi``
    (a regression) also returns the root's counts per pattern (``root_rows``)."""
    S, m, K, H = pi.shape[0], weights.size, int(lay.offset[-1]), lay.parent.size
    lin, logs, log_max = tables
    has_ev, ev = evidence if evidence is not None else (np.zeros(H, dtype=np.int64), np.empty((1, 1)))
    n = chunks(m, m * S * (K + lay.codes.shape[0]), S * (1 + pi.shape[1] + lay.n_theta + lay.n_table))
    ll, root, pair, per_state = (
        np.zeros((n, S)),
        np.zeros((n, S, pi.shape[1])),
        np.zeros((n, S, lay.n_theta)),
        np.zeros((n, S, lay.n_table)),
    )
    rows = pi.shape[2] > 1 and counts
    root_rows = np.zeros((S, pi.shape[1], m)) if rows else np.empty((1, 1, 1))
    if keep:
        llp, up, message, log_below = (
            np.empty((S, m)),
            np.empty((S, K, m)),
            np.empty((S, lay.n_messages, m)),
            np.empty((S, H, m)),
        )
    else:
        llp, up, message, log_below = np.empty((1, 1)), np.empty((1, 1, 1)), np.empty((1, 1, 1)), np.empty((1, 1, 1))

    arrays, model, written = lay.arrays(), (pi, theta, lin, logs, log_max), (llp, root_rows, up, message, log_below)

    def chunk(j: int, lo: int, hi: int) -> None:
        estep_pass(
            lo, hi, arrays, weights, model, (has_ev, ev), (ll[j], root[j], pair[j], per_state[j]), written, counts, keep
        )

    run_chunks(m, n, chunk)
    out = Pass(ll.sum(axis=0), root.sum(axis=0), pair.sum(axis=0), per_state.sum(axis=0))
    if rows:
        out.root_rows = root_rows
    if keep:
        out.llp, out.up, out.message, out.log_below = llp, up, message, log_below
    return out


def threads() -> int:
    """The threads an E-step may use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool(n: int) -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < n:
            _POOL = ThreadPoolExecutor(max_workers=n, thread_name_prefix="effdim-estep")
        return _POOL


def _forget_pool() -> None:
    """A forked child has none of its parent's threads: it makes its own pool when it needs one."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def chunks(n_items: int, work: int, accumulators: int = 0) -> int:
    """How many chunks to cut ``n_items`` into: one when a single thread runs the pass, else
    :data:`CHUNKS_PER_THREAD` per thread (:func:`threads`), as many threads as each get at least
    :data:`MIN_WORK_PER_THREAD` units of ``work`` (the items times what each costs), and fewer when the
    chunks' own accumulators (``accumulators`` entries each) would pass :data:`SPARE_ACCUMULATORS` beyond
    one chunk per thread."""
    used = max(1, min(threads(), work // MIN_WORK_PER_THREAD, n_items))
    if used == 1:
        return 1
    spare = SPARE_ACCUMULATORS // max(1, accumulators)
    return min(n_items, used * CHUNKS_PER_THREAD, used + spare)


def run_chunks(n_items: int, n_chunks: int, call: Callable[[int, int, int], None]) -> None:
    """Call ``call(chunk, lo, hi)`` over ``0:n_items`` cut into ``n_chunks`` chunks, side by side on a pool
    of at most :func:`threads` threads, each taking the next chunk when it comes free (in this thread when
    there is one chunk)."""
    if n_chunks == 1:
        call(0, 0, n_items)
        return
    edges = np.linspace(0, n_items, n_chunks + 1).astype(int)
    pool = _pool(min(n_chunks, threads()))
    futures = [pool.submit(call, j, int(edges[j]), int(edges[j + 1])) for j in range(n_chunks)]
    for future in futures:
        future.result()


def load() -> None:
    """Compile :func:`estep_pass` (or load it from numba's cache beside this file) now, on a one-pattern
    model, rather than inside the first E-step: a process that times its work or answers users (a
    dashboard worker, a test with a time bound) calls this first."""
    ints = [np.array(v, dtype=np.int64) for v in ([-1], [2], [0, 2], [0, 0], [], [0, 0], [0, 0], [0, 1], [0])]
    parent, card, offset, kid_ptr, kids, msg_offset, theta_offset, block_ptr, blocks = ints
    table_offset, joint_offset = np.array([0, 4], dtype=np.int64), np.array([0, 2], dtype=np.int64)
    codes = np.zeros((1, 1), dtype=np.int64)
    two, weights = np.full((1, 2, 1), 0.5), np.ones(1)
    weights.flags.writeable = False  # as :class:`~effdim.em.design.ModelData` holds its counts
    lay = (parent, card, offset, kid_ptr, kids, msg_offset, theta_offset, block_ptr, blocks, table_offset)
    lay += (joint_offset, codes)
    model = (two, np.zeros((1, 0)), np.full((1, 4), 0.5), np.full((1, 4), -0.7), np.zeros((1, 2)))
    evidence = (np.zeros(1, dtype=np.int64), np.empty((1, 1)))
    sums = (np.zeros(1), np.zeros((1, 2)), np.zeros((1, 0)), np.zeros((1, 4)))
    for keep in (False, True):
        rows = (np.zeros((1, 1)), np.zeros((1, 1, 1)), np.zeros((1, 2, 1)), np.zeros((1, 0, 1)), np.zeros((1, 1, 1)))
        estep_pass(0, 1, lay, weights, model, evidence, sums, rows, True, keep)
