"""The search operators of EAST (Chen et al. 2012, Section 4): the candidate models one move away.

    * node introduction ``NI(H; A, B, ...)``: a new hidden node ``H'`` between
      ``H`` and a group of its children: every pair with a hidden child, and
      the most cohesive (by mutual information) of the other pairs and of
      groups of three or more; ``H'`` has ``|H|`` states (the move then
      contains the current model) or 2; over all of ``H``'s children but
      one, ``H'`` takes over ``H``'s role, so ``H``'s own family and that
      child's are re-estimated with the new node's (``free``);
    * node deletion ``ND(H, H')``: hidden ``H'`` is removed, its other
      neighbours are joined to its hidden neighbour ``H`` (either end of
      every edge between hidden nodes), ``H`` keeping its states or, when
      ``H'`` has more, taking as many (the two nodes merged);
    * node merge ``NM(H, H')``: two adjacent hidden nodes become one with
      more states than either, ``max(|H|, |H'|) + 1`` (every neighbour of
      both joins it): a 3-state node that the search has learned as a chain
      of binary nodes needs it, a deletion and a state more at once, each of
      which loses on its own (its start: :func:`effdim.structure.local_em.merged_parameters`);
    * node split ``NS(H; A, B, ...)``: its inverse, a hidden node of ``k >= 3``
      states becomes two adjacent nodes of ``k - 1`` states, the new one over
      a group of its children that the fit leaves dependent, a pair with a
      hidden child, or the rest of the children of either;
    * node relocation ``NR(X; H -> G)``: a neighbour ``X`` of ``H`` moves to
      another hidden node ``G`` (for a hidden child ``X``, a hidden neighbour
      of ``H``; for ``H``'s parent, a hidden child of ``H``, the two then swap
      places on the path; for a leaf, the hidden node whose leaves share most
      mutual information with it, when that beats its present siblings);
    * state introduction ``SI(H)`` and state deletion ``SD(H)``: ``|H|``
      one up (split its largest state) or down (drop its smallest state).

Only regular candidates are kept (Section 4 of Kocka & Zhang 2002:
irregular models are equivalent to smaller regular ones).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..model import HLCModel
from ..regularity import is_regular
from .start import _fresh

__all__ = ["EXPANSION", "OPERATORS", "Move", "candidate_moves", "changed_families", "iter_candidate_moves"]


#: Operator codes, in the order EAST applies its phases: expansion, adjustment, simplification.
OPERATORS = ("NI", "SI", "NM", "NS", "NR", "ND", "SD")
#: The expansion operators: they add parameters, so EAST ranks them by score gain per added parameter.
EXPANSION = ("NI", "SI", "NM", "NS")


@dataclass(frozen=True)
class Move:
    """One candidate: the ``operator`` (see :data:`OPERATORS`), a sentence, the new ``model``
    and the nodes whose families the move changes (``free``: :func:`changed_families`, and for a node
    introduction over all of a node's children but one, that node and that child; re-estimated by local EM); for ``NM`` the node kept and the node merged into it (``merged``), for ``NS`` the
    node split and the node split off (``split``)."""

    operator: str
    text: str
    model: HLCModel
    free: frozenset
    merged: tuple[str, str] | tuple[()] = ()
    split: tuple[str, str] | tuple[()] = ()


def _rebuild(
    model: HLCModel, cards: dict[str, int], hidden: list[str], edges: list[tuple[str, str]], root: str | None = None
) -> HLCModel:
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


def _cohesion(group: tuple[str, ...], below: dict[str, list[str]], mi, index) -> float:
    """Mean mutual information between the leaves of the members of ``group``, pair by pair."""
    return float(np.mean([_affinity(mi, index, below[a], below[b]) for a, b in itertools.combinations(group, 2)]))


def _ni_groups(
    model: HLCModel, kids: list[str], below: dict[str, list[str]], mi, index, per_node: int
) -> list[tuple[str, ...]]:
    """The groups of children a node introduction may gather: every pair with a hidden member, and the
    ``per_node`` most cohesive (:func:`_cohesion`) among the other pairs and the groups of three or more
    grown greedily from the most dependent pairs (each time adding the child with the largest mean mutual
    information to the group), up to all children but one."""
    pairs = list(itertools.combinations(kids, 2))
    ranked = sorted(pairs, key=lambda p: -_affinity(mi, index, below[p[0]], below[p[1]]))
    grown: list[tuple[str, ...]] = []
    for pair in ranked[:per_node]:
        group = list(pair)
        while len(group) < len(kids) - 1:
            inside = [leaf for c in group for leaf in below[c]]
            group.append(max((c for c in kids if c not in group), key=lambda c: _affinity(mi, index, below[c], inside)))
            grown.append(tuple(group))
    hidden = [p for p in pairs if model.is_hidden(p[0]) or model.is_hidden(p[1])]
    # once each, in a fixed order (not a set's: equal cohesions would be ranked by the strings' hashes, which
    # differ between processes, and so would the search)
    others = sorted(
        dict.fromkeys(g for g in [*pairs, *grown] if g not in hidden), key=lambda g: -_cohesion(g, below, mi, index)
    )
    return hidden + others[:per_node]


def _child_groups(
    model: HLCModel, mi, index, per_node: int, residual: Mapping[str, list[tuple[str, ...]]]
) -> Iterator[tuple[str, list[tuple[str, ...]]]]:
    """Per hidden node ``H`` with at least three neighbours and two children, the groups of its children that a
    new node between them and ``H`` may gather: those of ``residual[H]``, then :func:`_ni_groups`."""
    for h in model.hidden:
        kids = model.children(h)
        if len(model.neighbors(h)) < 3 or len(kids) < 2:
            continue
        below = {c: _leaves_below(model, c) for c in kids}
        groups = list(residual.get(h, ()))
        groups += [g for g in _ni_groups(model, kids, below, mi, index, per_node) if g not in groups]
        yield h, groups


def _introduced(model: HLCModel, h: str, new: str, group: tuple[str, ...], k_h: int, k_new: int) -> HLCModel:
    """``model`` with hidden ``new`` (``k_new`` states) between ``h`` (now ``k_h`` states) and ``group``."""
    edges = [(u, v) for u, v in model.edges if v not in group] + [(h, new)] + [(new, c) for c in group]
    cards = {n: model.card(n) for n in model.nodes}
    cards[h], cards[new] = k_h, k_new
    return _rebuild(model, cards, model.hidden + [new], edges)


def _node_introductions(
    model: HLCModel, mi, index, per_node: int, residual: Mapping[str, list[tuple[str, ...]]]
) -> Iterator[tuple]:
    """``NI``: a new hidden node between ``H`` and a group of its children (:func:`_child_groups`), with
    ``|H|`` states (which contains the current model) and, when ``|H| > 2``, with 2 states."""
    new = _fresh(set(model.nodes), 1)[0]
    for h, groups in _child_groups(model, mi, index, per_node, residual):
        kids = model.children(h)
        for group in groups:
            kept = [c for c in kids if c not in group]
            # the new node takes over H's role for all its children but one: H's own family and that child's
            # change meaning too, so local EM re-estimates them (fixed, the move scores only its penalty)
            also_free = frozenset([h, *kept]) if len(kept) == 1 and len(kids) >= 4 else frozenset()
            for k in sorted({model.card(h), 2}, reverse=True):
                yield (
                    "NI",
                    f"introduce {new} ({k} states) over {', '.join(group)} under {h}",
                    _introduced(model, h, new, group, model.card(h), k),
                    {"also_free": also_free},
                )


def _node_splits(model: HLCModel, mi, index, residual: Mapping[str, list[tuple[str, ...]]]) -> Iterator[tuple]:
    """``NS``: the inverse of the node merge: a hidden node ``H`` of ``k >= 3`` states becomes two adjacent
    nodes of ``k - 1`` states each, the new one over a group of ``H``'s children (:func:`_child_groups`) or
    over the rest of them (``H`` keeping the group and its parent). Two 3-state nodes learned as one 4-state
    node need it: a node introduction and a state fewer on each end, each of which loses on its own. Only the
    groups that the fit leaves dependent and the pairs with a hidden child, each also as the rest of the
    children (not the mutual-information groups of ``NI``: a split's local EM re-estimates every neighbour of
    the node, the costliest of all candidates)."""
    new = _fresh(set(model.nodes), 1)[0]
    for h, groups in _child_groups(model, mi, index, 0, residual):
        k = model.card(h) - 1
        if k < 2:
            continue
        kids = model.children(h)
        sides = []
        for group in groups:
            rest = tuple(c for c in kids if c not in group)
            sides += [g for g in (group, rest) if len(g) >= 2 and g not in sides]
        for side in sides:
            yield (
                "NS",
                f"split {h} into {h} and {new} ({k} states each), {new} over {', '.join(side)}",
                _introduced(model, h, new, side, k, k),
                {"split": (h, new)},
            )


def _without(model: HLCModel, keep: str, gone: str, cards: Mapping[str, int]) -> HLCModel:
    """``model`` without hidden ``gone``, its other neighbours joined to its hidden neighbour ``keep``, with
    the cardinalities ``cards`` (of every node left)."""
    others = [x for x in model.neighbors(gone) if x != keep]
    edges = [(p, c) for p, c in model.edges if gone not in (p, c)] + [(keep, x) for x in others]
    root = keep if gone == model.root else model.root
    return HLCModel(dict(cards), [h for h in model.hidden if h != gone], edges, root)


def _node_deletions(model: HLCModel) -> Iterator[tuple]:
    """``ND``: either end of an edge between hidden nodes is removed, its other neighbours join the other end;
    when the removed node has more states, also with the kept node taking them (the two merged)."""
    cards = {n: model.card(n) for n in model.nodes}
    for u, v in model.edges:
        if not (model.is_hidden(u) and model.is_hidden(v)):
            continue
        ends = [(u, v), (v, u)] if model.card(u) >= model.card(v) else [(v, u), (u, v)]  # the smaller goes first
        for keep, gone in ends:
            for k in sorted({cards[keep], max(cards[keep], cards[gone])}):
                new_cards = {n: k if n == keep else c for n, c in cards.items() if n != gone}
                states = "" if k == cards[keep] else f" with {k} states"
                yield (
                    "ND",
                    f"delete {gone}, its neighbours join {keep}{states}",
                    _without(model, keep, gone, new_cards),
                )


def _node_merges(model: HLCModel) -> Iterator[tuple]:
    """``NM``: the two ends of an edge between hidden nodes become one node (named as the end nearer the
    root) with one state more than the larger, every neighbour of both joined to it."""
    cards = {n: model.card(n) for n in model.nodes}
    for u, v in model.edges:
        if not (model.is_hidden(u) and model.is_hidden(v)):
            continue
        keep, gone = (u, v) if model.parent(v) == u else (v, u)
        k = max(cards[keep], cards[gone]) + 1
        if k > cards[keep] * cards[gone]:
            continue  # a 1-state end: the pair has fewer joint states than that
        new_cards = {n: k if n == keep else c for n, c in cards.items() if n != gone}
        yield (
            "NM",
            f"merge {gone} into {keep} with {k} states",
            _without(model, keep, gone, new_cards),
            {"merged": (keep, gone)},
        )


def _node_relocations(model: HLCModel, mi, index) -> Iterator[tuple]:
    """``NR``: a hidden child moves to a hidden neighbour of its parent, and a hidden node's parent to one of
    its hidden children (the two swap places on the path); a leaf moves to the hidden node
    whose leaves share most mutual information with it, when that beats its present siblings."""
    cards = {n: model.card(n) for n in model.nodes}
    direct = {g: [x for x in model.neighbors(g) if not model.is_hidden(x)] for g in model.hidden}
    below = nx.bfs_tree(model.graph, model.root)
    for h in model.hidden:
        if len(model.neighbors(h)) <= 2:
            continue  # h would be left with one neighbour
        for x in model.children(h):
            if model.is_hidden(x):
                inside = set(nx.descendants(below, x))
                targets = [g for g in model.neighbors(h) if model.is_hidden(g) and g != x and g not in inside]
            else:
                here = _affinity(mi, index, [x], [s for s in direct[h] if s != x])
                scored = [(g, _affinity(mi, index, [x], direct[g])) for g in model.hidden if g != h and direct[g]]
                best = max(scored, key=lambda t: t[1], default=None)
                targets = [best[0]] if best and best[1] > here else []
            for g in targets:
                edges = [(p, c) for p, c in model.edges if c != x] + [(g, x)]
                yield ("NR", f"move {x} from {h} to {g}", _rebuild(model, cards, model.hidden, edges))
        up = model.parent(h)
        for g in [] if up is None else [c for c in model.children(h) if model.is_hidden(c)]:
            # the parent's side moves down to a hidden child: the order of h and g on the path swaps
            edges = [(p, c) for p, c in model.edges if c != h] + [(up, g)]
            yield ("NR", f"move {up} from {h} to {g}", _rebuild(model, cards, model.hidden, edges))


def _state_changes(model: HLCModel) -> Iterator[tuple]:
    for h in model.hidden:
        k = model.card(h)
        yield ("SI", f"{h}: {k} -> {k + 1} states", model.with_card(h, k + 1))
        if k > 2:
            yield ("SD", f"{h}: {k} -> {k - 1} states", model.with_card(h, k - 1))


def iter_candidate_moves(
    model: HLCModel,
    mi: np.ndarray,
    index: Mapping[str, int],
    *,
    operators: Iterable[str] = OPERATORS,
    ni_per_node: int = 8,
    residual: Mapping[str, list[tuple[str, ...]]] | None = None,
) -> Iterator[Move]:
    """Every regular candidate of the chosen operators (see the module docstring), one at a time
    (building a candidate of a large tree takes milliseconds: a search under a time limit stops between them).

    ``mi`` is :func:`mutual_information` of the data, ``index`` maps each leaf
    to its column in ``mi``; ``ni_per_node`` bounds the ``NI`` groups of leaves per hidden node
    (:func:`_ni_groups`); ``residual`` adds, per hidden node, the groups of its children that the
    current fit leaves dependent (:func:`effdim.structure.residual.residual_groups`), proposed first.
    """
    operators = set(operators)
    sources = []
    if "NI" in operators:
        sources.append(_node_introductions(model, mi, index, ni_per_node, residual or {}))
    if "NR" in operators:
        sources.append(_node_relocations(model, mi, index))
    if "ND" in operators:
        sources.append(_node_deletions(model))
    if "NM" in operators:
        sources.append(_node_merges(model))
    if "NS" in operators:
        sources.append(_node_splits(model, mi, index, residual or {}))
    sources.append(m for m in _state_changes(model) if m[0] in operators)
    seen = set()
    for operator, text, new, *more in itertools.chain.from_iterable(sources):
        if new not in seen and is_regular(new):
            seen.add(new)
            fields = dict(more[0]) if more else {}
            free = changed_families(model, new) | fields.pop("also_free", frozenset())
            yield Move(operator, text, new, free, **fields)


def candidate_moves(
    model: HLCModel,
    mi: np.ndarray,
    index: Mapping[str, int],
    *,
    operators: Iterable[str] = OPERATORS,
    ni_per_node: int = 8,
    residual: Mapping[str, list[tuple[str, ...]]] | None = None,
) -> list[Move]:
    """:func:`iter_candidate_moves` as a list."""
    return list(iter_candidate_moves(model, mi, index, operators=operators, ni_per_node=ni_per_node, residual=residual))


def changed_families(old: HLCModel, new: HLCModel) -> frozenset:
    """Nodes of ``new`` whose family differs from ``old``'s: new nodes, nodes with another
    parent, and nodes whose own or whose parent's cardinality changed (both rooted as ``new``)."""
    if new.root in old and old.is_hidden(new.root) and old.root != new.root:
        old = old.rerooted(new.root)
    out = set()
    for x in new.nodes:
        parent = new.parent(x)
        if (
            x not in old
            or old.parent(x) != parent
            or old.card(x) != new.card(x)
            or (parent is not None and old.card(parent) != new.card(parent))
        ):
            out.add(x)
    return frozenset(out)
