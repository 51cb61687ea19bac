"""One analysis as a self-contained HTML page a researcher can keep, print or send.

:func:`report_html` turns a fitted model (:class:`effdim.FitResult`),
and the sweep or hill climb it came from, into one HTML document;
:func:`write_report` writes it to a file. ``effdim fit|sweep|search ...
--report FILE.html`` calls them, and so can the dashboard. The page has:

* the command that reproduces it (:func:`command_line`);
* the data: rows, unique patterns, and per column its categories with their
  counts and its missing cells;
* the model: the tree (:mod:`effdim.treedraw`), its notation, ``ds``, ``de``,
  ``dc`` and the local LC table (:func:`effdim.dimensions.dimensions`;
  Corollary 4.1, docs/theory.md);
* the selection: every criterion (:data:`effdim.scores.SCORES`) of every
  model of the sweep or climb with each criterion's pick (the one tie rule of
  :func:`effdim.scores.best`, caveats of :func:`effdim.search.pick_caveats`),
  or the fit's own scores on both scales;
* per hidden node the class shares and the profiles, one panel per item
  (:mod:`effdim.charts`), with the numbers in a table;
* the fit statistics with ``df = dc - de`` beside the ``dc - ds`` other tools
  report (:mod:`effdim.diagnostics`), EM's convergence and identification at
  the estimate;
* the bivariate residuals, a table shaded by value with the value in each cell;
* standard errors of the profiles' probabilities in brackets
  (:mod:`effdim.standard_errors`, the fit's default method), and for a latent
  class regression, in place of the fit statistics and residuals of models
  without covariates, its coefficients with standard errors, z, p and odds
  ratios and the class probabilities along each covariate
  (:mod:`effdim.regression`);
* with distal outcomes (:mod:`effdim.threestep`), each outcome's class means
  or category probabilities with their intervals, drawn and tabled, and the
  Wald test of their equality.

The page makes no request of any kind: styles are inline, figures are inline
SVG, there is no script and no web font, and its Content-Security-Policy
forbids loading anything. Every text that comes from the user (column names,
category labels, file and node names, the command) is HTML-escaped.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .charts import class_legend, item_panels, mean_panel, probability_lines, profile_panel, share_bars
from .dimensions import LocalDimensions
from .errors import EffdimError, InvalidArgument
from .limits import SizeLimitError
from .notation import format_model
from .priors import DirichletPrior
from .profiles import profile_table
from .scores import FIT_SCORES, SCORES, TIE_TOLERANCE, best
from .search import pick_caveats
from .threestep import METHODS, DistalOutcome, ThreeStepRegression
from .threestep.result import se_words
from .treedraw import model_data, tree_svg

__all__ = [
    "enumeration_html",
    "MAX_CATEGORIES_LISTED",
    "MAX_PROFILE_NODES",
    "command_line",
    "curves_html",
    "distal_html",
    "report_html",
    "write_report",
]

#: Profiles are drawn for this many hidden nodes (the root first, then in pre-order); the others are named.
MAX_PROFILE_NODES = 6
#: The data summary lists this many categories of a column, then says how many more there are.
MAX_CATEGORIES_LISTED = 12
#: Bivariate residuals at or above this value get the full shade (Latent GOLD flags 3.84, chi-square 1 df at 5 %).
BVR_FULL_SHADE = 4.0

CSS = """
:root { --ink: #1b2631; --muted: #52606d; --line: #d5dbe1; --band: #f3f6f9; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: white;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 40px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 30px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--accent); }
h3 { font-size: 1.05em; margin: 18px 0 6px; }
p { margin: 6px 0; }
.meta, .note { color: var(--muted); font-size: 0.92em; }
.warn { color: #8a4b00; font-size: 0.92em; }
nav { margin: 10px 0 0; font-size: 0.92em; }
nav a { color: var(--accent); margin-right: 14px; text-decoration: none; }
pre.command { background: var(--band); border: 1px solid var(--line); border-radius: 4px; padding: 10px 12px;
  white-space: pre-wrap; word-break: break-all; font: 13.5px/1.4 ui-monospace, "SFMono-Regular", Menlo,
  Consolas, monospace; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.95em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 0.92em; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.key td { font-weight: 600; }
td.pick { background: #dbeaf5; font-weight: 700; }
td.pick::after { content: " \\2605"; color: var(--accent); }
th.shown { border-bottom: 3px solid var(--accent); }
dl.numbers { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; margin: 8px 0; }
dl.numbers dt { color: var(--muted); }
dl.numbers dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.model-row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 6px 0; }
figure.tree { display: table; }
figure.tree figcaption { display: table-caption; caption-side: bottom; }
figure.tree svg { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 0.88em; }
.node-row { display: flex; flex-wrap: wrap; gap: 0 28px; align-items: flex-start; }
.node-figures { flex: 1 1 560px; }
.panels { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 6px 14px; margin: 6px 0; }
.panels svg, .shares svg { display: block; max-width: 100%; height: auto; }
table.bvr td.num { min-width: 4.2em; text-align: center; }
footer { margin-top: 36px; color: var(--muted); font-size: 0.85em; border-top: 1px solid var(--line);
  padding-top: 8px; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  nav { display: none; }
  h2 { break-after: avoid; }
  section.block, figure, .panels svg, table { break-inside: avoid; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""

#: No request of any kind: nothing may be loaded; inline styles and inline data images only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# ------------------------------------------------------------------ helpers
class _Html(str):
    """Markup built here (already escaped); every other value is escaped when written."""


def _e(value: Any) -> str:
    return value if isinstance(value, _Html) else html.escape(str(value), quote=True)


def _cls(classes: str) -> str:
    """`` class="..."`` for a tag, or nothing."""
    return f' class="{classes}"' if classes else ""


def _num(value: Any, digits: int = 4) -> str:
    """A number as tables print it: integers plain, floats with ``digits`` decimals, NaN/None "n/a"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return f"{float(value):.{digits}f}"


def _count(value: float) -> str:
    """A (possibly weighted) count: whole numbers without decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _table(
    headers: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    numeric: Sequence[bool] | None = None,
    cls: str = "",
    row_classes: Sequence[str] | None = None,
) -> _Html:
    """An HTML table; ``numeric`` columns right-aligned with tabular figures; cells escaped unless ``_Html``.

    A cell may be a ``(value, css_class)`` pair.
    """
    numeric = list(numeric) if numeric is not None else [False] * len(headers)
    head = "".join(f"<th{_cls('num' if n else '')}>{_e(h)}</th>" for h, n in zip(headers, numeric))
    body = []
    for i, row in enumerate(rows):
        cells = []
        for value, n in zip(row, numeric):
            extra = ""
            if isinstance(value, tuple):
                value, extra = value
            classes = " ".join(c for c in ("num" if n else "", extra) if c)
            cells.append(f"<td{_cls(classes)}>{_e(value)}</td>")
        rc = row_classes[i] if row_classes else ""
        body.append(f"<tr{_cls(rc)}>{''.join(cells)}</tr>")
    return _Html(
        f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}" class="block"><h2>{_e(title)}</h2>{body}</section>'


def _p(text: Any, cls: str = "") -> str:
    return f"<p{_cls(cls)}>{_e(text)}</p>" if text else ""


# ------------------------------------------------------------------ command
def command_line(subcommand: str, data: str, options: Mapping[str, Any]) -> str:
    """The ``effdim`` command that reproduces an analysis, quoted for a POSIX shell.

    ``options`` maps option names (``"--model"``, ``"--seed"``, ...) to values
    in order: ``None`` and ``False`` leave the option out, ``True`` writes it
    as a flag, a list repeats it once per item.

    >>> command_line("fit", "my data.csv", {"--model": "3:2,2,2", "--seed": 7, "--map": ["O1=a b"], "--prior": None})
    "effdim fit 'my data.csv' --model 3:2,2,2 --seed 7 --map 'O1=a b'"
    """
    words = ["effdim", subcommand, str(data)]
    for name, value in options.items():
        if value is None or value is False:
            continue
        if value is True:
            words.append(name)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            words += [name, str(item)]
    return shlex.join(words)


# ------------------------------------------------------------------ sections
def _data_section(data: Any, leaf_of: Mapping[str, str]) -> str:
    cells = data.n_rows * len(data.columns)
    missing = data.n_missing
    summary = (
        f"{_e(data.source or 'data')}: <b>{_count(data.n_rows)}</b> rows, {data.n_patterns} distinct "
        f"response patterns, <b>{len(data.columns)}</b> columns, "
        f"{_count(missing)} missing cells ({100 * missing / cells if cells else 0:.1f} %)."
    )
    if data.count_column:
        summary += f" Rows are weighted by the count column {_e(repr(data.count_column))}."
    rows = []
    weights = np.asarray(data.counts, dtype=float)
    for j, column in enumerate(data.columns):
        codes = np.asarray(data.patterns[:, j])
        seen = codes >= 0
        counts = np.bincount(codes[seen], weights=weights[seen], minlength=len(data.states[j]))
        listed = [f"{state} ({_count(c)})" for state, c in zip(data.states[j], counts)]
        if len(listed) > MAX_CATEGORIES_LISTED:
            listed = listed[:MAX_CATEGORIES_LISTED] + [f"… {len(listed) - MAX_CATEGORIES_LISTED} more"]
        described = data.variable_labels.get(column)
        rows.append(
            (
                f"{column}: {described}" if described else column,
                leaf_of.get(column, "not in the model"),
                len(data.states[j]),
                ", ".join(listed),
                _count(weights[~seen].sum()),
            )
        )
    table = _table(
        ["column", "model leaf", "categories", "category (rows)", "missing"],
        rows,
        numeric=[False, False, True, False, True],
        cls="data",
    )
    return _section("data", "Data", f"<p>{summary}</p>{table}")


def _dimension_report(model: Any):
    from .dimensions import bounds_report, dimensions

    try:
        return dimensions(model, seed=0)
    except SizeLimitError as err:
        return bounds_report(model, f"not computed: {err}")


def _model_section(fit: Any) -> str:
    model = fit.model
    dims = _dimension_report(model)
    labels = {
        leaf: f"{fit.labels.name(leaf)} : {model.card(leaf)}"
        for leaf in model.observed
        if fit.labels.name(leaf) != leaf
    }
    drawing = tree_svg(model_data(model, labels=labels))
    de = "?" if dims.de is None else str(dims.de)
    gap = "?" if dims.de is None else str(dims.ds - dims.de)
    numbers = [
        ("notation", _Html(f"<code>{_e(format_model(model))}</code>")),
        ("regular", "yes" if dims.regular else "no"),
        ("ds (standard dimension)", dims.ds),
        (
            "de (effective dimension)",
            f"{de} ({dims.de_status}; {dims.de_basis})" if dims.de is not None else f"? ({dims.de_method})",
        ),
        ("dc (complete dimension)", dims.dc),
        ("ds − de", gap),
    ]
    if dims.db is not None:
        numbers += [("dp (pairwise bound)", dims.dp), ("db = min(ds, dc, dp)", dims.db)]
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in numbers)
    caption = "Hidden nodes are circles, observed nodes squares, each labelled name : states" + (
        "; leaves show the data column they read." if labels else "."
    )
    body = (
        f'<div class="model-row"><figure class="tree">{drawing}<figcaption>{_e(caption)}</figcaption>'
        f'</figure><dl class="numbers">{dl}</dl></div>'
    )
    body += "".join(_p(f"irregular: {v}", "warn") for v in dims.violations)
    if dims.regularized:
        body += _p(f"regular equivalent: {dims.regularized}", "note")
    headers, numeric = zip(*LocalDimensions.TABLE_COLUMNS)
    body += "<h3>Local LC models</h3>"
    body += _table(
        list(headers),
        [r.table_row() for r in dims.local],
        numeric=list(numeric),
        cls="local",
    )
    if len(dims.local) > 1 and dims.de is not None and dims.regular:
        body += _p(f"Corollary 4.1: ds − de = sum of the local deficits = {dims.deficit_sum}.", "note")
    return _section("model", "Model", body)


def _criteria_rows(fits: Sequence[Any], picks: Mapping[str, Any], names: Sequence[str]) -> list[list[Any]]:
    """Rows of the selection table: log-likelihood, ds, de, then every criterion of ``names``; the pick of each
    marked."""
    rows = [
        ["log-likelihood", *[_num(f.loglik, 2) for f in fits], ""],
        ["ds", *[f.ds for f in fits], ""],
        ["de", *[f.de for f in fits], ""],
    ]
    for name in names:
        c = SCORES[name]
        chosen = picks.get(name)
        cells = [(_num(f.score(name), 2), "pick") if f is chosen else _num(f.score(name), 2) for f in fits]
        rows.append([c.label, *cells, "" if chosen is None else _pick_label(chosen, fits)])
    return rows


def _pick_label(chosen: Any, fits: Sequence[Any]) -> str:
    return str(chosen.card) if chosen.card is not None else f"step {list(fits).index(chosen)}"


def _selection_section(fit: Any, sweep: Sequence[Any] | None, climb: Any, pick: str | None) -> str:
    prior = DirichletPrior.parse(fit.scores.cs_prior).label
    scale = (
        f"Scores are on the paper's scale, log-likelihood − penalty: <b>higher is better</b>. Ties within "
        f"{TIE_TOLERANCE:g} nats per row go to the smaller model. CS and CS+ use the Dirichlet prior "
        f"{_e(prior)}."
    )
    if sweep:
        fits = list(sweep)
        node = next(
            (h for h in fits[0].model.hidden if fits[0].model.card(h) != fits[-1].model.card(h)), fits[0].model.root
        )
        picks = {name: best(fits, name) for name in SCORES}
        headers = ["criterion", *[f"|{node}| = {f.card}" for f in fits], "pick"]
        shown = _same_fit_index(fit, fits)
        intro = (
            f"Every cardinality of {_e(node)} from {fits[0].card} to {fits[-1].card}, the other nodes as in "
            f"<code>{_e(format_model(fit.model))}</code>; ★ marks each criterion's pick."
        )
        caveats = {name: pick_caveats(f, fits) for name, f in picks.items()}
        notes = [f"{SCORES[name].label}: {'; '.join(said)}" for name, said in caveats.items() if said]
        title = "Sweep"
    elif climb is not None:
        fits = list(climb.path)
        picks = {climb.score: climb.best}
        headers = [
            "criterion",
            *[_Html(f"step {i}<br><code>{_e(format_model(f.model))}</code>") for i, f in enumerate(fits)],
            "pick",
        ]
        shown = _same_fit_index(fit, fits)
        label = SCORES[climb.score].label
        intro = (
            f"Hill climbing by {_e(label)} over the hidden cardinalities (Section 6 of the paper): each step "
            f"raises the one cardinality that raises {_e(label)} most; {len(climb.tried)} models were fitted. "
            f"The other criteria are shown for the models the climb visited."
        )
        caveats = pick_caveats(climb.best)
        notes = [f"{label}: {'; '.join(caveats)}"] if caveats else []
        title = "Hill climb"
    else:
        rows = [
            [c.label, c.formula, _num(fit.score(name)), _num(c.deviance(fit.score(name)))]
            for name, c in ((name, SCORES[name]) for name in FIT_SCORES)
        ]
        rows.insert(0, ["log-likelihood", "", _num(fit.loglik), _num(-2 * fit.loglik)])
        table = _table(
            ["criterion", "formula (N rows)", "score (higher is better)", "−2LL + penalty (lower is better)"],
            rows,
            numeric=[False, False, True, True],
            cls="scores",
            row_classes=["key"] + [""] * len(FIT_SCORES),
        )
        body = f"<p>{scale}</p>{table}" + _p(
            "The right-hand column is the scale poLCA, Mplus and Latent GOLD print.", "note"
        )
        return _section("selection", "Scores", body)
    names = list(SCORES) if sweep else list(FIT_SCORES)  # the sBIC is a score of a sweep's chain only
    rows = _criteria_rows(fits, picks, names)
    table = _table(
        headers,
        rows,
        numeric=[False, *[True] * len(fits), True],
        cls="selection",
        row_classes=["key", "", ""] + [""] * len(names),
    )
    if shown is not None:  # underline the column of the model detailed below
        cell = _e(headers[shown + 1])
        table = _Html(table.replace(f'<th class="num">{cell}</th>', f'<th class="num shown">{cell}</th>', 1))
    chosen = "the model detailed below" if pick is None else f"the {SCORES[pick].label} pick, detailed below"
    body = f"<p>{intro}</p><p>{scale}</p>{table}"
    if shown is not None:
        body += _p(f"The underlined column is {chosen}: {format_model(fit.model)}.", "note")
    body += "".join(_p(f"caveat, {n}", "warn") for n in notes)
    return _section("selection", title, body)


def _enumeration_section(table: Any) -> str:
    return _section("enumeration", "Class enumeration", enumeration_html(table))


def enumeration_html(table: Any) -> str:
    """The class-enumeration table (:class:`effdim.enumeration.EnumerationTable`) as a paper prints it, each
    header explained on hover, with its caption, picks and notes: the report's "Class enumeration" section,
    which the dashboard shows too."""
    from .enumeration import COLUMNS

    headers = [_Html(f'<abbr title="{_e(c.means)}">{_e(c.label)}</abbr>') for c in COLUMNS]
    body = _p(table.caption(), "note")
    body += _table(headers, table.text_rows(), numeric=[True] * len(COLUMNS), cls="enumeration")
    picks = ", ".join(f"{label} {k}" for label, k in table.picks().items() if k is not None)
    body += _p(f"Picks: {picks}.", "picks")
    body += "".join(_p(note, "warn") for note in table.notes)
    return body


def _same_fit_index(fit: Any, fits: Sequence[Any]) -> int | None:
    """Where ``fit`` is among ``fits`` (the same model; a relabelled fit is a new object)."""
    for i, f in enumerate(fits):
        if f is fit or (f.model == fit.model and abs(f.loglik - fit.loglik) <= 1e-9 * max(1.0, abs(fit.loglik))):
            return i
    return None


def _errors(fit: Any) -> Any:
    """The fit's standard errors by its default method, or ``None`` where they cannot be had (a note says
    why in the section that shows them)."""
    try:
        return fit.standard_errors()
    except EffdimError:
        return None


def _with_error(value: float, se: float, flag: str) -> str:
    """A probability with its standard error in brackets, or why it has none."""
    if flag:
        return f"{value:.3f} ({flag})"
    return f"{value:.3f}" if se != se else f"{value:.3f} ({se:.3f})"


def _profile_cells(fit: Any, node: str, wide: Any, se: Any) -> list:
    """The profile table's rows: each probability with its standard error where the item is a child of
    ``node`` (its own table; the others are sums over the tree, shown without)."""
    labels, model = fit.labels, fit.model
    children = {labels.name(c): c for c in model.children(node) if not model.is_hidden(c)}
    rows = []
    for (item, category), values in zip(wide.index, wide.to_numpy().tolist()):
        leaf = children.get(item)
        cells = []
        for k, v in enumerate(values):
            if se is None or leaf is None:
                cells.append(_num(v, 3))
                continue
            c = next(j for j in range(model.card(leaf)) if str(labels.state(leaf, j)) == str(category))
            cells.append(_with_error(v, float(se.tables[leaf][k, c]), se.flags[leaf][k, c]))
        rows.append((item, category, *cells))
    return rows


def _profiles_section(fit: Any) -> str:
    model = fit.model
    shares = fit.class_shares()
    se = _errors(fit)
    hidden = list(model.hidden)
    drawn, skipped = hidden[:MAX_PROFILE_NODES], hidden[MAX_PROFILE_NODES:]
    body = _p(
        "P(item = category | class): one panel per item, a group of bars per category, one bar per class "
        "(the colours of the class shares). Hover a bar for its value; the table beside or below gives them all.",
        "note",
    )
    for node in drawn:
        name = fit.labels.name(node)
        rows = shares[shares["node"] == name]
        classes, values = list(rows["state"]), list(rows["share"])
        wide = profile_table(fit.profiles(node))
        panels = item_panels(wide, classes, name, fit.labels.described())
        numbers = _table(
            ["item", "category", *[f"{name} = {c}" for c in wide.columns]],
            _profile_cells(fit, node, wide, se),
            numeric=[False, False, *[True] * len(wide.columns)],
            cls="profiles",
        )
        title = f"{name}" + (" (root)" if node == model.root else "")
        body += (
            f'<h3>Classes of {_e(title)}</h3><div class="node-row"><div class="node-figures">'
            f'<div class="shares">{share_bars(name, classes, values)}</div>'
            f'<div class="panels">{"".join(panels)}</div></div>{numbers}</div>'
        )
    if skipped:
        body += _p(
            f"Profiles of {', '.join(fit.labels.name(h) for h in skipped)} are not drawn (more than "
            f"{MAX_PROFILE_NODES} hidden nodes); fit.profiles(node) in Python gives them.",
            "note",
        )
    body += _p("Hidden states are numbered by decreasing share; effdim fit --order NODE=2,1,3 renumbers them.", "note")
    if fit.case is not None:
        body += _p(_rows_text(fit.rows_json()), "note")
    if se is not None:
        body += _p(f"In brackets: standard errors ({_SE_WORDS[se.method]}).", "note")
        body += "".join(_p(n, "warn") for n in se.notes())
    else:
        body += _p("No standard errors: the model has too many parameters for their information matrix.", "note")
    return _section("profiles", "Classes and profiles", body)


def _rows_text(rows: dict) -> str:
    """Which rows a fit with covariates or sampling weights used (:meth:`effdim.FitResult.rows_json`), and the
    ``N`` of its scores."""
    left = [
        f"{_count(rows['left_out_missing_covariate'])} left out for a missing covariate",
        *(
            [f"{_count(rows['left_out_missing_or_zero_weight'])} for a missing or zero weight"]
            if rows["weights"]
            else []
        ),
    ]
    text = f"{_count(rows['n_used'])} of {_count(rows['n_input'])} rows used ({', '.join(left)})."
    if rows["weights"]:
        text += (
            f" Weighted by the sampling weights in {rows['weights']}, rescaled to sum to the rows used: the "
            f"log-likelihood is the weighted pseudo-log-likelihood and every score uses N = {_count(rows['n_used'])}."
        )
    return text


_SE_WORDS = {
    "observed": "observed information, minus the Hessian of the log-likelihood",
    "empirical": "empirical information, the outer product of the scores, as poLCA",
    "robust": "robust sandwich, for sampling weights",
}


def curves_html(curves: Sequence[Any], classes: Sequence[object], node: str) -> str:
    """The figures of a latent class regression's :class:`effdim.regression.Curve` s, as the report and the
    dashboard draw them: a numeric covariate as a line per class (:func:`effdim.charts.probability_lines`), a
    categorical one as bars per category (:func:`effdim.charts.profile_panel`) with the classes' legend."""
    figures = []
    for curve in curves:
        if curve.categorical:
            figures.append(
                profile_panel(curve.column, curve.values, curve.probabilities.T, classes, node)
                + class_legend(classes, node)
            )
        else:
            figures.append(
                probability_lines(curve.column, curve.values, curve.probabilities, classes, node, curve.held_text())
            )
    return "".join(figures)


def _lcr_section(fit: Any) -> str:
    """A latent class regression: its coefficients with standard errors, z, p and odds ratios, and the
    class probabilities along each covariate (numbers as lines, categories as bars), and the rows used."""
    root = fit.labels.name(fit.model.root)
    table = fit.coefficient_table() if _errors(fit) is not None else None
    refs = fit.design.references
    body = _p(
        f"The classes of {root} as a multinomial logit on {fit.design.formula}: the log odds of each class "
        f"against class 1 (the largest) rise by the coefficient per unit of a covariate"
        + (
            "; a categorical covariate against its reference category ("
            + ", ".join(f"{c}: {v}" for c, v in refs.items())
            + ")."
            if refs
            else "."
        ),
        "note",
    )
    if table is not None:
        body += _table(
            ["term", "class", "coefficient", "SE", "z", "p", "odds ratio", "95 % interval"],
            [
                (
                    r["term"],
                    f"{root} = {r['class']}",
                    _num(r["coefficient"]),
                    r["flag"] or _num(r["se"]),
                    _num(r["z"], 3),
                    "< 0.0001" if r["p"] < 1e-4 else _num(r["p"]),
                    _num(r["odds_ratio"], 3),
                    _interval(r["or_low"], r["or_high"]),
                )
                for r in table.to_dict("records")
            ],
            numeric=[False, False, True, True, True, True, True, True],
            cls="coefficients",
        )
    classes = list(range(1, fit.model.card(fit.model.root) + 1))
    body += f'<div class="panels">{curves_html(fit.probability_curves(), classes, root)}</div>'
    body += _p(
        "Fit statistics of the answer patterns (G², bivariate residuals) are for models without covariates: "
        "compare this model with the one without covariates by their log-likelihoods.",
        "note",
    )
    info = fit.restarts
    body += _p(
        f"EM: {fit.starts_sentence()}; {info['n_iter']} steps, "
        f"{'converged' if info['converged'] else 'stopped at the step limit'}.",
        "note",
    )
    body += "".join(_p(f"⚠ {w}", "warn") for w in fit.em.convergence_notes())
    return _section("regression", "Latent class regression", body)


def _fit_section(fit: Any, bootstrap: Any) -> str:
    s = fit.fit_statistics()
    try:
        ident = fit.identification()
    except EffdimError as err:  # too many parameters for the SVD at the estimate
        ident = err
    root = fit.labels.name(fit.model.root)
    rows = [
        ("log-likelihood", _num(fit.loglik), f"N = {_count(fit.n)} rows"),
        ("G²", _num(s.g2), f"p = {_num(s.p_g2)}"),
        ("X²", _num(s.x2), f"p = {_num(s.p_x2)}"),
        ("df = dc − de", s.df, "degrees of freedom with the effective dimension (Kocka & Zhang 2002)"),
        ("df = dc − ds", s.df_standard, "what poLCA, Latent GOLD and Mplus report"),
        ("cells, rows used", f"{s.cells}, {_count(s.n_used)}", "response patterns; complete rows"),
        ("expected counts below 5", f"{100 * s.share_expected_below_5:.0f} %", "of the cells"),
        ("entropy R²", _num(s.entropy_r2, 3), "1 = perfectly separated classes"),
        (f"mean posterior of the modal {root}", ", ".join(_num(v, 3) for v in s.avepp), "per class"),
    ]
    if bootstrap is not None:
        rows.insert(3, ("bootstrap p(G²)", _num(bootstrap.p_value), f"B = {bootstrap.B} parametric replicates"))
    if not isinstance(ident, EffdimError):
        rows.append(("Jacobian rank at the estimate", ident.rank, f"generic de = {fit.de}"))
    table = _table(["statistic", "value", ""], rows, numeric=[False, True, False], cls="fit")
    notes = [s.df_sentence(), *s.notes, str(ident) if isinstance(ident, EffdimError) else ident.sentence()]
    body = table + "".join(_p(n, "note") for n in notes if n)
    info = fit.restarts
    body += _p(
        f"EM: {fit.starts_sentence()}; {info['n_iter']} steps, "
        f"{'converged' if info['converged'] else 'stopped at the step limit'}.",
        "note",
    )
    warnings = (fit.em.convergence_notes() if fit.em is not None else []) + list(fit.degenerate)
    body += "".join(_p(f"⚠ {w}", "warn") for w in warnings)
    return _section("fit", "Fit statistics", body)


def _shade(value: float) -> tuple[str, str]:
    """Background and text colours of a residual: white to vermillion (#D55E00) at :data:`BVR_FULL_SHADE`."""
    t = min(max(value / BVR_FULL_SHADE, 0.0), 1.0)
    r, g, b = (round(255 + (c - 255) * t) for c in (0xD5, 0x5E, 0x00))
    return f"#{r:02x}{g:02x}{b:02x}", ("white" if t > 0.6 else "#1b2631")


def _residuals_section(fit: Any) -> str:
    bvr = fit.bivariate_residuals()
    names = list(bvr.index)
    head = "".join(f'<th class="num">{_e(n)}</th>' for n in names)
    rows = []
    for i, a in enumerate(names):
        cells = []
        for j in range(len(names)):
            v = float(bvr.iloc[i, j])
            if i == j or math.isnan(v):
                cells.append('<td class="num">–</td>')
                continue
            bg, fg = _shade(v)
            cells.append(
                f'<td class="num" style="background:{bg};color:{fg}" title="{_e(a)} – {_e(names[j])}">{v:.2f}</td>'
            )
        rows.append(f"<tr><th>{_e(a)}</th>{''.join(cells)}</tr>")
    table = (
        f'<div class="scroll"><table class="bvr"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    pairs = sorted(
        (
            (float(bvr.iloc[i, j]), names[i], names[j])
            for i in range(len(names))
            for j in range(i + 1, len(names))
            if not math.isnan(bvr.iloc[i, j])
        ),
        reverse=True,
    )
    body = (
        _p(
            "The Pearson statistic of each pair's two-way table against the model, per degree of freedom "
            "(Latent GOLD's BVR). Values well above 1 point to a dependence between the two items that the "
            f"hidden classes do not explain; the shade is full from {BVR_FULL_SHADE:g}.",
            "note",
        )
        + table
    )
    if pairs:
        body += _p("Largest: " + ", ".join(f"{a} – {b} {v:.2f}" for v, a, b in pairs[:3]) + ".", "note")
    return _section("residuals", "Bivariate residuals", body)


# ------------------------------------------------------------------ the page
def _distal_section(outcomes: Sequence[Any]) -> str:
    return _section("distal", "Distal outcomes", distal_html(outcomes)) if outcomes else ""


def distal_html(outcomes: Sequence[Any]) -> str:
    """Each distal outcome's class estimates (:class:`effdim.threestep.DistalOutcome`), drawn with their 95 %
    intervals (:mod:`effdim.charts`) and tabled, and its Wald test, after a note on the method: the report's
    "Distal outcomes" section, which the dashboard shows too. Every text from the data is escaped."""
    if not outcomes:
        return ""
    first = outcomes[0]
    error = first.classification
    body = _p(
        f"The three-step method, step 3 by the {METHODS[first.method]}; {error.assignment} assignment misclassifies "
        f"{100 * error.error_rate:.1f} % of the rows. Standard errors {se_words(first.se_method)}; intervals are "
        "95 % (for probabilities on the log-odds scale).",
        "note",
    )
    for outcome in outcomes:
        lower, upper = outcome.intervals()
        se = outcome.se
        node = outcome.node
        if outcome.kind == "continuous":
            figure = mean_panel(
                outcome.column, outcome.estimates[:, 0], lower[:, 0], upper[:, 0], outcome.classes, node
            )
            rows = [
                (
                    c,
                    _num(outcome.shares[i], 3),
                    _num(outcome.estimates[i, 0]),
                    _num(se[i, 0]),
                    _interval(lower[i, 0], upper[i, 0]),
                    _num(outcome.sd[i]),
                )
                for i, c in enumerate(outcome.classes)
            ]
            table = _table([node, "share", "mean", "SE", "95 % CI", "SD"], rows, [False, True, True, True, True, True])
            what = "means"
        else:
            figure = profile_panel(
                outcome.column, outcome.categories, outcome.estimates, outcome.classes, node, (lower, upper)
            ) + class_legend(outcome.classes, node)
            rows = [
                (
                    c if j == 0 else "",
                    str(category),
                    _num(outcome.estimates[i, j]),
                    _num(se[i, j]),
                    _interval(lower[i, j], upper[i, j]),
                )
                for i, c in enumerate(outcome.classes)
                for j, category in enumerate(outcome.categories)
            ]
            table = _table([node, "category", "probability", "SE", "95 % CI"], rows, [False, False, True, True, True])
            what = "probabilities"
        wald = outcome.wald
        test = (
            f"Wald test of equal {what} in every class: W = {wald.statistic:.3f}, df = {wald.df}, "
            f"p = {wald.p_value:.4g}."
            if wald.df
            else ""
        )
        missing = f", {_count(outcome.n_missing)} without a value" if outcome.n_missing else ""
        body += (
            f"<h3>{_e(outcome.column)} ({_e(outcome.kind)}; {_count(outcome.n)} rows with a value{_e(missing)})</h3>"
            f'<div class="node-row"><div class="panels">{figure}</div>{table}</div>'
            + _p(test)
            + "".join(_p(note, "warn") for note in outcome.notes)
        )
    return body


def _regression_section(found: Any) -> str:
    """A three-step regression's coefficients with standard errors, z, p and odds ratios, and each term's Wald test."""
    table = found.table()
    refs = ", ".join(f"{c} = {v}" for c, v in found.design.references.items())
    missing = f"; {_count(found.n_missing)} rows left out for a missing covariate" if found.n_missing else ""
    body = _p(
        f"Multinomial logit of the classes of {found.node} on {found.design.formula} by the three-step method, step 3 "
        f"by the {METHODS[found.method]}: log odds of each class against class 1"
        + (f" (reference categories: {refs})" if refs else "")
        + f". {_count(found.n)} rows{missing}; standard errors {se_words(found.se_method)}.",
        "note",
    )
    rows = [
        (
            r["term"],
            f"{found.node} = {r['class']}",
            _num(r["coefficient"]),
            _num(r["se"]),
            _num(r["z"], 2),
            _p_cell(r["p"]),
            _num(r["odds_ratio"], 3),
            _interval(r["or_low"], r["or_high"]),
        )
        for r in table.to_dict("records")
    ]
    body += _table(
        ["term", "class", "coefficient", "SE", "z", "p", "odds ratio", "95 % CI"],
        rows,
        [False, False, True, True, True, True, True, True],
    )
    body += "".join(
        _p(f"Wald test that {term} leaves the classes alike: W = {w:.3f}, df = {df}, p = {p:.4g}.")
        for term, w, df, p in found.tests
        if w is not None
    )
    body += "".join(_p(note, "warn") for note in found.notes)
    return _section("covariates-3step", "Three-step covariates", body)


def _p_cell(p: float) -> str:
    """A p-value in a table: four decimals, or "< 0.0001" below them (a 0.0000 would read as impossible)."""
    return "< 0.0001" if p < 1e-4 else _num(p)


def _interval(lower: float, upper: float) -> str:
    return "n/a" if lower != lower else f"{lower:.4f} to {upper:.4f}"


def report_html(
    fit: Any,
    *,
    data: Any = None,
    sweep: Sequence[Any] | None = None,
    climb: Any = None,
    pick: str | None = None,
    command: str | None = None,
    bootstrap: Any = None,
    three_step: Sequence[Any] = (),
    enumeration: Any = None,
    generated: _dt.datetime | None = None,
) -> str:
    """The HTML report of ``fit`` (a :class:`effdim.FitResult` that keeps its data) as a string.

    ``data``: the data set as loaded (all its columns; default the columns the
    model reads). ``sweep``: the sweep ``fit`` was chosen from (its fits in
    order), or ``climb``: the :class:`effdim.search.HillClimb`; neither for a
    single fit. ``pick``: the criterion ``fit`` is the pick of (said in the
    report). ``command``: the command line that reproduces the analysis
    (:func:`command_line`). ``bootstrap``: a
    :func:`effdim.bootstrap.bootstrap_g2` result to show beside the p-values.
    ``three_step``: results of the three-step method to show: distal outcomes
    (:class:`effdim.threestep.DistalOutcome`) and a regression
    (:class:`effdim.threestep.ThreeStepRegression`).
    ``enumeration``: the sweep's class-enumeration table
    (:func:`effdim.enumeration.enumeration_table`, with its BLRT if one was
    run); a sweep without one gets it built here, without the BLRT.
    ``generated``: the time stamp shown (default now, UTC).
    """
    from . import __version__

    if getattr(fit, "em", None) is None or getattr(fit, "data", None) is None:
        raise InvalidArgument("the report needs a fit that keeps its data and parameters (effdim.fit)")
    if sweep is not None and climb is not None:
        raise InvalidArgument("a report shows a sweep or a hill climb, not both")
    if pick is not None and pick not in SCORES:
        raise InvalidArgument(f"unknown criterion {pick!r}; choose from {', '.join(SCORES)}")
    if sweep and enumeration is None:
        from .enumeration import enumeration_table

        enumeration = enumeration_table(sweep)
    if data is None:  # the data arranged for the model, its columns named by leaf: give them their names back
        data = replace(fit.data, columns=tuple(fit.columns[leaf] for leaf in fit.model.observed))
    leaf_of = {column: leaf for leaf, column in fit.columns.items()}
    when = (generated or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M %Z").strip()
    source = data.source or "data"
    title = f"{format_model(fit.model)} on {source}"
    command_html = (
        f'<pre class="command"><code>{_e(command)}</code></pre>'
        if command
        else _p("The analysis was not run from a command; the numbers below come from the fitted model.", "note")
    )
    seed_note = (
        _p("Run from the directory where the data file is; the seed makes EM's random starts the same.", "note")
        if command
        else ""
    )
    distal = [r for r in three_step if isinstance(r, DistalOutcome)]
    regressions = [r for r in three_step if isinstance(r, ThreeStepRegression)]
    regression = getattr(fit, "coefficients", None) is not None
    diagnostics = (
        [("regression", "Latent class regression")]
        if regression
        else [("fit", "Fit statistics"), ("residuals", "Bivariate residuals")]
    )
    contents = [
        ("command", "Command"),
        ("data", "Data"),
        ("model", "Model"),
        ("selection", "Sweep" if sweep else "Hill climb" if climb is not None else "Scores"),
        *([("enumeration", "Class enumeration")] if enumeration is not None else []),
        ("profiles", "Classes and profiles"),
        *diagnostics,
        *([("distal", "Distal outcomes")] if distal else []),
        *([("covariates-3step", "Three-step covariates")] if regressions else []),
    ]
    nav = "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in contents)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>effdim report: {_e(title)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        (
            f'<header><h1>effdim report</h1><p class="meta"><code>{_e(format_model(fit.model))}</code> fitted to '
            f"{_e(source)} (N = {_count(fit.n)}) · loglik {_num(fit.loglik)} · ds {fit.ds} · de {fit.de} · "
            f"effdim {_e(__version__)} · {_e(when)}</p><nav>{nav}</nav></header>"
        ),
        _section("command", "Command", command_html + seed_note),
        _data_section(data, leaf_of),
        _model_section(fit),
        _selection_section(fit, sweep, climb, pick),
        _enumeration_section(enumeration) if enumeration is not None else "",
        _profiles_section(fit),
        *([_lcr_section(fit)] if regression else [_fit_section(fit, bootstrap), _residuals_section(fit)]),
        _distal_section(distal),
        *(_regression_section(found) for found in regressions),
        (
            "<footer>Written by effdim. Effective dimension and the corrected scores BIC+ and CS+: Kocka &amp; "
            "Zhang (2002), Dimension correction for hierarchical latent class models, UAI 2002. This file is "
            "self-contained: it loads nothing and opens offline.</footer>"
        ),
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(path: str | Path, fit: Any, **options: Any) -> Path:
    """Write :func:`report_html` of ``fit`` (``options`` as there) to ``path`` in UTF-8; returns the path."""
    path = Path(path)
    text = report_html(fit, **options)
    path.write_text(text, encoding="utf-8")
    return path
