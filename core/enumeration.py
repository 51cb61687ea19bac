"""The class-enumeration table an LCA paper prints, one row per number of classes of a sweep.

Per fitted number of states ``k`` of the swept hidden node (the classes of an
LC model): the log-likelihood ``LL``, ``ds`` and ``de``; BIC, SABIC, CAIC,
AIC, BIC+, sBIC and sBIC+ (:mod:`effdim.scores`, :mod:`effdim.sbic`) on the
``-2 log L + penalty`` scale LCA papers, poLCA and Mplus print (lower is
better); three classification measures of the node's posteriors ``p_nh``
over the ``N`` rows:

* ``entropy``: the classification entropy ``E = - sum_n sum_h p_nh log p_nh``
  (nats; 0 = every row certain);
* ``relative_entropy``: ``1 - E / (N log k)``, what Mplus prints as "Entropy"
  (Ramaswamy, DeSarbo, Reibstein & Robinson 1993; effdim's fit statistics call
  it entropy R2, :mod:`effdim.diagnostics`); 1 = perfect separation;
* ``entropy_r2``: Latent GOLD's entropy R-squared (Vermunt & Magidson 2005),
  ``1 - E / (N H(pi))`` with ``H(pi) = - sum_h pi_h log pi_h`` the entropy of
  the class shares: the share of the uncertainty about the class, before the
  answers are seen, that the answers remove;

the smallest class share ``min pi_h``; the tests of ``k - 1`` against ``k``
classes: the bootstrap likelihood-ratio test's p (:func:`effdim.bootstrap.blrt_sweep`,
when it was run) and the Vuong-Lo-Mendell-Rubin p and its ad hoc adjusted
version (:func:`effdim.lmr.lmr_test`; latent class models); and how many EM
starts reached the best log-likelihood, out of how many.

Where ``de < ds`` (Kocka & Zhang 2002) the parameters, class shares,
posteriors and so the three entropy measures and the smallest share are not
unique: they are those of the estimate EM returned (``docs/theory.md``,
section 9); the table's notes say so.

Exports: :meth:`EnumerationTable.to_csv`, :meth:`~EnumerationTable.to_markdown`,
:meth:`~EnumerationTable.to_latex` and :meth:`~EnumerationTable.to_json`.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidArgument
from .scores import SCORES, best_index

__all__ = ["EnumerationRow", "EnumerationTable", "enumeration_table", "COLUMNS", "CRITERIA", "ALPHA"]

#: The significance level at which a test's pick stops (the first ``k`` whose ``k + 1`` is not significant).
ALPHA = 0.05
#: The criteria of the table, in its order (names of :data:`effdim.scores.SCORES`).
CRITERIA = ("bic", "sabic", "caic", "aic", "bic+", "sbic", "sbic+")


@dataclass(frozen=True)
class Column:
    """One column: its ``key`` (CSV and JSON), ``label`` (text and Markdown), ``latex`` label, ``digits``
    shown (``None``: a whole number or text) and what it ``means`` (a tooltip or a footnote)."""

    key: str
    label: str
    latex: str
    digits: int | None
    means: str


#: Every column of the table, in order.
COLUMNS: tuple[Column, ...] = (
    Column("k", "k", "$k$", None, "number of classes (states of the swept node)"),
    Column("loglik", "LL", "LL", 2, "log-likelihood"),
    Column("ds", "ds", "$d_s$", None, "standard dimension: free parameters"),
    Column("de", "de", "$d_e$", None, "effective dimension (Kocka & Zhang 2002)"),
    *(
        Column(
            SCORES[c].key,
            SCORES[c].label,
            SCORES[c].label.replace("+", "$^{+}$"),
            2,
            f"{SCORES[c].label}: -2 log L + penalty (lower is better); {SCORES[c].formula} on effdim's scale",
        )
        for c in CRITERIA
    ),
    Column("entropy", "entropy", "$E$", 2, "classification entropy -sum p log p over the rows (nats)"),
    Column("relative_entropy", "rel. entropy", "rel.\\ entropy", 3, "1 - E / (N log k): Mplus's Entropy"),
    Column("entropy_r2", "entropy R2", "entropy $R^2$", 3, "1 - E / (N H(class shares)): Latent GOLD's entropy R2"),
    Column("smallest_share", "smallest class", "smallest class", 3, "the smallest class share"),
    Column("blrt_p", "BLRT p", "BLRT $p$", 3, "bootstrap likelihood-ratio test of k - 1 against k classes"),
    Column("vlmr_p", "VLMR p", "VLMR $p$", 3, "Vuong-Lo-Mendell-Rubin test of k - 1 against k classes"),
    Column("lmr_adjusted_p", "aLMR p", "aLMR $p$", 3, "Lo-Mendell-Rubin ad hoc adjusted test of k - 1 against k"),
    Column(
        "starts", "starts at best", "starts at best", None, "EM starts that reached the best log-likelihood / starts"
    ),
)


@dataclass(frozen=True)
class EnumerationRow:
    """One number of classes (module docstring); criteria on the ``-2 log L + penalty`` scale.

    A test's p-value is ``None`` where it was not computed (``k`` is the
    first of the sweep, the bootstrap was not run, the test does not apply).
    """

    k: int
    loglik: float
    ds: int
    de: int
    bic: float
    sabic: float
    caic: float
    aic: float
    bic_plus: float
    sbic: float
    sbic_plus: float
    entropy: float
    relative_entropy: float | None
    entropy_r2: float | None
    smallest_share: float
    blrt_p: float | None
    vlmr_p: float | None
    lmr_adjusted_p: float | None
    starts_at_best: int
    starts: int

    def cell(self, key: str) -> Any:
        """The value of column ``key`` (``starts`` as ``"at best/all"``)."""
        if key == "starts":
            return f"{self.starts_at_best}/{self.starts}"
        return getattr(self, key)


@dataclass(frozen=True)
class EnumerationTable:
    """A sweep's class-enumeration table (module docstring).

    ``node``: the swept hidden node; ``n``: the rows; ``phi``: the sBIC's
    Dirichlet parameter; ``blrt_B``: bootstrap replicates per BLRT (``None``:
    not run); ``blrt_stop``: the sequential rule's ``h`` the BLRT stopped by
    (:mod:`effdim.bootstrap`; ``None``: every test drew ``blrt_B``); ``notes``: sentences a reader needs (non-unique quantities,
    tests not computed and why).
    """

    rows: tuple[EnumerationRow, ...]
    node: str
    n: float
    phi: float | None
    blrt_B: int | None = None
    alpha: float = ALPHA
    blrt_stop: int | None = None
    notes: tuple[str, ...] = field(default=())

    # ---------------------------------------------------------------- picks
    def picks(self) -> dict[str, int | None]:
        """The ``k`` each criterion and test chooses.

        A criterion: its lowest value, ties (within
        :data:`effdim.scores.TIE_TOLERANCE` nats per row) to the smaller
        model. A test: the first ``k`` whose test against ``k + 1`` is not
        significant at ``alpha`` (``None`` where no such test was computed;
        the last ``k`` when every test rejects).
        """
        out: dict[str, int | None] = {}
        sizes = [r.ds for r in self.rows]
        for name in CRITERIA:
            key = SCORES[name].key
            values = [-getattr(r, key) / 2.0 for r in self.rows]  # back to effdim's scale: higher is better
            out[SCORES[name].label] = self.rows[best_index(values, sizes, self.n)].k if self.rows else None
        for label, key in (("BLRT", "blrt_p"), ("VLMR", "vlmr_p"), ("aLMR", "lmr_adjusted_p")):
            out[label] = self._test_pick(key)
        return out

    def _test_pick(self, key: str) -> int | None:
        tested = [(r.k, getattr(r, key)) for r in self.rows]
        if all(p is None for _, p in tested[1:]) or len(tested) < 2:
            return None
        for (k, _), (_, p) in zip(tested, tested[1:]):
            if p is None:
                return None
            if p > self.alpha:
                return k
        return tested[-1][0]

    # -------------------------------------------------------------- exports
    def caption(self) -> str:
        """One sentence on the table's scales and tests."""
        parts = [
            f"Class enumeration of {self.node} ({_number(self.n)} rows): criteria on the -2 log L + penalty "
            "scale (lower is better)"
        ]
        if self.phi is not None:
            parts.append(f"sBIC with phi = {self.phi:g}")
        if self.blrt_B is not None:
            parts.append(f"BLRT with B = {self.blrt_B} replicates")
        if self.blrt_stop is not None:
            parts.append(
                f"a BLRT stops once {self.blrt_stop} replicates reach its LR, at the l-th, with p = {self.blrt_stop} / l"
            )
        parts.append(f"tests of k - 1 against k classes; a test picks the first k whose k + 1 has p > {self.alpha:g}")
        return "; ".join(parts) + "."

    def frame(self):
        """The table as a pandas DataFrame, one column per field of :class:`EnumerationRow` (numbers)."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows])

    def to_csv(self) -> str:
        """CSV text: the fields of :class:`EnumerationRow` as columns, full precision, empty where not computed."""
        out = io.StringIO()
        self.frame().to_csv(out, index=False, float_format="%.10g", lineterminator="\n")
        return out.getvalue()

    def text_rows(self) -> list[list[str]]:
        """Every row as the texts the printed table shows (:data:`COLUMNS`; empty where not computed)."""
        return [[_shown(r.cell(c.key), c.digits) for c in COLUMNS] for r in self.rows]

    def to_markdown(self) -> str:
        """A Markdown (GitHub) table, its caption and picks below it."""
        lines = ["| " + " | ".join(c.label for c in COLUMNS) + " |"]
        lines.append(
            "|"
            + "|".join("---:" if c.digits is not None or c.key in {"k", "ds", "de"} else "---" for c in COLUMNS)
            + "|"
        )
        lines += ["| " + " | ".join(row) + " |" for row in self.text_rows()]
        lines += ["", self.caption(), "", "Picks: " + _picks_text(self.picks())]
        lines += [f"\n{note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A LaTeX ``table`` with a ``booktabs`` ``tabular`` (``\\usepackage{booktabs}``), caption and picks."""
        spec = "r" * (len(COLUMNS) - 1) + "l"
        lines = [
            "\\begin{table}",
            "\\centering",
            "\\small",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(c.latex for c in COLUMNS) + " \\\\",
            "\\midrule",
        ]
        lines += [" & ".join(_latex_escape(v) for v in row) + " \\\\" for row in self.text_rows()]
        lines += ["\\bottomrule", "\\end{tabular}"]
        caption = self.caption() + " Picks: " + _picks_text(self.picks()) + "."
        lines += [f"\\caption{{{_latex_escape(caption)}}}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """``rows`` (every column by key), ``picks``, ``node``, ``n``, ``phi``, ``blrt_B``, ``alpha``, ``notes``."""
        return {
            "node": self.node,
            "n": self.n,
            "phi": self.phi,
            "blrt_B": self.blrt_B,
            "blrt_stop": self.blrt_stop,
            "alpha": self.alpha,
            "rows": [{k: _json_value(v) for k, v in asdict(r).items()} for r in self.rows],
            "picks": self.picks(),
            "notes": list(self.notes),
        }


# ----------------------------------------------------------------- building
def enumeration_table(
    fits: Sequence[Any], blrt: Mapping[int, Any] | None = None, *, lmr: bool = True, alpha: float = ALPHA
) -> EnumerationTable:
    """The class-enumeration table of a sweep's ``fits`` (:func:`effdim.sweep`, sBIC filled).

    ``blrt``: the bootstrap LRT of each ``k`` against ``k - 1``
    (:func:`effdim.bootstrap.blrt_sweep`), by ``k``; ``lmr``: compute the
    VLMR tests where they apply (latent class models, consecutive ``k``,
    maximum-likelihood fits).
    """
    fits = list(fits)
    if not fits:
        raise InvalidArgument("the class-enumeration table needs at least one fitted model")
    if not 0 < float(alpha) < 1:
        raise InvalidArgument(f"the significance level must be between 0 and 1, got {alpha}")
    node = _node(fits)
    notes: list[str] = []
    lmr_results = _lmr_results(fits, notes) if lmr else {}
    blrt = dict(blrt or {})
    rows = []
    for f in fits:
        k = f.model.card(node)
        rows.append(_row(f, node, k, blrt.get(k), lmr_results.get(k)))
    if any(f.de < f.ds for f in fits):
        shown = ", ".join(str(f.model.card(node)) for f in fits if f.de < f.ds)
        notes.append(
            f"de < ds at k = {shown}: the fitted distribution is unique but the class shares and posteriors are "
            "not, so the entropy measures and the smallest share are those of the estimate EM returned"
        )
    phis = {f.scores.sbic_phi for f in fits}
    tests = [r for r in blrt.values() if r is not None]
    sizes = {int(r.planned if r.planned is not None else r.B) for r in tests}
    stops = {r.stop_after for r in tests}
    stopped = [f"k = {k}: {r.B}" for k, r in sorted(blrt.items()) if r is not None and r.stopped_early]
    if stopped:
        notes.append(f"BLRT tests stopped early (replicates drawn): {', '.join(stopped)}")
    return EnumerationTable(
        rows=tuple(rows),
        node=node,
        n=float(fits[0].n),
        phi=phis.pop() if len(phis) == 1 else None,
        blrt_B=sizes.pop() if len(sizes) == 1 else None,
        blrt_stop=stops.pop() if len(stops) == 1 else None,
        alpha=float(alpha),
        notes=tuple(notes),
    )


def _node(fits: Sequence[Any]) -> str:
    first, last = fits[0].model, fits[-1].model
    changed = [h for h in first.hidden if first.card(h) != last.card(h)]
    return changed[0] if changed else first.root


def _row(fit: Any, node: str, k: int, boot: Any, vlmr: Any) -> EnumerationRow:
    from .em import posterior

    s = fit.scores
    md, post = posterior(fit.params, fit.data, node)
    counts = np.asarray(md.counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_row = -np.where(post > 0, post * np.log(post), 0.0).sum(axis=1)
    entropy = float(counts @ per_row)
    n = float(counts.sum())
    shares = np.asarray(fit.params.marginals()[node], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        prior_entropy = float(-np.where(shares > 0, shares * np.log(shares), 0.0).sum())
    return EnumerationRow(
        k=int(k),
        loglik=float(s.loglik),
        ds=int(s.ds),
        de=int(s.de),
        **{SCORES[c].key: SCORES[c].deviance(getattr(s, SCORES[c].key)) for c in CRITERIA},
        entropy=entropy,
        relative_entropy=1.0 - entropy / (n * math.log(k)) if k > 1 else None,
        entropy_r2=1.0 - entropy / (n * prior_entropy) if k > 1 and prior_entropy > 0 else None,
        smallest_share=float(shares.min()),
        blrt_p=None if boot is None else float(boot.p_value),
        vlmr_p=None if vlmr is None else float(vlmr.p_value),
        lmr_adjusted_p=None if vlmr is None else float(vlmr.p_adjusted),
        starts_at_best=int(fit.restarts.get("n_best", 0)),
        starts=int(fit.restarts.get("restarts", 0)),
    )


def _lmr_results(fits: Sequence[Any], notes: list[str]) -> dict[int, Any]:
    from .lmr import lmr_test

    model = fits[0].model
    if not model.is_lc:
        notes.append("the VLMR tests are computed for latent class models only; the BLRT tests any hidden node")
        return {}
    if any(getattr(f.em, "prior", None) for f in fits):
        notes.append("the VLMR tests need maximum-likelihood fits; these are MAP fits")
        return {}
    out = {}
    root = model.root
    for small, large in zip(fits, fits[1:]):
        if large.model.card(root) == small.model.card(root) + 1:
            out[large.model.card(root)] = lmr_test(small, large)
    if out:
        from .lmr import NOTE

        notes.append(NOTE[0].upper() + NOTE[1:] + ".")
    return out


# ------------------------------------------------------------------ text
def _number(n: float) -> str:
    return f"{int(n):,}" if float(n).is_integer() else f"{n:,.2f}"


def _shown(value: Any, digits: int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if digits is None or not isinstance(value, float):
        return str(value)
    if digits == 3 and 0 < value < 0.001:
        return "<0.001"
    return f"{value:.{digits}f}"


def _picks_text(picks: Mapping[str, int | None]) -> str:
    return ", ".join(f"{label} {k}" for label, k in picks.items() if k is not None)


def _json_value(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


_LATEX = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "$": "\\$",
}


def _latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (a node name is user text)."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text)).replace("<", "$<$")
