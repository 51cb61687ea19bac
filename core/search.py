"""Choosing hidden cardinalities: sweeps and hill climbing (Sections 5 and 6).

* :func:`sweep` fits a range of cardinalities of one hidden node with every
  other node fixed, and scores each fit (Section 5 for LC models: ``|X| = 1``
  up to the largest regular value ``prod |O_i| / max |O_i|``, Lemma 3.2; for
  an HLC model the chosen node goes up to ``prod |Ne(H)| / max |Ne(H)|``,
  Lemma 4.1, one less when ``H`` has two neighbours one of which is hidden:
  :func:`effdim.regularity.largest_regular_card`).
* :func:`hill_climb` searches the hidden cardinalities of a fixed structure
  as in Section 6: start with every hidden node binary (:func:`start_model`,
  shared with the experiments of :mod:`effdim.experiments.hlc`); at each step raise by
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

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .bounds import complete_dimension
from .em import Cancelled, EMResult, ModelData, fit_em
from .errors import InvalidArgument
from .model import HLCModel
from .nested import nested_start
from .notation import format_model
from .priors import resolve_cs_prior
from .regularity import largest_regular_card
from .scores import Scores, beats, best, criterion, score_fit
from .validation import as_dataset, as_model, as_seed, check_int, spawn_seeds

__all__ = [
    "Cancelled",
    "FitResult",
    "HillClimb",
    "fit",
    "sweep",
    "hill_climb",
    "start_model",
    "lc_model_for",
    "pick_caveats",
]

ProgressFn = Callable[[int, int], Any]


@dataclass(frozen=True)
class FitResult:
    """One fitted and scored model.

    ``card`` is the swept cardinality (``None`` outside a sweep); ``scores``
    every criterion of :mod:`effdim.scores` (natural logs, higher is
    better); ``restarts`` summarises the EM starts
    (:meth:`effdim.em.EMResult.restarts_info`); ``degenerate`` lists empty or
    duplicate hidden states as sentences.

    The fitted model in the data's own words and its diagnostics:
    ``data`` is the dataset arranged for the model
    (:func:`effdim.data.check_matches_model`) and ``columns`` maps each leaf
    to its data column; :meth:`parameter_table`, :meth:`profiles`,
    :meth:`class_shares`, :meth:`posteriors` (:mod:`effdim.profiles`) and
    :meth:`fit_statistics`, :meth:`pattern_table`, :meth:`bivariate_residuals`,
    :meth:`identification` (:mod:`effdim.diagnostics`) read them. Hidden
    states come by decreasing share; :meth:`relabeled` reorders them.
    """

    model: HLCModel
    card: int | None
    scores: Scores
    restarts: dict = field(compare=False)
    degenerate: tuple[str, ...] = ()
    em: EMResult | None = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    columns: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def params(self):
        """The fitted :class:`effdim.distribution.Parameters`."""
        return None if self.em is None else self.em.params

    # ------------------------------------------------------ in the data's words
    @functools.cached_property
    def labels(self):
        """:class:`effdim.profiles.Labels`: column names and category labels of the leaves."""
        from .profiles import Labels

        return Labels.of(self.model, self.data, self.columns)

    def parameter_table(self):
        """Every CPT entry as a tidy DataFrame (:func:`effdim.profiles.parameter_table`)."""
        from .profiles import parameter_table

        return parameter_table(self.params, self.labels)

    def profiles(self, node: str | None = None):
        """``P(item = category | node = class)`` for every item (:func:`effdim.profiles.profiles`)."""
        from .profiles import profiles

        return profiles(self.params, self.labels, node)

    def class_shares(self):
        """``P(H = h)`` of every hidden node (:func:`effdim.profiles.class_shares`)."""
        from .profiles import class_shares

        return class_shares(self.params, self.labels)

    def parameters_json(self) -> dict:
        """The CPTs keyed by column names and category labels (:func:`effdim.profiles.parameters_json`)."""
        from .profiles import parameters_json

        return parameters_json(self.params, self.labels)

    def posteriors(self, nodes: list[str] | None = None):
        """Posterior membership per input row or pattern (:func:`effdim.profiles.posterior_table`)."""
        from .profiles import posterior_table

        return posterior_table(self.params, self._data(), self.labels, nodes)

    def relabeled(self, node: str, order: Iterable[int]) -> FitResult:
        """The same fit with hidden ``node``'s states renumbered: new state ``i`` is old ``order[i]``
        (0-based; :meth:`effdim.em.EMResult.relabeled`)."""
        em = self.em.relabeled(node, list(order))
        return replace(self, em=em, degenerate=tuple(str(d) for d in em.degenerate))

    # ------------------------------------------------------------- diagnostics
    @functools.cached_property
    def _statistics(self):
        from .diagnostics import fit_statistics

        return fit_statistics(self.params, self._data(), ds=self.ds, de=self.de)

    def fit_statistics(self):
        """G2, X2, df = dc - de, p-values, entropy R2 (:func:`effdim.diagnostics.fit_statistics`)."""
        return self._statistics

    def pattern_table(self):
        """Observed against expected counts per response pattern (:func:`effdim.diagnostics.pattern_table`)."""
        from .diagnostics import pattern_table

        return pattern_table(self.params, self._data(), self.labels)

    @functools.cached_property
    def _residuals(self):
        from .diagnostics import bivariate_residuals

        return bivariate_residuals(self.params, self._data(), self.labels)

    def bivariate_residuals(self):
        """Bivariate residuals of every pair of items (:func:`effdim.diagnostics.bivariate_residuals`);
        computed once per fit (the dashboard asks again at every change of the node shown)."""
        return self._residuals

    @functools.cached_property
    def _identification(self):
        from .diagnostics import identification

        return identification(self.params, de=self.de, labels=self.labels)

    def identification(self):
        """Jacobian rank at the estimate against de (:func:`effdim.diagnostics.identification`); computed
        once per fit, as the residuals (an SVD of the Jacobian)."""
        return self._identification

    @property
    def unique(self) -> bool:
        """Whether the parameters, class shares and posteriors are unique: ``de = ds``
        (:mod:`effdim.diagnostics`, "Which fitted quantities are unique"). No computation."""
        return self.de >= self.ds

    @property
    def equivalent_fit_dimension(self) -> int:
        """``ds - de``: the dimension of the set of parameters that fit exactly as well (0 when unique)."""
        return max(self.ds - self.de, 0)

    def non_unique_sentence(self) -> str | None:
        """What is not unique in this fit, as one sentence; ``None`` when ``de = ds``."""
        from .diagnostics import non_unique_sentence

        return non_unique_sentence(self.ds, self.de)

    def equivalent_share_ranges(self, fits: int = 4, *, seed: Any = None) -> dict:
        """The class shares' range over equivalent refits (:func:`effdim.diagnostics.equivalent_share_ranges`)."""
        from .diagnostics import equivalent_share_ranges

        return equivalent_share_ranges(self.em, self._data(), fits, seed=seed)

    def _data(self):
        if self.data is None:
            raise InvalidArgument("this fit does not keep its data; fit it with effdim.search.fit")
        return self.data

    @property
    def loglik(self) -> float:
        return self.scores.loglik

    @property
    def ds(self) -> int:
        return self.scores.ds

    @property
    def de(self) -> int:
        return self.scores.de

    @property
    def n(self) -> float:
        return self.scores.n

    def score(self, name: str) -> float:
        """A score by name: ``loglik`` or any name of :data:`effdim.scores.SCORES`."""
        return self.scores.get(name)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``model`` (notation), ``card``, every score of
        :class:`effdim.scores.Scores` (``loglik``, ``bic``, ``bic_plus``, ...,
        ``ds``, ``de``, ``n``), ``unique`` and ``equivalent_fit_dimension``
        (``ds - de``: parameters, shares and posteriors are not unique when
        it is above 0), ``restarts`` and ``degenerate``."""
        scores = self.scores.to_dict()
        n = scores["n"]
        scores["n"] = int(n) if float(n).is_integer() else n
        return {
            "model": format_model(self.model),
            "card": self.card,
            **scores,
            "unique": self.unique,
            "equivalent_fit_dimension": self.equivalent_fit_dimension,
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


def lc_model_for(dataset: Any, card: int = 2) -> HLCModel:
    """The LC model ``card : |O_1|, ..., |O_n|`` over all columns of ``dataset``.

    Leaves are named after the columns when the names are valid node names,
    else ``O1..On`` (matched to the columns by position).
    """
    from .model import NAME_PATTERN

    dataset = as_dataset(dataset)
    columns = list(dataset.columns)
    cards = list(dataset.cardinalities)
    names = columns if all(NAME_PATTERN.match(c) for c in columns) else None
    taken = set(names or [f"O{i + 1}" for i in range(len(columns))])
    hidden = next(h for h in ("X", "H", "H1", "Latent", "_X") if h not in taken)
    return HLCModel.lc(card, cards, hidden_name=hidden, observed_names=names)


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
    smaller: FitResult | None = None,
    cs_prior: Any = None,
    cancel: Any = None,
    warn: bool = True,
    **em_options: Any,
) -> FitResult:
    """Fit ``model`` by EM (:func:`effdim.em.fit_em`) and score it (:func:`effdim.scores.score_fit`).

    ``smaller``: the fit of a nested smaller model (``model`` with one hidden
    cardinality one lower). Its solution with one hidden state split in two
    (:func:`effdim.nested.nested_start`) is one more EM start besides the
    ``restarts`` random ones, so the log-likelihood of ``model`` ends at
    least as high as that of ``smaller`` (under maximum likelihood). Ignored
    when ``model`` is not nested that way.

    ``cs_prior``: the Dirichlet prior of CS and CS+ (``"k2"``, ``"bdeu:1"``,
    ...; see :func:`effdim.scores.score_fit`), checked before EM runs.

    ``warn``: issue a :class:`effdim.em.ConvergenceWarning` when the best
    start did not converge or no other start reached it (sweeps and climbs
    turn it off: their tables show the starts at the best).
    """
    from .data import resolve_mapping

    model = as_model(model)
    resolve_cs_prior(cs_prior, prior)
    if isinstance(dataset, ModelData):
        columns = {leaf: leaf for leaf in model.observed}
    else:
        dataset = as_dataset(dataset)
        mapping = em_options.pop("mapping", None)
        columns = resolve_mapping(dataset, model, mapping)
        # arranges the data once (check_matches_model), within EM's memory budget
        dataset = ModelData(model, dataset, mapping, max_bytes=em_options.get("max_bytes"))
    arranged = dataset.dataset
    start = nested_start(smaller.params if smaller is not None else None, model)
    if start is not None:
        given = em_options.pop("init", None)
        given = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
        em_options["init"] = [start, *given]
    result = fit_em(
        dataset,
        model,
        restarts=restarts,
        seed=seed,
        tol=tol,
        max_iter=max_iter,
        prior=prior,
        cancel=cancel,
        **em_options,
    )
    if warn:
        result.warn()
    return FitResult(
        model=model,
        card=card,
        scores=score_fit(result, cs_prior=cs_prior),
        restarts=result.restarts_info(),
        degenerate=tuple(str(d) for d in result.degenerate),
        em=result,
        data=arranged,
        columns=columns,
    )


# -------------------------------------------------------------------------- sweep
def sweep(
    dataset: Any,
    model: HLCModel | str | None = None,
    node: str | None = None,
    cards: Iterable[int] | None = None,
    *,
    max_card: int | None = None,
    until_saturated: bool = False,
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
        Cardinalities to fit; default ``1 .. largest_regular_card`` (Lemma 3.2 for LC,
        Lemma 4.1 for HLC, with the other nodes as given), capped at
        ``max_card`` when that is given.
    until_saturated:
        Stop after the first cardinality whose model is saturated, ``de = dc``
        (:func:`effdim.bounds.complete_dimension`): it can fit any
        distribution of the observed variables, so every larger cardinality
        fits the data exactly as well and only pays a larger penalty. The
        test reads the ``de`` each fit's scores already carry (cached per
        local LC model, :func:`effdim.dimensions.dimensions`), so it costs
        nothing beyond the fits and ends the sweep where its curves turn flat.
    restarts, seed, tol, max_iter, prior:
        Passed to :func:`effdim.em.fit_em`; each fit gets its own stream
        spawned from ``seed``. A fit whose cardinality is one above the
        previous one is also started from that fit (``smaller`` of
        :func:`fit`), so the log-likelihood does not fall along the sweep.
    progress:
        ``progress(done, total)`` after each fit (and ``(0, total)`` first).
    cancel:
        ``threading.Event``: raises :class:`Cancelled` when set.
    em_options:
        Passed to :func:`fit`, e.g. ``cs_prior="k2"`` (:mod:`effdim.priors`).

    Returns
    -------
    One :class:`FitResult` per cardinality, in order, ``card`` set; with
    ``until_saturated``, the last one is the first saturated model (or the
    last of ``cards`` when none is).
    """
    dataset = as_dataset(dataset)
    if model is None:
        model = lc_model_for(dataset)
    else:
        model = as_model(model)
    if node is None:
        node = model.root
    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
    if cards is None:
        top = largest_regular_card(model, node)
        if max_card is not None:
            top = min(top, int(max_card))
        cards = range(1, top + 1)
    cards = [check_int(f"|{node}|", k, low=1) for k in cards]
    if not cards:
        raise InvalidArgument("no cardinalities to fit")
    rngs = spawn_seeds(seed, len(cards))
    total = len(cards)
    if progress is not None:
        progress(0, total)
    results: list[FitResult] = []
    saturated_at = complete_dimension(model) if until_saturated else None
    for i, (k, rng) in enumerate(zip(cards, rngs)):
        _check_cancel(cancel)
        m = model.with_card(node, k)
        results.append(
            fit(
                dataset,
                m,
                card=k,
                restarts=restarts,
                seed=rng,
                tol=tol,
                max_iter=max_iter,
                prior=prior,
                smaller=results[-1] if results else None,
                cancel=cancel,
                warn=False,
                **em_options,
            )
        )
        saturated = saturated_at is not None and results[-1].de >= saturated_at
        if saturated:
            total = i + 1
        if progress is not None:
            progress(i + 1, total)
        if saturated:
            break
    return results


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
    within its regular maximum (:func:`~effdim.regularity.largest_regular_card`)
    is tried, each candidate also started from the current fit with a state
    of that node split in two (``smaller`` of :func:`fit`), so no candidate
    ends below the current log-likelihood; the best candidate on ``score``
    (any name of :data:`effdim.scores.SCORES`) is accepted if it beats the
    current model by more than a tie (:func:`climb`), else the climb stops.
    The given cardinalities of ``model`` only fix its structure. EM and CS
    options (``cs_prior``, ...) in ``em_options`` go to :func:`fit`.

    ``progress(done, total)`` is called after each fit; ``total`` counts the
    fits done plus those left in the current step (it grows as the climb
    goes on).
    """
    score = criterion(score).name
    dataset = as_dataset(dataset)
    model = as_model(model)
    current = start_model(model, start)
    rng = as_seed(seed)
    done = 0

    def tick(left: int) -> None:
        if progress is not None:
            progress(done, done + left)

    def run(m: HLCModel, smaller: FitResult | None) -> FitResult:
        nonlocal done
        _check_cancel(cancel)
        result = fit(
            dataset,
            m,
            restarts=restarts,
            seed=rng.spawn(1)[0],
            tol=tol,
            max_iter=max_iter,
            prior=prior,
            smaller=smaller,
            cancel=cancel,
            warn=False,
            **em_options,
        )
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
