"""The computations the dashboard submits as jobs (:mod:`effdim_app.jobs`).

Each runs in a worker process: a module-level function (so it pickles by
name) taking the keyword ``progress(done, total, note="")`` and returning a picklable
engine result. No Panel import: the forkserver preloads this module and,
through it, the engine.
"""

from __future__ import annotations

from dataclasses import replace

from effdim import EMSettings, HLCModel, ReadLimits, dimensions, fit, hill_climb, learn_structure, read_data, sweep
from effdim.reading import Loaded
from effdim.report import report_html
from effdim.scores import SCORES

__all__ = [
    "enumeration_task",
    "blrt_task",
    "dimensions_task",
    "sweep_task",
    "climb_task",
    "learn_task",
    "read_upload_task",
    "report_task",
    "distal_task",
    "regression_task",
]


def dimensions_task(model: HLCModel, *, direct: bool, max_bytes: int, progress=None):
    """:func:`effdim.dimensions`: the local LC ranks (Corollary 4.1), and the whole-tree rank if ``direct``."""
    return dimensions(model, direct=direct, check_float=direct, max_bytes=max_bytes)


def sweep_task(dataset, *, model, node, cards, until_saturated, settings: EMSettings, progress=None):
    """:func:`effdim.sweep` (progress after each fit, naming the cardinalities done; ``until_saturated``: stop
    where de = dc); each fit is handed out as it finishes (``progress.partial``), so a sweep stopped by its time
    limit or a cancel keeps them (:attr:`effdim_app.jobs.Job.partial`)."""
    return sweep(
        dataset,
        model=model,
        node=node,
        cards=cards,
        until_saturated=until_saturated,
        settings=settings,
        progress=_SweepProgress(progress, node),
    )


class _SweepProgress:
    """A job's progress for a sweep: the counts with the cardinalities done in words, each fit handed on."""

    def __init__(self, progress, node: str | None):
        self.progress, self.node, self.finished = progress, node, []

    def __call__(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total, f"{', '.join(self.finished)} done" if self.finished else "")

    def partial(self, fit) -> None:
        self.finished.append(f"|{self.node or fit.model.root}| = {fit.card}" if not self.finished else str(fit.card))
        if hasattr(self.progress, "partial"):
            self.progress.partial(fit)


def climb_task(dataset, model, *, score, settings: EMSettings, progress=None):
    """:func:`effdim.hill_climb` (progress after each fit)."""
    return hill_climb(dataset, model, score=score, settings=settings, progress=progress)


def learn_task(dataset, *, score, settings: EMSettings, max_time, progress=None):
    """:func:`effdim.learn_structure` from all columns of ``dataset``, stopping after ``max_time`` seconds with
    the best tree so far (:class:`_SearchProgress`)."""
    shown = _SearchProgress(progress, SCORES[score].label)
    return learn_structure(dataset, score=score, em=settings, max_time=max_time, progress=shown)


class _SearchProgress:
    """A job's progress for a structure search: the share of its time limit used (its progress
    :attr:`effdim.structure.StructureProgress.fraction`, in thousandths), the steps accepted and the best score
    in words, and each new best tree handed out (``progress.partial``, the search's report itself), so a search
    stopped by the server's time limit or a cancel keeps its best tree (:attr:`effdim_app.jobs.Job.partial`)."""

    #: The progress's steps in all: the fraction in thousandths.
    STEPS = 1000

    def __init__(self, progress, label: str):
        self.progress, self.label, self.best = progress, label, None

    def __call__(self, state) -> None:
        if self.progress is None:
            return
        if (state.model, state.score) != self.best and hasattr(self.progress, "partial"):
            self.best = (state.model, state.score)
            self.progress.partial(state)
        self.progress(
            int(self.STEPS * (state.fraction or 0.0)),
            self.STEPS,
            f"{state.steps} move{'s' if state.steps != 1 else ''} accepted, "
            f"{state.candidates:,} candidate{'s' if state.candidates != 1 else ''} tried; "
            f"best so far {self.label} {state.score:,.2f}",
        )


