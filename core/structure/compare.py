"""Comparing latent trees by the splits of their leaves (Robinson & Foulds 1981)."""

from __future__ import annotations

import networkx as nx

from ..errors import InvalidArgument
from ..model import HLCModel

__all__ = ["leaf_bipartitions", "robinson_foulds", "shape"]


def leaf_bipartitions(model: HLCModel) -> set[frozenset]:
    """The non-trivial splits of the leaves made by cutting each edge between hidden nodes.

    Each split is given by the side without the alphabetically first leaf, so
    splits compare across models and roots (Robinson & Foulds 1981).
    """
    graph = model.graph
    leaves = set(model.observed)
    first = min(leaves)
    out = set()
    for u, v in graph.edges:
        if not (model.is_hidden(u) and model.is_hidden(v)):
            continue
        graph.remove_edge(u, v)
        side = leaves & nx.node_connected_component(graph, u)
        graph.add_edge(u, v)
        if 2 <= len(side) <= len(leaves) - 2:
            out.add(frozenset(leaves - side if first in side else side))
    return out


def robinson_foulds(a: HLCModel, b: HLCModel) -> int:
    """Robinson-Foulds distance: the number of leaf splits in one tree but not the other.

    >>> from effdim import parse_model
    >>> a = parse_model("H1:2(A:2,B:2,H2:2(C:2,D:2,E:2))")
    >>> robinson_foulds(a, parse_model("X:2(C:2,D:2,E:2,Y:3(A:2,B:2))")), robinson_foulds(a, parse_model(
    ...     "H1:2(A:2,C:2,H2:2(B:2,D:2,E:2))"))
    (0, 2)
    """
    if set(a.observed) != set(b.observed):
        raise InvalidArgument("the trees have different leaves")
    return len(leaf_bipartitions(a) ^ leaf_bipartitions(b))


def shape(model: HLCModel) -> frozenset:
    """The model up to the names of its hidden nodes and its root: each hidden node as the leaf sets of its
    branches with its cardinality. Two models with equal shapes are the same model (the root of an HLC
    model can move to any hidden node without changing the distributions it represents: Zhang 2004,
    "Hierarchical latent class models for cluster analysis", JMLR 5).

    >>> from effdim import parse_model
    >>> shape(parse_model("H1:2(A:2,B:2,H2:3(C:2,D:2))")) == shape(parse_model("X:3(C:2,D:2,Y:2(A:2,B:2))"))
    True
    """
    graph = model.graph
    leaves = set(model.observed)
    out = set()
    for h in model.hidden:
        branches = frozenset(
            frozenset(leaves & nx.node_connected_component(graph.subgraph(set(graph) - {h}), n))
            for n in graph.neighbors(h)
        )
        out.add((branches, model.card(h)))
    return frozenset(out)
