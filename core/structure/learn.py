"""The search itself: EAST's phases, acceptance by full EM, and the result (docs/structure.md).

The moves that never add parameters (NR, ND, SD) first, ranked by
restricted score gain; when none is accepted, the expansions (NI, SI, NM),
ranked by EAST's improvement ratio (gain per added parameter), and when none
of those either, the node splits (NS). The best
ones are refit by full EM (every family free) warm-started from their
restricted estimate, so the refit log-likelihood is never below the
restricted one; the first that wins against the current model under the one
tie rule of :func:`effdim.scores.best_index` (better by more than the tie
tolerance, or tied and smaller) is accepted. Models already visited are
never proposed again. The search stops when no candidate does, at
``max_time`` or when ``cancel`` is set (:class:`effdim.em.Cancelled`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..data import ColumnsWithoutLeafNames, DataError, Dataset
from ..distribution import random_parameters
from ..em import Cancelled, EMResult, e_step, fit_em
from ..errors import InvalidArgument
from ..fitting import FitResult
from ..limits import MAX_ROUNDS, ROUNDS
from ..model import NAME_PATTERN, HLCModel
from ..notation import format_model
from ..regularity import is_regular
from ..scores import TIE_TOLERANCE, best_index, criterion, fit_criterion, score_fit
from ..settings import EMSettings
from ..validation import as_dataset, as_seed, check_int
from .local_de import LocalDe
from .local_em import LocalCounts, LocalFit, Messages, local_fit
from .moves import EXPANSION, OPERATORS, iter_candidate_moves
from .residual import residual_groups
from .start import _fresh, islands_model, mutual_information

__all__ = ["LearnedStructure", "Rounds", "Step", "StructureProgress", "learn_structure", "round_seeds", "start_again"]


@dataclass(frozen=True)
class Step:
    """One accepted move: operator, sentence, the new model, its refit score, the
    ``gain`` over the previous model, its log-likelihood after full EM (``loglik``)
    and after local EM on the touched families (``local_loglik``), ``ds``, ``de``."""

    operator: str
    text: str
    model: HLCModel
    score: float
    gain: float
    loglik: float
    local_loglik: float
    ds: int
    de: int

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "move": self.text,
            "model": format_model(self.model),
            "score": self.score,
            "gain": self.gain,
            "loglik": self.loglik,
            "local_loglik": self.local_loglik,
            "ds": self.ds,
            "de": self.de,
        }


@dataclass(frozen=True)
class StructureProgress:
    """What a ``progress`` callback receives: the current best ``model`` and its ``score``,
    accepted ``steps`` and evaluated ``candidates`` so far, ``elapsed`` seconds, and ``phase``."""

    model: HLCModel
    score: float
    steps: int
    candidates: int
    elapsed: float
    phase: str


@dataclass(frozen=True)
class LearnedStructure:
    """The outcome of :func:`learn_structure`.

    ``fit`` is the final model fitted and scored (:class:`effdim.FitResult`;
    its ``de`` comes from :func:`effdim.dimensions.dimensions`, and agrees with
    the local updates); ``steps`` the accepted moves; ``start`` the start
    model's fit; ``stopped`` why the search ended (``"converged"``: no
    candidate improves the score, or ``"max_time"``); ``rounds`` how many times
    it started again from its own end and ended higher (:func:`start_again`).
    """

    fit: FitResult
    score: str
    start: FitResult
    steps: tuple[Step, ...]
    candidates: int
    local_em_seconds: float
    full_em_seconds: float
    local_refits: int
    seconds: float
    stopped: str
    columns: dict = field(default_factory=dict)
    rounds: int = 0

    @property
    def model(self) -> HLCModel:
        return self.fit.model

    def to_json(self) -> dict[str, Any]:
        """``model`` (leaves named after the data columns), ``loglik``, every score, ``ds``, ``de``,
        ``steps`` (each with its ``gain``), and how the search ran."""
        out = self.fit.to_json()
        out.pop("card", None)
        out.update(
            {
                "score": self.score,
                "start": format_model(self.start.model),
                "start_score": self.start.score(self.score),
                "steps": [s.to_json() for s in self.steps],
                "candidates": self.candidates,
                "seconds": round(self.seconds, 3),
                "stopped": self.stopped,
                "rounds": self.rounds,
            }
        )
        if self.columns:
            out["columns"] = dict(self.columns)
        return out


def _named_dataset(dataset: Any, mapping: Mapping[str, str] | None) -> tuple[Dataset, dict[str, str]]:
    """The data with every column renamed to its leaf name (``mapping`` is leaf -> column)."""
    dataset = as_dataset(dataset)
    mapping = dict(mapping or {})
    leaf_of = {}
    for leaf, column in mapping.items():
        dataset.index(column)  # raises naming the column
        if column in leaf_of:
            raise DataError(f"column {column!r} is mapped to two leaves, {leaf_of[column]!r} and {leaf!r}")
        leaf_of[column] = leaf
    names = [leaf_of.get(c, c) for c in dataset.columns]
    for column, name in zip(dataset.columns, names):
        if not NAME_PATTERN.match(name):
            raise ColumnsWithoutLeafNames(
                f"column {column!r} cannot name a leaf (a leaf's name is a letter or '_' followed by letters, "
                "digits, '_', '.', '-')"
            )
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise ColumnsWithoutLeafNames(f"two columns would give leaves named {dup!r}")
    for column, states in zip(dataset.columns, dataset.states):
        if len(states) < 2:
            what = f"a single value ({states[0]!r})" if states else "no values (every cell is missing)"
            raise DataError(f"column {column!r} has {what}; it carries no information about the others: drop it")
    if len(names) < 3:
        raise DataError(f"a latent tree needs at least 3 columns; the data have {len(names)}")
    renamed = Dataset(
        columns=tuple(names),
        states=dataset.states,
        patterns=dataset.patterns,
        counts=dataset.counts,
        n_rows=dataset.n_rows,
        n_missing=dataset.n_missing,
        source=dataset.source,
        count_column=dataset.count_column,
    )
    return renamed, dict(zip(names, dataset.columns))


class _Clock:
    """The search's time limit and the caller's cancel event as one ``cancel`` for EM (set when either is),
    so every phase, the EM inside it included, stops at the limit. Wall seconds, or with ``cpu`` this
    process's CPU seconds (a limit that does not depend on what else the machine runs)."""

    def __init__(self, max_time: float | None, cancel: Any, cpu: bool = False):
        self.now = time.process_time if cpu else time.perf_counter
        self.t0 = self.now()
        self.deadline = None if max_time is None else self.t0 + max_time
        self.cancel = cancel

    def elapsed(self) -> float:
        return self.now() - self.t0

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def out_of_time(self) -> bool:
        return self.deadline is not None and self.now() > self.deadline

    def remaining(self) -> float:
        return np.inf if self.deadline is None else self.deadline - self.now()

    def is_set(self) -> bool:
        return self.cancelled() or self.out_of_time()

    def check(self) -> None:
        """Raise :class:`Cancelled` when the caller cancelled (a time limit is not an error)."""
        if self.cancelled():
            raise Cancelled("structure search cancelled")


