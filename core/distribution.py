"""Parameters of an HLC model, forward sampling, the exact distribution P(O), KL.

An HLC model directed away from its hidden root ``R`` is a Bayesian network
(Kocka & Zhang 2002, Section 2.2): its joint distribution factorizes as

    P(V) = P(R) * prod_{X != R} P(X | pa(X)),

with one conditional probability table (CPT) per node. The distribution of
the observed leaves ``O`` is the marginal ``P(O) = sum_H P(O, H)``; the paper
measures how well a learned model fits the generating one by the
Kullback-Leibler divergence of these marginals, in bits (Section 6,
Table 2: "information divergence").

``P(O)`` is computed by one upward pass of message passing (variable
elimination along the tree), never by enumerating the hidden states: for each
node ``X`` with the leaves ``O_X`` below it,

    T_X[x, o_X] = P(o_X | X = x)
                = prod_{C child of X} sum_c P(c | x) T_C[c, o_C],

with ``T_O = identity`` for a leaf, and ``P(o) = sum_r P(r) T_R[r, o]``. The
cost is ``O(|X| * |space of O_X|)`` per node instead of the product of all
hidden cardinalities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .data import Dataset, from_patterns
from .errors import EffdimError, InvalidArgument
from .model import HLCModel

__all__ = [
    "Parameters",
    "permute_states",
    "random_parameters",
    "sample",
    "observed_distribution",
    "kl_divergence",
    "SpaceTooLargeError",
]

#: Rows of a CPT must sum to one within this tolerance.
ROW_SUM_TOL = 1e-6
_CHUNK = 1 << 20  # rows sampled per block: bounds memory for very large n


class SpaceTooLargeError(EffdimError, ValueError):
    """The observed state space is too large to hold ``P(O)`` as an array."""


def _rng(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


@dataclass
class Parameters:
    """Conditional probability tables of an HLC model directed from ``model.root``.

    Attributes
    ----------
    model:
        The HLC model.
    cpts:
        ``cpts[root]`` has shape ``(|root|,)``: the prior ``P(root)``; for any
        other node ``X`` with parent ``U``, ``cpts[X]`` has shape
        ``(|U|, |X|)`` and row ``u`` is ``P(X | U = u)``. Rows sum to 1.

    The tables are checked (keys, shapes, finite non-negative entries, rows
    summing to 1 within ``1e-6``) on construction and by :meth:`validate`.
    """

    model: HLCModel
    cpts: dict[str, np.ndarray]

    def __post_init__(self) -> None:
        self.cpts = {node: np.asarray(table, dtype=np.float64) for node, table in self.cpts.items()}
        self.validate()

    def validate(self) -> None:
        """Raise :class:`effdim.errors.InvalidArgument` naming the node whose table is malformed.

        The entries and row sums of all tables are checked at once (a search builds thousands of
        parameter sets); the node is looked for only when a check fails."""
        model = self.model
        extra = set(self.cpts) - set(model.nodes)
        if extra:
            raise InvalidArgument(f"CPTs given for nodes not in the model: {', '.join(sorted(extra))}")
        for node in model.nodes:
            if node not in self.cpts:
                raise InvalidArgument(f"no CPT for node {node!r}")
            table = self.cpts[node]
            parent = model.parent(node)
            shape = (model.card(node),) if parent is None else (model.card(parent), model.card(node))
            if table.shape != shape:
                given = "P(" + node + (f" | {parent})" if parent else ")")
                raise InvalidArgument(f"CPT of {node!r} ({given}) must have shape {shape}, got {table.shape}")
        tables = [self.cpts[node] for node in model.nodes]
        flat = np.concatenate([t.ravel() for t in tables])
        rows = np.cumsum([0] + [t.shape[-1] for t in tables for _ in range(t.size // max(t.shape[-1], 1))])[:-1]
        if (
            np.isfinite(flat).all()
            and flat.min() >= 0
            and np.abs(np.add.reduceat(flat, rows) - 1.0).max() <= ROW_SUM_TOL
        ):
            return
        for node, table in zip(model.nodes, tables):
            if not np.all(np.isfinite(table)) or np.any(table < 0):
                raise InvalidArgument(f"CPT of {node!r} has negative or non-finite entries")
            worst = float(np.max(np.abs(table.sum(axis=-1) - 1.0)))
            if worst > ROW_SUM_TOL:
                raise InvalidArgument(f"CPT of {node!r}: rows must sum to 1 (off by {worst:.3g})")

    def copy(self) -> Parameters:
        """A deep copy (the tables are copied)."""
        return Parameters(self.model, {n: t.copy() for n, t in self.cpts.items()})

    def marginals(self) -> dict[str, np.ndarray]:
        """``P(X)`` for every node, by one downward pass: ``P(X) = P(U) @ P(X | U)``."""
        out: dict[str, np.ndarray] = {}
        for node in self.model.nodes:
            parent = self.model.parent(node)
            out[node] = self.cpts[node] if parent is None else out[parent] @ self.cpts[node]
        return out

    def relabeled(self, node: str, order: Any) -> Parameters:
        """The same distribution with the states of hidden ``node`` renumbered.

        New state ``i`` is old state ``order[i]`` (a permutation of
        ``0 .. |node| - 1``): the columns of the node's own table and the rows
        of its children's tables are permuted. ``P(O)`` is unchanged; hidden
        states carry no meaning of their own, so any order is equally valid.
        """
        from .errors import InvalidArgument

        model = self.model
        if node not in model or not model.is_hidden(node):
            raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
        order = [int(i) for i in order]
        if sorted(order) != list(range(model.card(node))):
            raise InvalidArgument(
                f"the new order of {node}'s states must list each of 1..{model.card(node)} once, "
                f"got {', '.join(str(i + 1) for i in order)}"
            )
        return Parameters(model, permute_states(model, self.cpts, node, order))

    def size_order(self) -> dict[str, list[int]]:
        """Per hidden node, its states by decreasing marginal probability (ties: lower index first).

        The documented, stable order of fitted hidden states: after
        ``relabeled(node, order[node])`` for every node, state 1 of a node is
        its largest class. Relabelling one node leaves every other node's
        marginal unchanged, so the orders can be applied in any sequence.
        """
        marg = self.marginals()
        return {h: np.argsort(-marg[h], kind="stable").tolist() for h in self.model.hidden}

    def rerooted(self, root: str) -> Parameters:
        """The same distribution expressed with the model rooted at hidden ``root``.

        Edges on the path from the old to the new root change direction; for
        such an edge ``U -> X`` Bayes' rule gives the new table
        ``P(U | X = x) = P(U) P(x | U) / P(x)``. Rows with ``P(x) = 0`` are
        undetermined and set uniform (they carry no probability mass).
        """
        new_model = self.model.rerooted(root)
        marg = self.marginals()
        cpts: dict[str, np.ndarray] = {root: marg[root].copy()}
        for parent, child in new_model.edges:
            if self.model.parent(child) == parent:
                cpts[child] = self.cpts[child].copy()
                continue
            # old edge child -> parent; joint[c, p] = P(c) P(p | c)
            joint = marg[child][:, None] * self.cpts[parent]
            below = joint.T  # [p, c]
            mass = below.sum(axis=1, keepdims=True)
            k = below.shape[1]
            with np.errstate(invalid="ignore", divide="ignore"):
                table = np.where(mass > 0, below / np.where(mass > 0, mass, 1.0), 1.0 / k)
            cpts[child] = table
        return Parameters(new_model, cpts)


def permute_states(model: HLCModel, tables: dict[str, np.ndarray], node: str, order: Any) -> dict[str, np.ndarray]:
    """Tables shaped like the CPTs (CPTs, expected counts) with hidden ``node``'s states reordered.

    New state ``i`` is old state ``order[i]``: the node's own table is
    permuted along its last axis, each child's along its rows.
    """
    out = {n: np.array(t, copy=True) for n, t in tables.items()}
    out[node] = out[node][..., order]
    for child in model.children(node):
        out[child] = out[child][order, :]
    return out


def random_parameters(model: HLCModel, rng: Any = None, *, concentration: float = 1.0) -> Parameters:
    """Parameters with every CPT row drawn from a symmetric Dirichlet.

    Each row ``P(X | U = u)`` (and the root prior) is drawn from
    ``Dirichlet(concentration, ..., concentration)``; ``concentration = 1``
    is uniform over the simplex, as in the random parametrizations of the
    paper's experiments (Section 6). Smaller values give sharper (more nearly
    deterministic) tables, larger values flatter ones. Nodes are visited in
    pre-order, so a seeded ``rng`` gives reproducible parameters.

    ``rng`` is a :class:`numpy.random.Generator`, a seed, or ``None``.
    """
    if not (concentration > 0 and math.isfinite(concentration)):
        raise InvalidArgument(f"concentration must be positive and finite, got {concentration!r}")
    gen = _rng(rng)
    cpts: dict[str, np.ndarray] = {}
    for node in model.nodes:
        k = model.card(node)
        parent = model.parent(node)
        rows = 1 if parent is None else model.card(parent)
        table = gen.dirichlet(np.full(k, float(concentration)), size=rows)
        # guard against rows that underflow to all zeros for tiny concentrations
        bad = ~np.isfinite(table).all(axis=1) | (table.sum(axis=1) <= 0)
        if bad.any():
            table[bad] = np.eye(k)[gen.integers(0, k, size=int(bad.sum()))]
        table /= table.sum(axis=1, keepdims=True)
        cpts[node] = table[0] if parent is None else table
    return Parameters(model, cpts)


def sample(params: Parameters, n: int, rng: Any = None) -> Dataset:
    """Draw ``n`` cases by forward (ancestral) sampling; return them compressed.

    Nodes are sampled in pre-order, each from its CPT row selected by the
    parent's sampled state, all ``n`` cases at once: with ``u ~ U[0, 1)`` and
    the row's cumulative sums ``F``, the state is ``#{j : F_j <= u}``
    (inverse-CDF sampling, exact for zero-probability states). Work is
    ``O(n * sum |X|)``, done in blocks of ``2**20`` cases.

    Returns a :class:`Dataset` with ``columns = model.observed`` and states
    ``0..k-1`` for every leaf (all of them, observed or not).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidArgument(f"n must be a positive integer, got {n!r}")
    gen = _rng(rng)
    model = params.model
    observed = model.observed
    cards = [model.card(o) for o in observed]
    cdfs: dict[str, np.ndarray] = {}
    for node in model.nodes:
        table = np.atleast_2d(params.cpts[node])
        cdf = np.cumsum(table, axis=1)
        cdf[:, -1] = np.inf  # u < 1 always lands in the last positive state at the latest
        cdfs[node] = cdf
    space = math.prod(cards)
    packable = space < 2**62
    use_bincount = packable and space <= max(1 << 22, 4 * int(n))
    total = np.zeros(space) if use_bincount else None
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    left = int(n)
    while left > 0:
        size = min(left, _CHUNK)
        left -= size
        states: dict[str, np.ndarray] = {}
        for node in model.nodes:
            parent = model.parent(node)
            u = gen.random(size)
            cdf = cdfs[node]
            if parent is None:
                states[node] = np.searchsorted(cdf[0], u, side="right")
            elif cdf.shape[1] == 2:
                states[node] = (u >= cdf[states[parent], 0]).astype(np.intp)
            else:
                states[node] = (u[:, None] >= cdf[states[parent]]).sum(axis=1)
        if packable:
            key = np.zeros(size, dtype=np.int64)
            for o, k in zip(observed, cards):
                key *= k
                key += states[o]
            if use_bincount:
                total += np.bincount(key, minlength=space)
            else:
                ukey, cnt = np.unique(key, return_counts=True)
                pieces.append((ukey, cnt.astype(np.float64)))
        else:
            codes = np.stack([states[o] for o in observed], axis=1)
            rows, cnt = np.unique(codes, axis=0, return_counts=True)
            pieces.append((rows, cnt.astype(np.float64)))
    source = f"{int(n)} cases sampled from {model}"
    if use_bincount:
        keys = np.flatnonzero(total)
        counts = total[keys]
    elif packable:
        allkeys = np.concatenate([p[0] for p in pieces])
        allcnt = np.concatenate([p[1] for p in pieces])
        keys, inverse = np.unique(allkeys, return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=allcnt, minlength=keys.size)
    else:
        rows = np.concatenate([p[0] for p in pieces])
        cnt = np.concatenate([p[1] for p in pieces])
        return from_patterns(rows, cnt, observed, cardinalities=cards, source=source)
    codes = np.empty((keys.size, len(cards)), dtype=np.int64)
    rest = keys.astype(np.int64)
    for j in range(len(cards) - 1, -1, -1):
        codes[:, j] = rest % cards[j]
        rest //= cards[j]
    return Dataset(
        columns=tuple(observed),
        states=tuple(tuple(range(k)) for k in cards),
        patterns=codes,
        counts=counts,
        n_rows=float(n),
        n_missing=0,
        source=source,
    )


