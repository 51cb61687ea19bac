"""Panel views of the dashboard; each displays state and calls state methods.

Every view is a :class:`panel.viewable.Viewer` over the param classes of
:mod:`effdim_app.state`. Views never compute anything about a model
themselves: the state asks the engine, the views show the answers.
"""

from __future__ import annotations

import html
import io

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend)
import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

try:  # without hv.extension (scripts, pn.serve) the option builders need a backend
    hv.opts.Overlay
except AttributeError:
    hv.Store.set_current_backend("bokeh")

from . import explain, presets
from .style import ALERT_CSS, CARD_CSS, HTML_CSS
from effdim.scores import SCORES

from .state import CS_PRIORS, SHOWN_SCORES, DataState, ModelState, ScoresState

__all__ = [
    "ModelPanel",
    "SelectionPanel",
    "RegularizationPanel",
    "DimensionsPanel",
    "DataPanel",
    "ScoresPanel",
]


BIG = 10_000_000
NUMERIC_DIM_COLUMNS = ("ds", "de", "dc", "dp", "db", "deficit")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _compact(value: int) -> str:
    """A number short enough for a stat box: 12,345 or 3.92·10¹⁰ (exact value in the tooltip)."""
    if abs(value) < BIG:
        return str(value)
    mantissa, exponent = f"{value:.3e}".split("e")
    return f"{float(mantissa):.3g}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _typed(**columns: str) -> pd.DataFrame:
    """An empty frame with typed columns: Tabulator picks its formatters from the first dtypes."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})


STEP_COLUMNS = dict(step="int64", node="object", rule="object", **{"old → new": "object"})
DIM_COLUMNS = {"hidden": "object", "LC model": "object", "ds": "int64", "de": "int64", "dc": "int64",
               "dp": "int64", "db": "int64", "binding": "object", "deficit": "int64"}
RESULT_COLUMNS = {"|H|": "int64", "loglik": "float64", "BIC": "float64", "BIC+": "float64", "CS": "float64",
                  "CS+": "float64", "AIC": "float64", "ds": "int64", "de": "int64", "n": "int64"}
PATH_COLUMNS = {"step": "int64", "model": "object", "hidden cards": "object", "score": "float64",
                "loglik": "float64", "ds": "int64", "de": "int64"}
LEAF_COLUMNS = {"leaf": "object", "column": "object", "leaf states": "Int64", "column states": "int64"}
DATA_COLUMNS = {"column": "object", "states": "int64", "values": "object"}


def _caveat_html(notes: list[str]) -> str:
    """A pick's caveats (top of the range, saturated: effdim.search.pick_caveats) as a small note."""
    return f" <small>({html.escape('; '.join(notes))})</small>" if notes else ""


def _html(obj="", **params) -> pn.pane.HTML:
    """An HTML pane that knows the dashboard's classes."""
    params.setdefault("stylesheets", [HTML_CSS])
    return pn.pane.HTML(obj, **params)


def _alert(obj: param.Parameterized) -> pn.pane.Alert:
    """An alert showing ``obj.message`` in the colour of ``obj.message_kind``; hidden when empty."""
    alert = pn.pane.Alert(obj.message, alert_type=obj.message_kind, visible=bool(obj.message),
                          sizing_mode="stretch_width", margin=(5, 5), stylesheets=[ALERT_CSS])

    def update(*_):
        alert.param.update(object=obj.message, alert_type=obj.message_kind, visible=bool(obj.message))

    obj.param.watch(update, ["message", "message_kind"])
    return alert


class JobLine(Viewer):
    """The job in ``state.<name>`` while it waits or runs: what it does, progress, a Cancel button."""

    def __init__(self, state: param.Parameterized, name: str, **params):
        super().__init__(**params)
        self.state, self.attr = state, name
        self.text = _html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-job", f"effdim-{name}"])
        self.bar = pn.indicators.Progress(value=-1, max=100, active=True, width=120, height=14, margin=(6, 5))
        self.cancel = pn.widgets.Button(label="■ Cancel", color="danger", width=90, margin=(0, 5),
                                        css_classes=["effdim-job-cancel", f"effdim-{name}-cancel"])
        self.cancel.on_click(lambda _: self._job() and self._job().cancel())
        self.row = pn.Row(self.bar, self.text, self.cancel, sizing_mode="stretch_width", margin=0, visible=False)
        self._watcher = None
        state.param.watch(self._job_changed, [name])
        self._job_changed()

    def _job(self):
        return getattr(self.state, self.attr)

    def _job_changed(self, *_) -> None:
        if self._watcher is not None:
            self._watcher[0].param.unwatch(self._watcher[1])
            self._watcher = None
        job = self._job()
        if job is not None:
            self._watcher = (job, job.param.watch(self._show, ["state", "done", "total", "position", "seconds"]))
        self._show()

    def _show(self, *_) -> None:
        job = self._job()
        if job is None or job.finished:
            self.row.visible = False
            return
        self.text.object = f"<small>{job.describe()}</small>"
        self.bar.param.update(value=int(100 * job.progress) if job.total else -1, active=job.total == 0)
        self.row.visible = True

    def __panel__(self):
        return self.row


