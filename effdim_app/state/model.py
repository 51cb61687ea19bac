"""The edited model as a param class (no Panel import): :class:`ModelState`.

The edited HLC model, the selection, undo/redo, and what the engine says
about the model (regularity, the regular equivalent, the dimension report).
The edits themselves (undo/redo, selection, editing and loading a model) are
:class:`~effdim_app.state.model_edits.ModelEdits`; this module derives what
is drawn from each model they make current.

Sizes are checked against the server's :class:`~effdim_app.config.ServerLimits`
before anything is computed, and heavy work (dimensions beyond a quick
threshold, the whole-tree rank) runs as a :class:`~effdim_app.jobs.Job` in a
worker process, so one session can never stall or kill the others
(docs/robustness.md). The cheap answers (ds, dc, dp, db, regularity;
:func:`effdim.dimensions.bounds_report`) are always there; the exact de
follows when its job ends, or :attr:`ModelState.de_note` says why not.

The views (``effdim_app.views``) only display these parameters and call these
methods, so everything here is testable without a browser.
"""

from __future__ import annotations

import time
from typing import Any

import param

from effdim import HLCModel, parse_model
from effdim.dimensions import bounds_report
from effdim.treedraw import model_data

from .. import presets, tasks
from ..config import ServerLimits
from ..jobs import Job
from ..logs import swallowed
from .model_edits import ModelEdits
from .shared import (
    MESSAGE_KINDS,
    NOTHING_HELD,
    REPORTS,
    cached_regularize,
    cached_standard_dimension,
    cached_violations,
    error_text,
    failure_text,
    job_parameter,
    runner_parameter,
)

__all__ = ["ModelState"]


