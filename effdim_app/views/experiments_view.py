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
    "from a shell. The full write-up, with every table and the comparison with the paper, is "
    "`docs/experiments.md` in the effdim repository. Each table names the prior of its CS and CS+ "
    "columns (BDeu with equivalent sample size 1 by default; the write-up also shows Section 5 under "
    "K2, where CS+ picks the largest model)."
)
#: Units and abbreviations used by every figure and table below.
HOW_TO_READ = """**How to read these.** Data are sampled from a known model; each score (BIC, BIC+, CS, CS+) picks a
model for the data, and the figures say how good that pick is.

* **KL**: the Kullback-Leibler divergence from the generating distribution to the picked model's, in
  **1e-3 bits** (thousandths of a bit; 2.5 means 0.0025 bits). Lower is better; log scale.
* **SS** or **sample size**: the number of rows sampled (1k = 1,000).
* **|X|**: the number of states the score gave the hidden variable.
* **BIC, CS**: penalised with the standard dimension ds; **BIC+, CS+**: with the effective dimension
  de (the paper's correction). Points are means over replicates, bars one standard error.
"""
LC_TAKEAWAY = ("*Takeaway:* BIC and CS behave alike; the plus scores pick a larger |X| (BIC+ > CS+ > BIC, CS) "
               "and fit better (lower KL) as the sample grows, the paper's Figures 4 and 5.")
HLC_TAKEAWAY = ("*Takeaway:* from 9k rows on, BIC+ and CS+ fit significantly better than BIC and CS (KL about "
                "0.6-0.85 of theirs); at 1k BIC+ fits worst, as the paper reports.")


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
        # the two panels as two panes side by side: as one HoloViews layout (a Bokeh grid) their plot
        # frames were laid out 0 px high in the dashboard, leaving bare legends
        self.lc_panels = pn.Row(sizing_mode="stretch_width")
        self._show_generator(self.generator.value)
        self.generator.param.watch(lambda event: self._show_generator(event.new), "value")
        self._layout = pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.pane.Markdown(HOW_TO_READ, sizing_mode="stretch_width", css_classes=["effdim-how-to-read"]),
            pn.pane.Markdown("### Section 5: LC models over four binary variables"),
            pn.pane.Markdown(LC_TAKEAWAY, sizing_mode="stretch_width"),
            self.generator,
            self.lc_panels,
            pn.pane.Markdown("### Section 6: HLC 5,3,3:2,2,2,2,2, hill climbing per score"),
            pn.pane.Markdown(HLC_TAKEAWAY, sizing_mode="stretch_width"),
            pn.pane.HoloViews(table2_figure(self.results.hlc_table2)),
            pn.pane.Markdown(self.results.hlc_markdown, sizing_mode="stretch_width",
                             css_classes=["effdim-experiments-table"]),
            pn.layout.Card(pn.pane.Markdown(self.results.lc_markdown, sizing_mode="stretch_width"),
                           title="Section 5 tables", collapsed=True, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )

    def _show_generator(self, label: str) -> None:
        self.lc_panels.objects = [pn.pane.HoloViews(panel) for panel in
                                  lc_summary_figure(self.results.lc_summary, label)]

    def __panel__(self):
        return self._layout
