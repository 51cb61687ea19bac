"""The served dashboard's limits: one place for every size and time rule (no Panel import).

A teacher serves one ``effdim app`` to a class; each limit below keeps one
student's input from stalling or killing the others' sessions
(docs/robustness.md). Set them with ``effdim app`` options or a TOML/JSON file
(``effdim app --config limits.toml``) whose keys are the field names below::

    workers = 2            # computations running at once (the cores)
    time_limit = 60        # seconds one computation may run
    max_memory_mb = 2048   # memory of one computation
    max_nodes = 200        # nodes of one model
    max_card = 1000000000  # cardinality of one node
    max_sweep = 50         # cardinalities in one sweep
    max_upload_mb = 10     # size of an uploaded data file
    quick_ms = 50          # computations estimated faster than this run at once, not as a job
    max_waiting = 8        # computations one client (an address) may have waiting for a worker

The defaults suit a 2-core laptop serving about thirty students.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields
from pathlib import Path

from effdim import HLCModel, ModelError
from effdim.dimensions import dimensions_cost
from effdim.errors import InvalidArgument, os_error_words
from effdim.limits import format_bytes
from effdim.validation import check_int

__all__ = ["ServerLimits", "load_limits", "LimitError", "WORK_PER_SECOND", "search_seconds"]

#: Multiply-adds of an exact rank per second on one core of a small laptop (docs/performance.md, "Exact rank").
WORK_PER_SECOND = 4e9
#: Seconds of a structure search's computation left after the search's own time limit, for what follows it (the
#: end's fit, the result's way back to the server) and what the job's clock counts before it (the worker's
#: start); a quarter of a limit under 20 s.
SEARCH_MARGIN_SECONDS = 5.0


def search_seconds(time_limit: float) -> float:
    """The time limit of a structure search run as one computation that may take ``time_limit`` seconds: the
    search ends with its best tree before the server stops the computation (:data:`SEARCH_MARGIN_SECONDS`).

    >>> search_seconds(60), search_seconds(8)
    (55.0, 6.0)
    """
    return time_limit - min(SEARCH_MARGIN_SECONDS, time_limit / 4)


class LimitError(ModelError):
    """An input exceeds one of the server's limits (the message names the input and the limit)."""


@dataclass(frozen=True)
class ServerLimits:
    """Limits of one dashboard server (see the module docstring for their meaning)."""

    workers: int = min(2, os.cpu_count() or 1)
    time_limit: float = 60.0
    max_memory_mb: int = 2048
    max_nodes: int = 200
    max_card: int = 1_000_000_000
    max_sweep: int = 50
    max_upload_mb: float = 10.0
    quick_ms: float = 50.0
    max_waiting: int = 8

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            low = 0 if f.name == "quick_ms" else 1
            if f.type in ("int", int):
                check_int(f"limit {f.name!r}", value, low)
            elif (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < low
            ):
                raise InvalidArgument(f"limit {f.name!r} must be a number of at least {low}, got {value!r}")

    # ------------------------------------------------------------ derived sizes
    @property
    def job_bytes(self) -> int:
        """Memory one computation may use."""
        return int(self.max_memory_mb) * 1024**2

    @property
    def upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1_000_000)

    @property
    def notation_chars(self) -> int:
        """Longest notation or JSON text read (generous: about 60 characters per node)."""
        return 60 * int(self.max_nodes) + 1000

    # ------------------------------------------------------------ checks
    def check_model(self, model: HLCModel) -> None:
        """Raise :class:`LimitError` when ``model`` has too many nodes or too large a cardinality."""
        if len(model) > self.max_nodes:
            raise LimitError(
                f"the model has {len(model):,} nodes; this server takes models of at most {self.max_nodes:,} nodes"
            )
        node = max(model.nodes, key=model.card)
        if model.card(node) > self.max_card:
            raise LimitError(
                f"node {node!r} has {model.card(node):,} states; this server takes at most "
                f"{self.max_card:,} states per node"
            )

    def check_text(self, text: str | bytes, what: str) -> None:
        """Raise :class:`LimitError` when a notation or JSON text is too long to be a model here."""
        if len(text) > self.notation_chars:
            raise LimitError(
                f"the {what} is longer than {self.notation_chars:,} characters, more than a model of "
                f"at most {self.max_nodes:,} nodes needs"
            )

    def check_sweep(self, low: int, high: int) -> None:
        """Raise :class:`LimitError` when a sweep of the cardinalities ``low..high`` goes beyond this server's
        limits."""
        if high > self.max_card:
            raise LimitError(f"the largest cardinality {high:,} is above this server's limit of {self.max_card:,}")
        if high - low + 1 > self.max_sweep:
            raise LimitError(
                f"the range {low}..{high} has {high - low + 1:,} cardinalities; this server sweeps at most "
                f"{self.max_sweep} at a time"
            )

    def plan(self, model: HLCModel, *, direct: bool) -> tuple[str, str]:
        """How to compute the dimensions of ``model``: ``("now" | "job" | "refuse", reason)``.

        From closed forms only (:func:`effdim.dimensions.dimensions_cost`): refuse
        above the memory of one computation; run at once when estimated below
        ``quick_ms``; otherwise submit a job.
        """
        peak, work = dimensions_cost(model, direct=direct)
        if peak > self.job_bytes:
            what = "the whole model's Jacobian rank" if direct else "the exact de"
            return "refuse", (
                f"{what} would need about {format_bytes(peak)} of memory, more than one "
                f"computation may use on this server ({format_bytes(self.job_bytes)})"
            )
        seconds = work / WORK_PER_SECOND
        if seconds * 1000 <= self.quick_ms:
            return "now", ""
        return "job", f"estimated {_duration(seconds)} of computation"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"about {seconds:.0f} s"
    if seconds < 7200:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.0f} h"


def load_limits(path: str | os.PathLike | None = None, **overrides) -> ServerLimits:
    """Limits from a TOML or JSON file (by extension), then ``overrides`` (``None`` values ignored).

    Raises :class:`effdim.errors.InvalidArgument` naming the file and the key for unknown keys or bad values.
    """
    values: dict = {}
    if path is not None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise InvalidArgument(f"cannot read limits file {str(path)!r}: {os_error_words(err)}") from None
        try:
            if path.suffix.lower() == ".json":
                values = json.loads(text)
            else:
                import tomllib

                values = tomllib.loads(text)
        except (ValueError, UnicodeDecodeError) as err:
            kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
            raise InvalidArgument(f"limits file {str(path)!r} is not valid {kind}: {err}") from None
        if not isinstance(values, dict):
            raise InvalidArgument(f"limits file {str(path)!r} must hold a table of limits")
        known = {f.name for f in fields(ServerLimits)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InvalidArgument(
                f"limits file {str(path)!r}: unknown limit {unknown[0]!r} (known: {', '.join(sorted(known))})"
            )
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ServerLimits(**values)
