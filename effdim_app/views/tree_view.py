"""The HLC tree, drawn with a tidy layout; a click selects the nearest node.

Drawn with Bokeh directly (one ``figure`` in one ``pn.pane.Bokeh`` for the
lifetime of the view): an edit replaces the data of four
``ColumnDataSource`` objects (edges, highlight halo, nodes, labels share
one) and the axis ranges. The first version used a HoloViews
``DynamicMap`` with a ``SingleTap`` stream (the HoloViews recipe for clicks); measured
with ``benchmarks/bench_app_update.py`` every edit re-rendered the whole
overlay through HoloViews, 200-380 ms on this machine, above the issue's
0.3 s budget with the rest of the page still to update. Updating the data
sources costs a few milliseconds. The click works like the ``SingleTap``
recipe: the plot's ``tap`` event gives data coordinates and the state picks
the nearest node (``ModelState.select_nearest``); no glyph hit-testing.

The figure is :class:`TreeFigure`, its data :func:`model_data` of any model:
the editor's :class:`TreeView` draws the edited model through them, and the
Data & scores tab draws the structure search's best tree so far with them.

The scores panel keeps HoloViews (curves are rebuilt rarely).
"""

from __future__ import annotations

import io
from xml.sax.saxutils import escape, quoteattr

import panel as pn
import param
from bokeh.core.properties import field
from bokeh.events import DoubleTap, Tap
from bokeh.models import ColumnDataSource, HoverTool, Plot, Range1d, SaveTool, Scatter, Segment, Text, Toolbar
from panel.viewable import Viewer

from effdim import HLCModel

from ..layout import tree_layout
from ..state import ModelState
from ..style import HTML_CSS
from .widgets import in_one_message

__all__ = ["TreeView", "TreeFigure", "PALETTE", "tree_data", "model_data", "tree_svg"]

