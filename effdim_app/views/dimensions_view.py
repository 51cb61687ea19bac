"""The "Model & dimensions" tab's numbers: :class:`DimensionsPanel`, the totals, the per-hidden-node table and
where each number comes from.

The tab's controls are :mod:`.model_tab`, its tree :mod:`.tree_view`.
"""

from __future__ import annotations

import io

import pandas as pd
import panel as pn
from panel.viewable import Viewer

from .. import explain
from ..state import ModelState
from ..style import TABLE_CSS
from .first_sight import FirstSight
from .widgets import BIG, SMALL_TABLE, JobLine, compact, heading, html, in_one_message, plain, typed

__all__ = ["DimensionsPanel"]

NUMERIC_DIM_COLUMNS = ("ds", "de", "dc", "dp", "db", "deficit")
#: The table's columns: every number goes to the browser as its text (:func:`_cell`), since the browser's numbers
#: are doubles: dc of 60 binary leaves, 2^60 - 1, arrived one too high, and 3^198 - 1 as "2.95e+94".
DIM_COLUMNS = dict.fromkeys(["hidden", "LC model", "ds", "de", "dc", "dp", "db", "binding", "deficit"], "object")


def _cell(value) -> str:
    """A dimension as the table shows it: 3,572 below :data:`~.widgets.BIG`, else as the stat boxes show it
    (2.95·10⁹⁴; the exact value is in the table's CSV), "—" while unknown."""
    if value is None or value is pd.NA:
        return "—"
    return f"{value:,}" if abs(value) < BIG else compact(value)