def _heading(text: str, help_text: str | None = None) -> pn.viewable.Viewable:
    title = _html(f"<h3 class='effdim-h'>{text}</h3>", margin=(5, 5, 0, 5))
    if help_text is None:
        return title
    return pn.Row(title, pn.widgets.TooltipIcon(value=help_text, margin=(14, 0, 0, 0)), margin=0)


# ====================================================================== model
class ModelPanel(Viewer):
    """Sidebar: presets, notation box, JSON import/export, auto-regularize, undo/redo."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.preset = pn.widgets.Select(
            label="Preset",
            groups={g: list(items) for g, items in presets.PRESET_GROUPS.items()},
            value=presets.DEFAULT_PRESET,
            sizing_mode="stretch_width",
        )
        self.load_preset = pn.widgets.Button(label="Load preset", color="primary", sizing_mode="stretch_width")
        self.load_preset.on_click(lambda _: state.load_preset(self.preset.value))
        self.notation = pn.widgets.TextAreaInput(
            label="Model notation", value=state.notation, height=90, sizing_mode="stretch_width",
            placeholder="3:2,2,2,2  or  5(3(2,2),2,3(2,2))  or  H1:5(H2:3(O1:2,O2:2),O3:2)",
            css_classes=["effdim-notation"],
        )
        self.apply = pn.widgets.Button(label="Apply notation", color="primary", sizing_mode="stretch_width")
        self.apply.on_click(self._apply_notation)
        state.param.watch(lambda e: setattr(self.notation, "value", e.new), "notation")

        self.export = pn.widgets.FileDownload(
            label="Export JSON", callback=lambda: io.StringIO(state.to_json()), filename="model.json",
            sizing_mode="stretch_width", embed=False,
        )
        self.import_json = pn.widgets.FileInput(accept=".json,application/json", sizing_mode="stretch_width")
        self.import_json.param.watch(self._import, "value")

        self.auto = pn.widgets.Switch.from_param(state.param.auto_regularize, label="", margin=(8, 5),
                                                 css_classes=["effdim-auto"])
        self.undo = pn.widgets.Button(label="↶ Undo", sizing_mode="stretch_width", disabled=not state.can_undo)
        self.redo = pn.widgets.Button(label="↷ Redo", sizing_mode="stretch_width", disabled=not state.can_redo)
        self.undo.on_click(lambda _: state.undo())
        self.redo.on_click(lambda _: state.redo())
        state.param.watch(lambda e: setattr(self.undo, "disabled", not e.new), "can_undo")
        state.param.watch(lambda e: setattr(self.redo, "disabled", not e.new), "can_redo")

    def _apply_notation(self, _=None) -> None:
        text = self.notation.value_input if self.notation.value_input is not None else self.notation.value
        self.state.load_notation(text or "")

    def _import(self, event) -> None:
        if event.new:
            self.state.load_json(event.new)

    def __panel__(self):
        return pn.Column(
            _heading("Model"),
            self.preset,
            self.load_preset,
            self.notation,
            self.apply,
            pn.Row(self.undo, self.redo, sizing_mode="stretch_width"),
            pn.Row(
                self.auto,
                _html("<b>Auto-regularize</b> (Lemma 4.1)", margin=(10, 0, 0, 0)),
                pn.widgets.TooltipIcon(value=explain.regularity_rules_markdown(), margin=(12, 0, 0, 0)),
            ),
            _heading("JSON"),
            self.export,
            _html("<small>Import a model saved as JSON:</small>", margin=(0, 5)),
            self.import_json,
            sizing_mode="stretch_width",
        )


class SelectionPanel(Viewer):
    """Controls acting on the selected node."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.info = _html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-selinfo"])
        self.card = pn.widgets.IntInput(label="States", start=1, end=1000, value=2, width=80,
                                        css_classes=["effdim-card-input"])
        self.name_input = pn.widgets.TextInput(label="Name", width=95, css_classes=["effdim-name-input"])
        self.rename = pn.widgets.Button(label="Rename", width=75, margin=(24, 5, 5, 0))
        self.new_card = pn.widgets.IntInput(label="New child's states", start=1, end=1000, value=2, width=130)
        self.add_obs = pn.widgets.Button(label="+ Observed child", sizing_mode="stretch_width")
        self.add_hid = pn.widgets.Button(label="+ Hidden child", sizing_mode="stretch_width")
        self.delete = pn.widgets.Button(label="Delete", color="danger", sizing_mode="stretch_width")
        self.make_root = pn.widgets.Button(label="Make root", sizing_mode="stretch_width")
        self.message = _alert(state)

        self.card.param.watch(self._card_entered, "value")
        self.rename.on_click(lambda _: state.rename(self.name_input.value_input or self.name_input.value))
        self.add_obs.on_click(lambda _: state.add_observed_child(card=self.new_card.value))
        self.add_hid.on_click(lambda _: state.add_hidden_child(card=self.new_card.value))
        self.delete.on_click(lambda _: state.delete())
        self.make_root.on_click(lambda _: state.make_root())
        self._syncing = False
        state.param.watch(self._sync, ["selected", "model"])
        self._sync()

    def _card_entered(self, event) -> None:
        if self._syncing:
            return
        node = self.state.selected
        if node is not None and node in self.state.model and event.new is not None \
                and event.new != self.state.model.card(node):
            self.state.set_card(event.new)

    def _sync(self, *_) -> None:
        state, node = self.state, self.state.selected
        model = state.model
        self._syncing = True
        try:
            if node is None or node not in model:
                self.info.object = "<p>Click a node in the tree to select it.</p>"
                for w in (self.card, self.name_input, self.rename, self.add_obs, self.add_hid,
                          self.delete, self.make_root):
                    w.disabled = True
                return
            hidden = model.is_hidden(node)
            kind = "hidden" if hidden else "observed"
            ne = ", ".join(f"{n}:{model.card(n)}" for n in model.neighbors(node))
            role = " (root)" if node == model.root else ""
            self.info.object = (
                f"<div class='effdim-sel'><b>Selected: {node}</b>{role}<br>"
                f"{kind}, {model.card(node)} states<br><small>Ne({node}) = {{{ne}}}</small></div>"
            )
            self.card.param.update(value=model.card(node), start=1 if hidden else 2, disabled=False)
            self.name_input.param.update(value=node, disabled=False)
            self.rename.disabled = False
            self.add_obs.disabled = not hidden
            self.add_hid.disabled = not hidden
            self.make_root.disabled = (not hidden) or node == model.root
            self.delete.disabled = node == model.root
        finally:
            self._syncing = False

    def __panel__(self):
        return pn.Column(
            _heading("Selected node", "Click a node in the tree. Edits the engine refuses leave the model unchanged "
                     "and say why below."),
            self.info,
            pn.Row(self.card, self.name_input, self.rename, margin=0),
            _html("<small>A new number of states applies on Enter.</small>", margin=(0, 10)),
            self.new_card,
            pn.Row(self.add_obs, self.add_hid, margin=0, sizing_mode="stretch_width"),
            pn.Row(self.make_root, self.delete, margin=0, sizing_mode="stretch_width"),
            width=310,
            css_classes=["effdim-card"],
            stylesheets=[CARD_CSS],
        )


