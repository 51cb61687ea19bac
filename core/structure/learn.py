"""The search itself: EAST's phases, acceptance by full EM, and the result (docs/structure.md).

The moves that never add parameters (NR, ND, SD) first, ranked by
restricted score gain; when none is accepted, the expansions (NI, SI),
ranked by EAST's improvement ratio (gain per added parameter). The best
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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..data import DataError, Dataset
from ..em import Cancelled, EMResult, e_step, fit_em
from ..errors import InvalidArgument
from ..model import NAME_PATTERN, HLCModel
from ..notation import format_model
from ..regularity import is_regular
from ..scores import TIE_TOLERANCE, best_index, criterion, score_fit
from ..search import FitResult
from ..validation import as_dataset, as_seed, check_int
from .local_de import LocalDe
from .local_em import LocalCounts, LocalFit, Messages, local_fit
from .moves import EXPANSION, OPERATORS, candidate_moves
from .start import _fresh, islands_model, mutual_information

__all__ = ["Step", "StructureProgress", "StructureResult", "learn_structure"]


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
        return {"operator": self.operator, "move": self.text, "model": format_model(self.model),
                "score": self.score, "gain": self.gain, "loglik": self.loglik,
                "local_loglik": self.local_loglik, "ds": self.ds, "de": self.de}


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
class StructureResult:
    """The outcome of :func:`learn_structure`.

    ``fit`` is the final model fitted and scored (:class:`effdim.search.FitResult`;
    its ``de`` comes from :func:`effdim.dimensions.dimensions`, and agrees with
    the local updates); ``steps`` the accepted moves; ``start`` the start
    model's fit; ``stopped`` why the search ended (``"converged"``: no
    candidate improves the score, or ``"max_time"``).
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

    @property
    def model(self) -> HLCModel:
        return self.fit.model

    def to_json(self) -> dict[str, Any]:
        """``model`` (leaves named after the data columns), ``loglik``, every score, ``ds``, ``de``,
        ``steps`` (each with its ``gain``), and how the search ran."""
        out = self.fit.to_json()
        out.pop("card", None)
        out.update({
            "score": self.score,
            "start": format_model(self.start.model),
            "start_score": self.start.score(self.score),
            "steps": [s.to_json() for s in self.steps],
            "candidates": self.candidates,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
        })
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
            raise DataError(f"column {column!r} cannot name a leaf (use a letter or '_' followed by letters, "
                            "digits, '_', '.', '-'); name its leaf with mapping={leaf: column} "
                            "(--map LEAF=COLUMN in the CLI)")
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise DataError(f"two columns would give leaves named {dup!r}; rename one with a mapping")
    for column, states in zip(dataset.columns, dataset.states):
        if len(states) < 2:
            what = f"a single value ({states[0]!r})" if states else "no values (every cell is missing)"
            raise DataError(f"column {column!r} has {what}; it carries no information about the others: drop it")
    if len(names) < 3:
        raise DataError(f"a latent tree needs at least 3 columns; the data have {len(names)}")
    renamed = Dataset(columns=tuple(names), states=dataset.states, patterns=dataset.patterns,
                      counts=dataset.counts, n_rows=dataset.n_rows, n_missing=dataset.n_missing,
                      source=dataset.source, count_column=dataset.count_column)
    return renamed, dict(zip(names, dataset.columns))


