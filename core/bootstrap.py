"""Parametric bootstrap: the p-value of G-squared, and the bootstrap likelihood-ratio test.

Both draw ``B`` data sets of the observed size from a fitted model
(:func:`effdim.distribution.sample`), refit, and compare a statistic with its
value on the real data; ``p = (1 + #{T_b >= T}) / (B + 1)`` (Davison &
Hinkley 1997, Section 4.2), so ``p`` is never 0.

* :func:`bootstrap_g2` -- ``T = G2`` of the fitted model (:mod:`effdim.diagnostics`):
  the reference distribution for sparse tables, where the chi-square
  approximation fails. Replicates have the number of complete rows and no
  missing cells, like the table ``G2`` is computed on.
* :func:`blrt` -- McLachlan (1987), Nylund, Asparouhov & Muthen (2007), Mplus
  TECH14, StepMix ``blrt``: ``T = LR = 2 (LL_k - LL_{k-1})`` for ``k`` against
  ``k - 1`` states of one hidden node, drawn from the ``k - 1`` fit. The
  ``k - 1`` refit of a replicate starts from the parameters it was drawn from
  alone (Mplus TECH14's default ``LRTSTARTS = 0 0 20 5``: no random starts
  for the ``k - 1`` class model, whose estimates are its start); the
  ``k``-state refit from the settings' random starts (with one start a local
  optimum biases the test; Nylund et al. 2007) and from the ``k - 1`` refit
  with each of its states in turn split in two (:func:`effdim.nested.split_state`;
  docs/theory.md, section 8), so ``LR_b`` cannot go negative through a poor
  local optimum and the refit searches at least as well as the fit to the data.
* Sequential stopping (``stop_after = h``; Besag & Clifford 1991,
  Biometrika 78(2), 301-304): a test stops drawing once ``h`` replicates
  reach the data's statistic, at the ``l``-th replicate, and reports
  ``p = h / l``; a test that never gets there draws all ``B`` and reports
  the fixed-``B`` p. Both are valid p-values. With ``h >= alpha (B + 1)``
  the decision at level ``alpha`` is the fixed-``B`` test's (a stopped test
  has ``p > alpha`` either way): only tests that are clearly not significant
  stop early. Which replicates count is fixed by their seeds, never by which
  worker finished first, so a stopped test repeats with its seed.

Replicate refits converge on the log-likelihood alone (``param_tol = None``,
:class:`effdim.EMSettings`): the statistics need the log-likelihoods, not
the parameters.
  :func:`blrt_fits` tests two fits a sweep already has, :func:`blrt_sweep`
  every ``k`` of a sweep against ``k - 1`` in one run (the class-enumeration
  table's BLRT column, :mod:`effdim.enumeration`), and :func:`blrt_plan` /
  :meth:`BLRTPlan.chunks` / :meth:`BLRTPlan.result` split a test into jobs
  for a caller that runs them itself (the dashboard's job workers).

Replicates run in chunks as jobs of the engine's executor
(:func:`effdim.executor.run_each`; where, by an :class:`effdim.executor.Execution`):
local processes (default), this process, or a Dask cluster. ``progress(done,
total)`` is called as replicates finish and ``cancel`` (a
``threading.Event``) stops the run with :class:`effdim.em.Cancelled`,
checked whenever a chunk finishes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .em import Cancelled
from .errors import EffdimError, InvalidArgument
from .executor import Execution, run_each
from .settings import EMSettings
from .validation import as_model, as_seed, check_int

__all__ = [
    "BootstrapResult",
    "BootstrapError",
    "BLRTPlan",
    "bootstrap_g2",
    "blrt",
    "blrt_fits",
    "blrt_plan",
    "blrt_sweep",
    "bootstrap_job",
]

#: Replicates per job: few enough for responsive progress and cancel, enough to hide the job overhead.
CHUNK = 10
#: A replicate within this of the data's statistic counts as reaching it (rounding in the refits).
TIES = 1e-9


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap test: the ``statistic`` on the data, its ``replicates``, the ``p_value``.

    ``planned``: the replicates asked for (``None``: all of them were drawn);
    ``stop_after``: the sequential rule's ``h`` (module docstring; ``None``:
    a fixed number of replicates). A test that stopped early has fewer
    ``replicates`` than ``planned``.
    """

    statistic: float
    replicates: np.ndarray = field(repr=False)
    p_value: float
    test: str
    null_model: str
    alternative: str | None = None
    planned: int | None = None
    stop_after: int | None = None

    @property
    def B(self) -> int:
        """The replicates drawn."""
        return int(self.replicates.size)

    @property
    def stopped_early(self) -> bool:
        return self.planned is not None and self.B < self.planned

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "B": self.B,
            "planned_B": self.planned if self.planned is not None else self.B,
            "stop_after": self.stop_after,
            "null_model": self.null_model,
            "alternative": self.alternative,
        }


