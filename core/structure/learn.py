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
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from ..data import ColumnsWithoutLeafNames, DataError, Dataset
from ..distribution import random_parameters
from ..em import Cancelled, EMResult, e_step, fit_em
from ..errors import InvalidArgument
from ..executor import Workers
from ..fitting import FitResult, fit
from ..model import NAME_PATTERN, HLCModel
from ..regularity import is_regular
from ..scores import TIE_TOLERANCE, best_index, criterion, score_fit
from ..settings import EMSettings
from ..validation import as_dataset, as_seed
from .local_de import LocalDe
from .local_em import LocalCounts, LocalFit, Messages
from .moves import EXPANSION, iter_candidate_moves
from .residual import residual_groups
from .result import LearnedStructure, Rounds, Step, StructureProgress
from .settings import SearchSettings, split_options
from .start import _fresh, islands_model, mutual_information
from .tasks import LocalTask, RefitTask, local_task, refit_task

__all__ = ["StructureSearch", "learn_structure", "round_seeds", "start_again"]


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


class _SameOptimum(Exception):  # noqa: N818 - a signal, not an error
    """A round's fresh fit found the optimum its start ended at: nothing to climb from."""


#: The version of one search from one start (a round), part of the experiments' job keys: bumped whenever its
#: decisions change, so that cached studies of an older search are not mixed with new results (the commit of
#: each bump says what changed).
SEARCH_VERSION = 11

#: Groups of children per hidden node that node introduction takes from the residual dependence (the first
#: clusters of :func:`effdim.structure.residual.residual_groups`).
RESIDUAL_GROUPS = 8

#: The operator of a :class:`Step` that leaves a local optimum: its best neighbour by full EM, which scores lower.
ESCAPE = "escape"

#: Operators screened only when no candidate of the other phases wins: a node split re-estimates the family of
#: every neighbour of the node (the costliest local EM of all), and it is needed where the other moves stop.
LAST_RESORT = ("NS",)

#: The parts of a search's CPU seconds (:attr:`LearnedStructure.costs`): the start (mutual information, the
#: start model and its fit), the current fit's messages and residual dependence per step, making the candidates
#: and their dimensions, their local EM, the full-EM refits, the end's fit; then the share of all of these spent
#: in the climbs after escapes, and in the rounds after the search.
COSTS = ("start", "messages", "moves", "local EM", "refits", "end", "escapes", "rounds")

#: E-steps of every candidate's local EM before the most promising of each operator carry on.
SCREEN_STEPS = 12
#: Candidates per operator carried on to ``local_iter`` E-steps, as a multiple of ``tries``.
CARRIED_ON = 3
#: Batches of candidates per worker in one screen (more: a time limit is met sooner and the load evened).
BATCHES_PER_WORKER = 4

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
        self.key = uuid.uuid4().hex  # names the position to the workers, which keep its messages

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