class _OutOfTime(Exception):
    """The time limit fell inside a phase: the search keeps the best model it has."""


#: The version of one search from one start (a round), part of the experiments' job keys: bumped whenever its
#: decisions change, so that cached studies of an older search are not mixed with new results (the commit of
#: each bump says what changed).
SEARCH_VERSION = 10

#: Groups of children per hidden node that node introduction takes from the residual dependence (the first
#: clusters of :func:`effdim.structure.residual.residual_groups`).
RESIDUAL_GROUPS = 8

#: The operator of a :class:`Step` that leaves a local optimum: its best neighbour by full EM, which scores lower.
ESCAPE = "escape"

#: Operators screened only when no candidate of the other phases wins: a node split re-estimates the family of
#: every neighbour of the node (the costliest local EM of all), and it is needed where the other moves stop.
LAST_RESORT = ("NS",)

#: EM steps of the start model's one-start fit under a time limit (what is returned if the limit cuts the full fit).
START_STEPS_ON_TIME = 3
#: E-steps of one SQUAREM cycle of :func:`effdim.em.fit_em`, at most: the time limit is checked between cycles.
CYCLE_STEPS = 4


def climb_and_escape(start, climb: Callable, leave: Callable, better: Callable, escapes: int):
    """Climb from ``start``, then escape from the optima reached: ``leave(source, downhill)`` steps from the
    optimum ``source`` to the least bad of its losing neighbours (``(score, move, ...)`` entries, removed from
    ``downhill`` as they are taken) and ``climb(position, visited)`` goes up from there, returning its end and
    the end's losing neighbours. An end that scores higher than the best optimum so far (``better``) becomes
    the optimum escaped from next; once ``escapes`` escapes in a row from it end no higher (or it has no
    unvisited neighbour left), the search goes back to the optimum it came from and escapes from that one's
    neighbours not yet tried, and so on back to the first. One visited set for the whole search, so a climb
    never goes back. Returns the best optimum (docs/structure.md, "Escapes")."""
    visited: set = set()
    optimum, downhill = climb(start, visited)
    source, failed, earlier = optimum, 0, []  # earlier: the optima left behind, with their untried neighbours
    while True:
        downhill = [entry for entry in downhill if entry[1].model not in visited]
        if failed >= escapes or not downhill:
            if not earlier:
                return optimum
            (source, downhill), failed = earlier.pop(), 0
            continue
        end, there = climb(leave(source, downhill), visited)
        if better(end, optimum):
            earlier.append((source, downhill))
            optimum = source = end
            downhill, failed = there, 0
        else:
            failed += 1


