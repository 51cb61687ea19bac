"""The Data & scores tab's plots as Bokeh figures built once and updated in place.

Each class below owns one figure and its data sources; ``update(...)`` only
replaces the sources' data, the axis factors and a few labels, which reaches
the browser as one small patch. Rebuilding a HoloViews plot for every sweep
or every chosen fit (what this replaced) cost 0.2-0.6 s on the server's one
event loop, during which every other student's edit waited
(docs/robustness.md, "Opening a page"). No Panel import: the views wrap
``.figure`` in a Bokeh pane.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from bokeh.models import (ColorBar, ColumnDataSource, FactorRange, FixedTicker, HoverTool, Legend, LegendItem,
                          LinearColorMapper, TapTool)
from bokeh.palettes import Reds256
from bokeh.plotting import figure

from effdim.scores import SCORES

__all__ = ["ScoreCurves", "ClimbCurve", "ProfileLines", "ShareBars", "ResidualMap", "CLASS_COLORS"]

#: Colours of a hidden node's states in the profile plot (state 1 first).
CLASS_COLORS = ["#1d4e89", "#e4572e", "#29a35a", "#8e44ad", "#f3a712", "#17becf", "#7f7f7f", "#bcbd22"]
FONT = "11pt"


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


class ScoreCurves:
    """Scores against the swept cardinality: a curve per score in ``names``, a star at each best.

    The de scores (BIC+, CS+) are drawn dashed and thinner over the wide solid
    ds ones, so both stay visible where de = ds and the curves coincide.
    """

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self.figure = _figure("", height=330, sizing_mode="stretch_width", min_height=280,
                              x_axis_label="cardinality of the swept hidden node",
                              y_axis_label="score (higher is better)")
        self.curves: dict[str, ColumnDataSource] = {}
        self.stars: dict[str, ColumnDataSource] = {}
        items, points = [], []
        for name in self.names:
            criterion = SCORES[name]
            curve = self.curves[name] = ColumnDataSource({"card": [], "score": []})
            star = self.stars[name] = ColumnDataSource({"card": [], "score": []})
            line = self.figure.line("card", "score", source=curve, color=criterion.color,
                                    line_width=2 if criterion.uses_de else 5, line_dash=criterion.dash)
            dots = self.figure.scatter("card", "score", source=curve, color=criterion.color, size=6)
            best = self.figure.scatter("card", "score", source=star, color=criterion.color, marker="star",
                                       size=20, line_color="black")
            points.append(dots)
            items.append(LegendItem(label=criterion.label, renderers=[line, dots, best]))
        self.figure.add_tools(HoverTool(renderers=points, tooltips=[("|H|", "@card"), ("score", "@score{0,0.00}")]))
        _legend_right(self.figure, items)

    def update(self, frame: pd.DataFrame, best: Mapping[str, tuple[int, float]]) -> None:
        """Show ``frame`` (a column ``card`` and one per score key) and each score's best ``(card, score)``."""
        for name in self.names:
            key = SCORES[name].key
            scores = frame[key] if key in frame else pd.Series(np.nan, index=frame.index)
            self.curves[name].data = {"card": frame["card"].to_numpy(), "score": scores.to_numpy(dtype=float)}
            self.stars[name].data = ({"card": [best[name][0]], "score": [best[name][1]]} if name in best
                                     else {"card": [], "score": []})
        n = int(frame["n"].iloc[0]) if "n" in frame and len(frame) else 0
        self.figure.title.text = f"Scores against the cardinality (N = {n:,}); ★ marks each score's best"
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
        best = self.figure.scatter("step", "score", source=self.last, marker="star", size=22, color="#ffd23f",
                                   line_color="black")
        self.item = LegendItem(label="", renderers=[self.line, self.dots])
        _legend_right(self.figure, [self.item, LegendItem(label="best model", renderers=[best])])
        self.figure.add_tools(HoverTool(renderers=[self.dots], tooltips=[
            ("step", "@step"), ("score", "@score{0,0.00}"), ("hidden cards", "@{hidden cards}")]))

    def update(self, frame: pd.DataFrame, score: str) -> None:
        """Show the climb ``frame`` (columns ``step``, ``score``, ``hidden cards``) scored by ``score``."""
        criterion = SCORES[score]
        columns = {c: frame[c].tolist() for c in ("step", "score", "hidden cards")}
        self.path.data = columns
        self.last.data = {c: v[-1:] for c, v in columns.items()}
        for renderer in (self.line, self.dots):
            renderer.glyph.line_color = criterion.color
        self.dots.glyph.fill_color = criterion.color
        self.item.label = f"{criterion.label} along the path"
        self.figure.title.text = f"Hill climb on {criterion.label}: each step raises one hidden cardinality by one"
        self.figure.yaxis.axis_label = f"{criterion.label} (higher is better)"
        if len(frame) <= 30:
            self.figure.xaxis.ticker = FixedTicker(ticks=columns["step"])


