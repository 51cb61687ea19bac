"""The search operators of EAST (Chen et al. 2012, Section 4): the candidate models one move away.

    * node introduction ``NI(H; A, B)``: a new hidden node ``H'`` with
      ``|H'| = |H|`` between ``H`` and two of its children ``A, B`` (the
      pairs with the largest mutual information are tried);
    * node deletion ``ND(H, H')``: hidden ``H'`` is removed, its other
      neighbours are joined to its hidden neighbour ``H``;
    * node relocation ``NR(X; H -> G)``: a child ``X`` of ``H`` moves to
      another hidden node ``G`` (a hidden neighbour of ``H`` for a hidden
      ``X``; for a leaf, the hidden node whose leaves share most mutual
      information with it, when that beats its present siblings);
    * state introduction ``SI(H)`` and state deletion ``SD(H)``: ``|H|``
      one up (split its largest state) or down (drop its smallest state).

Only regular candidates are kept (Section 4 of Kocka & Zhang 2002:
irregular models are equivalent to smaller regular ones).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..model import HLCModel
from ..regularity import is_regular
from .start import _fresh

__all__ = ["EXPANSION", "OPERATORS", "Move", "candidate_moves", "changed_families"]


#: Operator codes, in the order EAST applies its phases: expansion, adjustment, simplification.
OPERATORS = ("NI", "SI", "NR", "ND", "SD")
#: The expansion operators: they add parameters, so EAST ranks them by score gain per added parameter.
EXPANSION = ("NI", "SI")


@dataclass(frozen=True)
class Move:
    """One candidate: the ``operator`` (see :data:`OPERATORS`), a sentence, the new ``model``
    and the nodes whose families the move changes (``free``: :func:`changed_families`,
    re-estimated by local EM)."""

    operator: str
    text: str
    model: HLCModel
    free: frozenset


def _rebuild(model: HLCModel, cards: dict[str, int], hidden: list[str], edges: list[tuple[str, str]],
             root: str | None = None) -> HLCModel:
    return HLCModel(cards, hidden, edges, root or model.root)


def _leaves_below(model: HLCModel, node: str) -> list[str]:
    if not model.is_hidden(node):
        return [node]
    out: list[str] = []
    for c in model.children(node):
        out.extend(_leaves_below(model, c))
    return out


def _affinity(mi: np.ndarray, index: dict[str, int], a: Iterable[str], b: Iterable[str]) -> float:
    """Mean mutual information between two groups of leaves."""
    ia, ib = [index[x] for x in a], [index[x] for x in b]
    if not ia or not ib:
        return 0.0
    return float(mi[np.ix_(ia, ib)].mean())


def _node_introductions(model: HLCModel, mi, index, pairs_per_node: int) -> list[tuple]:
    moves = []
    taken = set(model.nodes)
    for h in model.hidden:
        kids = model.children(h)
        if len(model.neighbors(h)) < 3 or len(kids) < 2:
            continue
        below = {c: _leaves_below(model, c) for c in kids}
        ranked = sorted(itertools.combinations(kids, 2), key=lambda p: -_affinity(mi, index, below[p[0]], below[p[1]]))
        for a, b in ranked[:pairs_per_node]:
            new = _fresh(taken, 1)[0]
            cards = {n: model.card(n) for n in model.nodes}
            cards[new] = model.card(h)
            edges = [(u, v) for u, v in model.edges if v not in (a, b)] + [(h, new), (new, a), (new, b)]
            moves.append(("NI", f"introduce {new} over {a}, {b} under {h}",
                          _rebuild(model, cards, model.hidden + [new], edges)))
    return moves


def _node_deletions(model: HLCModel) -> list[tuple]:
    moves = []
    cards = {n: model.card(n) for n in model.nodes}
    for u, v in model.edges:
        if not (model.is_hidden(u) and model.is_hidden(v)):
            continue
        keep, gone = (v, u) if model.card(u) < model.card(v) else (u, v)  # the smaller one goes
        others = [x for x in model.neighbors(gone) if x != keep]
        edges = [(p, c) for p, c in model.edges if gone not in (p, c)] + [(keep, x) for x in others]
        root = keep if gone == model.root else model.root
        new_cards = {n: k for n, k in cards.items() if n != gone}
        moves.append(("ND", f"delete {gone}, its neighbours join {keep}",
                      HLCModel(new_cards, [h for h in model.hidden if h != gone], edges, root)))
    return moves


def _node_relocations(model: HLCModel, mi, index) -> list[tuple]:
    moves = []
    cards = {n: model.card(n) for n in model.nodes}
    direct = {g: [x for x in model.neighbors(g) if not model.is_hidden(x)] for g in model.hidden}
    for h in model.hidden:
        for x in model.children(h):
            if len(model.neighbors(h)) <= 2:
                continue  # h would be left with one neighbour
            if model.is_hidden(x):
                targets = [g for g in model.neighbors(h) if model.is_hidden(g) and g != x]
            else:
                here = _affinity(mi, index, [x], [s for s in direct[h] if s != x])
                scored = [(g, _affinity(mi, index, [x], direct[g])) for g in model.hidden if g != h and direct[g]]
                best = max(scored, key=lambda t: t[1], default=None)
                targets = [best[0]] if best and best[1] > here else []
            inside = set(nx.descendants(nx.bfs_tree(model.graph, model.root), x)) if model.is_hidden(x) else set()
            for g in targets:
                if g in inside:
                    continue
                edges = [(p, c) for p, c in model.edges if c != x] + [(g, x)]
                moves.append(("NR", f"move {x} from {h} to {g}", _rebuild(model, cards, model.hidden, edges)))
    return moves


def _state_changes(model: HLCModel) -> list[tuple]:
    moves = []
    for h in model.hidden:
        k = model.card(h)
        moves.append(("SI", f"{h}: {k} -> {k + 1} states", model.with_card(h, k + 1)))
        if k > 2:
            moves.append(("SD", f"{h}: {k} -> {k - 1} states", model.with_card(h, k - 1)))
    return moves


def candidate_moves(model: HLCModel, mi: np.ndarray, index: Mapping[str, int], *,
                    operators: Iterable[str] = OPERATORS, pairs_per_node: int = 3) -> list[Move]:
    """Every regular candidate of the chosen operators (see the module docstring).

    ``mi`` is :func:`mutual_information` of the data, ``index`` maps each leaf
    to its column in ``mi``.
    """
    operators = set(operators)
    moves: list[Move] = []
    if "NI" in operators:
        moves += _node_introductions(model, mi, index, pairs_per_node)
    if "NR" in operators:
        moves += _node_relocations(model, mi, index)
    if "ND" in operators:
        moves += _node_deletions(model)
    moves += [m for m in _state_changes(model) if m[0] in operators]
    seen, out = set(), []
    for operator, text, new in moves:
        if new not in seen and is_regular(new):
            seen.add(new)
            out.append(Move(operator, text, new, changed_families(model, new)))
    return out


def changed_families(old: HLCModel, new: HLCModel) -> frozenset:
    """Nodes of ``new`` whose family differs from ``old``'s: new nodes, nodes with another
    parent, and nodes whose own or whose parent's cardinality changed (both rooted as ``new``)."""
    if new.root in old and old.is_hidden(new.root) and old.root != new.root:
        old = old.rerooted(new.root)
    out = set()
    for x in new.nodes:
        parent = new.parent(x)
        if (x not in old or old.parent(x) != parent or old.card(x) != new.card(x)
                or (parent is not None and old.card(parent) != new.card(parent))):
            out.add(x)
    return frozenset(out)
