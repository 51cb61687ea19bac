"""Learning the latent tree from data: structure search scored with the effective dimension.

Today's other searches (:mod:`effdim.search`) choose hidden cardinalities on
a tree the user draws. :func:`learn_structure` learns the tree itself, in the
manner of EAST (Chen, Zhang, Liu, Poon & Wang, "Model-based multidimensional
clustering of categorical data", Artificial Intelligence 176, 2012), with any
score of :mod:`effdim.scores` driving it (docs/structure.md).

Start
    The LC model over all columns, or (``start="islands"``, the default) a
    grouping by mutual information: every column joins its nearest neighbour
    (largest empirical mutual information); each connected group gets a
    binary hidden parent, and the hidden parents are joined by a maximum
    spanning tree of the groups' largest pairwise mutual information (Chow &
    Liu 1968). Or any model given by the caller.

Operators (EAST, Section 4)
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
    irregular models are equivalent to smaller regular ones), so
    Corollary 4.1 gives ``de = ds - sum_H (ds(M_H) - de(M_H))`` over the
    local LC models ``M_H``. A move changes only the local LC models of the
    hidden nodes whose neighbourhood it changes; :class:`LocalDe` recomputes
    just those (and the local ranks are cached per ``(|H|, neighbour
    cardinalities)`` in :mod:`effdim.dimensions`).

Candidates: restricted likelihood (EAST, Section 5)
    Each candidate inherits every CPT of the current fit that it shares
    (:func:`transfer_parameters`); only the families the move changes
    (:func:`changed_families`) are re-estimated, by EM on the few nodes
    around them with the rest of the tree entering as fixed per-pattern
    messages (:func:`local_fit`). Three starts: the exact inheritance (which
    reproduces the current distribution for ``NI`` and ``SI``, so their
    restricted log-likelihood never falls below the current one) and two
    with the touched families perturbed.

Acceptance
    EAST's phases: the moves that never add parameters (NR, ND, SD) first,
    ranked by restricted score gain; when none is accepted, the expansions
    (NI, SI), ranked by EAST's improvement ratio (gain per added parameter).
    The best ones are refit
    by full EM (every family free) warm-started from their restricted
    estimate, so the refit log-likelihood is never below the restricted one;
    the first that wins against the current model under the one tie rule of
    :func:`effdim.scores.best_index` (better by more than the tie tolerance,
    or tied and smaller) is accepted. Models already visited are never
    proposed again. The search stops when no candidate does, at ``max_time`` or
    when ``cancel`` is set (:class:`effdim.em.Cancelled`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from .data import DataError, Dataset
from .dimensions import local_dimensions
from .distribution import Parameters
from .em import Cancelled, EMResult, e_step, fit_em
from .errors import InvalidArgument
from .model import NAME_PATTERN, HLCModel
from .notation import format_model
from .regularity import is_regular
from .scores import TIE_TOLERANCE, best_index, criterion, score_fit
from .search import FitResult
from .validation import as_dataset, as_seed, check_int

__all__ = [
    "Cancelled",
    "LocalDe",
    "Move",
    "Step",
    "StructureProgress",
    "StructureResult",
    "EXPANSION",
    "OPERATORS",
    "candidate_moves",
    "candidate_starts",
    "changed_families",
    "islands_model",
    "leaf_bipartitions",
    "learn_structure",
    "local_fit",
    "LocalFit",
    "robinson_foulds",
    "mutual_information",
    "transfer_parameters",
]

#: Operator codes, in the order EAST applies its phases: expansion, adjustment, simplification.
OPERATORS = ("NI", "SI", "NR", "ND", "SD")
#: The expansion operators: they add parameters, so EAST ranks them by score gain per added parameter.
EXPANSION = ("NI", "SI")


# ------------------------------------------------------------- mutual information
def mutual_information(dataset: Dataset) -> np.ndarray:
    """Empirical mutual information (nats) of every pair of columns, ``(n, n)``, zero diagonal.

    Each pair uses the rows where both cells are present (pairwise deletion).
    """
    pats, w = dataset.patterns, dataset.counts
    cards = dataset.cardinalities
    n = len(cards)
    mi = np.zeros((n, n))
    for i, j in itertools.combinations(range(n), 2):
        ok = (pats[:, i] >= 0) & (pats[:, j] >= 0)
        table = np.zeros((cards[i], cards[j]))
        np.add.at(table, (pats[ok, i], pats[ok, j]), w[ok])
        total = table.sum()
        if total <= 0:
            continue
        p = table / total
        outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
        used = p > 0
        mi[i, j] = mi[j, i] = max(0.0, float(np.sum(p[used] * np.log(p[used] / outer[used]))))
    return mi


def islands_model(dataset: Dataset, mi: np.ndarray | None = None) -> HLCModel:
    """The mutual-information start: nearest-neighbour groups under binary hidden parents.

    Every column points to the column it shares most mutual information with;
    the connected groups of these links are the islands. One island gives the
    binary LC model; otherwise each island gets a binary hidden parent and
    the parents form the maximum spanning tree (Chow & Liu 1968) of the
    largest mutual information between their members. ``dataset.columns``
    must be valid node names (see :func:`learn_structure`). An island that
    would be irregular (Section 4: a hidden node with two neighbours, one of
    them hidden) is merged into the island it is closest to.
    """
    mi = mutual_information(dataset) if mi is None else mi
    cols = list(dataset.columns)
    n = len(cols)
    if n < 3:
        return HLCModel.lc(2, dataset.cardinalities, hidden_name=_fresh(cols, 1)[0], observed_names=cols)
    links = nx.Graph()
    links.add_nodes_from(range(n))
    for i in range(n):
        links.add_edge(i, int(np.argmax(np.where(np.arange(n) == i, -np.inf, mi[i]))))
    groups = [sorted(g) for g in nx.connected_components(links)]
    while len(groups) > 1 and min(len(g) for g in groups) < 2:
        small = min(groups, key=len)
        groups.remove(small)
        near = max(groups, key=lambda g: mi[np.ix_(small, g)].max())
        near.extend(small)
    if len(groups) == 1:
        return HLCModel.lc(2, dataset.cardinalities, hidden_name=_fresh(cols, 1)[0], observed_names=cols)
    names = _fresh(cols, len(groups))
    between = nx.Graph()
    for a, b in itertools.combinations(range(len(groups)), 2):
        between.add_edge(a, b, weight=float(mi[np.ix_(groups[a], groups[b])].max()))
    tree = nx.maximum_spanning_tree(between)
    cards = {h: 2 for h in names}
    cards.update({c: k for c, k in zip(cols, dataset.cardinalities)})
    edges = [(names[a], names[b]) for a, b in tree.edges]
    edges += [(names[g], cols[i]) for g, group in enumerate(groups) for i in group]
    root = names[max(range(len(groups)), key=lambda g: tree.degree[g])]
    return HLCModel(cards, names, edges, root)


def _fresh(taken: Iterable[str], count: int) -> list[str]:
    """``count`` hidden-node names ``H1, H2, ...`` not in ``taken``."""
    taken = set(taken)
    out: list[str] = []
    k = 1
    while len(out) < count:
        name = f"H{k}"
        if name not in taken:
            out.append(name)
        k += 1
    return out


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


# --------------------------------------------------------------------------- moves
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


# ------------------------------------------------------------ parameter transfer
def transfer_parameters(params: Parameters, model: HLCModel) -> Parameters:
    """Warm-start CPTs for ``model`` from the fit ``params`` of a neighbouring model.

    The result rooted as ``model``; ``params`` is re-rooted there first when
    the old root is still a hidden node. Every node keeps its old table,
    resized where cardinalities changed: a state that ``SI`` adds splits the
    largest state of the node in two (half the probability each, the same
    rows for its children), a state that ``SD`` removes is the smallest one
    (its probability shared out by renormalising). A new hidden node copies
    its parent (identity table) when their cardinalities agree. So ``NI`` and
    ``SI`` start at exactly the current distribution.
    """
    old = params.model
    if model.root in old and old.is_hidden(model.root) and old.root != model.root:
        params = params.rerooted(model.root)
        old = params.model
    marg = params.marginals()
    split = {n: int(np.argmax(marg[n])) for n in old.nodes}
    drop = {n: int(np.argmin(marg[n])) for n in old.nodes}

    def resize_cols(table: np.ndarray, node: str, k: int) -> np.ndarray:
        have = table.shape[1]
        if k > have:
            extra = table[:, [split[node]] * (k - have)] / (k - have + 1)
            table = table.copy()
            table[:, split[node]] /= k - have + 1
            table = np.concatenate([table, extra], axis=1)
        elif k < have:
            keep = [s for s in range(have) if s != drop[node]][:k]
            table = table[:, keep]
        return table

    def resize_rows(table: np.ndarray, parent: str, k: int) -> np.ndarray:
        have = table.shape[0]
        if k > have:
            return np.concatenate([table, table[[split[parent]] * (k - have)]], axis=0)
        if k < have:
            return table[[s for s in range(have) if s != drop[parent]][:k]]
        return table

    cpts: dict[str, np.ndarray] = {}
    for node in model.nodes:
        k = model.card(node)
        parent = model.parent(node)
        if node not in old:  # a node introduced: a copy of its parent
            kp = model.card(parent)
            table = np.eye(kp, k) if kp == k else np.full((kp, k), 1.0 / k)
        elif parent is None:
            table = resize_cols(marg[node][None, :], node, k)
        else:
            before = old.parent(node)
            table = resize_cols(marg[node][None, :] if before is None else params.cpts[node], node, k)
            kp = model.card(parent)
            if before == parent:
                table = resize_rows(table, parent, kp)
            elif table.shape[0] != kp:  # moved under a parent of another size: no rows to reuse
                table = np.repeat(resize_cols(marg[node][None, :], node, k), kp, axis=0)
        table = np.maximum(np.asarray(table, dtype=float), 0.0)
        sums = table.sum(axis=-1, keepdims=True)  # 0 where SD dropped the only state a row used: uniform then
        table = np.where(sums > 0, table / np.where(sums > 0, sums, 1.0), 1.0 / table.shape[-1])
        cpts[node] = table[0] if parent is None else table
    return Parameters(model, cpts)


def _perturbed(params: Parameters, free: Iterable[str], rng: np.random.Generator, weight: float) -> Parameters:
    """``params`` with the CPTs of ``free`` mixed with random Dirichlet(1) rows (``weight`` of noise)."""
    cpts = dict(params.cpts)
    for node in sorted(free):  # sorted: the random stream must not depend on set order (hash seed)
        table = cpts[node]
        noise = rng.dirichlet(np.ones(table.shape[-1]), size=table.shape[:-1] or None)
        cpts[node] = (1 - weight) * table + weight * noise
    return Parameters(params.model, cpts)


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


@dataclass(frozen=True)
class LocalFit:
    """A candidate fitted by :func:`local_fit`: the ``model``, its ``params`` (untouched families
    as in the current fit), the restricted ``loglik`` (the whole tree's log-likelihood at ``params``),
    ``n`` and the EM ``n_iter`` of the best start."""

    model: HLCModel
    params: Parameters
    loglik: float
    n: float
    n_iter: int


@dataclass(frozen=True)
class LocalCounts:
    """A :class:`LocalFit` with the expected counts of one exact E-step: what
    :func:`effdim.scores.score_fit` needs for the Cheeseman-Stutz scores."""

    model: HLCModel
    params: Parameters
    loglik: float
    expected_counts: dict
    n: float
    prior: float | None = None


class Messages:
    """The current fit and its per-pattern messages (:func:`effdim.em.messages`), computed once per
    search step and shared by every candidate's :func:`local_fit`."""

    def __init__(self, params: Parameters, data: Any):
        from .em import messages

        self.params = params
        self.md, self.below, self.outside = messages(params, data)


def candidate_starts(params: Parameters, move: Move, count: int = 3, seed: Any = None) -> list[Parameters]:
    """Starting points of a candidate's EM: the exact transfer of the current fit ``params``
    (:func:`transfer_parameters`), then ``count - 1`` with the changed families half mixed
    with random Dirichlet(1) rows."""
    rng = as_seed(seed)
    warm = transfer_parameters(params, move.model)
    return [warm] + [_perturbed(warm, move.free, rng, 0.5) for _ in range(max(0, count - 1))]


def local_fit(data: Any, move: Move, params: Parameters, *, starts: int = 3, max_iter: int = 32,
              tol: float = 1e-6, seed: Any = None, prior: float | None = None, cancel: Any = None,
              messages: Messages | None = None) -> LocalFit:
    """Local EM of a candidate: the restricted likelihood of EAST (Chen et al. 2012, Section 5).

    Only the CPTs of ``move.free`` (:func:`changed_families`) are fitted;
    every other CPT keeps its value in ``params``, the current fit (carried
    over by :func:`transfer_parameters`). With those fixed, each pattern's
    likelihood depends on the free families only through fixed messages: the
    *region* is the smallest subtree holding the free nodes with their old
    and new parents; the subtrees hanging off it are unchanged from the
    current model, and so is everything outside its top node, so the
    current fit's messages (``messages``, computed once per search step)
    give their evidence exactly. EM then runs on the region alone, a few
    nodes per pattern instead of the whole tree, and its log-likelihood *is*
    the whole tree's at the returned parameters.

    Starts: the exact transfer, then ``starts - 1`` with the free CPTs half
    mixed with random rows, all run together; no pruning (the exact transfer
    is often a fixed point of EM: an identity table, a state split in two
    equal halves). ``prior`` adds pseudo-counts as in :func:`effdim.em.fit_em`.
    """
    if messages is None:
        messages = Messages(params, data)
    inits = candidate_starts(messages.params, move, starts, seed)
    warm = inits[0]
    region = _Region(move, messages, warm)
    if cancel is not None and cancel.is_set():
        raise Cancelled("structure search cancelled")
    thetas, ll, n_iter = region.fit(inits, max_iter, tol, float(prior or 0.0))
    fitted = Parameters(move.model, {**warm.cpts, **thetas})
    return LocalFit(move.model, fitted, ll, messages.md.n_rows, n_iter)


class _Region:
    """The nodes around a move's free families and the fixed per-pattern evidence at its boundary.

    Linear space with per-pattern scaling: ``U[x]`` is proportional to
    ``P(evidence below x | x)`` within the region, ``M[x] = theta_x U[x]`` its
    message to the parent; posteriors follow as ``post_p theta U / M``.
    Arrays carry the starts on their first axis.
    """

    def __init__(self, move: Move, cur: Messages, warm: Parameters):
        from .em import TINY

        model, free = move.model, move.free
        old = cur.params.model
        anchor = set(free) | {model.parent(x) for x in free if model.parent(x) is not None}
        anchor |= {old.parent(x) for x in free if x in old and old.parent(x) in model}
        graph = model.graph
        first = next(iter(sorted(anchor)))
        nodes = set()
        for x in anchor:
            nodes.update(nx.shortest_path(graph, x, first))
        order = [x for x in model.nodes if x in nodes]  # pre-order of the candidate: the top first
        top = order[0]
        self.order, self.top, self.free = order, top, free
        self.parent = {x: model.parent(x) for x in order[1:]}
        self.kids = {x: [c for c in order if self.parent.get(c) == x] for x in order}
        self.top_free = top in free  # the candidate's root with a changed prior
        md = cur.md
        self.w, self.n = md.counts, md.n_rows
        col = {o: j for j, o in enumerate(md.observed)}
        log_ev: dict[str, np.ndarray] = {}
        for x in order:
            if not model.is_hidden(x):  # a leaf of the region: its value (or nothing, when missing)
                values = md.patterns[:, col[x]]
                e = np.where(np.arange(model.card(x))[:, None] == values[None, :], 0.0, np.log(TINY))
                e[:, values < 0] = 0.0
                log_ev[x] = e
                continue
            e = np.zeros((model.card(x), md.n_patterns))
            for c in model.children(x):
                if c in nodes:
                    continue
                table = np.log(np.maximum(warm.cpts[c], TINY))  # frozen: the current fit's table
                if model.is_hidden(c):
                    e += _logmatvec(table, cur.below[c])
                else:
                    values = md.patterns[:, col[c]]
                    e += np.where(values[None, :] >= 0, table[:, np.maximum(values, 0)], 0.0)
            if x == top and not self.top_free:
                e += np.log(np.maximum(warm.cpts[x], TINY))[:, None] if model.parent(x) is None else cur.outside[x]
            log_ev[x] = e
        self.scale = sum(e.max(axis=0) for e in log_ev.values())  # (m,) log of the factored-out maxima
        self.ev = {x: np.exp(e - e.max(axis=0)) for x, e in log_ev.items()}

    def fit(self, inits: list, max_iter: int, tol: float, prior: float) -> tuple[dict, float, int]:
        """EM from every start at once; the free CPTs, log-likelihood and steps of the best start."""
        learn = [x for x in self.order if x in self.free and (x != self.top or self.top_free)]
        thetas = {x: np.stack([np.atleast_2d(p.cpts[x]) for p in inits]) for x in self.order if x != self.top}
        if self.top_free:
            thetas[self.top] = np.stack([np.atleast_2d(p.cpts[self.top]) for p in inits])  # (S, 1, k)
        ll, counts = self._estep(thetas)
        steps = 0
        for steps in range(1, max_iter + 1):
            for x in learn:
                c = counts[x] + prior
                rows = c.sum(axis=-1, keepdims=True)
                thetas[x] = np.divide(c, rows, out=thetas[x].copy(), where=rows > 0)
            new, counts = self._estep(thetas)
            rise, ll = new - ll, new
            if np.max(rise) < tol * self.n:
                break
        s = int(np.argmax(ll))
        out = {x: (thetas[x][s, 0] if x == self.top else thetas[x][s]) for x in learn}
        return out, float(ll[s]), steps

    def _estep(self, thetas: dict) -> tuple[np.ndarray, dict]:
        U, M, logc = {}, {}, self.scale.copy()
        S = next(iter(thetas.values())).shape[0] if thetas else 1
        logc = np.broadcast_to(logc, (S, logc.size)).copy()
        for x in reversed(self.order):
            u = np.broadcast_to(self.ev[x], (S, *self.ev[x].shape)).copy()
            for c in self.kids[x]:
                u *= M[c]
            top = u.max(axis=1, keepdims=True)  # rescale per pattern against underflow
            top = np.maximum(top, 1e-300)
            u /= top
            logc += np.log(top[:, 0, :])
            U[x] = u
            if x != self.top:
                M[x] = np.maximum(np.einsum("spk,skm->spm", thetas[x], u), 1e-300)
        root = U[self.top] * thetas[self.top][:, 0, :, None] if self.top_free else U[self.top]
        total = root.sum(axis=1)  # (S, m)
        ll = (np.log(total) + logc) @ self.w
        post = {self.top: root / total[:, None, :]}
        counts = {}
        if self.top_free:
            counts[self.top] = (post[self.top] @ self.w)[:, None, :]
        for x in self.order[1:]:
            p = self.parent[x]
            joint = (post[p] / M[x])[:, :, None, :] * thetas[x][:, :, :, None] * U[x][:, None, :, :]
            counts[x] = joint @ self.w
            post[x] = joint.sum(axis=1)
        return ll, counts


def _logmatvec(log_table: np.ndarray, log_vec: np.ndarray) -> np.ndarray:
    """``log sum_c exp(log_table[h, c] + log_vec[c, p])`` for every ``h, p``: a message up one edge."""
    from scipy.special import logsumexp

    return logsumexp(log_table[:, :, None] + log_vec[None, :, :], axis=1)


# --------------------------------------------------------------- local de updates
class LocalDe:
    """``ds`` and ``de`` of regular models, updated locally by Corollary 4.1.

    ``de(M) = ds(M) - sum_H deficit(M_H)`` over the local LC models ``M_H``
    (Kocka & Zhang 2002, Corollary 4.1; :mod:`effdim.dimensions`). The
    deficit of a hidden node depends only on ``|H|`` and its neighbours'
    cardinalities; :meth:`update` recomputes it only for hidden nodes whose
    key changed, and counts them in :attr:`recomputed`.
    """

    def __init__(self, model: HLCModel):
        self.recomputed = 0
        self._keys: dict[str, tuple] = {}
        self._deficits: dict[str, int] = {}
        self.model = model
        self._refresh(model, self._keys, self._deficits)

    @staticmethod
    def _key(model: HLCModel, h: str) -> tuple:
        return model.card(h), tuple(sorted(model.card(n) for n in model.neighbors(h)))

    def _refresh(self, model: HLCModel, keys: dict, deficits: dict) -> None:
        for h in model.hidden:
            key = self._key(model, h)
            if keys.get(h) != key:
                keys[h] = key
                deficits[h] = local_dimensions(model, h).deficit
                self.recomputed += 1
        for h in set(keys) - set(model.hidden):
            del keys[h], deficits[h]

    def dims(self, model: HLCModel) -> tuple[int, int]:
        """``(ds, de)`` of the regular ``model`` (a neighbour of the current one), without moving to it."""
        from .bounds import standard_dimension

        keys, deficits = dict(self._keys), dict(self._deficits)
        self._refresh(model, keys, deficits)
        ds = standard_dimension(model)
        return ds, ds - sum(deficits.values())

    def update(self, model: HLCModel) -> tuple[int, int]:
        """Move to ``model``; return its ``(ds, de)``."""
        from .bounds import standard_dimension

        self._refresh(model, self._keys, self._deficits)
        self.model = model
        ds = standard_dimension(model)
        return ds, ds - sum(self._deficits.values())


# ------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Step:
    """One accepted move: operator, sentence, the new model, its refit score, the
    ``gain`` over the previous model, its log-likelihood after full EM (``loglik``)
    and after local EM on the touched families (``local_loglik``), ``ds``, ``de``."""

    operator: str
    text: str
    model: HLCModel
    score: float
    gain: float
    loglik: float
    local_loglik: float
    ds: int
    de: int

    def to_json(self) -> dict[str, Any]:
        return {"operator": self.operator, "move": self.text, "model": format_model(self.model),
                "score": self.score, "gain": self.gain, "loglik": self.loglik,
                "local_loglik": self.local_loglik, "ds": self.ds, "de": self.de}


@dataclass(frozen=True)
class StructureProgress:
    """What a ``progress`` callback receives: the current best ``model`` and its ``score``,
    accepted ``steps`` and evaluated ``candidates`` so far, ``elapsed`` seconds, and ``phase``."""

    model: HLCModel
    score: float
    steps: int
    candidates: int
    elapsed: float
    phase: str


@dataclass(frozen=True)
class StructureResult:
    """The outcome of :func:`learn_structure`.

    ``fit`` is the final model fitted and scored (:class:`effdim.search.FitResult`;
    its ``de`` comes from :func:`effdim.dimensions.dimensions`, and agrees with
    the local updates); ``steps`` the accepted moves; ``start`` the start
    model's fit; ``stopped`` why the search ended (``"converged"``: no
    candidate improves the score, or ``"max_time"``).
    """

    fit: FitResult
    score: str
    start: FitResult
    steps: tuple[Step, ...]
    candidates: int
    local_em_seconds: float
    full_em_seconds: float
    local_refits: int
    seconds: float
    stopped: str
    columns: dict = field(default_factory=dict)

    @property
    def model(self) -> HLCModel:
        return self.fit.model

    def to_json(self) -> dict[str, Any]:
        """``model`` (leaves named after the data columns), ``loglik``, every score, ``ds``, ``de``,
        ``steps`` (each with its ``gain``), and how the search ran."""
        out = self.fit.to_json()
        out.pop("card", None)
        out.update({
            "score": self.score,
            "start": format_model(self.start.model),
            "start_score": self.start.score(self.score),
            "steps": [s.to_json() for s in self.steps],
            "candidates": self.candidates,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
        })
        if self.columns:
            out["columns"] = dict(self.columns)
        return out


# ------------------------------------------------------------------------- search
def _named_dataset(dataset: Any, mapping: Mapping[str, str] | None) -> tuple[Dataset, dict[str, str]]:
    """The data with every column renamed to its leaf name (``mapping`` is leaf -> column)."""
    dataset = as_dataset(dataset)
    mapping = dict(mapping or {})
    leaf_of = {}
    for leaf, column in mapping.items():
        dataset.index(column)  # raises naming the column
        if column in leaf_of:
            raise DataError(f"column {column!r} is mapped to two leaves, {leaf_of[column]!r} and {leaf!r}")
        leaf_of[column] = leaf
    names = [leaf_of.get(c, c) for c in dataset.columns]
    for column, name in zip(dataset.columns, names):
        if not NAME_PATTERN.match(name):
            raise DataError(f"column {column!r} cannot name a leaf (use a letter or '_' followed by letters, "
                            "digits, '_', '.', '-'); name its leaf with mapping={leaf: column} "
                            "(--map LEAF=COLUMN in the CLI)")
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise DataError(f"two columns would give leaves named {dup!r}; rename one with a mapping")
    for column, states in zip(dataset.columns, dataset.states):
        if len(states) < 2:
            what = f"a single value ({states[0]!r})" if states else "no values (every cell is missing)"
            raise DataError(f"column {column!r} has {what}; it carries no information about the others: drop it")
    if len(names) < 3:
        raise DataError(f"a latent tree needs at least 3 columns; the data have {len(names)}")
    renamed = Dataset(columns=tuple(names), states=dataset.states, patterns=dataset.patterns,
                      counts=dataset.counts, n_rows=dataset.n_rows, n_missing=dataset.n_missing,
                      source=dataset.source, count_column=dataset.count_column)
    return renamed, dict(zip(names, dataset.columns))


def learn_structure(
    dataset: Any,
    *,
    score: str = "bic+",
    start: str | HLCModel = "islands",
    mapping: Mapping[str, str] | None = None,
    operators: Iterable[str] = OPERATORS,
    restarts: int = 5,
    seed: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    cs_prior: Any = None,
    max_time: float | None = None,
    pairs_per_node: int = 3,
    tries: int = 3,
    local_starts: int = 3,
    local_iter: int = 32,
    local_tol: float = 1e-6,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
) -> StructureResult:
    """Learn an HLC model (tree and cardinalities) from ``dataset`` by EAST-style search.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset` or pandas DataFrame; every column is a leaf,
        named after the column (or as ``mapping``, leaf -> column, says).
    score:
        The score that drives the search: any name of :data:`effdim.scores.SCORES`.
    start:
        ``"islands"`` (mutual-information grouping, :func:`islands_model`),
        ``"lc"`` (the binary LC model), or an :class:`~effdim.model.HLCModel`
        over the leaves.
    operators:
        A subset of :data:`OPERATORS`.
    restarts, seed, tol, max_iter, prior:
        EM settings (:func:`effdim.em.fit_em`): ``restarts`` random starts fit
        the start model; ``tol`` and ``max_iter`` govern the start and final
        fits and the refit of each accepted move; ``local_tol`` the local EM.
    cs_prior:
        The Dirichlet prior of CS and CS+ (:func:`effdim.scores.score_fit`).
    max_time:
        Seconds after which no new candidate is evaluated; the best model so
        far is refit and returned (``stopped == "max_time"``).
    pairs_per_node, tries:
        ``NI`` pairs tried per hidden node (by mutual information); candidates
        refit per step.
    local_starts, local_iter:
        Starts and EM steps of the restricted (local) EM of each candidate.
    progress:
        Called with a :class:`StructureProgress` after every candidate and step.
    cancel:
        A ``threading.Event``; when set, :class:`Cancelled` is raised.

    Examples
    --------
    Data from a tree with two groups of three leaves; the search finds the groups:

    >>> from effdim import parse_model
    >>> from effdim.distribution import random_parameters, sample
    >>> truth = parse_model("2(2,2,2,2(2,2,2))")
    >>> data = sample(random_parameters(truth, 0, concentration=0.3), 5000, 1)
    >>> result = learn_structure(data, score="bic+", seed=0)
    >>> print(result.model, robinson_foulds(result.model, truth), result.stopped)
    H1:2(H2:2(O4:2,O5:2,O6:2),O1:2,O2:2,O3:2) 0 converged
    """
    from .search import fit

    t0 = time.perf_counter()
    score = criterion(score).name
    for name, value, low in (("pairs_per_node", pairs_per_node, 1), ("tries", tries, 1),
                             ("local_starts", local_starts, 1), ("local_iter", local_iter, 1)):
        check_int(name, value, low=low)
    data, columns = _named_dataset(dataset, mapping)
    operators = tuple(operators)
    bad = [o for o in operators if o not in OPERATORS]
    if bad:
        raise InvalidArgument(f"unknown operator {bad[0]!r}; choose from {', '.join(OPERATORS)}")
    if max_time is not None and not (max_time > 0):
        raise InvalidArgument(f"max_time must be a positive number of seconds, got {max_time!r}")
    rng = as_seed(seed)
    mi = mutual_information(data)
    index = {c: i for i, c in enumerate(data.columns)}
    if isinstance(start, HLCModel):
        current = start
    elif start == "islands":
        current = islands_model(data, mi)
    elif start == "lc":
        current = HLCModel.lc(2, data.cardinalities, hidden_name=_fresh(data.columns, 1)[0],
                              observed_names=data.columns)
    else:
        raise InvalidArgument(f"unknown start {start!r}; choose islands, lc or a model")
    if sorted(current.observed) != sorted(data.columns):
        raise InvalidArgument(f"the start model's leaves ({', '.join(current.observed)}) are not the data's columns "
                         f"({', '.join(data.columns)})")
    if not is_regular(current):
        raise InvalidArgument(f"the start model {current} is not regular; regularize it first")

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("structure search cancelled")

    def out_of_time() -> bool:
        return max_time is not None and time.perf_counter() - t0 > max_time

    em_common = dict(prior=prior, cancel=cancel)
    clock = {"local": 0.0, "full": 0.0, "refits": 0}
    check_cancel()
    t = time.perf_counter()
    # no ConvergenceWarning: the start model is only where the search begins, and whether its EM
    # starts agreed says nothing about the tree it ends with
    first = fit(data, current, restarts=restarts, seed=rng, tol=tol, max_iter=max_iter, cs_prior=cs_prior,
                warn=False, **em_common)
    clock["full"] += time.perf_counter() - t
    dims = LocalDe(current)
    cur_em: EMResult = first.em
    cur_score = first.score(score)
    steps: list[Step] = []
    n_candidates = 0

    def report(phase: str) -> None:
        if progress is not None:
            progress(StructureProgress(current, cur_score, len(steps), n_candidates, time.perf_counter() - t0, phase))

    def scored(em: EMResult, ds: int, de: int) -> float:
        return score_fit(em, ds=ds, de=de, cs_prior=cs_prior).get(score)

    crit = criterion(score)

    def local_score(local: LocalFit, ds: int, de: int) -> float:
        """A penalised likelihood needs only the restricted log-likelihood; CS needs the expected
        counts of every family, so one exact E-step of the candidate."""
        if crit.rate is not None:
            return local.loglik - (de if crit.uses_de else ds) * crit.rate(local.n)
        loglik, counts = e_step(local.params, data)
        counted = LocalCounts(local.model, local.params, loglik, counts, local.n, prior)
        return score_fit(counted, ds=ds, de=de, cs_prior=cs_prior).get(score)

    msgs = [Messages(cur_em.params, data)]  # the current fit's messages, renewed after each accepted move

    report("start")
    stopped = "converged"
    visited = {current}
    tie = TIE_TOLERANCE * data.n_rows

    def evaluate(ops: tuple[str, ...]) -> list:
        """Local EM of every candidate of ``ops``: ``(rank, move, local fit, ds, de)``, best rank first."""
        nonlocal n_candidates
        cur_ds = dims.dims(current)[0]
        out = []
        for move in candidate_moves(current, mi, index, operators=ops, pairs_per_node=pairs_per_node):
            if move.model in visited:  # never go back: ties could otherwise cycle
                continue
            check_cancel()
            if out_of_time():
                break
            ds, de = dims.dims(move.model)
            t = time.perf_counter()
            local = local_fit(data, move, cur_em.params, starts=local_starts, max_iter=local_iter, tol=local_tol,
                              seed=rng, messages=msgs[0], **em_common)
            gain = local_score(local, ds, de) - cur_score
            clock["local"] += time.perf_counter() - t
            n_candidates += 1
            if move.operator in EXPANSION and gain > tie:  # ranked by EAST's improvement ratio
                out.append((gain / max(1, ds - cur_ds), move, local, ds, de))  # gain per added parameter
            elif move.operator not in EXPANSION and gain > -tie:  # a tie goes to the smaller model
                out.append((gain, move, local, ds, de))
            report(f"candidate {move.operator}")
        return sorted(out, key=lambda e: -e[0])

    def accept(ranked: list) -> bool:
        nonlocal current, cur_em, cur_score
        cur_ds = dims.dims(current)[0]
        for _, move, local, ds, de in ranked[:tries]:
            check_cancel()
            t = time.perf_counter()
            full = fit_em(data, move.model, restarts=0, init=local.params, tol=tol, max_iter=max_iter,
                          **em_common)
            clock["full"] += time.perf_counter() - t
            clock["refits"] += 1
            new_score = scored(full, ds, de)
            if best_index([cur_score, new_score], [cur_ds, ds], data.n_rows) == 1:  # the one tie rule
                dims.update(move.model)
                steps.append(Step(move.operator, move.text, move.model, new_score, new_score - cur_score,
                                  full.loglik, local.loglik, ds, de))
                current, cur_em, cur_score = move.model, full, new_score
                msgs[0] = Messages(cur_em.params, data)
                visited.add(current)
                report(f"accepted {move.operator}")
                return True
        return False

    # EAST's phases: adjustment and simplification first (they never add parameters), then expansion
    phases = [tuple(o for o in operators if o not in EXPANSION), tuple(o for o in operators if o in EXPANSION)]
    while True:
        moved = any(ops and accept(evaluate(ops)) for ops in phases)
        if out_of_time():
            stopped = "max_time"
        if not moved or stopped == "max_time":
            break
    check_cancel()
    t = time.perf_counter()
    final = fit(data, current, restarts=0, init=cur_em.params, tol=tol, max_iter=max_iter, cs_prior=cs_prior,
                **em_common)
    clock["full"] += time.perf_counter() - t
    report("done")
    return StructureResult(
        fit=final, score=str(score).lower(), start=first, steps=tuple(steps), candidates=n_candidates,
        local_em_seconds=clock["local"], full_em_seconds=clock["full"], local_refits=clock["refits"],
        seconds=time.perf_counter() - t0, stopped=stopped,
        columns={leaf: col for leaf, col in columns.items() if leaf != col},
    )