def p_value(statistic: float, replicates: np.ndarray) -> float:
    """``(1 + #{T_b >= T}) / (B + 1)``."""
    return float((1 + np.sum(np.asarray(replicates) >= statistic - TIES)) / (len(replicates) + 1))


def stopping_point(statistic: float, replicates: Any, stop_after: int | None) -> int | None:
    """How many of ``replicates`` (in seed order) the sequential test uses: up to and including the one
    that makes ``stop_after`` reach ``statistic`` (module docstring); ``None`` if they never do."""
    if stop_after is None:
        return None
    reached = np.flatnonzero(np.asarray(replicates, dtype=float) >= statistic - TIES)
    return int(reached[stop_after - 1]) + 1 if reached.size >= stop_after else None


def sequential_p_value(statistic: float, replicates: Any, stop_after: int | None) -> tuple[float, np.ndarray]:
    """The p-value and the replicates it rests on: ``h / l`` and the first ``l`` where ``h = stop_after``
    of them reach ``statistic`` (Besag & Clifford 1991); else :func:`p_value` of them all."""
    reps = np.asarray(replicates, dtype=float)
    used = stopping_point(statistic, reps, stop_after)
    if used is None:
        return p_value(statistic, reps), reps
    return stop_after / used, reps[:used]


# ----------------------------------------------------------------------- the job
def bootstrap_job(config: dict) -> dict:
    """One chunk of replicates (a job of :func:`effdim.experiments.runner.run_jobs`; JSON in and out).

    ``config``: ``null`` (model notation) and ``params`` (its CPTs as lists)
    to sample from, ``n`` rows, ``seeds``, ``em`` (EM settings), ``test``
    (``"g2"`` or ``"blrt"``), and for ``"blrt"`` the ``node`` and ``k`` of the
    alternative. Returns ``{"values": [T_b, ...]}``.
    """
    from .diagnostics import fit_statistics
    from .distribution import Parameters, sample
    from .em import fit_em
    from .nested import split_state
    from .notation import parse_model
    from .scores import model_dimensions

    null = parse_model(config["null"])
    params = Parameters(null, {k: np.asarray(v) for k, v in config["params"].items()})
    em = {**config["em"], "param_tol": None}  # the statistics need log-likelihoods, not parameters
    values = []
    for seed in config["seeds"]:
        rng = as_seed(seed)
        data = sample(params, int(config["n"]), rng)
        settings = EMSettings(**em, seed=rng)
        if config["test"] == "g2":
            small = fit_em(data, null, settings)
            ds, de = model_dimensions(null)
            values.append(fit_statistics(small.params, data, ds=ds, de=de).g2)
            continue
        small = fit_em(data, null, EMSettings.of(settings, restarts=0), init=[params])
        node = config["node"]
        alt = null.with_card(node, int(config["k"]))
        splits = [split_state(small.params, node, h) for h in range(null.card(node))]
        big = fit_em(data, alt, settings, init=splits)
        values.append(max(0.0, 2.0 * (big.loglik - small.loglik)))
    return {"values": values}


# -------------------------------------------------------------------- the driver
class BootstrapError(EffdimError, RuntimeError):
    """Replicates failed to compute (the message gives the first failure)."""


