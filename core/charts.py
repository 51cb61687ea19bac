"""Small SVG charts of a fitted model, for the HTML report (:mod:`effdim.report`).

Plain SVG text, no plotting library, legible in print and to readers with
any colour vision:

* :func:`profile_panel` -- one item's profile as poLCA and Latent GOLD draw
  it: a group of bars per category of the item, one bar per class, the bar's
  height ``P(item = category | class)`` (:func:`effdim.profiles.profiles`).
  An item gets a panel of its own, so no line ever joins categories of
  different items; :func:`item_panels` draws every item's, for the report
  and the dashboard alike;
* :func:`share_bars` -- the class shares ``P(H = h)``
  (:func:`effdim.profiles.class_shares`) as labelled horizontal bars; its
  colours are the legend of the profile panels;
* :func:`mean_panel` -- a distal outcome's class means with their intervals
  (:mod:`effdim.threestep`); a categorical one is a :func:`profile_panel` with
  an interval on each bar, and :func:`class_legend` names its colours (no
  share bars stand beside it);
* :func:`probability_lines` -- a latent class regression's class probabilities
  along one covariate (:func:`effdim.regression.probability_curve`), one line
  per class, as poLCA's manual draws them (Linzer & Lewis 2011, Figure 3).

Classes are coloured from :data:`CLASS_COLORS`, the Okabe-Ito palette (Okabe
& Ito 2008, "Color Universal Design"), whose colours stay distinct under the
common colour-vision deficiencies; every value is also written out (bar
tooltips, the share labels, and the report's tables). All text passed in is
escaped here: column names and category labels come from the user's file.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CLASS_COLORS",
    "abbreviations",
    "class_color",
    "class_legend",
    "item_panels",
    "mean_panel",
    "probability_lines",
    "profile_panel",
    "share_bars",
]

#: Okabe-Ito colours for classes 1, 2, ... (blue, orange, bluish green, vermillion, sky blue,
#: reddish purple, yellow, black), the order that keeps the first few most distinct.
CLASS_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
TEXT = "#1b2631"
GRID = "#d5dbe1"
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
#: Rough width of one character at 12 px, to size and shorten labels without measuring text.
CHAR_PX = 6.8


def class_color(index: int) -> str:
    """The colour of class ``index`` (0-based); the palette repeats after eight classes."""
    return CLASS_COLORS[index % len(CLASS_COLORS)]


def _text(value: object) -> str:
    return html.escape(str(value), quote=True)


def _shorten(label: str, chars: int) -> str:
    return label if len(label) <= chars else label[: max(chars - 1, 1)] + "…"


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{_text(label)}" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'font-family="{FONT}" fill="{TEXT}">' + "".join(body) + "</svg>"
    )


def profile_panel(
    item: str,
    categories: Sequence[object],
    probabilities: Sequence[Sequence[float]],
    classes: Sequence[object],
    node: str,
    intervals: tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]] | None = None,
    title: str | None = None,
) -> str:
    """One item's profile: ``probabilities[c][j] = P(item = categories[j] | node = classes[c])``.

    A bar group per category (labelled under it), one bar per class in the
    class colours, a 0-1 axis with grid lines at quarters. The item's name
    is the panel's title, wrapped onto :data:`TITLE_LINES` lines; a category
    label is wrapped at spaces onto :data:`LABEL_LINES` lines under its group,
    else shortened and turned. Whatever is shortened is given in full in the
    tooltips (the title's, each label's and each bar's), and no label runs
    into its neighbour's room. ``intervals``: lower and upper bounds shaped
    as the probabilities, drawn as a whisker on each bar (none where NaN). ``title``: what the item asks
    (its variable label), the panel's title in place of its name (the name then leads the tooltip).
    """
    k, m = len(classes), len(categories)
    bars = k * m  # narrower bars when there are many, so a panel stays about a screen wide at most
    bar = 18 if bars <= 12 else 14 if bars <= 24 else 10 if bars <= 48 else 6 if bars <= 96 else 3
    group = k * bar + (2 if bar > 6 else 1) * (k - 1)
    gap = 18 if bars <= 96 else 8
    right, plot_h = 10, 150
    label_chars = max(int((group + gap - 6) / CHAR_PX), 3)
    wrapped = [_lines(str(c), label_chars, LABEL_LINES) for c in categories]
    turned = None in wrapped
    shown = [_shorten(str(c), 18) for c in categories] if turned else ["\n".join(lines) for lines in wrapped]
    reach = max(len(s) for s in shown) * CHAR_PX  # a turned label's length, reaching left and down
    left = max(34.0, reach * 0.82 - (gap + group) / 2 + 4) if turned else 34.0
    width = max(left + m * (group + gap) + right, 170)
    heading = str(item) if title is None else str(title)
    whole = heading if title is None else f"{item}: {title}"
    title = _lines(heading, int((width - 8) / (CHAR_PX * 1.1)), TITLE_LINES, cut=True)
    top = 12 + 15 * len(title)
    lines_below = max(s.count("\n") + 1 for s in shown)
    bottom = (22 + int(reach * 0.6)) if turned else 8 + 14 * lines_below
    height = top + plot_h + bottom
    body = [
        f"<title>{_text(item)}: P(category | {_text(node)})</title>",
        f'<text class="panel-title" x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="13" '
        f'font-weight="600"><title>{_text(whole)}</title>{_tspans(title, width / 2, 15)}</text>',
    ]

    def y_of(p: float) -> float:
        return top + plot_h * (1.0 - p)

    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(q)
        body.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{TEXT if q == 0 else GRID}" stroke-width="1"/>'
        )
        if q in (0.0, 0.5, 1.0):
            body.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{q:g}</text>')
    for j, category in enumerate(categories):
        x0 = left + gap / 2 + j * (group + gap)
        for c, name in enumerate(classes):
            p = float(probabilities[c][j])
            x = x0 + c * (bar + 2)
            bounds = "" if intervals is None else _bounds(intervals[0][c][j], intervals[1][c][j])
            body.append(
                f'<rect x="{x:.1f}" y="{y_of(p):.1f}" width="{bar}" height="{plot_h * p:.1f}" '
                f'fill="{class_color(c)}"><title>{_text(item)} = {_text(category)} | '
                f"{_text(node)} = {_text(name)}: {p:.3f}{bounds}</title></rect>"
            )
            if bounds:
                body.append(_whisker(x + bar / 2, y_of(intervals[0][c][j]), y_of(intervals[1][c][j]), bar / 3))
        cx, ly = x0 + group / 2, top + plot_h + 15
        turn = f' transform="rotate(-35 {cx:.1f} {ly:.1f})"' if turned else ""
        anchor = "end" if turned else "middle"
        body.append(
            f'<text class="category" x="{cx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" font-size="12"{turn}>'
            f"<title>{_text(category)}</title>{_tspans(shown[j].split(chr(10)), cx, 14)}</text>"
        )
    return _svg(width, height, body, f"profile of {item}")


def _bounds(lower: float, upper: float) -> str:
    """`` (95 % CI a to b)`` for a tooltip, or nothing where the interval is not defined."""
    return "" if lower != lower or upper != upper else f" (95 % CI {lower:.3f} to {upper:.3f})"


def _whisker(x: float, y_low: float, y_high: float, half: float) -> str:
    """A vertical interval at ``x`` with caps ``half`` wide, in the text colour."""
    return (
        f'<path d="M{x:.1f},{y_low:.1f}V{y_high:.1f}M{x - half:.1f},{y_low:.1f}H{x + half:.1f}'
        f'M{x - half:.1f},{y_high:.1f}H{x + half:.1f}" stroke="{TEXT}" stroke-width="1.2" fill="none"/>'
    )


def _ticks(low: float, high: float) -> list[float]:
    """About five round tick values covering ``[low, high]``."""
    span = high - low if high > low else abs(high) or 1.0
    raw = span / 4
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    first = math.floor(low / step) * step
    return [first + i * step for i in range(int(math.ceil((high - first) / step)) + 1)]


def mean_panel(
    outcome: str,
    means: Sequence[float],
    lower: Sequence[float],
    upper: Sequence[float],
    classes: Sequence[object],
    node: str,
) -> str:
    """A continuous outcome's class means, one dot per class in the class colours with its 95 % interval
    as a whisker, on an axis spanning the intervals (values in the tooltips)."""
    values = [float(v) for v in (*means, *lower, *upper) if v == v]
    ticks = _ticks(min(values), max(values))
    lo, hi = ticks[0], ticks[-1]
    left, right, plot_h, slot = 52, 12, 150, 44
    width = max(left + slot * len(classes) + right, 170)
    title = _lines(str(outcome), int((width - 8) / (CHAR_PX * 1.1)), TITLE_LINES, cut=True)
    top = 12 + 15 * len(title)
    height = top + plot_h + 24

    def y_of(v: float) -> float:
        return top + plot_h * (hi - v) / (hi - lo if hi > lo else 1.0)

    body = [
        f"<title>{_text(outcome)}: mean per class of {_text(node)}</title>",
        f'<text class="panel-title" x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="13" '
        f'font-weight="600"><title>{_text(outcome)}</title>{_tspans(title, width / 2, 15)}</text>',
    ]
    for t in ticks:
        y = y_of(t)
        body.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t:g}</text>')
    for c, (name, mean) in enumerate(zip(classes, means)):
        x = left + slot * (c + 0.5)
        bounds = _bounds(lower[c], upper[c])
        if bounds:
            body.append(_whisker(x, y_of(lower[c]), y_of(upper[c]), 6))
        body.append(
            f'<circle cx="{x:.1f}" cy="{y_of(mean):.1f}" r="5" fill="{class_color(c)}">'
            f"<title>{_text(node)} = {_text(name)}: {_text(outcome)} {mean:.4g}{bounds}</title></circle>"
        )
        body.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle" font-size="12">{_text(name)}</text>'
        )
    return _svg(width, height, body, f"class means of {outcome}")


def probability_lines(
    covariate: str, values: Sequence[float], probabilities: Any, classes: Sequence[object], node: str, held: str = ""
) -> str:
    """Each class's probability (rows of ``probabilities``: one per value, one column per class) along a
    numeric ``covariate``, a line per class in the class colours with its label at the right end; ``held``
    says where the other covariates are held (a caption). A point's tooltip gives its numbers."""
    values = [float(v) for v in values]
    left, right, top, plot_w, plot_h = 44, 64, 30, 300, 170
    width, height = left + plot_w + right, top + plot_h + 40 + (16 if held else 0)
    lo, hi = min(values), max(values)
    x_ticks = [t for t in _ticks(lo, hi) if lo - 1e-9 <= t <= hi + 1e-9] or [lo, hi]

    def x_of(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo if hi > lo else 1.0)

    def y_of(p: float) -> float:
        return top + plot_h * (1 - p)

    body = [
        f"<title>P({_text(node)} = class | {_text(covariate)})</title>",
        f'<text x="{left + plot_w / 2:.1f}" y="16" text-anchor="middle" font-size="13" font-weight="600">'
        f"{_text(_shorten(f'{node} by {covariate}', 48))}</text>",
    ]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(t)
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t:g}</text>')
    for t in x_ticks:
        x = x_of(t)
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 15}" text-anchor="middle" font-size="11">{t:g}</text>')
    body.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 31}" text-anchor="middle" font-size="12">'
        f"{_text(_shorten(covariate, 48))}</text>"
    )
    if held:
        body.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 47}" text-anchor="middle" font-size="11" '
            f'fill="#52606d">{_text(_shorten(held, 60))}</text>'
        )
    for c, name in enumerate(classes):
        points = [(x_of(v), y_of(float(row[c]))) for v, row in zip(values, probabilities)]
        path = "M" + "L".join(f"{x:.1f},{y:.1f}" for x, y in points)
        body.append(
            f'<path d="{path}" stroke="{class_color(c)}" stroke-width="2.2" fill="none">'
            f"<title>{_text(node)} = {_text(name)}</title></path>"
        )
        for v, (x, y), row in zip(values, points, probabilities):
            body.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{class_color(c)}"><title>{_text(covariate)} '
                f"{v:g}: P({_text(node)} = {_text(name)}) = {float(row[c]):.3f}</title></circle>"
            )
    ends = sorted((y_of(float(probabilities[-1][c])), c) for c in range(len(classes)))
    placed: list[float] = []
    for y, c in ends:  # the labels at the lines' right ends, pushed apart so that none covers another
        y = max(y, placed[-1] + 13) if placed else y
        placed.append(y)
        body.append(
            f'<text x="{left + plot_w + 6:.1f}" y="{y + 4:.1f}" font-size="12" fill="{class_color(c)}" '
            f'font-weight="600">{_text(_shorten(f"{node} = {classes[c]}", 9))}</text>'
        )
    return _svg(width, height, body, f"class probabilities of {node} by {covariate}")


