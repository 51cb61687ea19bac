"""The "Class enumeration" card under the sweep: the table an LCA paper prints, its BLRT, its exports.

Displays :class:`effdim_app.state.EnumerationState`: the table as the report
draws it (:func:`effdim.report.enumeration_html`, each header explained on
hover, the picks and notes under it), the number of bootstrap replicates, the button that
runs the bootstrap LRT on the job workers, its progress and Cancel, and the
CSV, Markdown and LaTeX downloads. Hidden until a sweep has finished.
"""

from __future__ import annotations

import html as _html
import io

import panel as pn
from panel.viewable import Viewer

from effdim.report import enumeration_html

from ..state import EnumerationState
from ..style import BUTTON_CSS, HTML_CSS, more_right_css
from .widgets import in_one_message, message

__all__ = ["EnumerationView"]

#: The report's classes that :func:`effdim.report.enumeration_html` writes, in the dashboard's type (the pane's
#: own stylesheet: it reaches only the pane's markup): numbers right-aligned in tabular figures.
TABLE_CSS = (
    more_right_css(".scroll")
    + """
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9em; }
th, td { padding: 2px 8px; border-bottom: 1px solid #d5dde8; white-space: nowrap; }
th { background: #f3f6f9; font-weight: 600; }
td.num, th.num { text-align: right; }
th abbr { text-decoration: none; cursor: help; }
p { margin: 4px 0; }
.note { color: #4a5a6a; font-size: 0.9em; }
.warn { color: #8a5200; font-size: 0.9em; }
"""
)
EXPLAIN = (
    "The sweep as an LCA paper tables it: criteria on the −2 log L + penalty scale (lower is better), the "
    "singular BIC (sBIC, and sBIC+ with the effective dimension), the classification entropy, the smallest class, "
    "the tests of k − 1 against k classes and the EM starts that reached the best log-likelihood."
)


class EnumerationView(Viewer):
    """The class-enumeration table with its bootstrap LRT controls and downloads."""

    def __init__(self, state: EnumerationState, **params):
        super().__init__(**params)
        self.state = state
        self.B = pn.widgets.IntInput.from_param(
            state.param.B, name="Bootstrap replicates B", width=170, css_classes=["effdim-blrt-b"]
        )
        self.run = pn.widgets.Button(
            label="Run bootstrap LRT",
            color="primary",
            width=170,
            margin=(24, 5, 5, 5),
            css_classes=["effdim-blrt-run"],
            description="The bootstrap likelihood-ratio test of every k against k − 1, in parallel on the "
            "server's workers",
        )
        self.run.on_click(in_one_message(lambda _: state.run_blrt()))
        self.cancel = pn.widgets.Button(
            label="■ Cancel",
            color="danger",
            width=100,
            margin=(24, 5, 5, 5),
            stylesheets=[BUTTON_CSS],
            css_classes=["effdim-blrt-cancel"],
        )
        self.cancel.on_click(in_one_message(lambda _: state.cancel()))
        self.progress = pn.indicators.Progress(value=0, max=100, sizing_mode="stretch_width", height=14, margin=(5, 10))
        self.status = pn.pane.HTML(
            "", stylesheets=[HTML_CSS], sizing_mode="stretch_width", css_classes=["effdim-blrt-status"]
        )
        self.table = pn.pane.HTML(
            "", sizing_mode="stretch_width", stylesheets=[HTML_CSS, TABLE_CSS], css_classes=["effdim-enumeration"]
        )
        self.downloads = pn.Row(
            *(
                pn.widgets.FileDownload(
                    label=label,
                    callback=lambda kind=kind: io.StringIO(state.export(kind)),
                    filename=f"effdim-class-enumeration.{kind}",
                    embed=False,
                    width=150,
                    css_classes=[f"effdim-enum-{kind}"],
                )
                for kind, label in (("csv", "Table (CSV)"), ("md", "Markdown"), ("tex", "LaTeX"))
            )
        )
        state.param.watch(self._update, ["table", "running", "progress", "status"])
        self._update()

    def _update(self, *_) -> None:
        state = self.state
        self.table.object = "" if state.table is None else enumeration_html(state.table)
        self.progress.param.update(value=state.progress, visible=state.running)
        self.status.object = f"<small>{_html.escape(state.status)}</small>" if state.status else ""
        self.run.disabled = state.running or state.table is None
        self.cancel.visible = state.running
        self.downloads.visible = state.table is not None

    def __panel__(self):
        return pn.Column(
            pn.pane.HTML("<div class='effdim-h'>Class enumeration</div>", stylesheets=[HTML_CSS], margin=(10, 5, 0, 5)),
            pn.pane.HTML(f"<p class='effdim-note'>{EXPLAIN}</p>", stylesheets=[HTML_CSS], sizing_mode="stretch_width"),
            pn.FlexBox(self.B, self.run, self.cancel, flex_wrap="wrap", align_items="flex-end"),
            self.progress,
            self.status,
            message(self.state, keep_height=False),
            self.table,
            self.downloads,
            sizing_mode="stretch_width",
            css_classes=["effdim-enumeration-card"],
        )