def _check_B(B: Any) -> int:
    return check_int("the number of bootstrap replicates B", B, low=1)


def _seeds(seed: Any, B: int) -> list[int]:
    """``B`` replicate seeds from ``seed``, JSON-ready: one stream per replicate."""
    return [int(x) for x in as_seed(seed).integers(2**63, size=B)]


def _chunks(config: dict, seeds: list[int]) -> list[dict]:
    return [{**config, "seeds": seeds[i : i + CHUNK]} for i in range(0, len(seeds), CHUNK)]


def _run(
    tests: list[list[dict]], *, progress, cancel, execution, stops: list[tuple[float, int | None]] | None = None
) -> list[np.ndarray]:
    """Run the chunks of every test (lists of :func:`bootstrap_job` configurations) in one go, so every
    worker stays busy to the end; each test's replicates in the order of its seeds.

    ``stops``: per test, its statistic and sequential ``h`` (``None``: all
    replicates); a test's chunks after the one where it stops are not run,
    and its replicates end at the stopping point (:func:`stopping_point`).
    Chunks are handed out in turn across the tests, so each test's early
    chunks finish first.
    """
    stops = stops or [(0.0, None)] * len(tests)
    sizes = [[len(chunk["seeds"]) for chunk in chunks] for chunks in tests]
    configs = {f"{t}.{c}": chunks[c] for t, chunks in enumerate(tests) for c in range(len(chunks))}
    order = [f"{t}.{c}" for c in range(max(map(len, tests), default=0)) for t in range(len(tests)) if c < len(tests[t])]
    values: dict[str, list[float]] = {}
    last: list[int | None] = [None] * len(tests)  # the chunk where each test stopped
    failures: list[str] = []

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("bootstrap cancelled")

    def decide(t: int) -> None:
        statistic, h = stops[t]
        done = []
        for c in range(len(tests[t])):
            if f"{t}.{c}" not in values:
                break
            done += values[f"{t}.{c}"]
            if stopping_point(statistic, done, h) is not None:
                last[t] = c
                return

    def wanted(t: int, c: int) -> bool:
        return last[t] is None or c <= last[t]

    def report() -> None:
        if progress is not None:
            total = sum(n for t, ns in enumerate(sizes) for c, n in enumerate(ns) if wanted(t, c))
            done = sum(len(v) for key, v in values.items() if wanted(*map(int, key.split("."))))
            progress(done, total)

    def finish(key: str, result: dict, seconds: float) -> None:
        values[key] = result["values"]
        decide(int(key.split(".")[0]))
        check_cancel()
        report()

    def fail(key: str, err: BaseException) -> None:
        failures.append(f"{type(err).__name__}: {err}")

    check_cancel()
    report()
    run_each(
        bootstrap_job, configs, order, finish, fail, execution, skip=lambda key: not wanted(*map(int, key.split(".")))
    )
    if failures:
        raise BootstrapError(f"{len(failures)} of {len(configs)} chunks of replicates failed; first: {failures[0]}")
    out = []
    for t, chunks in enumerate(tests):
        reps = np.array([v for c in range(len(chunks)) if wanted(t, c) for v in values[f"{t}.{c}"]], dtype=float)
        used = stopping_point(stops[t][0], reps, stops[t][1])
        out.append(reps if used is None else reps[:used])
    return out


def _config(result: Any, test: str, settings: EMSettings, n: float) -> dict:
    from .notation import format_model

    if not float(n).is_integer():
        raise InvalidArgument("the parametric bootstrap needs whole-number counts (the data have weighted rows)")
    params = result.params
    return {
        "test": test,
        "null": format_model(params.model),
        "params": {k: np.asarray(v).tolist() for k, v in params.cpts.items()},
        "n": int(n),
        "em": {
            "restarts": settings.restarts,
            "tol": settings.tol,
            "max_iter": settings.max_iter,
            "prior": settings.prior,
        },
    }


