"""Choosing hidden cardinalities: sweeps and hill climbing (Sections 5 and 6).

* :func:`sweep` fits a range of cardinalities of one hidden node with every
  other node fixed, and scores each fit. Unless told otherwise it fits
  :func:`sweep_range`: ``|X| = 1`` up to :data:`DEFAULT_MAX_CARD`, the range a
  class enumeration covers in practice, never beyond the largest regular
  value (Section 5 for LC models: ``prod |O_i| / max |O_i|``, Lemma 3.2; for
  an HLC model the chosen node's ``prod |Ne(H)| / max |Ne(H)|``, Lemma 4.1,
  one less when ``H`` has two neighbours one of which is hidden:
  :func:`effdim.regularity.largest_regular_card`), and stops at the first
  saturated model. The command line, the dashboard and the report all sweep
  this range.
* :func:`hill_climb` searches the hidden cardinalities of a fixed structure
  as in Section 6: start with every hidden node binary (:func:`start_model`,
  shared with the experiments of :mod:`effdim.experiments.hlc`); at each step raise by
  one the cardinality whose increase raises the chosen score most; stop when
  no increase raises it. Cardinalities never exceed the regular maxima, so
  every model visited is regular.

Each fit is :func:`effdim.fit` (EM with restarts, settings in
:class:`effdim.EMSettings`, scored by :func:`effdim.scores.score_fit`). Both functions take ``progress(done, total)``
(called after each fit) and ``cancel`` (a ``threading.Event``; when set,
:class:`Cancelled` is raised between fits or EM steps), so a dashboard can run
them in a thread; a sweep also hands out each fit as it finishes (``progress.partial``),
and its :class:`Cancelled` carries the fits finished before (``partial``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .bounds import complete_dimension
from .em import Cancelled
from .errors import InvalidArgument
from .fitting import FitResult, fit, lc_model_for
from .limits import DEFAULT_MAX_CARD
from .model import HLCModel
from .regularity import largest_regular_card
from .sbic import with_singular_bic
from .scores import beats, best, fit_criterion
from .settings import EMSettings
from .validation import as_dataset, as_model, as_seed, check_int, spawn_seeds

__all__ = [
    "Cancelled",
    "DEFAULT_MAX_CARD",
    "HillClimb",
    "sweep",
    "sweep_range",
    "hill_climb",
    "start_model",
    "pick_caveats",
]

ProgressFn = Callable[[int, int], Any]


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
def start_model(model: HLCModel, start: dict[str, int] | None = None) -> HLCModel:
    """The first model of a hill climb (Section 6): ``model``'s structure with every
    hidden node binary, or ``start[node]`` where given.

    Each value is lowered to the node's
    :func:`~effdim.regularity.largest_regular_card`, repeatedly, because
    lowering one node can lower another's limit; so the start is regular.

    Examples
    --------
    >>> str(start_model(HLCModel.parse("5(3(2,2),2,3(2,2))")))
    '2(2(2,2),2,2(2,2))'
    >>> str(start_model(HLCModel.parse("5(3(2,2),2,3(2,2))"), {"H1": 9}))   # 9 lowered to 2*2*2/2
    '4(2(2,2),2,2(2,2))'
    """
    start = dict(start or {})
    for h in start:
        if h not in model or not model.is_hidden(h):
            raise InvalidArgument(f"start names {h!r}, which is not a hidden node of {model}")
    current = model
    for h in model.hidden:
        current = current.with_card(h, int(start.get(h, 2)))
    for _ in range(len(model.hidden) + 1):
        for h in model.hidden:
            current = current.with_card(h, min(current.card(h), largest_regular_card(current, h)))
    return current


def pick_caveats(chosen: FitResult, swept: Sequence[FitResult] | None = None) -> list[str]:
    """Why a score's pick may say less than it seems, as short phrases.

    * ``swept`` (a sweep's fits) given and ``chosen`` has the largest ``card``
      among them: the score might rise further beyond the range ("top of the
      swept range"), unless that card is also the largest regular one
      (:func:`~effdim.regularity.largest_regular_card`), where the search
      space ends ("largest regular cardinality"). A saturated pick at the top
      gets no "top of the swept range": every larger cardinality is saturated
      too, fits the data no better and has the same ``de``, so no score can
      rise beyond it (a sweep ``until_saturated`` stops exactly there).
    * Without ``swept`` (a hill climb's pick), every hidden node at its
      regular maximum: the climb stopped because it could not grow.
    * ``de = dc`` (:func:`effdim.bounds.complete_dimension`): the model is
      saturated, it can fit any distribution of the observed variables, and
      every larger model fits the data equally well; the pick among
      saturated models is decided by the penalty alone.
    """
    notes = []
    model = chosen.model
    dc = complete_dimension(model)
    saturated = chosen.de >= dc
    if swept:
        top = max(f.card for f in swept if f.card is not None)
        if chosen.card == top:
            node = next((h for h in model.hidden if swept[0].model.card(h) != swept[-1].model.card(h)), model.root)
            if top >= largest_regular_card(model, node):
                notes.append("largest regular cardinality")
            elif not saturated:
                notes.append("top of the swept range")
    elif all(model.card(h) >= largest_regular_card(model, h) for h in model.hidden):
        notes.append("every hidden node at its regular maximum")
    if saturated:
        notes.append(f"saturated (de = dc = {dc})")
    return notes


def sweep_range(
    model: HLCModel, node: str | None = None, *, max_card: int | None = None, min_card: int = 1
) -> list[int]:
    """The cardinalities a sweep of hidden ``node`` (default: the root) fits unless given: ``min_card`` up to
    ``max_card`` (default :data:`DEFAULT_MAX_CARD`), and never beyond the node's largest regular cardinality
    (:func:`~effdim.regularity.largest_regular_card`, with the other nodes as in ``model``), where the
    search space ends. Empty when ``min_card`` is above that. The one rule of the range for every face.

    Examples
    --------
    >>> sweep_range(HLCModel.parse("1:3,3,3,3,3,3"))  # 243 regular cardinalities; a class enumeration fits eight
    [1, 2, 3, 4, 5, 6, 7, 8]
    >>> sweep_range(HLCModel.parse("1:2,2,2"), max_card=10)  # the largest regular LC model over three binary items: 4
    [1, 2, 3, 4]
    """
    node = model.root if node is None else node
    top = DEFAULT_MAX_CARD if max_card is None else check_int("the largest cardinality", max_card, low=1)
    low = check_int("the smallest cardinality", min_card, low=1)
    return list(range(low, min(top, largest_regular_card(model, node)) + 1))


def _check_cancel(cancel: Any) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("search cancelled")


# -------------------------------------------------------------------------- sweep
def sweep(
    dataset: Any,
    model: HLCModel | str | None = None,
    node: str | None = None,
    cards: Iterable[int] | None = None,
    *,
    max_card: int | None = None,
    until_saturated: bool | None = None,
    settings: EMSettings | None = None,
    mapping: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    cancel: Any = None,
    **options: Any,
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
        Cardinalities to fit (in increasing order, each once); default :func:`sweep_range` (1 up to
        ``max_card``, default :data:`DEFAULT_MAX_CARD`, within the largest regular cardinality: Lemma 3.2 for
        LC, Lemma 4.1 for HLC, with the other nodes as given).
    until_saturated:
        Stop after the first cardinality whose model is saturated, ``de = dc``
        (:func:`effdim.bounds.complete_dimension`): it can fit any
        distribution of the observed variables, so every larger cardinality
        fits the data exactly as well and only pays a larger penalty. The
        test reads the ``de`` each fit's scores already carry (cached per
        local LC model, :func:`effdim.dimensions.dimensions`), so it costs
        nothing beyond the fits and ends the sweep where its curves turn flat.
        Default (``None``): stop there when ``cards`` is not given, fit every
        one of ``cards`` when it is.
    settings, options:
        How EM runs (:class:`effdim.EMSettings`; ``options`` replace single
        fields); each fit gets its own stream spawned from the seed. A fit
        whose cardinality is one above the previous one is also started from
        that fit (``smaller`` of :func:`effdim.fit`), so the log-likelihood
        does not fall along the sweep.
    mapping:
        ``{leaf: column}`` where leaf names differ from column names.
    progress:
        ``progress(done, total)`` after each fit (and ``(0, total)`` first).
        When it has a ``partial`` method (the job workers' progress,
        ``effdim_app/jobs.py``), ``progress.partial(result)`` also gets each
        fit as it finishes, so a caller that may stop the sweep (a time
        limit, a user) keeps what was done.
    cancel:
        ``threading.Event``: raises :class:`Cancelled` when set, its
        ``partial`` the fits finished before.

    Returns
    -------
    One :class:`FitResult` per cardinality, in order, ``card`` set, with the
    singular BIC over the sweep's models in ``scores.sbic`` and
    ``scores.sbic_plus`` (:func:`effdim.sbic.with_singular_bic`, ``phi`` from
    ``settings.sbic_phi``); stopped at saturation, the last one is the first
    saturated model (or the last of the cardinalities when none is).
    """
    settings = EMSettings.of(settings, **options)
    dataset = as_dataset(dataset)
    if model is None:
        model = lc_model_for(dataset)
    else:
        model = as_model(model)
    if node is None:
        node = model.root
    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
    if until_saturated is None:
        until_saturated = cards is None
    if cards is None:
        cards = sweep_range(model, node, max_card=max_card)
    cards = sorted({check_int(f"|{node}|", k, low=1) for k in cards})
    if not cards:
        raise InvalidArgument("no cardinalities to fit")
    rngs = spawn_seeds(settings.seed, len(cards))
    total = len(cards)
    if progress is not None:
        progress(0, total)
    results: list[FitResult] = []
    saturated_at = complete_dimension(model) if until_saturated else None
    try:
        for i, (k, rng) in enumerate(zip(cards, rngs)):
            _check_cancel(cancel)
            m = model.with_card(node, k)
            smaller = results[-1] if results else None
            result = fit(dataset, m, settings.with_seed(rng), mapping=mapping, init=smaller, cancel=cancel, warn=False)
            results.append(replace(result, card=k))
            if hasattr(progress, "partial"):
                progress.partial(results[-1])
            saturated = saturated_at is not None and results[-1].de >= saturated_at
            if saturated:
                total = i + 1
            if progress is not None:
                progress(i + 1, total)
            if saturated:
                break
    except Cancelled as stopped:
        stopped.partial = with_singular_bic(results, node, settings.sbic_phi)
        raise
    return with_singular_bic(results, node, settings.sbic_phi)


# -------------------------------------------------------------------- hill climbing
def climb(
    start: HLCModel, score: str, evaluate: Callable[[list[HLCModel], FitResult | None], list[FitResult]]
) -> tuple[list[FitResult], list[FitResult]]:
    """The hill-climbing rule of Section 6, for any way of fitting models.

    Fit ``start``; then repeatedly fit every model with one hidden
    cardinality raised by one (within :func:`~effdim.regularity.largest_regular_card`, so every model
    stays regular) and move to the best of them on ``score`` (a name of
    :data:`effdim.scores.SCORES`) if it beats the current model by more than
    a tie; otherwise stop. Ties follow :func:`effdim.scores.best`: the
    smaller model wins, so a tie with the current model ends the climb and a
    tie between candidates goes to the first hidden node in pre-order.
    ``evaluate(models, current)`` fits a list of models (so callers can
    count, cache or report progress); ``current`` is the fit they grow from
    (``None`` for the start), to be passed as ``smaller`` to :func:`fit`.

    Returns ``(path, tried)``: the accepted fits in order, and every fit made.
    """
    current = evaluate([start], None)[0]
    path, tried = [current], [current]
    while True:
        candidates = [
            h for h in current.model.hidden if current.model.card(h) + 1 <= largest_regular_card(current.model, h)
        ]
        if not candidates:
            return path, tried
        step = evaluate([current.model.with_card(h, current.model.card(h) + 1) for h in candidates], current)
        tried.extend(step)
        winner = best(step, score)
        if not beats(winner, current, score):
            return path, tried
        current = winner
        path.append(current)


def hill_climb(
    dataset: Any,
    model: HLCModel | str,
    score: str = "bic",
    *,
    settings: EMSettings | None = None,
    start: dict[str, int] | None = None,
    mapping: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    cancel: Any = None,
    **options: Any,
) -> HillClimb:
    """Hill climbing over the hidden cardinalities of ``model``'s structure (Section 6).

    Starts with every hidden node binary (or ``start``: node -> card, others
    binary; any start value above the node's regular maximum is lowered to
    it). At each step every hidden node whose cardinality can rise by one
    within its regular maximum (:func:`~effdim.regularity.largest_regular_card`)
    is tried, each candidate also started from the current fit with a state
    of that node split in two (``smaller`` of :func:`fit`), so no candidate
    ends below the current log-likelihood; the best candidate on ``score``
    (any name of :data:`effdim.scores.SCORES`) is accepted if it beats the
    current model by more than a tie (:func:`climb`), else the climb stops.
    The given cardinalities of ``model`` only fix its structure. EM runs with
    ``settings`` (:class:`effdim.EMSettings`; ``options`` replace single
    fields), each fit with its own stream spawned from the seed.

    ``progress(done, total)`` is called after each fit; ``total`` counts the
    fits done plus those left in the current step (it grows as the climb
    goes on).
    """
    settings = EMSettings.of(settings, **options)
    score = fit_criterion(score, "a hill climb").name
    dataset = as_dataset(dataset)
    model = as_model(model)
    current = start_model(model, start)
    rng = as_seed(settings.seed)
    done = 0

    def tick(left: int) -> None:
        if progress is not None:
            progress(done, done + left)

    def run(m: HLCModel, smaller: FitResult | None) -> FitResult:
        nonlocal done
        _check_cancel(cancel)
        own = settings.with_seed(rng.spawn(1)[0])
        result = fit(dataset, m, own, mapping=mapping, init=smaller, cancel=cancel, warn=False)
        done += 1
        return result

    def evaluate(models: list[HLCModel], smaller: FitResult | None) -> list[FitResult]:
        tick(len(models))
        fits = []
        for i, m in enumerate(models):
            fits.append(run(m, smaller))
            tick(len(models) - i - 1)
        return fits

    path, tried = climb(current, score, evaluate)
    return HillClimb(path=path, best=path[-1], score=score, tried=tried)
