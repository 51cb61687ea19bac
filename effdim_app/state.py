"""Session state of the dashboard as param classes (no Panel import here).

Three objects make one session:

* :class:`ModelState`: the edited HLC model, the selection, undo/redo, and
  what the engine says about the model (regularity, the regular equivalent,
  the dimension report). Every edit goes through an engine method of the
  immutable :class:`effdim.HLCModel`; an edit the engine refuses leaves the
  model as it was and sets :attr:`ModelState.message`.
* :class:`DataState`: the loaded :class:`effdim.data.Dataset` (upload or
  bundled); a bad file leaves the previous data in place.
* :class:`ScoresState`: which model is scored against the data (an LC model
  over all columns, or the edited model matched by leaf name), the sweep and
  hill-climb runs (in a worker thread, with progress and cancel), and their
  results. Results are keyed by what produced them and cleared the moment the
  model or the data changes.

Sizes are checked against the server's :class:`~effdim_app.config.ServerLimits`
before anything is computed, and heavy work (dimensions beyond a quick
threshold, the whole-tree rank, sweeps, climbs) runs as a
:class:`~effdim_app.jobs.Job` in a worker process, so one session can never
stall or kill the others (docs/robustness.md). The cheap answers (ds, dc, dp,
db, regularity; :func:`effdim.dimensions.bounds_report`) are always there; the
exact de follows when its job ends, or :attr:`ModelState.de_note` says why not.

The views (``effdim_app.views``) only display these parameters and call these
methods, so everything here is testable without a browser.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import param

from effdim import HLCModel, ModelError, model_from_json, model_to_json, parse_model
from effdim.dimensions import bounds_report
from effdim.priors import DEFAULT_CS_PRIOR, DirichletPrior
from effdim.scores import PAPER_SCORES, SCORES, best
from effdim.search import pick_caveats

from . import presets, tasks
from .config import ServerLimits
from .jobs import Job, JobRunner

__all__ = ["ModelState", "DataState", "ScoresState", "SHOWN_SCORES"]

#: Criteria the dashboard shows (names of :data:`effdim.scores.SCORES`), in display order.
SHOWN_SCORES: tuple[str, ...] = (*PAPER_SCORES, "aic")
#: The CS priors offered, text -> label (effdim.priors; the default first).
CS_PRIORS: dict[str, str] = {
    str(p): p.label for p in map(DirichletPrior.parse, ("bdeu:1", "k2", "jeffreys", "bdeu:10"))
}

_MESSAGE_KINDS = ["info", "success", "warning", "danger"]


# ---------------------------------------------------------------- engine calls
# Cached results are immutable and keyed by immutable models, so sharing them
# between sessions is safe (and makes undo/redo and re-visits instant).
@lru_cache(maxsize=512)
def _violations(model: HLCModel) -> tuple:
    from effdim.regularity import regularity_violations

    return tuple(regularity_violations(model))


@lru_cache(maxsize=512)
def _regularize(model: HLCModel):
    from effdim.regularity import regularize

    return regularize(model)


class _Reports:
    """Dimension reports by model, least recently used first out (bounded memory).

    Filled by quick computations and by finished jobs alike, so undo/redo and
    other sessions' visits to a model are instant.
    """

    def __init__(self, size: int = 256):
        self.size = size
        self._items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple):
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        return None

    def put(self, key: tuple, report) -> None:
        self._items[key] = report
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


_REPORTS = _Reports()


@lru_cache(maxsize=512)
def _standard_dimension(model: HLCModel) -> int:
    from effdim.bounds import standard_dimension

    return standard_dimension(model)


def _whole_number(value: int | str) -> int:
    """``value`` as an int: an int, or text such as ' 3 ' (ValueError for '2.5', 'abc', '')."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text.lstrip("+-").isdigit():
        raise ValueError(value)
    return int(text)


def _error_text(err: BaseException) -> str:
    text = str(err).strip()
    return text or type(err).__name__


