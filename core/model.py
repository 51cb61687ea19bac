"""The hierarchical latent class (HLC) model: a tree of discrete variables.

An HLC model (Zhang 2002; Kocka & Zhang 2002, Section 2.2) is a tree whose
leaves are observed variables and whose internal nodes are hidden variables.
A latent class (LC) model is the special case with exactly one hidden node.
Every hidden node ``H`` with its neighbours ``Ne(H)`` induces a *local LC
model*: ``H`` hidden, ``Ne(H)`` treated as observed.

The model is directed away from a hidden root. Which hidden node is the root
does not change the set of distributions over the observed variables (the
tree is a decomposable undirected model), so :meth:`HLCModel.rerooted` keeps
the model's meaning.

Instances are immutable: every edit returns a new model, which keeps undo
stacks and caches simple and safe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

from .errors import EffdimError

__all__ = ["HLCModel", "ModelError", "NAME_PATTERN", "MAX_CARD", "MAX_DEPTH"]

#: A node name: starts with a letter or underscore, then letters, digits, ``_ . -``.
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


#: The largest cardinality of a node: 10**100. The closed forms (ds, dc, ...) stay exact far
#: beyond any real variable; a larger number can only be a typo or an attack on the arithmetic.
MAX_CARD = 10**100
#: The deepest tree: levels below the root. Trees are walked without recursion in this module
#: and :mod:`effdim.notation`; the limit keeps every other walk within Python's stack.
MAX_DEPTH = 200


class ModelError(EffdimError, ValueError):
    """An invalid model; the message names the culprit (node, edge, position)."""


@dataclass(frozen=True)
class _Node:
    card: int
    hidden: bool


class HLCModel:
    """A hierarchical latent class model rooted at a hidden node.

    Parameters
    ----------
    cards:
        Cardinality of every node, keyed by node name.
    hidden:
        Names of the hidden nodes; every other node is observed.
    edges:
        Undirected edges of the tree. The order of edges fixes the order of
        children, which the notation printer keeps.
    root:
        A hidden node to root the tree at; default: the first hidden node.
    min_observed_card:
        Smallest allowed observed cardinality (2). Local LC models use 1: a
        hidden neighbour with one state acts there as a constant variable.

    Examples
    --------
    Figure 2 of the paper, built from its parts and from notation:

    >>> cards = {"H1": 5, "H2": 3, "H3": 3, "O1": 2, "O2": 2, "O3": 2, "O4": 2, "O5": 2}
    >>> edges = [("H1", "H2"), ("H2", "O1"), ("H2", "O2"), ("H1", "O3"), ("H1", "H3"), ("H3", "O4"), ("H3", "O5")]
    >>> model = HLCModel(cards, ["H1", "H2", "H3"], edges)
    >>> model == HLCModel.parse("5(3(2,2),2,3(2,2))")
    True
    >>> model.nodes
    ['H1', 'H2', 'O1', 'O2', 'O3', 'H3', 'O4', 'O5']
    >>> model.card("H1"), model.neighbors("H2"), model.parent("O1"), model.is_lc
    (5, ['H1', 'O1', 'O2'], 'H2', False)
    >>> str(model.with_card("H1", 4)), str(model.without("H3"))
    ('4(3(2,2),2,3(2,2))', '5(3(2,2),2)')
    >>> HLCModel(cards, ["H1", "H2", "H3"], edges + [("O5", "O1")])
    Traceback (most recent call last):
    ...
    effdim.model.ModelError: the graph has a cycle: H1 - H2 - O1 - O5 - H3 - H1

    Raises
    ------
    ModelError
        If the graph is not a tree (cycle, disconnected), a leaf is hidden, an
        internal node is observed, a cardinality is out of range, or a name is
        invalid. The message names the offending node or edge.
    """

    __slots__ = ("_graph", "_root", "_parent", "_order", "_key", "_specs")

    def __init__(
        self,
        cards: Mapping[str, int],
        hidden: Iterable[str],
        edges: Iterable[tuple[str, str]],
        root: str | None = None,
        *,
        min_observed_card: int = 2,
    ):
        hidden = list(hidden)
        hidden_set = set(hidden)
        graph = nx.Graph()
        for name, card in cards.items():
            _check_name(name)
            is_hidden = name in hidden_set
            _check_card(name, card, 1 if is_hidden else min_observed_card, "hidden" if is_hidden else "observed")
            graph.add_node(name, spec=_Node(int(card), is_hidden))
        for name in hidden:
            if name not in graph:
                raise ModelError(f"hidden node {name!r} has no cardinality")
        for edge in edges:
            edge = tuple(edge)
            if len(edge) != 2:
                raise ModelError(f"edge {edge!r} must join exactly two nodes")
            u, v = edge
            for end in (u, v):
                if end not in graph:
                    raise ModelError(f"edge {u!r} - {v!r} names unknown node {end!r}")
            if u == v:
                raise ModelError(f"cycle: node {u!r} is joined to itself")
            if graph.has_edge(u, v):
                raise ModelError(f"cycle: edge {u!r} - {v!r} is given twice")
            graph.add_edge(u, v)
        _check_tree(graph)
        if root is None:
            root = next((n for n in graph if graph.nodes[n]["spec"].hidden), None)
        if root not in graph:
            raise ModelError(f"root {root!r} is not a node of the model")
        if not graph.nodes[root]["spec"].hidden:
            raise ModelError(f"root {root!r} is observed; the root must be a hidden node")
        self._graph = graph
        self._specs = {n: graph.nodes[n]["spec"] for n in graph}  # a plain dict: every query reads it
        self._root = root
        self._parent, self._order = _orient(graph, root)
        self._key = (
            root,
            frozenset((n, graph.nodes[n]["spec"]) for n in graph),
            frozenset(frozenset(e) for e in graph.edges),
        )

    # ------------------------------------------------------------------ build
    @classmethod
    def lc(
        cls,
        hidden_card: int,
        observed_cards: Iterable[int],
        hidden_name: str = "H1",
        observed_names: Iterable[str] | None = None,
        *,
        min_observed_card: int = 2,
    ) -> HLCModel:
        """The LC model ``hidden_card : observed_cards`` (paper, Figure 1).

        Examples
        --------
        >>> HLCModel.lc(3, [2, 2, 2, 2])
        HLCModel.parse('3:2,2,2,2')
        """
        observed_cards = list(observed_cards)
        if observed_names is None:
            observed_names = [f"O{i + 1}" for i in range(len(observed_cards))]
        observed_names = list(observed_names)
        if len(observed_names) != len(observed_cards):
            raise ModelError("need one name per observed variable")
        cards = {hidden_name: hidden_card, **dict(zip(observed_names, observed_cards))}
        if len(cards) != len(observed_names) + 1:
            raise ModelError("duplicate node names in the LC model")
        return cls(
            cards, [hidden_name], [(hidden_name, o) for o in observed_names], min_observed_card=min_observed_card
        )

    # ---------------------------------------------------------------- queries
    @property
    def root(self) -> str:
        """The hidden root node."""
        return self._root

    @property
    def graph(self) -> nx.Graph:
        """A copy of the undirected tree, nodes carrying ``card`` and ``hidden``."""
        out = nx.Graph()
        for n in self._order:
            spec = self._spec(n)
            out.add_node(n, card=spec.card, hidden=spec.hidden)
        out.add_edges_from(self._graph.edges)
        return out

    @property
    def nodes(self) -> list[str]:
        """All nodes in pre-order from the root (parents before children)."""
        return list(self._order)

    @property
    def hidden(self) -> list[str]:
        """Hidden nodes in pre-order."""
        return [n for n in self._order if self._spec(n).hidden]

    @property
    def observed(self) -> list[str]:
        """Observed nodes (leaves) in pre-order: the order of data columns."""
        return [n for n in self._order if not self._spec(n).hidden]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Directed edges ``(parent, child)`` in pre-order of the child."""
        return [(self._parent[n], n) for n in self._order if n != self._root]

    @property
    def is_lc(self) -> bool:
        """True when the model has exactly one hidden node (an LC model)."""
        return len(self.hidden) == 1

    def __contains__(self, node: object) -> bool:
        return node in self._graph

    def __len__(self) -> int:
        return self._graph.number_of_nodes()

    def card(self, node: str) -> int:
        """Number of states of ``node``."""
        return self._spec(node).card

    def is_hidden(self, node: str) -> bool:
        """True for a hidden (latent) node."""
        return self._spec(node).hidden

    def parent(self, node: str) -> str | None:
        """Parent of ``node`` in the rooted tree; ``None`` for the root."""
        self._spec(node)
        return self._parent.get(node)

    def children(self, node: str) -> list[str]:
        """Children of ``node`` in the rooted tree, in notation order."""
        parent = self.parent(node)
        return [n for n in self._graph.adj[node] if n != parent]

    def neighbors(self, node: str) -> list[str]:
        """``Ne(node)``: parent (if any) followed by the children."""
        parent = self.parent(node)
        return ([parent] if parent is not None else []) + self.children(node)

    def local_lc(self, hidden_node: str) -> HLCModel:
        """The local LC model induced by ``hidden_node`` and ``Ne(hidden_node)``.

        Paper, Section 2.2: the hidden variable is ``hidden_node``, the observed
        variables are its neighbours (hidden neighbours count as observed).

        Examples
        --------
        Figure 2's local models are ``5:3,3,2`` and twice ``3:5,2,2`` (Section 4):

        >>> figure2 = HLCModel.parse("5(3(2,2),2,3(2,2))")
        >>> [str(figure2.local_lc(h)) for h in figure2.hidden]
        ['H1:5(H2:3,O3:2,H3:3)', 'H2:3(H1:5,O1:2,O2:2)', 'H3:3(H1:5,O4:2,O5:2)']
        """
        if not self.is_hidden(hidden_node):
            raise ModelError(f"node {hidden_node!r} is observed; local LC models belong to hidden nodes")
        neighbours = self.neighbors(hidden_node)
        return HLCModel.lc(
            self.card(hidden_node),
            [self.card(n) for n in neighbours],
            hidden_name=hidden_node,
            observed_names=neighbours,
            min_observed_card=1,
        )

    # ------------------------------------------------------------------ edits
    def rerooted(self, node: str) -> HLCModel:
        """The same model rooted at hidden ``node`` (same observed distributions).

        Examples
        --------
        >>> str(HLCModel.parse("5(3(2,2),2,3(2,2))").rerooted("H2"))
        'H2:3(H1:5(O3:2,H3:3(O4:2,O5:2)),O1:2,O2:2)'
        """
        if node not in self._graph:
            raise ModelError(f"no node named {node!r}")
        if not self.is_hidden(node):
            raise ModelError(f"cannot root at observed node {node!r}; the root must be hidden")
        return self._rebuild(root=node)

    def with_card(self, node: str, card: int) -> HLCModel:
        """A copy with ``node`` set to ``card`` states."""
        cards = self._cards()
        if node not in cards:
            raise ModelError(f"no node named {node!r}")
        cards[node] = card
        return self._rebuild(cards=cards)

    def renamed(self, old: str, new: str) -> HLCModel:
        """A copy with node ``old`` called ``new``."""
        if old not in self._graph:
            raise ModelError(f"no node named {old!r}")
        if new != old and new in self._graph:
            raise ModelError(f"duplicate name: a node named {new!r} exists already")
        rename = lambda n: new if n == old else n  # noqa: E731
        cards = {rename(n): c for n, c in self._cards().items()}
        return HLCModel(
            cards,
            [rename(n) for n in self.hidden],
            [(rename(u), rename(v)) for u, v in self.edges],
            rename(self._root),
        )

    def with_child(self, parent: str, name: str, card: int, hidden: bool = False) -> HLCModel:
        """A copy with a new child ``name`` under ``parent``.

        A new hidden child needs children of its own to be a valid model; use
        :meth:`with_hidden_child` to add one with its leaves.
        """
        if parent not in self._graph:
            raise ModelError(f"no node named {parent!r}")
        if name in self._graph:
            raise ModelError(f"duplicate name: a node named {name!r} exists already")
        if not self.is_hidden(parent):
            raise ModelError(f"cannot add a child to observed node {parent!r}: observed nodes are leaves")
        cards = {**self._cards(), name: card}
        hidden_nodes = self.hidden + ([name] if hidden else [])
        return HLCModel(cards, hidden_nodes, self.edges + [(parent, name)], self._root)

    def with_hidden_child(self, parent: str, name: str, card: int, leaves: Mapping[str, int]) -> HLCModel:
        """A copy with a new hidden child ``name`` of ``parent`` carrying observed ``leaves``."""
        if parent not in self._graph:
            raise ModelError(f"no node named {parent!r}")
        if not self.is_hidden(parent):
            raise ModelError(f"cannot add a child to observed node {parent!r}: observed nodes are leaves")
        new_names = [name, *leaves]
        for n in new_names:
            if n in self._graph:
                raise ModelError(f"duplicate name: a node named {n!r} exists already")
        cards = {**self._cards(), name: card, **dict(leaves)}
        edges = self.edges + [(parent, name)] + [(name, leaf) for leaf in leaves]
        return HLCModel(cards, self.hidden + [name], edges, self._root)

    def without(self, node: str) -> HLCModel:
        """A copy with ``node`` removed together with its subtree (below the root)."""
        if node not in self._graph:
            raise ModelError(f"no node named {node!r}")
        if node == self._root:
            raise ModelError(f"cannot delete the root {node!r}; make another hidden node the root first")
        doomed = {node} | set(nx.descendants(nx.bfs_tree(self._graph, self._root), node))
        cards = {n: c for n, c in self._cards().items() if n not in doomed}
        edges = [(u, v) for u, v in self.edges if u not in doomed and v not in doomed]
        return HLCModel(cards, [h for h in self.hidden if h not in doomed], edges, self._root)

    def contracted(self, hidden_node: str) -> HLCModel:
        """A copy without ``hidden_node``, its two neighbours joined by an edge.

        Only defined for a hidden node with exactly two neighbours (the
        removal rule of regularization, Section 4 / Lemma 4.1 context).

        Examples
        --------
        >>> str(HLCModel.parse("2(2(2,2),2(2,2))").contracted("H1"))
        'H2:2(H3:2(O3:2,O4:2),O1:2,O2:2)'
        """
        if not self.is_hidden(hidden_node):
            raise ModelError(f"node {hidden_node!r} is observed; only hidden nodes can be contracted")
        ne = self.neighbors(hidden_node)
        if len(ne) != 2:
            raise ModelError(f"node {hidden_node!r} has {len(ne)} neighbours; contraction needs exactly two")
        cards = {n: c for n, c in self._cards().items() if n != hidden_node}
        edges = []  # the joining edge takes the removed node's place among its parent's children
        for u, v in self.edges:
            if v == hidden_node:
                edges.append((u, ne[1]))
            elif u != hidden_node:
                edges.append((u, v))
        if self._root == hidden_node:
            edges.insert(0, tuple(ne))
        hidden_nodes = [h for h in self.hidden if h != hidden_node]
        root = self._root
        if root == hidden_node:
            root = next(n for n in ne if self.is_hidden(n)) if any(self.is_hidden(n) for n in ne) else None
        return HLCModel(cards, hidden_nodes, edges, root)

    # ------------------------------------------------------------- dunders
    def __eq__(self, other: object) -> bool:
        return isinstance(other, HLCModel) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        from .notation import format_model

        return format_model(self)

    def __repr__(self) -> str:
        return f"HLCModel.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> HLCModel:
        """Parse model notation (see :mod:`effdim.notation`)."""
        from .notation import parse_model

        return parse_model(text)

    # ------------------------------------------------------------- helpers
    def _spec(self, node: str) -> _Node:
        try:
            return self._specs[node]
        except KeyError:
            raise ModelError(f"no node named {node!r}") from None

    def _cards(self) -> dict[str, int]:
        return {n: self._spec(n).card for n in self._order}

    def _rebuild(self, cards: dict[str, int] | None = None, root: str | None = None) -> HLCModel:
        return HLCModel(
            cards if cards is not None else self._cards(),
            self.hidden,
            self.edges,
            root if root is not None else self._root,
        )


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ModelError(f"invalid node name {name!r}: use a letter or '_' followed by letters, digits, '_', '.', '-'")