class _Position:
    """Where a climb stands: the model, its full-EM fit and score, its ``(ds, de)`` updated locally, the
    steps that led there from the start, and the fit's messages (computed when first screened)."""

    def __init__(self, model: HLCModel, em: EMResult, score: float, data: Dataset, dims: LocalDe, path: tuple):
        self.model, self.em, self.score, self.dims, self.path = model, em, score, dims, path
        self._data, self._messages, self._residual = data, None, None

    @property
    def messages(self) -> Messages:
        if self._messages is None:
            self._messages = Messages(self.em.params, self._data)
        return self._messages

    def residual(self, per_node: int) -> dict:
        """The groups of each hidden node's children that this fit leaves dependent (:func:`residual_groups`)."""
        if self._residual is None:
            self._residual = residual_groups(self.model, self.messages, per_node)
        return self._residual


def learn_structure(
    dataset: Any,
    *,
    score: str = "bic+",
    start: str | HLCModel = "islands",
    mapping: Mapping[str, str] | None = None,
    operators: Iterable[str] = OPERATORS,
    em: EMSettings | None = None,
    max_time: float | None = None,
    cpu_time: bool = False,
    tries: int = 2,
    screen_iter: int = 200,
    escapes: int = 2,
    local_starts: int = 2,
    local_iter: int = 96,
    local_tol: float = 1e-6,
    rounds: int = ROUNDS,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
    **em_options: Any,
) -> LearnedStructure:
    """Learn an HLC model (tree and cardinalities) from ``dataset`` by EAST-style search.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset` or pandas DataFrame; every column is a leaf,
        named after the column (or as ``mapping``, leaf -> column, says).
    score:
        The score that drives the search: any name of :data:`effdim.scores.SCORES`.
    start:
        ``"islands"`` (mutual-information grouping, :func:`islands_model`),
        ``"lc"`` (the binary LC model), or an :class:`~effdim.model.HLCModel`
        over the leaves.
    operators:
        A subset of :data:`OPERATORS`.
    em, em_options:
        How EM runs (:class:`effdim.EMSettings`; ``em_options`` replace single
        fields): its ``restarts`` random starts fit the start model; its
        ``tol`` and ``max_iter`` govern the start and final fits and the
        refit of each accepted move (``local_tol`` the local EM); its
        ``cs_prior`` is the prior of CS and CS+.
    max_time:
        Seconds for the whole search, every phase included (mutual
        information, the start fit, each candidate, each refit): at the limit
        the best model so far is returned (at least the start model, fitted by
        one short EM start if the limit fell inside its fit), with
        ``stopped == "max_time"``.
    cpu_time:
        Count ``max_time`` (and the reported seconds) in CPU seconds of this
        process instead of wall seconds: on a shared machine the search then
        stops at the same point whatever the load (the structure study).
    tries, screen_iter:
        Candidates of each operator refit by full EM per step, the best by
        local score whatever its sign (the local score of ``ND`` and ``NR`` is
        often far too low), and the E-steps of each such refit.
    escapes:
        Climbs out of each local optimum once the climb stops, from its least
        bad neighbours by full EM (the refit candidates that lost there), best
        first; an end that scores higher becomes the optimum escaped from next,
        with ``escapes`` escapes of its own (in a row that end no higher), then
        the optima before it get theirs.
    local_starts, local_iter:
        Starts and E-steps (SQUAREM-accelerated) of the restricted (local) EM
        of each candidate.
    rounds:
        Times the search starts again from its own end, at most, while that
        ends higher (:func:`start_again`); each round draws from its own
        stream spawned from ``seed``, so the first round is the same whatever
        ``rounds`` is.
    progress:
        Called with a :class:`StructureProgress` after every candidate and step.
    cancel:
        A ``threading.Event``; when set, :class:`Cancelled` is raised.

    Examples
    --------
    Data from a tree with two groups of three leaves, well separated; the search finds the groups:

    >>> from effdim import parse_model
    >>> from effdim.distribution import sample
    >>> from effdim.experiments.structure import separated_parameters
    >>> from effdim.structure import robinson_foulds
    >>> truth = parse_model("2(2,2,2,2(2,2,2))")
    >>> data = sample(separated_parameters(truth), 5000, 1)
    >>> result = learn_structure(data, score="bic+", seed=0)
    >>> print(result.model, robinson_foulds(result.model, truth), result.stopped)
    H1:2(H2:2(O4:2,O5:2,O6:2),O1:2,O2:2,O3:2) 0 converged
    """
    from ..fitting import fit

    em = EMSettings.of(em, **em_options)
    restarts, seed, tol, max_iter, prior, cs_prior = em.restarts, em.seed, em.tol, em.max_iter, em.prior, em.cs_prior
    clock = _Clock(max_time, cancel, cpu_time)
    score = fit_criterion(score, "a structure search").name
    for name, value, low in (
        ("tries", tries, 1),
        ("screen_iter", screen_iter, 1),
        ("escapes", escapes, 0),
        ("local_starts", local_starts, 1),
        ("local_iter", local_iter, 1),
    ):
        check_int(name, value, low=low)
    check_int("rounds", rounds, low=0, high=MAX_ROUNDS)
    data, columns = _named_dataset(dataset, mapping)
    operators = tuple(operators)
    bad = [o for o in operators if o not in OPERATORS]
    if bad:
        raise InvalidArgument(f"unknown operator {bad[0]!r}; choose from {', '.join(OPERATORS)}")
    if max_time is not None and not (max_time > 0):
        raise InvalidArgument(f"max_time must be a positive number of seconds, got {max_time!r}")
    if not (isinstance(start, HLCModel) or start in ("islands", "lc")):
        raise InvalidArgument(f"unknown start {start!r}; choose islands, lc or a model")
    rng = as_seed(seed)
    seeds_of_rounds = round_seeds(rng, rounds)
    index = {c: i for i, c in enumerate(data.columns)}
    mi = mutual_information(data)
    if isinstance(start, HLCModel):
        first_model = start
    elif start == "islands":
        first_model = islands_model(data, mi)
    else:
        first_model = HLCModel.lc(
            2, data.cardinalities, hidden_name=_fresh(data.columns, 1)[0], observed_names=data.columns
        )
    if sorted(first_model.observed) != sorted(data.columns):
        raise InvalidArgument(
            f"the start model's leaves ({', '.join(first_model.observed)}) are not the data's "
            f"columns ({', '.join(data.columns)})"
        )
    if not is_regular(first_model):
        raise InvalidArgument(f"the start model {first_model} is not regular; regularize it first")

    crit = criterion(score)
    clocks = {"local": 0.0, "full": 0.0, "refits": 0, "candidates": 0}
    tie = TIE_TOLERANCE * data.n_rows
    stopped = "converged"

    def timed_fit(kind: str, *args, **kwargs):
        t = clock.now()
        try:
            return (fit if kind == "fit" else fit_em)(*args, **kwargs)
        finally:
            clocks["full"] += clock.now() - t
            clocks["refits"] += kind == "refit"

    def em_fit(model: HLCModel, init: Any, iters: int, *, limit: bool = True) -> EMResult:
        """Full EM of ``model`` from ``init``; at the time limit :class:`_OutOfTime`."""
        try:
            return timed_fit(
                "refit",
                data,
                model,
                restarts=0,
                init=init,
                tol=tol,
                max_iter=iters,
                prior=prior,
                cancel=clock if limit else cancel,
            )
        except Cancelled:
            clock.check()
            raise _OutOfTime from None

    def scored(em: EMResult, ds: int, de: int) -> float:
        return score_fit(em, ds=ds, de=de, cs_prior=cs_prior).get(score)

    def local_score(local: LocalFit, ds: int, de: int) -> float:
        """A penalised likelihood needs only the restricted log-likelihood; CS needs the expected
        counts of every family, so one exact E-step of the candidate."""
        if crit.rate is not None:
            return local.loglik - (de if crit.uses_de else ds) * crit.rate(local.n)
        loglik, counts = e_step(local.params, data)
        counted = LocalCounts(local.model, local.params, loglik, counts, local.n, prior)
        return score_fit(counted, ds=ds, de=de, cs_prior=cs_prior).get(score)

    best: list[_Position] = []

    def report(phase: str, state: _Position | None = None) -> None:
        if progress is not None:
            shown = best[0] if best else state
            progress(
                StructureProgress(
                    shown.model, shown.score, len(shown.path), clocks["candidates"], clock.elapsed(), phase
                )
            )

    # ---- the start
    clock.check()
    # no ConvergenceWarning: the start model is only where the search begins, and whether its EM
    # starts agreed says nothing about the tree it ends with
    first = None
    if max_time is not None:
        # under a time limit, first a few EM steps from one fixed start: the model returned if the limit
        # falls inside the full fit, and what one EM step of this model costs (the time limit is checked
        # between EM cycles, so the full fit runs only if a cycle of all its starts fits in the time left)
        t = clock.now()
        quick = timed_fit(
            "fit",
            data,
            first_model,
            restarts=0,
            init=random_parameters(first_model, 0),
            tol=tol,
            max_iter=START_STEPS_ON_TIME,
            cs_prior=cs_prior,
            warn=False,
            prior=prior,
            cancel=cancel,
        )
        per_step = (clock.now() - t) / (START_STEPS_ON_TIME + 1)
        first = quick
        if clock.remaining() > 2 * CYCLE_STEPS * restarts * per_step:
            try:
                first = timed_fit(
                    "fit",
                    data,
                    first_model,
                    restarts=restarts,
                    seed=rng,
                    tol=tol,
                    max_iter=max_iter,
                    cs_prior=cs_prior,
                    warn=False,
                    prior=prior,
                    cancel=clock,
                )
            except Cancelled:
                clock.check()
        if first is quick:
            stopped = "max_time"
    else:
        first = timed_fit(
            "fit",
            data,
            first_model,
            restarts=restarts,
            seed=rng,
            tol=tol,
            max_iter=max_iter,
            cs_prior=cs_prior,
            warn=False,
            prior=prior,
            cancel=cancel,
        )

    def position(model: HLCModel, em: EMResult, value: float, path: tuple) -> _Position:
        return _Position(model, em, value, data, LocalDe(model), path)

    best.append(position(first_model, first.em, first.score(score), ()))
    report("start")

    def screen(cur: _Position, ops: tuple[str, ...], visited: set) -> list:
        """Local EM of every candidate of ``ops``; per operator the ``tries`` best by local score (gain per
        added parameter for the expansions that gain), ``(rank, gain, move, local, ds, de)``."""
        cur_ds = cur.dims.dims(cur.model)[0]
        by_op: dict[str, list] = {}
        residual = cur.residual(RESIDUAL_GROUPS) if {"NI", "NS"} & set(ops) else None
        for move in iter_candidate_moves(cur.model, mi, index, operators=ops, residual=residual):
            if move.model in visited:  # never go back: ties could otherwise cycle
                continue
            clock.check()
            if clock.out_of_time():
                raise _OutOfTime
            ds, de = cur.dims.dims(move.model)
            t = clock.now()
            try:
                local = local_fit(
                    data,
                    move,
                    cur.em.params,
                    starts=local_starts,
                    max_iter=local_iter,
                    tol=local_tol,
                    seed=rng,
                    messages=cur.messages,
                    prior=prior,
                    cancel=clock,
                )
            except Cancelled:
                clock.check()
                raise _OutOfTime from None
            finally:
                clocks["local"] += clock.now() - t
            gain = local_score(local, ds, de) - cur.score
            clocks["candidates"] += 1
            rank = gain / max(1, ds - cur_ds) if move.operator in EXPANSION and gain > 0 else gain
            by_op.setdefault(move.operator, []).append((rank, gain, move, local, ds, de))
            report(f"candidate {move.operator}", cur)
        short = [e for entries in by_op.values() for e in sorted(entries, key=lambda e: -e[0])[:tries]]
        return sorted(short, key=lambda e: -e[0])

    def refit_best(cur: _Position, shortlist: list, downhill: list) -> _Position | None:
        """Refit the shortlist by full EM in its order; the first that wins against ``cur`` under the one tie
        rule, or ``None``. Those that lose go to ``downhill`` as ``(score, move, full, local, ds, de)``."""
        cur_ds = cur.dims.dims(cur.model)[0]
        for _, _, move, local, ds, de in shortlist:
            clock.check()
            full = em_fit(move.model, local.params, screen_iter)
            value = scored(full, ds, de)
            if best_index([cur.score, value], [cur_ds, ds], data.n_rows) != 1:
                downhill.append((value, move, full, local, ds, de))
                continue
            if not full.converged:  # finish the winner's fit at the full tolerance (from where it is)
                full = em_fit(move.model, full.params, max_iter)
                value = scored(full, ds, de)
            return moved_to(cur, move.operator, move, full, local, value, ds, de)
        return None

    def moved_to(cur: _Position, operator: str, move, full: EMResult, local: LocalFit, value, ds, de) -> _Position:
        text = move.text if operator == move.operator else f"{move.operator}: {move.text}"
        step = Step(operator, text, move.model, value, value - cur.score, full.loglik, local.loglik, ds, de)
        return position(move.model, full, value, cur.path + (step,))

    def better(a: _Position, b: _Position) -> bool:
        """``a`` scores higher than ``b`` beyond a tie (perhaps the same model, better fitted: an escape can
        come back to it by another path, with EM in a higher optimum)."""
        return a.score > b.score + tie

    phases = [
        tuple(o for o in operators if o not in EXPANSION),
        tuple(o for o in operators if o in EXPANSION and o not in LAST_RESORT),
        tuple(o for o in operators if o in LAST_RESORT),
    ]

    def climb(cur: _Position, visited: set) -> tuple[_Position, list]:
        """EAST's phases (adjustment and simplification first, they never add parameters; then expansion;
        then the node split, :data:`LAST_RESORT`) until no candidate wins. In each phase the candidates whose local score wins are refit first; only
        when none of any phase wins are those of negative local score refit (their local score may
        mislead). Returns the end and the refit candidates that lost there, ``(score, move, full, local,
        ds, de)``; :class:`_OutOfTime` carries nothing, the caller keeps its best."""
        visited.add(cur.model)
        while True:
            moved, shortlists, downhill = None, [], []
            for ops in phases:
                if ops:
                    shortlists.append(screen(cur, ops, visited))
                    moved = refit_best(cur, [e for e in shortlists[-1] if e[1] > -tie], downhill)
                    if moved is not None:
                        break
            if moved is None:
                moved = refit_best(cur, [e for short in shortlists for e in short if e[1] <= -tie], downhill)
            if moved is None:
                return cur, downhill
            cur = moved
            visited.add(cur.model)
            if better(cur, best[0]):
                best[0] = cur
            report(f"accepted {cur.path[-1].operator}", cur)

    def escape(cur: _Position, downhill: list) -> _Position:
        """The next start out of the optimum ``cur``: its least bad losing neighbour by full EM, removed from
        ``downhill`` (a step with operator :data:`ESCAPE`)."""
        value, move, full, local, ds, de = downhill.pop(max(range(len(downhill)), key=lambda i: downhill[i][0]))
        return moved_to(cur, ESCAPE, move, full, local, value, ds, de)

    try:
        if stopped == "max_time":
            raise _OutOfTime
        climb_and_escape(best[0], climb, escape, better, escapes)  # the climbs keep ``best`` up to date
    except _OutOfTime:
        stopped = "max_time"
    except Cancelled:
        clock.check()
        stopped = "max_time"
    clock.check()
    final_state = best[0]
    if final_state.em is first.em:
        final = first
    else:  # the search ends at a fit it made at the full tolerance; on time only scored (no more EM)
        final = timed_fit(
            "fit",
            data,
            final_state.model,
            restarts=0,
            init=final_state.em.params,
            tol=tol,
            max_iter=0 if stopped == "max_time" else max_iter,
            cs_prior=cs_prior,
            prior=prior,
            cancel=cancel,
            warn=False,
        )
    result = LearnedStructure(
        fit=final,
        score=str(score).lower(),
        start=first,
        steps=final_state.path,
        candidates=clocks["candidates"],
        local_em_seconds=clocks["local"],
        full_em_seconds=clocks["full"],
        local_refits=clocks["refits"],
        seconds=clock.elapsed(),
        stopped=stopped,
        columns={leaf: col for leaf, col in columns.items() if leaf != col},
    )
    if stopped == "converged" and seeds_of_rounds:
        settings = {
            "operators": operators,
            "restarts": restarts,
            "tol": tol,
            "max_iter": max_iter,
            "prior": prior,
            "cs_prior": cs_prior,
            "tries": tries,
            "screen_iter": screen_iter,
            "escapes": escapes,
            "local_starts": local_starts,
            "local_iter": local_iter,
            "local_tol": local_tol,
        }
        after = start_again(
            data,
            result.model,
            result.fit.score(score),
            seeds=seeds_of_rounds,
            score=score,
            max_time=None if max_time is None else max_time - result.seconds,
            cpu_time=cpu_time,
            progress=None
            if progress is None
            else _counted_on(progress, len(result.steps), result.candidates, result.seconds),
            cancel=cancel,
            **settings,
        )
        result = _joined(result, after, clock.elapsed())
    if progress is not None:
        progress(
            StructureProgress(
                result.model, result.fit.score(score), len(result.steps), result.candidates, clock.elapsed(), "done"
            )
        )
    return result


