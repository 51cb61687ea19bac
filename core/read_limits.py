"""What a data file may hold, checked before it is allocated: :class:`ReadLimits`.

One object carries every limit of :func:`effdim.reading.read_data` and what happens at them: the file's
size, its columns, each column's distinct values (and the columns exempt from that limit), and what a
compressed file may unpack to (:mod:`effdim.binary_formats`, derived from the file-size limit). Every
refusal is a one-line :class:`effdim.data.DataError` naming the file, the count and the limit; the limits
and their messages are listed in ``docs/robustness.md``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from .data import DataError
from .limits import format_bytes

__all__ = ["DEFAULT_MAX_COLUMNS", "UNPACK_FACTOR", "ReadLimits"]

#: Columns a data file may have (a survey has tens to hundreds of items).
DEFAULT_MAX_COLUMNS = 2_000

#: A file's parts as stored uncompressed may take this many times the file-size limit (a survey's Parquet
#: or Excel file unpacks to a few times its size; a file built to exhaust memory, to thousands of times).
UNPACK_FACTOR = 10

_TOO_MANY_STATES = ("refuse", "drop")


@dataclass(frozen=True)
class ReadLimits:
    """The limits a data file is read within.

    Parameters
    ----------
    max_bytes:
        Larger files are refused before they are read; what a compressed file may unpack to derives from it
        (:attr:`cells`, :attr:`unpacked_bytes`).
    max_columns:
        A wider header is refused before any cell is parsed; ``None``: no limit.
    max_states:
        Most distinct values of a column (a count column excepted): more means a number or a text, not a
        category.
    too_many_states:
        ``"refuse"`` such a column (a :class:`effdim.data.DataError`), or ``"drop"`` it and list it in
        :attr:`effdim.reading.Loaded.dropped` (the dashboard lets the user pick the columns).
    unlimited:
        Columns exempt from ``max_states``, read with every value they have (a distal outcome, a covariate
        or a weight that is a number).

    Examples
    --------
    >>> ReadLimits(max_states=10).cells
    25000000
    >>> ReadLimits(too_many_states="skip")
    Traceback (most recent call last):
    ...
    effdim.data.DataError: too_many_states must be 'refuse' or 'drop', got 'skip'
    """

    max_bytes: int = 50_000_000
    max_columns: int | None = DEFAULT_MAX_COLUMNS
    max_states: int = 50
    too_many_states: str = "refuse"
    unlimited: Collection[str] = field(default=())

    def __post_init__(self) -> None:
        if self.too_many_states not in _TOO_MANY_STATES:
            raise DataError(f"too_many_states must be 'refuse' or 'drop', got {self.too_many_states!r}")
        for name in ("max_bytes", "max_states", "max_columns"):
            value = getattr(self, name)
            if value is None and name == "max_columns":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DataError(f"{name} must be a whole number of at least 1, got {value!r}")
        object.__setattr__(self, "unlimited", tuple(self.unlimited))

    @property
    def cells(self) -> int:
        """Rows x columns at most: as many as a CSV file of ``max_bytes`` can hold."""
        return max(1, self.max_bytes // 2)

    @property
    def unpacked_bytes(self) -> int:
        return UNPACK_FACTOR * self.max_bytes

    def check_cells(self, name: str, rows: int, columns: int) -> None:
        if rows * columns > self.cells:
            raise DataError(
                f"{name}: the file holds {rows:,} rows x {columns:,} columns = {rows * columns:,} cells, more than "
                f"the limit of {self.cells:,} (as many as a CSV file of {self.max_bytes:,} bytes can hold)"
            )

    def check_columns(self, name: str, columns: int) -> None:
        if self.max_columns is not None and columns > self.max_columns:
            raise DataError(f"{name}: the file has {columns:,} columns, more than the limit of {self.max_columns:,}")

    def check_unpacked(self, name: str, size: int, what: str = "the file unpacks", limit: int | None = None) -> None:
        """Refuse ``size`` bytes unpacked above ``limit`` (default :attr:`unpacked_bytes`); ``what``: the part
        that does, with its verb."""
        limit = self.unpacked_bytes if limit is None else limit
        if size > limit:
            raise DataError(f"{name}: {what} to {format_bytes(size)}, more than the limit of {format_bytes(limit)}")
