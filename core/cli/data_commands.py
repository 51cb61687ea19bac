"""The commands that read data: ``fit``, ``blrt``, ``sweep``, ``search`` and ``learn`` (what each prints,
its JSON and its report); the engine does the work."""

from __future__ import annotations

import argparse
import contextlib
import json
import os

from ..errors import EffdimError
from ..priors import DirichletPrior
from ..scores import FIT_SCORES, PAPER_SCORES, SCORES, TIE_TOLERANCE, best
from . import three_step
from .arguments import SEPARATOR_NAMES, UsageError, em_settings_of, execution_of, mapping_of
from .output import _STDERR, _emit_json, _n, _Progress, format_table
from .outputs import check_outputs, writing


def _load_data(args: argparse.Namespace, unlimited: tuple[str, ...] = ()):
    """DATA argument as a :class:`effdim.data.Dataset` (:func:`_load_rows`)."""
    return _load_rows(args, unlimited)[0]


def _load_rows(args: argparse.Namespace, unlimited: tuple[str, ...] = ()):
    """DATA argument: a bundled data set name or a data file (:func:`effdim.reading.read_data`), its columns
    as ``--columns`` and ``--drop`` say, and the identifier columns of ``--id`` per row (``None`` without);
    the ``unlimited`` columns are read with every value they have.

    What was detected (format, encoding, separator) is a note
    (:class:`_Stderr`): one line on stderr after the results once the
    command has succeeded, or in brackets in its error line; none with
    ``--quiet`` or ``--json``.
    """
    from .. import ReadLimits, datasets, read_data
    from ..data.choice import ColumnChoice

    ids = getattr(args, "id", [])
    if args.data in datasets.names():
        for given, option in (
            (args.sep is not None or args.encoding is not None, "--sep and --encoding"),
            (ids, "--id"),
        ):
            if given:
                raise UsageError(
                    f"effdim {args.command}: {option} apply to data files, not to the bundled data set {args.data!r}"
                )
        data = datasets.load(args.data)
        choice = ColumnChoice.of(args.columns, args.drop)
        if choice.chosen:
            for name in (*(choice.keep or ()), *choice.drop):
                data.index(name)  # names a column the data set has
            data = data.subset([c for c in data.columns if c in (choice.keep or data.columns) and c not in choice.drop])
        return data, None
    loaded = read_data(
        args.data,
        sep=args.sep,
        encoding=args.encoding,
        limits=ReadLimits(unlimited=unlimited),
        columns=args.columns,
        drop=args.drop,
        ids=ids,
    )
    if not (args.quiet or args.json):
        _STDERR.note(f"read {loaded.dataset.source} as {loaded.description()}")
    return loaded.dataset, loaded.ids


def _criteria(args: argparse.Namespace) -> list[str]:
    """The criteria a printed table shows: the paper's four and AIC (a sweep's also its sBIC and sBIC+), or
    all with ``--criteria all`` (the sBIC only in a sweep: it is a score of the sweep's chain of models)."""
    sweep = args.command == "sweep"
    if args.criteria == "all":
        return list(SCORES) if sweep else list(FIT_SCORES)
    return [*PAPER_SCORES, "aic", *(("sbic", "sbic+") if sweep else ())]


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
    from ..search import pick_caveats

    notes = pick_caveats(fit, swept)
    return f"   [{'; '.join(notes)}]" if notes else ""


def _json_fit(result) -> dict:
    """A fit's JSON: every score (higher is better) and the same on the -2LL scale under ``deviance``."""
    payload = result.to_json()
    payload["deviance"] = result.scores.deviance()
    return payload


