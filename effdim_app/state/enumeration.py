"""State of the "Class enumeration" card: the sweep's table as a paper prints it, and its bootstrap LRT.

When a sweep has finished, :class:`EnumerationState` builds its
class-enumeration table (:func:`effdim.enumeration.enumeration_table`: every
criterion, the entropy measures, the smallest class, the VLMR tests, the
starts at the best) in a worker (:func:`effdim_app.tasks.enumeration_task`).
:meth:`EnumerationState.run_blrt` adds the bootstrap LRT of every ``k``
against ``k - 1``: each test's replicates are split into jobs of
:data:`effdim.bootstrap.CHUNK` (:meth:`effdim.bootstrap.BLRTPlan.chunks`), all
submitted to the job runner at once, so they run in parallel on its workers,
each within the server's time limit; progress counts finished replicates and
:meth:`EnumerationState.cancel` stops them all. The table with its BLRT goes to
the shown fit's report (:attr:`effdim_app.state.fitted.FittedState.enumeration`).
Everything is cleared when the sweep's results change. No Panel import.
"""

from __future__ import annotations

from typing import Any

import param

from .. import tasks
from ..jobs import Job
from .fitted import FittedState
from .shared import MESSAGE_KINDS, NOTHING_HELD, error_text, runner_parameter

__all__ = ["EnumerationState", "MAX_BLRT_REPLICATES"]

#: The most bootstrap replicates per test the dashboard runs (each test's refits are its bulk of work).
MAX_BLRT_REPLICATES = 500


