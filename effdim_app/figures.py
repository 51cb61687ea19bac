"""The Data & scores tab's plots: Bokeh figures built once and updated in place, and the profile panels.

Each figure class below owns one figure and its data sources; ``update(...)`` only
replaces the sources' data, the axis factors and a few labels, which reaches
the browser as one small patch. The profiles are the report's SVG panels
(:func:`profile_html`, :mod:`effdim.charts`): one per item, legible with a
questionnaire's long labels, no Bokeh view at all. Rebuilding a HoloViews plot for every sweep
or every chosen fit (what this replaced) cost 0.2-0.6 s on the server's one
event loop, during which every other student's edit waited
(docs/robustness.md, "Opening a page"). No Panel import: the views wrap
``.figure`` in a Bokeh pane.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from bokeh.core.properties import value
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    FactorRange,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    LinearColorMapper,
    TapTool,
)
from bokeh.palettes import Reds256
from bokeh.plotting import figure

from effdim.charts import abbreviations, item_panels, share_bars
from effdim.profiles import profile_table
from effdim.scores import SCORES

__all__ = ["ScoreCurves", "ClimbCurve", "ResidualMap", "profile_html", "scale_fonts"]

FONT = "11pt"
#: The font sizes of a Bokeh model that projector mode scales: titles, axis labels, ticks, factor groups,
#: legends, colour bars and text glyphs (a BVR cell's value).
FONT_PROPERTIES = (
    "text_font_size",
    "axis_label_text_font_size",
    "major_label_text_font_size",
    "group_text_font_size",
    "subgroup_text_font_size",
    "label_text_font_size",
    "title_text_font_size",
)
#: The score curves' y axis on either scale, short enough to stand beside the plot in projector mode at 1024 px
#: (the scale switch above the curves says the rest: "log L − penalty", "as poLCA, Mplus").
SCORE_AXIS = "score (higher is better)"
DEVIANCE_AXIS = "−2LL + penalty (lower is better)"
#: Legend swatches and a figure's height grow with the type, by the square root of its scale (the plot keeps room).
SIZES = ("glyph_height", "glyph_width", "label_height")


def _figure(title: str, **kwargs):
    fig = figure(title=title, tools="save,reset", toolbar_location="above", **kwargs)
    fig.title.text_font_size = FONT
    for axis in (fig.xaxis, fig.yaxis):
        axis.axis_label_text_font_size = FONT
        axis.major_label_text_font_size = "10pt"
    return fig


def _legend_right(fig, items: list[LegendItem] | None = None) -> Legend:
    """A clickable legend (a click hides a curve) to the right of the plot: of ``items``, or the one
    a ``legend_field`` glyph made."""
    if items is None:
        legend = fig.legend[0]
        fig.center.remove(legend)
    else:
        legend = Legend(items=items)
    legend.label_text_font_size = "10pt"
    legend.click_policy = "hide"
    fig.add_layout(legend, "right")
    return legend


def scale_fonts(figure, scale: float, height: int | None = None) -> None:
    """Every font of ``figure`` (:data:`FONT_PROPERTIES`, of every model in it) at ``scale`` times its size
    when first scaled (projector mode: 1.5), and its legends' swatches and ``height`` (its height at scale
    1) by the square root of ``scale``. Called again with 1, everything is as built."""
    base = figure.__dict__.setdefault("_effdim_base_sizes", {})
    for model in figure.references():
        names = [n for n in (*FONT_PROPERTIES, *SIZES) if n in model.properties()]
        for name in names:
            key = (model.id, name)
            if key not in base:
                current = getattr(model, name)
                base[key] = current.get("value") if isinstance(current, dict) else current
            size = base[key]
            if isinstance(size, str) and size.endswith(("pt", "px")):
                setattr(model, name, f"{float(size[:-2]) * scale:g}{size[-2:]}")
            elif isinstance(size, (int, float)) and not isinstance(size, bool):
                setattr(model, name, round(size * scale**0.5))
    if height is not None:
        figure.height = round(height * scale**0.5)


class ScoreCurves:
    """Scores against the swept cardinality: a curve per score in ``names``, a star at each best.

    The de scores (BIC+, CS+) are drawn dashed and thinner over the wide solid
    ds ones, so both stay visible where de = ds and the curves coincide.
    """

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self.figure = _figure(
            "",
            height=330,
            sizing_mode="stretch_width",
            min_height=280,
            x_axis_label="cardinality of the swept hidden node",
            y_axis_label=SCORE_AXIS,
        )
        self.curves: dict[str, ColumnDataSource] = {}
        self.stars: dict[str, ColumnDataSource] = {}
        items, points = [], []
        for name in self.names:
            criterion = SCORES[name]
            curve = self.curves[name] = ColumnDataSource({"card": [], "score": []})
            star = self.stars[name] = ColumnDataSource({"card": [], "score": []})
            line = self.figure.line(
                "card",
                "score",
                source=curve,
                color=criterion.color,
                line_width=2 if criterion.uses_de else 5,
                line_dash=criterion.dash,
            )
            dots = self.figure.scatter("card", "score", source=curve, color=criterion.color, size=6)
            best = self.figure.scatter(
                "card", "score", source=star, color=criterion.color, marker="star", size=20, line_color="black"
            )
            points.append(dots)
            items.append(LegendItem(label=criterion.label, renderers=[line, dots, best]))
        self.figure.add_tools(HoverTool(renderers=points, tooltips=[("|H|", "@card"), ("score", "@score{0,0.00}")]))
        _legend_right(self.figure, items)

    def update(self, frame: pd.DataFrame, best: Mapping[str, tuple[int, float]], deviance: bool = False) -> None:
        """Show ``frame`` (a column ``card`` and one per score key) and each score's best ``(card, score)``, on
        the ``-2 log L + penalty`` scale (lower is better) with ``deviance``."""
        self.figure.yaxis.axis_label = DEVIANCE_AXIS if deviance else SCORE_AXIS
        for name in self.names:
            key = SCORES[name].key
            scores = frame[key] if key in frame else pd.Series(np.nan, index=frame.index)
            self.curves[name].data = {"card": frame["card"].to_numpy(), "score": scores.to_numpy(dtype=float)}
            self.stars[name].data = (
                {"card": [best[name][0]], "score": [best[name][1]]} if name in best else {"card": [], "score": []}
            )
        n = int(frame["n"].iloc[0]) if "n" in frame and len(frame) else 0
        self.figure.title.text = f"Scores against |H| (N = {n:,})"  # ★ each score's best: said below the plot
        cards = sorted(int(c) for c in frame["card"])
        if len(cards) <= 30:
            self.figure.xaxis.ticker = FixedTicker(ticks=cards)


class ClimbCurve:
    """The score of each step of a hill climb; a star on the best (last) model."""

    def __init__(self):
        self.figure = _figure("", height=300, sizing_mode="stretch_width", min_height=260, x_axis_label="step")
        self.path = ColumnDataSource({"step": [], "score": [], "hidden cards": []})
        self.last = ColumnDataSource({"step": [], "score": [], "hidden cards": []})
        self.line = self.figure.line("step", "score", source=self.path, line_width=2)
        self.dots = self.figure.scatter("step", "score", source=self.path, size=9)
        best = self.figure.scatter(
            "step", "score", source=self.last, marker="star", size=22, color="#ffd23f", line_color="black"
        )
        # labels as values: a bare string is read as a column of the data source ("Invalid field" in the legend)
        self.item = LegendItem(label=value(""), renderers=[self.line, self.dots])
        _legend_right(self.figure, [self.item, LegendItem(label=value("best model"), renderers=[best])])
        self.figure.add_tools(
            HoverTool(
                renderers=[self.dots],
                tooltips=[("step", "@step"), ("score", "@score{0,0.00}"), ("hidden cards", "@{hidden cards}")],
            )
        )

    def update(self, frame: pd.DataFrame, score: str) -> None:
        """Show the climb ``frame`` (columns ``step``, ``score``, ``hidden cards``) scored by ``score``."""
        criterion = SCORES[score]
        columns = {c: frame[c].tolist() for c in ("step", "score", "hidden cards")}
        self.path.data = columns
        self.last.data = {c: v[-1:] for c, v in columns.items()}
        for renderer in (self.line, self.dots):
            renderer.glyph.line_color = criterion.color
        self.dots.glyph.fill_color = criterion.color
        self.item.label = value(f"{criterion.label} along the path")
        self.figure.title.text = f"Hill climb on {criterion.label}"
        self.figure.xaxis.axis_label = "step (each raises one hidden cardinality by one)"
        self.figure.yaxis.axis_label = f"{criterion.label} (higher is better)"
        if len(frame) <= 30:
            self.figure.xaxis.ticker = FixedTicker(ticks=columns["step"])


#: The characters of an item's name that the residual map's axes show (the hover gives the whole name).
AXIS_CHARS = 14


class ResidualMap:
    """Bivariate residuals of every pair of items as a heat map; clicking a cell calls ``on_pair(a, b)``."""

    def __init__(self, on_pair: Callable[[str, str], None]):
        self.on_pair = on_pair
        self.figure = _figure(
            "Bivariate residuals", width=420, height=340, x_range=FactorRange(), y_range=FactorRange()
        )
        self.figure.xaxis.major_label_orientation = 0.8
        self.figure.grid.visible = False
        self.source = ColumnDataSource({"x": [], "y": [], "item": [], "with": [], "bvr": [], "value": [], "ink": []})
        self.colors = LinearColorMapper(palette=list(reversed(Reds256)), low=0, high=3)
        cells = self.figure.rect(
            "x",
            "y",
            1,
            1,
            source=self.source,
            line_color=None,
            fill_color={"field": "bvr", "transform": self.colors},
        )
        self.figure.text(
            "x",
            "y",
            text="value",
            source=self.source,
            text_color="ink",
            text_align="center",
            text_baseline="middle",
            text_font_size="9pt",
        )
        self.figure.add_layout(ColorBar(color_mapper=self.colors, width=10), "right")
        self.figure.add_tools(
            TapTool(renderers=[cells]),
            HoverTool(renderers=[cells], tooltips=[("pair", "@item, @with"), ("BVR", "@bvr{0.00}")]),
        )
        self.source.selected.on_change("indices", self._selected)

    def update(self, residuals: pd.DataFrame) -> None:
        """``residuals``: the square table of :meth:`effdim.FitResult.bivariate_residuals`. Its items
        are named on the axes as far as :data:`AXIS_CHARS` allows (:func:`effdim.charts.abbreviations`), in
        full in the hover."""
        names = [str(c) for c in residuals.columns]
        short = abbreviations(names, AXIS_CHARS)
        values = residuals.to_numpy(dtype=float)
        pairs = [(i, j, values[i, j]) for i in range(len(names)) for j in range(len(names)) if i != j]
        self.figure.x_range.factors = short
        self.figure.y_range.factors = short
        finite = [p[2] for p in pairs if np.isfinite(p[2])]
        self.colors.high = high = max([3.0, *finite])
        self.source.data = {
            "x": [short[i] for i, _, _ in pairs],
            "y": [short[j] for _, j, _ in pairs],
            "item": [names[i] for i, _, _ in pairs],
            "with": [names[j] for _, j, _ in pairs],
            "bvr": [p[2] for p in pairs],
            "value": [_cell_text(p[2]) for p in pairs],
            "ink": ["white" if p[2] > 0.6 * high else "#1b2631" for p in pairs],
        }

    def _selected(self, _attr, _old, new) -> None:
        if not new:
            return
        index = new[0]
        self.source.selected.indices = []  # forget the click: the next click on the same cell counts again
        self.on_pair(self.source.data["item"][index], self.source.data["with"][index])


def _cell_text(value: float) -> str:
    """A residual as written in its cell: two decimals, three significant digits from 100 on."""
    if not np.isfinite(value):
        return "n/a"
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.3g}"


#: The profile panels' styles: side by side, as many to a line as fit, bottoms aligned (their axes line up where a
#: title takes more lines than its neighbour's); everything in them scales with projector mode.
PROFILE_CSS = """
.effdim-panels { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 8px 16px; margin-top: 6px; }
.effdim-panels svg, .effdim-legend-bars svg { display: block; zoom: var(--effdim-font-scale, 1); }
.effdim-not-unique { color: #6b4e00; background: #fff4d6; border: 1px solid #f3d98b; border-radius: 5px;
  padding: 4px 10px; margin: 4px 0; }
"""


def profile_html(
    profiles: pd.DataFrame, shares: pd.DataFrame, node: str, titles: dict | None = None
) -> tuple[str, str]:
    """The profiles of ``node`` as the report draws them: its class shares as bars (whose colours are the
    profiles' legend), and a panel per item (:func:`effdim.charts.item_panels`), as two pieces of SVG
    markup, every text from the data escaped there.

    ``profiles`` are :meth:`effdim.FitResult.profiles`' rows, ``shares`` the rows (state, share) of
    ``node``; ``titles`` what each item asks (its variable label), the panels' titles."""
    classes = list(shares["state"])
    panels = "".join(item_panels(profile_table(profiles), classes, node, titles))
    return share_bars(node, classes, list(shares["share"])), f"<div class='effdim-panels'>{panels}</div>"