def class_legend(classes: Sequence[object], node: str) -> str:
    """A swatch of each class's colour with ``node = class`` beside it, in one row: the legend of a
    :func:`profile_panel` drawn without :func:`share_bars` beside it."""
    body, x = [], 0.0
    for c, name in enumerate(classes):
        label = f"{node} = {name}"
        body.append(f'<rect x="{x:.1f}" y="3" width="12" height="12" fill="{class_color(c)}"/>')
        body.append(f'<text x="{x + 16:.1f}" y="14" font-size="12">{_text(label)}</text>')
        x += 16 + len(label) * CHAR_PX + 12
    return _svg(max(x - 12, 1), 18, body, f"colours of the classes of {node}")


#: Lines an item's name may take as a panel's title, and a category label under its bars.
TITLE_LINES, LABEL_LINES = 2, 3


def _lines(label: str, chars: int, most: int, *, cut: bool = False) -> list[str] | None:
    """``label`` broken at spaces into lines of at most ``chars`` characters, at most ``most`` of them; else
    ``None``, or with ``cut`` the first ``most`` lines, the last ending in "…" (a word longer than a line is
    cut too)."""
    lines: list[str] = []
    for word in label.split() or [""]:
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) <= most and all(len(line) <= chars for line in lines):
        return lines
    if not cut:
        return None
    kept = [_shorten(line, chars) for line in lines[:most]]
    if len(lines) > most:
        kept[-1] = _shorten(kept[-1].rstrip("…") + " " + lines[most], chars)
        if not kept[-1].endswith("…"):
            kept[-1] = _shorten(kept[-1] + "…", chars)
    return kept


