"""The HLC tree, drawn with a tidy layout; a click selects the nearest node.

Drawn with Bokeh directly (one bare ``Plot`` in one ``pn.pane.Bokeh`` for the
lifetime of the view): an edit replaces the data of the view's
``ColumnDataSource`` objects (edges, highlight halo, nodes and their labels)
and the axis ranges, never the figure, so an edit costs the browser a
redraw and not a new plot (``benchmarks/dashboard/bench_app_update.py`` measures it).
A click works like HoloViews' ``SingleTap`` recipe: the plot's ``tap`` event
gives data coordinates and the state picks the nearest node
(``ModelState.select_nearest``); no glyph hit-testing.

The figure is :class:`TreeFigure`, its data :func:`effdim.treedraw.model_data` of any model
(the engine's drawing, which also writes the SVG file and the HTML report's tree):
the editor's :class:`TreeView` draws the edited model (``ModelState.drawing``)
through them, and the Data & scores tab draws the structure search's best
tree so far with them.
"""

from __future__ import annotations

import io

import panel as pn
import param
from bokeh.core.properties import field
from bokeh.events import DoubleTap, Tap
from bokeh.models import ColumnDataSource, HoverTool, Plot, Range1d, SaveTool, Scatter, Segment, Text, Toolbar
from panel.viewable import Viewer

from effdim.treedraw import LABEL_OFFSET, LABEL_PT, NODE_COLUMNS, PALETTE, model_data, tree_svg

from ..state import ModelState
from ..style import HTML_CSS, TOGGLE_CSS
from .widgets import in_one_message

__all__ = ["TreeView", "TreeFigure", "PALETTE", "model_data", "tree_svg", "layered_height"]

#: Pixels per layer of a drawing sized by :func:`layered_height`, and the room below its last layer for labels
#: turned 45 degrees (a crowded tree's, :data:`effdim.treedraw.CROWDED_WIDTH`) or level, at font scale 1.
LAYER_PIXELS, TURNED_LABELS_PIXELS, LEVEL_LABELS_PIXELS = 80, 110, 40


def layered_height(data: dict, least: int) -> int:
    """The height (at font scale 1) that gives each layer of the drawing ``data`` (:func:`model_data`)
    :data:`LAYER_PIXELS` and its lowest labels room, and at least ``least``: a deep or wide tree (a structure
    search's over dozens of columns) is drawn taller instead of its labels running into the layer below and
    off the bottom."""
    layers = len(set(data["nodes"]["y"]))
    turned = any(data["nodes"]["angle"])
    return max(least, LAYER_PIXELS * layers + (TURNED_LABELS_PIXELS if turned else LEVEL_LABELS_PIXELS))