def _cmd_fit(args: argparse.Namespace) -> None:
    from .. import fit
    from . import fit_output

    _prepare_report(args)
    fit_output.check_regression_options(args)
    settings = em_settings_of(args)
    formula = fit_output.formula_of(args)
    data, ids = _load_rows(args, (*three_step.outcome_columns(args), *fit_output.extra_columns(args, formula)))
    model = fit_output.model_of(args.model)
    mapping = mapping_of(args)
    result = fit(
        three_step.measurement_data(args, data, model, mapping),
        model,
        settings,
        covariates=formula,
        weights=args.weights,
        mapping=mapping,
        warn=False,
    )
    for node, order in _orders(args, result.model):
        result = result.relabeled(node, order)
    method = fit_output.se_method(args)
    if result.coefficients is not None:
        _fit_regression(args, result, data, method, ids)
        return
    distal = three_step.analyse(args, result, data)
    regression = three_step.regression(args, result, data)
    stats = result.fit_statistics()
    boot = None
    if args.bootstrap:
        from ..bootstrap import bootstrap_g2

        bar = _Progress(args.quiet or args.json, "bootstrap", "replicates")
        boot = bootstrap_g2(result, args.bootstrap, settings, execution=execution_of(args), progress=bar)
        bar.close()
    try:
        ident = result.identification()
    except EffdimError as err:  # too many parameters for the SVD: say so, show the rest
        ident = err
    equivalent = None
    if not result.unique and args.equivalent_fits:
        equivalent = result.equivalent_share_ranges(args.equivalent_fits, seed=args.seed)
    bvr = result.bivariate_residuals()
    _write_posteriors(args, result, ids)
    _write_report(args, result, data=data, bootstrap=boot, three_step=[*distal, *([regression] if regression else [])])
    notes = result.em.convergence_notes()
    if args.json:
        payload = _json_fit(result)
        payload["params"] = result.parameters_json()
        if method is not None:
            payload["params_se"] = result.standard_errors_json(method)
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
        if distal:
            payload["distal"] = [outcome.to_json() for outcome in distal]
        if regression is not None:
            payload["covariates_3step"] = regression.to_json()
        _emit_json(payload)
        return
    _print_fit_head(args, result, data, notes, method)
    print("\nfit (complete table of response patterns)")
    p = lambda v: "n/a" if v is None or v != v else f"{v:.4f}"  # noqa: E731  (None, NaN: not defined)
    print(
        f"G2 {p(stats.g2)}   X2 {p(stats.x2)}   df = dc - de = {stats.df}   "
        f"p(G2) {p(stats.p_g2)}   p(X2) {p(stats.p_x2)}"
        + (f"   bootstrap p(G2) {boot.p_value:.4f} (B = {boot.B})" if boot is not None else "")
    )
    for note in stats.to_json()["notes"]:
        print(f"  {note}")
    if stats.sparse and boot is None:
        print("  the bootstrap p-value of G2: --bootstrap B (e.g. 500)")
    avepp = ", ".join("n/a" if v is None else f"{v:.3f}" for v in stats.avepp)
    print(f"entropy R2 {p(stats.entropy_r2)}   average posterior of the modal {result.model.root} per state: {avepp}")
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
    three_step.print_outcomes(distal)
    three_step.print_regression(regression)
    if args.posteriors:
        print(f"posteriors written to {args.posteriors}")
    if args.report:
        print(f"report written to {args.report}")


