"""The guided demo's script: the paper's key cases, one sentence per step, numbers from the engine.

Every number in a sentence comes from the engine when the demo first starts
(:func:`demo_steps`); the models are the paper's (presets). The steps, in order:

1. a Table 1 LC model whose de falls below the bound ``db = min(ds, dc, dp)``
   (Theorem 4; the first such row of the table, found by computing them);
2. the HLC model of Figure 2, and Corollary 4.1 adding its local deficits;
3. an irregular model and its regular equivalent (Lemma 4.1): the totals of
   the model as drawn beside those of the regular one.

See docs/theory.md, sections 2, 5 and 6. The bar that shows them is
:mod:`effdim_app.views.demo`; nothing here imports Panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from effdim import dimensions, parse_model, regularize
from effdim.bounds import standard_dimension

from .presets import FIGURE2, IRREGULAR, PRESETS, TABLE1_LC

__all__ = ["DemoStep", "demo_steps", "first_lc_below_bound"]


@dataclass(frozen=True)
class DemoStep:
    """One step: a title, the model it loads (notation) and the sentence that explains it."""

    title: str
    notation: str
    sentence: str


def first_lc_below_bound() -> str:
    """The first LC model of Table 1 (in the table's order) whose de is below db (Theorem 4)."""
    for lc in TABLE1_LC:
        row = dimensions(parse_model(lc)).local[0]
        if row.de < row.db:
            return lc
    raise LookupError("no Table 1 model has de below db")


@lru_cache(maxsize=1)
def demo_steps() -> tuple[DemoStep, ...]:
    """The demo's steps, their numbers computed now (a fraction of a second, then cached)."""
    lc = first_lc_below_bound()
    report = dimensions(parse_model(lc))
    row = report.local[0]
    table1 = DemoStep(
        "Table 1",
        lc,
        f"The LC model {lc} has ds = {report.ds} parameters, and none of the closed-form bounds is "
        f"reached: de = {row.de} ({report.de_status}) is below db = min(ds, dc, dp) = {row.db}, so de "
        "has to be computed as a Jacobian rank (Theorem 4).",
    )
    fig2 = PRESETS[FIGURE2]
    report = dimensions(parse_model(fig2))
    terms = " + ".join(str(r.deficit) for r in report.local)
    figure2 = DemoStep(
        "Figure 2",
        fig2,
        f"Figure 2's HLC model has ds = {report.ds} parameters but only de = {report.de} effective ones: "
        f"its {len(report.local)} local LC models (table rows) lose {terms} = {report.ds - report.de} "
        "(Corollary 4.1); click a row to see one in the tree.",
    )
    irregular_text = PRESETS[IRREGULAR]
    irregular = parse_model(irregular_text)
    reg = regularize(irregular)
    report = dimensions(reg.model)
    nodes = ", ".join(dict.fromkeys(step.node for step in reg.steps))
    regular = DemoStep(
        "Irregularity",
        irregular_text,
        f"An irregular model: as drawn it has ds = {standard_dimension(irregular)}, but {nodes} break "
        f"Lemma 4.1; its regular equivalent (the log beside the tree, {len(reg.steps)} steps) has "
        f"ds = {report.ds} and de = {report.de}, the de of the model as drawn too: the extra states add "
        "parameters, not dimensions.",
    )
    return table1, figure2, regular
