"""The structure search of the "Data & scores" tab as the session runs it (no Panel import): :class:`StructureRuns`,
a mixin of :class:`~effdim_app.state.ScoresState`.

The search runs as a job (:func:`effdim_app.tasks.learn_task`) with a time limit below the server's
(:func:`effdim_app.config.search_seconds`), so it ends with its best tree; its progress bar is the share of that
time used, and its best tree so far, handed out at each improvement (``Job.partial``), is drawn as it runs and
kept when the search is cancelled or stopped by the server.
"""

from __future__ import annotations

from typing import Any

from effdim import HLCModel
from effdim.scores import SCORES

from .. import tasks
from ..config import search_seconds

__all__ = ["StructureRuns"]

#: How a search that did not finish ended, in the status line's words (by the job's state).
UNFINISHED = {"cancelled": "cancelled", "timed out": "stopped by the server's time limit", "failed": "failed"}


def _hidden_count(model: HLCModel) -> str:
    count = len(model.hidden)
    return f"{count} hidden node{'s' if count != 1 else ''}"


class StructureRuns:
    """Learn structure (a mixin of :class:`~effdim_app.state.ScoresState`: reads its data, jobs and
    ``learn_score``, shows ``learned_tree``, ``learned_note``, ``status`` and ``progress``, starts through its
    ``_free`` and runs through its ``_run``)."""

    async def run_learn(self) -> Any:
        """Learn a tree over all data columns (:func:`effdim.structure.learn_structure`) as a job, then open it
        in the tree editor (undoable). Edits meanwhile do not stop it; new data does. Returns the
        :class:`effdim.structure.LearnedStructure`, or for a search cancelled or stopped by the server the best
        tree it reported (:class:`effdim.structure.StructureProgress`), or ``None``."""
        if not self._free():
            return None
        label = SCORES[self.learn_score].label
        budget = search_seconds(self.jobs.timeout)
        self.param.update(learned_tree=None, learned_note="")

        def show(learned):
            fit = learned.fit
            self._open_learned(learned.model, f"{label} {fit.score(self.learn_score):,.2f}")
            said = (
                f"{len(learned.steps)} moves from the start tree. {label} {fit.score(self.learn_score):,.2f}, "
                f"ds {fit.ds}, de {fit.de}; it is now in the tree editor (Undo brings back your model)."
            )
            if learned.stopped == "max_time":
                said = f"Structure search stopped at the time limit ({budget:.3g} s); best tree so far: {said}"
            else:
                said = f"Structure learned in {learned.seconds:.0f} s (no move improves it): {said}"
            self.param.update(progress=100, status=said)
            return learned

        def keep(job):
            best = job.partial[-1]
            how = UNFINISHED.get(job.state, "failed")
            self._open_learned(best.model, f"{label} {best.score:,.2f}")
            self.param.update(
                status=f"Structure search {how} after {job.seconds:.0f} s; best tree so far: {best.steps} moves from "
                f"the start tree, {label} {best.score:,.2f}; it is now in the tree editor (Undo brings back your "
                "model).",
                message="" if job.state == "cancelled" else f"Structure search {how} ({job.error.rstrip('.')}).",
                message_kind="warning",
            )
            return best

        learned = await self._run(
            "learn",
            tasks.learn_task,
            self.data.dataset,
            score=self.learn_score,
            settings=self.em_settings(),
            max_time=budget,
            depends=lambda: id(self.data.dataset),
            label=f"Learn structure ({label})",
            describe=lambda job: _running_words(job, budget),
            on_partial=lambda reports: self._best_tree_so_far(reports[-1].model),
            then=show,
            keep=keep,
        )
        if learned is None:
            self.param.update(learned_tree=None, learned_note="")
        return learned

    def _best_tree_so_far(self, model: HLCModel) -> None:
        """Show the running structure search's best tree."""
        self.param.update(
            learned_tree=model,
            learned_note=f"Best tree so far ({_hidden_count(model)}); redrawn whenever the search improves it.",
        )

    def _open_learned(self, model: HLCModel, scored: str) -> None:
        """Put the search's tree into the tree editor (undoable), score it there, and keep it drawn."""
        self.models.set_model(model, "Learned structure")
        self.mapping = "model"
        self.param.update(
            learned_tree=model,
            learned_note=f"The learned tree ({_hidden_count(model)}, {scored}), now in the tree editor.",
        )


def _running_words(job, budget: float) -> str:
    """The status line of a running search: how long it has run of its time limit, and its last report's words
    (its steps and best score); a waiting one's place in the queue."""
    if job.state != "running":
        return job.describe()
    note = f"; {job.note}" if job.note else ""
    return f"{job.label}: running for {job.seconds:.0f} s, ends by {budget:.3g} s at the latest{note}."