def _check_card(name: str, card: object, low: int, kind: str) -> None:
    if isinstance(card, bool) or not isinstance(card, int):
        raise ModelError(f"node {name!r}: cardinality must be an integer, got {card!r}")
    if card < low:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ModelError(f"node {name!r}: {article} {kind} node needs cardinality >= {low}, got {card}")
    if card > MAX_CARD:
        raise ModelError(f"node {name!r}: cardinality {_short_number(card)} is larger than the limit 1e100")


def _short_number(n: int) -> str:
    """A whole number of any size in at most a few dozen characters (``int.__str__`` refuses 4,300 digits)."""
    digits = n.bit_length() * 0.30103
    if digits < 30:
        return str(n)
    return f"about 1e{int(digits)} ({int(digits) + 1:,} digits)"


def _check_tree(graph: nx.Graph) -> None:
    if graph.number_of_nodes() == 0:
        raise ModelError("the model has no nodes")
    if not any(graph.nodes[n]["spec"].hidden for n in graph):
        raise ModelError("the model has no hidden node")
    if not nx.is_connected(graph):
        parts = sorted((sorted(c) for c in nx.connected_components(graph)), key=len)
        shown = " and ".join("{" + ", ".join(p[:4]) + (", ..." if len(p) > 4 else "") + "}" for p in parts[:2])
        raise ModelError(f"the graph is disconnected: {len(parts)} components, e.g. {shown}")
    if graph.number_of_edges() != graph.number_of_nodes() - 1:  # connected: a tree exactly when this holds
        cycle = nx.find_cycle(graph)
        path = " - ".join([u for u, _ in cycle] + [cycle[0][0]])
        raise ModelError(f"the graph has a cycle: {path}")
    for n in graph:
        spec = graph.nodes[n]["spec"]
        degree = graph.degree[n]
        if spec.hidden and degree < 2:
            raise ModelError(
                f"hidden node {n!r} is a leaf ({degree} neighbour{'s' if degree != 1 else ''}); "
                "leaves must be observed and hidden nodes need at least two neighbours"
            )
        if not spec.hidden and degree != 1:
            raise ModelError(
                f"observed node {n!r} is internal ({degree} neighbours: "
                f"{', '.join(map(str, graph.adj[n]))}); observed nodes must be leaves"
            )


def _orient(graph: nx.Graph, root: str) -> tuple[dict[str, str], list[str]]:
    """Parent map and pre-order (children in adjacency order) from ``root``."""
    parent: dict[str, str] = {}
    order: list[str] = []
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ModelError(f"the tree is more than {MAX_DEPTH} levels deep below {root!r} (the limit)")
        order.append(node)
        kids = [n for n in graph.adj[node] if n != parent.get(node)]
        for kid in kids:
            parent[kid] = node
        stack.extend((kid, depth + 1) for kid in reversed(kids))
    return parent, order
