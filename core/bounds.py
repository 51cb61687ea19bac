"""Dimension counts and upper bounds on the effective dimension.

* ``ds``: the standard dimension, the number of free parameters of the
  Bayesian network (paper, Section 2.1).
* ``dc``: the dimension of the complete model over the observed variables,
  ``prod |O_i| - 1`` (Section 2.4); ``de <= dc``.
* ``dp``: the pairwise bound of Theorem 3 for LC models. Grouping the observed
  variables into two joint variables ``U1``, ``U2`` (``|U1| = a``,
  ``|U2| = b``) gives an LC model ``M*`` with two observed variables whose de
  Theorem 1 (Settimi & Smith 1998) gives: ``r (a + b - r) - 1`` when
  ``r = |X| < min(a, b)``, else ``dc``. ``dp`` is the least of these over all
  splits.
* ``db = min(ds, dc, dp)`` (Theorem 4), with the bound that attains it.

For fixed ``N = a b`` the value ``r (a + b - r) - 1`` falls as ``a + b`` falls,
so the best split has the smaller side ``a`` as large as possible below
``sqrt(N)``, and it qualifies exactly when ``r < a``. Finding that ``a`` is a
subset-product problem; :func:`best_split` solves it by a dynamic programme
over the *distinct* cardinalities (achievable products, pruned at
``sqrt(N)``), never by listing the ``2^(n-1)`` splits.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .errors import EffdimError
from .model import HLCModel, ModelError

__all__ = [
    "standard_dimension",
    "complete_dimension",
    "best_split",
    "pairwise_bound",
    "PairwiseBound",
    "SplitSearchTooLarge",
    "LCBounds",
    "lc_bounds",
]


def standard_dimension(model: HLCModel) -> int:
    """``ds = sum_X (|X| - 1) * |Pa(X)|`` (paper, Section 2.1).

    Examples
    --------
    >>> from effdim import parse_model
    >>> standard_dimension(parse_model("3:4,5")), standard_dimension(parse_model("5(3(2,2),2,3(2,2))"))
    (23, 41)
    """
    total = model.card(model.root) - 1
    for parent, child in model.edges:
        total += (model.card(child) - 1) * model.card(parent)
    return total


def complete_dimension(model: HLCModel) -> int:
    """``dc = prod_{O} |O| - 1``: parameters of the complete model over the observed variables.

    Examples
    --------
    >>> from effdim import parse_model
    >>> complete_dimension(parse_model("3:4,5")), complete_dimension(parse_model("5(3(2,2),2,3(2,2))"))
    (19, 31)
    """
    return math.prod(model.card(o) for o in model.observed) - 1


#: Largest number of partial products :func:`best_split` keeps before it
#: settles for a heuristic split (the bound stays valid, see :func:`pairwise_bound`).
STATE_BUDGET = 100_000


class SplitSearchTooLarge(EffdimError, RuntimeError):
    """The exact split search would exceed :data:`STATE_BUDGET` states."""


class _Base:
    """Variables whose cardinalities are powers ``base**k`` of one base.

    ``exponents[e]`` gives, for every achievable total exponent ``e`` of a
    subset of these variables, how many variables of each power were taken.
    """

    def __init__(self, base: int, powers: Counter):
        self.base = base
        self.powers = sorted(powers.items())  # (k, multiplicity)
        table: dict[int, tuple[int, ...]] = {0: ()}
        for k, count in self.powers:
            table = {
                e + k * t: picks + (t,)
                for e, picks in sorted(table.items(), reverse=True)
                for t in range(count, -1, -1)
            }
        self.exponents = table
        self.sorted = sorted(table)

    def largest_within(self, room: int) -> int:
        """Largest achievable exponent ``e`` with ``base**e <= room``."""
        if self.base == 1:
            return 0
        cap = _int_log(room, self.base)
        i = bisect.bisect_right(self.sorted, cap)
        return self.sorted[i - 1]


def _perfect_power_base(card: int) -> tuple[int, int]:
    """``(b, k)`` with ``card == b**k`` and ``k`` as large as possible."""
    for k in range(card.bit_length(), 1, -1):
        b = round(card ** (1.0 / k))
        for cand in (b - 1, b, b + 1):
            if cand > 1 and cand**k == card:
                return cand, k
    return card, 1


def best_split(cards: list[int]) -> tuple[int, tuple[int, ...]] | None:
    """The largest product ``a <= sqrt(prod cards)`` of a non-empty proper subset.

    Returns ``(a, indices)`` with the indices of one subset attaining it, or
    ``None`` for fewer than two variables (no split exists). Raises
    :class:`SplitSearchTooLarge` when the search would keep more than
    :data:`STATE_BUDGET` partial products (many distinct, multiplicatively
    independent cardinalities).

    Cardinalities are grouped by their base (``4 = 2**2`` joins ``2``); the
    achievable exponents of each base come from a small subset-sum table.
    A dynamic programme then keeps the distinct achievable products not above
    ``floor(sqrt(N))`` over all bases but the last two; for each, the last two
    are chosen exactly (one enumerated, the other by bisection). The work is
    the number of distinct achievable products, never ``2^n``.

    Examples
    --------
    ``N = 10 * 3 * 2 = 60``; the largest subset product up to ``sqrt(60)`` is ``3 * 2``:

    >>> best_split([10, 3, 2])
    (6, (1, 2))
    """
    if len(cards) < 2:
        return None
    limit = math.isqrt(math.prod(cards))
    by_base: dict[int, Counter] = {}
    for card in cards:
        base, k = _perfect_power_base(card)
        by_base.setdefault(base, Counter())[k] += 1
    bases = sorted((_Base(b, powers) for b, powers in by_base.items()), key=lambda b: len(b.sorted))
    while len(bases) < 3:
        bases.insert(0, _Base(1, Counter()))  # neutral padding: exponent 0 only
    *head, enumerated, greedy = bases
    if math.prod(len(base.sorted) for base in head) > STATE_BUDGET:
        raise SplitSearchTooLarge(f"more than {STATE_BUDGET} partial products to examine")

    states: dict[int, tuple[int, ...]] = {1: ()}
    for base in head:
        grown: dict[int, tuple[int, ...]] = {}
        for product, exps in states.items():
            for e in base.sorted:
                value = product * base.base**e
                if value > limit:
                    break
                grown.setdefault(value, exps + (e,))
        states = grown
    best = _best_completion(states, enumerated, greedy, limit)
    value, exps = best
    if value < 2:
        return None
    return value, _indices(cards, bases, exps)


def _best_completion(
    states: dict[int, tuple[int, ...]], enumerated: _Base, greedy: _Base, limit: int
) -> tuple[int, tuple[int, ...]]:
    """Best ``product * b1**x * b2**y <= limit`` over the states and exponents.

    Floating-point logarithms rank all (state, x) pairs at once; only pairs
    whose optimistic value reaches the best pessimistic one (a handful) are
    settled in exact integer arithmetic, so the result is exact.
    """
    products = list(states)
    log_limit = math.log(limit)
    log_states = np.array([math.log(p) for p in products])
    xs = np.array(enumerated.sorted)
    ys = np.array(greedy.sorted)
    log_b1 = math.log(enumerated.base) if enumerated.base > 1 else 0.0
    log_b2 = math.log(greedy.base) if greedy.base > 1 else 0.0
    partial = log_states[:, None] + xs[None, :] * log_b1
    slack = 1e-9 * max(1.0, log_limit)
    ok = partial <= log_limit + slack

    def completed(margin: float) -> np.ndarray:
        if log_b2 == 0.0:
            y = np.zeros_like(partial)
        else:
            cap = np.floor((log_limit - partial + margin) / log_b2)
            y = ys[np.clip(np.searchsorted(ys, cap, side="right") - 1, 0, None)]
        return np.where(ok, partial + y * log_b2, -np.inf)

    pessimistic = completed(-slack)
    optimistic = completed(slack)
    floor = pessimistic.max()
    best = (0, ())
    for i, j in zip(*np.nonzero(optimistic >= floor - slack)):
        product = products[i]
        value = product * enumerated.base ** int(xs[j])
        if value > limit:
            continue
        y = greedy.largest_within(limit // value)
        best = max(best, (value * greedy.base**y, states[product] + (int(xs[j]), y)))
    return best


def _indices(cards: list[int], bases: list[_Base], exps: tuple[int, ...]) -> tuple[int, ...]:
    """Indices of variables realising exponent ``exps[i]`` of ``bases[i]``."""
    chosen: list[int] = []
    for base, e in zip(bases, exps):
        for (k, _), take in zip(base.powers, base.exponents[e]):
            card = base.base**k
            chosen += [i for i, c in enumerate(cards) if c == card][:take]
    return tuple(sorted(chosen))


def _int_log(value: int, base: int) -> int:
    """Largest ``e`` with ``base**e <= value`` (exact integer arithmetic)."""
    if value < 1:
        return -1
    e = max(0, int(math.log(value, base)) - 1) if value.bit_length() > 52 else 0
    power = base**e
    while power * base <= value:
        e, power = e + 1, power * base
    return e


@dataclass(frozen=True)
class PairwiseBound:
    """``dp`` of Theorem 3 with the split that gives it.

    ``split`` holds the indices of one side ``U1`` (``None`` when no split
    qualifies and ``dp = dc``). ``exact`` is False when the exact split search
    was too large and a balanced heuristic split was used: ``dp`` is then
    still a valid upper bound on ``de`` (Theorem 3 holds for every split) but
    may exceed the minimum; ``lower`` is the proven floor
    ``r (2 sqrt(N) - r) - 1`` of the minimum (proof of Lemma 3.1).
    """

    dp: int
    split: tuple[int, ...] | None
    exact: bool
    lower: int


def pairwise_bound(hidden_card: int, cards: list[int]) -> PairwiseBound:
    """``dp`` of Theorem 3 for the LC model ``hidden_card : cards``.

    With the smaller side ``a`` of the best split and ``b = N / a``:
    ``dp = r (a + b - r) - 1`` if ``r = |X| < a``, else ``dc`` (Table 1
    writes "dc" then).

    Examples
    --------
    Table 1, ``5:10,3,2``: ``a = 6``, ``b = 10``, ``5 (6 + 10 - 5) - 1 = 54``:

    >>> pairwise_bound(5, [10, 3, 2]).dp
    54
    """
    total = math.prod(cards)
    dc = total - 1
    r = hidden_card
    lower = min(dc, math.ceil(r * (2 * math.sqrt(total) - r)) - 1) if total < 2**1000 else dc
    try:
        split, exact = best_split(list(cards)), True
    except SplitSearchTooLarge:
        split, exact = _balanced_split(list(cards)), False
    if split is None:
        return PairwiseBound(dc, None, True, dc)
    a, side = split
    b = total // a
    if r < a:  # a <= b, so r < min(a, b)
        return PairwiseBound(min(dc, r * (a + b - r) - 1), side, exact, min(lower, dc))
    return PairwiseBound(dc, None, exact, min(lower, dc))


def _balanced_split(cards: list[int]) -> tuple[int, tuple[int, ...]]:
    """A greedy balanced split (largest first onto the lighter side).

    Used only beyond :data:`STATE_BUDGET`; returns the smaller side's product
    and indices.
    """
    sides: tuple[list[int], list[int]] = ([], [])
    products = [1, 1]
    for i in sorted(range(len(cards)), key=lambda i: -cards[i]):
        lighter = 0 if products[0] <= products[1] else 1
        sides[lighter].append(i)
        products[lighter] *= cards[i]
    small = 0 if products[0] <= products[1] else 1
    return products[small], tuple(sorted(sides[small]))


@dataclass(frozen=True)
class LCBounds:
    """ds, dc, dp and db = min(ds, dc, dp) of an LC model (Theorem 4).

    ``binding`` is the first of ``ds``, ``dc``, ``dp`` that equals ``db``
    (``dp`` only counts when a split qualifies); ``split`` lists the observed
    variables of one side ``U1`` of the best split of Theorem 3, if any.
    ``dp_exact`` is False only for huge models whose split search exceeded
    its budget (see :class:`PairwiseBound`); ``db`` is still a valid bound.
    """

    ds: int
    dc: int
    dp: int
    db: int
    binding: str
    split: tuple[str, ...] | None
    dp_exact: bool = True

    @property
    def dp_is_dc(self) -> bool:
        """True when no split qualifies, so ``dp`` falls back to ``dc``."""
        return self.split is None


def lc_bounds(model: HLCModel) -> LCBounds:
    """The bounds of Theorem 4 for an LC model (or a local LC model).

    Examples
    --------
    Table 1 rows ``3:4,5`` (dp binds) and ``3:2,2,2,2`` (db = 14, one above de = 13):

    >>> from effdim import parse_model
    >>> lc_bounds(parse_model("3:4,5"))
    LCBounds(ds=23, dc=19, dp=17, db=17, binding='dp', split=('O1',), dp_exact=True)
    >>> lc_bounds(parse_model("3:2,2,2,2")).db
    14
    """
    if not model.is_lc:
        raise ModelError(
            f"dp and db are defined for LC models; this model has {len(model.hidden)} hidden nodes "
            "(use the local LC models)"
        )
    hidden = model.root
    observed = model.observed
    cards = [model.card(o) for o in observed]
    ds = standard_dimension(model)
    dc = complete_dimension(model)
    pairwise = pairwise_bound(model.card(hidden), cards)
    dp, side = pairwise.dp, pairwise.split
    db = min(ds, dc, dp)
    if ds == db:
        binding = "ds"
    elif dc == db:
        binding = "dc"
    else:
        binding = "dp"
    split = None if side is None else tuple(observed[i] for i in side)
    return LCBounds(ds=ds, dc=dc, dp=dp, db=db, binding=binding, split=split, dp_exact=pairwise.exact)
