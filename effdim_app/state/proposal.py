"""State of a proposed model: a new hidden node over a pair of items, shown before it is applied.

A click on a bivariate residual of the "Fitted model" view proposes the fitted
model with a new hidden node over that pair (:func:`effdim.diagnostics.relax_pair`).
Nothing changes until the analyst applies it: the proposal says the new model's
notation, ``ds`` and ``de`` (:meth:`ModelState.quick_report`) and, when a fit of
that very model is already among the fits shown, the change of the shown score.

Applying it puts the model into the editor (undoable there) and scores it next,
which clears the sweep or climb as any model change does. Undo of that edit
(anywhere: the editor's Undo or this proposal's) brings the earlier sweep or
climb back with the model, as results of the model now shown again, and the
fitted view back to the fit and node that were shown.

No Panel import (as the rest of :mod:`effdim_app.state`).
"""

from __future__ import annotations

from typing import Any

import param

from .fitted import DEFAULT_SCORE, FittedState
from .model import ModelState
from .scores import ScoresState

__all__ = ["ProposalState"]


class ProposalState(param.Parameterized):
    """The model proposed from a bivariate residual, waiting for the analyst's yes or no."""

    fitted = param.ClassSelector(class_=FittedState, instantiate=False)
    pending = param.Parameter(default=None, doc="The proposed HLCModel (None: nothing proposed).")
    text = param.String(default="", doc="What the proposal is, or what happened to it, in words.")
    applied = param.Boolean(default=False, doc="The last proposal was applied and can be undone.")

    def __init__(self, fitted: FittedState, **params):
        super().__init__(fitted=fitted, **params)
        # (model, the model scored, ScoresState.snapshot(), the fitted view's fits, chosen fit and node) before
        # applying
        self._before: tuple[Any, Any, tuple, tuple] | None = None
        # registered after ScoresState's own watcher, so it runs after the results were cleared
        self.models.param.watch(self._model_changed, ["effective"])

    @property
    def models(self) -> ModelState:
        return self.fitted.models

    @property
    def scores(self) -> ScoresState:
        return self.fitted.scores

    def propose(self, a: str, b: str) -> bool:
        """Propose the shown fit's model with a new hidden node over items ``a`` and ``b`` (column names)."""
        from effdim import ModelError
        from effdim.diagnostics import relax_pair
        from effdim.errors import EffdimError

        fit = self.fitted.fit
        if fit is None or a == b:
            return False
        leaf = {fit.labels.name(x): x for x in fit.model.observed}
        try:
            moved = relax_pair(fit.model, leaf[a], leaf[b])
            report, _how, why = self.models.quick_report(moved)
        except (KeyError, ModelError, EffdimError) as err:
            self.param.update(pending=None, text=f"No new hidden node over {a} and {b}: {err}")
            return False
        de = f"de = {report.de}" if report.de is not None else f"de not computed yet ({why})"
        self.param.update(
            pending=moved,
            applied=False,
            text=(
                f"Proposed: {moved}, a new hidden node over {a} and {b}. ds = {report.ds}, {de}. "
                f"{self._score_change(moved)} Apply it to edit and score this model; the current results stay "
                "until then."
            ),
        )
        return True

    def _score_change(self, moved) -> str:
        """The shown score of ``moved`` against the shown fit's, when a fit of ``moved`` is at hand."""
        from effdim.scores import SCORES

        fit = self.fitted.fit
        other = next((f for f in self.fitted.fits.values() if f.model == moved), None)
        label = SCORES[DEFAULT_SCORE].label
        if other is None:
            return f"Its {label} is known once it is fitted (a sweep or climb after applying)."
        change = other.score(DEFAULT_SCORE) - fit.score(DEFAULT_SCORE)
        return f"{label} change from the shown fit: {change:+,.2f}."

    def dismiss(self) -> None:
        self.param.update(pending=None, text="")

    def apply(self) -> bool:
        """Put the proposed model into the editor and score it next (the editor's Undo goes back)."""
        moved = self.pending
        if moved is None:
            return False
        fitted = self.fitted
        before = (
            self.models.model,
            self.models.effective,
            self.scores.snapshot(),
            (fitted.fits, fitted.chosen, fitted.node),
        )
        self._before = None  # the watcher must not restore while the model changes to the proposal
        if not self.models.set_model(moved, "New hidden node from a bivariate residual"):
            self.text = f"The editor refused {moved}."
            return False
        self.scores.mapping = "model"
        self._before = before
        self.param.update(
            pending=None,
            applied=True,
            text=(
                f"Applied: the editor and the next sweep or climb use {moved}. Undo brings back the previous model "
                "and its results."
            ),
        )
        return True

    def undo(self) -> bool:
        """Undo the applied proposal (as the editor's Undo does)."""
        return self.applied and self.models.undo()

    def _model_changed(self, event) -> None:
        before = self._before
        # Param calls this on every assignment of ``effective``, also of an equal model: toggling auto-regularize
        # on a regular model re-sends it, which is no edit (the proposal stays applied and undoable)
        if before is None or event.new == event.old:
            return
        model, scored, snapshot, (fits, chosen, node) = before
        self._before = None
        self.applied = False
        # another edit, or the model back but scored otherwise (auto-regularize toggled meanwhile on an irregular
        # model): the results stay cleared
        if self.models.model != model or self.models.effective != scored:
            return
        self.scores.restore(snapshot)  # shows the results' default pick ...
        self.fitted.param.update(fits=fits, chosen=chosen, node=node)  # ... back to the fit the analyst had chosen
        self.text = "Undone: the previous model and its results are back."
