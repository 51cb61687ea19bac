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
irregular model is ``de`` of its regularization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .model import HLCModel

__all__ = ["Violation", "Step", "Regularization", "regularity_violations", "is_regular", "regularize", "max_regular_card"]

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
class Regularization:
    """The regular equivalent ``model`` and the ``steps`` that produced it."""

    model: HLCModel
    steps: tuple[Step, ...]

    @property
    def changed_nodes(self) -> tuple[str, ...]:
        """Nodes touched by a step (shrunk or removed), in step order, once each."""
        return tuple(dict.fromkeys(step.node for step in self.steps))


def max_regular_card(model: HLCModel, hidden_node: str) -> int:
    """``prod |Ne(H)| / max |Ne(H)|``: the largest regular ``|H|`` (Lemma 4.1),
    ignoring the strict case of two neighbours one of which is hidden."""
    cards = sorted(model.card(n) for n in model.neighbors(hidden_node))
    return math.prod(cards[:-1])


def _two_neighbours_one_hidden(model: HLCModel, node: str) -> bool:
    neighbours = model.neighbors(node)
    return len(neighbours) == 2 and any(model.is_hidden(n) for n in neighbours)


def regularity_violations(model: HLCModel) -> list[Violation]:
    """Every hidden node that breaks regularity, with the reason (empty if regular)."""
    found = []
    for node in model.hidden:
        card = model.card(node)
        neighbours = model.neighbors(node)
        limit = max_regular_card(model, node)
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
    steps: list[Step] = []
    while True:
        changed = False
        for node in model.hidden:
            limit = max_regular_card(model, node)
            if model.card(node) > limit:
                old = model.card(node)
                model = model.with_card(node, limit)
                steps.append(
                    Step(node, SHRINK, str(old), str(limit), f"{node}: {old} -> {limit} (prod/max of neighbours, Lemma 4.1)")
                )
                changed = True
        for node in model.hidden:
            if _two_neighbours_one_hidden(model, node) and model.card(node) >= max_regular_card(model, node):
                a, b = model.neighbors(node)
                old = f"{a} - {node}:{model.card(node)} - {b}"
                model = model.contracted(node)
                steps.append(
                    Step(node, REMOVE, old, f"{a} - {b}", f"removed {node}: it can copy its smaller neighbour; joined {a} - {b}")
                )
                changed = True
                break
        if not changed:
            return Regularization(model, tuple(steps))