class ModelState(param.Parameterized):
    """The edited model, its selection and history, and the engine's verdicts."""

    model = param.ClassSelector(class_=HLCModel, instantiate=False, doc="The model as edited.")
    selected = param.String(default=None, allow_None=True, doc="Selected node of the edited model.")
    auto_regularize = param.Boolean(
        default=True,
        doc="Compute dimensions on the regular equivalent (Lemma 4.1) when the model is irregular.",
    )
    highlight = param.String(
        default=None, allow_None=True, doc="Hidden node whose local LC model is highlighted."
    )

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
    de_job = param.ClassSelector(class_=Job, default=None, allow_None=True, instantiate=False,
                                 doc="The job computing the exact de, while it runs.")
    direct_job = param.ClassSelector(class_=Job, default=None, allow_None=True, instantiate=False,
                                     doc="The job computing the whole-tree rank, while it runs.")
    changed = param.Dict(default={}, doc="node -> what regularization did to it.")
    highlight_nodes = param.List(default=[], doc="`highlight` and its neighbours.")
    can_undo = param.Boolean(default=False)
    can_redo = param.Boolean(default=False)
    update_seconds = param.Number(default=0.0, doc="Time the last recomputation took.")
    direct = param.Parameter(default=None, doc="Full engine report with the whole-tree rank (on demand).")
    direct_running = param.Boolean(default=False)
    revision = param.Integer(default=0, doc="Bumped once per change of anything drawn.")

    message = param.String(default="", doc="Outcome of the last action.")
    message_kind = param.Selector(default="info", objects=_MESSAGE_KINDS)

    max_history = param.Integer(default=200, bounds=(1, None))
    limits = param.ClassSelector(class_=ServerLimits, instantiate=False, doc="The server's size and time limits.")
    jobs = param.ClassSelector(class_=JobRunner, default=None, allow_None=True, instantiate=False,
                               doc="Runs heavy work in worker processes; None: compute in this process.")

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
        self.param.update(**self._derive(model, self.selected))
        self._start_pending()

    # ------------------------------------------------------------ derived
    # Every user action ends in ONE param.update carrying the model, the
    # derived values and a new `revision`, so each view redraws once per edit.
    def _derive(self, model: HLCModel, selected: str | None) -> dict[str, Any]:
        start = time.perf_counter()
        violations = list(_violations(model))
        regularization = _regularize(model) if violations else None
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
            drawn_ds=_standard_dimension(model),
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

    def _report_now(self, model: HLCModel) -> tuple[Any, str, str]:
        """``(report, error, de_note)`` of ``model`` without waiting: cached, quick, or closed forms only.

        A model whose exact de is heavy gets its closed forms now and is left in
        ``_pending`` for :meth:`_start_pending` to submit as a job.
        """
        self._pending = None
        key = (model, "local")
        cached = _REPORTS.get(key)
        if cached is not None:
            return cached, "", ""
        try:
            how, why = self.limits.plan(model, direct=False)
            if how == "now" or (how == "job" and self.jobs is None):
                report = tasks.dimensions_task(model, direct=False, max_bytes=self.limits.job_bytes)
                _REPORTS.put(key, report)
                return report, "", ""
            if how == "refuse":
                note = f"de was not computed: {why}. ds, dc and the bounds dp, db below are exact."
                return bounds_report(model, note), "", note
            self._pending = model
            return bounds_report(model, why), "", f"Computing the exact de ({why})…"
        except Exception as err:  # the engine names the problem; show it, keep the app alive
            return None, _error_text(err), ""

    def _show(self, model: HLCModel, selected: str | None = None, **extra) -> None:
        """Make ``model`` current: one update with everything derived from it."""
        self._verify_token += 1
        self._stop(self.de_job, self.direct_job)
        self.param.update(**self._derive(model, self.selected if selected is None else selected),
                          de_job=None, direct_job=None, direct_running=False, **extra)
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
        job = self.jobs.submit(tasks.dimensions_task, model, direct=False, max_bytes=self.limits.job_bytes,
                               label="Exact de")
        self.de_job = job
        job.add_done_callback(lambda job: self._finish_de(job, model))

    def _finish_de(self, job: Job, model: HLCModel) -> None:
        if self.de_job is not job:  # the model changed meanwhile: another job or none
            return
        if job.state == "done":
            _REPORTS.put((model, "local"), job.result)
            self.param.update(report=job.result, de_note="", de_job=None, revision=self.revision + 1)
        else:
            why = job.error if job.state != "cancelled" else "the computation was cancelled."
            self.param.update(de_note=f"de was not computed: {why} ds, dc and the bounds dp, db below are exact.",
                              de_job=None, revision=self.revision + 1)

    def cancel_jobs(self) -> None:
        """Stop this session's computations (the user asked, or the session closed)."""
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
        self.param.update(direct_running=True)
        if self.jobs is None:
            try:
                report = tasks.dimensions_task(model, direct=True, max_bytes=self.limits.job_bytes)
            except Exception as err:
                self.param.update(direct_running=False)
                self._say(f"The direct rank could not be computed: {_error_text(err)}", "danger")
                return None
        else:
            job = self.jobs.submit(tasks.dimensions_task, model, direct=True, max_bytes=self.limits.job_bytes,
                                   label="Whole-tree rank")
            self.direct_job = job
            report = await job
            if self.direct_job is not job:  # the model changed meanwhile
                return None
            self.param.update(direct_job=None, direct_running=False)
            if job.state != "done":
                self._say(f"The direct rank was not computed: {job.error}", "danger")
                return None
        self.param.update(direct_running=False)
        if token != self._verify_token:
            return None
        self.direct = report
        return report

    @property
    def is_regular(self) -> bool:
        return not self.violations

    # ------------------------------------------------------------ messages
    def _say(self, text: str, kind: str = "info") -> None:
        self.param.update(message=text, message_kind=kind)

    def _refuse(self, err: BaseException, what: str) -> bool:
        self._say(f"{what} refused: {_error_text(err)}. The model is unchanged.", "danger")
        return False

    # ------------------------------------------------------------ history
    def _commit(self, new: HLCModel, what: str, select: str | None = None) -> bool:
        if new == self.model:
            if select is not None:
                self.select(select)
            self._say(f"{what}: nothing changed.", "info")
            return True
        self._undo.append(self.model)
        del self._undo[: -self.max_history]
        self._redo.clear()
        self._show(new, select, message=what + ".", message_kind="success")
        return True

    def _edit(self, what: str, make, select: str | None = None) -> bool:
        try:
            new = make()
            self.limits.check_model(new)
        except (ModelError, ValueError, TypeError) as err:
            return self._refuse(err, what)
        return self._commit(new, what, select)

    def undo(self) -> bool:
        if not self._undo:
            self._say("Nothing to undo.", "info")
            return False
        self._redo.append(self.model)
        self._show(self._undo.pop(), message="Undone.", message_kind="info")
        return True

    def redo(self) -> bool:
        if not self._redo:
            self._say("Nothing to redo.", "info")
            return False
        self._undo.append(self.model)
        self._show(self._redo.pop(), message="Redone.", message_kind="info")
        return True

    # ------------------------------------------------------------ selection
    def select(self, node: str | None) -> None:
        if node is not None and node not in self.model:
            return
        if node != self.selected:
            self.param.update(selected=node, revision=self.revision + 1)

    def select_nearest(self, x: float, y: float, positions: dict[str, tuple[float, float]],
                       max_distance: float = 0.45) -> str | None:
        """Select the node of ``positions`` nearest to ``(x, y)`` (layout units).

        Taps farther than ``max_distance`` from every node select nothing new.
        """
        if x is None or y is None or not positions:
            return None
        if any(isinstance(v, float) and math.isnan(v) for v in (x, y)):
            return None
        node, dist = min(
            ((n, math.hypot(px - x, py - y)) for n, (px, py) in positions.items()), key=lambda t: t[1]
        )
        if dist > max_distance:
            return None
        self.select(node)
        return node

    # ------------------------------------------------------------ edits
    def _need_selection(self) -> str | None:
        if self.selected is None or self.selected not in self.model:
            self._say("Select a node first (click it in the tree).", "warning")
            return None
        return self.selected

    def _free_name(self, prefix: str) -> str:
        k = 1
        while f"{prefix}{k}" in self.model:
            k += 1
        return f"{prefix}{k}"

    def set_card(self, card: int | str, node: str | None = None) -> bool:
        """Set the number of states of ``node`` (default: the selected node); ``card`` may be typed text."""
        node = node or self._need_selection()
        if node is None:
            return False
        what = f"Set |{node}| = {str(card).strip()}"
        try:
            number = _whole_number(card)
        except ValueError:
            return self._refuse(ValueError(f"the number of states must be a whole number, not {str(card).strip()!r}"),
                                what)
        return self._edit(what, lambda: self.model.with_card(node, number))

    def rename(self, new: str, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        new = (new or "").strip()
        return self._edit(f"Rename {node} to {new!r}", lambda: self.model.renamed(node, new), select=new)

    def add_observed_child(self, card: int = 2, name: str | None = None) -> bool:
        node = self._need_selection()
        if node is None:
            return False
        name = name or self._free_name("O")
        return self._edit(
            f"Add observed {name}:{card} under {node}",
            lambda: self.model.with_child(node, name, int(card), hidden=False),
            select=name,
        )

    def add_hidden_child(self, card: int = 2, leaves: int = 2, leaf_card: int = 2,
                         name: str | None = None) -> bool:
        node = self._need_selection()
        if node is None:
            return False
        name = name or self._free_name("H")
        leaf_names: dict[str, int] = {}
        k = 1
        while len(leaf_names) < leaves:
            candidate = f"O{k}"
            if candidate not in self.model and candidate != name:
                leaf_names[candidate] = int(leaf_card)
            k += 1
        return self._edit(
            f"Add hidden {name}:{card} with {leaves} leaves under {node}",
            lambda: self.model.with_hidden_child(node, name, int(card), leaf_names),
            select=name,
        )

    def delete(self, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        parent = self.model.parent(node)
        what = f"Delete {node}" + (" and its subtree" if self.model.is_hidden(node) else "")
        return self._edit(what, lambda: self.model.without(node), select=parent)

    def make_root(self, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        return self._edit(f"Make {node} the root", lambda: self.model.rerooted(node), select=node)

    def adopt_regular(self) -> bool:
        """Replace the edited model by its regular equivalent (undoable)."""
        if self.regularization is None:
            self._say("The model is regular already.", "info")
            return False
        return self._commit(self.regularization.model, "Replaced by the regular equivalent")

    def set_model(self, model: HLCModel, what: str = "Loaded model") -> bool:
        return self._edit(what, lambda: model, select=model.root)

    # ------------------------------------------------------------ loading
    def _parse(self, text: str) -> HLCModel:
        self.limits.check_text(text, "notation")
        return parse_model(text.strip())

    def load_notation(self, text: str) -> bool:
        return self._edit("Model from notation", lambda: self._parse(text), select=None) and self._reselect()

    def load_preset(self, label: str) -> bool:
        if label not in presets.PRESETS:
            self._say(f"No preset named {label!r}.", "danger")
            return False
        return self._edit(f"Preset {label}", lambda: parse_model(presets.PRESETS[label])) and self._reselect()

    def load_json(self, data: str | bytes | dict[str, Any]) -> bool:
        if isinstance(data, (str, bytes)):
            try:
                self.limits.check_text(data, "JSON file")
            except ModelError as err:
                return self._refuse(err, "JSON import")
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                self._say("JSON import refused: the file is not UTF-8 text. The model is unchanged.", "danger")
                return False
        if isinstance(data, str) and not data.strip():
            self._say("JSON import refused: the file is empty. The model is unchanged.", "danger")
            return False
        return self._edit("Model from JSON", lambda: model_from_json(data)) and self._reselect()

    def _reselect(self) -> bool:
        if self.selected not in self.model:
            self.select(self.model.root)
        return True

    def to_json(self) -> str:
        return json.dumps(model_to_json(self.model), indent=2) + "\n"


class DataState(param.Parameterized):
    """The loaded data set; a failed load keeps the previous one."""

    dataset = param.Parameter(default=None, doc="effdim.data.Dataset or None: the columns in use.")
    full = param.Parameter(default=None, doc="The Dataset as loaded, every column.")
    columns = param.List(default=[], doc="The columns of `full` in use (`dataset`).")
    source = param.String(default="", doc="Where the data came from.")
    max_bytes = param.Integer(default=10_000_000, bounds=(1, None), doc="Upload size limit.")
    max_states = param.Integer(default=50, bounds=(2, None), doc="Most states a column may have.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=_MESSAGE_KINDS)
    load_job = param.ClassSelector(class_=Job, default=None, allow_None=True, instantiate=False,
                                   doc="The job reading a large upload, while it runs.")
    jobs = param.ClassSelector(class_=JobRunner, default=None, allow_None=True, instantiate=False,
                               doc="Reads large uploads in a worker process; None: in this process.")

    #: Uploads above this size are read in a worker: a 9.5 MB CSV took 1-2 s on
    #: the server's loop (measured), so this much takes some tens of milliseconds.
    QUICK_UPLOAD_BYTES = 250_000

    def _loaded(self, full, source: str, notes: tuple[str, ...] = ()) -> bool:
        """Use ``full``, leaving out columns with more than ``max_states`` values (identifiers, most likely)."""
        wide = [c for c, states in zip(full.columns, full.states) if len(states) > self.max_states]
        use = [c for c in full.columns if c not in wide]
        if len(use) < 2:
            raise _Refused(f"only {len(use)} column has at most {self.max_states} distinct values; need two")
        self.param.update(full=full, columns=use, dataset=full.subset(use) if wide else full, source=source)
        left_out = [f"{c!r} ({len(full.states[full.index(c)]):,} distinct values: an identifier?)" for c in wide]
        notes = (*notes, *([f"left out {', '.join(left_out)}; pick the columns to use below"] if wide else []))
        extra = "".join(f" {n[0].upper()}{n[1:]}." for n in notes)
        self.param.update(message=f"Loaded {source}: {self.describe()}.{extra}", message_kind="success")
        return True

    def use_columns(self, columns: list[str]) -> bool:
        """Score only ``columns`` of the loaded data (drop an ID column, pick a subset)."""
        full = self.full
        if full is None:
            return False
        columns = [c for c in full.columns if c in set(columns)]  # the file's order
        too_wide = [c for c in columns if len(full.states[full.index(c)]) > self.max_states]
        if too_wide:
            self.param.update(message=f"Column {too_wide[0]!r} has {len(full.states[full.index(too_wide[0])]):,} "
                                      f"distinct values, more than {self.max_states}: it cannot be used. "
                                      "The columns in use are unchanged.", message_kind="danger")
            return False
        if len(columns) < 2:
            self.param.update(message="Pick at least two columns. The columns in use are unchanged.",
                              message_kind="danger")
            return False
        self.param.update(columns=columns, dataset=full.subset(columns))
        self.param.update(message=f"Using {len(columns)} of {len(full.columns)} columns: {self.describe()}.",
                          message_kind="success")
        return True

    def move_state(self, column: str, state: str, step: int) -> bool:
        """Move ``state`` (its text) of ``column`` ``step`` places later (earlier if negative) in the column's
        order (:meth:`effdim.data.Dataset.with_state_order`); the data themselves do not change."""
        from effdim.data import DataError

        full = self.full
        if full is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        try:
            order = [str(s) for s in full.states[full.index(column)]]
            if state not in order:
                raise DataError(f"column {column!r} has no state {state!r}")
            i = order.index(state)
            j = min(max(i + step, 0), len(order) - 1)
            order.insert(j, order.pop(i))
            full = full.with_state_order(column, order)
        except DataError as err:
            self.param.update(message=f"The order was not changed: {_error_text(err)}.", message_kind="danger")
            return False
        dataset = full.subset(self.columns) if list(self.columns) != list(full.columns) else full
        self.param.update(full=full, dataset=dataset, message=f"Column {column!r}: states in the order "
                          f"{', '.join(order)}.", message_kind="success")
        return True

    def _failed(self, source: str, err: BaseException) -> bool:
        keep = f" Still using {self.source}." if self.dataset is not None else ""
        self.param.update(message=f"Could not load {source}: {_error_text(err)}.{keep}", message_kind="danger")
        return False

    def load_upload(self, filename: str, content: bytes) -> bool:
        """Read an uploaded CSV with the engine's loader (its limits, its messages); large files in a worker.

        Files that are not UTF-8 are read as Latin-1, and a header line with
        more semicolons (or tabs) than commas sets the separator; the message
        says what was detected. Columns over ``max_states`` are left out, not
        refused (:meth:`_loaded`).
        """
        from effdim.data import DataError

        source = f"upload {filename!r}"
        if content is None:
            return self._failed(source, DataError("no file content received"))
        if len(content) > self.max_bytes:
            return self._failed(
                source, DataError(f"the file has {len(content):,} bytes, more than the limit of {self.max_bytes:,}")
            )
        notes = []
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            content = content.decode("latin-1").encode("utf-8")
            notes.append("read as Latin-1 text (the file is not UTF-8)")
        sep = _separator(content)
        if sep != ",":
            notes.append(f"fields separated by {_SEPARATOR_NAMES[sep]}")
        # columns over max_states are left out by _loaded, not refused: hence the loose limit here
        options = dict(max_states=len(content) + 2, max_bytes=self.max_bytes, sep=sep, name=filename)
        if self.jobs is not None and len(content) > self.QUICK_UPLOAD_BYTES:
            if self.load_job is not None:
                self.load_job.cancel()
            job = self.jobs.submit(tasks.load_csv_task, content, **options, label=f"Reading {filename}")
            self.param.update(load_job=job, message=f"Reading {source}…", message_kind="info")
            job.add_done_callback(lambda job: self._upload_read(job, source, tuple(notes)))
            return True
        try:
            return self._loaded(tasks.load_csv_task(content, **options), source, tuple(notes))
        except (DataError, ValueError, _Refused) as err:
            return self._failed(source, err)

    def _upload_read(self, job: Job, source: str, notes: tuple[str, ...] = ()) -> None:
        if self.load_job is not job:  # a newer upload replaced it
            return
        self.load_job = None
        if job.state != "done":
            self._failed(source, ValueError(job.error.rstrip(".")))
            return
        try:
            self._loaded(job.result, source, notes)
        except _Refused as err:
            self._failed(source, err)

    def load_bundled(self, name: str) -> bool:
        from effdim import datasets

        source = f"bundled data set {name!r}"
        try:
            return self._loaded(datasets.load(name), source)
        except (KeyError, ValueError, OSError, _Refused) as err:
            return self._failed(source, err)

    def describe(self) -> str:
        ds = self.dataset
        if ds is None:
            return "no data"
        missing = f", {_number(ds.n_missing)} missing cells" if ds.n_missing else ""
        return (f"{_number(ds.n_rows)} rows, {ds.n_patterns} distinct patterns over "
                f"{len(ds.columns)} columns{missing}")

    def columns_frame(self):
        """One row per column: name, number of states, the states."""
        import pandas as pd

        ds = self.dataset
        if ds is None:
            return pd.DataFrame({"column": pd.Series(dtype=object), "states": pd.Series(dtype="int64"),
                                 "values": pd.Series(dtype=object)})
        return pd.DataFrame({
            "column": list(ds.columns),
            "states": [len(s) for s in ds.states],
            "values": [", ".join(map(str, s[:8])) + (" …" if len(s) > 8 else "") for s in ds.states],
        })


class _Refused(Exception):
    """A load the dashboard refuses (the message is for the user)."""


_SEPARATOR_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def _separator(content: bytes) -> str:
    """The separator the header line uses most (commas when it has none of them)."""
    header = content.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
    counts = {sep: header.count(sep) for sep in _SEPARATOR_NAMES}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def _hidden_count(model: HLCModel) -> str:
    count = len(model.hidden)
    return f"{count} hidden node{'s' if count != 1 else ''}"


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"


class ScoresState(param.Parameterized):
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
    card_max = param.Integer(default=0, bounds=(0, None), doc="0: up to the largest regular value.")
    restarts = param.Integer(default=5, bounds=(1, 200))
    seed = param.Integer(default=0, bounds=(0, None))
    climb_score = param.Selector(default="cs+", objects=list(SHOWN_SCORES))
    learn_score = param.Selector(default="bic+", objects=list(SHOWN_SCORES),
                                 doc="Score that drives the structure search (effdim.structure).")
    cs_prior = param.Selector(default=str(DEFAULT_CS_PRIOR), objects=list(CS_PRIORS),
                              doc="Dirichlet prior of CS and CS+ (effdim.priors).")
    past_saturation = param.Boolean(
        default=False, doc="With 'to' = 0: sweep up to the largest regular cardinality, not only to de = dc.")

    running = param.Boolean(default=False)
    task = param.String(default="", doc="'sweep', 'climb' or 'learn' while running.")
    progress = param.Integer(default=0, bounds=(0, 100))
    status = param.String(default="")
    results = param.List(default=[], doc="FitResults of the last sweep (current model and data only).")
    climb = param.Parameter(default=None, doc="HillClimb of the last climb (current model and data only).")
    mismatch = param.List(default=[], doc="Problems matching the model's leaves to the data.")
    leaf_map = param.List(default=[], doc="Rows (leaf, column, leaf states, column states) of the matching.")
    message = param.String(default="")
    message_kind = param.Selector(default="info", objects=_MESSAGE_KINDS)
    job = param.ClassSelector(class_=Job, default=None, allow_None=True, instantiate=False,
                              doc="The sweep or climb job, while it waits or runs.")
    learned_tree = param.ClassSelector(
        class_=HLCModel, default=None, allow_None=True, instantiate=False,
        doc="The structure search's best tree so far while it runs, then the tree it learned (None: no search, "
            "or it was cancelled or failed, or the data changed since).")
    learned_note = param.String(default="", doc="What learned_tree is, in words.")
    jobs = param.ClassSelector(class_=JobRunner, default=None, allow_None=True, instantiate=False,
                               doc="Runs sweeps and climbs in worker processes (default: one of its own).")

    def __init__(self, models: ModelState, data: DataState, **params):
        super().__init__(models=models, data=data, **params)
        if self.jobs is None:
            self.jobs = models.jobs or JobRunner(workers=models.limits.workers, timeout=models.limits.time_limit,
                                                 max_bytes=models.limits.job_bytes)
        self._key_of_results = None
        self._scored = None  # (mapping, scored model, data, CS prior) the last inputs check saw
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
                self.status = "Earlier results were cleared: the model, the data or the mapping changed."

    @param.depends("node", watch=True)
    def _node_changed(self) -> None:
        if self.results and self._key_of_results != self.key():
            self.param.update(results=[], climb=None, status="Earlier results were cleared: another node is swept.")

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
            return [_error_text(err)], []
        rows = [(leaf, col, model.card(leaf), len(dataset.states[dataset.index(col)]))
                for leaf, col in resolved.items()]
        unused = [c for c in dataset.columns if c not in resolved.values()]
        problems = []
        try:
            check_matches_model(dataset, model)
        except DataError as err:
            problems.append(_error_text(err))
        if unused:
            rows += [("—", c, None, len(dataset.states[dataset.index(c)])) for c in unused]
        return problems, rows

    # ------------------------------------------------------------ runs
    def cancel(self) -> None:
        """Stop the running sweep or climb (its worker process is killed)."""
        if self.job is not None:
            self.job.cancel()
            self.status = "Cancelling…"

    def _ready(self) -> bool:
        if self.running:
            self.param.update(message="A computation is running; cancel it first.", message_kind="warning")
            return False
        if self.data.dataset is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        if self.mismatch:
            self.param.update(
                message="The model does not match the data: " + "; ".join(self.mismatch), message_kind="danger"
            )
            return False
        return True

    def _cards(self) -> list[int] | None:
        """The swept cardinalities (None: the engine's default range), within the server's limits.

        With 'to' = 0 the sweep stops at saturation (:meth:`saturation_card`) unless ``past_saturation``.
        """
        limits = self.models.limits
        if self.card_max > limits.max_card:
            raise ValueError(f"the largest cardinality {self.card_max:,} is above this server's limit "
                             f"of {limits.max_card:,}")
        if self.card_max == 0:
            saturated = None if self.past_saturation else self.saturation_card()
            return None if saturated is None else list(range(self.card_min, max(saturated, self.card_min) + 1))
        if self.card_max < self.card_min:
            return None
        count = self.card_max - self.card_min + 1
        if count > limits.max_sweep:
            raise ValueError(f"the range {self.card_min}..{self.card_max} has {count:,} cardinalities; this "
                             f"server sweeps at most {limits.max_sweep} at a time")
        return list(range(self.card_min, self.card_max + 1))

    def saturation_card(self) -> int | None:
        """The least cardinality of the swept node at which de = dc (None: not before the model turns
        irregular, or too heavy to check here).

        From there on every larger cardinality has the same de and fits the
        data as well as the complete model: sweeping further shows flat
        curves only. Uses the interactive (Corollary 4.1) dimensions.
        """
        from effdim.search import lc_model_for

        dataset = self.data.dataset
        if dataset is None:
            return None
        model = self.scored_model() or lc_model_for(dataset)
        node = self.node if self.node in model else model.root
        limits = self.models.limits
        for card in itertools.count(1):
            candidate = model.with_card(node, card)
            if _violations(candidate) or limits.plan(candidate, direct=False)[0] != "now":
                return None
            report = tasks.dimensions_task(candidate, direct=False, max_bytes=limits.job_bytes)
            if report.de >= report.dc:
                return card
        return None

    async def _run(self, task: str, fn, *args, depends=None, label: str | None = None, on_detail=None,
                   **kwargs) -> Any:
        """Run ``fn(*args, **kwargs)`` as a job; mirror its state here; keep the event loop free.

        ``on_detail(text)`` is called with each new detail the worker sends
        (:attr:`effdim_app.jobs.Job.detail`). The result is discarded when
        ``depends()`` (default :meth:`key`) changed meanwhile.
        """
        depends = depends or self.key
        key = depends()
        job = self.jobs.submit(fn, *args, label=label or task.capitalize(), **kwargs)

        def show(*_):
            text = job.describe()
            self.param.update(progress=int(100 * job.progress), status=text)

        watchers = [job.param.watch(show, ["state", "done", "total", "position", "seconds", "note"])]
        if on_detail is not None:
            watchers.append(job.param.watch(lambda event: on_detail(event.new), ["detail"]))
        self.param.update(running=True, task=task, job=job, progress=0, status=job.describe(), message="")
        try:
            outcome = await job
        finally:
            for watcher in watchers:
                job.param.unwatch(watcher)
            self.param.update(running=False, task="", job=None)
        if job.state == "cancelled":
            self.param.update(status=f"{task.capitalize()} cancelled.", progress=0)
            return None
        if job.state != "done":
            self.param.update(status=f"{task.capitalize()} failed.", progress=0,
                              message=f"{task.capitalize()} failed: {job.error}", message_kind="danger")
            return None
        if key != depends():
            self.param.update(status=f"{task.capitalize()} finished, but the model or data changed meanwhile: "
                                     "result discarded.", progress=0)
            return None
        return outcome

    async def run_sweep(self) -> list | None:
        if not self._ready():
            return None
        try:
            cards = self._cards()
        except ValueError as err:
            self.param.update(message=f"Sweep refused: {_error_text(err)}.", message_kind="danger")
            return None
        self.param.update(results=[], climb=None)
        results = await self._run("sweep", tasks.sweep_task, self.data.dataset, model=self.scored_model(),
                                  node=self.node, cards=cards, restarts=self.restarts, seed=self.seed,
                                  cs_prior=self.cs_prior)
        if results is not None:
            self._key_of_results = self.key()
            saturated = cards is not None and self.card_max == 0
            note = (f" Stopped at |H| = {cards[-1]}, where de = dc: larger cardinalities score alike "
                    "(tick 'past saturation' to go on)." if saturated else "")
            self.param.update(results=list(results), progress=100,
                              status=f"Sweep done: {len(results)} cardinalities scored.{note}")
        return results

    async def run_climb(self) -> Any:
        if not self._ready():
            return None
        model = self.scored_model()
        if model is None:
            self.param.update(message="Hill climbing needs the model mapping (an HLC model over the data).",
                              message_kind="warning")
            return None
        self.param.update(results=[], climb=None)
        climb = await self._run("climb", tasks.climb_task, self.data.dataset, model, score=self.climb_score,
                                restarts=self.restarts, seed=self.seed, cs_prior=self.cs_prior)
        if climb is not None:
            self._key_of_results = self.key()
            notes = pick_caveats(climb.best)
            self.param.update(climb=climb, progress=100,
                              status=f"Hill climb done: {len(climb.path) - 1} steps up from all hidden nodes binary"
                                     + (f"; the best model: {'; '.join(notes)}." if notes else "."))
        return climb

    async def run_learn(self) -> Any:
        """Learn a tree over all data columns (:func:`effdim.structure.learn_structure`) as a job, then open
        it in the tree editor (undoable) and score it. Edits meanwhile do not stop it; new data does."""
        if self.running:
            self.param.update(message="A computation is running; cancel it first.", message_kind="warning")
            return None
        if self.data.dataset is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return None
        label = SCORES[self.learn_score].label
        budget = max(5.0, self.jobs.timeout - 5.0)  # stop with the best tree before the job's time limit
        self.param.update(learned_tree=None, learned_note="")
        learned = await self._run("learn", tasks.learn_task, self.data.dataset, score=self.learn_score,
                                  restarts=self.restarts, seed=self.seed, cs_prior=self.cs_prior, max_time=budget,
                                  depends=lambda: id(self.data.dataset), label=f"Learn structure ({label})",
                                  on_detail=self._best_tree_so_far)
        if learned is None:
            self.param.update(learned_tree=None, learned_note="")
            return None
        fit = learned.fit
        ended = "the time limit ended the search" if learned.stopped == "max_time" else "no move improves it"
        self.models.set_model(learned.model, f"Learned structure ({label})")
        self.mapping = "model"
        self.param.update(learned_tree=learned.model, learned_note=(
            f"The learned tree ({_hidden_count(learned.model)}, {label} {fit.score(self.learn_score):,.2f}), "
            "now in the tree editor."))
        self.param.update(progress=100, status=(
            f"Structure learned in {learned.seconds:.0f} s: {len(learned.steps)} moves from the start tree, "
            f"{ended}. {label} {fit.score(self.learn_score):,.2f}, ds {fit.ds}, de {fit.de}; "
            "it is now in the tree editor (Undo brings back your model)."))
        return learned

    def _best_tree_so_far(self, notation: str) -> None:
        """Show the running structure search's best tree (sent by the worker in notation)."""
        model = parse_model(notation)
        self.param.update(learned_tree=model, learned_note=(
            f"Best tree so far ({_hidden_count(model)}); redrawn whenever the search improves it."))

    # ------------------------------------------------------------ outputs
    def results_frame(self):
        import pandas as pd

        rows = [r.to_json() for r in self.results]
        frame = pd.DataFrame(rows)
        for column in ("restarts", "degenerate"):
            if column in frame:
                frame[column] = frame[column].map(lambda v: json.dumps(v, default=str) if v else "")
        return frame

    def best(self) -> dict[str, tuple[int, float]]:
        """Score name -> (card, value) of the best cardinality for each shown score
        (:func:`effdim.scores.best`: ties go to the smaller model)."""
        if not self.results:
            return {}
        return {name: (fit.card, fit.score(name))
                for name in SHOWN_SCORES for fit in [best(self.results, name)]}

    def pick_notes(self) -> dict[str, list[str]]:
        """Score name -> caveats of its best cardinality (:func:`effdim.search.pick_caveats`: top of the
        swept range, largest regular cardinality, saturated model)."""
        if not self.results:
            return {}
        return {name: pick_caveats(best(self.results, name), self.results) for name in SHOWN_SCORES}

    def climb_frame(self):
        """One row per accepted hill-climb step: the model, its hidden cardinalities, its scores."""
        import pandas as pd

        if self.climb is None:
            return pd.DataFrame()
        rows = []
        for i, fit in enumerate(self.climb.path):
            m = fit.model
            row = {"step": i, "model": str(m), "hidden cards": ", ".join(f"{h}={m.card(h)}" for h in m.hidden),
                   "score": fit.score(self.climb.score), "loglik": fit.loglik, "ds": fit.ds, "de": fit.de}
            rows.append(row)
        return pd.DataFrame(rows)

    def use_lc_model_in_editor(self) -> bool:
        """Put the engine's LC model over all data columns into the editor (undoable)."""
        if self.data.dataset is None:
            self.param.update(message="Load a data set first.", message_kind="warning")
            return False
        from effdim.search import lc_model_for

        try:
            model = lc_model_for(self.data.dataset)
        except (ModelError, ValueError) as err:
            self.param.update(message=f"No LC model over these columns: {_error_text(err)}", message_kind="danger")
            return False
        done = self.models.set_model(model, "LC model over the data columns")
        if done:
            self.mapping = "model"
        return done

    def results_csv(self) -> str:
        if not self.results:
            return ""
        return self.results_frame().to_csv(index=False)