# ============================================================= regularization
class RegularizationPanel(Viewer):
    """Regular or not; with auto-regularize, the regular equivalent and the step log."""

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.summary = pn.pane.Alert("", alert_type="success", sizing_mode="stretch_width", margin=(5, 5),
                                     stylesheets=[ALERT_CSS])
        self.steps = pn.widgets.Tabulator(
            _typed(**STEP_COLUMNS),
            show_index=False, disabled=True, selectable=False, sizing_mode="stretch_width",
            layout="fit_data_stretch", visible=False, css_classes=["effdim-steps"],
            header_tooltips={
                "rule": "shrink: |H| to Π|Ne(H)|/max|Ne(H)| (Lemma 4.1). remove: a hidden node with two "
                        "neighbours, one hidden, and |H| ≥ the smaller one copies it and is removed.",
            },
        )
        self.adopt = pn.widgets.Button(label="Replace the edited model by its regular equivalent",
                                       visible=False, color="warning")
        self.adopt.on_click(lambda _: state.adopt_regular())
        state.param.watch(self._update, ["regularization", "violations", "auto_regularize"])
        self._update()

    def _update(self, *_) -> None:
        state = self.state
        if state.is_regular:
            self.summary.param.update(
                alert_type="success",
                object="**Regular.** Every hidden node H has |H| ≤ Π|Ne(H)| / max|Ne(H)| (Lemma 4.1), strictly "
                       "where H has two neighbours one of which is hidden; Corollary 4.1 applies.",
            )
            self.steps.visible = False
            self.adopt.visible = False
            return
        reasons = "\n".join(f"- {v.message}" for v in state.violations)
        reg = state.regularization
        if state.auto_regularize:
            self.summary.param.update(
                alert_type="warning",
                object=f"**Irregular; dimensions are those of the regular equivalent** "
                       f"`{reg.model}` (same distributions over the observed variables, so the same de; "
                       f"Lemma 4.1). Why:\n{reasons}",
            )
            rows = [
                {"step": i + 1, "node": s.node, "rule": s.rule, "old → new": f"{s.old} → {s.new}"}
                for i, s in enumerate(reg.steps)
            ]
            self.steps.value = pd.DataFrame(rows)
            self.steps.visible = True
            self.adopt.visible = True
        else:
            self.summary.param.update(
                alert_type="danger",
                object=f"**The model is irregular** (auto-regularize is off; dimensions are of the model as "
                       f"edited, and Corollary 4.1 need not hold). Why:\n{reasons}",
            )
            self.steps.visible = False
            self.adopt.visible = False

    def __panel__(self):
        return pn.Column(
            _heading("Regularity", explain.regularity_rules_markdown()),
            self.summary, self.steps, self.adopt,
            sizing_mode="stretch_width",
        )