def _tspans(lines: Sequence[str], x: float, step: float) -> str:
    """Lines of one SVG text, each a ``tspan`` ``step`` pixels below the one before."""
    return "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else step}">{_text(line)}</tspan>' for i, line in enumerate(lines)
    )


def item_panels(table: Any, classes: Sequence[object], node: str, titles: dict | None = None) -> list[str]:
    """:func:`profile_panel` of every item of ``table`` (:func:`effdim.profiles.profile_table`, its columns
    the classes), in the table's order: what the report and the dashboard draw. ``titles``: item -> what it
    asks (a variable label), the panel's title in place of the item's name."""
    panels = []
    for item in dict.fromkeys(table.index.get_level_values("item")):
        rows = table.loc[item]
        probabilities = rows[list(classes)].to_numpy().T
        title = (titles or {}).get(item)
        panels.append(profile_panel(item, list(rows.index), probabilities, classes, node, title=title))
    return panels


def abbreviations(names: Sequence[str], chars: int) -> list[str]:
    """``names`` shortened to ``chars`` characters each ("…" where cut), told apart by a number where two
    would read alike, for an axis that has room for no more; the full names go in its tooltips.

    >>> abbreviations(["I am satisfied with my job", "I am satisfied with my pay", "Age"], 14)
    ['I am satisfie… (1)', 'I am satisfie… (2)', 'Age']
    """
    short = [_shorten(str(name), chars) for name in names]
    seen: dict[str, int] = {}
    for s in short:
        seen[s] = seen.get(s, 0) + 1
    count: dict[str, int] = {}
    out = []
    for s in short:
        if seen[s] > 1:
            count[s] = count.get(s, 0) + 1
            s = f"{s} ({count[s]})"
        out.append(s)
    return out