def _print_fit_head(args: argparse.Namespace, result, data, notes: list[str], method: str | None) -> None:
    """The first part of ``fit``'s text: the model and rows, the scores, EM's starts, the shares and
    the profiles of the root (with standard errors unless ``--se none``)."""
    from . import fit_output

    print(f"model   {result.model}   data {data.source or args.data}: n = {_n(result.n)}{fit_output.rows_line(result)}")
    print(format_table(_score_headers(args), [_score_row(result, args)]))
    print(_scale_note(args, result))
    info = result.restarts
    print(
        f"\nEM: {result.starts_sentence()}; "
        f"{info['n_iter']} steps, {'converged' if info['converged'] else 'stopped at --max-iter'}"
    )
    print("start logliks: " + ", ".join(f"{x:.4f}" for x in info["start_logliks"]))
    for line in notes:
        print(f"warning: {line}")
    for line in result.degenerate:
        print(f"degenerate: {line}")
    shares = result.class_shares()
    regression = result.coefficients is not None
    for node in result.model.hidden:
        rows = shares[shares["node"] == result.labels.name(node)]
        mean = ": each row's class probabilities, averaged" if regression and node == result.model.root else ""
        print(f"\nshares of {node}{mean} (states by decreasing share; reorder with --order)")
        print(format_table(["state", "share"], [(r.state, r.share) for r in rows.itertuples()]))
    root = result.model.root
    headers, rows = fit_output.profile_rows(result, root, method)
    print(f"\nP(item = category | {root})")
    print(format_table(headers, rows, right=[False, False] + [True] * (len(headers) - 2)))
    fit_output.print_standard_error_notes(result, method)
    described = result.labels.described()
    if described:  # an SPSS or Stata file's variable labels: what each item asks
        print("\nitems (the file's variable labels)")
        print(format_table(["item", "asks"], list(described.items())))


def _write_posteriors(args: argparse.Namespace, result, ids) -> None:
    """``--posteriors FILE``: every row's posteriors, the ``--id`` columns first (:meth:`effdim.FitResult.posteriors`)."""
    if not args.posteriors:
        return
    table = result.posteriors(ids=ids)
    with writing(args.posteriors, "posteriors"):
        table.to_csv(args.posteriors, index=False)


def _fit_regression(args: argparse.Namespace, result, data, method: str | None, ids) -> None:
    """``fit --covariates``: the coefficients in place of the diagnostics of models without covariates."""
    from . import fit_output

    _write_posteriors(args, result, ids)
    _write_report(args, result, data=data)
    notes = result.em.convergence_notes()
    if args.json:
        payload = _json_fit(result)
        payload["params"] = result.parameters_json()
        payload["covariates"] = fit_output.regression_json(result, method)
        if method is not None:
            payload["params_se"] = result.standard_errors_json(method)
        payload["convergence"] = notes
        _emit_json(payload)
        return
    _print_fit_head(args, result, data, notes, method)
    fit_output.print_coefficients(result, method)
    print("CS and CS+ are not defined for a regression (their prior has no counterpart for coefficients)")
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
    """Before any work: refuse output files that cannot or must not be written (:mod:`.outputs`), and for
    ``--report`` fix a seed so the command in the report reproduces the numbers."""
    outputs = {
        "--report": args.report,
        "--posteriors": getattr(args, "posteriors", None),
        "--table-file": getattr(args, "table_file", None),
    }
    reads = [args.data] + ([args.model] if args.model else [])
    check_outputs(args.command, outputs, reads, args.overwrite)
    if args.report is None:
        return
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "big") >> 1


def _write_report(args: argparse.Namespace, fit, **inputs) -> None:
    """Write the HTML report (:mod:`effdim.report`) with the command that reproduces it, if ``--report``."""
    if args.report is None:
        return
    from ..report import command_line, write_report

    sep = next((name for name, char in SEPARATOR_NAMES.items() if char == args.sep), args.sep)
    options = {
        "--sep": sep,
        "--encoding": args.encoding,
        "--model": args.model,
        "--node": getattr(args, "node", None),
        "--max-card": getattr(args, "max_card", None),
        "--past-saturation": getattr(args, "until_saturated", True) is False,
        "--score": getattr(args, "score", None),
        "--pick": getattr(args, "pick", None),
        "--columns": args.columns,
        "--drop": args.drop,
        "--id": getattr(args, "id", None),
        "--map": args.map,
        "--order": getattr(args, "order", None),
        "--distal": getattr(args, "distal", None),
        "--covariates-3step": getattr(args, "covariates_3step", None),
        "--distal-method": getattr(args, "distal_method", None) if _three_step(args) else None,
        "--distal-assignment": getattr(args, "distal_assignment", None) if _three_step(args) else None,
        "--step1-uncertainty": getattr(args, "step1_uncertainty", False),
        "--restarts": args.restarts,
        "--seed": args.seed,
        "--tol": args.tol,
        "--max-iter": args.max_iter,
        "--prior": args.prior,
        "--cs-prior": args.cs_prior,
        "--bootstrap": getattr(args, "bootstrap", None),
        "--sbic-phi": getattr(args, "sbic_phi", None),
        "--blrt": getattr(args, "blrt", None),
        "--report": args.report,
    }
    with writing(args.report, "report"):
        write_report(args.report, fit, command=command_line(args.command, args.data, options), **inputs)


