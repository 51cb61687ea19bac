"""The schedule of EM random restarts with pruning (Chickering & Heckerman 1997).

Many random starts run a few EM steps together; the better half (by the
objective) is kept, the number of steps doubled, and so on until one start
remains, which then runs to convergence (``docs/theory.md``, section
"8. EM restarts and nested models"). :func:`restart_schedule` spells that out
as stages; :func:`effdim.em.fit_em` runs them. Keeping the schedule apart
from the EM iteration means either can change without touching the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InvalidArgument

__all__ = ["Stage", "restart_schedule", "best_starts"]


@dataclass(frozen=True)
class Stage:
    """Run every remaining start ``steps`` more EM steps (``None``: to convergence or
    ``max_iter``), then keep the ``keep`` best."""

    steps: int | None
    keep: int


def restart_schedule(starts: int, first_steps: int = 50, prune: bool = True) -> list[Stage]:
    """The stages for ``starts`` starts.

    With pruning: ``first_steps`` steps, keep ``ceil(S / 2)``; twice the steps,
    keep half of those; ... until one start remains; then run it to the end.
    Without pruning: one stage that runs every start to the end.

    >>> restart_schedule(5, 50)
    [Stage(steps=50, keep=3), Stage(steps=100, keep=2), Stage(steps=200, keep=1), Stage(steps=None, keep=1)]
    >>> restart_schedule(5, prune=False)
    [Stage(steps=None, keep=5)]
    """
    if starts < 1:
        raise InvalidArgument(f"need at least one start, got {starts}")
    stages = []
    left, steps = int(starts), max(1, int(first_steps))
    if prune:
        while left > 1:
            left = (left + 1) // 2
            stages.append(Stage(steps, left))
            steps *= 2
    stages.append(Stage(None, left))
    return stages


def best_starts(objectives: np.ndarray, keep: int) -> np.ndarray:
    """Positions of the ``keep`` highest ``objectives``, in their original order (ties: the earlier start)."""
    order = np.argsort(-np.asarray(objectives), kind="stable")
    return np.sort(order[:keep])
