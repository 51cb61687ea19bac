"""Scoring a candidate by local EM: the restricted likelihood of EAST (Chen et al. 2012, Section 5).

Each candidate inherits every CPT of the current fit that it shares
(:func:`transfer_parameters`); only the families the move changes
(:func:`effdim.structure.moves.changed_families`) are re-estimated, by EM on
the few nodes around them with the rest of the tree entering as fixed
per-pattern messages (:func:`local_fit`). The starts
(:func:`candidate_starts`): the exact inheritance (which reproduces the
current distribution for ``NI`` and ``SI``, so their restricted
log-likelihood never falls below the current one), then the touched
families perturbed, or for a node introduced with its parent's states that
node independent of its parent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from ..distribution import Parameters
from ..em import Cancelled
from ..em.kernel import Layout, run_pass
from ..model import HLCModel
from ..squarem import adapt_step_max, extrapolate
from ..validation import as_seed
from .moves import Move

__all__ = [
    "LocalCounts",
    "LocalFit",
    "Messages",
    "candidate_starts",
    "continue_local_fit",
    "local_fit",
    "merged_parameters",
    "split_parameters",
    "transfer_parameters",
]


def _rooted_as(params: Parameters, model: HLCModel) -> Parameters:
    """``params`` re-rooted at ``model``'s root when that is another hidden node of the fit (else as it is)."""
    old = params.model
    if model.root in old and old.is_hidden(model.root) and old.root != model.root:
        return params.rerooted(model.root)
    return params


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
    params = _rooted_as(params, model)
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


def merged_parameters(params: Parameters, model: HLCModel, keep: str, gone: str) -> Parameters:
    """Warm-start CPTs for ``model``, where hidden ``gone`` of the fit ``params`` is merged into its
    neighbour ``keep`` (the node merge of :mod:`effdim.structure.moves`), from the joint distribution of
    the pair: each of the ``k - 1`` most probable state pairs ``(keep, gone)`` becomes a state of the merged
    node, the other pairs share the last one. The merged node's table is the pair's joint given its
    parent, summed over each state's pairs, and each child's table the average of its old rows over a
    state's pairs, weighted by their probability; so with ``k`` the product of the two cardinalities the
    start is the current distribution, and with fewer states it is the nearest grouping of the pairs
    (never the fixed point a split state in two equal halves would be). Every other table as
    :func:`transfer_parameters` carries it over."""
    warm = transfer_parameters(params, model)
    params = _rooted_as(params, model)
    old = params.model
    upper, lower = (keep, gone) if old.parent(gone) == keep else (gone, keep)
    marg = params.marginals()
    pair = marg[upper][:, None] * params.cpts[lower]  # P(upper, lower)
    k = model.card(keep)
    ranked = np.argsort(-pair.ravel(), kind="stable")
    group = np.empty(pair.size, dtype=int)
    group[ranked] = np.minimum(np.arange(pair.size), k - 1)  # the flat pair index -> its merged state
    assign = np.zeros((pair.size, k))
    assign[np.arange(pair.size), group] = 1.0
    cpts = dict(warm.cpts)
    parent = old.parent(upper)
    given = params.cpts[upper] if parent is not None else params.cpts[upper][None, :]
    joint = (given[:, :, None] * params.cpts[lower][None, :, :]).reshape(given.shape[0], -1)  # P(pair | parent)
    table = joint @ assign
    cpts[keep] = table if parent is not None else table[0]
    weight = _given_state(pair.ravel()[:, None] * assign, assign)  # P(pair | state)
    for child in model.children(keep):
        side = upper if old.parent(child) == upper else lower
        rows = params.cpts[child]
        per_pair = rows[:, None, :] if side == upper else rows[None, :, :]
        per_pair = np.broadcast_to(per_pair, (*pair.shape, rows.shape[-1])).reshape(pair.size, -1)
        cpts[child] = weight.T @ per_pair
    return Parameters(model, cpts)


def _given_state(joint: np.ndarray, assign: np.ndarray) -> np.ndarray:
    """Each column of ``joint`` (old states x new states, a joint probability) as a distribution over the old
    states given that new state; a new state of probability 0 (EM can leave a state without mass) gets the old
    states ``assign`` maps to it alike, instead of a column of zeros, which made the rows of the children built
    from it sum to 0 (``Parameters`` refused them: "rows must sum to 1")."""
    mass = joint.sum(axis=0, keepdims=True)
    return np.where(mass > 0, joint / np.where(mass > 0, mass, 1.0), assign / assign.sum(axis=0, keepdims=True))