def share_bars(node: str, classes: Sequence[object], shares: Sequence[float]) -> str:
    """The shares of a hidden node's classes as horizontal bars, each labelled with its percentage.

    Bar ``c`` has class ``c``'s colour, so the chart is also the legend of
    :func:`profile_panel`.
    """
    label_w = max(len(f"{node} = {c}") for c in classes) * CHAR_PX + 14
    bar_w, row_h = 220, 22
    width = label_w + bar_w + 70
    height = row_h * len(classes) + 6
    body = [f"<title>shares of {_text(node)}</title>"]
    for c, (name, share) in enumerate(zip(classes, shares)):
        y = 4 + c * row_h
        body.append(
            f'<text x="{label_w - 8:.1f}" y="{y + 14}" text-anchor="end" font-size="12">'
            f"{_text(node)} = {_text(name)}</text>"
        )
        body.append(
            f'<rect x="{label_w:.1f}" y="{y + 3}" width="{bar_w}" height="{row_h - 8}" fill="none" stroke="{GRID}"/>'
        )
        body.append(
            f'<rect x="{label_w:.1f}" y="{y + 3}" width="{bar_w * float(share):.1f}" height="{row_h - 8}" '
            f'fill="{class_color(c)}"/>'
        )
        body.append(
            f'<text x="{label_w + bar_w + 6:.1f}" y="{y + 14}" font-size="12" '
            f'font-variant-numeric="tabular-nums">{100 * float(share):.1f} %</text>'
        )
    return _svg(width, height, body, f"class shares of {node}")