def _three_step(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "distal", None) or getattr(args, "covariates_3step", None))


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


@contextlib.contextmanager
def _convergence_notes():
    """Collect the fits' ConvergenceWarnings into a list (printed as ``warning:`` lines, or in the JSON)
    instead of Python's warning lines with a file name and a line of source."""
    import warnings

    from .. import ConvergenceWarning

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
    from .. import load_model
    from ..bootstrap import blrt

    data = _load_data(args)
    model = load_model(args.model)
    settings = em_settings_of(args)
    bar = _Progress(args.quiet or args.json, "blrt", "replicates")
    with _convergence_notes() as notes:
        result = blrt(
            data,
            model,
            args.node,
            args.bootstrap,
            settings,
            mapping=mapping_of(args),
            execution=execution_of(args),
            progress=bar,
            stop_after=args.stop_after,
        )
        bar.close()
    if args.json:
        _emit_json({**result.to_json(), "convergence": notes})
        return
    print(f"bootstrap likelihood-ratio test: {result.null_model} (null) against {result.alternative}")
    drawn = (
        f"B = {result.B}" if not result.stopped_early else f"stopped after {result.B} of {result.planned} replicates"
    )
    print(f"LR = 2 (LL_k - LL_k-1) = {result.statistic:.4f}   bootstrap p = {result.p_value:.4f}   ({drawn})")
    print("a small p favours the model with more states")
    for note in notes:
        print(f"warning: {note}")


def _cmd_sweep(args: argparse.Namespace) -> None:
    from .. import load_model, sweep

    table_format = _table_format(args)
    _prepare_report(args)
    settings = em_settings_of(args)
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
        settings=settings,
        mapping=mapping_of(args),
    )
    bar.close()
    table = _enumeration(args, results, settings) if table_format is not None else None
    _write_report(args, best(results, args.pick), data=data, sweep=results, pick=args.pick, enumeration=table)
    if args.table_file:
        with writing(args.table_file, "class-enumeration table"):
            text = _TABLE_WRITERS[table_format](table)
            with open(args.table_file, "w", encoding="utf-8", newline="") as out:
                out.write(text)
    if args.json:
        payload = [_json_fit(r) for r in results]
        _emit_json(payload if table is None else {"fits": payload, "table": table.to_json()})
        return
    node = args.node or results[0].model.root
    shown = model if model is not None else results[-1].model
    print(
        f"sweep of |{node}| = {results[0].card}..{results[-1].card} in {shown}   "
        f"data {data.source or args.data}: n = {_n(results[0].n)}"
    )
    if table is not None:
        _print_enumeration(table)
    else:
        rows = [
            [r.card, *_score_row(r, args), r.restarts["n_best"], "degenerate" if r.degenerate else ""] for r in results
        ]
        print(format_table(["card", *_score_headers(args), "starts at best", "flags"], rows))
        print(_scale_note(args, results[0]))
        print()
        width = max(len(SCORES[c].label) for c in _criteria(args))
        for c in _criteria(args):
            pick = best(results, c)
            print(f"best by {SCORES[c].label:<{width}} |{node}| = {pick.card}{_caveats(pick, results)}")
        print(f"(ties within {TIE_TOLERANCE:g} nats per row go to the smaller model)")
    if args.table_file:
        print(f"class-enumeration table written to {args.table_file}")
    if args.report:
        print(f"report of the {SCORES[args.pick].label} pick written to {args.report}")