def bootstrap_g2(
    fitted: Any,
    B: int = 100,
    settings: EMSettings | None = None,
    *,
    execution: Execution | None = None,
    progress: Callable | None = None,
    cancel: Any = None,
    **options: Any,
) -> BootstrapResult:
    """Parametric bootstrap p-value of ``G2`` for a :class:`effdim.FitResult` (module docstring).

    Replicates are refitted as ``settings`` say (:class:`effdim.EMSettings`;
    ``options`` replace single fields; its seed draws the replicates) and
    run where ``execution`` says (:class:`effdim.executor.Execution`).
    """
    B = _check_B(B)
    settings = EMSettings.of(settings, **options)
    stats = fitted.fit_statistics()
    config = _config(fitted, "g2", settings, stats.n_used)
    (reps,) = _run([_chunks(config, _seeds(settings.seed, B))], progress=progress, cancel=cancel, execution=execution)
    return BootstrapResult(stats.g2, reps, p_value(stats.g2, reps), "g2", config["null"])


def blrt(
    data: Any,
    model: Any,
    node: str | None = None,
    B: int = 100,
    settings: EMSettings | None = None,
    *,
    mapping: dict | None = None,
    execution: Execution | None = None,
    progress: Callable | None = None,
    cancel: Any = None,
    stop_after: int | None = None,
    **options: Any,
) -> BootstrapResult:
    """Bootstrap likelihood-ratio test of ``model`` (``k`` states of hidden ``node``, default the
    root) against the same model with ``k - 1`` states (module docstring).

    Fits both models to ``data`` (a Dataset or DataFrame) as ``settings``
    say (:class:`effdim.EMSettings`; ``options`` replace single fields), the
    ``k``-state one also from the split ``k - 1`` fit, then runs ``B``
    replicates drawn from the ``k - 1`` fit where ``execution`` says
    (:class:`effdim.executor.Execution`); ``stop_after``: the sequential
    rule's ``h`` (module docstring; ``None``: all ``B``).
    """
    from .fitting import fit

    B = _check_B(B)
    model = as_model(model)
    node = model.root if node is None else node
    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
    k = model.card(node)
    if k < 2:
        raise InvalidArgument(f"the test compares k - 1 with k states of {node}; {node} has {k}")
    settings = EMSettings.of(settings, **options)
    rng = as_seed(settings.seed)
    small = fit(data, model.with_card(node, k - 1), settings.with_seed(rng), mapping=mapping)
    big = fit(data, model, settings.with_seed(rng), mapping=mapping, init=small)
    plan = blrt_plan(small, big, settings)
    return _run_plans([plan], [rng.integers(2**63)], B, stop_after, progress, cancel, execution)[0]


@dataclass(frozen=True)
class BLRTPlan:
    """One bootstrap LRT of two fits, ready to run: the observed ``statistic`` and what a replicate needs.

    :meth:`chunks` gives the :func:`bootstrap_job` configurations of ``B``
    replicates (:data:`CHUNK` each), :meth:`result` turns their values into
    the :class:`BootstrapResult`.
    """

    k: int
    statistic: float
    config: dict = field(repr=False)
    null_model: str
    alternative: str

    def chunks(self, seed: Any, B: int) -> list[dict]:
        """The jobs of ``B`` replicates whose streams come from ``seed``."""
        return _chunks(self.config, _seeds(seed, _check_B(B)))

    def result(self, replicates: Any, planned: int | None = None, stop_after: int | None = None) -> BootstrapResult:
        """The test from its replicates' values: in any order for a fixed ``B``; in seed order (up to
        or beyond the stopping point) with the sequential rule's ``stop_after`` (module docstring)."""
        p, reps = sequential_p_value(self.statistic, replicates, stop_after)
        return BootstrapResult(
            self.statistic, reps, p, "blrt", self.null_model, self.alternative, planned=planned, stop_after=stop_after
        )