class EnumerationState(param.Parameterized):
    """The last sweep's class-enumeration table and the bootstrap LRT of its tests."""

    fitted = param.ClassSelector(class_=FittedState, instantiate=False)
    B = param.Integer(default=100, bounds=(1, MAX_BLRT_REPLICATES), doc="Bootstrap replicates per test.")
    table = param.Parameter(default=None, doc="effdim.enumeration.EnumerationTable of the last sweep (None: none).")
    running = param.Boolean(default=False, doc="A table or bootstrap job is waiting or running.")
    progress = param.Integer(default=0, bounds=(0, 100))
    status = param.String(default="")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)
    jobs = runner_parameter("Runs the table and the bootstrap replicates in worker processes (default: the sweep's).")

    def __init__(self, fitted: FittedState, **params):
        super().__init__(fitted=fitted, **params)
        if self.jobs is None:
            self.jobs = fitted.scores.jobs
        self.in_one_update = NOTHING_HELD
        self._pending: list[Job] = []  # the jobs of the current request, cancelled together
        self._fits: list = []  # the sweep the table and the BLRT belong to
        fitted.scores.param.watch(self._results_changed, ["results", "running"])
        self._results_changed()

    # ------------------------------------------------------------------ the table
    def _results_changed(self, *_) -> None:
        """A sweep ended (or its results were cleared): drop the old table and its BLRT, build the new one."""
        scores = self.fitted.scores
        results = list(scores.results) if not scores.running else []
        if results == self._fits and results:
            return
        self.cancel(quiet=True)
        self._fits = results
        self.param.update(table=None, progress=0, status="", message="")
        self.fitted.enumeration = None
        if results:
            self._build_table({})

    def _build_table(self, blrt: dict) -> None:
        fits = self._fits
        job = self.jobs.submit(tasks.enumeration_task, fits, blrt, label="Class-enumeration table")
        self._start([job], "Building the class-enumeration table…")
        job.add_done_callback(lambda done: self._table_done(done, fits, blrt))

    def _table_done(self, job: Job, fits: list, blrt: dict) -> None:
        if job not in self._pending or fits is not self._fits:
            return
        with self.in_one_update():
            self._pending = []
            if job.state != "done":
                self._stopped(job, "The class-enumeration table")
                return
            table = job.result
            said = f" with the bootstrap LRT (B = {table.blrt_B})" if blrt else ""
            self.param.update(table=table, running=False, progress=100 if blrt else 0, status=f"Table ready{said}.")
            self.fitted.enumeration = table

    # ------------------------------------------------------------------ the BLRT
    def run_blrt(self) -> bool:
        """Submit the bootstrap LRT of every ``k`` of the sweep against ``k - 1`` (module docstring)."""
        from effdim import EMSettings
        from effdim.bootstrap import blrt_plan
        from effdim.errors import EffdimError
        from effdim.validation import as_seed

        fits = self._fits
        if self.running:
            self.param.update(message="A computation is running; cancel it first.", message_kind="warning")
            return False
        if len(fits) < 2:
            self.param.update(message="Sweep at least two cardinalities first.", message_kind="warning")
            return False
        scores = self.fitted.scores
        settings = EMSettings(restarts=scores.restarts, seed=scores.seed, cs_prior=scores.cs_prior)
        try:
            plans = [
                blrt_plan(small, large, settings)
                for small, large in zip(fits, fits[1:])
                if large.card == small.card + 1
            ]
        except EffdimError as err:
            self.param.update(message=f"The bootstrap LRT cannot run: {error_text(err)}.", message_kind="danger")
            return False
        if not plans:
            self.param.update(message="The sweep has no two cardinalities one apart to test.", message_kind="warning")
            return False
        streams = as_seed(scores.seed).spawn(len(plans))
        values: dict[int, dict[int, list]] = {plan.k: {} for plan in plans}
        submitted = []
        for plan, stream in zip(plans, streams):
            first = 1
            for i, chunk in enumerate(plan.chunks(stream, self.B)):
                last = first + len(chunk["seeds"]) - 1
                label = f"BLRT of {plan.k - 1} against {plan.k} classes, replicates {first}-{last}"
                submitted.append((plan, i, self.jobs.submit(tasks.blrt_task, chunk, label=label)))
                first = last + 1
        total = len(plans) * self.B
        self._start([job for _, _, job in submitted], f"Bootstrap LRT: 0 of {total:,} replicates.")
        for plan, i, job in submitted:
            job.add_done_callback(lambda done, plan=plan, i=i: self._chunk_done(done, plan, i, plans, values, total))
        return True

    def _chunk_done(self, job: Job, plan: Any, index: int, plans: list, values: dict, total: int) -> None:
        if job not in self._pending:
            return
        if job.state != "done":
            self.cancel(quiet=True)
            self._stopped(job, "The bootstrap LRT")
            return
        values[plan.k][index] = job.result
        done = sum(len(v) for chunks in values.values() for v in chunks.values())
        with self.in_one_update():
            self.param.update(
                progress=int(100 * done / total), status=f"Bootstrap LRT: {done:,} of {total:,} replicates."
            )
            if done == total:
                self._pending = []
                blrt = {p.k: p.result([v for i in sorted(values[p.k]) for v in values[p.k][i]]) for p in plans}
                self._build_table(blrt)

    # ------------------------------------------------------------------ jobs
    def _start(self, jobs: list[Job], status: str) -> None:
        self._pending = list(jobs)
        self.param.update(running=True, progress=0, status=status, message="")

    def cancel(self, quiet: bool = False) -> None:
        """Stop the table's or the bootstrap's jobs (waiting ones never start, running ones are killed)."""
        pending, self._pending = self._pending, []
        for job in pending:
            job.cancel()
        if pending and not quiet:
            self.param.update(running=False, progress=0, status="Cancelled.")
        elif pending:
            self.running = False

    def _stopped(self, job: Job, what: str) -> None:
        self._pending = []
        if job.state == "cancelled":
            self.param.update(running=False, progress=0, status="Cancelled.")
            return
        self.param.update(
            running=False,
            progress=0,
            status=f"{what} failed.",
            message=f"{what} failed: {job.error}",
            message_kind="danger",
        )

    # ------------------------------------------------------------------ exports
    def export(self, kind: str) -> str:
        """The table as ``"csv"``, ``"md"`` (Markdown) or ``"tex"`` (LaTeX) text ('' without a table)."""
        table = self.table
        if table is None:
            return ""
        return {"csv": table.to_csv, "md": table.to_markdown, "tex": table.to_latex}[kind]()
