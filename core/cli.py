"""The ``effdim`` command: argument parsing and printing only; the engine does the work.

Bad input exits with status 2 and one line on stderr naming the problem;
never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__
from .errors import EffdimError
from .limits import DEFAULT_MAX_BYTES, MAX_EXACT_DIGITS, SizeLimitError, number_text
from .priors import CS_PRIOR_CHOICES, DEFAULT_CS_PRIOR, DirichletPrior, resolve_cs_prior
from .scores import PAPER_SCORES, SCORES, TIE_TOLERANCE, best

if TYPE_CHECKING:
    from .experiments import ExperimentError

__all__ = ["main", "build_parser", "UsageError", "format_table"]


class UsageError(EffdimError):
    """Bad command-line input: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message}")


# ----------------------------------------------------------------- printing
def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool] | None = None) -> str:
    """A plain-text table; numbers right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    if right is None:
        right = [all(isinstance(row[i], (int, float)) for row in rows) if rows else False for i in range(len(headers))]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        lines.append("  ".join(c.rjust(w) if ra else c.ljust(w) for c, w, ra in zip(r, widths, right)).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return number_text(value)
    return str(value)


def _emit_json(obj: Any) -> None:
    print(json.dumps(_json_safe(obj), indent=2))


def _json_safe(obj: Any) -> Any:
    """``obj`` with whole numbers too long to print exactly as text (:func:`effdim.limits.number_text`)."""

    def fix(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_EXACT_DIGITS:
            return number_text(value)
        return value

    top = {"": obj}
    stack = [top]
    while stack:  # without recursion: any depth
        container = stack.pop()
        keys = range(len(container)) if isinstance(container, list) else list(container)
        for key in keys:
            value = container[key]
            if isinstance(value, (list, tuple)):
                value = container[key] = list(value)
                stack.append(value)
            elif isinstance(value, dict):
                value = container[key] = dict(value)
                stack.append(value)
            else:
                container[key] = fix(value)
    return top[""]


# ----------------------------------------------------------------- commands
def _cmd_dims(args: argparse.Namespace) -> None:
    from .dimensions import LocalDimensions, bounds_report, dimensions
    from .notation import load_model

    model = load_model(args.model)
    try:
        report = dimensions(model, repeats=args.repeats, seed=args.seed, max_bytes=args.max_memory_mb * 1024**2)
    except SizeLimitError as err:  # the closed forms still hold; say why de is missing
        report = bounds_report(model, f"not computed: {err}")
    if args.json:
        _emit_json(report.to_json())
        return
    print(f"model   {report.model}   ({'regular' if report.regular else 'irregular'})")
    for message in report.violations:
        print(f"  irregular: {message}")
    if report.regularized:
        print(f"  regular equivalent: {report.regularized}")
    n = number_text
    gap = "?" if report.de is None else n(report.ds - report.de)
    de = "?" if report.de is None else n(report.de)
    how = report.de_status if report.de is None else f"{report.de_status}; {report.de_basis}"
    totals = f"ds {n(report.ds)}   de {de} ({how})   dc {n(report.dc)}   ds-de {gap}"
    if report.db is not None:
        totals += f"   dp {n(report.dp)}   db {n(report.db)}"
    print(totals)
    print(f"de by   {report.de_method}")
    if report.de_status == "probable":
        print(f"        probability that de is higher than reported <= {report.failure_bound:.2e}")
    if report.singular_gap is not None:
        print(f"float   SVD rank {report.float_rank}, singular-value gap {report.singular_gap:.3g}")
    print()
    headers, numeric = zip(*LocalDimensions.TABLE_COLUMNS)
    print(format_table(list(headers), [r.table_row() for r in report.local], right=list(numeric)))
    if len(report.local) > 1 and report.de is not None:
        print(
            f"\nsum of local deficits {n(report.deficit_sum)}"
            f"{' (Corollary 4.1: ds - de)' if report.regular else ' (model is irregular: Corollary 4.1 needs the regular equivalent)'}"
        )


def _cmd_regularize(args: argparse.Namespace) -> None:
    from .notation import format_model, load_model
    from .regularity import regularity_violations, regularize

    model = load_model(args.model)
    result = regularize(model)
    if args.json:
        _emit_json(
            {
                "model": format_model(model),
                "regular_model": format_model(result.model),
                "steps": [
                    {"node": s.node, "rule": s.rule, "old": s.old, "new": s.new, "text": s.text} for s in result.steps
                ],
                "violations": [v.message for v in regularity_violations(model)],
            }
        )
        return
    print(f"model          {format_model(model)}")
    print(f"regular model  {format_model(result.model)}")
    if not result.steps:
        print("already regular: no steps")
        return
    print()
    print(
        format_table(
            ["step", "node", "rule", "old", "new"],
            [(i + 1, s.node, s.rule, s.old, s.new) for i, s in enumerate(result.steps)],
        )
    )


def _cmd_gaps(args: argparse.Namespace) -> None:
    from .survey import bound_gaps

    gaps = bound_gaps(args.max_observed, args.max_card, repeats=args.repeats)
    if args.json:
        _emit_json([vars(g) for g in gaps])
        return
    print(
        f"regular LC models with 2..{args.max_observed} observed variables of 2..{args.max_card} states "
        f"where de < db = min(ds, dc, dp):"
    )
    print(
        format_table(
            ["model", "de", "db", "ds", "dc", "dp", "P(de too low) <="],
            [(g.model, g.de, g.db, g.ds, g.dc, g.dp, f"{g.failure_bound:.1e}") for g in gaps],
        )
    )


# ---------------------------------------------------------- stderr
class _Stderr:
    """Everything a command writes to stderr besides its results, so that a failing command writes one
    line: notes (what was detected in a data file, cached jobs computed again) wait until the command
    has succeeded and are folded into the error line otherwise; the progress bar is drawn on a terminal
    only, and an error line replaces it."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.status = False

    def note(self, text: str) -> None:
        self.notes.append(text)

    def show(self, line: str) -> None:
        """Draw ``line`` in place of the status line (on a terminal; elsewhere nothing)."""
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[K{line}")
            sys.stderr.flush()
            self.status = True

    def end_status(self) -> None:
        if self.status:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.status = False

    def succeeded(self) -> None:
        self.end_status()
        for text in self.notes:
            print(f"effdim: {text}", file=sys.stderr)

    def fail(self, message: str, notes: bool = True) -> None:
        """Print ``message`` (its first line) as the one line of a failed command, the notes in brackets."""
        line = message.splitlines()[0] if message else "effdim: error"
        if notes and self.notes:
            more = f"; {len(self.notes) - 1} more" if len(self.notes) > 1 else ""
            line = f"{line} ({self.notes[0]}{more})"
        if self.status:
            sys.stderr.write("\r\x1b[K")
            self.status = False
        print(line, file=sys.stderr)


_STDERR = _Stderr()


# ---------------------------------------------------------- learning
def _load_data(args: argparse.Namespace):
    """DATA argument: a bundled data set name or a data file (:func:`effdim.reading.read_data`).

    What was detected (format, encoding, separator) is a note
    (:class:`_Stderr`): one line on stderr after the results once the
    command has succeeded, or in brackets in its error line; none with
    ``--quiet`` or ``--json``.
    """
    from . import datasets
    from .reading import read_data

    if args.data in datasets.names():
        if args.sep is not None or args.encoding is not None:
            raise UsageError(
                f"effdim {args.command}: --sep and --encoding apply to data files, "
                f"not to the bundled data set {args.data!r}"
            )
        return datasets.load(args.data)
    loaded = read_data(args.data, sep=args.sep, encoding=args.encoding)
    if not (args.quiet or args.json):
        _STDERR.note(f"read {loaded.dataset.source} as {loaded.description()}")
    return loaded.dataset


class _Progress:
    """A one-line progress bar on stderr, on a terminal (``--quiet`` turns it off); :meth:`close` ends
    it once the work has succeeded (after a failure the error line replaces it)."""

    def __init__(self, quiet: bool, label: str, unit: str = "fits"):
        self.quiet = quiet
        self.label = label
        self.unit = unit

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        self.show(f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {self.unit}")

    def show(self, line: str) -> None:
        """Overwrite the status line with ``line`` (nothing with ``--quiet``)."""
        if not self.quiet:
            _STDERR.show(line)

    def close(self) -> None:
        _STDERR.end_status()


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _criteria(args: argparse.Namespace) -> list[str]:
    """The criteria a printed table shows: the paper's four and AIC, or all with ``--criteria all``."""
    return list(SCORES) if args.criteria == "all" else [*PAPER_SCORES, "aic"]


def _score_headers(args: argparse.Namespace) -> list[str]:
    first = "-2LL" if args.deviance else "loglik"
    return [first, *(SCORES[c].label for c in _criteria(args)), "ds", "de"]


def _score_row(f, args: argparse.Namespace) -> list:
    if args.deviance:
        values = [-2 * f.loglik, *(SCORES[c].deviance(f.score(c)) for c in _criteria(args))]
    else:
        values = [f.loglik, *(f.score(c) for c in _criteria(args))]
    return [*values, f.ds, f.de]


def _scale_note(args: argparse.Namespace, fit) -> str:
    prior = DirichletPrior.parse(fit.scores.cs_prior).label
    if args.deviance:
        scale = "scale: -2 log-likelihood + penalty, as poLCA and Mplus print it (lower is better)"
    else:
        scale = "scale: log-likelihood - penalty, as in the paper (higher is better); --deviance for -2LL"
    return f"{scale}\nCS and CS+ use the Dirichlet prior {prior} (--cs-prior)"


def _caveats(fit, swept=None) -> str:
    """The pick's caveats (:func:`effdim.search.pick_caveats`) in brackets, or nothing."""
    from .search import pick_caveats

    notes = pick_caveats(fit, swept)
    return f"   [{'; '.join(notes)}]" if notes else ""


def _json_fit(result) -> dict:
    """A fit's JSON: every score (higher is better) and the same on the -2LL scale under ``deviance``."""
    payload = result.to_json()
    payload["deviance"] = result.scores.deviance()
    return payload


def _cmd_fit(args: argparse.Namespace) -> None:
    from .notation import load_model
    from .search import fit

    _prepare_report(args)
    data = _load_data(args)
    model = load_model(args.model)
    result = fit(data, model, warn=False, **_em_kwargs(args))
    for node, order in _orders(args, model):
        result = result.relabeled(node, order)
    stats = result.fit_statistics()
    boot = None
    if args.bootstrap:
        from .bootstrap import bootstrap_g2

        bar = _Progress(args.quiet or args.json, "bootstrap", "replicates")
        boot = bootstrap_g2(result, args.bootstrap, **_em_settings(args), progress=bar, **_executor_kwargs(args))
        bar.close()
    try:
        ident = result.identification()
    except EffdimError as err:  # too many parameters for the SVD: say so, show the rest
        ident = err
    equivalent = None
    if not result.unique and args.equivalent_fits:
        equivalent = result.equivalent_share_ranges(args.equivalent_fits, seed=args.seed)
    bvr = result.bivariate_residuals()
    if args.posteriors:
        result.posteriors().to_csv(args.posteriors, index=False)
    _write_report(args, result, data=data, bootstrap=boot)
    notes = result.em.convergence_notes()
    if args.json:
        payload = _json_fit(result)
        payload["params"] = result.parameters_json()
        payload["fit"] = stats.to_json()
        if boot is not None:
            payload["fit"].update(p_g2_bootstrap=boot.p_value, bootstrap=boot.B)
        payload["identification"] = {"text": str(ident)} if isinstance(ident, EffdimError) else ident.to_json()
        if equivalent is not None:
            payload["equivalent_fits"] = equivalent
        payload["bvr"] = _bvr_pairs(bvr)
        # the response patterns the model fits worst (poLCA's predcell, largest Pearson residuals first)
        payload["worst_patterns"] = json.loads(result.pattern_table().head(WORST_PATTERNS).to_json(orient="records"))
        payload["convergence"] = notes
        _emit_json(payload)
        return
    print(f"model   {result.model}   data {data.source or args.data}: n = {_n(result.n)}")
    print(format_table(_score_headers(args), [_score_row(result, args)]))
    print(_scale_note(args, result))
    info = result.restarts
    print(
        f"\nEM: {info['restarts']} starts, best reached by {info['n_best']}; "
        f"{info['n_iter']} steps, {'converged' if info['converged'] else 'stopped at --max-iter'}"
    )
    print("start logliks: " + ", ".join(f"{x:.4f}" for x in info["start_logliks"]))
    for line in notes:
        print(f"warning: {line}")
    for line in result.degenerate:
        print(f"degenerate: {line}")
    shares = result.class_shares()
    for node in model.hidden:
        rows = shares[shares["node"] == result.labels.name(node)]
        print(f"\nshares of {node} (states by decreasing share; reorder with --order)")
        print(format_table(["state", "share"], [(r.state, r.share) for r in rows.itertuples()]))
    root = model.root
    prof = result.profiles(root)
    wide = prof.pivot_table(index=["item", "category"], columns="class", values="probability", sort=False)
    print(f"\nP(item = category | {root})")
    print(
        format_table(
            ["item", "category", *[f"{root}={c}" for c in wide.columns]],
            [(item, cat, *vals) for (item, cat), vals in zip(wide.index, wide.to_numpy().tolist())],
        )
    )
    print("\nfit (complete table of response patterns)")
    p = lambda v: "n/a" if v is None or v != v else f"{v:.4f}"  # noqa: E731  (None, NaN: not defined)
    print(
        f"G2 {p(stats.g2)}   X2 {p(stats.x2)}   df = dc - de = {stats.df}   "
        f"p(G2) {p(stats.p_g2)}   p(X2) {p(stats.p_x2)}"
        + (f"   bootstrap p(G2) {boot.p_value:.4f} (B = {boot.B})" if boot is not None else "")
    )
    for note in stats.to_json()["notes"]:
        print(f"  {note}")
    avepp = ", ".join("n/a" if v is None else f"{v:.3f}" for v in stats.avepp)
    print(f"entropy R2 {p(stats.entropy_r2)}   average posterior of the modal {root} per state: {avepp}")
    if isinstance(ident, EffdimError):
        print(f"identification: {ident}")
        if not result.unique:
            print(result.non_unique_sentence())
    else:
        print(ident.sentence())
    if equivalent is not None:
        ranges = "; ".join(
            f"{result.labels.name(node)} " + ", ".join(f"{i + 1}: {lo:.3f}-{hi:.3f}" for i, (lo, hi) in enumerate(rows))
            for node, rows in equivalent["shares"].items()
        )
        print(f"class shares over {equivalent['fits']} equally good fits (--equivalent-fits): {ranges}")
    pairs = _bvr_pairs(bvr)[:3]
    if pairs:
        print(
            "largest bivariate residuals (above 1: local dependence): "
            + ", ".join(f"{a}-{b} {v:.2f}" for a, b, v in ((q["items"][0], q["items"][1], q["bvr"]) for q in pairs))
        )
    if args.posteriors:
        print(f"posteriors written to {args.posteriors}")
    if args.report:
        print(f"report written to {args.report}")


#: ``effdim fit --json`` lists this many response patterns under ``worst_patterns``.
WORST_PATTERNS = 20


def _bvr_pairs(bvr) -> list[dict]:
    """The bivariate residuals as a list of pairs, largest first (pairs never answered together left out)."""
    names = list(bvr.index)
    pairs = [
        {"items": [a, b], "bvr": float(bvr.iloc[i, j])}
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if i < j and bvr.iloc[i, j] == bvr.iloc[i, j]
    ]
    return sorted(pairs, key=lambda q: -q["bvr"])


def _prepare_report(args: argparse.Namespace) -> None:
    """Before any work for ``--report``: refuse a file that cannot be written, and fix a seed so the
    command in the report reproduces the numbers."""
    if not args.report:
        return
    folder = os.path.dirname(os.path.abspath(args.report))
    if not os.path.isdir(folder):
        raise UsageError(f"effdim {args.command}: --report {args.report}: the folder {folder} does not exist")
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big") >> 1


def _write_report(args: argparse.Namespace, fit, **inputs) -> None:
    """Write the HTML report (:mod:`effdim.report`) with the command that reproduces it, if ``--report``."""
    if not args.report:
        return
    from .report import command_line, write_report

    sep = next((name for name, char in SEPARATOR_NAMES.items() if char == args.sep), args.sep)
    options = {
        "--sep": sep,
        "--encoding": args.encoding,
        "--model": args.model,
        "--node": getattr(args, "node", None),
        "--max-card": getattr(args, "max_card", None),
        "--score": getattr(args, "score", None),
        "--pick": getattr(args, "pick", None),
        "--map": args.map,
        "--order": getattr(args, "order", None),
        "--restarts": args.restarts,
        "--seed": args.seed,
        "--tol": args.tol,
        "--max-iter": args.max_iter,
        "--prior": args.prior,
        "--cs-prior": args.cs_prior,
        "--bootstrap": getattr(args, "bootstrap", None),
        "--report": args.report,
    }
    write_report(args.report, fit, command=command_line(args.command, args.data, options), **inputs)


def _orders(args: argparse.Namespace, model) -> list[tuple[str, list[int]]]:
    """``--order NODE=3,1,2`` (1-based, as printed) as ``(node, 0-based order)``."""
    out = []
    for item in args.order:
        node, sep, text = item.partition("=")
        try:
            order = [int(t) - 1 for t in text.split(",")]
        except ValueError:
            order = None
        if not sep or not node or order is None:
            raise UsageError(f"effdim fit: --order expects NODE=STATE,STATE,... (e.g. X=2,1,3), got {item!r}")
        out.append((node, order))
    return out


def _executor_kwargs(args: argparse.Namespace) -> dict:
    """Where bootstrap replicates run: --workers 1 in this process, else local processes or --scheduler."""
    return {
        "executor": "serial" if args.workers == 1 else "processes",
        "workers": args.workers,
        "scheduler": args.scheduler,
    }


@contextlib.contextmanager
def _convergence_notes():
    """Collect the fits' ConvergenceWarnings into a list (printed as ``warning:`` lines, or in the JSON)
    instead of Python's warning lines with a file name and a line of source."""
    import warnings

    from .em import ConvergenceWarning

    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            yield notes
        finally:
            notes.extend(str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning))
            for w in caught:  # anything else is shown as it would have been
                if not issubclass(w.category, ConvergenceWarning):
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _cmd_blrt(args: argparse.Namespace) -> None:
    from .bootstrap import blrt
    from .notation import load_model

    data = _load_data(args)
    model = load_model(args.model)
    bar = _Progress(args.quiet or args.json, "blrt", "replicates")
    options = _em_kwargs(args)
    with _convergence_notes() as notes:
        result = blrt(data, model, args.node, args.bootstrap, **options, progress=bar, **_executor_kwargs(args))
        bar.close()
    if args.json:
        _emit_json({**result.to_json(), "convergence": notes})
        return
    print(f"bootstrap likelihood-ratio test: {result.null_model} (null) against {result.alternative}")
    print(f"LR = 2 (LL_k - LL_k-1) = {result.statistic:.4f}   bootstrap p = {result.p_value:.4f}   (B = {result.B})")
    print("a small p favours the model with more states")
    for note in notes:
        print(f"warning: {note}")


def _cmd_sweep(args: argparse.Namespace) -> None:
    from .notation import load_model
    from .search import sweep

    _prepare_report(args)
    data = _load_data(args)
    model = load_model(args.model) if args.model else None
    bar = _Progress(args.quiet or args.json, "sweep")
    results = sweep(
        data,
        model,
        node=args.node,
        max_card=args.max_card,
        progress=bar,
        until_saturated=args.until_saturated,
        **_em_kwargs(args),
    )
    bar.close()
    _write_report(args, best(results, args.pick), data=data, sweep=results, pick=args.pick)
    if args.json:
        _emit_json([_json_fit(r) for r in results])
        return
    node = args.node or results[0].model.root
    shown = model if model is not None else results[-1].model
    print(
        f"sweep of |{node}| = {results[0].card}..{results[-1].card} in {shown}   "
        f"data {data.source or args.data}: n = {_n(results[0].n)}"
    )
    rows = [[r.card, *_score_row(r, args), r.restarts["n_best"], "degenerate" if r.degenerate else ""] for r in results]
    print(format_table(["card", *_score_headers(args), "starts at best", "flags"], rows))
    print(_scale_note(args, results[0]))
    print()
    width = max(len(SCORES[c].label) for c in _criteria(args))
    for c in _criteria(args):
        pick = best(results, c)
        print(f"best by {SCORES[c].label:<{width}} |{node}| = {pick.card}{_caveats(pick, results)}")
    print(f"(ties within {TIE_TOLERANCE:g} nats per row go to the smaller model)")
    if args.report:
        print(f"report of the {SCORES[args.pick].label} pick written to {args.report}")


def _cmd_search(args: argparse.Namespace) -> None:
    from .notation import load_model
    from .search import hill_climb

    _prepare_report(args)
    data = _load_data(args)
    model = load_model(args.model)
    bar = _Progress(args.quiet or args.json, f"search ({args.score})")
    climb = hill_climb(data, model, args.score, progress=bar, **_em_kwargs(args))
    bar.close()
    _write_report(args, climb.best, data=data, climb=climb, pick=args.score)
    if args.json:
        _emit_json(climb.to_json())
        return
    print(
        f"hill climbing by {args.score} over the hidden cardinalities of {model}   "
        f"data {data.source or args.data}: n = {_n(climb.best.n)}"
    )
    rows = [[i, str(f.model), *_score_row(f, args)] for i, f in enumerate(climb.path)]
    print(format_table(["step", "model", *_score_headers(args)], rows))
    print(_scale_note(args, climb.best))
    print(f"\nbest: {climb.best.model}   ({len(climb.tried)} models fitted){_caveats(climb.best)}")
    if args.report:
        print(f"report written to {args.report}")


def _cmd_learn(args: argparse.Namespace) -> None:
    """``effdim learn``: structure search (logic in :mod:`effdim.structure`)."""
    from .structure import learn_structure

    data = _load_data(args)
    options = _em_kwargs(args)
    bar = _Progress(args.quiet or args.json, "learn")

    def report(p) -> None:
        bar.show(f"learn: {p.steps} steps, {p.candidates} candidates, score {p.score:.2f}, {p.elapsed:.0f} s  ")

    with _convergence_notes() as notes:
        result = learn_structure(
            data, score=args.score, start=args.start, max_time=args.max_time, progress=report, **options
        )
        bar.close()
    if args.json:
        _emit_json({**result.to_json(), "deviance": result.fit.scores.deviance(), "convergence": notes})
        return
    print(
        f"structure search by {result.score} from {args.start} ({result.start.model})   "
        f"data {data.source or args.data}: n = {_n(result.fit.n)}"
    )
    rows = [
        [0, "start", "", result.start.score(result.score), "", result.start.loglik, result.start.ds, result.start.de]
    ]
    rows += [[i + 1, s.operator, s.text, s.score, s.gain, s.loglik, s.ds, s.de] for i, s in enumerate(result.steps)]
    print(format_table(["step", "op", "move", result.score, "gain", "loglik", "ds", "de"], rows))
    print(f"\nlearned: {result.model}")
    print(format_table(_score_headers(args), [_score_row(result.fit, args)]))
    print(_scale_note(args, result.fit))
    print(
        f"\n{result.candidates} candidates by local EM, {result.local_refits} refit by full EM; "
        f"{result.seconds:.1f} s; stopped: {result.stopped}"
    )
    for note in notes:
        print(f"warning: {note}")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def _em_settings(args: argparse.Namespace) -> dict:
    """How every EM fit of a command runs (its starts, seed, tolerance, steps, prior): the command's own fits
    and a bootstrap's refits alike."""
    return dict(restarts=args.restarts, seed=args.seed, tol=args.tol, max_iter=args.max_iter, prior=args.prior)


def _em_kwargs(args: argparse.Namespace) -> dict:
    """The EM settings, CS prior and leaf -> column mapping shared by fit, sweep, blrt and search."""
    mapping = {}
    for item in args.map:
        leaf, sep, column = item.partition("=")
        if not sep or not leaf or not column:
            raise UsageError(f"effdim {args.command}: --map expects LEAF=COLUMN, got {item!r}")
        mapping[leaf] = column
    options = _em_settings(args)
    if args.cs_prior is not None:
        resolve_cs_prior(args.cs_prior, args.prior)  # refuse a bad prior before any progress bar
        options["cs_prior"] = args.cs_prior
    if mapping:
        options["mapping"] = mapping
    return options


def _add_em_options(p: argparse.ArgumentParser) -> None:
    from .csvscan import ENCODINGS

    p.add_argument(
        "--sep",
        default=None,
        type=_separator,
        metavar="CHAR",
        help="field separator of a CSV file: a character, or comma, semicolon, tab "
        "(default: detected: comma, semicolon or tab)",
    )
    p.add_argument(
        "--encoding",
        default=None,
        choices=list(ENCODINGS),
        help="text encoding of a CSV file (default: detected: UTF-8, else Latin-1; UTF-16 by its mark)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="LEAF=COLUMN",
        help="data column of a model leaf (repeatable); default: leaves named after columns",
    )
    p.add_argument("--restarts", type=_positive_int, default=5, help="random EM starts, pruned (default 5)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the EM starts")
    p.add_argument(
        "--tol",
        type=float,
        default=1e-8,
        help="EM stops when the log-likelihood per row rises less (default 1e-8) and the "
        "parameters are within 1e-6 of EM's fixed point",
    )
    p.add_argument("--max-iter", type=_positive_int, default=1000, help="most EM steps per start (default 1000)")
    p.add_argument(
        "--prior", type=float, default=None, help="pseudo-count per CPT cell (MAP); default: maximum likelihood"
    )
    p.add_argument(
        "--cs-prior",
        default=None,
        metavar="PRIOR",
        help=f"Dirichlet prior of CS and CS+: {CS_PRIOR_CHOICES} (default {DEFAULT_CS_PRIOR}; "
        "with --prior A the prior EM used, k2:A+1)",
    )
    p.add_argument(
        "--criteria",
        choices=["paper", "all"],
        default="paper",
        help="criteria in printed tables: the paper's BIC, BIC+, CS, CS+ and AIC (default), or all "
        "(adds AIC+, AIC3, SABIC, CAIC and their de versions); JSON always has all",
    )
    p.add_argument(
        "--deviance",
        action="store_true",
        help="print scores on the -2 log-likelihood scale of poLCA and Mplus (lower is better)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def _add_report_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="FILE.html",
        default=None,
        help="write the analysis as one self-contained HTML page (opens offline; docs/report.md)",
    )


def _add_executor_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="local worker processes for bootstrap replicates (default: CPUs; 1: this process)",
    )
    p.add_argument("--scheduler", default=None, help="Dask scheduler address: run the replicates on that cluster")


