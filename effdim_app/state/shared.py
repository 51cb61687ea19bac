"""What the session states share (no Panel import): the message kinds, an error in words, a finished job's
outcome in words and how its changes reach the screen, and the engine's answers cached across sessions.

Cached results are immutable and keyed by immutable models, so sharing them
between sessions is safe (and makes undo/redo and re-visits instant).
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any

import param

from effdim import HLCModel

from ..jobs import UNEXPECTED, Job, JobRunner

#: The kinds of a state's ``message`` (the views colour it by kind).
MESSAGE_KINDS = ["info", "success", "warning", "danger"]


def error_text(err: BaseException) -> str:
    """The error's message for the user (its class name when it has none); a model leaf that names no data
    column, or a column that names no leaf, gets the dashboard's remedy in place of the Python argument the
    engine's message names."""
    from effdim.data import ColumnsWithoutLeafNames, LeavesWithoutColumns

    if isinstance(err, LeavesWithoutColumns):
        return (
            f"{err.problem}; rename the leaves after the columns (Rename on the Model tab), or score the LC "
            "model over all columns"
        )
    if isinstance(err, ColumnsWithoutLeafNames):
        return f"{err.problem}; rename the column in the data file"
    text = str(err).strip()
    return text or type(err).__name__


def failure_text(err: BaseException) -> str:
    """What the user reads of a computation that raised: the engine's refusal in its words (an
    :class:`effdim.errors.EffdimError`), or, for any other error (a defect or a library's; the caller logs
    its traceback), that effdim failed, not her input, never the library's words."""
    from effdim.errors import EffdimError

    return error_text(err) if isinstance(err, EffdimError) else UNEXPECTED


@lru_cache(maxsize=512)
def cached_violations(model: HLCModel) -> tuple:
    from effdim import regularity_violations

    return tuple(regularity_violations(model))


@lru_cache(maxsize=512)
def cached_regularize(model: HLCModel):
    from effdim import regularize

    return regularize(model)


class _Reports:
    """Dimension reports by model, least recently used first out (bounded memory).

    Filled by quick computations and by finished jobs alike, so undo/redo and
    other sessions' visits to a model are instant.
    """

    def __init__(self, size: int = 256):
        self.size = size
        self._items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple):
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        return None

    def put(self, key: tuple, report) -> None:
        self._items[key] = report
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


REPORTS = _Reports()


@lru_cache(maxsize=512)
def cached_standard_dimension(model: HLCModel) -> int:
    from effdim.bounds import standard_dimension

    return standard_dimension(model)


def job_parameter(doc: str) -> param.ClassSelector:
    """A state's parameter holding one of its running jobs (None when none runs)."""
    return param.ClassSelector(class_=Job, default=None, allow_None=True, instantiate=False, doc=doc)


#: How the changes that one finished job causes reach the screen together. A state's own default holds
#: nothing (no Panel here); the dashboard gives its states :func:`effdim_app.views.widgets.one_message`, so a
#: sweep's results, table, curves and status arrive as one message the browser lays out once, not two dozen.
NOTHING_HELD: Callable[[], AbstractContextManager] = contextlib.nullcontext


def not_shown(task: str, job: Job, *, changed: bool) -> dict | None:
    """Why the finished ``job`` of ``task`` has no result to show (the state's status, progress and message),
    or ``None`` when it has one; ``changed``: the model or data changed while it ran."""
    name = task.capitalize()
    if job.state == "cancelled":
        return {"status": f"{name} cancelled.", "progress": 0}
    if job.state != "done":
        return {
            "status": f"{name} failed.",
            "progress": 0,
            "message": f"{name} failed: {job.error}",
            "message_kind": "danger",
        }
    if changed:
        return {"status": f"{name} finished, but the model or data changed meanwhile: result discarded.", "progress": 0}
    return None


def runner_parameter(doc: str) -> param.ClassSelector:
    """A state's parameter holding the job runner its heavy work goes to."""
    return param.ClassSelector(class_=JobRunner, default=None, allow_None=True, instantiate=False, doc=doc)
