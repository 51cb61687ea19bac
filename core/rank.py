"""Effective dimension as the rank of a Jacobian, exact (mod p) and in floating point.

Geiger, Heckerman & Meek (1996) showed that the effective dimension ``de`` of a
model with hidden variables is the rank of the Jacobian ``J_O(theta)`` of the
map from the free parameters ``theta`` to the distribution ``P(O)`` over the
observed variables, at a generic parameter point (Kocka & Zhang 2002,
Section 2.4). This module computes that rank for any HLC/LC model.

Parametrization (docs/theory.md, section 1)
-------------------------------------------
The model is a Bayesian network directed away from ``model.root``. The root
has ``|R| - 1`` free entries ``P(R = r)``, ``r < |R| - 1``; every other node
``X`` with parent ``U`` has, for each parent state ``u``, ``|X| - 1`` free
entries ``P(X = x | U = u)``, ``x < |X| - 1``. The last entry of every row is
one minus the others. ``ds`` (paper, Section 2.1) counts these entries.

Column order of every Jacobian here: nodes in ``model.nodes`` (pre-order from
the root), then the parent state ``u``, then the child state ``x``; see
:func:`parameter_labels`. Dense row order: configurations of
``model.observed`` in C order (the last observed variable varies fastest).

One message-passing code path
-----------------------------
Every row of the Jacobian is the gradient of ``f_b = sum_o w_b(o) P(o)`` for a
product-form weight ``w_b(o) = prod_i w_{b,i}(o_i)`` ("soft evidence").
One-hot weights give the dense rows ``dP(o)/dtheta``; random weights give the
*sketch* (docs/theory.md, section 4): ``k = ds + 8`` random combinations of the rows.
Rank-one (product) tensors span the whole space of functions of ``O``, so
generic product weights keep the rank, and the cost is polynomial in ``ds``
instead of exponential in the number of observed variables.

``f_b`` is computed by one upward pass of lambda messages and one downward
pass of pi messages over the rooted tree, vectorized over the batch of rows.
For node ``X`` with parent ``U`` (the root gets a dummy one-state parent),
``lambda_X(x)`` is the weighted evidence below ``X`` given ``X = x`` and
``pi_X(u)`` the weighted evidence outside the subtree of ``X`` jointly with
``U = u``, so ``f = sum_u pi_X(u) sum_x theta(x|u) lambda_X(x)`` and::

    df / dtheta(x|u) = pi_X(u) * (lambda_X(x) - lambda_X(last)).

Sibling products use prefix/suffix products, never division (values can be
0 mod p). The same code runs in two arithmetics: float64 and the integers
mod a prime ``p < 2**31`` (products of two residues fit in int64; every
product is reduced at once).

Exact rank (docs/theory.md, section 3)
--------------------------------------
Entries of ``J`` are polynomials with integer coefficients in the random
entries. At a point of ``GF(p)``, a nonzero ``r x r`` minor mod ``p`` is a
nonzero integer polynomial, so the rank mod ``p`` at *any* point is a
certified lower bound on the generic rank over the rationals, i.e. on ``de``.
Meeting an upper bound (``ds``, ``dc`` or the caller's ``db``) proves ``de``.
Otherwise Schwartz-Zippel bounds the chance that a uniformly random point of
``GF(p)`` drops the rank: see :func:`failure_probability`.

The rank mod ``p`` itself is :func:`effdim.modp.rank_mod_p`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .bounds import complete_dimension, standard_dimension
from .errors import InvalidArgument
from .limits import DEFAULT_MAX_BYTES, SizeLimitError, format_bytes, short_text
from .model import HLCModel
from .modp import P, check_prime, rank_mod_p

__all__ = [
    "jacobian_at",
    "P",
    "SKETCH_EXTRA_ROWS",
    "DENSE_ROWS_LIMIT",
    "FLOAT_MAX_COLUMNS",
    "SCREEN_PRIME",
    "FloatRank",
    "RankResult",
    "RankCost",
    "rank_cost",
    "parameter_labels",
    "jacobian",
    "modular_rank",
    "float_rank",
    "failure_probability",
    "effective_dimension",
]

#: The sketch takes ``ds + SKETCH_EXTRA_ROWS`` product-form rows.
SKETCH_EXTRA_ROWS = 8
#: ``rows="auto"`` uses the dense Jacobian when ``prod|O_i| <= max(ds + 8, DENSE_ROWS_LIMIT)``.
DENSE_ROWS_LIMIT = 256
#: ``effective_dimension`` skips the float second opinion above this many columns.
FLOAT_MAX_COLUMNS = 1500
#: Largest prime below 2**20: one float64 BLAS product per block is exact (inner chunks of 8192).
SCREEN_PRIME = 1048573
#: ``effective_dimension`` screens with ``SCREEN_PRIME`` when the Jacobian is at least this size.
SCREEN_MIN_SIZE = 512

Rows = Literal["auto", "dense", "sketch"]


# ---------------------------------------------------------- the compiled tree
@dataclass(frozen=True)
class _Tree:
    """What the message passing needs of a model, computed once per public call.

    As :class:`effdim.em.ModelData` does for EM: the public functions compile
    their model once and hand this down, instead of asking the model for
    ``ds``, cardinalities and children at every step of every trial.
    """

    nodes: tuple[str, ...]  # pre-order from the root: the column order
    root: str
    card: dict[str, int]
    parent_card: dict[str, int]  # 1 for the root (a dummy one-state parent)
    children: dict[str, tuple[str, ...]]
    observed: tuple[str, ...]  # the leaves, in ``model.observed`` order
    ds: int
    dc: int
    model: HLCModel

    @property
    def n_dense(self) -> int:
        """``prod |O_i|``: the number of dense rows."""
        return self.dc + 1


def _compile(model: HLCModel) -> _Tree:
    nodes = tuple(model.nodes)
    card = {x: model.card(x) for x in nodes}
    parent = {x: model.parent(x) for x in nodes}
    return _Tree(
        nodes=nodes,
        root=model.root,
        card=card,
        parent_card={x: 1 if parent[x] is None else card[parent[x]] for x in nodes},
        children={x: tuple(model.children(x)) for x in nodes},
        observed=tuple(model.observed),
        ds=standard_dimension(model),
        dc=complete_dimension(model),
        model=model,
    )


def parameter_labels(model: HLCModel) -> list[tuple[str, int | None, int]]:
    """``(node, parent_state, state)`` of every Jacobian column, in column order.

    Pre-order nodes, then parent state, then own state ``0 .. |X| - 2``; the
    root's ``parent_state`` is ``None``.

    Examples
    --------
    >>> parameter_labels(HLCModel.parse("2:2,3"))
    [('H1', None, 0), ('O1', 0, 0), ('O1', 1, 0), ('O2', 0, 0), ('O2', 0, 1), ('O2', 1, 0), ('O2', 1, 1)]
    """
    tree = _compile(model)
    labels = []
    for x in tree.nodes:
        parent_states = [None] if x == tree.root else range(tree.parent_card[x])
        labels.extend((x, u, s) for u in parent_states for s in range(tree.card[x] - 1))
    return labels


def _row_count(tree: _Tree, mode: str) -> int:
    return tree.n_dense if mode == "dense" else tree.ds + SKETCH_EXTRA_ROWS


def _resolve_rows(tree: _Tree, rows: str) -> str:
    """Pick dense or sketched rows for ``rows="auto"``.

    Dense rows give a ``prod|O_i| x ds`` Jacobian, the sketch ``(ds + 8) x ds``;
    the dense one has the smaller Schwartz-Zippel degree (no random weights)
    but costs more once ``prod|O_i|`` exceeds ``ds + 8``, and below a few
    hundred rows both cost next to nothing (``benchmarks/engine/bench_rank.py``,
    section 5). Hence dense when ``prod|O_i| <= max(ds + 8, DENSE_ROWS_LIMIT)``
    with ``DENSE_ROWS_LIMIT = 256``.
    """
    if rows not in ("auto", "dense", "sketch"):
        raise InvalidArgument(f"rows must be 'auto', 'dense' or 'sketch', got {rows!r}")
    if rows != "auto":
        return rows
    return "dense" if tree.n_dense <= max(tree.ds + SKETCH_EXTRA_ROWS, DENSE_ROWS_LIMIT) else "sketch"


@dataclass(frozen=True)
class RankCost:
    """What one exact rank of ``J_O(theta)`` costs, estimated before anything is allocated.

    ``rows x columns`` is the Jacobian; ``bytes`` the peak memory of building
    it and eliminating it (the Jacobian and its working copies, about six of
    them, plus the messages of :func:`_jacobian_at`); ``work`` the
    multiply-adds of the elimination, ``rows * columns * min(rows, columns)``.
    """

    mode: str
    rows: int
    columns: int
    bytes: int
    work: int


def rank_cost(model: HLCModel, rows: Rows = "auto") -> RankCost:
    """Estimate the memory and work of one modular rank of ``model``'s Jacobian.

    Closed form, no allocation: safe for any model (see :mod:`effdim.limits`).
    The memory factor was measured with ``tracemalloc`` on LC and HLC models
    (peak / Jacobian bytes = 4.3 to 5.7 for sketched rows).

    Examples
    --------
    >>> cost = rank_cost(HLCModel.parse("3:1000000000,2"))
    >>> cost.rows, cost.columns, cost.bytes > 2**60
    (2000000000, 3000000002, True)
    """
    return _cost(_compile(model), rows)


def _cost(tree: _Tree, rows: Rows) -> RankCost:
    mode = _resolve_rows(tree, rows)
    n_rows = _row_count(tree, mode)
    states = sum(tree.card.values())
    tables = sum(tree.parent_card[x] * tree.card[x] for x in tree.nodes)
    entries = n_rows * (6 * max(tree.ds, 1) + 6 * states + 2 * len(tree.observed)) + tables
    return RankCost(mode, n_rows, tree.ds, 8 * entries, n_rows * tree.ds * min(n_rows, tree.ds))


def _plan(tree: _Tree, rows: Rows, max_bytes: int | None) -> str:
    """The row mode for ``rows``, after checking the memory limit (raises :class:`SizeLimitError`)."""
    cost = _cost(tree, rows)
    limit = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    if cost.bytes > limit:
        model = _model_text(tree)
        raise SizeLimitError(
            f"the exact effective dimension of {model} needs a {cost.rows:,} x {cost.columns:,} matrix, about "
            f"{format_bytes(cost.bytes)} of memory, more than the limit of {format_bytes(limit)}; its ds, dc and "
            "bounds do not need it",
            needed=cost.bytes,
            limit=limit,
        )
    return cost.mode


def _model_text(tree: _Tree) -> str:
    """The model of ``tree`` in notation, shortened for a message."""
    from .notation import format_model

    return short_text(format_model(tree.model))


# --------------------------------------------------------------- arithmetic
class _Reals:
    """float64 arithmetic for the message passing."""

    dtype = np.float64
    name = "float64"

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a - b

    def dot(self, a: np.ndarray, m: np.ndarray) -> np.ndarray:
        """``a @ m`` for a batch ``a`` (B x k) and a small matrix ``m`` (k x n)."""
        return a @ m

    def cpt(self, rng: np.random.Generator, rows: int, card: int) -> np.ndarray:
        """Random conditional distributions: ``rows`` Dirichlet(1) rows of length ``card``."""
        return rng.dirichlet(np.ones(card), size=rows)

    def weights(self, rng: np.random.Generator, batch: int, card: int) -> np.ndarray:
        return rng.standard_normal((batch, card))


class _ModP:
    """Arithmetic in GF(p), ``p < 2**31``: int64 residues, reduced after every product."""

    dtype = np.int64

    def __init__(self, p: int):
        self.p = p
        self.name = f"GF({p})"

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a * b) % self.p

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a - b) % self.p

    def dot(self, a: np.ndarray, m: np.ndarray) -> np.ndarray:
        """``a @ m mod p`` over a small inner dimension (a cardinality).

        Each product is reduced below ``p < 2**31``; the sum of ``k < 2**32``
        such terms fits in int64 and is reduced once at the end.
        """
        p = self.p
        out = np.zeros((a.shape[0], m.shape[1]), dtype=np.int64)
        for j in range(a.shape[1]):
            out += (a[:, j, None] * m[j]) % p
        return out % p

    def cpt(self, rng: np.random.Generator, rows: int, card: int) -> np.ndarray:
        """Uniform free entries in GF(p); the last entry of each row is 1 minus the others."""
        free = rng.integers(0, self.p, size=(rows, card - 1), dtype=np.int64)
        last = (1 - free.sum(axis=1, keepdims=True)) % self.p
        return np.concatenate([free, last], axis=1)

    def weights(self, rng: np.random.Generator, batch: int, card: int) -> np.ndarray:
        return rng.integers(0, self.p, size=(batch, card), dtype=np.int64)


def _field(prime: int | None):
    if prime is None:
        return _Reals()
    check_prime(prime)
    return _ModP(int(prime))


# ----------------------------------------------------------- message passing
def _random_point(tree: _Tree, field, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Full CPTs ``theta[X]`` of shape ``(|Pa(X)|, |X|)`` (root: one row), drawn in pre-order."""
    return {x: field.cpt(rng, tree.parent_card[x], tree.card[x]) for x in tree.nodes}