def _merge_cost(rows: list[np.ndarray], weight: np.ndarray) -> np.ndarray:
    """Per pair of states ``(s, t)`` of a node, the information lost when the two become one state, seen from
    a set of its neighbours: the probability-weighted Kullback-Leibler divergence of each neighbour's
    distribution given ``s`` and given ``t`` from their average (a Jensen-Shannon divergence), summed over
    the neighbours (``rows``: each ``(k, k_neighbour)``, a distribution per state; ``weight``: the states'
    probabilities)."""
    k = weight.size
    cost = np.full((k, k), np.inf)
    for s, t in itertools.combinations(range(k), 2):
        w = weight[[s, t]] / max(weight[s] + weight[t], 1e-300)
        total = 0.0
        for table in rows:
            pair = table[[s, t]]
            mean = w @ pair
            with np.errstate(divide="ignore", invalid="ignore"):
                kl = np.where(pair > 0, pair * np.log(pair / np.maximum(mean, 1e-300)), 0.0).sum(axis=1)
            total += float(w @ kl)
        cost[s, t] = cost[t, s] = (weight[s] + weight[t]) * total
    return cost


def split_parameters(params: Parameters, model: HLCModel, keep: str, new: str) -> Parameters:
    """Warm-start CPTs for ``model``, where hidden ``keep`` of the fit ``params`` (``k`` states) is split into
    ``keep`` and its new child ``new``, ``k - 1`` states each (the node split of
    :mod:`effdim.structure.moves`, the inverse of :func:`merged_parameters`). Each side forgets the difference
    that matters least to its own neighbours: ``new`` merges the two old states whose distributions of
    ``new``'s children differ least (:func:`_merge_cost`), ``keep`` the two whose distributions of its other
    neighbours (its parent included) differ least. An old state ``s`` is then the pair ``(a(s), b(s))``: the
    pair's joint is the old state's probability, each child's rows the probability-weighted average of its
    old rows over a side's merged states. When the two sides merge different pairs every old state keeps a
    state pair of its own, so the start is near the current distribution and the two nodes already differ
    (the copy of ``keep`` that :func:`transfer_parameters` would give is a fixed point of EM)."""
    warm = transfer_parameters(params, model)
    params = _rooted_as(params, model)
    old = params.model
    marg = params.marginals()
    p_state = marg[keep]
    k = p_state.size
    parent = old.parent(keep)
    below_new = model.children(new)
    rest_rows = [params.cpts[c] for c in old.children(keep) if c not in below_new]
    if parent is not None:  # the parent given each state of keep, by Bayes
        joint = marg[parent][:, None] * params.cpts[keep]
        rest_rows.append((joint / np.maximum(joint.sum(axis=0, keepdims=True), 1e-300)).T)
    assign = {}
    for node, rows in ((keep, rest_rows), (new, [params.cpts[c] for c in below_new])):
        s, t = np.unravel_index(np.argmin(_merge_cost(rows, p_state)), (k, k))
        merged_into = np.arange(k)
        merged_into[max(s, t)] = min(s, t)
        assign[node] = np.unique(merged_into, return_inverse=True)[1]  # old state -> one of k - 1
    to_keep = np.eye(k - 1)[assign[keep]]  # (k, k-1): old state -> keep's state
    to_new = np.eye(k - 1)[assign[new]]
    cpts = dict(warm.cpts)
    cpts[keep] = params.cpts[keep] @ to_keep if parent is not None else p_state @ to_keep
    cpts[new] = _given_state(to_new.T @ (p_state[:, None] * to_keep), to_new.T @ to_keep).T  # P(new | keep)
    for side, children in ((to_keep, [c for c in model.children(keep) if c != new]), (to_new, below_new)):
        weight = _given_state(p_state[:, None] * side, side)  # P(old state | side's state)
        for child in children:
            cpts[child] = weight.T @ params.cpts[child]
    return Parameters(model, cpts)


def _perturbed(params: Parameters, free: Iterable[str], rng: np.random.Generator, weight: float) -> Parameters:
    """``params`` with the CPTs of ``free`` mixed with random Dirichlet(1) rows (``weight`` of noise)."""
    cpts = dict(params.cpts)
    for node in sorted(free):  # sorted: the random stream must not depend on set order (hash seed)
        table = cpts[node]
        noise = rng.dirichlet(np.ones(table.shape[-1]), size=table.shape[:-1] or None)
        cpts[node] = (1 - weight) * table + weight * noise
    return Parameters(params.model, cpts)