LEGEND_HTML = f"""
<div class="effdim-legend">
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE["hidden"]}"/></svg> hidden</span>
<span><svg width="14" height="14"><rect x="1" y="1" width="12" height="12" fill="{PALETTE["observed"]}"
 stroke="{PALETTE["observed_line"]}" stroke-width="2"/></svg> observed</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="5" fill="none" stroke="{PALETTE["selected"]}"
 stroke-width="3"/></svg> selected</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE["changed"]}"/></svg>
 changed by regularization</span>
<span><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="{PALETTE["highlight"]}"/></svg>
 local LC model of the table row</span>
</div>
"""


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
            name=name,
            height=height,
            sizing_mode="stretch_width",
            x_range=self._x,
            y_range=self._y,
            title=None,
            toolbar=Toolbar(autohide=True, logo=None),
            toolbar_location="right",
            outline_line_color=None,
            min_border=5,
        )
        # the toolbar's save button writes the drawing as a PNG file
        fig.add_tools(SaveTool(filename=filename))
        fig.add_glyph(
            self._edges,
            Segment(x0="x0", y0="y0", x1="x1", y1="y1", line_color=field("color"), line_width=field("width")),
        )
        fig.add_glyph(
            self._halo, Scatter(x="x", y="y", size=48, fill_color=PALETTE["highlight"], fill_alpha=0.9, line_color=None)
        )
        nodes = fig.add_glyph(
            self._nodes,
            Scatter(
                x="x",
                y="y",
                marker=field("marker"),
                size=field("size"),
                fill_color=field("fill"),
                line_color=field("line"),
                line_width=field("lw"),
            ),
        )
        self._labels = Text(
            x="x",
            y="y",
            text=field("label"),
            y_offset=LABEL_OFFSET,
            text_align=field("align"),
            angle=field("angle"),
            text_baseline="top",
            text_font_size=f"{LABEL_PT}pt",
            text_font_style="bold",
            text_color=PALETTE["text"],
            background_fill_color="white",
            background_fill_alpha=0.85,
            border_radius=4,
        )
        fig.add_glyph(self._nodes, self._labels)
        fig.add_tools(
            HoverTool(
                renderers=[nodes], tooltips=[("node", "@node"), ("kind", "@kind"), ("states", "@states"), ("", "@note")]
            )
        )
        self.figure = fig
        self._height = height
        self.pane = pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_width=420, margin=(0, 5))

    def draw(self, data: dict, scale: float = 1.0, height: int | None = None) -> None:
        """Show ``data`` (:func:`model_data` drawn at font ``scale``), ``height`` pixels high at font scale 1
        (default: the figure's own)."""
        # Panel runs widget callbacks without Bokeh's document lock; changing
        # Bokeh models directly needs `unlocked` (Panel's own update path).
        with pn.io.unlocked():
            if self._labels.y_offset != LABEL_OFFSET * scale:  # larger labels need taller layers
                self._labels.update(text_font_size=f"{LABEL_PT * scale:g}pt", y_offset=LABEL_OFFSET * scale)
            tall = round((height or self._height) * scale**0.5)
            if self.figure.height != tall:
                self.figure.height = tall
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
            self.param.mode,
            options={"As edited": "edited", "Regular equivalent": "regular"},
            margin=(0, 10),
            color="primary",
            label="",
            stylesheets=[TOGGLE_CSS],
            css_classes=["effdim-tree-mode"],
        )
        self._drawing = TreeFigure("effdim-tree", height, "effdim-tree")
        # two clicks within Bokeh's double-tap interval arrive as one DoubleTap:
        # the second one selects too
        for event in (Tap, DoubleTap):
            self._drawing.figure.on_event(event, in_one_message(self._on_tap))
        self._legend = pn.pane.HTML(LEGEND_HTML, margin=(0, 10), sizing_mode="stretch_width", stylesheets=[HTML_CSS])
        # beside the toolbar's PNG: the same drawing as vector graphics
        self.svg = pn.widgets.FileDownload(
            label="Download the tree (SVG)",
            filename="effdim-tree.svg",
            embed=False,
            width=200,
            margin=(0, 10),
            callback=lambda: io.StringIO(tree_svg(self.state.drawing(self.mode))),
            css_classes=["effdim-tree-svg"],
        )
        self._mode_row = pn.Row(
            pn.pane.HTML("<b>Draw</b>", margin=(8, 0, 0, 10)),
            self._mode,
            visible=state.regularization is not None,
        )
        state.param.watch(self._redraw, ["revision"])
        self.param.watch(self._redraw, ["mode", "font_scale"])
        self._redraw()

    def _on_tap(self, event) -> None:
        self.state.select_nearest(event.x, event.y, self.positions)

    def _redraw(self, *_) -> None:
        data = self.state.drawing(self.mode, self.font_scale)
        self.positions = data["positions"]
        self._mode_row.visible = self.state.regularization is not None  # every change of the model is a revision
        self._drawing.draw(data, self.font_scale)

    def __panel__(self):
        return pn.Column(
            self._mode_row, self._drawing.pane, self._legend, self.svg, sizing_mode="stretch_width", margin=0
        )
