"""Regular HLC models and regularization (Lemma 3.2, Lemma 4.1, Section 4).

An HLC model is *regular* when every hidden node ``H`` satisfies

    |H| <= prod_{Y in Ne(H)} |Y| / max_{Y in Ne(H)} |Y|,

strictly when ``H`` has exactly two neighbours and one of them is hidden
(Section 4, after Lemma 4.1; for LC models this is Lemma 3.2). Each irregular
model is equivalent (represents the same distributions over the observed
variables) to a regular one, obtained by repeating until stable:

1. *shrink* (Lemma 4.1): set ``|H|`` to ``prod|Ne(H)| / max|Ne(H)|`` when it
   is larger;
2. *remove*: a hidden node with exactly two neighbours, one of them hidden,
   whose cardinality is at least the smaller neighbour's, can copy that
   neighbour; delete it and join its two neighbours by an edge.

Equivalent models have the same effective dimension, so ``de`` of an
irregular model is ``de`` of its regularization (docs/theory.md, section 5).

Two cardinality limits follow from these rules, and they differ only in the
strict case: :func:`shrink_limit` is ``prod|Ne(H)| / max|Ne(H)|``, what
*shrink* lowers ``|H|`` to; :func:`largest_regular_card` is the largest
``|H|`` that keeps the model regular (one less in the strict case, at least
1), the ceiling of sweeps and hill climbs (:mod:`effdim.search`).

Examples
--------
>>> from effdim import parse_model
>>> result = regularize(parse_model("9:2,2,2,2"))      # Lemma 3.2: 16 / 2 = 8
>>> str(result.model), [step.text for step in result.steps]
('8:2,2,2,2', ['H1: 9 -> 8 (prod/max of neighbours, Lemma 4.1)'])
>>> figure2 = parse_model("5(3(2,2),2,3(2,2))")       # H1's neighbours: 3, 2, 3
>>> shrink_limit(figure2, "H1"), largest_regular_card(figure2, "H1")
(6, 6)
>>> pair = parse_model("2(2(2,2),2(2,2))")             # H1: two neighbours, both hidden
>>> shrink_limit(pair, "H1"), largest_regular_card(pair, "H1"), is_regular(pair)
(2, 1, False)
>>> {node: str(change) for node, change in regularize(pair).changes.items()}
{'H1': 'removed'}
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .model import HLCModel

__all__ = [
    "Violation",
    "Step",
    "Change",
    "Regularization",
    "regularity_violations",
    "is_regular",
    "regularize",
    "shrink_limit",
    "largest_regular_card",
]

SHRINK = "shrink"
REMOVE = "remove"


@dataclass(frozen=True)
class Violation:
    """One reason a model is irregular: the hidden ``node``, the ``rule`` broken, a sentence."""

    node: str
    rule: str
    message: str


@dataclass(frozen=True)
class Step:
    """One regularization step: ``node``, ``rule`` (``shrink``/``remove``), ``old -> new``."""

    node: str
    rule: str
    old: str
    new: str
    text: str


@dataclass(frozen=True)
class Change:
    """What regularization did to one hidden node: ``|node|`` went from ``old``
    to ``new``, or the node was removed (``new is None``)."""

    node: str
    old: int
    new: int | None

    def __str__(self) -> str:
        return "removed" if self.new is None else f"{self.old} → {self.new}"


@dataclass(frozen=True)
class Regularization:
    """The regular equivalent ``model`` of ``original`` and the ``steps`` that produced it."""

    original: HLCModel
    model: HLCModel
    steps: tuple[Step, ...]

    @property
    def changes(self) -> dict[str, Change]:
        """Each node a step touched (shrunk, removed or both), in step order:
        its cardinality before and after, ``new=None`` if it was removed."""
        nodes = dict.fromkeys(step.node for step in self.steps)
        return {n: Change(n, self.original.card(n), self.model.card(n) if n in self.model else None) for n in nodes}


def shrink_limit(model: HLCModel, hidden_node: str) -> int:
    """``prod |Ne(H)| / max |Ne(H)|`` (Lemma 3.2, Lemma 4.1): the cardinality *shrink* lowers ``|H|`` to.

    Equals :func:`largest_regular_card` except when ``H`` has exactly two
    neighbours one of which is hidden, where regularity needs ``|H|`` below it.
    """
    cards = sorted(model.card(n) for n in model.neighbors(hidden_node))
    return math.prod(cards[:-1])


def largest_regular_card(model: HLCModel, hidden_node: str) -> int:
    """The largest ``|H|`` that keeps ``H`` regular, the other cardinalities as they are.

    :func:`shrink_limit`, minus one in the strict case (two neighbours, one
    hidden; Section 4), and never below 1. Sweeps and hill climbs stay within
    it, so every model they visit is regular at ``H``.
    """
    limit = shrink_limit(model, hidden_node)
    if _two_neighbours_one_hidden(model, hidden_node):
        limit -= 1
    return max(1, limit)


def _two_neighbours_one_hidden(model: HLCModel, node: str) -> bool:
    neighbours = model.neighbors(node)
    return len(neighbours) == 2 and any(model.is_hidden(n) for n in neighbours)


def regularity_violations(model: HLCModel) -> list[Violation]:
    """Every hidden node that breaks regularity, with the reason (empty if regular).

    Examples
    --------
    >>> from effdim import parse_model
    >>> [v.message for v in regularity_violations(parse_model("9:2,2,2,2"))]
    ['|H1| = 9 exceeds prod/max of its neighbours (O1:2, O2:2, O3:2, O4:2) = 8 (Lemma 3.2)']
    """
    found = []
    for node in model.hidden:
        card = model.card(node)
        neighbours = model.neighbors(node)
        limit = shrink_limit(model, node)
        described = ", ".join(f"{n}:{model.card(n)}" for n in neighbours)
        if card > limit:
            rule = "Lemma 3.2" if model.is_lc else "Lemma 4.1"
            found.append(
                Violation(
                    node,
                    rule,
                    f"|{node}| = {card} exceeds prod/max of its neighbours ({described}) = {limit} ({rule})",
                )
            )
        elif _two_neighbours_one_hidden(model, node) and card >= limit:
            found.append(
                Violation(
                    node,
                    "two neighbours, one hidden",
                    f"{node} has two neighbours ({described}), one hidden, so |{node}| must be "
                    f"below the smaller one ({limit}), but it is {card}",
                )
            )
    return found


def is_regular(model: HLCModel) -> bool:
    """True when no hidden node violates regularity (Section 4)."""
    return not regularity_violations(model)


def regularize(model: HLCModel) -> Regularization:
    """The regular model equivalent to ``model`` and the step log.

    Applies *shrink* to every hidden node that needs it, then one *remove*,
    and repeats until nothing changes. Never raises ``ds`` and keeps ``de``.
    """
    original = model
    steps: list[Step] = []
    while True:
        changed = False
        for node in model.hidden:
            limit = shrink_limit(model, node)
            if model.card(node) > limit:
                old = model.card(node)
                model = model.with_card(node, limit)
                steps.append(
                    Step(
                        node,
                        SHRINK,
                        str(old),
                        str(limit),
                        f"{node}: {old} -> {limit} (prod/max of neighbours, Lemma 4.1)",
                    )
                )
                changed = True
        for node in model.hidden:
            if _two_neighbours_one_hidden(model, node) and model.card(node) >= shrink_limit(model, node):
                a, b = model.neighbors(node)
                old = f"{a} - {node}:{model.card(node)} - {b}"
                model = model.contracted(node)
                steps.append(
                    Step(
                        node,
                        REMOVE,
                        old,
                        f"{a} - {b}",
                        f"removed {node}: it can copy its smaller neighbour; joined {a} - {b}",
                    )
                )
                changed = True
                break
        if not changed:
            return Regularization(original, model, tuple(steps))
