"""A drawing of an HLC tree as plain columns (:func:`model_data`) and as an SVG document (:func:`tree_svg`).

Positions come from the tidy layout of :mod:`effdim.treelayout`: the root on
top, one layer per depth, children in the model's (notation) order. Hidden
nodes are circles, observed nodes squares, each labelled ``name : states``.
The columns are what any renderer needs (the dashboard feeds them to Bokeh;
:func:`tree_svg` writes them as SVG, for slides, papers and the HTML report of
:mod:`effdim.report`), so the file shows what the screen shows. No plotting
library is imported here.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from .model import HLCModel
from .treelayout import tree_layout

__all__ = ["LABEL_OFFSET", "LABEL_PT", "NODE_COLUMNS", "PALETTE", "SVG_UNIT", "model_data", "tree_svg"]

#: Colours of the drawing: hidden and observed nodes, edges, and the marks of the tree editor.
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

NODE_COLUMNS = (
    "x",
    "y",
    "node",
    "kind",
    "states",
    "note",
    "label",
    "fill",
    "line",
    "lw",
    "marker",
    "size",
    "angle",
    "align",
)
#: Wider than this (layout units) the labels are turned 45 degrees so neighbours do not collide.
CROWDED_WIDTH = 11


#: Label size and offset below its node, in points and pixels, at font scale 1.
LABEL_PT = 11
LABEL_OFFSET = 17


def model_data(
    drawn: HLCModel,
    *,
    selected: str | None = None,
    changed: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    centre: str | None = None,
    highlight=(),
    scale: float = 1.0,
) -> dict:
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
            "x": x,
            "y": y,
            "node": n,
            "kind": "hidden" if hidden else "observed",
            "states": card,
            "note": note or ("root" if n == drawn.root else ""),
            "label": labels.get(n, f"{n} : {card}"),
            "fill": fill,
            "line": PALETTE["selected"] if is_sel else PALETTE["hidden"],
            "lw": 4 if is_sel else 1.5,
            "marker": "circle" if hidden else "square",
            "size": (30 if hidden else 26) * scale,
            "angle": 0.785 if crowded else 0.0,
            "align": "right" if crowded else "center",
        }
        for c in NODE_COLUMNS:
            nodes[c].append(row[c])
    edges = {c: [] for c in ("x0", "y0", "x1", "y1", "color", "width")}
    for parent, child in drawn.edges:
        (x0, y0), (x1, y1) = pos[parent], pos[child]
        hot = centre is not None and centre in (parent, child)
        for c, v in zip(edges, (x0, y0, x1, y1, PALETTE["hot_edge"] if hot else PALETTE["edge"], 6 if hot else 2)):
            edges[c].append(v)
    halo = {
        "x": [pos[n][0] for n in drawn.nodes if n in highlight],
        "y": [pos[n][1] for n in drawn.nodes if n in highlight],
    }
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    xlim = (min(xs) - 0.7, max(xs) + 0.7)
    if xlim[1] - xlim[0] < 4:
        mid = (xlim[0] + xlim[1]) / 2
        xlim = (mid - 2, mid + 2)
    ylim = (min(ys) - (1.1 if crowded else 0.6) * scale, max(ys) + 0.35 * scale)
    return {"positions": pos, "nodes": nodes, "edges": edges, "halo": halo, "xlim": xlim, "ylim": ylim, "drawn": drawn}


#: Pixels per layout unit in the SVG drawing (a layer is one unit deep; neighbours at least one apart).
SVG_UNIT = 110


def tree_svg(data: dict) -> str:
    """The drawing of :func:`model_data` as a standalone SVG document (for slides and papers).

    Built from the same columns as the Bokeh figure, so the file shows what
    the screen shows: edges as lines, hidden nodes as circles, observed
    nodes as squares, the selection ring, the highlight halo and the labels
    (turned 45 degrees when the screen turns them). Sizes are screen pixels.
    """
    (x0, x1), (y0, y1) = data["xlim"], data["ylim"]
    width, height = round((x1 - x0) * SVG_UNIT), round((y1 - y0) * SVG_UNIT)

    def px(x: float, y: float) -> tuple[float, float]:
        return round((x - x0) * SVG_UNIT, 1), round((y1 - y) * SVG_UNIT, 1)

    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">'
        ),
        f'<rect class="background" width="{width}" height="{height}" fill="white"/>',
    ]
    edges = data["edges"]
    for xa, ya, xb, yb, color, line in zip(
        edges["x0"], edges["y0"], edges["x1"], edges["y1"], edges["color"], edges["width"]
    ):
        (ax, ay), (bx, by) = px(xa, ya), px(xb, yb)
        parts.append(f'<line x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" stroke="{color}" stroke-width="{line}"/>')
    for x, y in zip(data["halo"]["x"], data["halo"]["y"]):
        cx, cy = px(x, y)
        parts.append(
            f'<circle class="halo" cx="{cx}" cy="{cy}" r="24" fill="{PALETTE["highlight"]}" fill-opacity="0.9"/>'
        )
    nodes = data["nodes"]
    for i, node in enumerate(nodes["node"]):
        cx, cy = px(nodes["x"][i], nodes["y"][i])
        half = nodes["size"][i] / 2
        style = f'fill="{nodes["fill"][i]}" stroke="{nodes["line"][i]}" stroke-width="{nodes["lw"][i]}"'
        title = f"<title>{escape(node)}</title>"
        if nodes["marker"][i] == "circle":
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{half:g}" {style}>{title}</circle>')
        else:
            parts.append(
                f'<rect x="{cx - half:g}" y="{cy - half:g}" width="{2 * half:g}" height="{2 * half:g}" '
                f"{style}>{title}</rect>"
            )
        ty = cy + half + 4
        anchor = "end" if nodes["align"][i] == "right" else "middle"
        turn = f' transform="rotate({-round(nodes["angle"][i] * 57.2958)} {cx} {ty})"' if nodes["angle"][i] else ""
        parts.append(
            f'<text x="{cx}" y="{ty}" text-anchor={quoteattr(anchor)} dominant-baseline="hanging" '
            f'font-size="{LABEL_PT}pt" font-weight="bold" fill="{PALETTE["text"]}" stroke="white" '
            f'stroke-width="4" stroke-opacity="0.85" paint-order="stroke"{turn}>'
            f"{escape(nodes['label'][i])}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