PALETTE = {
    "hidden": "#1d4e89",
    "observed": "#eef3f9",
    "observed_line": "#1d4e89",
    "edge": "#8a96a3",
    "selected": "#d1495b",
    "changed": "#f4a259",
    "removed": "#c9ced6",
    "highlight": "#ffd23f",
    "hot_edge": "#e0a800",
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

NODE_COLUMNS = ("x", "y", "node", "kind", "states", "note", "label", "fill", "line", "lw", "marker", "size",
                "angle", "align")
#: Wider than this (layout units) the labels are turned 45 degrees so neighbours do not collide.
CROWDED_WIDTH = 11


#: Label size and offset below its node, in points and pixels, at font scale 1.
LABEL_PT = 11
LABEL_OFFSET = 17


def tree_data(state: ModelState, mode: str = "edited", scale: float = 1.0) -> dict:
    """The edited model of ``state`` (``mode="regular"``: its regular equivalent) as :func:`model_data`:
    the selected node ringed, the nodes regularization changes or removes coloured and labelled."""
    model, changed = state.model, state.changed
    drawn = state.regularization.model if (mode == "regular" and state.regularization is not None) else model
    regular_view = drawn is not model
    labels = {}
    for n, note in changed.items():
        if n not in drawn:
            continue
        if note == "removed":
            labels[n] = f"{n} : {drawn.card(n)} ✕"
        elif note:
            labels[n] = (f"{n} : {drawn.card(n)} (was {model.card(n)})" if regular_view
                         else f"{n} : {model.card(n)}→{state.regularization.model.card(n)}")
    return model_data(drawn, selected=state.selected, changed=changed, labels=labels, centre=state.highlight,
                      highlight=state.highlight_nodes or (), scale=scale)


def model_data(drawn: HLCModel, *, selected: str | None = None, changed: dict[str, str] | None = None,
               labels: dict[str, str] | None = None, centre: str | None = None, highlight=(),
               scale: float = 1.0) -> dict:
    """Everything the drawing of ``drawn`` needs, as plain columns (no Bokeh objects; testable).

    ``changed`` notes nodes (``"removed"`` greys them, other notes colour them),
    ``labels`` replaces their ``"name : states"`` labels, ``centre`` thickens
    its edges and ``highlight`` nodes get a halo. ``scale`` multiplies the
    nodes and their labels (projector mode): labels turn sooner, and more
    room is left below the last layer. Returns ``{"positions", "nodes",
    "edges", "halo", "xlim", "ylim", "drawn"}``.
    """
    changed, labels = changed or {}, labels or {}
    pos = tree_layout(drawn)
    crowded = max(x for x, _ in pos.values()) > CROWDED_WIDTH / scale
    highlight = set(highlight)
    centre = centre if centre in drawn else None
    nodes = {c: [] for c in NODE_COLUMNS}
    for n in drawn.nodes:
        x, y = pos[n]
        hidden = drawn.is_hidden(n)
        card = drawn.card(n)
        note = changed.get(n, "")
        fill = PALETTE["hidden"] if hidden else PALETTE["observed"]
        if note:
            fill = PALETTE["removed"] if note == "removed" else PALETTE["changed"]
        is_sel = n == selected
        row = {
            "x": x, "y": y, "node": n, "kind": "hidden" if hidden else "observed", "states": card,
            "note": note or ("root" if n == drawn.root else ""), "label": labels.get(n, f"{n} : {card}"),
            "fill": fill, "line": PALETTE["selected"] if is_sel else PALETTE["hidden"], "lw": 4 if is_sel else 1.5,
            "marker": "circle" if hidden else "square", "size": (30 if hidden else 26) * scale,
            "angle": 0.785 if crowded else 0.0, "align": "right" if crowded else "center",
        }
        for c in NODE_COLUMNS:
            nodes[c].append(row[c])
    edges = {c: [] for c in ("x0", "y0", "x1", "y1", "color", "width")}
    for parent, child in drawn.edges:
        (x0, y0), (x1, y1) = pos[parent], pos[child]
        hot = centre is not None and centre in (parent, child)
        for c, v in zip(edges, (x0, y0, x1, y1, PALETTE["hot_edge"] if hot else PALETTE["edge"], 6 if hot else 2)):
            edges[c].append(v)
    halo = {"x": [pos[n][0] for n in drawn.nodes if n in highlight],
            "y": [pos[n][1] for n in drawn.nodes if n in highlight]}
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    xlim = (min(xs) - 0.7, max(xs) + 0.7)
    if xlim[1] - xlim[0] < 4:
        mid = (xlim[0] + xlim[1]) / 2
        xlim = (mid - 2, mid + 2)
    ylim = (min(ys) - (1.1 if crowded else 0.6) * scale, max(ys) + 0.35 * scale)
    return {"positions": pos, "nodes": nodes, "edges": edges, "halo": halo, "xlim": xlim, "ylim": ylim,
            "drawn": drawn}


#: Pixels per layout unit in the SVG drawing (a layer is one unit deep; neighbours at least one apart).
SVG_UNIT = 110


def tree_svg(data: dict) -> str:
    """The drawing of :func:`tree_data` as a standalone SVG document (for slides and papers).

    Built from the same columns as the Bokeh figure, so the file shows what
    the screen shows: edges as lines, hidden nodes as circles, observed
    nodes as squares, the selection ring, the highlight halo and the labels
    (turned 45 degrees when the screen turns them). Sizes are screen pixels.
    """
    (x0, x1), (y0, y1) = data["xlim"], data["ylim"]
    width, height = round((x1 - x0) * SVG_UNIT), round((y1 - y0) * SVG_UNIT)

    def px(x: float, y: float) -> tuple[float, float]:
        return round((x - x0) * SVG_UNIT, 1), round((y1 - y) * SVG_UNIT, 1)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
             f'<rect class="background" width="{width}" height="{height}" fill="white"/>']
    edges = data["edges"]
    for xa, ya, xb, yb, color, line in zip(edges["x0"], edges["y0"], edges["x1"], edges["y1"], edges["color"],
                                           edges["width"]):
        (ax, ay), (bx, by) = px(xa, ya), px(xb, yb)
        parts.append(f'<line x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" stroke="{color}" stroke-width="{line}"/>')
    for x, y in zip(data["halo"]["x"], data["halo"]["y"]):
        cx, cy = px(x, y)
        parts.append(f'<circle class="halo" cx="{cx}" cy="{cy}" r="24" fill="{PALETTE["highlight"]}" '
                     'fill-opacity="0.9"/>')
    nodes = data["nodes"]
    for i, node in enumerate(nodes["node"]):
        cx, cy = px(nodes["x"][i], nodes["y"][i])
        half = nodes["size"][i] / 2
        style = f'fill="{nodes["fill"][i]}" stroke="{nodes["line"][i]}" stroke-width="{nodes["lw"][i]}"'
        title = f"<title>{escape(node)}</title>"
        if nodes["marker"][i] == "circle":
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{half:g}" {style}>{title}</circle>')
        else:
            parts.append(f'<rect x="{cx - half:g}" y="{cy - half:g}" width="{2 * half:g}" height="{2 * half:g}" '
                         f'{style}>{title}</rect>')
        ty = cy + half + 4
        anchor = "end" if nodes["align"][i] == "right" else "middle"
        turn = f' transform="rotate({-round(nodes["angle"][i] * 57.2958)} {cx} {ty})"' if nodes["angle"][i] else ""
        parts.append(f'<text x="{cx}" y="{ty}" text-anchor={quoteattr(anchor)} dominant-baseline="hanging" '
                     f'font-size="{LABEL_PT}pt" font-weight="bold" fill="{PALETTE["text"]}" stroke="white" '
                     f'stroke-width="4" stroke-opacity="0.85" paint-order="stroke"{turn}>'
                     f'{escape(nodes["label"][i])}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


class TreeFigure:
    """One Bokeh figure of a tree, redrawn by replacing its data (:meth:`draw`); ``pane`` shows it.

    The tree editor's :class:`TreeView` and the structure search's live drawing
    (the Data & scores tab) both draw through it.
    """

    def __init__(self, name: str, height: int, filename: str):
        self._edges = ColumnDataSource({c: [] for c in ("x0", "y0", "x1", "y1", "color", "width")})
        self._halo = ColumnDataSource({"x": [], "y": []})
        self._nodes = ColumnDataSource({c: [] for c in NODE_COLUMNS})
        self._x = Range1d(0, 1)
        self._y = Range1d(0, 1)
        # a bare Plot, not bokeh.plotting.figure: the drawing shows no axes, grids or title, and
        # figure() made those (eleven models) and a selection and muted glyph per renderer, which
        # every session paid for on opening the page (docs/robustness.md, "Opening a page")
        fig = Plot(
            name=name, height=height, sizing_mode="stretch_width", x_range=self._x, y_range=self._y, title=None,
            toolbar=Toolbar(autohide=True, logo=None), toolbar_location="right", outline_line_color=None,
            min_border=5,
        )
        # the toolbar's save button writes the drawing as a PNG file
        fig.add_tools(SaveTool(filename=filename))
        fig.add_glyph(self._edges, Segment(x0="x0", y0="y0", x1="x1", y1="y1", line_color=field("color"),
                                           line_width=field("width")))
        fig.add_glyph(self._halo, Scatter(x="x", y="y", size=48, fill_color=PALETTE["highlight"], fill_alpha=0.9,
                                          line_color=None))
        nodes = fig.add_glyph(self._nodes, Scatter(x="x", y="y", marker=field("marker"), size=field("size"),
                                                   fill_color=field("fill"), line_color=field("line"),
                                                   line_width=field("lw")))
        self._labels = Text(
            x="x", y="y", text=field("label"), y_offset=LABEL_OFFSET, text_align=field("align"), angle=field("angle"),
            text_baseline="top", text_font_size=f"{LABEL_PT}pt", text_font_style="bold", text_color=PALETTE["text"],
            background_fill_color="white", background_fill_alpha=0.85, border_radius=4)
        fig.add_glyph(self._nodes, self._labels)
        fig.add_tools(HoverTool(renderers=[nodes], tooltips=[("node", "@node"), ("kind", "@kind"),
                                                             ("states", "@states"), ("", "@note")]))
        self.figure = fig
        self._height = height
        self.pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=420, margin=(0, 5))

    def draw(self, data: dict, scale: float = 1.0) -> None:
        """Show ``data`` (:func:`model_data` drawn at font ``scale``)."""
        # Panel runs widget callbacks without Bokeh's document lock; changing
        # Bokeh models directly needs `unlocked` (Panel's own update path).
        with pn.io.unlocked():
            if self._labels.y_offset != LABEL_OFFSET * scale:  # larger labels need taller layers
                self._labels.update(text_font_size=f"{LABEL_PT * scale:g}pt", y_offset=LABEL_OFFSET * scale)
                self.figure.height = round(self._height * scale ** 0.5)
            self._edges.data = data["edges"]
            self._halo.data = data["halo"]
            self._nodes.data = data["nodes"]
            self._x.update(start=data["xlim"][0], end=data["xlim"][1])
            self._y.update(start=data["ylim"][0], end=data["ylim"][1])
        pn.io.push_notebook(self.pane)  # in Jupyter, send direct Bokeh changes (no-op when served)