def read_upload_task(content: bytes, *, name: str, limits: ReadLimits, progress=None) -> Loaded:
    """:func:`effdim.reading.read_data` of an uploaded file's bytes: its format, encoding and separator
    detected, a header wider than ``limits.max_columns`` refused before any cell is parsed, and columns with more
    than ``limits.max_states`` distinct values left out while parsing (the dashboard names them and lets the user
    pick among the rest). Those of them with a value of their own in every row identify the rows: the file
    is read again to keep their values (:attr:`effdim.reading.Loaded.ids`), which the posteriors' download
    puts first."""
    limits = replace(limits, too_many_states="drop")
    loaded = read_data(content, name=name, limits=limits)
    wide = [column for column, _ in loaded.dropped]
    if not wide or loaded.dataset.rows is None:  # pattern counts: no row to identify
        return loaded
    ids = read_data(content, name=name, limits=limits, ids=wide).ids
    unique = [c for c in wide if ids[c].notna().all() and ids[c].is_unique]
    return replace(loaded, ids=ids[unique] if unique else None)


def bootstrap_task(fit, *, B: int, settings: EMSettings, progress=None):
    """:func:`effdim.bootstrap.bootstrap_g2` of ``fit`` with ``B`` replicates, in this worker (no processes of
    its own: the server's workers are the machine's), progress after each chunk of replicates."""
    from effdim.bootstrap import bootstrap_g2
    from effdim.executor import Execution

    return bootstrap_g2(fit, B, settings, execution=Execution("serial"), progress=progress)


def share_ranges_task(fit, *, fits: int, seed, progress=None) -> dict:
    """:meth:`effdim.FitResult.equivalent_share_ranges`: the class shares over ``fits`` refits as good."""
    return fit.equivalent_share_ranges(fits, seed=seed)


def report_task(
    fit, *, data, sweep, climb, pick, command, three_step=(), enumeration=None, bootstrap=None, progress=None
) -> str:
    """:func:`effdim.report.report_html` of ``fit`` with the data and the sweep or climb it came from, the
    command that reproduces it, its three-step results (distal outcomes), the sweep's class-enumeration table
    and its bootstrap p-value of G2."""
    return report_html(
        fit,
        data=data,
        sweep=sweep,
        climb=climb,
        pick=pick,
        command=command,
        three_step=three_step,
        bootstrap=bootstrap,
        enumeration=enumeration,
    )


def enumeration_task(fits, blrt, *, progress=None):
    """:func:`effdim.enumeration.enumeration_table` of a sweep's ``fits`` with the bootstrap LRT results
    ``blrt`` (by ``k``; may be empty): the VLMR tests and the posteriors' entropies are computed here."""
    from effdim.enumeration import enumeration_table

    return enumeration_table(fits, blrt)


def blrt_task(config, *, progress=None) -> list:
    """One chunk of a bootstrap LRT's replicates (:func:`effdim.bootstrap.bootstrap_job`): their statistics."""
    from effdim.bootstrap import bootstrap_job

    return bootstrap_job(config)["values"]


def distal_task(fit, data, *, outcomes, method, step1=False, progress=None) -> list:
    """:func:`effdim.threestep.distal_outcomes` of ``fit`` for the ``outcomes`` columns of ``data`` (the data
    the fit was made on, every column as loaded) by ``method``."""
    from effdim.threestep import distal_outcomes

    return distal_outcomes(fit, data, list(outcomes), method=method, step1=step1)


def regression_task(dataset, model, *, covariates, weights, mapping, settings: EMSettings, progress=None):
    """:func:`effdim.fit` of ``model`` with its root's classes on ``covariates`` (a latent class regression),
    with its standard errors computed here (they are kept in the fit: the server shows them without computing)."""
    result = fit(dataset, model, settings, covariates=covariates, weights=weights, mapping=mapping, warn=False)
    result.standard_errors()
    return result