class ModelState(ModelEdits, param.Parameterized):
    """The edited model, its selection and history, and the engine's verdicts."""

    model = param.ClassSelector(class_=HLCModel, instantiate=False, doc="The model as edited.")
    selected = param.String(default=None, allow_None=True, doc="Selected node of the edited model.")
    auto_regularize = param.Boolean(
        default=True,
        doc="Compute dimensions on the regular equivalent (Lemma 4.1) when the model is irregular.",
    )
    highlight = param.String(default=None, allow_None=True, doc="Hidden node whose local LC model is highlighted.")

    # derived: set by _recompute only
    notation = param.String(default="", doc="Notation of the edited model.")
    violations = param.List(default=[], doc="Regularity violations of the edited model.")
    regularization = param.Parameter(default=None, doc="effdim Regularization, or None if regular.")
    effective = param.ClassSelector(
        class_=HLCModel, instantiate=False, doc="The model the dimensions are computed for."
    )
    report = param.Parameter(
        default=None, doc="effdim DimensionReport of `effective`; its de is None until computed (see de_note)."
    )
    drawn_ds = param.Integer(default=0, doc="ds of the model as edited (differs from report.ds when regularized).")
    report_error = param.String(default="", doc="Why the report could not be computed.")
    de_note = param.String(default="", doc="Plain words on the exact de when the report lacks it.")
    de_job = job_parameter("The job computing the exact de, while it runs.")
    direct_job = job_parameter("The job computing the whole-tree rank, while it runs.")
    changed = param.Dict(default={}, doc="node -> what regularization did to it.")
    highlight_nodes = param.List(default=[], doc="`highlight` and its neighbours.")
    can_undo = param.Boolean(default=False)
    can_redo = param.Boolean(default=False)
    update_seconds = param.Number(default=0.0, doc="Time the last recomputation took.")
    direct = param.Parameter(default=None, doc="Full engine report with the whole-tree rank (on demand).")
    direct_running = param.Boolean(default=False)
    revision = param.Integer(default=0, doc="Bumped once per change of anything drawn.")

    message = param.String(default="", doc="Outcome of the last action.")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)

    max_history = param.Integer(default=200, bounds=(1, None))
    limits = param.ClassSelector(class_=ServerLimits, instantiate=False, doc="The server's size and time limits.")
    jobs = runner_parameter("Runs heavy work in worker processes; None: compute in this process.")

    def __init__(self, model: HLCModel | str | None = None, **params):
        if model is None:
            model = presets.PRESETS[presets.DEFAULT_PRESET]
        if isinstance(model, str):
            model = parse_model(model)
        params.setdefault("selected", model.root)
        params.setdefault("limits", ServerLimits())
        super().__init__(model=model, **params)
        self._undo: list[HLCModel] = []
        self._redo: list[HLCModel] = []
        self._derived_for: tuple | None = None
        self._verify_token = 0
        self._pending: HLCModel | None = None
        self.in_one_update = NOTHING_HELD  # how the end of an exact-de or whole-tree-rank job reaches the screen
        self.param.update(**self._derive(model, self.selected))
        self._start_pending()

    # ------------------------------------------------------------ derived
    # Every user action ends in ONE param.update carrying the model, the
    # derived values and a new `revision`, so each view redraws once per edit.
    def _derive(self, model: HLCModel, selected: str | None) -> dict[str, Any]:
        start = time.perf_counter()
        violations = list(cached_violations(model))
        regularization = cached_regularize(model) if violations else None
        effective = regularization.model if (regularization is not None and self.auto_regularize) else model
        report, error, note = self._report_now(effective)
        changed = {} if regularization is None else {n: str(c) for n, c in regularization.changes.items()}
        if selected not in model:
            selected = model.root
        highlight = self.highlight if (self.highlight in effective and effective.is_hidden(self.highlight)) else None
        self._derived_for = (model, self.auto_regularize)
        return dict(
            model=model,
            selected=selected,
            notation=str(model),
            violations=violations,
            regularization=regularization,
            effective=effective,
            report=report,
            drawn_ds=cached_standard_dimension(model),
            report_error=error,
            de_note=note,
            direct=None,
            changed=changed,
            highlight=highlight,
            highlight_nodes=self._neighbourhood(effective, highlight),
            can_undo=bool(self._undo),
            can_redo=bool(self._redo),
            update_seconds=time.perf_counter() - start,
            revision=self.revision + 1,
        )

    def quick_report(self, model: HLCModel) -> tuple[Any, str, str]:
        """``(report, how, why)`` of ``model`` without waiting: ``how`` is ``"done"`` (cached or quick),
        ``"job"`` (heavy: the closed forms of :func:`effdim.dimensions.bounds_report` only, ``why`` says why)
        or ``"refuse"`` (over the limits: closed forms only)."""
        key = (model, "local")
        cached = REPORTS.get(key)
        if cached is not None:
            return cached, "done", ""
        how, why = self.limits.plan(model, direct=False)
        if how == "now" or (how == "job" and self.jobs is None):
            report = tasks.dimensions_task(model, direct=False, max_bytes=self.limits.job_bytes)
            REPORTS.put(key, report)
            return report, "done", ""
        return bounds_report(model, why), how, why

    def _report_now(self, model: HLCModel) -> tuple[Any, str, str]:
        """``(report, error, de_note)`` of ``model`` without waiting (:meth:`quick_report`).

        A model whose exact de is heavy gets its closed forms now and is left in
        ``_pending`` for :meth:`_start_pending` to submit as a job.
        """
        self._pending = None
        try:
            report, how, why = self.quick_report(model)
            if how == "done":
                return report, "", ""
            if how == "refuse":
                note = f"de was not computed: {why}. ds, dc and the bounds dp, db below are exact."
                return bounds_report(model, note), "", note
            self._pending = model
            return report, "", f"Computing the exact de ({why})…"
        except Exception as err:  # the engine names the problem; show it, keep the app alive
            swallowed(f"dimensions of {model}", err)
            return None, failure_text(err), ""

    def _show(self, model: HLCModel, selected: str | None = None, **extra) -> None:
        """Make ``model`` current: one update with everything derived from it."""
        self._verify_token += 1
        self._stop(self.de_job, self.direct_job)
        self.param.update(
            **self._derive(model, self.selected if selected is None else selected),
            de_job=None,
            direct_job=None,
            direct_running=False,
            **extra,
        )
        self._start_pending()

    @staticmethod
    def _stop(*jobs: Job | None) -> None:
        for job in jobs:
            if job is not None:
                job.cancel()

    def _start_pending(self) -> None:
        """Submit the job for the exact de of ``_pending`` (set by :meth:`_report_now`)."""
        model, self._pending = self._pending, None
        if model is None or self.jobs is None:
            return
        job = self.jobs.submit(
            tasks.dimensions_task,
            model,
            direct=False,
            max_bytes=self.limits.job_bytes,
            label="Exact de",
            share=(model, False, self.limits.job_bytes),  # a class opening one shared link computes it once
        )
        self.de_job = job
        job.add_done_callback(lambda job: self._finish_de(job, model))

    def _finish_de(self, job: Job, model: HLCModel) -> None:
        if self.de_job is not job:  # the model changed meanwhile: another job or none
            return
        with self.in_one_update():
            self._show_de(job, model)

    def _show_de(self, job: Job, model: HLCModel) -> None:
        if job.state == "done":
            REPORTS.put((model, "local"), job.result)
            self.param.update(report=job.result, de_note="", de_job=None, revision=self.revision + 1)
        else:
            why = job.error if job.state != "cancelled" else "the computation was cancelled."
            self.param.update(
                de_note=f"de was not computed: {why} ds, dc and the bounds dp, db below are exact.",
                de_job=None,
                revision=self.revision + 1,
            )

    def cancel_jobs(self) -> None:
        """Stop the session's computations (the user asked, or the session closed)."""
        self._stop(self.de_job, self.direct_job)

    @param.depends("model", "auto_regularize", watch=True)
    def _model_set(self) -> None:
        """Someone assigned ``model`` or toggled auto-regularize: derive what is not derived yet."""
        if self._derived_for != (self.model, self.auto_regularize):
            self._show(self.model)

    @staticmethod
    def _neighbourhood(model: HLCModel, node: str | None) -> list[str]:
        if node is None:
            return []
        return [node, *model.neighbors(node)]

    @param.depends("highlight", watch=True)
    def _highlight_changed(self) -> None:
        node = self.highlight
        if node is not None and not (node in self.effective and self.effective.is_hidden(node)):
            self.highlight = None
            return
        nodes = self._neighbourhood(self.effective, node)
        if nodes != self.highlight_nodes:
            self.param.update(highlight_nodes=nodes, revision=self.revision + 1)

    async def verify_direct(self):
        """The engine's full report (whole-tree Jacobian rank and its float check), as a job.

        The interactive report uses Corollary 4.1 only (fast); this computes the
        second route on demand, within the server's limits. Discarded if the
        model changed meanwhile.
        """
        token, model = self._verify_token, self.effective
        how, why = self.limits.plan(model, direct=True)
        if how == "refuse":
            self._say(f"The direct rank was not computed: {why}.", "warning")
            return None
        with self.in_one_update():
            self.param.update(direct_running=True)
        failed = None  # why the job computed no report
        if self.jobs is None:
            try:
                report = tasks.dimensions_task(model, direct=True, max_bytes=self.limits.job_bytes)
            except Exception as err:  # shown to the user; the interactive report stays
                swallowed(f"direct rank of {model}", err)
                self.param.update(direct_running=False)
                self._say(f"The direct rank could not be computed: {failure_text(err)}", "danger")
                return None
        else:
            job = self.jobs.submit(
                tasks.dimensions_task,
                model,
                direct=True,
                max_bytes=self.limits.job_bytes,
                label="Whole-tree rank",
                share=(model, True, self.limits.job_bytes),
            )
            self.direct_job = job
            report = await job
            if job.silenced or self.direct_job is not job:  # the session closed, or the model changed meanwhile
                return None
            if job.state != "done":
                failed = job.error
        with self.in_one_update():
            self.param.update(direct_job=None, direct_running=False)
            if failed is not None:
                self._say(f"The direct rank was not computed: {failed}", "danger")
                return None
            if token != self._verify_token:
                return None
            self.direct = report
        return report

    def drawing(self, mode: str = "edited", scale: float = 1.0) -> dict:
        """The edited model (``mode="regular"``: its regular equivalent) as :func:`effdim.treedraw.model_data`:
        the selected node ringed, the nodes regularization changes or removes coloured and labelled."""
        model, changed = self.model, self.changed
        drawn = self.regularization.model if (mode == "regular" and self.regularization is not None) else model
        regular_view = drawn is not model
        labels = {}
        for n, note in changed.items():
            if n not in drawn:
                continue
            if note == "removed":
                labels[n] = f"{n} : {drawn.card(n)} ✕"
            elif note:
                labels[n] = (
                    f"{n} : {drawn.card(n)} (was {model.card(n)})"
                    if regular_view
                    else f"{n} : {model.card(n)}→{self.regularization.model.card(n)}"
                )
        return model_data(
            drawn,
            selected=self.selected,
            changed=changed,
            labels=labels,
            centre=self.highlight,
            highlight=self.highlight_nodes or (),
            scale=scale,
        )

    @property
    def is_regular(self) -> bool:
        return not self.violations

    # ------------------------------------------------------------ messages
    def _say(self, text: str, kind: str = "info") -> None:
        self.param.update(message=text, message_kind=kind)

    def _refuse(self, err: BaseException, what: str) -> bool:
        self._say(f"{what} refused: {error_text(err)}. The model is unchanged.", "danger")
        return False