class DimensionsPanel(Viewer):
    """Totals, the per-hidden-node table (row click highlights), and the rules behind each number; all but the
    totals built when the user first scrolls to them (:meth:`build_details`)."""

    #: Pixel widths of the text columns at font scale 1 (the numbers share the rest).
    WIDTHS = {"hidden": 75, "LC model": 120, "binding": 75}

    def __init__(self, state: ModelState, **params):
        super().__init__(**params)
        self.state = state
        self.totals = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-totals"])
        # where the totals are: under the Dimensions heading, or in projector mode in `top`, which
        # the app puts above the tree (on the first screen at 1366x768, with the tree)
        self._home = pn.Column(self.totals, margin=0, sizing_mode="stretch_width")
        self.top = pn.Column(margin=0, sizing_mode="stretch_width")
        self._scale = 1.0
        # Below the totals, under the tree, the section's other parts (the table, its notes, the buttons) are
        # below the first screen: they are built when the user first scrolls to them (first_sight.py), not
        # with the page, which a class opening the page at once pays for every student (docs/robustness.md,
        # "A class arriving together"). Until then the section is the totals and the mark.
        self.table: pn.widgets.Tabulator | None = None
        self.row_note: pn.pane.Markdown | None = None
        self.row_card: pn.Card | None = None
        self._hidden_rows: list[str] = []
        self._syncing = False
        self._details_built = False
        self.sight = FirstSight.then(self.build_details)
        self._section = pn.Column(self._home, self.sight, sizing_mode="stretch_width")
        state.param.watch(self._update, ["report", "report_error", "effective", "de_note", "de_job"])
        state.param.watch(self._update_direct, ["direct", "direct_running"])
        state.param.watch(self._sync_selection, ["highlight"])
        self._update()

    @property
    def details_built(self) -> bool:
        """Whether the parts below the totals exist (:meth:`build_details`)."""
        return self._details_built

    def build_details(self) -> None:
        """Build the section below the totals (once; the user has scrolled to it): the table, where each
        number comes from, the whole-tree check, the CSV, the job lines."""
        if self.details_built:
            return
        self.table = pn.widgets.Tabulator(
            typed(**DIM_COLUMNS),
            show_index=False,
            disabled=True,
            selectable=1,
            sortable=False,
            sizing_mode="stretch_width",
            header_tooltips=explain.COLUMN_TOOLTIPS,
            text_align=dict.fromkeys(NUMERIC_DIM_COLUMNS, "right"),
            header_align=dict.fromkeys(NUMERIC_DIM_COLUMNS, "right"),
            # no resize handles at cell edges: they swallow row clicks. (Cell tooltips were tried and
            # stuck on screen after a row re-render; the row note spells out the full LC model.)
            configuration={"columnDefaults": {"resizable": False}, **SMALL_TABLE},
            css_classes=["effdim-dims"],
            height=None,
            min_height=80,
            stylesheets=[TABLE_CSS],
            **self._table_layout(),
        )
        self.corollary = html("", sizing_mode="stretch_width", margin=(0, 5))
        self.totals_note = pn.pane.Markdown("", sizing_mode="stretch_width")
        # The notes are written only while the card is open: a collapsed Card
        # hides its children from the browser side, so updating a hidden child
        # made browser and server toggle its visibility back and forth after
        # every edit, each toggle re-laying out the page (hundreds of ms).
        self.explain_card = pn.Card(
            self.totals_note,
            title="Where do these numbers come from?",
            collapsed=True,
            sizing_mode="stretch_width",
            margin=(5, 5),
        )
        self.explain_card.param.watch(self._update_notes, "collapsed")
        # the selected row's card is made when a row is first selected (most pages never select one):
        # until then its place in the layout is an empty column (docs/robustness.md, "Opening a page")
        self._row_place = pn.Column(margin=0, sizing_mode="stretch_width")
        self.row_hint = html(
            "<small><i>Click a row to highlight its hidden node and neighbours in the tree "
            "and to see where each of its numbers comes from.</i></small>",
            margin=(0, 10),
            css_classes=["effdim-row-hint"],
        )
        self.timing = html("", margin=(0, 5))
        self.verify = pn.widgets.Button(
            label="Check de by the whole tree's Jacobian rank", width=320, css_classes=["effdim-verify"]
        )
        self.verify.on_click(self._verify)
        self.download = pn.widgets.FileDownload(
            label="Download this table (CSV)",
            filename="effdim-dimensions.csv",
            embed=False,
            width=230,
            callback=lambda: io.StringIO(self._frame().to_csv(index=False)),
            css_classes=["effdim-dims-csv"],
        )
        self.direct_note = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-direct"])
        self.de_note = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-de-note"])
        self.de_job = JobLine(self.state, "de_job")
        self.direct_job = JobLine(self.state, "direct_job")
        self.table.param.watch(in_one_message(self._row_selected), "selection")
        self._section.objects = [
            pn.Row(
                heading("Dimensions", "Hover a number for its rule; open the notes below for the full derivation."),
                pn.layout.HSpacer(),
                self.timing,
                sizing_mode="stretch_width",
            ),
            self._home,
            self.de_job,
            self.de_note,
            self.table,
            self.row_hint,
            self.corollary,
            pn.Row(self.verify, self.download, margin=0),
            self.direct_job,
            self.direct_note,
            self._row_place,
            self.explain_card,
        ]
        self._details_built = True
        self._update()
        self._update_direct()

    def set_font_scale(self, scale: float) -> None:
        """Projector mode (``scale > 1``; the stylesheet scales the type): the totals go to :attr:`top`,
        and every column is as wide as its content, so large type is never cut to "…" (fixed widths
        were, at 1024 px and at 150 % zoom)."""
        self._scale = scale
        shown, emptied = (self.top, self._home) if scale > 1 else (self._home, self.top)
        emptied.objects = []
        shown.objects = [self.totals]
        if self.table is not None:
            self.table.param.update(**self._table_layout())

    def _table_layout(self) -> dict:
        """The table's column layout at the current font scale (see :meth:`set_font_scale`)."""
        if self._scale > 1:
            return {"layout": "fit_data_fill", "widths": {}}
        return {"layout": "fit_columns", "widths": dict(self.WIDTHS)}

    def _update(self, *_) -> None:
        self._update_totals()
        if self.details_built:
            self._update_details()

    def _update_totals(self) -> None:
        state = self.state
        report = state.report
        if report is None:
            self.totals.object = f"<div class='effdim-error'>No dimensions: {plain(state.report_error)}</div>"
            return
        known = report.de is not None
        gap = report.ds - report.de if known else None
        badge = report.de_status if known else ("computing" if state.de_job is not None else "not computed")

        def stat(key, label, value, extra=""):
            exact = f" Exact value: {value:,}." if value is not None and abs(value) >= BIG else ""
            shown = "—" if value is None else compact(value)
            # the "i" stays with the label's last word: a narrow card (projector mode at 150 % zoom) wrapped it
            # onto a line of its own
            head, _, last = label.rpartition(" ")
            return (
                f"<div class='effdim-stat' title='{explain.TOTAL_TOOLTIPS[key]}{exact}'><div "
                f"class='effdim-stat-label'>{head} <span class='effdim-nowrap'>{last}&nbsp;"
                "<span class='effdim-i'>i</span></span></div><div "
                f"class='effdim-stat-value' data-stat='{key}'>{shown}</div>{extra}</div>"
            )

        self.totals.object = (
            "<div class='effdim-stats'>"
            + (
                stat(
                    "ds",
                    "ds · regular equivalent",
                    report.ds,
                    f"<div class='effdim-drawn' data-stat='drawn-ds'>as drawn: {compact(state.drawn_ds)}</div>",
                )
                if state.effective is not state.model
                else stat("ds", "ds · standard", report.ds)
            )
            + stat(
                "de",
                "de · effective",
                report.de,
                f"<div class='effdim-badge effdim-{badge.replace(' ', '-')}'>{badge}</div>",
            )
            + stat("dc", "dc · complete", report.dc)
            + stat("gap", "ds − de", gap)
            + "</div>"
        )

    def _update_details(self) -> None:
        state = self.state
        report = state.report
        if report is None:
            self.table.value = typed(**DIM_COLUMNS)
            self.corollary.object = ""
            self.de_note.object = ""
            return
        known = report.de is not None
        gap = report.ds - report.de if known else None
        note = state.de_note
        shown = note and state.de_job is None
        self.de_note.object = f"<div class='effdim-corollary'>{plain(note)}</div>" if shown else ""
        self._hidden_rows = [r.hidden for r in report.local]
        frame = self._frame()
        for column in NUMERIC_DIM_COLUMNS:
            frame[column] = [_cell(value) for value in frame[column]]
        self._syncing = True
        try:
            self.table.param.update(value=frame.astype(DIM_COLUMNS), selection=[])
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
                + ("" if holds else " (Corollary 4.1 needs a regular model)")
                + "</div>"
            )
        else:
            self.corollary.object = (
                "<div class='effdim-corollary'>An LC model: its single row is the whole model (Table 1).</div>"
            )
        self._update_notes()
        self.timing.object = f"<small class='effdim-timing'>computed in {1000 * state.update_seconds:.0f} ms</small>"
        self._sync_selection()

    def _frame(self) -> pd.DataFrame:
        """One row per hidden node of the report, exact: the CSV, and the table as :func:`_cell` writes it."""
        report = self.state.report
        rows = (
            []
            if report is None
            else [
                {
                    "hidden": r.hidden,
                    "LC model": r.lc,
                    "ds": r.ds,
                    "de": r.de,
                    "dc": r.dc,
                    "dp": r.dp,
                    "db": r.db,
                    "binding": r.binding,
                    "deficit": r.deficit,
                }
                for r in report.local
            ]
        )
        return pd.DataFrame(rows, columns=list(DIM_COLUMNS)).astype({"de": "Int64", "deficit": "Int64"})

    def _update_notes(self, *_) -> None:
        state = self.state
        report = state.direct or state.report  # the whole-tree rank's report once asked for: it says that route
        if self.details_built and not self.explain_card.collapsed and report is not None:
            self.totals_note.object = explain.totals_markdown(state.effective, report)

    async def _verify(self, _=None) -> None:
        await self.state.verify_direct()

    def _update_direct(self, *_) -> None:
        if not self.details_built:
            return
        self._update_notes()
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
            verdict = (
                "<b>agrees</b> with Corollary 4.1"
                if same
                else f"<b style='color:#a4161a'>differs</b> from Corollary 4.1 ({quick.de})"
            )
        self.direct_note.object = (
            f"<div class='effdim-corollary'><b>Direct route:</b> rank of the whole model's Jacobian "
            f"(Section 2.4) = <b>{rank}</b>, {full.de_status}{float_part}; {verdict}.</div>"
        )

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
        if not self.details_built:
            return
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
            self._row_explained().object = explain.local_markdown(self.state.effective, row)
            self.row_card.param.update(title=f"Row {node} explained", visible=True)
            self.row_hint.visible = False
        else:
            if self.row_card is not None:
                self.row_card.visible = False
            self.row_hint.visible = True

    def _row_explained(self) -> pn.pane.Markdown:
        """The selected row's note, in its card (made the first time a row is selected)."""
        if self.row_note is None:
            self.row_note = pn.pane.Markdown(sizing_mode="stretch_width")
            self.row_card = pn.Card(
                self.row_note, collapsed=False, sizing_mode="stretch_width", margin=(5, 5), visible=False
            )
            self._row_place.objects = [self.row_card]
        return self.row_note

    def __panel__(self):
        return self._section
