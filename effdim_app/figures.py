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

from effdim.scores import SCORES

__all__ = ["ScoreCurves", "ClimbCurve", "ProfileBars", "ShareBars", "ResidualMap", "CLASS_COLORS"]

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
        self.figure = _figure(
            "",
            height=330,
            sizing_mode="stretch_width",
            min_height=280,
            x_axis_label="cardinality of the swept hidden node",
            y_axis_label="score (higher is better)",
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

    def update(self, frame: pd.DataFrame, best: Mapping[str, tuple[int, float]]) -> None:
        """Show ``frame`` (a column ``card`` and one per score key) and each score's best ``(card, score)``."""
        for name in self.names:
            key = SCORES[name].key
            scores = frame[key] if key in frame else pd.Series(np.nan, index=frame.index)
            self.curves[name].data = {"card": frame["card"].to_numpy(), "score": scores.to_numpy(dtype=float)}
            self.stars[name].data = (
                {"card": [best[name][0]], "score": [best[name][1]]} if name in best else {"card": [], "score": []}
            )
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
        best = self.figure.scatter(
            "step", "score", source=self.last, marker="star", size=22, color="#ffd23f", line_color="black"
        )
        self.item = LegendItem(label="", renderers=[self.line, self.dots])
        _legend_right(self.figure, [self.item, LegendItem(label="best model", renderers=[best])])
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
        self.item.label = f"{criterion.label} along the path"
        self.figure.title.text = f"Hill climb on {criterion.label}: each step raises one hidden cardinality by one"
        self.figure.yaxis.axis_label = f"{criterion.label} (higher is better)"
        if len(frame) <= 30:
            self.figure.xaxis.ticker = FixedTicker(ticks=columns["step"])


class ProfileBars:
    """P(item = category | node = state) as poLCA and Latent GOLD draw profiles: a group per item, in
    it a group of bars per category, one bar per state of the node (coloured as in the legend), so
    no line ever joins categories of different items."""

    def __init__(self):
        self.figure = _figure(
            "",
            height=340,
            sizing_mode="stretch_width",
            min_height=300,
            x_range=FactorRange(group_padding=1.6, subgroup_padding=0.6),
            y_range=(0, 1.02),
            y_axis_label="probability",
        )
        axis = self.figure.xaxis[0]
        axis.major_label_text_font_size = "0pt"  # the states' numbers: the legend's colours say them
        axis.major_tick_line_color = None
        axis.subgroup_text_font_size = "10pt"
        axis.group_text_font_size = "11pt"
        axis.group_text_color = "#1b2631"
        self.figure.xgrid.grid_line_color = None
        self.source = ColumnDataSource({"x": [], "probability": [], "color": [], "label": []})
        bars = self.figure.vbar(
            "x",
            top="probability",
            width=0.9,
            source=self.source,
            fill_color="color",
            line_color=None,
            legend_field="label",
        )
        self.figure.add_tools(
            HoverTool(
                renderers=[bars],
                tooltips=[("", "@label"), ("item, category, state", "@x"), ("probability", "@probability{0.000}")],
            )
        )
        _legend_right(self.figure)

    def update(self, profiles: pd.DataFrame, shares: Mapping[int, float], node: str) -> None:
        """``profiles``: rows (item, category, class, probability) as :meth:`effdim.FitResult.profiles`;
        ``shares``: the share of each state, for the legend."""
        rows = profiles.sort_values("class", kind="stable")
        order = {key: i for i, key in enumerate(dict.fromkeys(zip(profiles["item"], profiles["category"])))}
        rows = rows.assign(at=[order[(i, c)] for i, c in zip(rows["item"], rows["category"])])
        rows = rows.sort_values(["at", "class"], kind="stable")
        classes = sorted(set(rows["class"]))
        color = {c: CLASS_COLORS[i % len(CLASS_COLORS)] for i, c in enumerate(classes)}
        label = {c: f"{node} = {c} ({shares.get(c, float('nan')):.0%})" for c in classes}
        x = [(str(i), str(c), str(k)) for i, c, k in zip(rows["item"], rows["category"], rows["class"])]
        self.figure.x_range.factors = x
        self.source.data = {
            "x": x,
            "probability": rows["probability"].tolist(),
            "color": [color[c] for c in rows["class"]],
            "label": [label[c] for c in rows["class"]],
        }
        self.figure.title.text = f"Profiles of {node}: P(item = category | {node})"


class ShareBars:
    """The share of each state of one hidden node (largest first)."""

    def __init__(self):
        self.figure = _figure("", width=300, height=260, x_range=FactorRange(), y_range=(0, 1), y_axis_label="share")
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
        self.figure = _figure(
            "Bivariate residuals: click a pair", width=420, height=340, x_range=FactorRange(), y_range=FactorRange()
        )
        self.figure.xaxis.major_label_orientation = 0.8
        self.figure.grid.visible = False
        self.source = ColumnDataSource({"item": [], "with": [], "bvr": [], "value": [], "ink": []})
        self.colors = LinearColorMapper(palette=list(reversed(Reds256)), low=0, high=3)
        cells = self.figure.rect(
            "item",
            "with",
            1,
            1,
            source=self.source,
            line_color=None,
            fill_color={"field": "bvr", "transform": self.colors},
        )
        self.figure.text(
            "item",
            "with",
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
        """``residuals``: the square table of :meth:`effdim.FitResult.bivariate_residuals`."""
        names = [str(c) for c in residuals.columns]
        values = residuals.to_numpy(dtype=float)
        pairs = [(a, b, values[i, j]) for i, a in enumerate(names) for j, b in enumerate(names) if i != j]
        self.figure.x_range.factors = names
        self.figure.y_range.factors = names
        finite = [p[2] for p in pairs if np.isfinite(p[2])]
        self.colors.high = high = max([3.0, *finite])
        self.source.data = {
            "item": [p[0] for p in pairs],
            "with": [p[1] for p in pairs],
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
