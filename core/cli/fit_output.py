"""What ``effdim fit`` adds for covariates, weights and standard errors: the options read, the coefficient
table, the probabilities with their standard errors, and their JSON (``covariates``, ``params_se``,
``rows``)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .arguments import UsageError
from .output import format_table


def formula_of(args: argparse.Namespace):
    """``--covariates`` parsed (:func:`effdim.formula.parse_formula`), before any data is read; ``None``
    without it."""
    if args.covariates is None:
        return None
    from ..formula import parse_formula

    return parse_formula(args.covariates)


def extra_columns(args: argparse.Namespace, formula) -> list[str]:
    """The columns read with every value they have: the covariates and the weights."""
    return [*(formula.columns if formula is not None else ()), *([args.weights] if args.weights else [])]


def model_of(spec: str):
    """``--model``: a number of classes (an LC model over the columns left), notation, or a JSON file."""
    from .. import load_model

    text = spec.strip()
    if text.isdigit():
        k = int(text)
        if k < 1:
            raise UsageError("effdim fit: --model K needs at least 1 class")
        return k
    return load_model(spec)


def se_method(args: argparse.Namespace) -> str | None:
    """``--se`` (``None`` for ``none``; the default: robust with weights, else observed)."""
    if args.se == "none":
        return None
    return args.se or ("robust" if args.weights else "observed")


def check_regression_options(args: argparse.Namespace) -> None:
    """Options a latent class regression has no counterpart for, refused before the fit."""
    if args.covariates is not None and args.bootstrap:
        raise UsageError("effdim fit: --bootstrap tests the fit of a model without covariates; leave out --covariates")
    if args.covariates is not None and getattr(args, "covariates_3step", None):
        raise UsageError(
            "effdim fit: --covariates (one step) and --covariates-3step (three steps) are two ways to the same "
            "regression; give one"
        )
    if args.covariates is not None and getattr(args, "distal", None):
        raise UsageError(
            "effdim fit: --distal takes the classes of a model without covariates (the three-step method); "
            "leave out --covariates"
        )


def rows_line(result) -> str:
    """Which rows the fit used and left out, for the first line of the output."""
    if result.case is None:
        return ""
    rows = result.rows_json()
    parts = []
    if rows["left_out_missing_covariate"]:
        parts.append(f"{_n(rows['left_out_missing_covariate'])} left out for a missing covariate")
    if rows["left_out_missing_or_zero_weight"]:
        parts.append(f"{_n(rows['left_out_missing_or_zero_weight'])} for a missing or zero weight")
    weights = f"; sampling weights {rows['weights']}, rescaled to sum to n" if rows["weights"] else ""
    return f" of {_n(rows['n_input'])} rows" + (f" ({', '.join(parts)})" if parts else "") + weights


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def profile_rows(result, node: str, method: str | None) -> tuple[list[str], list[list]]:
    """``P(item = category | node)`` as table rows, each probability with its standard error in brackets
    (or why it has none) when ``method`` is set."""
    from ..profiles import profile_table

    wide = profile_table(result.profiles(node))
    headers = ["item", "category", *[f"{node}={c}" for c in wide.columns]]
    rows = []
    se_of = _item_errors(result, node, method) if method else None
    for (item, category), values in zip(wide.index, wide.to_numpy().tolist()):
        cells = []
        for k, v in enumerate(values):
            if se_of is None:
                cells.append(v)
            else:
                se, flag = se_of.get((item, str(category), k), (math.nan, ""))
                cells.append(f"{v:.4f} ({flag or _se(se)})")
        rows.append([item, category, *cells])
    return headers, rows


def _se(value: float) -> str:
    return "n/a" if value != value else f"{value:.4f}"


def _item_errors(result, node: str, method: str) -> dict:
    """(item column, category text, class) -> (standard error, flag) of the items that are children of ``node``."""
    se = result.standard_errors(method)
    labels, model = result.labels, result.model
    out = {}
    for leaf in model.children(node):
        if model.is_hidden(leaf):
            continue
        for k in range(model.card(node)):
            for c in range(model.card(leaf)):
                out[(labels.name(leaf), str(labels.state(leaf, c)), k)] = (
                    float(se.tables[leaf][k, c]),
                    se.flags[leaf][k, c],
                )
    return out


def print_standard_error_notes(result, method: str | None) -> None:
    if method is None:
        return
    se = result.standard_errors(method)
    print(f"standard errors in brackets: {_METHOD_WORDS[method]}")
    for note in se.notes():
        print(f"  {note}")


_METHOD_WORDS = {
    "observed": "observed information (minus the Hessian of the log-likelihood)",
    "empirical": "empirical information (outer product of the scores, as poLCA)",
    "robust": "robust sandwich (observed information and the scores' outer product)",
}


def print_coefficients(result, method: str | None) -> None:
    """The regression's coefficients, standard errors, z, p and odds ratios with their 95 % intervals."""
    table = result.coefficient_table(method) if method else _no_se_table(result)
    print_coefficient_table(f"latent class regression of {result.model.root}", result.model.root, result.design, table)


def print_coefficient_table(title: str, root: str, design, table) -> None:
    """A coefficient table (:func:`effdim.regression.coefficient_table`) under ``title``: one-step or
    three-step, the same columns."""
    print(f"\n{title} on {design.formula} (log odds of each class against class 1; {_references(design)})")
    rows = [
        [
            r["term"],
            f"{root}={r['class']}",
            r["coefficient"],
            r["flag"] or _se(r["se"]),
            _se(r["z"]),
            _p(r["p"]),
            r["odds_ratio"],
            f"{r['or_low']:.3f}-{r['or_high']:.3f}"
            if r["or_low"] == r["or_low"] and r["or_high"] == r["or_high"]
            else "n/a",
        ]
        for r in table.to_dict("records")
    ]
    print(format_table(["term", "class", "coef", "se", "z", "p", "odds ratio", "95% interval"], rows))


def _references(design) -> str:
    refs = design.references
    if not refs:
        return "covariates as numbers"
    return "reference categories: " + ", ".join(f"{c} = {v}" for c, v in refs.items())


def _p(p: float) -> str:
    if p != p:
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _no_se_table(result):
    from ..regression import coefficient_table

    return coefficient_table(result.design, result.coefficients, None)


def regression_json(result, method: str | None) -> dict[str, Any]:
    """``covariates`` (with ``se``, ``z``, ``p`` ``null`` under ``--se none``) for a regression."""
    if method is not None:
        return result.covariates_json(method)
    from ..regression import coefficients_json

    root = result.model.root
    states = [result.labels.state(root, h) for h in range(result.model.card(root))]
    return coefficients_json(result.design, result.coefficients, None, node=result.labels.name(root), states=states)
