"""Choosing hidden cardinalities: sweeps and hill climbing (Sections 5 and 6).

* :func:`sweep` fits a range of cardinalities of one hidden node with every
  other node fixed, and scores each fit (Section 5 for LC models: ``|X| = 1``
  up to the largest regular value ``prod |O_i| / max |O_i|``, Lemma 3.2; for
  an HLC model the chosen node goes up to ``prod |Ne(H)| / max |Ne(H)|``,
  Lemma 4.1, one less when ``H`` has two neighbours one of which is hidden).
* :func:`hill_climb` searches the hidden cardinalities of a fixed structure
  as in Section 6: start with every hidden node binary; at each step raise by
  one the cardinality whose increase raises the chosen score most; stop when
  no increase raises it. Cardinalities never exceed the regular maxima, so
  every model visited is regular.

Each fit is :func:`effdim.em.fit_em` with restarts, scored by
:func:`effdim.scores.score_fit`. Both functions take ``progress(done, total)``
(called after each fit) and ``cancel`` (a ``threading.Event``; when set,
:class:`Cancelled` is raised between fits or EM steps), so a dashboard can run
them in a thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .em import Cancelled, EMResult, ModelData, fit_em
from .model import HLCModel
from .notation import format_model
from .regularity import max_regular_card
from .scores import SCORE_NAMES, Scores, score_fit

__all__ = ["Cancelled", "FitResult", "HillClimb", "fit", "sweep", "hill_climb", "regular_max", "lc_model_for"]

ProgressFn = Callable[[int, int], Any]


@dataclass(frozen=True)
class FitResult:
    """One fitted and scored model.

    ``card`` is the swept cardinality (``None`` outside a sweep). Scores are
    natural-log values of Section 2.3 (:mod:`effdim.scores`); ``restarts``
    summarises the EM starts (:meth:`effdim.em.EMResult.restarts_info`);
    ``degenerate`` lists empty or duplicate hidden states as sentences.
    """

    model: HLCModel
    card: int | None
    loglik: float
    bic: float
    bic_plus: float
    cs: float
    cs_plus: float
    aic: float
    ds: int
    de: int
    n: float
    restarts: dict = field(compare=False)
    degenerate: tuple[str, ...] = ()
    em: EMResult | None = field(default=None, repr=False, compare=False)

    @property
    def params(self):
        """The fitted :class:`effdim.distribution.Parameters`."""
        return None if self.em is None else self.em.params

    @property
    def scores(self) -> Scores:
        """The scores as :class:`effdim.scores.Scores` (the same fields)."""
        return Scores(**{f.name: getattr(self, f.name) for f in fields(Scores)})

    def score(self, name: str) -> float:
        """A score by name: ``bic``, ``bic+``, ``cs``, ``cs+``, ``aic``, ``loglik``."""
        return self.scores.get(name)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``loglik, bic, bic_plus, cs, cs_plus, aic, ds, de, n``, ``card``,
        ``model`` (notation), ``restarts`` and ``degenerate``."""
        n = self.n
        return {
            "model": format_model(self.model),
            "card": self.card,
            "loglik": self.loglik,
            "bic": self.bic,
            "bic_plus": self.bic_plus,
            "cs": self.cs,
            "cs_plus": self.cs_plus,
            "aic": self.aic,
            "ds": self.ds,
            "de": self.de,
            "n": int(n) if float(n).is_integer() else n,
            "restarts": self.restarts,
            "degenerate": list(self.degenerate),
        }


@dataclass(frozen=True)
class HillClimb:
    """The accepted models of a hill climb in order (``path``), the ``best`` (last)
    one, the ``score`` used, and every fit tried (``tried``, accepted or not)."""

    path: list[FitResult]
    best: FitResult
    score: str
    tried: list[FitResult] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "path": [f.to_json() for f in self.path], "best": self.best.to_json()}


# ------------------------------------------------------------------------ helpers
def regular_max(model: HLCModel, node: str) -> int:
    """Largest cardinality of hidden ``node`` that keeps ``model`` regular, others fixed.

    ``prod |Ne(H)| / max |Ne(H)|`` (Lemma 3.2 / Lemma 4.1), minus one when
    ``H`` has exactly two neighbours and one of them is hidden (strict case);
    never below 1.
    """
    limit = max_regular_card(model, node)
    ne = model.neighbors(node)
    if len(ne) == 2 and any(model.is_hidden(n) for n in ne):
        limit -= 1
    return max(1, limit)


