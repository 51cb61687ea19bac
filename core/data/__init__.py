"""Categorical data: a :class:`Dataset` of unique response patterns, how it is built, matched to a model, and read anew.

* :mod:`effdim.data.dataset` -- the :class:`Dataset` (patterns and their counts) and :class:`DataError`;
* :mod:`effdim.data.building` -- the loading rules: a Dataset from a reader's columns, a frame or codes;
* :mod:`effdim.data.matching` -- which column feeds which leaf of a model (:func:`check_matches_model`);
* :mod:`effdim.data.new_rows` -- new rows in a fitted model's training coding (:func:`encode_rows`);
* :mod:`effdim.data.ordinal` -- the order of a questionnaire's answers;
* :mod:`effdim.data.choice` -- which columns of a file become the data (kept, dropped, identifiers).

Reading a file of any format is :mod:`effdim.reading`; checking a CSV file's structure, :mod:`effdim.csvscan`.
"""

from .building import (
    COUNT_COLUMN_NAMES,
    MAX_TOTAL_COUNT,
    MISSING_TOKENS,
    Column,
    cell_text,
    column_of,
    from_columns,
    from_frame,
    from_patterns,
    label_too_long,
    too_many_values,
)
from .dataset import ColumnsWithoutLeafNames, DataError, Dataset, LeavesWithoutColumns, NeedsMapping, TooManyValues
from .matching import check_matches_model, resolve_mapping
from .new_rows import encode_rows

# shown in tracebacks and reprs, and pickled, under the path users import them from
for _public in (DataError, NeedsMapping, LeavesWithoutColumns, ColumnsWithoutLeafNames, TooManyValues, Dataset, Column):
    _public.__module__ = __name__
del _public

__all__ = [
    "DataError",
    "NeedsMapping",
    "LeavesWithoutColumns",
    "ColumnsWithoutLeafNames",
    "TooManyValues",
    "Dataset",
    "from_frame",
    "from_patterns",
    "check_matches_model",
    "resolve_mapping",
    "encode_rows",
    "Column",
    "column_of",
    "from_columns",
    "too_many_values",
    "label_too_long",
    "cell_text",
    "COUNT_COLUMN_NAMES",
    "MISSING_TOKENS",
    "MAX_TOTAL_COUNT",
]
