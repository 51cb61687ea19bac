"""The commands that read a model only: ``dims`` (Theorem 1 and Theorem 3 of the paper, docs/theory.md),
``regularize`` and ``gaps``."""

from __future__ import annotations

import argparse

from ..limits import SizeLimitError, number_text
from .output import _emit_json, format_table


def _cmd_dims(args: argparse.Namespace) -> None:
    from .. import load_model
    from ..dimensions import LocalDimensions, bounds_report, dimensions

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
    from .. import format_model, load_model, regularity_violations, regularize

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
    from ..survey import bound_gaps

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