# ================================================================ dimensions
class DimensionsPanel(Viewer):
    """Totals, the per-hidden-node table (row click highlights), and the rules behind each number."""

    COLUMNS = ["hidden", "LC model", "ds", "de", "dc", "dp", "db", "binding", "deficit"]

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.totals = _html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-totals"])
        self.table = pn.widgets.Tabulator(
            _typed(**DIM_COLUMNS), show_index=False, disabled=True, selectable=1, sortable=False,
            sizing_mode="stretch_width", layout="fit_columns", header_tooltips=explain.COLUMN_TOOLTIPS,
            widths={"hidden": 75, "LC model": 120, "binding": 75},
            text_align={c: "right" for c in ["ds", "de", "dc", "dp", "db", "deficit"]},
            header_align={c: "right" for c in ["ds", "de", "dc", "dp", "db", "deficit"]},
            formatters={c: {"type": "money", "thousand": ",", "precision": 0} for c in NUMERIC_DIM_COLUMNS},
            # no resize handles at cell edges: they swallow row clicks. (Cell tooltips were tried and
            # stuck on screen after a row re-render; the row note spells out the full LC model.)
            configuration={"columnDefaults": {"resizable": False}},
            css_classes=["effdim-dims"], height=None, min_height=80,
        )
        self.corollary = _html("", sizing_mode="stretch_width", margin=(0, 5))
        self.totals_note = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.row_note = pn.pane.Markdown("*Click a row of the table to see where its numbers come from, and to "
                                         "highlight the hidden node and its neighbours in the tree.*",
                                         sizing_mode="stretch_width")
        # The notes are written only while the card is open: a collapsed Card
        # hides its children from the browser side, so updating a hidden child
        # made browser and server toggle its visibility back and forth after
        # every edit, each toggle re-laying out the page (hundreds of ms).
        self.explain_card = pn.Card(
            self.totals_note, title="Where do these numbers come from?", collapsed=True,
            sizing_mode="stretch_width", margin=(5, 5),
        )
        self.explain_card.param.watch(self._update_notes, "collapsed")
        self.row_card = pn.Card(self.row_note, title="The selected row, explained", collapsed=False,
                                sizing_mode="stretch_width", margin=(5, 5), visible=False)
        self.row_hint = _html("<small><i>Click a row to highlight its hidden node and neighbours in the tree "
                              "and to see where each of its numbers comes from.</i></small>", margin=(0, 10))
        self.timing = _html("", margin=(0, 5))
        self.verify = pn.widgets.Button(label="Check de by the whole tree's Jacobian rank", width=320,
                                        css_classes=["effdim-verify"])
        self.verify.on_click(self._verify)
        self.direct_note = _html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-direct"])
        self.de_note = _html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-de-note"])
        self.de_job = JobLine(state, "de_job")
        self.direct_job = JobLine(state, "direct_job")
        state.param.watch(self._update_direct, ["direct", "direct_running"])
        self._hidden_rows: list[str] = []
        self._syncing = False
        self.table.param.watch(self._row_selected, "selection")
        state.param.watch(self._update, ["report", "report_error", "effective", "de_note", "de_job"])
        state.param.watch(self._sync_selection, ["highlight"])
        self._update()

    def _update(self, *_) -> None:
        state = self.state
        report = state.report
        if report is None:
            self.totals.object = f"<div class='effdim-error'>No dimensions: {state.report_error}</div>"
            self.table.value = _typed(**DIM_COLUMNS)
            self.corollary.object = ""
            self.de_note.object = ""
            return
        known = report.de is not None
        gap = report.ds - report.de if known else None
        badge = report.de_status if known else ("computing" if state.de_job is not None else "not computed")
        note = state.de_note
        self.de_note.object = f"<div class='effdim-corollary'>{note}</div>" if note and state.de_job is None else ""

        def stat(key, label, value, extra=""):
            exact = f" Exact value: {value:,}." if value is not None and abs(value) >= BIG else ""
            shown = "—" if value is None else _compact(value)
            return (f"<div class='effdim-stat' title='{explain.TOTAL_TOOLTIPS[key]}{exact}'><div "
                    f"class='effdim-stat-label'>{label} <span class='effdim-i'>i</span></div><div "
                    f"class='effdim-stat-value' data-stat='{key}'>{shown}</div>{extra}</div>")

        self.totals.object = (
            "<div class='effdim-stats'>"
            + stat("ds", "ds · standard", report.ds)
            + stat("de", "de · effective", report.de,
                   f"<div class='effdim-badge effdim-{badge.replace(' ', '-')}'>{badge}</div>")
            + stat("dc", "dc · complete", report.dc)
            + stat("gap", "ds − de", gap)
            + "</div>"
        )
        rows = [
            {"hidden": r.hidden, "LC model": r.lc, "ds": r.ds, "de": r.de, "dc": r.dc, "dp": r.dp, "db": r.db,
             "binding": r.binding, "deficit": r.deficit}
            for r in report.local
        ]
        self._hidden_rows = [r.hidden for r in report.local]
        frame = pd.DataFrame(rows, columns=self.COLUMNS).astype({"de": "Int64", "deficit": "Int64"})
        self._syncing = True
        try:
            self.table.param.update(value=frame, selection=[])
        finally:
            self._syncing = False
        if not known:
            self.corollary.object = ""
        elif len(report.local) > 1:
            total = report.deficit_sum
            terms = " + ".join(str(r.deficit) for r in report.local)
            holds = total == gap
            self.corollary.object = (
                f"<div class='effdim-corollary' title='Corollary 4.1: for a regular HLC model, ds - de is the sum "
                f"of the deficits of the local LC models.'><b>Corollary 4.1:</b> Σ deficits = {terms} = "
                f"<b>{total}</b> {'=' if holds else '≠'} ds − de = {gap}"
                + ("" if holds else " (Corollary 4.1 needs a regular model)") + "</div>"
            )
        else:
            self.corollary.object = ("<div class='effdim-corollary'>An LC model: its single row is the whole model "
                                     "(Table 1).</div>")
        self._update_notes()
        self.timing.object = f"<small class='effdim-timing'>computed in {1000 * state.update_seconds:.0f} ms</small>"
        self._sync_selection()

    def _update_notes(self, *_) -> None:
        state = self.state
        if not self.explain_card.collapsed and state.report is not None:
            self.totals_note.object = explain.totals_markdown(state.effective, state.report)

    async def _verify(self, _=None) -> None:
        await self.state.verify_direct()

    def _update_direct(self, *_) -> None:
        state, full = self.state, self.state.direct
        self.verify.disabled = state.direct_running
        if state.direct_running:
            self.direct_note.object = "<small>Computing the rank of the whole model's Jacobian…</small>"
            return
        if full is None:
            self.direct_note.object = ""
            return
        quick = state.report
        rank = full.de_direct if full.de_direct is not None else full.de
        same = quick is not None and quick.de is not None and rank == quick.de
        float_part = ""
        if full.float_rank is not None:
            gap = f", singular-value gap {full.singular_gap:.3g}" if full.singular_gap else ""
            float_part = f"; floating-point SVD rank {full.float_rank}{gap} (a second opinion, not a proof)"
        if quick is None or quick.de is None:
            verdict = "the Corollary 4.1 route has not computed de to compare"
        else:
            verdict = ("<b>agrees</b> with Corollary 4.1" if same
                       else f"<b style='color:#a4161a'>differs</b> from Corollary 4.1 ({quick.de})")
        self.direct_note.object = (
            f"<div class='effdim-corollary'><b>Direct route:</b> rank of the whole model's Jacobian "
            f"(Section 2.4) = <b>{rank}</b>, {full.de_status}{float_part}; {verdict}.</div>")

    def _row_selected(self, event) -> None:
        if self._syncing:
            return
        if event.new:
            i = event.new[0]
            if 0 <= i < len(self._hidden_rows):
                self.state.highlight = self._hidden_rows[i]
                return
        self.state.highlight = None

    def _sync_selection(self, *_) -> None:
        node = self.state.highlight
        report = self.state.report
        want = [self._hidden_rows.index(node)] if node in self._hidden_rows else []
        if self.table.selection != want:
            self._syncing = True
            try:
                self.table.selection = want
            finally:
                self._syncing = False
        if node is not None and report is not None:
            row = next(r for r in report.local if r.hidden == node)
            self.row_note.object = explain.local_markdown(self.state.effective, row)
            self.row_card.param.update(title=f"Row {node} explained", visible=True)
            self.row_hint.visible = False
        else:
            self.row_card.visible = False
            self.row_hint.visible = True

    def __panel__(self):
        return pn.Column(
            pn.Row(_heading("Dimensions", "Hover a number for its rule; open the notes below for the "
                                          "full derivation."), pn.layout.HSpacer(), self.timing,
                   sizing_mode="stretch_width"),
            self.totals,
            self.de_job,
            self.de_note,
            self.table,
            self.row_hint,
            self.corollary,
            pn.Row(self.verify, margin=0),
            self.direct_job,
            self.direct_note,
            self.row_card,
            self.explain_card,
            sizing_mode="stretch_width",
        )


