"""The Experiments tab: the committed results of the paper's Sections 5 and 6.

Reads the summaries shipped with effdim (:mod:`effdim.experiments.committed`)
and draws them with the same plot functions as ``effdim experiment``; no
computation happens here.
"""

from __future__ import annotations

import panel as pn
from panel.viewable import Viewer

from effdim.experiments.committed import RESULTS_DIR, load_committed
from effdim.experiments.plots import lc_summary_figure, table2_figure

__all__ = ["ExperimentsPanel"]

INTRO = (
    "Results of `effdim experiment lc` (Section 5, Figures 4-5) and `effdim experiment hlc` "
    "(Section 6, Table 2), computed with this engine and shipped with it. Rerun or extend them "
    "from a shell; `docs/experiments.md` compares them with the paper. Each table names the prior of its "
    "CS and CS+ columns (BDeu with equivalent sample size 1 by default; `docs/experiments.md` also "
    "shows Section 5 under K2, where CS+ picks the largest model)."
)


class ExperimentsPanel(Viewer):
    """Section 5 curves for a chosen generating model, and Table 2 with its plot."""

    def __init__(self, directory=RESULTS_DIR, **params):
        super().__init__(**params)
        try:
            self.results = load_committed(directory)
        except (OSError, ValueError) as err:
            self.results = None
            self._layout = pn.pane.Alert(f"Experiment results are not available: {err}", alert_type="warning")
            return
        labels = list(dict.fromkeys(self.results.lc_summary["label"]))
        self.generator = pn.widgets.Select(
            label="Generating LC model (Section 5)", options=labels,
            value="8:2,2,2,2" if "8:2,2,2,2" in labels else labels[-1], width=320,
        )
        lc_plot = pn.pane.HoloViews(pn.bind(lc_summary_figure, self.results.lc_summary, self.generator),
                                    sizing_mode="stretch_width")
        self._layout = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.pane.Markdown("### Section 5: LC models over four binary variables"),
            self.generator,
            lc_plot,
            pn.pane.Markdown("### Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score"),
            pn.pane.HoloViews(table2_figure(self.results.hlc_table2)),
            pn.pane.Markdown(self.results.hlc_markdown, sizing_mode="stretch_width",
                             css_classes=["effdim-experiments-table"]),
            pn.layout.Card(pn.pane.Markdown(self.results.lc_markdown, sizing_mode="stretch_width"),
                           title="Section 5 tables", collapsed=True, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout
