"""The HLC tree drawn with HoloViews: tidy layout, click to select.

One ``DynamicMap`` in one ``pn.pane.HoloViews`` for the lifetime of the view
(GUIDE.md section 3): the drawing function depends on the state's parameters,
so an edit redraws in place and the ``SingleTap`` stream stays attached.
Clicks pick the nearest node (``Selection1D`` does not work on ``hv.Graph``).
"""

from __future__ import annotations

import holoviews as hv
import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from .layout import tree_layout
from .state import ModelState
from .style import HTML_CSS

__all__ = ["TreeView", "PALETTE"]

PALETTE = {
    "hidden": "#1d4e89",
    "observed": "#eef3f9",
    "observed_line": "#1d4e89",
    "edge": "#8a96a3",
    "selected": "#d1495b",
    "changed": "#f4a259",
    "removed": "#c9ced6",
    "highlight": "#ffd23f",
    "text": "#1b2631",
}

LEGEND_HTML = f"""
<div class="effdim-legend">
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE['hidden']}"/></svg> hidden</span>
<span><svg width="14" height="14"><rect x="1" y="1" width="12" height="12" fill="{PALETTE['observed']}"
 stroke="{PALETTE['observed_line']}" stroke-width="2"/></svg> observed</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="5" fill="none" stroke="{PALETTE['selected']}"
 stroke-width="3"/></svg> selected</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE['changed']}"/></svg>
 changed by regularization</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE['highlight']}"/></svg>
 local LC model of the table row</span>
</div>
"""


def _html(obj="", **params) -> pn.pane.HTML:
    params.setdefault("stylesheets", [HTML_CSS])
    return pn.pane.HTML(obj, **params)


def _name_plot(plot, element) -> None:
    """Name the Bokeh figure so tests (and CSS) can find the tree plot."""
    plot.state.name = "effdim-tree"