def _as_dataset(data: Any):
    from .data import Dataset, from_frame

    if isinstance(data, Dataset):
        return data
    try:
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            return from_frame(data)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"expected a Dataset or a pandas DataFrame, got {type(data).__name__}")


def lc_model_for(dataset: Any, card: int = 2) -> HLCModel:
    """The LC model ``card : |O_1|, ..., |O_n|`` over all columns of ``dataset``.

    Leaves are named after the columns when the names are valid node names,
    else ``O1..On`` (matched to the columns by position).
    """
    from .model import NAME_PATTERN

    dataset = _as_dataset(dataset)
    columns = list(dataset.columns)
    cards = list(dataset.cardinalities)
    names = columns if all(NAME_PATTERN.match(c) for c in columns) else None
    taken = set(names or [f"O{i + 1}" for i in range(len(columns))])
    hidden = next(h for h in ("X", "H", "H1", "Latent", "_X") if h not in taken)
    return HLCModel.lc(card, cards, hidden_name=hidden, observed_names=names)


def _score_key(score: str) -> str:
    key = SCORE_NAMES.get(str(score).lower())
    if key is None or key == "loglik":
        raise ValueError(f"unknown score {score!r}; choose from bic, bic+, cs, cs+, aic")
    return key


def _seeds(seed: Any, count: int) -> list[np.random.Generator]:
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(count))
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(count)]


def _check_cancel(cancel: Any) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("search cancelled")


def fit(
    dataset: Any,
    model: HLCModel | str,
    *,
    card: int | None = None,
    restarts: int = 5,
    seed: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    cancel: Any = None,
    **em_options: Any,
) -> FitResult:
    """Fit ``model`` by EM (:func:`effdim.em.fit_em`) and score it (:func:`effdim.scores.score_fit`)."""
    if isinstance(model, str):
        model = HLCModel.parse(model)
    if not isinstance(dataset, ModelData):
        dataset = _as_dataset(dataset)
    result = fit_em(
        dataset, model, restarts=restarts, seed=seed, tol=tol, max_iter=max_iter, prior=prior, cancel=cancel,
        **em_options,
    )
    s = score_fit(result)
    return FitResult(
        model=model,
        card=card,
        **s.to_dict(),
        restarts=result.restarts_info(),
        degenerate=tuple(str(d) for d in result.degenerate),
        em=result,
    )


