"""The computations the dashboard submits as jobs (:mod:`effdim_app.jobs`).

Each runs in a worker process: a module-level function (so it pickles by
name) taking the keyword ``progress(done, total, note="")`` and returning a picklable
engine result. No Panel import: the forkserver preloads this module and,
through it, the engine.
"""

from __future__ import annotations

import io

from effdim import HLCModel
from effdim.reading import load_csv
from effdim.dimensions import dimensions
from effdim.notation import format_model
from effdim.report import report_html
from effdim.scores import SCORES
from effdim.search import hill_climb, sweep
from effdim.structure import learn_structure

__all__ = ["dimensions_task", "sweep_task", "climb_task", "learn_task", "load_csv_task", "report_task"]


def dimensions_task(model: HLCModel, *, direct: bool, max_bytes: int, progress=None):
    """:func:`effdim.dimensions.dimensions`: the local LC ranks (Corollary 4.1), and the whole-tree rank if ``direct``."""
    return dimensions(model, direct=direct, check_float=direct, max_bytes=max_bytes)


def sweep_task(dataset, *, model, node, cards, restarts, seed, cs_prior, progress=None):
    """:func:`effdim.search.sweep` (progress after each fit)."""
    return sweep(dataset, model=model, node=node, cards=cards, restarts=restarts, seed=seed, cs_prior=cs_prior,
                 progress=progress)


def climb_task(dataset, model, *, score, restarts, seed, cs_prior, progress=None):
    """:func:`effdim.search.hill_climb` (progress after each fit)."""
    return hill_climb(dataset, model, score=score, restarts=restarts, seed=seed, cs_prior=cs_prior,
                      progress=progress)


def learn_task(dataset, *, score, restarts, seed, cs_prior, max_time, progress=None):
    """:func:`effdim.structure.learn_structure` from all columns of ``dataset``, stopping after ``max_time``
    seconds with the best tree so far; each progress call says the accepted steps in words and sends that
    tree in notation as its detail (the dashboard draws it)."""
    label = SCORES[score].label

    def report(state) -> None:
        if progress is not None:
            progress(state.steps, 0, f"{state.steps} move{'s' if state.steps != 1 else ''} accepted, "
                                     f"{state.candidates} candidates tried; "
                                     f"best so far {label} {state.score:,.2f}", format_model(state.model))

    return learn_structure(dataset, score=score, restarts=restarts, seed=seed, cs_prior=cs_prior,
                           max_time=max_time, progress=report)


def load_csv_task(content: bytes, *, max_states: int, max_bytes: int, sep: str = ",", name: str | None = None,
                  progress=None):
    """:func:`effdim.reading.load_csv` of an uploaded file's bytes (its limits, its messages)."""
    return load_csv(io.BytesIO(content), max_states=max_states, max_bytes=max_bytes, sep=sep, name=name)


def report_task(fit, *, data, sweep, climb, pick, progress=None) -> str:
    """:func:`effdim.report.report_html` of ``fit`` with the data and the sweep or climb it came from."""
    return report_html(fit, data=data, sweep=sweep, climb=climb, pick=pick)
