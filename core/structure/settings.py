"""How a structure search runs: one frozen, checked settings object (:class:`SearchSettings`).

:func:`effdim.learn_structure` takes ``settings=SearchSettings(...)`` for the
search and :class:`effdim.EMSettings` for EM, or the fields of either as
keyword options (:func:`split_options`); each value is checked once, when the
object is made, in the words a user knows it by.

>>> SearchSettings(score="BIC", rounds=0).score
'bic'
>>> SearchSettings(tries=0)
Traceback (most recent call last):
...
effdim.errors.InvalidArgument: tries must be at least 1, got 0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..executor import Execution
from ..limits import MAX_ROUNDS, ROUNDS
from ..model import HLCModel
from ..scores import fit_criterion
from ..settings import EMSettings
from ..validation import check_int, check_number
from .moves import OPERATORS

__all__ = ["SearchSettings", "split_options"]


@dataclass(frozen=True)
class SearchSettings:
    """The settings of :func:`effdim.learn_structure` besides EM's (docs/structure.md, "How it searches").

    Attributes
    ----------
    score:
        The score that drives the search: any name of :data:`effdim.scores.SCORES`.
    start:
        ``"islands"`` (mutual-information grouping, :func:`effdim.structure.islands_model`),
        ``"lc"`` (the binary LC model), or an :class:`~effdim.model.HLCModel`
        over the leaves.
    operators:
        A subset of :data:`effdim.structure.OPERATORS`.
    max_time:
        Seconds for the whole search, every phase included (mutual
        information, the start fit, each candidate, each refit): at the limit
        the best model so far is returned (at least the start model, fitted by
        one short EM start if the limit fell inside its fit), with
        ``stopped == "max_time"``. ``None``: no limit.
    cpu_time:
        Count ``max_time`` (and the reported seconds) in CPU seconds of this
        process instead of wall seconds: on a shared machine the search then
        stops at the same point whatever the load (the structure study).
    tries, screen_iter:
        Candidates of each operator refit by full EM per step, the best by
        local score whatever its sign (the local score of ``ND`` and ``NR`` is
        often far too low), and the E-steps of each such refit.
    escapes:
        Climbs out of each local optimum once the climb stops, from its least
        bad neighbours by full EM (the refit candidates that lost there), best
        first; an end that scores higher becomes the optimum escaped from next,
        with ``escapes`` escapes of its own (in a row that end no higher), then
        the optima before it get theirs.
    local_starts, local_iter, local_tol:
        Starts, E-steps (SQUAREM-accelerated) and tolerance (per data row) of
        the restricted (local) EM of each candidate.
    execution:
        Where the candidates' local EM and the refits run (:class:`effdim.executor.Execution`: this process,
        local worker processes, or a Dask cluster); the search learns the same tree wherever they run.
        ``None``: this process.
    rounds:
        Times the search starts again from its own end, at most, while that
        ends higher (:func:`effdim.structure.start_again`); each round draws
        from its own stream spawned from the seed, so the first round is the
        same whatever ``rounds`` is.
    """

    score: str = "bic+"
    start: str | HLCModel = "islands"
    operators: tuple[str, ...] = OPERATORS
    max_time: float | None = None
    cpu_time: bool = False
    tries: int = 2
    screen_iter: int = 200
    escapes: int = 2
    local_starts: int = 2
    local_iter: int = 96
    local_tol: float = 1e-6
    rounds: int = ROUNDS
    execution: Execution | None = None

    def __post_init__(self) -> None:
        fix = object.__setattr__
        fix(self, "score", fit_criterion(self.score, "a structure search").name)
        if not (isinstance(self.start, HLCModel) or self.start in ("islands", "lc")):
            raise InvalidArgument(f"unknown start {self.start!r}; choose islands, lc or a model")
        operators = (self.operators,) if isinstance(self.operators, str) else tuple(self.operators)
        bad = [o for o in operators if o not in OPERATORS]
        if bad:
            raise InvalidArgument(f"unknown operator {bad[0]!r}; choose from {', '.join(OPERATORS)}")
        fix(self, "operators", operators)
        if self.max_time is not None and not (isinstance(self.max_time, (int, float)) and self.max_time > 0):
            raise InvalidArgument(f"max_time must be a positive number of seconds, got {self.max_time!r}")
        for name, low in (("tries", 1), ("screen_iter", 1), ("escapes", 0), ("local_starts", 1), ("local_iter", 1)):
            fix(self, name, check_int(name, getattr(self, name), low=low))
        fix(self, "rounds", check_int("rounds", self.rounds, low=0, high=MAX_ROUNDS))
        fix(self, "local_tol", check_number("local_tol", self.local_tol, low=0))
        if self.execution is not None and not isinstance(self.execution, Execution):
            raise InvalidArgument(f"execution must be an Execution, got {type(self.execution).__name__}")
        if not isinstance(self.cpu_time, bool):
            raise InvalidArgument(f"cpu_time must be True or False, got {self.cpu_time!r}")


def split_options(
    search: SearchSettings | None, em: EMSettings | None, options: dict[str, Any]
) -> tuple[SearchSettings, EMSettings]:
    """``search`` and ``em`` (default: the defaults) with the fields named in ``options`` replaced, each
    option going to the settings object that has it; an option neither has is refused, naming both lists.

    >>> s, e = split_options(None, None, {"rounds": 0, "restarts": 3})
    >>> s.rounds, e.restarts
    (0, 3)
    """
    if search is not None and not isinstance(search, SearchSettings):
        raise InvalidArgument(f"settings must be a SearchSettings, got {type(search).__name__}")
    search_names = [f.name for f in dataclasses.fields(SearchSettings)]
    em_names = [f.name for f in dataclasses.fields(EMSettings)]
    for key in options:
        if key not in search_names and key not in em_names:
            raise InvalidArgument(
                f"unknown option {key!r}; the search settings are: {', '.join(search_names)}; "
                f"the EM settings are: {', '.join(em_names)}"
            )
    mine = {k: v for k, v in options.items() if k in search_names}
    base = search if search is not None else SearchSettings()
    return (
        dataclasses.replace(base, **mine) if mine else base,
        EMSettings.of(em, **{k: v for k, v in options.items() if k in em_names}),
    )