@dataclass(frozen=True)
class LocalFit:
    """A candidate fitted by :func:`local_fit`: the ``model``, its ``params`` (untouched families
    as in the current fit), the restricted ``loglik`` (the whole tree's log-likelihood at ``params``),
    ``n``, the EM ``n_iter`` of the best start, and whether EM ``converged`` (else its E-steps ran out:
    :func:`continue_local_fit` goes on from there)."""

    model: HLCModel
    params: Parameters
    loglik: float
    n: float
    n_iter: int
    converged: bool = True


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
    search step and shared by every candidate's :func:`local_fit`, with the evidence that a child
    outside a candidate's region sends its parent (:meth:`frozen_child`), kept for the candidates
    that share it."""

    def __init__(self, params: Parameters, data: Any):
        from ..em import messages

        self.params = params
        self.md, self.below, self.outside = messages(params, data)
        self._column = {o: j for j, o in enumerate(self.md.observed)}
        self._frozen: dict[tuple, np.ndarray] = {}

    def frozen_child(self, child: str, hidden: bool, table: np.ndarray) -> np.ndarray:
        """``log P(evidence at and below child | its parent)`` per parent state and pattern, (k_parent, m),
        for ``child``'s CPT ``table`` (rows: its parent's states) and the current fit below it.

        The same child with the same table gives the same array (computed once): most candidates of a
        step keep most tables, and a node's children outside the region are most of its evidence.
        """
        from ..em import TINY

        key = (child, table.shape, table.tobytes())
        found = self._frozen.get(key)
        if found is None:
            log_table = np.log(np.maximum(table, TINY))
            if hidden:
                found = _logmatvec(log_table, self.below[child])
            else:
                values = self.md.patterns[:, self._column[child]]
                found = np.where(values[None, :] >= 0, log_table[:, np.maximum(values, 0)], 0.0)
            self._frozen[key] = found
        return found


def candidate_starts(params: Parameters, move: Move, count: int = 3, seed: Any = None) -> list[Parameters]:
    """Starting points of a candidate's EM: the exact transfer of the current fit ``params``
    (:func:`transfer_parameters`; for a node merge :func:`merged_parameters`, for a node split
    :func:`split_parameters`), then ``count - 1`` with the changed families half mixed
    with random Dirichlet(1) rows, the last of which, for a node introduced with its parent's states,
    is instead that node made independent of its parent (:func:`_decoupled`)."""
    rng = as_seed(seed)
    if move.merged:
        warm = merged_parameters(params, move.model, *move.merged)
    elif move.split:
        warm = split_parameters(params, move.model, *move.split)
    else:
        warm = transfer_parameters(params, move.model)
    starts = [warm] + [_perturbed(warm, move.free, rng, 0.5) for _ in range(max(0, count - 1))]
    copies = [x for x in move.model.hidden if x not in params.model and warm.cpts[x].shape[0] == warm.cpts[x].shape[1]]
    if copies and count > 1:
        starts[-1] = _decoupled(warm, copies)
    return starts


def _decoupled(params: Parameters, nodes: Iterable[str]) -> Parameters:
    """``params`` with each of ``nodes`` (introduced as a copy of its parent) independent of its parent:
    uniform rows. The identity table of the copy is a fixed point of EM; from here the first E-step gives
    the new node the posterior of its own children alone, and the M-step its table by cross-tabulating that
    with the parent's posterior from the rest of the tree, so EM can tell the two nodes apart."""
    cpts = dict(params.cpts)
    for node in nodes:
        cpts[node] = np.full_like(cpts[node], 1.0 / cpts[node].shape[-1])
    return Parameters(params.model, cpts)


def local_fit(
    data: Any,
    move: Move,
    params: Parameters,
    *,
    starts: int = 3,
    max_iter: int = 32,
    tol: float = 1e-6,
    seed: Any = None,
    prior: float | None = None,
    cancel: Any = None,
    messages: Messages | None = None,
) -> LocalFit:
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
    thetas, ll, n_iter, converged = region.fit(inits, max_iter, tol, float(prior or 0.0))
    fitted = Parameters(move.model, {**warm.cpts, **thetas})
    return LocalFit(move.model, fitted, ll, messages.md.n_rows, n_iter, converged)