class TreeView(Viewer):
    """The edited model (or its regular equivalent) as a tidy tree; click selects."""

    mode = param.Selector(default="edited", objects=["edited", "regular"])
    font_scale = param.Number(default=1.0, bounds=(0.5, 3), doc="Size of nodes and labels (projector mode: 1.5).")

    def __init__(self, state: ModelState, height: int = 380, **params):
        super().__init__(**params)
        self.state = state
        self.positions: dict[str, tuple[float, float]] = {}
        self._mode = pn.widgets.RadioButtonGroup.from_param(
            self.param.mode, options={"As edited": "edited", "Regular equivalent": "regular"}, margin=(0, 10),
            color="primary", label="",
        )
        self._drawing = TreeFigure("effdim-tree", height, "effdim-tree")
        # two clicks within Bokeh's double-tap interval arrive as one DoubleTap:
        # the second one selects too
        for event in (Tap, DoubleTap):
            self._drawing.figure.on_event(event, in_one_message(self._on_tap))
        self._legend = pn.pane.HTML(LEGEND_HTML, margin=(0, 10), sizing_mode="stretch_width",
                                    stylesheets=[HTML_CSS])
        # beside the toolbar's PNG: the same drawing as vector graphics
        self.svg = pn.widgets.FileDownload(
            label="Download the tree (SVG)", filename="effdim-tree.svg", embed=False, width=200, margin=(0, 10),
            callback=lambda: io.StringIO(tree_svg(tree_data(self.state, self.mode))),
            css_classes=["effdim-tree-svg"])
        self._mode_row = pn.Row(
            pn.pane.HTML("<b>Draw</b>", margin=(8, 0, 0, 10)), self._mode,
            visible=state.regularization is not None,
        )
        state.param.watch(self._redraw, ["revision"])
        self.param.watch(self._redraw, ["mode", "font_scale"])
        self._redraw()

    def _on_tap(self, event) -> None:
        self.state.select_nearest(event.x, event.y, self.positions)

    def _redraw(self, *_) -> None:
        data = tree_data(self.state, self.mode, self.font_scale)
        self.positions = data["positions"]
        self._mode_row.visible = self.state.regularization is not None  # every change of the model is a revision
        self._drawing.draw(data, self.font_scale)

    def __panel__(self):
        return pn.Column(self._mode_row, self._drawing.pane, self._legend, self.svg, sizing_mode="stretch_width",
                         margin=0)
