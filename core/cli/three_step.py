"""``effdim fit --distal COLUMN`` and ``--covariates-3step FORMULA``: distal outcomes and covariates of the
fitted classes by the three-step method (:mod:`effdim.threestep`), their options, their tables."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import UsageError
from .output import format_table

#: The kinds a ``--distal COLUMN:KIND`` may name.
_KINDS = ("categorical", "continuous")
#: The step-3 methods in the words of the printed tables.
METHOD_WORDS = {
    "bch": "BCH correction",
    "ml": "ML correction",
    "modal": "modal assignment, uncorrected",
    "proportional": "proportional assignment, uncorrected",
}


def add_options(parser: argparse.ArgumentParser) -> None:
    """``--distal``, ``--distal-method`` and ``--distal-assignment`` of ``effdim fit``."""
    parser.add_argument(
        "--distal",
        action="append",
        default=[],
        metavar="COLUMN[:KIND]",
        help="a column left out of the model whose class-specific mean or category probabilities to "
        "estimate by the three-step method (repeatable); KIND is categorical or continuous (default: "
        "continuous for numbers with more than 10 values)",
    )
    parser.add_argument(
        "--covariates-3step",
        default=None,
        metavar="FORMULA",
        help="covariates of the classes by the three-step method (as --covariates: A + B, A*B, A:B, "
        "C(A)), a multinomial logit of the classes of the model fitted without them",
    )
    parser.add_argument(
        "--distal-method",
        choices=("bch", "ml", "modal", "proportional"),
        default="bch",
        help="step 3 of --distal and --covariates-3step: the BCH or ML correction of the classification "
        "error (Vermunt 2010), or uncorrected modal or proportional assignment, for comparison (default bch)",
    )
    parser.add_argument(
        "--step1-uncertainty",
        action="store_true",
        help="add the measurement model's uncertainty to the standard errors of --distal and "
        "--covariates-3step (Bakk, Oberski and Vermunt 2014; default: the classification error taken as known)",
    )
    parser.add_argument(
        "--distal-assignment",
        choices=("modal", "proportional"),
        default="modal",
        help="step 2 of --distal and --covariates-3step for the bch and ml methods: each row to its most "
        "probable class, or to every class with its posterior (default modal)",
    )


def formula_of(args: argparse.Namespace):
    """``--covariates-3step`` parsed (:func:`effdim.formula.parse_formula`) before any data is read; ``None``
    without it."""
    if args.covariates_3step is None:
        return None
    from ..formula import parse_formula

    return parse_formula(args.covariates_3step)


def outcome_columns(args: argparse.Namespace) -> list[str]:
    """The columns ``--distal`` may name (each text whole, and without a ``:KIND``) and those of
    ``--covariates-3step``, to read whole."""
    formula = formula_of(args)
    names = list(formula.columns) if formula is not None else []
    for text in args.distal:
        names.append(text)
        column, sep, _ = text.rpartition(":")
        if sep:
            names.append(column)
    return names


def outcomes_of(args: argparse.Namespace, columns: tuple[str, ...]) -> dict[str, str]:
    """``--distal`` as column -> kind: a text that names a column is that column (of kind ``auto``),
    else ``COLUMN:KIND``; a column named twice, or no column, is a :class:`UsageError`."""
    outcomes: dict[str, str] = {}
    for text in args.distal:
        column, kind = text, "auto"
        if text not in columns:
            name, sep, suffix = text.rpartition(":")
            if sep and suffix in _KINDS:
                column, kind = name, suffix
            elif sep and name in columns:
                raise UsageError(
                    f"effdim {args.command}: --distal {text!r}: the kind after ':' is categorical or continuous"
                )
        if column not in columns:
            shown = ", ".join(columns)
            raise UsageError(f"effdim {args.command}: --distal {text!r} names no column of the data ({shown})")
        if column in outcomes:
            raise UsageError(f"effdim {args.command}: --distal names {column!r} twice")
        outcomes[column] = kind
    return outcomes


def measurement_data(args: argparse.Namespace, data: Any, model: Any, mapping: dict | None) -> Any:
    """The data of step 1: without the outcome and three-step covariate columns, which the model may not use."""
    formula = formula_of(args)
    if not args.distal and formula is None:
        return data
    outcomes = list(outcomes_of(args, data.columns))
    covariates = [c for c in (formula.columns if formula is not None else ()) if c not in outcomes]
    for column in covariates:
        data.index(column)  # names a column the data do not have
    used = set(mapping.values()) if mapping else set(getattr(model, "observed", ()))  # --model K: none yet
    for option, columns in (("--distal", outcomes), ("--covariates-3step", covariates)):
        clash = [c for c in columns if c in used]
        if clash:
            raise UsageError(
                f"effdim {args.command}: {option} names {clash[0]!r}, an item of the model; the three-step "
                "method relates the classes to a column left out of it"
            )
    left_out = set(outcomes) | set(covariates)
    return data.subset([c for c in data.columns if c not in left_out])


def analyse(args: argparse.Namespace, result: Any, data: Any) -> list:
    """The three-step estimates of every ``--distal`` outcome (none without one)."""
    if not args.distal:
        return []
    return result.distal(
        data,
        outcomes_of(args, data.columns),
        method=args.distal_method,
        assignment=args.distal_assignment,
        step1=args.step1_uncertainty,
    )


def regression(args: argparse.Namespace, result: Any, data: Any) -> Any:
    """The three-step regression of ``--covariates-3step`` (None without it)."""
    formula = formula_of(args)
    if formula is None:
        return None
    from ..threestep import covariates_3step

    return covariates_3step(
        result,
        data,
        formula,
        method=args.distal_method,
        assignment=args.distal_assignment,
        step1=args.step1_uncertainty,
    )


def print_regression(found: Any) -> None:
    """The three-step regression's coefficient table and its Wald tests per term."""
    if found is None:
        return
    from ..threestep.result import se_words
    from .fit_output import print_coefficient_table

    method = METHOD_WORDS[found.method]
    missing = f", {_n(found.n_missing)} left out for a missing covariate" if found.n_missing else ""
    print_coefficient_table(
        f"three-step regression of {found.node} ({method}; {_n(found.n)} rows{missing}; standard errors "
        f"{se_words(found.se_method)})",
        found.node,
        found.design,
        found.table(),
    )
    for term, statistic, df, p in found.tests:
        if statistic is not None:
            print(f"Wald test that {term} leaves the classes alike: W = {statistic:.3f}, df = {df}, p = {p:.4g}")
    for note in found.notes:
        print(f"note: {note}")