def continue_local_fit(
    local: LocalFit, move: Move, messages: Messages, *, max_iter: int, tol: float, prior: float | None = None
) -> LocalFit:
    """:func:`local_fit` of ``move`` carried on from its estimate ``local`` (one start) for at most
    ``max_iter`` more E-steps; the restricted log-likelihood never falls (EM from where it was)."""
    region = _Region(move, messages, local.params)
    thetas, ll, n_iter, converged = region.fit([local.params], max_iter, tol, float(prior or 0.0))
    fitted = Parameters(move.model, {**local.params.cpts, **thetas})
    return LocalFit(move.model, fitted, ll, local.n, local.n_iter + n_iter, converged)


class _Region:
    """The nodes around a move's free families and the fixed per-pattern evidence at its boundary.

    Its E-step is full EM's (:mod:`effdim.em.kernel`) on the region as a small tree whose nodes carry
    fixed evidence per pattern: a leaf its value, a hidden node the messages of its children outside the
    region (the current fit's), the top the evidence outside it. Parameters carry the starts on their
    first axis.
    """

    def __init__(self, move: Move, cur: Messages, warm: Parameters):
        from ..em import TINY

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
        self.learn = [x for x in order if x in free and (x != top or self.top_free)]  # the families EM fits
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
                if c not in nodes:  # frozen: the current fit's table and subtree
                    e += cur.frozen_child(c, model.is_hidden(c), warm.cpts[c])
            if x == top and not self.top_free:
                e += np.log(np.maximum(warm.cpts[x], TINY))[:, None] if model.parent(x) is None else cur.outside[x]
            log_ev[x] = e
        scale = sum(e.max(axis=0) for e in log_ev.values())  # (m,) log of the factored-out maxima
        self.constant = float(scale @ self.w)  # their share of the log-likelihood
        self.layout, self.evidence = self._layout(model, log_ev, md.n_patterns)

    def _layout(self, model: HLCModel, log_ev: dict, m: int) -> tuple[Layout, tuple[np.ndarray, np.ndarray]]:
        """The region as the compiled E-step reads a tree (:class:`effdim.em.kernel.Layout`): its nodes in
        pre-order, every one with its fixed evidence (linear, each pattern's largest state 1) and no leaf
        blocks; the CPT of every node but the top given its parent in the region."""
        order = self.order
        index = {x: i for i, x in enumerate(order)}
        card = [model.card(x) for x in order]
        parents = [-1] + [index[self.parent[x]] for x in order[1:]]
        kids = [[index[c] for c in self.kids[x]] for x in order]

        def ptr(sizes):
            return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

        self.theta_offset = ptr([0] + [card[parents[i]] * card[i] for i in range(1, len(order))])
        layout = Layout(
            parent=np.asarray(parents, dtype=np.int64),
            card=np.asarray(card, dtype=np.int64),
            offset=ptr(card),
            kid_ptr=ptr([len(k) for k in kids]),
            kids=np.asarray([c for k in kids for c in k], dtype=np.int64),
            msg_offset=ptr([0] + [card[parents[i]] for i in range(1, len(order))]),
            theta_offset=self.theta_offset,
            block_ptr=np.zeros(len(order) + 1, dtype=np.int64),
            blocks=np.zeros(0, dtype=np.int64),
            table_offset=np.zeros(1, dtype=np.int64),
            joint_offset=np.zeros(1, dtype=np.int64),
            codes=np.zeros((0, m), dtype=np.int64),
        )
        ev = np.concatenate([np.exp(log_ev[x] - log_ev[x].max(axis=0)) for x in order])
        return layout, (np.ones(len(order), dtype=np.int64), ev)

    def fit(self, inits: list, max_iter: int, tol: float, prior: float) -> tuple[dict, float, int, bool]:
        """EM from every start at once, accelerated by SQUAREM (:mod:`effdim.squarem`) as full EM is
        (:mod:`effdim.em`); the free CPTs, log-likelihood and E-steps of the best start.

        Each cycle makes two EM steps, extrapolates, and makes one EM step from the extrapolated point;
        a start whose objective there is below the first EM step's takes the second EM step instead, so
        the objective never falls. ``max_iter`` counts E-steps, the work of as many plain EM steps: a
        state split in two equal halves is a saddle point that plain EM leaves in hundreds of steps.
        Returns the best start's free CPTs, its log-likelihood, the E-steps made and whether EM converged.
        """
        learn = self.learn
        thetas = {x: np.stack([np.atleast_2d(p.cpts[x]) for p in inits]) for x in self.order if x != self.top}
        if self.top_free:
            thetas[self.top] = np.stack([np.atleast_2d(p.cpts[self.top]) for p in inits])  # (S, 1, k)
        n_starts = len(inits)

        def mstep(th: dict, counts: dict) -> dict:
            out = dict(th)
            for x in learn:
                c = counts[x] + prior
                rows = c.sum(axis=-1, keepdims=True)
                out[x] = np.divide(c, rows, out=th[x].copy(), where=rows > 0)
            return out

        def evaluate(th: dict) -> tuple[np.ndarray, np.ndarray, dict]:
            ll, counts = self._estep(th)
            obj = ll
            if prior:  # the MAP objective: the pseudo-counts' log prior of the free tables
                obj = ll + prior * sum(
                    np.log(np.maximum(th[x], 1e-300)).reshape(n_starts, -1).sum(axis=1) for x in learn
                )
            return ll, obj, counts

        def choose(mask: np.ndarray, a: dict, b: dict) -> dict:
            return {x: np.where(mask.reshape((-1,) + (1,) * (a[x].ndim - 1)), a[x], b[x]) for x in a}

        ll, obj, counts = evaluate(thetas)
        step_max = np.ones(n_starts)
        used, converged = 0, False
        while used < max_iter:
            x1 = mstep(thetas, counts)
            ll1, obj1, c1 = evaluate(x1)
            cycle = 1
            if max_iter - used < 4:  # no room for a cycle: plain EM steps
                new = (x1, ll1, obj1, c1)
            else:
                x2 = mstep(x1, c1)
                xs, alpha = extrapolate(
                    [thetas[x] for x in learn], [x1[x] for x in learn], [x2[x] for x in learn], step_max
                )
                point = dict(x2)
                for x, a in zip(learn, xs):  # rows sum to 1 only up to rounding, which a^2 would amplify
                    rs = a.sum(axis=-1, keepdims=True)
                    point[x] = np.divide(a, rs, out=x2[x].copy(), where=rs > 0)
                point = mstep(point, evaluate(point)[2])  # stabilise with one EM step
                ll3, obj3, c3 = evaluate(point)
                cycle = 3  # E-steps: the first EM step, the extrapolated point, the stabilised point
                ok = obj3 >= obj1
                if not ok.all():
                    ll2, obj2, c2 = evaluate(x2)
                    cycle += 1
                    point, c3 = choose(ok, point, x2), choose(ok, c3, c2)
                    ll3, obj3 = np.where(ok, ll3, ll2), np.where(ok, obj3, obj2)
                step_max = adapt_step_max(step_max, alpha, ok)
                new = (point, ll3, obj3, c3)
            used += cycle
            rise = new[2] - obj
            thetas, ll, obj, counts = new
            if np.max(rise) < tol * self.n * cycle:
                converged = True
                break
        s = int(np.argmax(obj))
        out = {x: (thetas[x][s, 0] if x == self.top else thetas[x][s]) for x in learn}
        return out, float(ll[s]), used, converged

    def _estep(self, thetas: dict) -> tuple[np.ndarray, dict]:
        """Log-likelihood and expected counts of the learned families of every start: the compiled E-step
        (:func:`effdim.em.kernel.run_pass`) over the region's nodes, their fixed evidence in place of the
        rest of the tree, and the top's prior where it is learned (else in its evidence)."""
        S = next(iter(thetas.values())).shape[0]
        top = self.order[0]
        flat = [thetas[x].reshape(S, -1) for x in self.order[1:]]
        theta = np.concatenate(flat, axis=1) if flat else np.zeros((S, 0))
        k = self.layout.card[0]
        pi = thetas[top].reshape(S, k, 1) if self.top_free else np.ones((S, k, 1))
        empty = np.zeros((S, 0))
        out = run_pass(
            self.layout, self.w, np.ascontiguousarray(pi), theta, (empty, empty, empty), evidence=self.evidence
        )
        counts = {}
        if self.top_free:
            counts[top] = out.root[:, None, :]
        for i, x in enumerate(self.order[1:], start=1):
            if x in self.learn:
                lo, hi = self.theta_offset[i], self.theta_offset[i + 1]
                counts[x] = thetas[x] * out.pair[:, lo:hi].reshape(thetas[x].shape)
        return out.ll + self.constant, counts


def _logmatvec(log_table: np.ndarray, log_vec: np.ndarray) -> np.ndarray:
    """``log sum_c exp(log_table[h, c] + log_vec[c, p])`` for every ``h, p``: a message up one edge."""
    from scipy.special import logsumexp

    return logsumexp(log_table[:, :, None] + log_vec[None, :, :], axis=1)
