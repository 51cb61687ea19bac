"""The data demo's script: a survey's analysis in five steps, each sentence read from the engine's results.

The guided demo of the data side (:mod:`effdim_app.views.data_demo` clicks through it) does on a bundled
survey what a researcher does with an own file, and says what to read on screen at each step:

1. the data: McCutcheon's 1982 GSS survey on surveys (:data:`DATA_SET`, :mod:`effdim.datasets`), loaded as
   "Load data set" loads it, the route of an upload too;
2. the sweep of LC models with 1 to :data:`MOST_CLASSES` classes and the cardinality each score picks;
3. the profile of BIC+'s pick (the score the fitted view shows first): each class's share and most likely answers;
4. the bivariate residuals (BVR) of the fit with one class fewer: the pair of items whose association it
   leaves unexplained, and how small that residual is at the pick;
5. the proposal that pair gives: the smaller model with a new hidden node over the two items
   (:func:`effdim.diagnostics.relax_pair`), an alternative to one more class.

Nothing here imports Panel; the numbers are the fits' own, computed by the sweep the demo runs.
"""

from __future__ import annotations

from typing import Any

from effdim.scores import SCORES, best

__all__ = [
    "DATA_SET",
    "classes",
    "pick_and_fewer",
    "MOST_CLASSES",
    "TITLES",
    "data_sentence",
    "sweep_sentence",
    "profile_sentence",
    "largest_residual",
    "residual_sentence",
    "proposal_sentence",
]

#: The bundled data set the demo analyses: polytomous items with text labels, as a survey's export has them.
DATA_SET = "gss82"
#: The sweep's range: LC models with 1 to this many classes (the range a class enumeration runs).
MOST_CLASSES = 4
#: The steps' titles, in order.
TITLES = ("Data", "Sweep", "Profile", "Residuals", "Proposal")
#: How many items a profile sentence names per class; more are summarised by "…".
NAMED_ITEMS = 4


def classes(fit: Any) -> int:
    """The number of classes of an LC model's fit: its root's states."""
    return fit.model.card(fit.model.root)


def pick_and_fewer(fits: dict[str, Any], score: str = "bic+") -> tuple[str, str]:
    """The labels, among the fitted view's ``fits`` (label -> fit of an LC model), of ``score``'s pick and of the
    fit with one class fewer (the pick's own when none has)."""
    pick = best(fits.values(), score)
    fewer = next((label for label, f in fits.items() if classes(f) == classes(pick) - 1), None)
    chosen = next(label for label, f in fits.items() if f is pick)
    return chosen, fewer or chosen


def _classes_words(count: int) -> str:
    return f"{count} class{'es' if count != 1 else ''}"


def data_sentence(described: str, columns: list[str]) -> str:
    """Step 1: what was loaded (``described``: :meth:`effdim_app.state.DataState.describe`) and how a file of one's
    own gets in."""
    return (
        f"Loaded the bundled survey '{DATA_SET}' ({described}: {', '.join(columns)}), as 'Load data set' loads it. "
        "Your own file (CSV, SPSS, Stata, Excel, Parquet) goes in the drop zone above and is read the same way: "
        "check the rows, the missing cells and the columns used in the green box."
    )


def sweep_sentence(best: dict[str, tuple[int, float]], swept: int) -> str:
    """Step 2: the cardinality each score picks (``best``: score name -> (card, value), as the Scores panel has it)
    among the ``swept`` fits."""
    picks = ", ".join(f"{SCORES[name].label} {card}" for name, (card, _) in best.items())
    return (
        f"Fitted LC models with 1 to {swept} classes. Each curve is a score against the number of classes, higher "
        f"is better; the star row names each score's pick: {picks}. BIC+ and CS+ penalise the effective dimension "
        "de, BIC and CS the standard one ds; they agree where the models are regular and de = ds."
    )


def profile_sentence(fit: Any) -> str:
    """Step 3: each class's share and most likely answer to each item (of the first :data:`NAMED_ITEMS`), read from
    ``fit`` (a :class:`effdim.fitting.FitResult` of an LC model)."""
    profiles = fit.profiles()
    shares = fit.class_shares()
    items = list(dict.fromkeys(profiles["item"]))
    named = items[:NAMED_ITEMS]
    more = ", …" if len(items) > NAMED_ITEMS else ""
    lines = []
    for state, share in zip(shares["state"], shares["share"], strict=True):
        rows = profiles[profiles["class"] == state]
        answers = [str(rows[rows["item"] == item].sort_values("probability").iloc[-1]["category"]) for item in named]
        lines.append(f"class {state} ({share:.0%}): {', '.join(answers)}{more}")
    return (
        f"The profile of BIC+'s pick, {_classes_words(classes(fit))}: one panel per question ({', '.join(named)}{more}), one "
        f"line per class, the chance of each answer. Most likely answers: {'; '.join(lines)}. Name the classes by "
        "these answers; the shares are how many respondents each holds."
    )


def largest_residual(fit: Any) -> tuple[str, str, float]:
    """The pair of items with the largest bivariate residual of ``fit`` and its value."""
    residuals = fit.bivariate_residuals().stack()
    a, b = residuals.idxmax()
    return str(a), str(b), float(residuals.max())


def residual_sentence(fewer: Any, pick: Any) -> str:
    """Step 4: the largest bivariate residual of ``fewer`` (the fit with one class fewer than ``pick``, or the pick
    itself when it has one class) and the same pair's at the pick."""
    a, b, value = largest_residual(fewer)
    at_pick = float(pick.bivariate_residuals().loc[a, b])
    if fewer is pick:
        return (
            f"The residual map of the model with {_classes_words(classes(pick))}: the largest bivariate residual is "
            f"{value:.1f}, between {a} and {b}. Near 1 the classes explain how two questions go together; well above "
            "1 they do not."
        )
    return (
        f"The residual map of the model with {_classes_words(classes(fewer))}, one fewer than the pick: the largest "
        f"bivariate residual is {value:.1f}, between {a} and {b}: these two answers go together more than "
        f"{_classes_words(classes(fewer))} explain (near 1 they would). With {_classes_words(classes(pick))} the same "
        f"pair's residual is {at_pick:.1f}."
    )


def proposal_sentence(a: str, b: str, proposed: str) -> str:
    """Step 5: the proposal from the pair ``a``, ``b`` (as the map's click makes it); ``proposed`` is its text."""
    return (
        f"Clicking the cell {a} × {b} of the map proposes another way to explain it: a new hidden node over {a} and "
        f"{b} instead of one more class. {proposed} Apply it below to score it beside the sweep; Undo brings the "
        "sweep back."
    )