def _cmd_experiment(args: argparse.Namespace) -> None:
    """``effdim experiment lc|hlc``: the paper's Sections 5 and 6 (logic in :mod:`effdim.experiments`)."""
    from .experiments import ExperimentError, build_study, write_outputs

    options = {
        k: getattr(args, k, None)
        for k in ("replicates", "restarts", "max_iter", "seed", "model", "cs_prior", "concentration")
    }
    if args.study == "lc" and args.concentration is not None:
        raise UsageError("effdim experiment: --concentration applies to hlc only")
    if args.study == "lc":
        options["generators"] = args.generator or None
        options["deterministic"] = () if args.no_deterministic else (args.deterministic or None)
    try:
        study = build_study(args.study, quick=args.quick, sizes=args.sizes, **options)
    except EffdimError as err:
        raise UsageError(f"effdim experiment: {err}") from None
    if args.cached_only and args.no_cache:
        raise UsageError("effdim experiment: --cached-only reads the cache; it cannot go with --no-cache")
    try:
        result = study.run(
            cache_dir=None if args.no_cache else args.cache_dir,
            executor="serial" if args.workers == 1 else "processes",
            workers=args.workers,
            scheduler=args.scheduler,
            # reading the cache is quick, and it may end in an error line: no progress bar then
            progress=not (args.quiet or args.cached_only),
            cached_only=args.cached_only,
        )
    except ExperimentError as err:
        _experiment_failed(err)
    for line in result.stats.damaged:  # named, and run again (or, with --cached-only, counted as not run)
        _STDERR.note(f"cached job {line}; {'not used' if args.cached_only else 'computed again'}")
    if not result.records:
        raise UsageError(
            f"effdim experiment: none of the {result.stats.total} jobs of this design is in the cache "
            f"{args.cache_dir}; run it without --cached-only first"
        )
    result.test = args.test
    try:
        paths, notes = write_outputs(
            result,
            args.out,
            plots=not args.no_plots,
            png=not args.no_png,
            preset="quick" if args.quick else "full",
            command=" ".join(sys.argv[1:]),
        )
    except ExperimentError as err:
        _experiment_failed(err)
    stats = result.stats
    if args.json:
        table = result.table2() if args.study == "hlc" else result.summary()
        _emit_json(
            {
                "run": stats.to_json(),
                "files": [str(p) for p in paths],
                "notes": notes,
                "summary": json.loads(table.to_json(orient="records")),
            }
        )
        return
    print(result.markdown())
    missing = f", {stats.missing} not run (--cached-only)" if stats.missing else ""
    print(
        f"\n{stats.total} job{'s' if stats.total != 1 else ''}: {stats.executed} run, {stats.cached} from the cache{missing}; "
        f"{stats.wall_seconds:.1f} s wall, {stats.job_seconds:.1f} s of job time ({stats.executor}, "
        f"{stats.workers} worker{'s' if stats.workers != 1 else ''})"
    )
    print("wrote " + ", ".join(str(p) for p in paths))
    for note in notes:
        print(f"note: {note}")