class ProfileLines:
    """P(item = category | node = state) for every state of one hidden node (one line per state)."""

    def __init__(self):
        self.figure = _figure("", height=330, sizing_mode="stretch_width", min_height=300,
                              x_range=FactorRange(), y_range=(0, 1.02), x_axis_label="item: category",
                              y_axis_label="probability")
        self.figure.xaxis.major_label_orientation = 0.8
        self.lines = ColumnDataSource({"xs": [], "ys": [], "color": [], "label": []})
        self.points = ColumnDataSource({"x": [], "probability": [], "color": [], "label": []})
        self.figure.multi_line("xs", "ys", source=self.lines, color="color", line_width=2, legend_field="label")
        dots = self.figure.scatter("x", "probability", source=self.points, color="color", size=7)
        self.figure.add_tools(HoverTool(renderers=[dots], tooltips=[("", "@label"), ("item: category", "@x"),
                                                                    ("probability", "@probability{0.000}")]))
        _legend_right(self.figure)

    def update(self, profiles: pd.DataFrame, shares: Sequence[float], node: str, model: str) -> None:
        """``profiles``: rows (item, category, class, probability) as :meth:`effdim.search.FitResult.profiles`."""
        x = profiles["item"].astype(str) + ": " + profiles["category"].astype(str)
        lines = {"xs": [], "ys": [], "color": [], "label": []}
        label_of, color_of = {}, {}
        for i, (cls, rows) in enumerate(profiles.assign(x=x).groupby("class", sort=True)):
            label_of[cls] = f"{node} = {cls} ({shares[int(cls) - 1]:.0%})"
            color_of[cls] = CLASS_COLORS[i % len(CLASS_COLORS)]
            lines["xs"].append(rows["x"].tolist())
            lines["ys"].append(rows["probability"].tolist())
            lines["color"].append(color_of[cls])
            lines["label"].append(label_of[cls])
        self.figure.x_range.factors = list(dict.fromkeys(x))
        self.lines.data = lines
        self.points.data = {"x": x.tolist(), "probability": profiles["probability"].tolist(),
                            "color": [color_of[c] for c in profiles["class"]],
                            "label": [label_of[c] for c in profiles["class"]]}
        self.figure.title.text = f"Profiles: P(item = category | {node}) for {model}"


class ShareBars:
    """The share of each state of one hidden node (largest first)."""

    def __init__(self):
        self.figure = _figure("", width=300, height=260, x_range=FactorRange(), y_range=(0, 1),
                              y_axis_label="share")
        self.figure.toolbar.autohide = True
        self.source = ColumnDataSource({"state": [], "share": []})
        bars = self.figure.vbar("state", top="share", width=0.8, source=self.source, color="#1d4e89")
        self.figure.add_tools(HoverTool(renderers=[bars], tooltips=[("state", "@state"), ("share", "@share{0.0%}")]))

    def update(self, states: Sequence[str], shares: Sequence[float], node: str) -> None:
        states = [str(s) for s in states]
        self.figure.x_range.factors = states
        self.source.data = {"state": states, "share": list(shares)}
        self.figure.title.text = f"Shares of {node} (largest first)"
        self.figure.xaxis.axis_label = f"state of {node}"


class ResidualMap:
    """Bivariate residuals of every pair of items as a heat map; clicking a cell calls ``on_pair(a, b)``."""

    def __init__(self, on_pair: Callable[[str, str], None]):
        self.on_pair = on_pair
        self.figure = _figure("Bivariate residuals: click a pair", width=420, height=340, x_range=FactorRange(),
                              y_range=FactorRange())
        self.figure.xaxis.major_label_orientation = 0.8
        self.figure.grid.visible = False
        self.source = ColumnDataSource({"item": [], "with": [], "bvr": []})
        self.colors = LinearColorMapper(palette=list(reversed(Reds256)), low=0, high=3)
        cells = self.figure.rect("item", "with", 1, 1, source=self.source, line_color=None,
                                 fill_color={"field": "bvr", "transform": self.colors})
        self.figure.add_layout(ColorBar(color_mapper=self.colors, width=10), "right")
        self.figure.add_tools(TapTool(renderers=[cells]),
                              HoverTool(renderers=[cells], tooltips=[("pair", "@item, @with"), ("BVR", "@bvr{0.00}")]))
        self.source.selected.on_change("indices", self._selected)

    def update(self, residuals: pd.DataFrame) -> None:
        """``residuals``: the square table of :meth:`effdim.search.FitResult.bivariate_residuals`."""
        names = [str(c) for c in residuals.columns]
        values = residuals.to_numpy(dtype=float)
        pairs = [(a, b, values[i, j]) for i, a in enumerate(names) for j, b in enumerate(names) if i != j]
        self.figure.x_range.factors = names
        self.figure.y_range.factors = names
        self.source.data = {"item": [p[0] for p in pairs], "with": [p[1] for p in pairs],
                            "bvr": [p[2] for p in pairs]}
        finite = [p[2] for p in pairs if np.isfinite(p[2])]
        self.colors.high = max([3.0, *finite])

    def _selected(self, _attr, _old, new) -> None:
        if not new:
            return
        index = new[0]
        self.source.selected.indices = []  # forget the click: the next click on the same cell counts again
        self.on_pair(self.source.data["item"][index], self.source.data["with"][index])