def learn_structure(
    dataset: Any,
    *,
    score: str = "bic+",
    start: str | HLCModel = "islands",
    mapping: Mapping[str, str] | None = None,
    operators: Iterable[str] = OPERATORS,
    restarts: int = 5,
    seed: Any = None,
    tol: float = 1e-8,
    max_iter: int = 1000,
    prior: float | None = None,
    cs_prior: Any = None,
    max_time: float | None = None,
    pairs_per_node: int = 3,
    tries: int = 3,
    local_starts: int = 3,
    local_iter: int = 32,
    local_tol: float = 1e-6,
    progress: Callable[[StructureProgress], Any] | None = None,
    cancel: Any = None,
) -> StructureResult:
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
    restarts, seed, tol, max_iter, prior:
        EM settings (:func:`effdim.em.fit_em`): ``restarts`` random starts fit
        the start model; ``tol`` and ``max_iter`` govern the start and final
        fits and the refit of each accepted move; ``local_tol`` the local EM.
    cs_prior:
        The Dirichlet prior of CS and CS+ (:func:`effdim.scores.score_fit`).
    max_time:
        Seconds after which no new candidate is evaluated; the best model so
        far is refit and returned (``stopped == "max_time"``).
    pairs_per_node, tries:
        ``NI`` pairs tried per hidden node (by mutual information); candidates
        refit per step.
    local_starts, local_iter:
        Starts and EM steps of the restricted (local) EM of each candidate.
    progress:
        Called with a :class:`StructureProgress` after every candidate and step.
    cancel:
        A ``threading.Event``; when set, :class:`Cancelled` is raised.

    Examples
    --------
    Data from a tree with two groups of three leaves; the search finds the groups:

    >>> from effdim import parse_model
    >>> from effdim.distribution import random_parameters, sample
    >>> from effdim.structure import robinson_foulds
    >>> truth = parse_model("2(2,2,2,2(2,2,2))")
    >>> data = sample(random_parameters(truth, 0, concentration=0.3), 5000, 1)
    >>> result = learn_structure(data, score="bic+", seed=0)
    >>> print(result.model, robinson_foulds(result.model, truth), result.stopped)
    H1:2(H2:2(O4:2,O5:2,O6:2),O1:2,O2:2,O3:2) 0 converged
    """
    from ..search import fit

    t0 = time.perf_counter()
    score = criterion(score).name
    for name, value, low in (("pairs_per_node", pairs_per_node, 1), ("tries", tries, 1),
                             ("local_starts", local_starts, 1), ("local_iter", local_iter, 1)):
        check_int(name, value, low=low)
    data, columns = _named_dataset(dataset, mapping)
    operators = tuple(operators)
    bad = [o for o in operators if o not in OPERATORS]
    if bad:
        raise InvalidArgument(f"unknown operator {bad[0]!r}; choose from {', '.join(OPERATORS)}")
    if max_time is not None and not (max_time > 0):
        raise InvalidArgument(f"max_time must be a positive number of seconds, got {max_time!r}")
    rng = as_seed(seed)
    mi = mutual_information(data)
    index = {c: i for i, c in enumerate(data.columns)}
    if isinstance(start, HLCModel):
        current = start
    elif start == "islands":
        current = islands_model(data, mi)
    elif start == "lc":
        current = HLCModel.lc(2, data.cardinalities, hidden_name=_fresh(data.columns, 1)[0],
                              observed_names=data.columns)
    else:
        raise InvalidArgument(f"unknown start {start!r}; choose islands, lc or a model")
    if sorted(current.observed) != sorted(data.columns):
        raise InvalidArgument(f"the start model's leaves ({', '.join(current.observed)}) are not the data's columns "
                         f"({', '.join(data.columns)})")
    if not is_regular(current):
        raise InvalidArgument(f"the start model {current} is not regular; regularize it first")

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("structure search cancelled")

    def out_of_time() -> bool:
        return max_time is not None and time.perf_counter() - t0 > max_time

    em_common = dict(prior=prior, cancel=cancel)
    clock = {"local": 0.0, "full": 0.0, "refits": 0}
    check_cancel()
    t = time.perf_counter()
    # no ConvergenceWarning: the start model is only where the search begins, and whether its EM
    # starts agreed says nothing about the tree it ends with
    first = fit(data, current, restarts=restarts, seed=rng, tol=tol, max_iter=max_iter, cs_prior=cs_prior,
                warn=False, **em_common)
    clock["full"] += time.perf_counter() - t
    dims = LocalDe(current)
    cur_em: EMResult = first.em
    cur_score = first.score(score)
    steps: list[Step] = []
    n_candidates = 0

    def report(phase: str) -> None:
        if progress is not None:
            progress(StructureProgress(current, cur_score, len(steps), n_candidates, time.perf_counter() - t0, phase))

    def scored(em: EMResult, ds: int, de: int) -> float:
        return score_fit(em, ds=ds, de=de, cs_prior=cs_prior).get(score)

    crit = criterion(score)

    def local_score(local: LocalFit, ds: int, de: int) -> float:
        """A penalised likelihood needs only the restricted log-likelihood; CS needs the expected
        counts of every family, so one exact E-step of the candidate."""
        if crit.rate is not None:
            return local.loglik - (de if crit.uses_de else ds) * crit.rate(local.n)
        loglik, counts = e_step(local.params, data)
        counted = LocalCounts(local.model, local.params, loglik, counts, local.n, prior)
        return score_fit(counted, ds=ds, de=de, cs_prior=cs_prior).get(score)

    msgs = [Messages(cur_em.params, data)]  # the current fit's messages, renewed after each accepted move

    report("start")
    stopped = "converged"
    visited = {current}
    tie = TIE_TOLERANCE * data.n_rows

    def evaluate(ops: tuple[str, ...]) -> list:
        """Local EM of every candidate of ``ops``: ``(rank, move, local fit, ds, de)``, best rank first."""
        nonlocal n_candidates
        cur_ds = dims.dims(current)[0]
        out = []
        for move in candidate_moves(current, mi, index, operators=ops, pairs_per_node=pairs_per_node):
            if move.model in visited:  # never go back: ties could otherwise cycle
                continue
            check_cancel()
            if out_of_time():
                break
            ds, de = dims.dims(move.model)
            t = time.perf_counter()
            local = local_fit(data, move, cur_em.params, starts=local_starts, max_iter=local_iter, tol=local_tol,
                              seed=rng, messages=msgs[0], **em_common)
            gain = local_score(local, ds, de) - cur_score
            clock["local"] += time.perf_counter() - t
            n_candidates += 1
            if move.operator in EXPANSION and gain > tie:  # ranked by EAST's improvement ratio
                out.append((gain / max(1, ds - cur_ds), move, local, ds, de))  # gain per added parameter
            elif move.operator not in EXPANSION and gain > -tie:  # a tie goes to the smaller model
                out.append((gain, move, local, ds, de))
            report(f"candidate {move.operator}")
        return sorted(out, key=lambda e: -e[0])

    def accept(ranked: list) -> bool:
        nonlocal current, cur_em, cur_score
        cur_ds = dims.dims(current)[0]
        for _, move, local, ds, de in ranked[:tries]:
            check_cancel()
            t = time.perf_counter()
            full = fit_em(data, move.model, restarts=0, init=local.params, tol=tol, max_iter=max_iter,
                          **em_common)
            clock["full"] += time.perf_counter() - t
            clock["refits"] += 1
            new_score = scored(full, ds, de)
            if best_index([cur_score, new_score], [cur_ds, ds], data.n_rows) == 1:  # the one tie rule
                dims.update(move.model)
                steps.append(Step(move.operator, move.text, move.model, new_score, new_score - cur_score,
                                  full.loglik, local.loglik, ds, de))
                current, cur_em, cur_score = move.model, full, new_score
                msgs[0] = Messages(cur_em.params, data)
                visited.add(current)
                report(f"accepted {move.operator}")
                return True
        return False

    # EAST's phases: adjustment and simplification first (they never add parameters), then expansion
    phases = [tuple(o for o in operators if o not in EXPANSION), tuple(o for o in operators if o in EXPANSION)]
    while True:
        moved = any(ops and accept(evaluate(ops)) for ops in phases)
        if out_of_time():
            stopped = "max_time"
        if not moved or stopped == "max_time":
            break
    check_cancel()
    t = time.perf_counter()
    final = fit(data, current, restarts=0, init=cur_em.params, tol=tol, max_iter=max_iter, cs_prior=cs_prior,
                **em_common)
    clock["full"] += time.perf_counter() - t
    report("done")
    return StructureResult(
        fit=final, score=str(score).lower(), start=first, steps=tuple(steps), candidates=n_candidates,
        local_em_seconds=clock["local"], full_em_seconds=clock["full"], local_refits=clock["refits"],
        seconds=time.perf_counter() - t0, stopped=stopped,
        columns={leaf: col for leaf, col in columns.items() if leaf != col},
    )