class TreeView(Viewer):
    """The edited model (or its regular equivalent) as a tidy tree; click selects."""

    mode = param.Selector(default="edited", objects=["edited", "regular"])

    def __init__(self, state: ModelState, height: int = 380, **params):
        super().__init__(**params)
        self.state = state
        self.positions: dict[str, tuple[float, float]] = {}
        self._mode = pn.widgets.RadioButtonGroup(
            options={"As edited": "edited", "Regular equivalent": "regular"}, value="edited", margin=(0, 10)
        )
        self._mode.link(self, value="mode")
        drawing = pn.bind(
            self._draw,
            model=state.param.model,
            effective=state.param.effective,
            selected=state.param.selected,
            changed=state.param.changed,
            highlight=state.param.highlight_nodes,
            mode=self.param.mode,
        )
        self._dmap = hv.DynamicMap(drawing)
        # A linked stream needs an element source that stays the same object:
        # an empty Points layer under the drawing (holoviews reference: Tap).
        self._canvas = hv.Points([], kdims=["x", "y"]).opts(tools=[])
        self._tap = hv.streams.SingleTap(source=self._canvas, transient=True)
        self._tap.add_subscriber(self._on_tap)
        plot = (self._canvas * self._dmap).opts(
            hv.opts.Overlay(
                xaxis=None, yaxis=None, show_grid=False, toolbar=None, framewise=True, responsive=True,
                height=height, show_frame=False, title="", default_tools=[], active_tools=[],
                hooks=[_name_plot],
            ),
            hv.opts.Points(framewise=True),
        )
        self._pane = pn.pane.HoloViews(
            plot, sizing_mode="stretch_width", height=height, min_width=420,
            css_classes=["effdim-tree"], margin=(0, 5),
        )
        self._legend = _html(LEGEND_HTML, margin=(0, 10), sizing_mode="stretch_width")
        self._mode_row = pn.Row(
            _html("<b>Draw</b>", margin=(8, 0, 0, 10)), self._mode,
            visible=state.param.regularization.rx.is_not(None),
        )

    def _drawn_model(self, model, effective, mode):
        if mode == "regular" and self.state.regularization is not None:
            return self.state.regularization.model
        return model

    def _on_tap(self, x=None, y=None, **kwargs):
        self.state.select_nearest(x, y, self.positions)

    # ------------------------------------------------------------------ draw
    def _draw(self, model, effective, selected, changed, highlight, mode):
        state = self.state
        drawn = self._drawn_model(model, effective, mode)
        regular_view = drawn is not model
        pos = tree_layout(drawn)
        self.positions = pos
        highlight = set(highlight or [])
        centre = state.highlight if state.highlight in drawn else None
        nodes = []
        for n in drawn.nodes:
            x, y = pos[n]
            hidden = drawn.is_hidden(n)
            card = drawn.card(n)
            note = changed.get(n, "")
            label = f"{n} : {card}"
            fill = PALETTE["hidden"] if hidden else PALETTE["observed"]
            if note == "removed":
                fill = PALETTE["removed"]
                label = f"{n} : {card} ✕"
            elif note:
                fill = PALETTE["changed"]
                label = f"{n} : {model.card(n)}→{state.regularization.model.card(n)}" if not regular_view \
                    else f"{n} : {card} (was {model.card(n)})"
            is_sel = n == selected
            nodes.append({
                "x": x, "y": y, "node": n,
                "kind": "hidden" if hidden else "observed",
                "states": card,
                "note": note or ("root" if n == drawn.root else ""),
                "label": label,
                "fill": fill,
                "line": PALETTE["selected"] if is_sel else (PALETTE["hidden"]),
                "lw": 4 if is_sel else 1.5,
                "marker": "circle" if hidden else "square",
                "size": 30 if hidden else 26,
                "text_color": PALETTE["text"],
            })
        frame = pd.DataFrame(nodes)
        seg = []
        hot = []
        for parent, child in drawn.edges:
            (x0, y0), (x1, y1) = pos[parent], pos[child]
            row = {"x0": x0, "y0": y0, "x1": x1, "y1": y1}
            if centre is not None and centre in (parent, child):
                hot.append(row)
            else:
                seg.append(row)
        cols = ["x0", "y0", "x1", "y1"]
        edges = hv.Segments(pd.DataFrame(seg, columns=cols), kdims=cols).opts(
            color=PALETTE["edge"], line_width=2)
        hot_edges = hv.Segments(pd.DataFrame(hot, columns=cols), kdims=cols).opts(
            color="#e0a800", line_width=6)
        halo_frame = frame[frame["node"].isin(highlight)]
        halo = hv.Points(halo_frame, kdims=["x", "y"], vdims=["node"]).opts(
            color=PALETTE["highlight"], size=48, marker="circle", line_color=None, alpha=0.9,
            tools=[])
        points = hv.Points(frame, kdims=["x", "y"], vdims=["node", "kind", "states", "note", "fill", "line",
                                                           "lw", "marker", "size"]).opts(
            color="fill", line_color="line", line_width="lw", marker="marker", size="size",
            tools=["hover"], nonselection_alpha=1.0,
            hover_tooltips=[("node", "@node"), ("kind", "@kind"), ("states", "@states"), ("", "@note")],
        )
        labels = hv.Labels(frame, kdims=["x", "y"], vdims=["label"]).opts(
            text_font_size="11pt", text_color=PALETTE["text"], yoffset=-0.3, text_baseline="middle",
            text_font_style="bold",
        )
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        pad_x = 0.7
        xlim = (min(xs) - pad_x, max(xs) + pad_x)
        if xlim[1] - xlim[0] < 4:
            mid = (xlim[0] + xlim[1]) / 2
            xlim = (mid - 2, mid + 2)
        ylim = (min(ys) - 0.6, max(ys) + 0.35)
        # the frame: an invisible element spanning the padded extents
        frame_box = hv.Points([(xlim[0], ylim[0]), (xlim[1], ylim[1])]).opts(alpha=0, size=0, tools=[])
        return frame_box * edges * hot_edges * halo * points * labels

    def __panel__(self):
        return pn.Column(self._mode_row, self._pane, self._legend, sizing_mode="stretch_width", margin=0)