def _experiment_failed(err: ExperimentError) -> NoReturn:
    """A study's failure: a refusal of its settings exits 2 like any bad input (:func:`main`); a failure
    inside effdim or its tools (``err.inside``) exits 1, so a script can tell the two apart."""
    if not err.inside:
        raise err
    _STDERR.fail(f"effdim: {err}")
    raise SystemExit(1) from None


def _cmd_app(args: argparse.Namespace) -> None:
    from effdim_app import serve
    from effdim_app.config import load_limits
    from effdim_app.logs import configure

    try:
        limits = load_limits(
            args.config,
            workers=args.workers,
            time_limit=args.time_limit,
            max_memory_mb=args.max_memory_mb,
            max_nodes=args.max_nodes,
            max_card=args.max_card,
            max_sweep=args.max_sweep,
            max_upload_mb=args.max_upload_mb,
        )
    except EffdimError as err:
        raise UsageError(f"effdim app: {err}") from None
    configure(args.log_level)
    serve(
        port=args.port,
        show=args.show,
        address=args.address,
        limits=limits,
        websocket_origin=args.allow_websocket_origin or None,
        num_threads=args.threads or None,
        num_procs=args.processes,
    )


# ------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The ``effdim`` argument parser (subcommands register themselves here)."""
    parser = _Parser(prog="effdim", description="Effective dimension of LC and HLC models (Kocka & Zhang 2002).")
    parser.add_argument("--version", action="version", version=f"effdim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    dims = sub.add_parser("dims", help="ds, de, dc and the local LC table of a model")
    dims.add_argument("model", help="notation (e.g. '3:2,2,2,2' or '5(3(2,2),2,3(2,2))') or a JSON file")
    dims.add_argument("--json", action="store_true", help="print one JSON object")
    dims.add_argument("--repeats", type=_positive_int, default=2, help="random points per unproven rank (default 2)")
    dims.add_argument("--seed", type=_seed, default=None, help="seed for the random points of the direct rank")
    dims.add_argument(
        "--max-memory-mb",
        type=_positive_int,
        default=DEFAULT_MAX_BYTES // 1024**2,
        help=f"memory one rank may use, in MiB (default {DEFAULT_MAX_BYTES // 1024**2})",
    )
    dims.set_defaults(run=_cmd_dims)

    reg = sub.add_parser("regularize", help="the regular equivalent of a model and the steps taken")
    reg.add_argument("model", help="notation or a JSON file")
    reg.add_argument("--json", action="store_true", help="print one JSON object")
    reg.set_defaults(run=_cmd_regularize)

    gaps = sub.add_parser("gaps", help="find LC models whose de is below the bound db (Theorem 4)")
    gaps.add_argument("--max-observed", type=_positive_int, default=4, help="largest number of observed variables")
    gaps.add_argument("--max-card", type=_positive_int, default=3, help="largest observed cardinality")
    gaps.add_argument("--repeats", type=_positive_int, default=3, help="random points per rank")
    gaps.add_argument("--json", action="store_true", help="print a JSON list")
    gaps.set_defaults(run=_cmd_gaps)

    fit_p = sub.add_parser("fit", help="fit a model to data by EM and print its scores (Section 2.3)")
    fit_p.add_argument(
        "data",
        help="a data file (CSV, SPSS .sav, Stata .dta, Excel .xlsx, Parquet) or a bundled "
        "data set name (stouffer-toby, lc-8-2222, hlc-figure2)",
    )
    fit_p.add_argument("--model", required=True, help="model notation or a JSON file")
    _add_em_options(fit_p)
    _add_report_option(fit_p)
    fit_p.set_defaults(run=_cmd_fit)

    sweep_p = sub.add_parser("sweep", help="fit and score every cardinality of one hidden node")
    sweep_p.add_argument("data", help="a data file (CSV, .sav, .dta, .xlsx, .parquet) or a bundled data set name")
    sweep_p.add_argument("--model", default=None, help="model (default: an LC model over all columns)")
    sweep_p.add_argument("--node", default=None, help="hidden node to sweep (default: the root)")
    sweep_p.add_argument(
        "--max-card",
        type=_positive_int,
        default=None,
        help="largest cardinality (default: the largest regular one, Lemmas 3.2 / 4.1)",
    )
    sweep_p.add_argument(
        "--until-saturated",
        action="store_true",
        help="stop at the first cardinality where de = dc: larger ones fit alike",
    )
    _add_em_options(sweep_p)
    _add_report_option(sweep_p)
    sweep_p.add_argument(
        "--pick",
        default="bic+",
        choices=list(SCORES),
        help="with --report: the criterion whose best model the report details (default bic+)",
    )
    sweep_p.set_defaults(run=_cmd_sweep)

    fit_p.add_argument(
        "--posteriors",
        metavar="FILE.csv",
        default=None,
        help="write each row's posterior of every hidden node (rows in input order; "
        "one row per pattern for count data)",
    )
    fit_p.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=None,
        metavar="B",
        help="parametric bootstrap p-value of G2 with B replicates (for sparse tables)",
    )
    fit_p.add_argument(
        "--order",
        action="append",
        default=[],
        metavar="NODE=2,1,3",
        help="renumber a hidden node's states (as printed; default: by decreasing share)",
    )
    fit_p.add_argument(
        "--equivalent-fits",
        type=_nonnegative_int,
        default=4,
        metavar="K",
        help="where de < ds, refit K times from other starts and show how far the class shares "
        "move between fits that are equally good (default 4; 0: skip)",
    )
    _add_executor_options(fit_p)

    blrt_p = sub.add_parser("blrt", help="bootstrap likelihood-ratio test of k-1 against k states of a hidden node")
    blrt_p.add_argument("data", help="a data file (CSV, .sav, .dta, .xlsx, .parquet) or a bundled data set name")
    blrt_p.add_argument("--model", required=True, help="the model with k states (e.g. 3:2,2,2,2)")
    blrt_p.add_argument("--node", default=None, help="hidden node whose states are tested (default: the root)")
    blrt_p.add_argument("--bootstrap", type=_positive_int, default=100, metavar="B", help="replicates (default 100)")
    _add_em_options(blrt_p)
    _add_executor_options(blrt_p)
    blrt_p.set_defaults(run=_cmd_blrt)

    search_p = sub.add_parser("search", help="hill climbing over the hidden cardinalities (Section 6)")
    search_p.add_argument("data", help="a data file (CSV, .sav, .dta, .xlsx, .parquet) or a bundled data set name")
    search_p.add_argument("--model", required=True, help="the structure (its cardinalities are ignored)")
    search_p.add_argument(
        "--score",
        required=True,
        choices=list(SCORES),
        help="criterion the climb maximises (higher is better on effdim's scale)",
    )
    _add_em_options(search_p)
    _add_report_option(search_p)
    search_p.set_defaults(run=_cmd_search)

    learn_p = sub.add_parser("learn", help="learn the latent tree from data (structure search)")
    learn_p.add_argument(
        "data", help="a data file (CSV, .sav, .dta, .xlsx, .parquet) or a bundled data set name; every column is a leaf"
    )
    learn_p.add_argument(
        "--score", default="bic+", choices=list(SCORES), help="the score that drives the search (default bic+)"
    )
    learn_p.add_argument(
        "--start",
        default="islands",
        choices=["islands", "lc"],
        help="start from mutual-information islands (default) or the LC model",
    )
    learn_p.add_argument(
        "--max-time",
        type=_seconds,
        default=None,
        metavar="S",
        help="stop searching after S seconds and return the best tree so far",
    )
    _add_em_options(learn_p)
    learn_p.set_defaults(run=_cmd_learn)

    exp = sub.add_parser(
        "experiment",
        help="the paper's experiments: 'lc' (Section 5), 'hlc' (Section 6, Table 2)",
        epilog="Exit status: 0 when every job ran; 2, with one line, when the settings are refused (before "
        "any job, or by a job, named with its settings); 1 when a job or the plots failed inside effdim or "
        "its tools (not on your input), the failing job named. Finished jobs stay cached either way.",
    )
    exp.add_argument(
        "study",
        choices=["lc", "hlc", "structure"],
        help="lc: Figures 4-5; hlc: Table 2; structure: latent trees learned per score",
    )
    exp.add_argument("--quick", action="store_true", help="small preset (minutes on 2 cores) instead of the paper's")
    exp.add_argument("--replicates", type=_positive_int, default=None, help="random parametrizations per model")
    exp.add_argument("--sizes", default=None, help="sample sizes, e.g. '1k,3k,9k'")
    exp.add_argument("--restarts", type=_positive_int, default=None, help="EM starts per fit (default 5)")
    exp.add_argument("--max-iter", type=_positive_int, default=None, help="most EM steps per start (default 1000)")
    exp.add_argument("--seed", type=_seed, default=None, help="seed of the whole study (default 0)")
    exp.add_argument("--generator", action="append", default=[], help="lc: a generating LC model (repeatable)")
    exp.add_argument(
        "--deterministic",
        action="append",
        default=[],
        help="lc: a generating LC model with deterministic leaves (Figure 5; repeatable)",
    )
    exp.add_argument("--no-deterministic", action="store_true", help="lc: skip the deterministic variant")
    exp.add_argument("--model", default=None, help="hlc: the generating HLC model (default 5(3(2,2),2,3(2,2)))")
    exp.add_argument(
        "--cs-prior",
        default=None,
        metavar="PRIOR",
        help=f"Dirichlet prior of CS and CS+: {CS_PRIOR_CHOICES} (default {DEFAULT_CS_PRIOR})",
    )
    exp.add_argument(
        "--concentration",
        type=float,
        default=None,
        help="hlc: Dirichlet concentration of the generating CPT rows (default 1: uniform)",
    )
    exp.add_argument("--test", choices=["t", "wilcoxon"], default="t", help="paired test for the marks (default t)")
    exp.add_argument("--workers", type=_positive_int, default=None, help="local worker processes (default: CPUs)")
    exp.add_argument("--scheduler", default=None, help="Dask scheduler address: run the jobs on that cluster")
    exp.add_argument("--cache-dir", default=".effdim-cache", help="per-job result cache (default .effdim-cache)")
    exp.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    exp.add_argument(
        "--cached-only",
        action="store_true",
        help="run nothing: write the outputs from the jobs of this design already in the cache "
        "(a long study reported part way; the same command without it runs the rest)",
    )
    exp.add_argument("--out", default="effdim-experiments", help="directory for CSV, markdown and plots")
    exp.add_argument("--no-plots", action="store_true", help="skip the HTML/PNG plots")
    exp.add_argument("--no-png", action="store_true", help="HTML plots only (PNG needs Chromium)")
    exp.add_argument("--json", action="store_true", help="print the summary as JSON")
    exp.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    exp.set_defaults(run=_cmd_experiment)

    app = sub.add_parser("app", help="launch the dashboard in the browser")
    app.add_argument("--port", type=_port, default=5006, help="TCP port (default 5006; 0: any free port)")
    app.add_argument("--address", default="localhost")
    app.add_argument("--show", action=argparse.BooleanOptionalAction, default=True, help="open a browser tab")
    app.add_argument("--allow-websocket-origin", action="append", default=[], help="host[:port] allowed to connect")
    app.add_argument("--config", default=None, help="limits from a TOML or JSON file (keys as the options below)")
    app.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="computations running at once, in worker processes (default: 2, or 1 on one core)",
    )
    app.add_argument(
        "--time-limit",
        type=_positive_float,
        default=None,
        help="seconds one computation may run before it is stopped (default 60)",
    )
    app.add_argument(
        "--max-memory-mb",
        type=_positive_int,
        default=None,
        help="memory one computation may use, in MiB (default 2048)",
    )
    app.add_argument("--max-nodes", type=_positive_int, default=None, help="nodes of one model (default 200)")
    app.add_argument("--max-card", type=_positive_int, default=None, help="states of one node (default 1000000000)")
    app.add_argument("--max-sweep", type=_positive_int, default=None, help="cardinalities in one sweep (default 50)")
    app.add_argument(
        "--max-upload-mb", type=_positive_float, default=None, help="size of an uploaded data file, in MB (default 10)"
    )
    app.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="threads serving the sessions' callbacks (default: none, the event loop alone)",
    )
    app.add_argument(
        "--processes",
        type=_positive_int,
        default=1,
        help="server processes sharing the sessions (default 1; more only on Linux/macOS, and "
        "their pages may fetch some stylesheets from Panel's CDN: see docs/robustness.md)",
    )
    from effdim_app.logs import LEVELS

    app.add_argument(
        "--log-level",
        choices=LEVELS,
        default="warning",
        help="what the server logs to stderr: errors shown to users, with their traceback and "
        "session, at error; input the engine refused at info (default warning)",
    )
    app.set_defaults(run=_cmd_app)

    return parser