class StructureSearch:
    """One search from one start (a round of :func:`learn_structure`), its phases as methods.

    :meth:`run` fits the start model (:meth:`fit_start`), climbs and escapes (:meth:`climb`, :meth:`escape`,
    :func:`climb_and_escape`), fits the end (:meth:`fit_end`) and, when it converged, starts again from
    there (:meth:`run_rounds`). Each climb step screens the candidates of a phase by local EM
    (:meth:`screen`) and refits the best by full EM (:meth:`refit_best`). ``data`` has its columns named
    as the leaves (:func:`_named_dataset`); ``columns`` maps each leaf to its column in the user's data.
    A round (:func:`start_again`) gives ``again_from``, the score of the end it starts from: when the start
    model's fresh fit scores the same (within the tie tolerance), EM found that end's optimum again, the
    candidates' local fits would be those the end already lost to, and the round stops there. ``workers``:
    those of the search a round follows (:class:`effdim.executor.Workers`; else its own, as the settings'
    ``execution`` says).
    """

    def __init__(
        self,
        data: Dataset,
        settings: SearchSettings,
        em: EMSettings,
        *,
        columns: Mapping[str, str] | None = None,
        progress: Callable[[StructureProgress], Any] | None = None,
        cancel: Any = None,
        again_from: float | None = None,
        workers: Workers | None = None,
    ):
        self.data, self.settings, self.em = data, settings, em
        self.again_from = again_from
        self._given_workers = workers
        self.workers: Workers | None = None
        self.columns = dict(columns or {})
        self.progress, self.cancel = progress, cancel
        self.clock = _Clock(settings.max_time, cancel, settings.cpu_time)
        self.criterion = criterion(settings.score)
        self.score = self.criterion.name
        self.rng = as_seed(em.seed)
        self.round_seeds = round_seeds(self.rng, settings.rounds)
        self.index = {c: i for i, c in enumerate(data.columns)}
        self.mi = mutual_information(data)
        self.start_model = self._start_model()
        self.clocks = {"local": 0.0, "full": 0.0, "refits": 0, "candidates": 0}
        self.costs = dict.fromkeys(COSTS, 0.0)
        self._escaping = False
        self.tie = TIE_TOLERANCE * data.n_rows
        self.stopped = "converged"
        self.best: _Position | None = None
        ops = settings.operators
        self.phases = [
            tuple(o for o in ops if o not in EXPANSION),
            tuple(o for o in ops if o in EXPANSION and o not in LAST_RESORT),
            tuple(o for o in ops if o in LAST_RESORT),
        ]

    def _start_model(self) -> HLCModel:
        start, data = self.settings.start, self.data
        if isinstance(start, HLCModel):
            model = start
        elif start == "islands":
            model = islands_model(data, self.mi)
        else:
            model = HLCModel.lc(
                2, data.cardinalities, hidden_name=_fresh(data.columns, 1)[0], observed_names=data.columns
            )
        if sorted(model.observed) != sorted(data.columns):
            raise InvalidArgument(
                f"the start model's leaves ({', '.join(model.observed)}) are not the data's "
                f"columns ({', '.join(data.columns)})"
            )
        if not is_regular(model):
            raise InvalidArgument(f"the start model {model} is not regular; regularize it first")
        return model

    @contextmanager
    def spending(self, part: str):
        """Add the CPU seconds of the block to ``costs[part]`` (and to ``costs["escapes"]`` in an escape's climb)."""
        t = time.process_time()
        try:
            yield
        finally:
            spent = time.process_time() - t
            self.costs[part] += spent
            if self._escaping:
                self.costs["escapes"] += spent

    # ---- fitting and scoring

    def _timed(self, refit: bool, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        t = self.clock.now()
        try:
            return fn(*args, **kwargs)
        finally:
            self.clocks["full"] += self.clock.now() - t
            self.clocks["refits"] += refit

    def em_fit(self, model: HLCModel, init: Any, iters: int) -> EMResult:
        """Full EM of ``model`` from ``init`` for at most ``iters`` E-steps; at the time limit :class:`_OutOfTime`."""
        settings = replace(self.em, restarts=0, max_iter=iters)
        try:
            with self.spending("refits"):
                return self._timed(True, fit_em, self.data, model, settings, init=init, cancel=self.clock)
        except Cancelled:
            self.clock.check()
            raise _OutOfTime from None

    def scored(self, em: EMResult, ds: int, de: int) -> float:
        return score_fit(em, ds=ds, de=de, cs_prior=self.em.cs_prior).get(self.score)

    def local_score(self, local: LocalFit, ds: int, de: int) -> float:
        """A penalised likelihood needs only the restricted log-likelihood; CS needs the expected
        counts of every family, so one exact E-step of the candidate."""
        crit = self.criterion
        if crit.rate is not None:
            return local.loglik - (de if crit.uses_de else ds) * crit.rate(local.n)
        loglik, counts = e_step(local.params, self.data)
        counted = LocalCounts(local.model, local.params, loglik, counts, local.n, self.em.prior)
        return score_fit(counted, ds=ds, de=de, cs_prior=self.em.cs_prior).get(self.score)

    def position(self, model: HLCModel, em: EMResult, value: float, path: tuple) -> _Position:
        return _Position(model, em, value, self.data, LocalDe(model), path)

    def report(self, phase: str, state: _Position | None = None) -> None:
        if self.progress is not None:
            shown = self.best or state
            self.progress(
                StructureProgress(
                    shown.model,
                    shown.score,
                    len(shown.path),
                    self.clocks["candidates"],
                    self.clock.elapsed(),
                    phase,
                    self.settings.max_time,
                )
            )

    # ---- the phases

    def fit_start(self) -> FitResult:
        """The start model fitted by EM with the settings' restarts (no ConvergenceWarning: the start is only
        where the search begins). Under a time limit first a few EM steps from one fixed start: the model
        returned if the limit falls inside the full fit; then as many again from there, timed: what one EM
        step of this model costs (the first fit in a process also pays its one-time costs, such as loading the
        compiled kernels, many times a step's). The limit is checked between EM cycles, so the full fit runs
        only if a cycle of all its starts fits in the time left; else ``stopped`` is ``"max_time"``."""
        self.clock.check()
        model, settings = self.start_model, self.em.with_seed(self.rng)
        if self.settings.max_time is None:
            return self._timed(False, fit, self.data, model, settings, warn=False, cancel=self.cancel)
        quick_settings = replace(self.em, restarts=0, max_iter=START_STEPS_ON_TIME)
        init = random_parameters(model, 0)
        quick = self._timed(False, fit, self.data, model, quick_settings, init=init, warn=False, cancel=self.cancel)
        t = self.clock.now()
        self._timed(False, fit_em, self.data, model, quick_settings, init=quick.params, cancel=self.cancel)
        per_step = (self.clock.now() - t) / START_STEPS_ON_TIME
        first = quick
        if self.clock.remaining() > 2 * CYCLE_STEPS * self.em.restarts * per_step:
            try:
                first = self._timed(False, fit, self.data, model, settings, warn=False, cancel=self.clock)
            except Cancelled:
                self.clock.check()
        if first is quick:
            self.stopped = "max_time"
        return first

    def screen(self, cur: _Position, ops: tuple[str, ...], visited: set) -> list:
        """Local EM of every candidate of ``ops``; per operator the ``tries`` best by local score (gain per
        added parameter for the expansions that gain), ``(rank, gain, move, local, ds, de)``."""
        with self.spending("messages"):
            messages = cur.messages
            residual = cur.residual(RESIDUAL_GROUPS) if {"NI", "NS"} & set(ops) else None
        t0, local0 = time.process_time(), self.costs["local EM"]
        try:
            return self._screened(cur, ops, visited, messages, residual)
        finally:  # what is not local EM is making the candidates and their dimensions
            spent = time.process_time() - t0 - (self.costs["local EM"] - local0)
            self.costs["moves"] += spent
            if self._escaping:
                self.costs["escapes"] += spent

    def _screened(self, cur: _Position, ops: tuple[str, ...], visited: set, messages: Messages, residual) -> list:
        """Every candidate's local EM for at most :data:`SCREEN_STEPS` E-steps, then the
        :data:`CARRIED_ON` ``* tries`` best of each operator carried on to ``local_iter`` (their restricted
        likelihood only rises on the way, and the others' would have to overtake them). Each candidate draws
        from a stream of its own (its place in the screen), so the workers that run them change nothing."""
        settings = self.settings
        cur_ds = cur.dims.dims(cur.model)[0]
        moves, dims = [], []
        for move in iter_candidate_moves(cur.model, self.mi, self.index, operators=ops, residual=residual):
            if move.model not in visited:  # never go back: ties could otherwise cycle
                self._on_time()
                moves.append(move)
                dims.append(cur.dims.dims(move.model))
        base = int(self.rng.integers(2**63))
        seeds = [np.random.SeedSequence([base, i]) for i in range(len(moves))]
        first = min(SCREEN_STEPS, settings.local_iter)
        fits = self._local_em(cur, messages, moves, first, seeds=seeds)
        by_op: dict[str, list] = {}
        for move, local, (ds, de) in zip(moves, fits, dims):
            by_op.setdefault(move.operator, []).append(self._ranked(cur, cur_ds, move, local, ds, de))
        carried = []
        for entries in by_op.values():
            entries.sort(key=lambda e: -e[0])
            top = entries[: CARRIED_ON * settings.tries]
            carried += [
                (entries, j) for j, e in enumerate(top) if not (e[3].converged or e[3].n_iter >= settings.local_iter)
            ]
        more = self._local_em(
            cur,
            messages,
            [entries[j][2] for entries, j in carried],
            settings.local_iter,
            fits=[entries[j][3] for entries, j in carried],
        )
        for (entries, j), local in zip(carried, more):
            _, _, move, _, ds, de = entries[j]
            entries[j] = self._ranked(cur, cur_ds, move, local, ds, de)
        short = [e for entries in by_op.values() for e in sorted(entries, key=lambda e: -e[0])[: settings.tries]]
        return sorted(short, key=lambda e: -e[0])

    def _on_time(self) -> None:
        """Raise :class:`Cancelled` when cancelled, :class:`_OutOfTime` past the time limit."""
        self.clock.check()
        if self.clock.out_of_time():
            raise _OutOfTime

    def _local_em(self, cur: _Position, messages: Messages, moves: list, max_iter: int, *, seeds=(), fits=()) -> list:
        """Local EM of ``moves`` on the workers (from the candidates' starts, or carried on from ``fits``),
        in batches that leave room to stop at the time limit; their seconds counted and each reported."""
        settings, workers = self.settings, self.workers
        size = 1 if workers.inline else max(1, -(-len(moves) // (BATCHES_PER_WORKER * workers.count)))
        tasks = [
            LocalTask(
                cur.key,
                cur.em.params,
                tuple(moves[lo : lo + size]),
                max_iter,
                settings.local_tol,
                settings.local_starts,
                tuple(seeds[lo : lo + size]),
                tuple(fits[lo : lo + size]),
                self.em.prior,
                messages if workers.inline else None,
            )
            for lo in range(0, len(moves), size)
        ]
        out: list = []
        for lo in range(0, len(tasks), workers.count):
            self._on_time()
            t = self.clock.now()
            with self.spending("local EM"):
                done = workers.map(local_task, tasks[lo : lo + workers.count])
            self.clocks["local"] += self.clock.now() - t
            for batch in done:
                out += batch
                if not fits:
                    self.clocks["candidates"] += len(batch)
                    for move in moves[len(out) - len(batch) : len(out)]:
                        self.report(f"candidate {move.operator}", cur)
        return out

    def _ranked(self, cur: _Position, cur_ds: int, move, local: LocalFit, ds: int, de: int) -> tuple:
        """``(rank, gain, move, local, ds, de)``: the local score's gain, and for an expansion that gains, EAST's
        improvement ratio (gain per added parameter) as its rank."""
        gain = self.local_score(local, ds, de) - cur.score
        rank = gain / max(1, ds - cur_ds) if move.operator in EXPANSION and gain > 0 else gain
        return rank, gain, move, local, ds, de

    def refit_best(self, cur: _Position, shortlist: list, downhill: list) -> _Position | None:
        """Refit the shortlist by full EM in its order; the first that wins against ``cur`` under the one tie
        rule, or ``None``. Those that lose go to ``downhill`` as ``(score, move, full, local, ds, de)``. With
        several workers the next of them are refit side by side, and the results read in the same order."""
        cur_ds = cur.dims.dims(cur.model)[0]
        width = self.workers.count
        for lo in range(0, len(shortlist), width):
            batch = shortlist[lo : lo + width]
            fulls = self.refits([(move.model, local.params) for _, _, move, local, _, _ in batch])
            for (_, _, move, local, ds, de), full in zip(batch, fulls):
                value = self.scored(full, ds, de)
                if best_index([cur.score, value], [cur_ds, ds], self.data.n_rows) != 1:
                    downhill.append((value, move, full, local, ds, de))
                    continue
                if not full.converged:  # finish the winner's fit at the full tolerance (from where it is)
                    full = self.em_fit(move.model, full.params, self.em.max_iter)
                    value = self.scored(full, ds, de)
                return self.moved_to(cur, move.operator, move, full, local, value, ds, de)
        return None

    def refits(self, pairs: list) -> list[EMResult]:
        """Full EM of each ``(model, init)`` for at most ``screen_iter`` E-steps: here (stopping at the time
        limit) when the workers are this process, else on the workers."""
        self._on_time()
        if self.workers.inline:
            return [self.em_fit(model, init, self.settings.screen_iter) for model, init in pairs]
        settings = replace(self.em, restarts=0, max_iter=self.settings.screen_iter)
        t = self.clock.now()
        with self.spending("refits"):
            fulls = self.workers.map(refit_task, [RefitTask(model, init, settings) for model, init in pairs])
        self.clocks["full"] += self.clock.now() - t
        self.clocks["refits"] += len(pairs)
        return fulls

    def moved_to(
        self, cur: _Position, operator: str, move, full: EMResult, local: LocalFit, value, ds, de
    ) -> _Position:
        text = move.text if operator == move.operator else f"{move.operator}: {move.text}"
        step = Step(operator, text, move.model, value, value - cur.score, full.loglik, local.loglik, ds, de)
        return self.position(move.model, full, value, cur.path + (step,))

    def better(self, a: _Position, b: _Position) -> bool:
        """``a`` scores higher than ``b`` beyond a tie (perhaps the same model, better fitted: an escape can
        come back to it by another path, with EM in a higher optimum)."""
        return a.score > b.score + self.tie

    def climb(self, cur: _Position, visited: set) -> tuple[_Position, list]:
        """EAST's phases (adjustment and simplification first, they never add parameters; then expansion;
        then the node split, :data:`LAST_RESORT`) until no candidate wins. In each phase the candidates whose
        local score wins are refit first; only when none of any phase wins are those of negative local score
        refit (their local score may mislead). Returns the end and the refit candidates that lost there,
        ``(score, move, full, local, ds, de)``; :class:`_OutOfTime` carries nothing, the caller keeps its best."""
        visited.add(cur.model)
        tie = self.tie
        while True:
            moved, shortlists, downhill = None, [], []
            for ops in self.phases:
                if ops:
                    shortlists.append(self.screen(cur, ops, visited))
                    moved = self.refit_best(cur, [e for e in shortlists[-1] if e[1] > -tie], downhill)
                    if moved is not None:
                        break
            if moved is None:
                moved = self.refit_best(cur, [e for short in shortlists for e in short if e[1] <= -tie], downhill)
            if moved is None:
                return cur, downhill
            cur = moved
            visited.add(cur.model)
            if self.better(cur, self.best):
                self.best = cur
            self.report(f"accepted {cur.path[-1].operator}", cur)

    def escape(self, cur: _Position, downhill: list) -> _Position:
        """The next start out of the optimum ``cur``: its least bad losing neighbour by full EM, removed from
        ``downhill`` (a step with operator :data:`ESCAPE`)."""
        self._escaping = True  # every climb after the first leaves an optimum
        value, move, full, local, ds, de = downhill.pop(max(range(len(downhill)), key=lambda i: downhill[i][0]))
        return self.moved_to(cur, ESCAPE, move, full, local, value, ds, de)

    def fit_end(self, first: FitResult) -> FitResult:
        """The best model's fit, scored: the search ends at a fit it made at the full tolerance (``first``
        when that is the start's); on time only scored (no more EM)."""
        end = self.best
        if end.em is first.em:
            return first
        settings = replace(self.em, restarts=0, max_iter=0 if self.stopped == "max_time" else self.em.max_iter)
        return self._timed(
            False, fit, self.data, end.model, settings, init=end.em.params, warn=False, cancel=self.cancel
        )

    def run_rounds(self, result: LearnedStructure) -> LearnedStructure:
        """The rounds after a converged search (:func:`start_again`), joined to its result."""
        if result.stopped != "converged" or not self.round_seeds:
            return result
        max_time = self.settings.max_time
        progress = self.progress
        after = start_again(
            self.data,
            result.model,
            result.fit.score(self.score),
            seeds=self.round_seeds,
            settings=replace(self.settings, max_time=None if max_time is None else max_time - result.seconds),
            em=self.em,
            progress=None
            if progress is None
            else _counted_on(progress, len(result.steps), result.candidates, result.seconds),
            cancel=self.cancel,
            workers=self.workers,
        )
        return _joined(result, after, self.clock.elapsed())

    def run(self) -> LearnedStructure:
        """The whole search: the start, the climbs and escapes, the end's fit and the rounds after it."""
        self.workers = self._given_workers or Workers(self.settings.execution, shared=self.data)
        try:
            return self._run()
        finally:
            if self._given_workers is None:
                self.workers.close()

    def _run(self) -> LearnedStructure:
        with self.spending("start"):
            first = self.fit_start()
        self.best = self.position(self.start_model, first.em, first.score(self.score), ())
        self.report("start")
        try:
            if self.stopped == "max_time":
                raise _OutOfTime
            if self.again_from is not None and abs(self.best.score - self.again_from) <= self.tie:
                raise _SameOptimum
            climb_and_escape(self.best, self.climb, self.escape, self.better, self.settings.escapes)
        except _OutOfTime:
            self.stopped = "max_time"
        except _SameOptimum:
            pass
        except Cancelled:
            self.clock.check()
            self.stopped = "max_time"
        self.clock.check()
        self._escaping = False
        with self.spending("end"):
            end = self.fit_end(first)
        result = LearnedStructure(
            fit=end,
            score=self.score,
            start=first,
            steps=self.best.path,
            candidates=self.clocks["candidates"],
            local_em_seconds=self.clocks["local"],
            full_em_seconds=self.clocks["full"],
            local_refits=self.clocks["refits"],
            seconds=self.clock.elapsed(),
            stopped=self.stopped,
            columns={leaf: col for leaf, col in self.columns.items() if leaf != col},
            costs=dict(self.costs),
        )
        result = self.run_rounds(result)
        if self.progress is not None:
            self.progress(
                StructureProgress(
                    result.model,
                    result.fit.score(self.score),
                    len(result.steps),
                    result.candidates,
                    result.seconds,  # what a round after this one counts on from
                    "done",
                    self.settings.max_time,
                )
            )
        return result


def learn_structure(
    dataset: Any,
    settings: SearchSettings | None = None,
    *,
    em: EMSettings | None = None,
    mapping: Mapping[str, str] | None = None,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
    **options: Any,
) -> LearnedStructure:
    """Learn an HLC model (tree and cardinalities) from ``dataset`` by EAST-style search (:class:`StructureSearch`).

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset` or pandas DataFrame; every column is a leaf,
        named after the column (or as ``mapping``, leaf -> column, says).
    settings, em, options:
        How the search runs (:class:`SearchSettings`: the score, the start, the operators, the time limit,
        the candidates refit per step, escapes, local EM, rounds) and how EM runs (:class:`effdim.EMSettings`:
        its ``restarts`` random starts fit the start model; its ``tol`` and ``max_iter`` govern the start and
        final fits and the refit of each accepted move; its ``cs_prior`` is the prior of CS and CS+).
        ``options`` replace single fields of either (``score="bic", restarts=3``).
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
    search, em = split_options(settings, em, options)
    data, columns = _named_dataset(dataset, mapping)
    return StructureSearch(data, search, em, columns=columns, progress=progress, cancel=cancel).run()


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
    settings: SearchSettings | None = None,
    em: EMSettings | None = None,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
    workers: Workers | None = None,
    **options: Any,
) -> Rounds:
    """Searches started again from the end of a search, ``model`` scoring ``value``: each a new
    :class:`StructureSearch` (``rounds=0``) from the end before it, seeded by the next of ``seeds``, with
    the structure fitted again by EM from fresh random starts and no move barred as visited. A local optimum
    of one search need not be one of the next: its EM optimum, and so its candidates' local fits, may differ.

    Goes on while a round ends higher by more than the tie tolerance, at most ``len(seeds)`` rounds, within
    the settings' ``max_time`` seconds for all. ``settings``, ``em`` and ``options`` as :func:`learn_structure`'s;
    ``workers`` those of the search before (else each round starts its own).
    """
    search, em = split_options(settings, em, options)
    data = _named_dataset(dataset, None)[0]
    tie = TIE_TOLERANCE * data.n_rows
    gained: list[LearnedStructure] = []
    run: list[LearnedStructure] = []
    cut = False
    for seed in seeds:
        seconds = sum(r.seconds for r in run)
        left = None if search.max_time is None else search.max_time - seconds
        if left is not None and left <= 0:
            cut = True
            break
        shown = None
        if progress is not None:
            shown = _counted_on(
                progress,
                sum(len(r.steps) for r in gained),
                sum(r.candidates for r in gained),
                seconds,
                phase=f"round {len(gained) + 2}: ",
                best=(model, value),
            )
        again = StructureSearch(
            data,
            replace(search, start=model, max_time=left, rounds=0),
            em.with_seed(seed),
            progress=shown,
            cancel=cancel,
            again_from=value,
            workers=workers,
        ).run()
        run.append(again)
        cut = again.stopped == "max_time"
        if again.fit.score(search.score) <= value + tie:
            break
        gained.append(again)
        model, value = again.model, again.fit.score(search.score)
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
        costs={part: sum(r.costs.get(part, 0.0) for r in run) for part in COSTS},
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
    """``progress`` for a search that follows others: its steps, candidates and seconds counted on from theirs
    (its time limit too: it is what the searches before left of theirs), its phase prefixed with ``phase``, and,
    while its own score is not above it, the ``best`` model and score so far shown instead (a round starts from
    a fresh fit of that model, which may score lower)."""

    def shifted(p: StructureProgress) -> Any:
        shown = {} if best is None or p.score > best[1] else {"model": best[0], "score": best[1]}
        return progress(
            replace(
                p,
                steps=p.steps + steps,
                candidates=p.candidates + candidates,
                elapsed=p.elapsed + seconds,
                phase=phase + p.phase,
                max_time=None if p.max_time is None else p.max_time + seconds,
                **shown,
            )
        )

    return shifted


def _joined(first: LearnedStructure, after: Rounds, seconds: float) -> LearnedStructure:
    """One result for a search and the rounds after it: the fit of the last round that ended higher, the steps
    of the search and of those rounds, the cost (candidates, EM seconds, refits) of the search and of every
    round run, and ``seconds`` in all."""
    kept = [first, *after.gained]
    costs = {part: first.costs.get(part, 0.0) + after.costs.get(part, 0.0) for part in COSTS}
    costs["rounds"] = sum(after.costs.get(part, 0.0) for part in COSTS if part not in ("escapes", "rounds"))
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
        costs=costs,
    )
