"""Plain-language explanations of every number the dashboard shows.

For classroom use each number says which rule of Kocka & Zhang (2002)
produced it. The texts substitute the model's cardinalities into the paper's
formulas and quote the *engine's* result; nothing is recomputed here (the one
engine call, :func:`effdim.bounds.lc_bounds`, only names the split of
Theorem 3).
"""

from __future__ import annotations

from effdim import HLCModel

__all__ = [
    "COLUMN_TOOLTIPS",
    "TOTAL_TOOLTIPS",
    "totals_markdown",
    "local_markdown",
    "regularity_rules_markdown",
    "scored_model",
]

COLUMN_TOOLTIPS: dict[str, str] = {
    "hidden": "Hidden node H. Its row is the local LC model of H and its neighbours Ne(H) (Section 2.2, Theorem 5).",
    "LC model": "The local LC model |H| : |Ne(H)| in the paper's notation (hidden neighbours count as observed).",
    "ds": "Standard dimension of the local LC model: (|H|-1) + |H|·Σ(|Y|-1) over Y in Ne(H) (Section 2.1).",
    "de": "Effective dimension of the local LC model: rank of the Jacobian of θ -> P(Ne(H)) (Section 2.4).",
    "dc": "Complete dimension Π|Ne(H)| - 1: the most any model over Ne(H) can have (Section 2.4).",
    "dp": "Pairwise bound (Theorem 3): split Ne(H) into U1, U2; |H|(|U1|+|U2|-|H|) - 1 if |H| < min(|U1|,|U2|), else dc.",
    "db": "db = min(ds, dc, dp), the upper bound of Theorem 4 (tight for almost all LC models, Table 1).",
    "binding": "Which of ds, dc, dp attains db (Theorem 4; Lemma 3.1 says when ds binds).",
    "deficit": "ds - de of the local model. Corollary 4.1: these add up to ds - de of the whole model.",
}

TOTAL_TOOLTIPS: dict[str, str] = {
    "ds": "Standard dimension: the number of free parameters, Σ over nodes X of (|X|-1)·|Pa(X)| (Section 2.1).",
    "de": "Effective dimension: the rank of the Jacobian of the map from parameters to P(O) (Geiger et al. 1996; Section 2.4).",
    "dc": "Complete dimension: Π|O| - 1 over the observed variables; de can never exceed it (Section 2.4).",
    "gap": "ds - de: parameters that do not change P(O). Corollary 4.1: the sum of the local LC models' deficits.",
}


def _product(cards) -> str:
    return "·".join(str(c) for c in cards)


def _ds_terms(model: HLCModel) -> str:
    root = model.root
    terms = [f"({model.card(root)}-1)"]
    for parent, child in model.edges:
        terms.append(f"{model.card(parent)}·({model.card(child)}-1)")
    return " + ".join(terms)


def totals_markdown(model: HLCModel, report) -> str:
    """Where ds, de, dc and ds - de of ``report`` (for ``model``) come from."""
    obs = [model.card(o) for o in model.observed]
    lines = [
        f"**ds = {report.ds}** (Section 2.1): every node X contributes (|X|-1)·|Pa(X)| free parameters: "
        f"{_ds_terms(model)} = {report.ds}.",
        f"**dc = {report.dc}** (Section 2.4): the complete model over the {len(obs)} observed variables, "
        f"{_product(obs)} - 1 = {report.dc}; de ≤ dc.",
    ]
    if report.de is None:
        lines.append(
            f"**de is not computed** ({report.de_method}). Theorem 4 on each local LC model, pushed "
            f"through Corollary 4.1, bounds it: de ≤ {report.upper_bound}."
        )
        return "\n\n".join(lines)
    gap = report.ds - report.de
    lines += [
        f"**de = {report.de}** ({report.de_status}; {report.de_basis}): the rank of the Jacobian of parameters "
        "-> P(O) "
        f"(Geiger et al. 1996), computed by {report.de_method}. "
        + (
            "*Proven*: a rank modulo a large prime at a random point is a certified lower bound, and it met an "
            "upper bound (db of Theorem 4, or the sum of Corollary 4.1)."
            if report.de_status == "proven"
            else "*Probable*: the certified lower bound stayed below the upper bound; the value is the generic rank "
            f"unless every random point was unlucky, which has probability at most {report.failure_bound:.1e} "
            "(Schwartz-Zippel)."
        ),
    ]
    if len(model.hidden) > 1:
        deficits = " + ".join(str(row.deficit) for row in report.local)
        lines.append(
            f"**ds - de = {gap}** (Theorem 5, Corollary 4.1): for a regular HLC model the gap is the sum of the "
            f"gaps of the local LC models, one per hidden node: {deficits} = {report.deficit_sum}."
        )
    else:
        lines.append(f"**ds - de = {gap}**: parameters of this LC model that do not change P(O) (Table 1, ds - de).")
    if all(model.card(n) == 2 for n in model.nodes):
        few = [h for h in model.hidden if len(model.neighbors(h)) < 3]
        lines.append(
            f"**Theorem 2** (Settimi & Smith 1999) also applies: every variable is binary, and {len(few)} hidden "
            f"node(s) have fewer than three neighbours ({', '.join(few) or 'none'}), so ds - de = 2·{len(few)} = "
            f"{2 * len(few)}" + (" — as computed." if 2 * len(few) == gap else f"; the engine finds {gap}.")
        )
    return "\n\n".join(lines)