def _weights(tree: _Tree, field, rng: np.random.Generator, mode: str) -> dict[str, np.ndarray]:
    """Evidence weights ``W[O_i]`` (B x |O_i|) for every observed leaf."""
    cards = [tree.card[o] for o in tree.observed]
    if mode == "dense":
        batch = tree.n_dense
        config = np.indices(cards, dtype=np.intp).reshape(len(cards), batch)
        return {o: np.eye(c, dtype=field.dtype)[config[i]] for i, (o, c) in enumerate(zip(tree.observed, cards))}
    batch = tree.ds + SKETCH_EXTRA_ROWS
    return {o: field.weights(rng, batch, c) for o, c in zip(tree.observed, cards)}


def _jacobian_at(
    tree: _Tree, field, theta: dict[str, np.ndarray], weights: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``grad f_b`` for ``f_b = sum_o w_b(o) P(o)``, and the values ``f_b``.

    The single message-passing path of the module (see the module docstring).
    Returns ``(J, f)`` with ``J`` of shape ``(B, ds)`` in :func:`parameter_labels`
    order.
    """
    nodes, children = tree.nodes, tree.children
    batch = next(iter(weights.values())).shape[0]
    lam: dict[str, np.ndarray] = {}
    up: dict[str, np.ndarray] = {}  # message X -> parent: sum_x theta(x|u) lambda_X(x), (B, |U|)
    for x in reversed(nodes):  # children before parents
        if x in weights:
            lam[x] = weights[x]
        else:
            acc = None
            for c in children[x]:
                acc = up[c] if acc is None else field.mul(acc, up[c])
            lam[x] = acc
        up[x] = field.dot(lam[x], theta[x].T)
    value = up[tree.root][:, 0]

    pi: dict[str, np.ndarray] = {tree.root: np.ones((batch, 1), dtype=field.dtype)}
    for x in nodes:  # parents before children
        kids = children[x]
        if not kids:
            continue
        down = field.dot(pi[x], theta[x])  # evidence outside subtree(x), jointly with x: (B, |x|)
        prefix = [down]
        for c in kids[:-1]:
            prefix.append(field.mul(prefix[-1], up[c]))
        suffix = None
        for i in range(len(kids) - 1, -1, -1):
            c = kids[i]
            pi[c] = prefix[i] if suffix is None else field.mul(prefix[i], suffix)
            suffix = up[c] if suffix is None else field.mul(suffix, up[c])

    jac = np.empty((batch, tree.ds), dtype=field.dtype)
    col = 0
    for x in nodes:
        k = tree.card[x] - 1
        if k == 0:
            continue
        diff = field.sub(lam[x][:, :-1], lam[x][:, -1:])  # (B, |X|-1)
        block = field.mul(pi[x][:, :, None], diff[:, None, :])  # (B, |U|, |X|-1)
        width = block.shape[1] * k
        jac[:, col : col + width] = block.reshape(batch, width)
        col += width
    return jac, value


def _jacobian(tree: _Tree, rng: np.random.Generator, prime: int | None, mode: str) -> np.ndarray:
    """The Jacobian at a random point of the field of ``prime`` (``None``: float64)."""
    field = _field(prime)
    theta = _random_point(tree, field, rng)
    return _jacobian_at(tree, field, theta, _weights(tree, field, rng, mode))[0]


def jacobian(
    model: HLCModel,
    rng: np.random.Generator | int | None = None,
    *,
    prime: int | None = None,
    rows: Rows = "dense",
    max_bytes: int | None = None,
) -> np.ndarray:
    """The Jacobian ``J_O(theta)`` (paper, Section 2.4) at a random point.

    ``prime=None``: float64 at a random proper distribution (Dirichlet rows),
    sketch weights standard normal. ``prime=p``: int64 residues mod ``p`` at a
    uniform point of ``GF(p)^ds``, sketch weights uniform in ``GF(p)``.
    ``rows="dense"`` gives ``dP(o)/dtheta`` for every configuration ``o`` (C order
    over ``model.observed``); ``"sketch"`` gives ``ds + 8`` product-form rows.
    Raises :class:`~effdim.limits.SizeLimitError`, before allocating, when
    :func:`rank_cost` exceeds ``max_bytes`` (default
    :data:`~effdim.limits.DEFAULT_MAX_BYTES`).

    Examples
    --------
    ``2:2,2`` has ``prod |O_i| = 4`` dense rows and ``ds = 5`` columns:

    >>> jacobian(HLCModel.parse("2:2,2"), 0, prime=7).shape
    (4, 5)
    """
    tree = _compile(model)
    return _jacobian(tree, np.random.default_rng(rng), prime, _plan(tree, rows, max_bytes))


# ------------------------------------------------------------------ ranks
def jacobian_at(params, rng: np.random.Generator | int | None = None, *, rows: Rows = "auto") -> np.ndarray:
    """The Jacobian ``J_O(theta)`` (float64) at given parameters, e.g. a fitted estimate.

    ``params`` is a :class:`effdim.distribution.Parameters`; columns follow
    :func:`parameter_labels` of ``params.model``. ``rows`` as in
    :func:`jacobian` (``"auto"``: dense rows for small observed spaces, else
    the random product-form sketch drawn from ``rng``, which keeps the rank
    for generic weights).
    """
    tree = _compile(params.model)
    field = _field(None)
    theta = {x: np.atleast_2d(np.asarray(params.cpts[x], dtype=np.float64)) for x in tree.nodes}
    weights = _weights(tree, field, np.random.default_rng(rng), _resolve_rows(tree, rows))
    return _jacobian_at(tree, field, theta, weights)[0]


def modular_rank(
    model: HLCModel,
    rng: np.random.Generator | int | None = None,
    *,
    prime: int = P,
    rows: Rows = "auto",
    max_bytes: int | None = None,
) -> int:
    """Rank over GF(p) of ``J_O(theta)`` at a uniformly random point of ``GF(p)^ds``.

    A certified lower bound on ``de`` (paper, Section 2.4): a minor nonzero
    mod ``p`` is a nonzero integer polynomial, so the generic rank over the
    rationals is at least as large. Equality holds with probability at least
    ``1 - failure_probability(...)`` (Schwartz-Zippel; docs/theory.md, section 3).

    ``rows="dense"``: all ``prod|O_i|`` rows; ``"sketch"``: ``ds + 8`` random
    product-form combinations; ``"auto"``: dense when
    ``prod|O_i| <= max(ds + 8, DENSE_ROWS_LIMIT)``. Memory is checked first,
    as in :func:`jacobian`.

    Examples
    --------
    The paper's Table 1 row ``3:2,2,2,2`` has ``de = 13`` (``ds = 14``):

    >>> modular_rank(HLCModel.parse("3:2,2,2,2"), 0)
    13
    """
    tree = _compile(model)
    return _modular_rank(tree, np.random.default_rng(rng), int(prime), _plan(tree, rows, max_bytes))


def _modular_rank(tree: _Tree, rng: np.random.Generator, prime: int, mode: str) -> int:
    return rank_mod_p(_jacobian(tree, rng, prime, mode), prime)


@dataclass(frozen=True)
class FloatRank:
    """Numerical rank of ``J_O(theta)`` by SVD: a second opinion, not a proof.

    ``gap = sigma_r / sigma_{r+1}`` (``inf`` when ``r`` equals the number of
    singular values, i.e. full column rank; ``nan`` when ``r = 0``). The
    Jacobian's rows are scaled to unit norm first (rank-preserving).
    """

    rank: int
    singular_values: np.ndarray
    gap: float
    tolerance: float


def float_rank(
    model: HLCModel,
    rng: np.random.Generator | int | None = None,
    *,
    rows: Rows = "auto",
    max_bytes: int | None = None,
) -> FloatRank:
    """SVD rank of ``J_O(theta)`` at a random proper parameter point (Dirichlet(1) rows).

    Tolerance as ``numpy.linalg.matrix_rank``: ``sigma_max * max(shape) * eps``,
    after scaling the rows of ``J`` to unit norm.

    Examples
    --------
    >>> float_rank(HLCModel.parse("2:3,3"), 0).rank   # Table 1: de = 7
    7
    """
    tree = _compile(model)
    return _float_rank(tree, np.random.default_rng(rng), _plan(tree, rows, max_bytes))


def _float_rank(tree: _Tree, rng: np.random.Generator, mode: str) -> FloatRank:
    jac = _jacobian(tree, rng, None, mode)
    if jac.size == 0:
        return FloatRank(0, np.zeros(0), math.inf, 0.0)
    # Rows only: a row is never structurally zero (generic weights, positive
    # theta), while scaling columns would blow structurally zero columns'
    # round-off (e.g. below a one-state hidden node) up to unit norm.
    norm = np.linalg.norm(jac, axis=1, keepdims=True)
    jac = jac / np.where(norm > 0, norm, 1.0)
    sv = np.linalg.svd(jac, compute_uv=False)
    tol = float(sv[0] * max(jac.shape) * np.finfo(np.float64).eps) if sv.size else 0.0
    r = int(np.sum(sv > tol))
    if r == 0:
        gap = math.nan
    elif r == sv.size:
        gap = math.inf
    else:
        gap = float(sv[r - 1] / sv[r]) if sv[r] > 0 else math.inf
    return FloatRank(r, sv, gap, tol)


# ------------------------------------------------------------- certainty
def failure_probability(
    model: HLCModel,
    *,
    rows: Rows = "auto",
    prime: int = P,
    repeats: int = 1,
    rank_bound: int | None = None,
) -> float:
    """Schwartz-Zippel bound on missing the generic rank in ``repeats`` independent trials.

    Degree: every entry of a CPT is a free parameter or one minus the others,
    both of degree 1, and ``P(o)`` is a sum of products with one CPT entry per
    node, so ``P(o)`` has degree ``N`` (the number of nodes) and its partial
    derivatives degree ``N - 1``. A sketched row differentiates
    ``sum_o prod_i w_i(o_i) P(o)``, adding degree ``n`` (observed leaves) in
    the random weights. A trial misses the generic rank ``r*`` only if a
    fixed nonzero ``r* x r*`` minor, of degree at most ``r* D`` with
    ``D = N - 1 (+ n if sketched)``, vanishes at the uniform random point:
    probability at most ``r* D / p``. Not knowing ``r*``, we use its upper
    bound ``min(ds, dc, rank_bound)``: conservative, never smaller than the
    ``de x de`` minor's bound. Independent trials multiply; capped at 1.

    Assumes ``p`` does not divide every coefficient of that minor (the usual
    caveat of a fixed prime; rerun with another ``prime`` to cross-check).

    Examples
    --------
    Figure 2's tree (ds 41, dc 31, 8 nodes), dense rows: ``31 * 7 / (2**31 - 1)``.

    >>> f"{failure_probability(HLCModel.parse('5(3(2,2),2,3(2,2))')):.3g}"
    '1.01e-07'
    """
    if repeats < 0:
        raise InvalidArgument(f"repeats must be >= 0, got {repeats}")
    tree = _compile(model)
    return _failure(tree, _resolve_rows(tree, rows), prime, rank_bound) ** repeats


def _failure(tree: _Tree, mode: str, prime: int, rank_bound: int | None) -> float:
    """One trial's bound ``min(1, r D / p)`` of :func:`failure_probability`."""
    bound = min(tree.ds, tree.dc) if rank_bound is None else min(tree.ds, tree.dc, int(rank_bound))
    degree = len(tree.nodes) - 1 + (len(tree.observed) if mode == "sketch" else 0)
    return min(1.0, bound * degree / prime)


@dataclass(frozen=True)
class RankResult:
    """The effective dimension ``de`` and how sure we are of it.

    ``status="proven"``: the modular rank (a certified lower bound) met an
    upper bound (``ds``, ``dc`` or the caller's). ``"probable"``: ``de`` is the
    largest rank seen and ``failure_bound`` bounds the probability that the
    true ``de`` is larger. ``repeats`` counts the modular trials done,
    ``ranks`` their results.
    """

    de: int
    status: Literal["proven", "probable"]
    failure_bound: float
    repeats: int
    method: str
    float_rank: int | None = None
    singular_gap: float | None = None
    ranks: tuple[int, ...] = ()


def effective_dimension(
    model: HLCModel,
    *,
    upper_bound: int | None = None,
    repeats: int = 2,
    seed: int | np.random.Generator | None = None,
    rows: Rows = "auto",
    check_float: bool = True,
    prime: int = P,
    screen_prime: int | None = SCREEN_PRIME,
    max_bytes: int | None = None,
) -> RankResult:
    """The effective dimension ``de`` of an HLC/LC model: the generic rank of ``J_O(theta)``.

    Geiger et al. (1996); Kocka & Zhang (2002), Section 2.4. ``de`` is the
    largest rank mod a prime over independent uniform random points
    (:func:`modular_rank`); each is a certified lower bound. When it reaches
    ``min(ds, dc, upper_bound)`` (e.g. ``upper_bound=db`` from Theorem 4) the
    value is proven and repetition stops early. Otherwise the status is
    ``"probable"`` and ``failure_bound`` is the product of the trials'
    Schwartz-Zippel bounds (:func:`failure_probability`).

    Trials: ``repeats`` at ``prime``, preceded, when the Jacobian is at least
    ``SCREEN_MIN_SIZE`` in both dimensions and ``screen_prime`` is not None,
    by one *screening* trial at ``screen_prime`` (about 2**20). Any prime
    certifies a lower bound, and below 2**20 the rank needs one BLAS
    product per block instead of three (about 2.5x faster), so a model whose
    ``de`` meets the bound is proven at that cost. The screening trial's own
    failure bound is weak (often 1); the large-prime trials carry the
    probabilistic guarantee. ``RankResult.repeats`` counts all trials done.

    With ``check_float`` and at most ``FLOAT_MAX_COLUMNS`` parameters, the
    SVD rank at a random proper point is reported too (``float_rank``,
    ``singular_gap``) as a second opinion.

    Raises
    ------
    SizeLimitError
        Before anything is allocated, when :func:`rank_cost` exceeds
        ``max_bytes`` (default :data:`~effdim.limits.DEFAULT_MAX_BYTES`).
    InvalidArgument
        If a certified lower bound exceeds ``upper_bound`` (the bound is wrong),
        or for invalid ``repeats``, ``rows`` or ``prime``.

    Examples
    --------
    Table 1, ``3:5,2,2``: ``de = 17``. Below ``min(ds, dc) = 19`` it is only
    probable; with ``db = 17`` (Theorem 4) as the upper bound it is proven.

    >>> model = HLCModel.parse("3:5,2,2")
    >>> result = effective_dimension(model, seed=0)
    >>> result.de, result.status, result.failure_bound < 1e-12
    (17, 'probable', True)
    >>> effective_dimension(model, upper_bound=17, seed=0).status
    'proven'
    """
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise InvalidArgument(f"repeats must be a positive integer, got {repeats!r}")
    check_prime(prime)
    tree = _compile(model)
    mode = _plan(tree, rows, max_bytes)
    ds = tree.ds
    n_rows = _row_count(tree, mode)
    cap = min(ds, tree.dc)
    if upper_bound is not None:
        if isinstance(upper_bound, bool) or not isinstance(upper_bound, (int, np.integer)) or upper_bound < 0:
            raise InvalidArgument(f"upper_bound must be a non-negative integer, got {upper_bound!r}")
        cap = min(cap, int(upper_bound))
    primes = [int(prime)] * int(repeats)
    if screen_prime is not None and screen_prime != prime and min(n_rows, ds) >= SCREEN_MIN_SIZE:
        check_prime(screen_prime)
        primes.insert(0, int(screen_prime))
    rng = np.random.default_rng(seed)
    ranks: list[int] = []
    failure = 1.0
    for q in primes:
        r = _modular_rank(tree, rng, q, mode)
        ranks.append(r)
        if r > cap:
            raise InvalidArgument(
                f"upper_bound={upper_bound} is below the certified lower bound {r} on de "
                f"(modular Jacobian rank) for model {model}: the upper bound is wrong"
            )
        failure *= _failure(tree, mode, q, cap)
        if r == cap:
            break
    de = max(ranks)
    proven = de == cap
    kind = "dense" if mode == "dense" else "sketched"
    if proven:
        method = f"modular rank, p={primes[len(ranks) - 1]}, {n_rows} {kind} rows"
    else:
        screened = f" after screening at p={primes[0]}" if primes[0] != prime else ""
        method = f"modular rank, p={prime}{screened}, {n_rows} {kind} rows"
    fr = gap = None
    if check_float and ds <= FLOAT_MAX_COLUMNS:
        result = _float_rank(tree, rng, mode)
        fr, gap = result.rank, result.gap
    return RankResult(
        de=de,
        status="proven" if proven else "probable",
        failure_bound=0.0 if proven else min(1.0, failure),
        repeats=len(ranks),
        method=method,
        float_rank=fr,
        singular_gap=gap,
        ranks=tuple(ranks),
    )