def _whole_number(text: str, low: int, high: int | None, expected: str) -> int:
    """An option's whole number in ``low..high``; else argparse's one-line error saying what was ``expected``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
    return value


def _positive_int(text: str) -> int:
    return _whole_number(text, 1, None, "a number >= 1")


def _seed(text: str) -> int:
    """``--seed``: what numpy's generators take."""
    return _whole_number(text, 0, 2**63 - 1, "a seed from 0 to 2**63 - 1")


def _port(text: str) -> int:
    """``--port``: 0 is any free port."""
    return _whole_number(text, 0, 65535, "a port from 0 to 65535")


#: ``--sep`` by name (``tab`` is hard to type in a shell); the first name of a character is the one written back.
SEPARATOR_NAMES = {"comma": ",", "semicolon": ";", "tab": "\t", "\\t": "\t", "pipe": "|", "space": " "}


def _separator(text: str) -> str:
    """``--sep``: one character, or its name (:data:`SEPARATOR_NAMES`)."""
    sep = SEPARATOR_NAMES.get(text.lower(), text)
    if len(sep) != 1 or sep in '\r\n"':
        raise argparse.ArgumentTypeError(f"expected one character (or comma, semicolon, tab), got {text!r}")
    return sep


def _nonnegative_int(text: str) -> int:
    return _whole_number(text, 0, None, "a number >= 0")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def _error_line(err: BaseException) -> str:
    """A refused input's one line in the CLI's words: a leaf that names no column gets the CLI's remedy
    (``--map``) instead of the Python argument the engine's message names."""
    data = sys.modules.get("effdim.data")  # not imported: no data were read, so no such error
    if data is not None and isinstance(err, data.LeavesWithoutColumns):
        return f"effdim: {err.problem}; name the leaves after the columns, or map them with --map LEAF=COLUMN"
    return str(err) if isinstance(err, UsageError) else f"effdim: {err}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``effdim`` command; returns the exit status."""
    global _STDERR
    _STDERR = _Stderr()
    try:
        args = build_parser().parse_args(argv)
        args.run(args)
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (EffdimError, OSError) as err:
        _STDERR.fail(_error_line(err))
        return 2
    except KeyboardInterrupt:
        _STDERR.fail("effdim: interrupted", notes=False)
        return 130
    _STDERR.succeeded()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