def observed_distribution(params: Parameters, *, max_states: int = 2**20) -> np.ndarray:
    """The exact joint distribution ``P(O)`` of the observed leaves.

    Returns an array of shape ``(|O_1|, ..., |O_n|)`` with axes in
    ``model.observed`` order, computed by the upward pass in the module
    docstring (``T_X = prod_C CPT_C @ T_C`` as an outer product over the
    children). Refuses with :class:`SpaceTooLargeError` when
    ``prod |O_i| > max_states``.
    """
    model = params.model
    observed = model.observed
    cards = [model.card(o) for o in observed]
    space = math.prod(cards)
    if space > max_states:
        raise SpaceTooLargeError(
            f"the observed space of {model} has {space:,} states (more than max_states={max_states:,}); "
            "P(O) cannot be held as an array"
        )
    tables: dict[str, np.ndarray] = {}
    for node in reversed(model.nodes):  # children before parents
        k = model.card(node)
        if not model.is_hidden(node):
            tables[node] = np.eye(k)
            continue
        table = params.cpts[node][:, None] if node == model.root else np.ones((k, 1))
        for child in model.children(node):
            message = params.cpts[child] @ tables.pop(child)  # (k, space below child)
            table = (table[:, :, None] * message[:, None, :]).reshape(k, -1)
        tables[node] = table
    joint = tables[model.root].sum(axis=0)
    return joint.reshape(cards)