#: How ``--table-file`` writes each format, by the file's extension.
_TABLE_WRITERS = {
    ".csv": lambda t: t.to_csv(),
    ".md": lambda t: t.to_markdown(),
    ".tex": lambda t: t.to_latex(),
    ".json": lambda t: json.dumps(t.to_json(), indent=2) + "\n",
}


def _table_format(args: argparse.Namespace) -> str | None:
    """The format of ``--table-file`` by its extension (``""`` for a table printed only; ``None``: no
    table), refused in words before any work."""
    if args.table_file is not None:
        ext = os.path.splitext(args.table_file)[1].lower()
        if ext not in _TABLE_WRITERS:
            raise UsageError(
                f"effdim sweep: --table-file {args.table_file!r} needs the extension of its format: "
                f"{', '.join(_TABLE_WRITERS)}"
            )
        return ext
    if args.stop_after is not None and not args.blrt:
        raise UsageError("effdim sweep: --stop-after stops the bootstrap LRT early; give the replicates with --blrt B")
    return "" if args.table or args.blrt else None


def _enumeration(args: argparse.Namespace, results, settings):
    """The class-enumeration table of the sweep (:mod:`effdim.enumeration`), with the BLRT of ``--blrt``."""
    from ..bootstrap import blrt_sweep
    from ..enumeration import enumeration_table

    boot = None
    if args.blrt:
        bar = _Progress(args.quiet or args.json, "blrt", "replicates")
        boot = blrt_sweep(
            results, args.blrt, settings, execution=execution_of(args), progress=bar, stop_after=args.stop_after
        )
        bar.close()
    return enumeration_table(results, boot)


def _print_enumeration(table) -> None:
    from ..enumeration import COLUMNS

    print(format_table([c.label for c in COLUMNS], table.text_rows(), [True] * len(COLUMNS)))
    print(table.caption())
    print("picks: " + ", ".join(f"{label} {k}" for label, k in table.picks().items() if k is not None))
    for note in table.notes:
        print(f"note: {note}")


def _cmd_search(args: argparse.Namespace) -> None:
    from .. import hill_climb, load_model

    _prepare_report(args)
    settings = em_settings_of(args)
    data = _load_data(args)
    model = load_model(args.model)
    bar = _Progress(args.quiet or args.json, f"search ({args.score})")
    climb = hill_climb(data, model, args.score, settings=settings, mapping=mapping_of(args), progress=bar)
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
    from .. import learn_structure

    settings = em_settings_of(args)
    data = _load_data(args)
    bar = _Progress(args.quiet or args.json, "learn")

    def report(p) -> None:
        bar.show(f"learn: {p.steps} steps, {p.candidates} candidates, score {p.score:.2f}, {p.elapsed:.0f} s  ")

    with _convergence_notes() as notes:
        result = learn_structure(
            data,
            score=args.score,
            start=args.start,
            max_time=args.max_time,
            rounds=args.rounds,
            execution=execution_of(args) if args.workers or args.scheduler else None,
            mapping=mapping_of(args),
            em=settings,
            progress=report,
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
        f"{result.seconds:.1f} s; stopped: {_stopped_words(result.stopped, args)}; "
        f"{result.rounds} of at most {args.rounds} rounds from its own end ended higher"
    )
    for note in notes:
        print(f"warning: {note}")


def _stopped_words(stopped: str, args: argparse.Namespace) -> str:
    """Why a structure search ended, in the CLI's words (the JSON keeps the engine's ``stopped``)."""
    if stopped == "max_time":
        return f"the time limit (--max-time {args.max_time:g} s)"
    return stopped
