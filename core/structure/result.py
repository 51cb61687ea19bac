"""What a structure search returns and reports: its accepted steps, its progress, its result, and the rounds
after it (:func:`effdim.learn_structure`, :func:`effdim.structure.start_again`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fitting import FitResult
from ..model import HLCModel
from ..notation import format_model

__all__ = ["LearnedStructure", "Rounds", "Step", "StructureProgress"]


@dataclass(frozen=True)
class Step:
    """One accepted move: operator, sentence, the new model, its refit score, the
    ``gain`` over the previous model, its log-likelihood after full EM (``loglik``)
    and after local EM on the touched families (``local_loglik``), ``ds``, ``de``."""

    operator: str
    text: str
    model: HLCModel
    score: float
    gain: float
    loglik: float
    local_loglik: float
    ds: int
    de: int

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "move": self.text,
            "model": format_model(self.model),
            "score": self.score,
            "gain": self.gain,
            "loglik": self.loglik,
            "local_loglik": self.local_loglik,
            "ds": self.ds,
            "de": self.de,
        }


@dataclass(frozen=True)
class StructureProgress:
    """What a ``progress`` callback receives: the best ``model`` so far and its ``score``, accepted ``steps``
    and evaluated ``candidates`` so far, ``elapsed`` seconds, ``phase`` (``"done"`` in the search's last
    report), and the search's ``max_time`` (``None``: no time limit)."""

    model: HLCModel
    score: float
    steps: int
    candidates: int
    elapsed: float
    phase: str
    max_time: float | None = None

    @property
    def fraction(self) -> float | None:
        """How far the search is, in [0, 1]: the share of its time limit used, 1 in its last report.

        Time, not steps: how many steps, escapes and rounds a search takes is known only once no move
        improves its tree, while the time limit bounds when it ends. ``None`` without a limit, before the end.
        """
        if self.phase == "done":
            return 1.0
        if self.max_time is None:
            return None
        return min(1.0, max(0.0, self.elapsed / self.max_time))


@dataclass(frozen=True)
class LearnedStructure:
    """The outcome of :func:`learn_structure`.

    ``fit`` is the final model fitted and scored (:class:`effdim.FitResult`;
    its ``de`` comes from :func:`effdim.dimensions.dimensions`, and agrees with
    the local updates); ``steps`` the accepted moves; ``start`` the start
    model's fit; ``stopped`` why the search ended (``"converged"``: no
    candidate improves the score, or ``"max_time"``); ``rounds`` how many times
    it started again from its own end and ended higher (:func:`start_again`); ``costs`` its CPU seconds by
    part (:data:`effdim.structure.learn.COSTS`).
    """

    fit: FitResult
    score: str
    start: FitResult
    steps: tuple[Step, ...]
    candidates: int
    local_em_seconds: float
    full_em_seconds: float
    local_refits: int
    seconds: float
    stopped: str
    columns: dict = field(default_factory=dict)
    rounds: int = 0
    costs: dict = field(default_factory=dict)

    @property
    def model(self) -> HLCModel:
        return self.fit.model

    def to_json(self) -> dict[str, Any]:
        """``model`` (leaves named after the data columns), ``loglik``, every score, ``ds``, ``de``,
        ``steps`` (each with its ``gain``), and how the search ran."""
        out = self.fit.to_json()
        out.pop("card", None)
        out.update(
            {
                "score": self.score,
                "start": format_model(self.start.model),
                "start_score": self.start.score(self.score),
                "steps": [s.to_json() for s in self.steps],
                "candidates": self.candidates,
                "seconds": round(self.seconds, 3),
                "stopped": self.stopped,
                "rounds": self.rounds,
                "costs": {part: round(seconds, 3) for part, seconds in self.costs.items()},
            }
        )
        if self.columns:
            out["columns"] = dict(self.columns)
        return out


@dataclass(frozen=True)
class Rounds:
    """What :func:`start_again` did: the rounds that ended higher (``gained``, in order), whether the last
    round run was stopped by the time limit (``cut``), and the cost of all rounds run, those that gained
    nothing included: ``seconds``, ``candidates``, the seconds of local and full EM and the local refits, and
    the CPU seconds by part (as :class:`LearnedStructure` counts them)."""

    gained: tuple[LearnedStructure, ...]
    cut: bool
    seconds: float
    candidates: int
    local_em_seconds: float
    full_em_seconds: float
    local_refits: int
    costs: dict = field(default_factory=dict)