def blrt_plan(smaller: Any, larger: Any, settings: EMSettings | None = None, **options: Any) -> BLRTPlan:
    """The bootstrap LRT of ``smaller`` (``k - 1`` states of a hidden node) against ``larger`` (``k``).

    Both are :class:`effdim.FitResult` of the same data whose models differ
    in one hidden node, by one state; replicates are drawn from ``smaller``
    and refitted as ``settings`` say (:class:`effdim.EMSettings`).
    """
    from .nested import grown_node
    from .notation import format_model

    settings = EMSettings.of(settings, **options)
    node = grown_node(smaller.model, larger.model)
    if node is None:
        raise InvalidArgument(
            f"the bootstrap LRT compares k - 1 with k states of one hidden node; {smaller.model} and "
            f"{larger.model} differ otherwise"
        )
    if float(smaller.n) != float(larger.n):
        raise InvalidArgument("the two fits of a bootstrap LRT must be to the same data")
    k = larger.model.card(node)
    config = {**_config(smaller, "blrt", settings, smaller.n), "node": node, "k": k}
    return BLRTPlan(
        k=k,
        statistic=max(0.0, 2.0 * (larger.loglik - smaller.loglik)),
        config=config,
        null_model=format_model(smaller.model),
        alternative=format_model(larger.model),
    )


def blrt_fits(
    smaller: Any,
    larger: Any,
    B: int = 100,
    settings: EMSettings | None = None,
    *,
    execution: Execution | None = None,
    progress: Callable | None = None,
    cancel: Any = None,
    stop_after: int | None = None,
    **options: Any,
) -> BootstrapResult:
    """The bootstrap LRT of two fits a caller already has (:func:`blrt_plan`), ``B`` replicates run where
    ``execution`` says; the settings' seed draws them; ``stop_after``: the sequential rule's ``h``."""
    settings = EMSettings.of(settings, **options)
    plan = blrt_plan(smaller, larger, settings)
    return _run_plans([plan], [settings.seed], B, stop_after, progress, cancel, execution)[0]


def blrt_sweep(
    fits: Any,
    B: int = 100,
    settings: EMSettings | None = None,
    *,
    execution: Execution | None = None,
    progress: Callable | None = None,
    cancel: Any = None,
    stop_after: int | None = None,
    **options: Any,
) -> dict[int, BootstrapResult]:
    """The bootstrap LRT of every ``k`` of a sweep (:func:`effdim.sweep`) against ``k - 1``, by ``k``.

    Every pair of consecutive fits whose cardinalities differ by one is
    tested; all ``B`` replicates of all tests run as one set of jobs, so the
    workers stay busy until the last. ``progress(done, total)`` counts
    replicates over all tests. Each test draws its replicates from its own
    stream of the settings' seed; ``stop_after``: the sequential rule's
    ``h`` (module docstring), each test stopping on its own.
    """
    fits = list(fits)
    B = _check_B(B)
    settings = EMSettings.of(settings, **options)
    plans = [
        blrt_plan(small, large, settings)
        for small, large in zip(fits, fits[1:])
        if large.card is not None and small.card is not None and large.card == small.card + 1
    ]
    if not plans:
        return {}
    streams = as_seed(settings.seed).spawn(len(plans))
    results = _run_plans(plans, streams, B, stop_after, progress, cancel, execution)
    return {plan.k: result for plan, result in zip(plans, results)}


def _check_stop(stop_after: Any) -> int | None:
    if stop_after is None:
        return None
    return check_int("the replicates that reach the data's LR before a test stops", stop_after, low=1)


def _run_plans(plans, seeds, B, stop_after, progress, cancel, execution) -> list[BootstrapResult]:
    """Run the tests of ``plans``, each from its seed, ``B`` replicates or fewer where they stop."""
    B, stop_after = _check_B(B), _check_stop(stop_after)
    tests = [plan.chunks(seed, B) for plan, seed in zip(plans, seeds)]
    stops = [(plan.statistic, stop_after) for plan in plans]
    values = _run(tests, progress=progress, cancel=cancel, execution=execution, stops=stops)
    return [plan.result(reps, planned=B, stop_after=stop_after) for plan, reps in zip(plans, values)]