def local_markdown(model: HLCModel, row) -> str:
    """Every number of one local LC model row, with the rule that produced it."""
    from effdim.bounds import lc_bounds

    h = row.hidden
    local = model.local_lc(h)
    ne = local.observed
    r = local.card(h)
    cards = [local.card(n) for n in ne]
    bounds = lc_bounds(local)
    ne_text = ", ".join(f"{n}:{local.card(n)}" for n in ne)
    sum_terms = "+".join(f"({c}-1)" for c in cards)
    lines = [
        f"**Local LC model of {h}: {row.lc}**. {h} is the hidden variable; its neighbours Ne({h}) = "
        f"{{{ne_text}}} act as observed variables (Section 2.2; Theorem 5 cuts the tree at every hidden node).",
        f"- **ds = {row.ds}**: (|{h}|-1) + |{h}|·Σ(|Y|-1) = ({r}-1) + {r}·({sum_terms}) = {row.ds}.",
        f"- **dc = {row.dc}**: Π|Ne({h})| - 1 = {_product(cards)} - 1 = {row.dc}.",
    ]
    if bounds.split:
        u1 = list(bounds.split)
        u2 = [n for n in ne if n not in u1]
        a = 1
        for n in u1:
            a *= local.card(n)
        b = (row.dc + 1) // a
        lines.append(
            f"- **dp = {row.dp}** (Theorem 3): the split U1 = {{{', '.join(u1)}}} (|U1| = {a}), "
            f"U2 = {{{', '.join(u2)}}} (|U2| = {b}) has |{h}| = {r} < min({a}, {b}), so by Theorem 1 "
            f"dp = |{h}|(|U1|+|U2|-|{h}|) - 1 = {r}·({a}+{b}-{r}) - 1 = {row.dp}; it is the best split "
            "(|U1| as close to √|Ne| as the products allow)."
        )
    else:
        lines.append(
            f"- **dp = {row.dp} = dc** (Theorem 3): no split of Ne({h}) into U1, U2 has "
            f"|{h}| = {r} < min(|U1|, |U2|), so the pairwise bound falls back to dc (Table 1 writes 'dc')."
        )
    lines.append(
        f"- **db = {row.db}** (Theorem 4): min(ds, dc, dp) = min({row.ds}, {row.dc}, {row.dp}); "
        f"the binding bound is **{row.binding}**"
        + (" (Lemma 3.1 gives a sufficient condition for ds to bind)." if row.binding == "ds" else ".")
    )
    if len(ne) == 2:
        de_rule = "Theorem 1 (Settimi & Smith 1998) covers two neighbours: " + (
            f"|{h}| ≤ min gives de = ds - |{h}|(|{h}|-1)." if r <= min(cards) else "de = dc."
        )
    else:
        de_rule = "the Jacobian rank of this LC model"
    if row.de is None:
        lines.append(f"- **de is not computed** here: too large for this server; it is at most db = {row.db}.")
        return "\n".join(lines)
    tight = (
        "equal to db: the bound of Theorem 4 is tight here"
        if row.de == row.db
        else (
            f"{row.db - row.de} below db: one of the rare LC models where Theorem 4 overestimates "
            "(the paper found 3:2,2,2,2 and 4:3,3,3)"
        )
    )
    lines.append(f"- **de = {row.de}**: {de_rule}; {tight}.")
    lines.append(
        f"- **deficit = ds - de = {row.ds} - {row.de} = {row.deficit}**: Corollary 4.1 adds it to the other hidden "
        "nodes' deficits to give ds - de of the whole model."
    )
    return "\n".join(lines)


def regularity_rules_markdown() -> str:
    return (
        "A hidden node H is **regular** when |H| ≤ Π|Ne(H)| / max|Ne(H)| (Lemma 3.2 for LC models, "
        "Lemma 4.1 for HLC models), strictly when H has exactly two neighbours and one of them is hidden. "
        "An irregular model represents the same distributions over the observed variables as its regular "
        "equivalent, so both have the same de; Theorem 5 and Corollary 4.1 need a regular model."
    )


def scored_model(mapping: str, columns: int | None) -> str:
    """Which model the Data tab scores, said beside the tree editor's model in the sidebar ("" without data:
    ``columns`` None): an LC model over the data's columns (``mapping`` 'lc') is not the sidebar's model, which
    stayed on screen while it was fitted; 'model' scores the sidebar's."""
    if columns is None:
        return ""
    if mapping == "lc":
        return (
            f"The Data tab scores an LC model over the data's {columns} column{'s' if columns != 1 else ''}, not "
            "this model; choose 'Edited model (leaves = columns)' there to score this one."
        )
    return "The Data tab scores this model, its leaves matched to the data's columns."