def print_outcomes(outcomes: list) -> None:
    """Each outcome's table of class estimates with standard errors and intervals, and its Wald test."""
    if not outcomes:
        return
    from ..threestep.result import se_words

    first = outcomes[0]
    method = METHOD_WORDS[first.method]
    error = first.classification
    print(
        f"\ndistal outcomes by the three-step method ({method}; {error.assignment} assignment "
        f"misclassifies {100 * error.error_rate:.1f} % of the rows; standard errors {se_words(first.se_method)})"
    )
    for outcome in outcomes:
        _print_outcome(outcome)


def _print_outcome(outcome: Any) -> None:
    lower, upper = outcome.intervals()
    se = outcome.se
    missing = f", {_n(outcome.n_missing)} without a value" if outcome.n_missing else ""
    print(f"\n{outcome.column} ({outcome.kind}; {_n(outcome.n)} rows with a value{missing})")
    if outcome.kind == "continuous":
        rows = [
            (
                c,
                float(outcome.shares[i]),
                float(outcome.estimates[i, 0]),
                _f(se[i, 0]),
                _ci(lower[i, 0], upper[i, 0]),
                _f(outcome.sd[i]),
            )
            for i, c in enumerate(outcome.classes)
        ]
        print(format_table([outcome.node, "share", "mean", "SE", "95% CI", "SD"], rows))
        what = "means"
    else:
        rows = []
        for i, c in enumerate(outcome.classes):
            for j, category in enumerate(outcome.categories):
                first = j == 0
                rows.append(
                    (
                        c if first else "",
                        f"{outcome.shares[i]:.4f}" if first else "",
                        str(category),
                        float(outcome.estimates[i, j]),
                        _f(se[i, j]),
                        _ci(lower[i, j], upper[i, j]),
                    )
                )
        print(format_table([outcome.node, "share", "category", "probability", "SE", "95% CI"], rows))
        what = "probabilities"
    wald = outcome.wald
    if wald.df:
        print(
            f"Wald test of equal {what} in every class: W = {wald.statistic:.3f}, df = {wald.df}, p = {wald.p_value:.4g}"
        )
    for note in outcome.notes:
        print(f"note: {note}")


def _f(x: float) -> str:
    return "n/a" if x != x else f"{x:.4f}"


def _ci(lower: float, upper: float) -> str:
    return "n/a" if lower != lower else f"{lower:.4f} to {upper:.4f}"


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"