def kl_divergence(p_params: Parameters, q_params: Parameters, *, base: float = 2, max_states: int = 2**20) -> float:
    """``KL(P || Q) = sum_o P(o) log_base(P(o) / Q(o))`` of the observed distributions.

    This is the paper's "information divergence" of a learned model ``Q``
    from the generating model ``P`` (Section 6, Table 2 reports it in bits,
    hence ``base=2``; use ``base=math.e`` for nats). The two models must have
    the same observed leaves (names and cardinalities); ``Q``'s axes are
    matched to ``P``'s by leaf name, so the models may differ in structure
    and root. Exact, from :func:`observed_distribution` (up to
    ``max_states`` observed states).

    Conventions: terms with ``P(o) = 0`` contribute 0 (``0 log 0 = 0``); a
    state with ``P(o) > 0 = Q(o)`` makes the divergence ``inf``. Rounding
    can make the sum of a tiny divergence negative; it is clipped at 0
    (KL is non-negative by Gibbs' inequality).
    """
    if not (base > 0 and base != 1):
        raise InvalidArgument(f"base must be positive and not 1, got {base!r}")
    p_obs = p_params.model.observed
    q_obs = q_params.model.observed
    if sorted(p_obs) != sorted(q_obs):
        raise InvalidArgument(f"the models observe different variables: {', '.join(p_obs)} vs {', '.join(q_obs)}")
    for o in p_obs:
        if p_params.model.card(o) != q_params.model.card(o):
            raise InvalidArgument(
                f"leaf {o!r} has {p_params.model.card(o)} states in P but {q_params.model.card(o)} in Q"
            )
    p = observed_distribution(p_params, max_states=max_states)
    q = observed_distribution(q_params, max_states=max_states)
    q = np.transpose(q, [q_obs.index(o) for o in p_obs])
    p = p.reshape(-1)
    q = q.reshape(-1)
    support = p > 0
    ps, qs = p[support], q[support]
    if np.any(qs <= 0):
        return math.inf
    value = float(np.sum(ps * (np.log(ps) - np.log(qs)))) / math.log(base)
    return max(value, 0.0)
