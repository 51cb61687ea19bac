"""Scoring the model against the data as a param class (no Panel import): :class:`ScoresState`.

Which model is scored against the data (an LC model over all columns, or the
edited model matched by leaf name), the sweep, hill-climb and structure-search
runs (each a :class:`~effdim_app.jobs.Job` in a worker process, with progress
and cancel), and their results. Results are keyed by what produced them and
cleared the moment the model or the data changes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import param

from effdim import EffdimError, EMSettings, HLCModel, ModelError
from effdim.bounds import complete_dimension
from effdim.limits import DEFAULT_MAX_CARD
from effdim.priors import DEFAULT_CS_PRIOR, DirichletPrior
from effdim.sbic import with_singular_bic
from effdim.search import pick_caveats

from .. import tasks
from ..jobs import Job, JobRunner
from .data import DataState
from .learning import StructureRuns
from .model import ModelState
from .reproduce import RunSettings, run_settings
from .score_tables import CLIMB_SCORES, SHOWN_SCORES, ScoreTables
from .shared import MESSAGE_KINDS, NOTHING_HELD, error_text, job_parameter, not_shown, runner_parameter

__all__ = ["ScoresState", "SHOWN_SCORES", "CLIMB_SCORES", "CS_PRIORS"]

#: The CS priors offered, text -> label (effdim.priors; the default first).
CS_PRIORS: dict[str, str] = {
    str(p): p.label for p in map(DirichletPrior.parse, ("bdeu:1", "k2", "jeffreys", "bdeu:10"))
}
#: What a cleared sweep's status adds: the fitted view keeps the last fit, marked (FittedState.stale).
KEPT = "; the last fit stays below, greyed, for reference"


def _swept_words(results: list, node: str | None) -> str:
    """``"3 cardinalities (|X| = 1-3)"``: what a sweep of ``node`` (None: the root) covers, in words."""
    cards = [f.card for f in results]
    node = node or results[0].model.root
    together = len(cards) > 1 and cards == list(range(cards[0], cards[-1] + 1))
    span = f"{cards[0]}-{cards[-1]}" if together else ", ".join(map(str, cards))
    return f"{len(cards)} cardinalit{'y' if len(cards) == 1 else 'ies'} (|{node}| = {span})"


class ScoresState(ScoreTables, StructureRuns, param.Parameterized):
    """Score-vs-cardinality sweeps and hill climbs of the current model on the current data."""

    models = param.ClassSelector(class_=ModelState, instantiate=False)
    data = param.ClassSelector(class_=DataState, instantiate=False)

    mapping = param.Selector(
        default="lc",
        objects=["lc", "model"],
        doc="'lc': an LC model with one hidden root over all columns; "
        "'model': the edited model, its leaves matched to columns by name.",
    )
    node = param.String(default=None, allow_None=True, doc="Hidden node whose cardinality is swept.")
    card_min = param.Integer(default=1, bounds=(1, None))
    card_max = param.Integer(
        default=DEFAULT_MAX_CARD,
        bounds=(1, None),
        doc="The largest cardinality swept; never beyond the largest regular one (effdim.search.sweep_range).",
    )
    restarts = param.Integer(default=5, bounds=(1, 200))
    seed = param.Integer(default=0, bounds=(0, None))
    climb_score = param.Selector(default="cs+", objects=list(CLIMB_SCORES))
    learn_score = param.Selector(
        default="bic+", objects=list(CLIMB_SCORES), doc="Score that drives the structure search (effdim.structure)."
    )
    cs_prior = param.Selector(
        default=str(DEFAULT_CS_PRIOR), objects=list(CS_PRIORS), doc="Dirichlet prior of CS and CS+ (effdim.priors)."
    )
    deviance = param.Boolean(
        default=False,
        doc="Show the scores on the -2 log L + penalty scale of poLCA and Mplus (lower is better), not effdim's "
        "log L - penalty (higher is better).",
    )
    past_saturation = param.Boolean(
        default=False, doc="Sweep on past the first cardinality where de = dc (up to 'to'); by default it stops there."
    )

    running = param.Boolean(default=False)
    task = param.String(default="", doc="'sweep', 'climb' or 'learn' while running.")
    progress = param.Integer(default=0, bounds=(0, 100))
    status = param.String(default="")
    results = param.List(default=[], doc="FitResults of the last sweep (current model and data only).")
    climb = param.Parameter(default=None, doc="HillClimb of the last climb (current model and data only).")
    mismatch = param.List(default=[], doc="Problems matching the model's leaves to the data.")
    leaf_map = param.List(default=[], doc="Rows (leaf, column, leaf states, column states) of the matching.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=MESSAGE_KINDS)
    job = job_parameter("The sweep or climb job, while it waits or runs.")
    learned_tree = param.ClassSelector(
        class_=HLCModel,
        default=None,
        allow_None=True,
        instantiate=False,
        doc="The structure search's best tree so far while it runs, then the tree it learned (None: no search, "
        "or it was cancelled or failed, or the data changed since).",
    )
    learned_note = param.String(default="", doc="What learned_tree is, in words.")
    jobs = runner_parameter("Runs sweeps and climbs in worker processes (default: one of its own).")

    def __init__(self, models: ModelState, data: DataState, **params):
        super().__init__(models=models, data=data, **params)
        if self.jobs is None:
            self.jobs = models.jobs or JobRunner(
                workers=models.limits.workers, timeout=models.limits.time_limit, max_bytes=models.limits.job_bytes
            )
        self._key_of_results = None
        self.settings_of_results: RunSettings | None = None  # what the results were run with (their report's command)
        self._scored = None  # (mapping, scored model, data, CS prior) the last inputs check saw
        self.in_one_update = NOTHING_HELD  # how a job's start and its results reach the screen (.shared)
        models.param.watch(self._inputs_changed, ["effective"])
        data.param.watch(self._inputs_changed, ["dataset"])
        self.param.watch(self._inputs_changed, ["mapping", "cs_prior"])
        self._inputs_changed()

    # ------------------------------------------------------------ inputs
    def scored_model(self) -> HLCModel | None:
        """The model scored against the data (None: the engine's LC model over all columns)."""
        if self.mapping == "lc":
            return None
        return self.models.effective

    def hidden_choices(self) -> list[str]:
        model = self.scored_model()
        return [] if model is None else list(model.hidden)

    def key(self):
        """What results depend on; results with another key are stale."""
        return (self.mapping, self.scored_model(), id(self.data.dataset), self.node, self.cs_prior)

    def _inputs_changed(self, *events) -> None:
        scored = (self.mapping, self.scored_model(), id(self.data.dataset), self.cs_prior)
        if scored == self._scored:
            return  # e.g. a tree edit while the LC model over all columns is scored: runs and results stand
        data_changed = self._scored is None or scored[2] != self._scored[2]
        self._scored = scored
        choices = self.hidden_choices()
        node = self.node if self.node in choices else (choices[0] if choices else None)
        stale = bool(self.results) or self.climb is not None
        if self.job is not None and (self.task != "learn" or data_changed):  # a structure search reads data only
            self.job.cancel()
        if data_changed:
            self.param.update(learned_tree=None, learned_note="")
        mismatch, leaf_map = self._check_mapping()
        with param.parameterized.batch_call_watchers(self):
            self.node = node
            self.mismatch = mismatch
            self.leaf_map = leaf_map
            if stale:
                self.results = []
                self.climb = None
                self.status = f"The scores were cleared: the model, the data or the mapping changed{KEPT}."

    @param.depends("node", watch=True)
    def _node_changed(self) -> None:
        if self.results and self._key_of_results != self.key():
            self.param.update(results=[], climb=None, status=f"The scores were cleared: another node is swept{KEPT}.")

    def _check_mapping(self) -> tuple[list[str], list[tuple]]:
        """The engine's verdict on matching the model's leaves to the data columns."""
        dataset = self.data.dataset
        model = self.scored_model()
        if dataset is None or model is None:
            return [], []
        from effdim.data import DataError, check_matches_model, resolve_mapping

        try:
            resolved = resolve_mapping(dataset, model)
        except DataError as err:
            return [error_text(err)], []
        rows = [
            (leaf, col, model.card(leaf), len(dataset.states[dataset.index(col)])) for leaf, col in resolved.items()
        ]
        unused = [c for c in dataset.columns if c not in resolved.values()]
        problems = []
        try:
            check_matches_model(dataset, model)
        except DataError as err:
            problems.append(error_text(err))
        if unused:
            rows += [("—", c, None, len(dataset.states[dataset.index(c)])) for c in unused]
        return problems, rows

    # ------------------------------------------------------------ runs
    def cancel(self) -> None:
        """Stop the running sweep or climb (its worker process is killed)."""
        if self.job is not None:
            self.job.cancel()
            self.status = "Cancelling…"

    def _free(self) -> bool:
        """Whether a run may start on the data (none running, data loaded); if not, the message says why."""
        if self.running:
            self.param.update(message="A computation is running; cancel it first.", message_kind="warning")
            return False
        if self.data.dataset is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        return True

    def _ready(self) -> bool:
        """:meth:`_free`, and the scored model matches the data."""
        if not self._free():
            return False
        if self.mismatch:
            self.param.update(
                message="The model does not match the data: " + "; ".join(self.mismatch), message_kind="danger"
            )
            return False
        return True

    def _sweep_range(self) -> tuple[list[int], bool]:
        """The swept cardinalities, ``card_min`` .. ``card_max`` within the largest regular one
        (:func:`effdim.search.sweep_range`, a closed form: nothing is fitted here, on the server's event loop)
        and within the server's limits, and whether the sweep stops at the first saturated model (unless
        ``past_saturation``)."""
        from effdim import largest_regular_card, lc_model_for
        from effdim.errors import InvalidArgument
        from effdim.search import sweep_range

        low, high = self.card_min, self.card_max
        if high < low:
            raise InvalidArgument(f"'to' ({high}) is below 'from' ({low})")
        model = self.scored_model() or lc_model_for(self.data.dataset)
        node = self.node if self.node in model.hidden else model.root
        cards = sweep_range(model, node, max_card=high, min_card=low)
        if not cards:
            top = largest_regular_card(model, node)
            raise InvalidArgument(f"|{node}| can have at most {top} states in a regular model (Lemma 4.1), below {low}")
        self.models.limits.check_sweep(cards[0], cards[-1])
        return cards, not self.past_saturation

    async def _run(self, task: str, fn, *args, then, depends=None, label: str | None = None, **kwargs):
        """Run ``fn(*args, **kwargs)`` as a job; mirror its state here; keep the event loop free; return
        ``then(result)``, or ``None`` when the job did not finish with a result still wanted.

        ``describe(job)`` says the job's state in the status line (default :meth:`effdim_app.jobs.Job.describe`),
        ``on_partial(parts)`` is called with the parts of the result it has handed
        out so far (:attr:`effdim_app.jobs.Job.partial`), and ``keep(job)`` at the end of a job that was
        cancelled, timed out or failed after handing out parts: what it returns is returned. The result is
        discarded when ``depends()`` (default :meth:`key`) changed meanwhile. The job's start, and its end with
        what ``then`` shows of the result, each reach the screen at once (:data:`.shared.NOTHING_HELD`); the
        results are in place before ``running`` is false again (:class:`~effdim_app.state.FittedState` waits for
        that).
        """
        on_partial, keep = kwargs.pop("on_partial", None), kwargs.pop("keep", None)
        describe = kwargs.pop("describe", Job.describe)
        depends = depends or self.key
        key = depends()
        with self.in_one_update():
            job = self.jobs.submit(fn, *args, label=label or task.capitalize(), **kwargs)

            def show(*_):
                if job.state == "done":  # "done" is said below, with the results: not before the chart has them
                    return
                with self.in_one_update():
                    self.param.update(progress=int(100 * job.progress), status=describe(job))

            watchers = [job.param.watch(show, ["state", "done", "total", "position", "seconds", "note"])]
            if on_partial is not None:
                watchers.append(job.param.watch(lambda event: on_partial(event.new), ["partial"]))
            self.param.update(running=True, task=task, job=job, progress=0, status=describe(job), message="")
        try:
            outcome = await job
        except BaseException:
            self._job_ended(job, watchers)
            raise
        if job.silenced:  # the session closed: no page is left to show anything on
            return None
        with self.in_one_update():
            changed = key != depends()
            unshown = not_shown(task, job, changed=changed)
            if unshown is None:
                shown = then(outcome)
            elif keep is not None and job.partial and not changed:
                shown = keep(job)
            else:
                self.param.update(**unshown)
                shown = None
            self._job_ended(job, watchers)
            return shown

    def _results_run_with(self, settings: RunSettings) -> None:
        """The results about to be shown are of the current inputs, run with ``settings``."""
        self._key_of_results = self.key()
        self.settings_of_results = settings

    def _job_ended(self, job, watchers: list) -> None:
        for watcher in watchers:
            job.param.unwatch(watcher)
        self.param.update(running=False, task="", job=None)

    def em_settings(self) -> EMSettings:
        """How the jobs' EM runs: the chosen starts, seed and CS prior (:class:`effdim.EMSettings`)."""
        return EMSettings(restarts=self.restarts, seed=self.seed, cs_prior=self.cs_prior)

    def _settings(self, task: str, **options) -> RunSettings:
        """What a run of ``task`` starting now runs with (:mod:`.reproduce`)."""
        data = self.data
        return run_settings(
            task,
            model=self.scored_model(),
            dataset=data.dataset,
            full=data.full,
            left_out=tuple(data.left_out),
            restarts=self.restarts,
            seed=self.seed,
            cs_prior=self.cs_prior,
            **options,
        )

    async def run_sweep(self) -> list | None:
        """Sweep the node's cardinalities as a job (:func:`effdim_app.tasks.sweep_task`): each fit is shown as it
        finishes, with the singular BIC over the fits so far (the curves and the table grow; the fitted view waits
        for the end), and a sweep cancelled,
        stopped by the server's time limit or failed part way keeps and shows the fits it finished."""
        if not self._ready():
            return None
        try:
            cards, until_saturated = self._sweep_range()
        except EffdimError as err:  # a server limit (LimitError), or the engine's refusal of the model or data
            self.param.update(message=f"Sweep refused: {error_text(err)}.", message_kind="danger")
            return None
        self.param.update(results=[], climb=None)
        settings = self._settings("sweep", node=self.node, cards=tuple(cards), until_saturated=until_saturated)
        em = self.em_settings()

        def show(results: list) -> list:
            self._results_run_with(replace(settings, cards=tuple(f.card for f in results)))
            last, note = results[-1], ""
            if until_saturated and last.de >= complete_dimension(last.model):
                note = (
                    f" Stopped at |{self.node or last.model.root}| = {last.card}, where de = dc: larger cardinalities "
                    "score alike (tick 'past saturation' to go on)."
                )
            self.param.update(
                results=list(results), progress=100, status=f"Sweep done: {_swept_words(results, self.node)}.{note}"
            )
            return results

        def keep(job) -> list:
            """What a sweep stopped part way finished, shown as a sweep of those cardinalities (their singular BIC
            over exactly them, as the engine gives a cancelled sweep's)."""
            results = show(with_singular_bic(job.partial, self.node, em.sbic_phi))
            how = {"cancelled": "cancelled", "timed out": "stopped by the time limit"}.get(job.state, "failed")
            self.param.update(
                status=f"Sweep {how}: kept the {_swept_words(results, self.node)} it finished.",
                message=f"Sweep {how} ({job.error.rstrip('.')}); the cardinalities finished before are shown."
                if job.state != "cancelled"
                else "",
                message_kind="warning",
            )
            return results

        return await self._run(
            "sweep",
            tasks.sweep_task,
            self.data.dataset,
            model=self.scored_model(),
            node=self.node,
            cards=cards,
            until_saturated=until_saturated,
            settings=em,
            then=show,
            on_partial=lambda fits: self.param.update(results=with_singular_bic(list(fits), self.node, em.sbic_phi)),
            keep=keep,
        )

    async def run_climb(self) -> Any:
        if not self._ready():
            return None
        model = self.scored_model()
        if model is None:
            self.param.update(
                message="Hill climbing needs the model mapping (an HLC model over the data).", message_kind="warning"
            )
            return None
        self.param.update(results=[], climb=None)
        settings = self._settings("climb", score=self.climb_score)

        def show(climb):
            self._results_run_with(settings)
            notes = pick_caveats(climb.best)
            self.param.update(
                climb=climb,
                progress=100,
                status=f"Hill climb done: {len(climb.path) - 1} steps up from all hidden nodes binary"
                + (f"; the best model: {'; '.join(notes)}." if notes else "."),
            )
            return climb

        return await self._run(
            "climb",
            tasks.climb_task,
            self.data.dataset,
            model,
            score=self.climb_score,
            settings=self.em_settings(),
            then=show,
        )

    def use_lc_model_in_editor(self) -> bool:
        """Put the engine's LC model over all data columns into the editor (undoable)."""
        if self.data.dataset is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        from effdim import lc_model_for

        try:
            model = lc_model_for(self.data.dataset)
        except (ModelError, ValueError) as err:
            self.param.update(message=f"No LC model over these columns: {error_text(err)}", message_kind="danger")
            return False
        done = self.models.set_model(model, "LC model over the data columns")
        if done:
            self.mapping = "model"
        return done

    def snapshot(self) -> tuple:
        """The results and the inputs they belong to, for :meth:`restore` after an undone model change."""
        return self.mapping, list(self.results), self.climb, self.status, self._key_of_results, self.settings_of_results

    def restore(self, snapshot: tuple) -> None:
        """Show again the results of :meth:`snapshot` (the caller has put back the model they belong to)."""
        mapping, results, climb, status, key, settings = snapshot
        self.mapping = mapping
        self._key_of_results, self.settings_of_results = key, settings
        self.param.update(results=results, climb=climb, status=status)