# -------------------------------------------------------------------------- sweep
def sweep(
    dataset: Any,
    model: HLCModel | str | None = None,
    node: str | None = None,
    cards: Iterable[int] | None = None,
    *,
    max_card: int | None = None,
    restarts: int = 5,
    seed: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    progress: ProgressFn | None = None,
    cancel: Any = None,
    **em_options: Any,
) -> list[FitResult]:
    """Fit and score ``model`` for each cardinality of one hidden node.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset` or pandas DataFrame.
    model:
        ``None``: the LC model over all columns (:func:`lc_model_for`). An LC
        model: its hidden node is swept. An HLC model: ``node`` is swept (the
        root by default), the other cardinalities stay as given.
    cards:
        Cardinalities to fit; default ``1 .. regular_max`` (Lemma 3.2 for LC,
        Lemma 4.1 for HLC, with the other nodes as given), capped at
        ``max_card`` when that is given.
    restarts, seed, tol, max_iter, prior:
        Passed to :func:`effdim.em.fit_em`; each fit gets its own stream
        spawned from ``seed``.
    progress:
        ``progress(done, total)`` after each fit (and ``(0, total)`` first).
    cancel:
        ``threading.Event``: raises :class:`Cancelled` when set.

    Returns
    -------
    One :class:`FitResult` per cardinality, in order, ``card`` set.
    """
    dataset = _as_dataset(dataset)
    if model is None:
        model = lc_model_for(dataset)
    elif isinstance(model, str):
        model = HLCModel.parse(model)
    if node is None:
        node = model.root
    if node not in model or not model.is_hidden(node):
        raise ValueError(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
    if cards is None:
        top = regular_max(model, node)
        if max_card is not None:
            top = min(top, int(max_card))
        cards = range(1, top + 1)
    cards = [int(k) for k in cards]
    if not cards:
        raise ValueError("no cardinalities to fit")
    for k in cards:
        if k < 1:
            raise ValueError(f"hidden cardinalities must be at least 1, got {k}")
    rngs = _seeds(seed, len(cards))
    total = len(cards)
    if progress is not None:
        progress(0, total)
    results = []
    for i, (k, rng) in enumerate(zip(cards, rngs)):
        _check_cancel(cancel)
        m = model.with_card(node, k)
        results.append(
            fit(dataset, m, card=k, restarts=restarts, seed=rng, tol=tol, max_iter=max_iter, prior=prior,
                cancel=cancel, **em_options)
        )
        if progress is not None:
            progress(i + 1, total)
    return results


# -------------------------------------------------------------------- hill climbing
def climb(
    start: HLCModel, key: str, evaluate: Callable[[list[HLCModel]], list[FitResult]]
) -> tuple[list[FitResult], list[FitResult]]:
    """The hill-climbing rule of Section 6, for any way of fitting models.

    Fit ``start``; then repeatedly fit every model with one hidden
    cardinality raised by one (within :func:`regular_max`, so every model
    stays regular) and move to the best of them on the score attribute
    ``key`` of :class:`FitResult` if it beats the current model; otherwise
    stop. Ties go to the first hidden node in pre-order. ``evaluate`` fits a
    list of models (so callers can count, cache or report progress).

    Returns ``(path, tried)``: the accepted fits in order, and every fit made.
    """
    best = evaluate([start])[0]
    path, tried = [best], [best]
    while True:
        candidates = [h for h in best.model.hidden if best.model.card(h) + 1 <= regular_max(best.model, h)]
        if not candidates:
            return path, tried
        step = evaluate([best.model.with_card(h, best.model.card(h) + 1) for h in candidates])
        tried.extend(step)
        winner = max(step, key=lambda f: getattr(f, key))
        if getattr(winner, key) <= getattr(best, key):
            return path, tried
        best = winner
        path.append(best)


def hill_climb(
    dataset: Any,
    model: HLCModel | str,
    score: str = "bic",
    *,
    restarts: int = 5,
    seed: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    start: dict[str, int] | None = None,
    progress: ProgressFn | None = None,
    cancel: Any = None,
    **em_options: Any,
) -> HillClimb:
    """Hill climbing over the hidden cardinalities of ``model``'s structure (Section 6).

    Starts with every hidden node binary (or ``start``: node -> card, others
    binary; any start value above the node's regular maximum is lowered to
    it). At each step every hidden node whose cardinality can rise by one
    within its regular maximum (:func:`regular_max`) is tried; the
    candidate with the highest ``score`` (``bic``, ``bic+``, ``cs``, ``cs+``,
    ``aic``) is accepted if it beats the current model, else the climb stops.
    The given cardinalities of ``model`` only fix its structure.

    ``progress(done, total)`` is called after each fit; ``total`` counts the
    fits done plus those left in the current step (it grows as the climb
    goes on).
    """
    key = _score_key(score)
    dataset = _as_dataset(dataset)
    if isinstance(model, str):
        model = HLCModel.parse(model)
    start = dict(start or {})
    for h in start:
        if h not in model or not model.is_hidden(h):
            raise ValueError(f"start names {h!r}, which is not a hidden node of {model}")
    current = model
    for h in model.hidden:
        current = current.with_card(h, int(start.get(h, 2)))
    for _ in range(len(model.hidden) + 1):  # lowering one node can lower another's maximum
        for h in model.hidden:
            current = current.with_card(h, min(current.card(h), regular_max(current, h)))
    if isinstance(seed, np.random.Generator):
        spawn = lambda: seed.spawn(1)[0]  # noqa: E731
    else:
        seed_seq = np.random.SeedSequence(seed)
        spawn = lambda: np.random.default_rng(seed_seq.spawn(1)[0])  # noqa: E731
    done = 0

    def tick(left: int) -> None:
        if progress is not None:
            progress(done, done + left)

    def run(m: HLCModel) -> FitResult:
        nonlocal done
        _check_cancel(cancel)
        result = fit(dataset, m, restarts=restarts, seed=spawn(), tol=tol, max_iter=max_iter, prior=prior,
                     cancel=cancel, **em_options)
        done += 1
        return result

    def evaluate(models: list[HLCModel]) -> list[FitResult]:
        tick(len(models))
        fits = []
        for i, m in enumerate(models):
            fits.append(run(m))
            tick(len(models) - i - 1)
        return fits

    path, tried = climb(current, key, evaluate)
    best = path[-1]
    return HillClimb(path=path, best=best, score=str(score).lower(), tried=tried)
