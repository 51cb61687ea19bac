"""What a structure search hands its workers (:class:`effdim.executor.Workers`): candidates' local EM and
full-EM refits, each task a batch of them for one position of the search.

A task carries everything its result depends on: the current fit's parameters, the candidates, their
random streams, the settings. The data are the workers' shared value, sent once; each worker computes the
current fit's messages (:class:`~effdim.structure.local_em.Messages`) once per position and keeps the last
few, so the tasks of one screen share them. The same task gives the same result in any process, which is
why a search learns the same tree whatever runs its tasks (:mod:`effdim.structure.learn`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..data import Dataset
from ..distribution import Parameters
from ..em import EMResult, fit_em
from ..settings import EMSettings
from .local_em import LocalFit, Messages, continue_local_fit, local_fit

__all__ = ["LocalTask", "RefitTask", "local_task", "refit_task"]

#: Positions whose messages a worker keeps.
KEPT_POSITIONS = 4

_MESSAGES: OrderedDict = OrderedDict()
_LOCK = threading.Lock()


@dataclass(frozen=True)
class LocalTask:
    """Local EM of ``moves`` at the position ``key`` (the current fit ``params``): from the candidates' starts
    (``seeds``, one stream each) for ``max_iter`` E-steps, or carried on from ``fits`` when given.
    ``messages``: the position's messages when the task runs in the process that made them."""

    key: str
    params: Parameters
    moves: tuple
    max_iter: int
    tol: float
    starts: int = 2
    seeds: tuple = ()
    fits: tuple = ()
    prior: float | None = None
    messages: Messages | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RefitTask:
    """Full EM of ``model`` from ``init`` as ``settings`` say (no restarts)."""

    model: Any
    init: Parameters
    settings: EMSettings


def _messages(data: Dataset, task: LocalTask) -> Messages:
    if task.messages is not None:
        return task.messages
    with _LOCK:
        found = _MESSAGES.get(task.key)
    if found is None:
        found = Messages(task.params, data)
        with _LOCK:
            _MESSAGES[task.key] = found
            while len(_MESSAGES) > KEPT_POSITIONS:
                _MESSAGES.popitem(last=False)
    return found


def local_task(data: Dataset, task: LocalTask) -> list[LocalFit]:
    """The local fits of a :class:`LocalTask`, in the order of its moves."""
    messages = _messages(data, task)
    if task.fits:
        return [
            continue_local_fit(fit, move, messages, max_iter=task.max_iter - fit.n_iter, tol=task.tol, prior=task.prior)
            for fit, move in zip(task.fits, task.moves)
        ]
    return [
        local_fit(
            data,
            move,
            task.params,
            starts=task.starts,
            max_iter=task.max_iter,
            tol=task.tol,
            seed=seed,
            messages=messages,
            prior=task.prior,
        )
        for move, seed in zip(task.moves, task.seeds)
    ]


def refit_task(data: Dataset, task: RefitTask) -> EMResult:
    """The full-EM fit of a :class:`RefitTask`."""
    return fit_em(data, task.model, task.settings, init=task.init)
