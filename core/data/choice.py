"""Which columns of a file become the data: the ones named, all but some, and identifiers kept beside them.

A survey file holds more than the items a model is over: an identifier per
respondent, covariates, free text. :class:`ColumnChoice` says which columns
:func:`effdim.reading.read_data` keeps (``columns``, in the file's order),
which it leaves out (``drop``), and which identify the rows (``ids``): those
are read whatever their number of values, left out of the
:class:`~effdim.data.Dataset`, and given back one value per input row
(:attr:`effdim.reading.Loaded.ids`), so posterior memberships can be merged
back into the file (:meth:`effdim.FitResult.posteriors`). A count column
(:data:`~effdim.data.COUNT_COLUMN_NAMES`) is kept unless dropped: it is not a
column of the data but how many rows each line stands for.

Every name is checked against the file's header; a name it does not have is
refused naming the columns it has.

Examples
--------
>>> from effdim.reading import read_data
>>> loaded = read_data(b"id,a,b,c\\n1,x,y,z\\n2,y,x,z\\n3,x,x,y\\n", drop=["c"], ids=["id"])
>>> loaded.dataset.columns, loaded.ids["id"].tolist()
(('a', 'b'), ['1', '2', '3'])
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import shown
from .building import COUNT_COLUMN_NAMES, Column
from .dataset import DataError

__all__ = ["ColumnChoice"]


def _names(what: str, names: Iterable[str] | str | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    out = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise DataError(f"{what}: a column is named by its header's text, got {name!r}")
        if name.strip() in out:
            raise DataError(f"{what} names the column {name.strip()!r} twice")
        out.append(name.strip())
    return tuple(out)


@dataclass(frozen=True)
class ColumnChoice:
    """The columns a reader keeps: ``keep`` (``None``: every one), but not ``drop``, and ``ids`` apart."""

    keep: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, columns: Iterable[str] | None = None, drop: Iterable[str] = (), ids: Iterable[str] = ()
    ) -> ColumnChoice:
        """The choice of :func:`effdim.reading.read_data`'s ``columns``, ``drop`` and ``ids``, checked: names as
        text, each once, none both kept and dropped."""
        keep, drop, ids = _names("columns", columns), _names("drop", drop) or (), _names("ids", ids) or ()
        for first, second, words in (
            (keep or (), drop, "kept and dropped"),
            (keep or (), ids, "kept as data and as an identifier"),
        ):
            both = [c for c in first if c in second]
            if both:
                raise DataError(f"the column {both[0]!r} is both {words}")
        if keep is not None and not keep:
            raise DataError("columns: name at least two columns to keep")
        return cls(keep, drop, ids)

    @property
    def whole(self) -> set[str]:
        """Columns read with every value they have (they leave the data: no limit on their states applies)."""
        return set(self.drop) | set(self.ids)

    @property
    def chosen(self) -> bool:
        """Whether any column is named (else the reader keeps them all)."""
        return self.keep is not None or bool(self.drop) or bool(self.ids)

    def apply(
        self,
        header: list[str],
        columns: list[Column],
        n: int,
        source: str,
        *,
        wide: dict[str, int],
        missing: Collection[str],
    ) -> tuple[list[str], list[Column], pd.DataFrame | None]:
        """The header and columns of the data, and the identifiers' values per row (``None`` without ids).

        ``header``/``columns`` are what the reader read; ``wide`` the columns it left out for too many
        values (name -> how many), which may be left out or named as identifiers but not kept."""
        known = [*header, *wide]
        for name in (*(self.keep or ()), *self.drop, *self.ids):
            if name not in known:
                raise DataError(f"{source}: no column named {name!r}; columns are {', '.join(map(shown, known))}")
        for name in self.keep or ():
            if name in wide:
                raise DataError(
                    f"{source}: column {name!r} has {wide[name]:,} or more distinct values: probably continuous or "
                    "an identifier, not an item; leave it out or name it as an identifier"
                )
        counts = {h for h in header if h.lower() in COUNT_COLUMN_NAMES}
        kept = [
            j
            for j, h in enumerate(header)
            if h not in self.drop and h not in self.ids and (self.keep is None or h in self.keep or h in counts)
        ]
        ids = None
        if self.ids:
            if counts & {header[j] for j in kept}:
                raise DataError(
                    f"{source}: identifiers need one row per case, and the column {sorted(counts)[0]!r} counts "
                    "rows; leave the identifier out, or drop the count column"
                )
            ids = pd.DataFrame({name: _values(columns[header.index(name)], n, missing) for name in self.ids})
        return [header[j] for j in kept], [columns[j] for j in kept], ids


def _values(column: Column, n: int, missing: Collection[str]) -> list:
    """One value per row of a column as read (``None`` where missing; whole numbers as ``int``)."""

    def plain(value):
        if isinstance(value, str):
            value = value.strip()
            return None if value in missing else value
        if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
            return None
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        return value.item() if isinstance(value, np.generic) else value

    lookup = [plain(u) for u in column.uniques] + [None]
    codes = np.asarray(column.codes)
    return [lookup[c] for c in codes.tolist()] if len(codes) == n else [None] * n
