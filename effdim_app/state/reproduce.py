"""The ``effdim`` command that reproduces a result of the dashboard, for its HTML report.

The dashboard's sweep and hill climb run the engine functions behind
``effdim sweep`` and ``effdim search`` (:mod:`effdim_app.tasks`), so the
settings of a run (:class:`RunSettings`, kept by :class:`ScoresState` with
its results) say which command gives the same numbers:

* a sweep from ``|H| = 1`` whose shown fit is the pick of ``pick``:
  ``effdim sweep FILE [--model M --node H] --max-card K [--past-saturation]
  --restarts R --seed S --cs-prior P --pick pick``, the whole report again
  (the sweep range's rule is one for both: :func:`effdim.search.sweep_range`);
* a hill climb whose shown fit is its best: ``effdim search FILE --model M
  --score C ...``;
* anything else (a sweep started above 1 or past the largest regular
  cardinality, a fit that is not the pick): ``effdim fit FILE --model
  <the shown fit's model> ...``. The sweep started each cardinality from its
  own random stream and from the fit one below, so that refit can end at
  another local optimum; a comment line says so.

The data is named as the file was uploaded (``Dataset.source``), to be run
where that file is. Leaves are matched to columns by name in both, so no
``--map`` is needed; the file's columns not in use (an identifier the reader
left out, columns the user removed) are left out with ``--drop``, so the LC
model over the columns the command reads is the one scored. No Panel import.
"""

from __future__ import annotations

from dataclasses import dataclass

from effdim import HLCModel, format_model, largest_regular_card, lc_model_for
from effdim.report import command_line
from effdim.threestep import has_step1

__all__ = ["RunSettings", "REPORT_FILE", "distal_command", "regression_command", "reproducing_command", "run_settings"]

#: The name the report downloads as; the reproducing command writes the same file.
REPORT_FILE = "effdim-report.html"


@dataclass(frozen=True)
class RunSettings:
    """What a sweep or hill climb ran with (what its results depend on beyond the data)."""

    task: str  #: "sweep" or "climb"
    model: HLCModel  #: the model scored (the LC model over the columns in use when the mapping is 'lc')
    lc_over_all_columns: bool  #: the model is the LC model over every column in use (no --model needed)
    node: str | None  #: the swept node (sweep)
    cards: tuple[int, ...] | None  #: the cardinalities swept (a sweep; those it finished, when it stopped part way)
    until_saturated: bool  #: the sweep stopped at the first saturated model
    score: str | None  #: the criterion climbed (climb)
    restarts: int
    seed: int
    cs_prior: str
    drop: tuple[str, ...] = ()  #: the file's columns not used (left out by the reader or by the user)


def _em_options(settings: RunSettings) -> dict:
    """The options every command gets: the columns left out, and how EM runs."""
    return {
        "--drop": list(settings.drop) or None,
        "--restarts": settings.restarts,
        "--seed": settings.seed,
        "--cs-prior": settings.cs_prior,
    }


def _sweep_options(settings: RunSettings, pick: str | None) -> dict | None:
    """``effdim sweep``'s options for ``settings``, or None when that command sweeps other cardinalities."""
    model, node = settings.model, settings.node or settings.model.root
    if pick is None:
        return None
    if settings.cards[0] != 1 or settings.cards[-1] > largest_regular_card(model, node):
        return None
    reach = {"--max-card": settings.cards[-1], "--past-saturation": not settings.until_saturated}
    where = {} if settings.lc_over_all_columns else {"--model": format_model(model), "--node": settings.node}
    return {**where, **reach, **_em_options(settings), "--pick": pick}


def reproducing_command(settings: RunSettings, source: str, fit, pick: str | None) -> str:
    """The command (POSIX shell) that writes this report again from the file ``source``: ``fit`` shown,
    the pick of ``pick`` (None: not a pick) in the run of ``settings``."""
    report = {"--report": REPORT_FILE}
    if settings.task == "sweep":
        options = _sweep_options(settings, pick)
        if options is not None:
            return command_line("sweep", source, {**options, **report})
    elif settings.task == "climb" and pick is not None:
        options = {"--model": format_model(settings.model), "--score": settings.score, **_em_options(settings)}
        return command_line("search", source, {**options, **report})
    what = "sweep" if settings.task == "sweep" else "hill climb"
    return (
        f"# refits the model shown; the {what} it came from started each fit from its own random stream,\n"
        "# so EM can end at another local optimum (compare the log-likelihood)\n"
        + command_line("fit", source, {"--model": format_model(fit.model), **_em_options(settings), **report})
    )


def distal_command(settings: RunSettings, source: str, fit, distal) -> str:
    """The command that gives the shown fit's distal outcomes (``effdim fit ... --distal``), after a comment
    line: a refit of the shown model, so its classes are the shown fit's where EM ends at the same optimum; the
    outcomes are read, not modelled, so the leaves are mapped to their columns (``--map``)."""
    outcomes = [outcome.column for outcome in distal]
    options = {
        "--model": format_model(fit.model),
        "--map": _leaf_map(fit),
        **_em_options(settings),
        "--drop": [c for c in settings.drop if c not in outcomes] or None,  # the outcomes are read, not modelled
        "--distal": outcomes,
        "--distal-method": distal[0].method,
        "--step1-uncertainty": has_step1(distal[0].se_method),
    }
    return "# the distal outcomes, of a refit of the model shown:\n" + command_line("fit", source, options)


def _leaf_map(fit) -> list[str] | None:
    """``--map`` of a command that reads more columns than the model's leaves (outcomes, covariates, a weight):
    each leaf named apart from its column, which the default matching by position would miss."""
    return [f"{leaf}={column}" for leaf, column in fit.columns.items() if leaf != column] or None


def regression_command(settings: RunSettings, source: str, fit) -> str:
    """The command that writes the report of ``fit``, a latent class regression of the shown model
    (``effdim fit ... --covariates``), after a comment line: its covariates and weight column are read, not
    modelled nor left out, so the leaves are mapped to their columns (``--map``) where their names differ."""
    read = {*fit.design.formula.columns, *([fit.case.weights] if fit.case.weights else [])}
    options = {
        "--model": format_model(fit.model),
        "--map": _leaf_map(fit),
        **_em_options(settings),
        "--drop": [c for c in settings.drop if c not in read] or None,
        "--covariates": fit.design.formula.text,
        "--weights": fit.case.weights,
        "--report": REPORT_FILE,
    }
    return "# the latent class regression, a refit of the model shown with its covariates:\n" + command_line(
        "fit", source, options
    )


def run_settings(
    task: str, *, model: HLCModel | None, dataset, full, left_out: tuple[str, ...] = (), **options
) -> RunSettings:
    """:class:`RunSettings` of a run on ``dataset`` (the columns in use of ``full``, the file as loaded, whose
    ``left_out`` columns the reader left out) of ``model`` (None: the LC model over the columns in use);
    ``options`` as :class:`RunSettings`'s fields. The command leaves out (``--drop``) every column of the file
    not in use, so the LC model over the columns it reads is the one scored."""
    scored = model if model is not None else lc_model_for(dataset)
    drop = (*left_out, *(c for c in full.columns if c not in dataset.columns))
    defaults = {"node": None, "cards": None, "until_saturated": False, "score": None}
    return RunSettings(task=task, model=scored, lc_over_all_columns=model is None, drop=drop, **{**defaults, **options})