@dataclass(frozen=True)
class Rounds:
    """What :func:`start_again` did: the rounds that ended higher (``gained``, in order), whether the last
    round run was stopped by the time limit (``cut``), and the cost of all rounds run, those that gained
    nothing included: ``seconds``, ``candidates``, and the seconds of local and full EM and the local refits
    (as :class:`LearnedStructure` counts them)."""

    gained: tuple[LearnedStructure, ...]
    cut: bool
    seconds: float
    candidates: int
    local_em_seconds: float
    full_em_seconds: float
    local_refits: int


def round_seeds(seed: Any, rounds: int) -> list[np.random.Generator]:
    """The streams of a search's ``rounds`` (:func:`start_again`): children spawned from ``seed``'s sequence,
    not draws from the stream its first search uses, so that search is the same whatever ``rounds`` is."""
    return list(as_seed(seed).spawn(rounds))


def start_again(
    dataset: Any,
    model: HLCModel,
    value: float,
    *,
    seeds: Sequence[Any],
    score: str,
    max_time: float | None = None,
    cpu_time: bool = False,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
    **settings: Any,
) -> Rounds:
    """Searches started again from the end of a search, ``model`` scoring ``value``: each a new
    :func:`learn_structure` (``rounds=0``) from the end before it, seeded by the next of ``seeds``, with
    the structure fitted again by EM from fresh random starts and no move barred as visited. A local optimum
    of one search need not be one of the next: its EM optimum, and so its candidates' local fits, may differ.

    Goes on while a round ends higher by more than the tie tolerance, at most ``len(seeds)`` rounds, within
    ``max_time`` seconds for all. ``settings`` are :func:`learn_structure`'s search settings.
    """
    data = as_dataset(dataset)
    tie = TIE_TOLERANCE * data.n_rows
    gained: list[LearnedStructure] = []
    run: list[LearnedStructure] = []
    cut = False
    for seed in seeds:
        seconds = sum(r.seconds for r in run)
        left = None if max_time is None else max_time - seconds
        if left is not None and left <= 0:
            cut = True
            break
        again = learn_structure(
            data,
            score=score,
            start=model,
            seed=seed,
            max_time=left,
            cpu_time=cpu_time,
            rounds=0,
            progress=None
            if progress is None
            else _counted_on(
                progress,
                sum(len(r.steps) for r in gained),
                sum(r.candidates for r in gained),
                seconds,
                phase=f"round {len(gained) + 2}: ",
                best=(model, value),
            ),
            cancel=cancel,
            **settings,
        )
        run.append(again)
        cut = again.stopped == "max_time"
        if again.fit.score(score) <= value + tie:
            break
        gained.append(again)
        model, value = again.model, again.fit.score(score)
        if cut:
            break
    return Rounds(
        tuple(gained),
        cut,
        seconds=sum(r.seconds for r in run),
        candidates=sum(r.candidates for r in run),
        local_em_seconds=sum(r.local_em_seconds for r in run),
        full_em_seconds=sum(r.full_em_seconds for r in run),
        local_refits=sum(r.local_refits for r in run),
    )


