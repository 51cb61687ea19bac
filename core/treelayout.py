"""A tidy layered layout for drawing an HLC tree.

Reingold & Tilford (1981), "Tidier drawings of trees", in the contour form:
each subtree is laid out on its own, then the subtrees of a node's children
are pushed together left to right as closely as their contours allow (at
least ``sep`` apart at every depth they share), and the parent is centred
over its first and last child. Depth gives the layer (``y = -depth``).

The properties a reader relies on hold by construction: nodes of one layer
never come closer than ``sep``, a parent sits above the middle of its
children, children keep the model's (notation) order left to right, and
mirror-image subtrees get mirror-image drawings.

Pure Python, no plotting import: :mod:`effdim.treedraw` turns the positions into an SVG
drawing, and the dashboard turns them into Bokeh glyphs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["tidy_layout", "tree_layout"]


def tidy_layout(
    root: str, children: Callable[[str], Sequence[str]], sep: float = 1.0
) -> dict[str, tuple[float, float]]:
    """Positions ``{node: (x, y)}`` of a rooted tree; ``y`` is minus the depth.

    ``children(node)`` lists a node's children in drawing order. The leftmost
    node is at ``x = 0``. Iterative (no recursion limit for deep trees).
    """
    # post-order without recursion
    order: list[str] = []
    stack = [root]
    kids: dict[str, list[str]] = {}
    while stack:
        node = stack.pop()
        order.append(node)
        kids[node] = list(children(node))
        stack.extend(kids[node])
    offset: dict[str, float] = {}  # x of a node relative to its parent
    # contour[node][d] = (leftmost x, rightmost x) at depth d below node, relative to node
    contour: dict[str, list[tuple[float, float]]] = {}
    for node in reversed(order):  # children before parents
        ks = kids[node]
        if not ks:
            contour[node] = [(0.0, 0.0)]
            continue
        merged: list[list[float]] = []
        placed: list[float] = []
        for kid in ks:
            kc = contour[kid]
            if not merged:
                shift = 0.0
            else:
                shift = max(merged[d][1] - kc[d][0] + sep for d in range(min(len(merged), len(kc))))
            placed.append(shift)
            for d, (lo, hi) in enumerate(kc):
                if d < len(merged):
                    merged[d][0] = min(merged[d][0], lo + shift)
                    merged[d][1] = max(merged[d][1], hi + shift)
                else:
                    merged.append([lo + shift, hi + shift])
        mid = (placed[0] + placed[-1]) / 2.0
        for kid, x in zip(ks, placed):
            offset[kid] = x - mid
        contour[node] = [(0.0, 0.0)] + [(lo - mid, hi - mid) for lo, hi in merged]
    pos: dict[str, tuple[float, float]] = {root: (0.0, 0.0)}
    for node in order:  # parents before children
        x, y = pos[node]
        for kid in kids[node]:
            pos[kid] = (x + offset[kid], y - 1.0)
    left = min(x for x, _ in pos.values())
    return {n: (x - left, y) for n, (x, y) in pos.items()}


def tree_layout(model, sep: float = 1.0) -> dict[str, tuple[float, float]]:
    """:func:`tidy_layout` of an :class:`effdim.HLCModel` from its root."""
    return tidy_layout(model.root, model.children, sep=sep)
