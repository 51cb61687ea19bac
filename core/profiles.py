"""A fitted model in the data's own words: parameter tables, class profiles, posterior membership.

EM (:mod:`effdim.em`) works on leaf names and state codes. An analyst reads
column names and category labels, so this module translates:

* every observed leaf is shown as the data column that feeds it
  (:func:`effdim.data.resolve_mapping`) and its states as that column's
  category labels (:attr:`effdim.data.Dataset.states`);
* hidden states are numbered ``1 .. k``. EM returns them by decreasing share
  (:meth:`effdim.distribution.Parameters.size_order`), so class 1 is the
  largest; :meth:`effdim.distribution.Parameters.relabeled` reorders them.

Tables are tidy pandas DataFrames (one row per probability), the layout
poLCA's ``probs`` and StepMix's ``get_parameters_df`` readers expect:

* :func:`parameter_table` -- every CPT entry ``P(node = state | parent = parent_state)``;
* :func:`profiles` -- class-conditional probabilities ``P(item = category | H = h)``
  of *every* observed item given one hidden node (through the tree, not only
  its children): what a profile plot shows;
* :func:`profile_table` -- the same as a wide table, a row per item and category, a column per class;
* :func:`class_shares` -- ``P(H = h)`` of every hidden node;
* :func:`posterior_table` -- posterior membership of every hidden node per
  input row (or per response pattern for pattern-count data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Labels",
    "conditionals",
    "parameter_table",
    "profiles",
    "profile_table",
    "class_shares",
    "parameters_json",
    "posterior_table",
    "with_ids",
]


@dataclass(frozen=True)
class Labels:
    """Readable names of a model's nodes and states.

    ``columns`` maps each observed leaf to its data column (and each hidden
    node to its name, ``"H (hidden)"`` if a column is called ``H``), ``states`` each
    leaf to the column's category labels (code ``j`` means ``states[leaf][j]``;
    a leaf with more states than the column observed gets ``"state j+1"`` for
    the rest). Hidden nodes keep their names; their states are ``1 .. k``.
    ``titles`` are the files' variable labels of the leaves, where it has them.
    """

    model: Any
    columns: dict
    states: dict
    #: Leaf -> what its column asks, where the file says (:attr:`effdim.data.Dataset.variable_labels`).
    titles: dict = field(default_factory=dict)

    @classmethod
    def of(cls, model: Any, data: Any = None, columns: dict | None = None) -> Labels:
        """Labels from the data arranged for ``model`` (:func:`effdim.data.check_matches_model`)."""
        columns = (
            {leaf: str(columns.get(leaf, leaf)) for leaf in model.observed}
            if columns
            else {leaf: leaf for leaf in model.observed}
        )
        states = {}
        for j, leaf in enumerate(model.observed):
            known = list(data.states[j]) if data is not None else []
            states[leaf] = tuple(known) + tuple(f"state {i + 1}" for i in range(len(known), model.card(leaf)))
        shown = set(columns.values())
        for h in model.hidden:  # a hidden node named like a data column is told apart
            columns[h] = f"{h} (hidden)" if h in shown else h
        described = getattr(data, "variable_labels", {}) if data is not None else {}
        return cls(model, columns, states, {leaf: described[leaf] for leaf in model.observed if leaf in described})

    def described(self) -> dict:
        """Column name -> what it asks, for the leaves whose file says (the items' titles in the figures)."""
        return {self.columns[leaf]: text for leaf, text in self.titles.items()}

    def name(self, node: str) -> str:
        """The column name of a leaf, the node name of a hidden node."""
        return self.columns[node]

    def state(self, node: str, code: int) -> Any:
        """The category label of a leaf's state, ``1 .. k`` for a hidden node's."""
        if self.model.is_hidden(node):
            return int(code) + 1
        return self.states[node][int(code)]


def parameter_table(params: Any, labels: Labels, se: Any = None, *, level: float = 0.95) -> pd.DataFrame:
    """Every CPT entry as a row: ``node, parent, parent_state, state, probability``.

    Root rows have ``parent`` and ``parent_state`` empty (``None``). Nodes in
    pre-order from the root; leaves named by their data columns. With ``se``
    (:class:`effdim.standard_errors.StandardErrors`) also ``se``, the
    ``level`` interval ``lower``-``upper`` on the probability scale
    (:func:`effdim.standard_errors.logit_interval`) and ``flag``: why an entry
    has none (``"boundary"``, ``"not identified"``; NaN then).
    """
    from .standard_errors import interval_z, logit_interval

    model = params.model
    z = interval_z(level)
    rows = []
    for node in model.nodes:
        parent = model.parent(node)
        table = np.atleast_2d(params.cpts[node])
        errors = None if se is None else np.atleast_2d(se.tables[node])
        lower, upper = (None, None) if se is None else logit_interval(table, errors, z)
        flags = None if se is None else np.atleast_2d(se.flags[node])
        for u, row in enumerate(table):
            for s, p in enumerate(row):
                entry = (
                    labels.name(node),
                    None if parent is None else labels.name(parent),
                    None if parent is None else labels.state(parent, u),
                    labels.state(node, s),
                    float(p),
                )
                if se is not None:
                    entry += (float(errors[u, s]), float(lower[u, s]), float(upper[u, s]), str(flags[u, s]))
                rows.append(entry)
    columns = ["node", "parent", "parent_state", "state", "probability"]
    return pd.DataFrame(rows, columns=columns + ([] if se is None else ["se", "lower", "upper", "flag"]))


def conditionals(params: Any, node: str) -> dict[str, np.ndarray]:
    """``P(X | node)`` for every node ``X``, shape ``(|node|, |X|)``, through the tree rooted at ``node``."""
    rooted = params if params.model.root == node else params.rerooted(node)
    model = rooted.model
    out = {node: np.eye(model.card(node))}
    for x in model.nodes[1:]:  # pre-order: the parent is done first
        out[x] = out[model.parent(x)] @ rooted.cpts[x]
    return out


def profiles(params: Any, labels: Labels, node: str | None = None) -> pd.DataFrame:
    """Class-conditional probabilities of every item: ``class, item, category, probability``.

    ``P(item = category | node = class)`` for every observed leaf, whether or
    not it is a child of ``node`` (default: the root), computed along the
    tree (:meth:`effdim.distribution.Parameters.rerooted`). Items in
    ``model.observed`` order.
    """
    model = params.model
    node = model.root if node is None else node
    _check_hidden(model, node)
    cond = conditionals(params, node)
    rows = []
    for h in range(model.card(node)):
        for leaf in model.observed:
            for s, p in enumerate(cond[leaf][h]):
                rows.append((labels.state(node, h), labels.name(leaf), labels.state(leaf, s), float(p)))
    return pd.DataFrame(rows, columns=["class", "item", "category", "probability"])


def profile_table(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`profiles`' rows as a wide table: a row per (item, category), a column per class.

    Items and categories keep the order of ``frame`` (each column's own category order, the one every
    face draws), never one category order shared by all items or an alphabetical one.
    """
    keys = pd.MultiIndex.from_tuples(dict.fromkeys(zip(frame["item"], frame["category"])), names=["item", "category"])
    classes = list(dict.fromkeys(frame["class"]))
    wide = frame.set_index(["item", "category", "class"])["probability"].unstack("class")
    return wide.reindex(index=keys, columns=classes)


def class_shares(params: Any, labels: Labels) -> pd.DataFrame:
    """``P(H = h)`` of every hidden node: ``node, state, share``."""
    marg = params.marginals()
    rows = [(labels.name(h), labels.state(h, s), float(p)) for h in params.model.hidden for s, p in enumerate(marg[h])]
    return pd.DataFrame(rows, columns=["node", "state", "share"])


def parameters_json(params: Any, labels: Labels) -> dict:
    """The CPTs keyed by column names and category labels (JSON-ready).

    ``{"shares": {hidden: {state: p}}, "tables": {node: {"given": parent,
    "rows": {parent_state: {state: p}}}}}``; the root's table has one row,
    keyed ``""``. Labels are strings (JSON keys).
    """
    model = params.model
    tables: dict[str, Any] = {}
    for node in model.nodes:
        parent = model.parent(node)
        table = np.atleast_2d(params.cpts[node])
        keys = [""] if parent is None else [str(labels.state(parent, u)) for u in range(table.shape[0])]
        tables[labels.name(node)] = {
            "given": None if parent is None else labels.name(parent),
            "rows": {
                key: {str(labels.state(node, s)): float(p) for s, p in enumerate(row)} for key, row in zip(keys, table)
            },
        }
    marg = params.marginals()
    shares = {labels.name(h): {str(labels.state(h, s)): float(p) for s, p in enumerate(marg[h])} for h in model.hidden}
    return {"shares": shares, "tables": tables}


def standard_errors_json(se: Any, params: Any, labels: Labels) -> dict:
    """Standard errors (:class:`effdim.standard_errors.StandardErrors`) shaped as
    :func:`parameters_json`: ``{"method", "shares", "tables", "flags", "notes"}``, ``null`` where a
    quantity has none and ``flags`` (the same shape, only those entries) saying why."""
    model = params.model
    tables: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for node in model.nodes:
        parent = model.parent(node)
        values = np.atleast_2d(se.tables[node])
        why = np.atleast_2d(se.flags[node])
        keys = [""] if parent is None else [str(labels.state(parent, u)) for u in range(values.shape[0])]
        states = [str(labels.state(node, s)) for s in range(values.shape[1])]
        name = labels.name(node)
        tables[name] = {
            "given": None if parent is None else labels.name(parent),
            "rows": {
                key: {st: (None if np.isnan(v) else float(v)) for st, v in zip(states, row)}
                for key, row in zip(keys, values)
            },
        }
        marked = {key: {st: f for st, f in zip(states, row) if f} for key, row in zip(keys, why)}
        marked = {key: row for key, row in marked.items() if row}
        if marked:
            flags[name] = marked
    shares = {
        labels.name(h): {
            str(labels.state(h, s)): (None if np.isnan(v) else float(v)) for s, v in enumerate(se.shares[h])
        }
        for h in model.hidden
    }
    return {"method": se.method, "shares": shares, "tables": tables, "flags": flags, "notes": se.notes()}


def posterior_table(
    params: Any,
    data: Any,
    labels: Labels,
    nodes: list[str] | None = None,
    *,
    pattern_posteriors: dict | None = None,
    rows: np.ndarray | None = None,
) -> pd.DataFrame:
    """Posterior membership of hidden ``nodes`` (default: all) for the data the model was fitted to.

    ``data`` is the dataset arranged for the model
    (:func:`effdim.data.check_matches_model`). Data read one case per row
    (:attr:`effdim.data.Dataset.rows` set) give **one row per input row, in
    input order**; pattern-count data give **one row per response pattern**
    with its ``count``. Columns: the data columns (category labels, empty
    where missing), then for each node ``P(node=h)`` for ``h = 1 .. k`` and
    ``node`` (the modal state; the first on ties). Missing cells are
    marginalised (the posterior uses the observed answers only).
    ``pattern_posteriors`` (node -> ``(m, k)`` per pattern of ``data``)
    replaces the posteriors computed from ``params`` (a regression's, each
    pattern under its own prior); ``rows`` the pattern of each input row
    (``-1``: a row left out, whose cells and posteriors are empty).
    """
    from .em import posterior

    model = params.model
    nodes = list(model.hidden) if nodes is None else list(nodes)
    for node in nodes:
        _check_hidden(model, node)
    frame = data.to_frame(decoded=True, count_name="count")
    count = frame.columns[-1]  # "count", or "count_" when a column is called so
    frame = frame.rename(columns={leaf: labels.name(leaf) for leaf in model.observed})
    for node in nodes:
        if pattern_posteriors is None:
            md, post = posterior(params, data, node)
            post = post[_positions(md.patterns, data.patterns)]
        else:
            post = pattern_posteriors[node]
        for h in range(post.shape[1]):
            frame[f"P({labels.name(node)}={labels.state(node, h)})"] = post[:, h]
        frame[labels.name(node)] = [labels.state(node, h) for h in np.argmax(post, axis=1)]
    rows = data.rows if rows is None else rows
    if rows is not None:
        frame = frame.drop(columns=count).iloc[np.maximum(rows, 0)].reset_index(drop=True)
        left_out = np.asarray(rows) < 0
        if left_out.any():  # a row the fit left out: empty cells, the others' values as they were
            for column in frame.columns:
                if frame[column].dtype.kind == "f":
                    frame.loc[left_out, column] = np.nan
                else:
                    frame[column] = frame[column].astype(object)
                    frame.loc[left_out, column] = None
    return frame


def with_ids(table: pd.DataFrame, ids: pd.DataFrame | None) -> pd.DataFrame:
    """``table`` (:func:`posterior_table`, one row per input row) with the identifier columns ``ids`` first.

    Refused (:class:`effdim.errors.InvalidArgument`) when the rows do not match: pattern-count data have no
    row per case, and ``ids`` must have one row per input row; and when an identifier is named like a column
    of the table."""
    from .errors import InvalidArgument

    if ids is None or len(ids.columns) == 0:
        return table
    if "count" in table.columns and len(table) != len(ids):
        raise InvalidArgument("these data are counts of response patterns, not one row per case: no row to identify")
    if len(ids) != len(table):
        raise InvalidArgument(f"{len(ids):,} identifiers for {len(table):,} rows: they come from another file")
    clash = [c for c in ids.columns if c in table.columns]
    if clash:
        raise InvalidArgument(f"the identifier {clash[0]!r} has the name of a column of the posteriors' table")
    return pd.concat([ids.reset_index(drop=True), table], axis=1)


def _positions(patterns: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index into ``patterns`` of every row of ``wanted`` (all present)."""
    index = {tuple(r): i for i, r in enumerate(patterns.tolist())}
    return np.array([index[tuple(r)] for r in wanted.tolist()], dtype=np.intp)


def _check_hidden(model: Any, node: str) -> None:
    from .errors import InvalidArgument

    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