def _counted_on(
    progress: Callable,
    steps: int,
    candidates: int,
    seconds: float,
    *,
    phase: str = "",
    best: tuple[HLCModel, float] | None = None,
) -> Callable:
    """``progress`` for a search that follows others: its steps, candidates and seconds counted on from theirs,
    its phase prefixed with ``phase``, and, while its own score is not above it, the ``best`` model and score so
    far shown instead (a round starts from a fresh fit of that model, which may score lower)."""

    def shifted(p: StructureProgress) -> Any:
        shown = {} if best is None or p.score > best[1] else {"model": best[0], "score": best[1]}
        return progress(
            replace(
                p,
                steps=p.steps + steps,
                candidates=p.candidates + candidates,
                elapsed=p.elapsed + seconds,
                phase=phase + p.phase,
                **shown,
            )
        )

    return shifted


def _joined(first: LearnedStructure, after: Rounds, seconds: float) -> LearnedStructure:
    """One result for a search and the rounds after it: the fit of the last round that ended higher, the steps
    of the search and of those rounds, the cost (candidates, EM seconds, refits) of the search and of every
    round run, and ``seconds`` in all."""
    kept = [first, *after.gained]
    return replace(
        first,
        fit=kept[-1].fit,
        steps=tuple(s for r in kept for s in r.steps),
        candidates=first.candidates + after.candidates,
        local_em_seconds=first.local_em_seconds + after.local_em_seconds,
        full_em_seconds=first.full_em_seconds + after.full_em_seconds,
        local_refits=first.local_refits + after.local_refits,
        seconds=seconds,
        stopped="max_time" if after.cut else first.stopped,
        rounds=len(after.gained),
    )
