"""Which data column feeds which leaf of a model, and the data arranged for a model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import shown
from .dataset import DataError, Dataset, LeavesWithoutColumns


def resolve_mapping(dataset: Dataset, model: Any, mapping: Mapping[str, str] | None = None) -> dict[str, str]:
    """Which data column feeds each observed leaf of ``model`` (leaf -> column).

    Without ``mapping``: by name when every leaf names a column; otherwise
    positionally when the leaves carry the default names ``O1..On`` (as in
    ``"3:2,2,2,2"``) and the data have exactly ``n`` columns.

    Examples
    --------
    >>> from effdim import parse_model
    >>> from effdim.data import from_patterns
    >>> data = from_patterns([[0, 1], [1, 0]], columns=["a", "b"])
    >>> resolve_mapping(data, parse_model("2:2,2"))                 # by position
    {'O1': 'a', 'O2': 'b'}
    >>> resolve_mapping(data, parse_model("X:2:b:2,a:2"))           # by name
    {'b': 'b', 'a': 'a'}
    """
    leaves = list(model.observed)
    columns = dataset.columns
    if mapping is None:
        if all(leaf in columns for leaf in leaves):
            return {leaf: leaf for leaf in leaves}
        default = [f"O{i + 1}" for i in range(len(leaves))]
        if sorted(leaves, key=lambda s: (len(s), s)) == default and len(columns) == len(leaves):
            return {f"O{i + 1}": columns[i] for i in range(len(leaves))}
        absent = [leaf for leaf in leaves if leaf not in columns]
        hint = (
            f"; the model has {len(leaves)} leaves and the data {len(columns)} columns"
            if len(columns) != len(leaves)
            else ""
        )
        raise LeavesWithoutColumns(
            f"leaves {', '.join(map(repr, absent))} name no data column (columns: {', '.join(map(shown, columns))}){hint}"
        )
    mapping = dict(mapping)
    for leaf in mapping:
        if leaf not in leaves:
            raise DataError(f"mapping names {leaf!r}, which is not an observed leaf of the model")
    missing_leaves = [leaf for leaf in leaves if leaf not in mapping]
    if missing_leaves:
        raise DataError(f"mapping gives no column for leaves {', '.join(map(repr, missing_leaves))}")
    seen: dict[str, str] = {}
    for leaf in leaves:
        column = mapping[leaf]
        dataset.index(column)  # raises naming the column
        if column in seen:
            raise DataError(f"column {column!r} is mapped to two leaves, {seen[column]!r} and {leaf!r}")
        seen[column] = leaf
    return {leaf: mapping[leaf] for leaf in leaves}


def check_matches_model(dataset: Dataset, model: Any, mapping: Mapping[str, str] | None = None) -> Dataset:
    """The data arranged for ``model``: column ``j`` feeds leaf ``model.observed[j]``.

    Columns are chosen by :func:`resolve_mapping`, reordered to
    ``model.observed`` and *renamed to the leaf names*, so afterwards
    ``dataset.columns == tuple(model.observed)``; columns the model does not
    use are dropped (patterns re-compressed). The original column of each
    leaf is ``resolve_mapping(dataset, model, mapping)[leaf]``.

    Cardinalities: a column with more states than its leaf is rejected. A
    column with *fewer* states is accepted: its codes ``0..k-1`` are valid
    states of the leaf, and the remaining leaf states are values that simply
    did not occur in the sample (sampled data, or a domain known to be larger
    than what was observed); their maximum-likelihood probability is zero and
    the model's dimension is that of the model as written. The returned
    dataset keeps its own states, so take CPT shapes from ``model.card``.

    Examples
    --------
    >>> from effdim import parse_model
    >>> from effdim.data import from_patterns
    >>> data = from_patterns([[0, 1, 0], [1, 0, 1]], columns=["a", "b", "c"])
    >>> check_matches_model(data, parse_model("X:2:c:2,a:2")).columns
    ('c', 'a')
    """
    resolved = resolve_mapping(dataset, model, mapping)
    for leaf, column in resolved.items():
        k = len(dataset.states[dataset.index(column)])
        if k > model.card(leaf):
            raise DataError(
                f"column {column!r} has {k} states but leaf {leaf!r} has cardinality {model.card(leaf)}; "
                f"set the leaf to {k} states or recode the column"
            )
    sub = dataset.subset([resolved[leaf] for leaf in model.observed])
    return Dataset(
        columns=tuple(model.observed),
        states=sub.states,
        patterns=sub.patterns,
        counts=sub.counts,
        n_rows=sub.n_rows,
        n_missing=sub.n_missing,
        source=sub.source,
        count_column=sub.count_column,
        rows=sub.rows,
        variable_labels={
            leaf: sub.variable_labels[resolved[leaf]]
            for leaf in model.observed
            if resolved[leaf] in sub.variable_labels
        },
    )