# ====================================================================== data
class DataPanel(Viewer):
    """Upload a CSV or pick a bundled data set; the loader's messages inline."""

    def __init__(self, state: DataState, **params):
        super().__init__(**params)
        self.state = state
        limit_mb = max(1, state.max_bytes // 1_000_000)
        self.upload = pn.widgets.FileDropper(
            accepted_filetypes=[".csv", "text/csv", "text/plain"], max_file_size=f"{limit_mb}MB",
            multiple=False, sizing_mode="stretch_width", height=90, layout="compact",
        )
        self.upload.param.watch(self._uploaded, "value")
        self._last: dict = {}
        from effdim import datasets

        names = list(datasets.names())
        self.bundled = pn.widgets.Select(label="Bundled data set", options=names,
                                         value=names[0] if names else None, sizing_mode="stretch_width")
        self.load_bundled = pn.widgets.Button(label="Load data set", color="primary", sizing_mode="stretch_width")
        self.load_bundled.on_click(lambda _: state.load_bundled(self.bundled.value))
        self.columns = pn.widgets.Tabulator(_typed(**DATA_COLUMNS), show_index=False, disabled=True,
                                            selectable=False, sizing_mode="stretch_width",
                                            layout="fit_data_stretch", max_height=220, visible=False)
        self.message = _alert(state)
        self.load_job = JobLine(state, "load_job")
        state.param.watch(self._update, ["dataset"])

    def _uploaded(self, event) -> None:
        """Load each file that is new since the last event (the dropper's value keeps old files)."""
        current = dict(event.new or {})
        fresh = [(name, content) for name, content in current.items() if self._last.get(name) is not content]
        self._last = current
        for name, content in fresh:
            if isinstance(content, str):  # Panel decodes text/* uploads; the loader wants the bytes
                content = content.encode("utf-8")
            self.state.load_upload(name, content)

    def _update(self, *_) -> None:
        ds = self.state.dataset
        if ds is None:
            return
        self.columns.param.update(value=self.state.columns_frame(), visible=True)

    def __panel__(self):
        limit = f"{self.state.max_bytes / 1e6:.0f} MB"
        return pn.Column(
            _heading("Data", f"A CSV file with a header row; one column per observed variable, categorical values "
                             f"(at most {self.state.max_states} states each); an optional 'count' column of "
                             f"pattern counts; at most {limit}."),
            _html(f"<small>Upload a CSV file (at most {limit}) …</small>", margin=(0, 5)),
            self.upload,
            _html("<small>… or pick a bundled data set:</small>", margin=(0, 5)),
            self.bundled,
            self.load_bundled,
            self.load_job,
            self.message,
            self.columns,
            sizing_mode="stretch_width",
        )


# ==================================================================== scores
class ScoresPanel(Viewer):
    """Mapping, sweep and hill climb controls, progress, curves, table, CSV download."""

    def __init__(self, state: ScoresState, **params):
        super().__init__(**params)
        self.state = state
        self.mapping = pn.widgets.RadioButtonGroup(
            options={"LC model over all columns": "lc", "Edited model (leaves = columns)": "model"},
            value=state.mapping, sizing_mode="stretch_width", color="primary",
        )
        self.mapping.link(state, value="mapping")
        self.leaf_map = pn.widgets.Tabulator(_typed(**LEAF_COLUMNS),
                                             show_index=False, disabled=True, selectable=False,
                                             sizing_mode="stretch_width", layout="fit_data_stretch",
                                             max_height=200, visible=False)
        self.mismatch = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width",
                                      stylesheets=[ALERT_CSS])
        self.to_editor = pn.widgets.Button(label="Edit the LC model over these columns in the tree editor",
                                           sizing_mode="stretch_width")
        self.to_editor.on_click(lambda _: state.use_lc_model_in_editor())
        self.node = pn.widgets.Select(label="Hidden node to sweep", options=[], sizing_mode="stretch_width")
        self.node.param.watch(lambda e: setattr(state, "node", e.new), "value")
        self.card_min = pn.widgets.IntInput.from_param(state.param.card_min, label="|H| from", width=90)
        self.card_max = pn.widgets.IntInput.from_param(state.param.card_max, label="to (0 = largest regular)",
                                                       width=150, css_classes=["effdim-card-max"])
        self.restarts = pn.widgets.IntInput.from_param(state.param.restarts, label="EM restarts", width=90,
                                                       css_classes=["effdim-restarts"])
        self.seed = pn.widgets.IntInput.from_param(state.param.seed, label="Seed", width=90)
        self.run = pn.widgets.Button(label="▶ Sweep cardinality", color="primary", width=180)
        self.climb_score = pn.widgets.Select(label="Hill-climb score", options={SCORES[name].label: name for name in
                                                                                SHOWN_SCORES},
                                             value=state.climb_score, width=130)
        self.climb_score.link(state, value="climb_score")
        self.cs_prior = pn.widgets.Select(label="CS prior", options={label: key for key, label in CS_PRIORS.items()},
                                          value=state.cs_prior, width=150)
        self.cs_prior.link(state, value="cs_prior")
        self.climb = pn.widgets.Button(label="Hill climb", width=130, margin=(24, 5, 5, 5))
        self.cancel = pn.widgets.Button(label="■ Cancel", color="danger", width=100, disabled=True)
        self.run.on_click(self._run_sweep)
        self.climb.on_click(self._run_climb)
        self.cancel.on_click(lambda _: state.cancel())
        self.progress = pn.indicators.Progress(value=0, max=100, active=False, sizing_mode="stretch_width",
                                               height=18, margin=(10, 10))
        self.status = _html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-status"])
        self.message = _alert(state)
        self.plot = pn.pane.HoloViews(
            hv.DynamicMap(pn.bind(self._curves, results=state.param.results)),
            sizing_mode="stretch_width", height=330, css_classes=["effdim-curves"],
        )
        self.climb_plot = pn.pane.HoloViews(
            hv.DynamicMap(pn.bind(self._climb_plot, climb=state.param.climb)),
            sizing_mode="stretch_width", height=300, css_classes=["effdim-climb"],
        )
        # visibility is toggled on wrapping columns: toggling it on a rendered
        # HoloViews pane trips Panel 1.9 (stylesheets synced back as objects)
        self.plot_box = pn.Column(self.plot, sizing_mode="stretch_width", margin=0)
        self.climb_box = pn.Column(self.climb_plot, sizing_mode="stretch_width", margin=0, visible=False)
        self.table = pn.widgets.Tabulator(
            _typed(**RESULT_COLUMNS), show_index=False, disabled=True, selectable=False, sortable=False,
            sizing_mode="stretch_width", layout="fit_columns", css_classes=["effdim-results"], visible=False,
            header_align={c: "right" for c in RESULT_COLUMNS}, text_align={c: "right" for c in RESULT_COLUMNS},
            configuration={"columnDefaults": {"resizable": False}},
        )
        self.best = _html("", sizing_mode="stretch_width", margin=(0, 10), css_classes=["effdim-best"])
        self.download = pn.widgets.FileDownload(label="Download curves (CSV)", callback=self._csv,
                                                filename="effdim-scores.csv", embed=False, visible=False,
                                                width=220)
        self.path = pn.widgets.Tabulator(_typed(**PATH_COLUMNS), show_index=False, disabled=True, selectable=False,
                                         sizing_mode="stretch_width", layout="fit_data_stretch", visible=False)
        state.param.watch(self._update_inputs, ["mismatch", "leaf_map", "node", "mapping"])
        state.models.param.watch(self._update_inputs, ["effective"])
        state.data.param.watch(self._update_inputs, ["dataset"])
        state.param.watch(self._update_running, ["running", "progress", "status"])
        state.param.watch(self._update_results, ["results", "climb"])
        self._update_inputs()
        self._update_running()
        self._update_results()

    async def _run_sweep(self, _=None) -> None:
        await self.state.run_sweep()

    async def _run_climb(self, _=None) -> None:
        await self.state.run_climb()

    def _csv(self):
        return io.StringIO(self.state.results_csv())

    def _update_inputs(self, *_) -> None:
        state = self.state
        choices = state.hidden_choices()
        self.node.param.update(options=choices, value=state.node if state.node in choices else None,
                               visible=state.mapping == "model")
        self.climb_score.disabled = state.mapping != "model"
        self.to_editor.visible = state.mapping == "lc" and state.data.dataset is not None
        if state.leaf_map:
            frame = pd.DataFrame(state.leaf_map, columns=["leaf", "column", "leaf states", "column states"])
            frame["leaf states"] = frame["leaf states"].astype("Int64")
            self.leaf_map.param.update(value=frame, visible=True)
        else:
            self.leaf_map.visible = False
        self._update_running()
        text = "\n".join(f"- {m}" for m in state.mismatch)
        self.mismatch.param.update(object=f"**The model does not match the data:**\n{text}" if text else "",
                                   visible=bool(text))

    def _update_running(self, *_) -> None:
        state = self.state
        self.progress.param.update(value=state.progress, active=state.running and state.progress == 0,
                                   visible=state.running)
        self.status.object = state.status
        blocked = state.running or state.data.dataset is None or bool(state.mismatch)
        self.run.disabled = blocked
        self.climb.disabled = blocked or state.mapping != "model"
        self.cancel.disabled = not state.running

    def _update_results(self, *_) -> None:
        state = self.state
        if state.results:
            frame = state.results_frame()
            labels = {SCORES[name].key: SCORES[name].label for name in SHOWN_SCORES}
            keep = [c for c in ["card", "loglik", *labels, "ds", "de", "n"] if c in frame.columns]
            frame = frame[keep].rename(columns={"card": "|H|", **labels})
            floats = {c: {"type": "money", "decimal": ".", "thousand": ",", "precision": 2}
                      for c in ["loglik", *labels.values()] if c in frame.columns}
            self.table.param.update(value=frame, formatters=floats, visible=True)
            self.download.visible = True
            notes = state.pick_notes()
            cells = "".join(
                f"<span class='effdim-best-item' style='border-color:{SCORES[name].color}'>{SCORES[name].label} "
                f"<b>{card}</b>{_caveat_html(notes[name])}"
                f"</span>" for name, (card, _) in state.best().items())
            prior = CS_PRIORS.get(state.results[0].scores.cs_prior, state.results[0].scores.cs_prior)
            self.best.object = (f"<div class='effdim-best-row'>★ Best cardinality by score: {cells}</div>"
                                f"<small>CS and CS+ with the Dirichlet prior {html.escape(prior)}</small>")
        else:
            self.table.visible = False
            self.download.visible = False
            self.best.object = ""
        climb = state.climb
        if climb is not None:
            money = {"type": "money", "decimal": ".", "thousand": ",", "precision": 2}
            self.path.param.update(value=state.climb_frame(), formatters={"score": money, "loglik": money},
                                   visible=True)
            self.climb_box.visible = True
            self.plot_box.visible = False
        else:
            self.path.visible = False
            self.climb_box.visible = False
            self.plot_box.visible = True

    # One DynamicMap per plot, each returning the same layers every time (a
    # DynamicMap cannot switch element types); empty layers stand in for data
    # not there yet.
    def _curves(self, results):
        frame = self.state.results_frame() if results else None
        best = self.state.best() if results else {}
        layers = []
        for name in SHOWN_SCORES:
            criterion = SCORES[name]
            attr, label, color = criterion.key, criterion.label, criterion.color
            if frame is not None and attr in frame:
                data = pd.DataFrame({"card": frame["card"], "score": frame[attr]})
            else:
                data = pd.DataFrame({"card": pd.Series(dtype=int), "score": pd.Series(dtype=float)})
            star = pd.DataFrame([best[name]], columns=["card", "score"]) if name in best else data.iloc[:0]
            layers.append(hv.Curve(data, "card", "score", label=label).opts(
                color=color, line_width=2, line_dash=criterion.dash, framewise=True))
            layers.append(hv.Scatter(data, "card", "score", label=label).opts(color=color, size=6,
                                                                             tools=["hover"], framewise=True))
            layers.append(hv.Scatter(star, "card", "score", label=label).opts(
                color=color, marker="star", size=20, line_color="black", framewise=True))
        if frame is None:
            title = "Load data, then press ▶ Sweep cardinality: BIC, BIC+, CS, CS+ and AIC appear here"
        else:
            n = int(frame["n"].iloc[0]) if "n" in frame else 0
            title = f"Scores against the cardinality (N = {n:,}); ★ marks each score's best"
        ticks = {"xticks": sorted(int(c) for c in frame["card"])} if frame is not None and len(frame) <= 30 else {}
        return hv.Overlay(layers).opts(hv.opts.Overlay(
            title=title, responsive=True, min_height=280, show_grid=True, framewise=True, **ticks,
            fontsize={"title": "11pt", "labels": "11pt", "xticks": "10pt", "yticks": "10pt", "legend": "10pt"},
            xlabel="cardinality of the swept hidden node", ylabel="score (higher is better)",
            legend_position="right", toolbar="above", default_tools=["save", "reset"], padding=0.08))

    def _climb_plot(self, climb):
        frame = self.state.climb_frame() if climb is not None else _typed(**PATH_COLUMNS)
        key = climb.score if climb is not None else self.state.climb_score
        label, color = SCORES[key].label, SCORES[key].color
        vdims = ["score", "hidden cards"]
        curve = hv.Curve(frame, "step", "score", label=f"{label} along the path").opts(
            color=color, line_width=2, framewise=True)
        pts = hv.Scatter(frame, "step", vdims).opts(color=color, size=9, tools=["hover"], framewise=True)
        best = hv.Scatter(frame.tail(1), "step", vdims, label="best model").opts(
            color="#ffd23f", marker="star", size=22, line_color="black", framewise=True)
        title = f"Hill climb on {label}: each step raises one hidden cardinality by one"
        return (curve * pts * best).opts(hv.opts.Overlay(
            title=title, responsive=True, min_height=260, show_grid=True, framewise=True, xlabel="step",
            fontsize={"title": "11pt", "labels": "11pt", "xticks": "10pt", "yticks": "10pt", "legend": "10pt"},
            ylabel=f"{label} (higher is better)", legend_position="right", toolbar="above",
            default_tools=["save", "reset"], padding=0.08))

    def __panel__(self):
        return pn.Column(
            _heading("Scores", "BIC and AIC penalise with the standard dimension ds; BIC+ and CS+ with the "
                               "effective dimension de (Section 2.3). CS is the Cheeseman-Stutz score."),
            _html("<small>Which model is scored:</small>", margin=(0, 5)),
            self.mapping,
            self.to_editor,
            self.mismatch,
            self.leaf_map,
            pn.Row(self.node, self.card_min, self.card_max, self.restarts, self.seed, sizing_mode="stretch_width"),
            pn.Row(self.run, self.climb_score, self.climb, self.cs_prior, self.cancel, sizing_mode="stretch_width"),
            self.progress,
            self.status,
            self.message,
            self.plot_box,
            self.climb_box,
            self.best,
            self.download,
            self.table,
            self.path,
            sizing_mode="stretch_width",
        )

