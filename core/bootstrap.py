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
  ``k - 1`` states of one hidden node, drawn from the ``k - 1`` fit. Each
  replicate is refitted with the settings' random starts (with one start a
  local optimum biases the test; Nylund et al. 2007) and more: the ``k - 1``
  refit also starts from the parameters the replicate was drawn from (as
  Mplus TECH14 does), and the ``k``-state refit also from the ``k - 1`` refit
  with each of its states in turn split in two (:func:`effdim.nested.split_state`;
  docs/theory.md, section 8), so ``LR_b`` cannot go negative through a poor
  local optimum and the refits search at least as well as the fits to the data.
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


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap test: the ``statistic`` on the data, its ``replicates``, the ``p_value``."""

    statistic: float
    replicates: np.ndarray = field(repr=False)
    p_value: float
    test: str
    null_model: str
    alternative: str | None = None

    @property
    def B(self) -> int:
        return int(self.replicates.size)

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "B": self.B,
            "null_model": self.null_model,
            "alternative": self.alternative,
        }


def p_value(statistic: float, replicates: np.ndarray) -> float:
    """``(1 + #{T_b >= T}) / (B + 1)``."""
    return float((1 + np.sum(np.asarray(replicates) >= statistic - 1e-9)) / (len(replicates) + 1))


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
    em = config["em"]
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
        small = fit_em(data, null, settings, init=[params])
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


def _run(tests: list[list[dict]], *, progress, cancel, execution) -> list[np.ndarray]:
    """Run the chunks of every test (lists of :func:`bootstrap_job` configurations) in one go, so every
    worker stays busy to the end; each test's replicates in the order of its seeds."""
    configs = {f"{t}.{c}": chunk for t, chunks in enumerate(tests) for c, chunk in enumerate(chunks)}
    total = sum(len(chunk["seeds"]) for chunk in configs.values())
    values: dict[str, list[float]] = {}
    failures: list[str] = []

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("bootstrap cancelled")

    def finish(key: str, result: dict, seconds: float) -> None:
        values[key] = result["values"]
        check_cancel()
        if progress is not None:
            progress(sum(len(v) for v in values.values()), total)

    def fail(key: str, err: BaseException) -> None:
        failures.append(f"{type(err).__name__}: {err}")

    check_cancel()
    if progress is not None:
        progress(0, total)
    run_each(bootstrap_job, configs, list(configs), finish, fail, execution)
    if failures:
        raise BootstrapError(f"{len(failures)} of {len(configs)} chunks of replicates failed; first: {failures[0]}")
    return [
        np.array([v for c in range(len(chunks)) for v in values[f"{t}.{c}"]], dtype=float)
        for t, chunks in enumerate(tests)
    ]


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
    **options: Any,
) -> BootstrapResult:
    """Bootstrap likelihood-ratio test of ``model`` (``k`` states of hidden ``node``, default the
    root) against the same model with ``k - 1`` states (module docstring).

    Fits both models to ``data`` (a Dataset or DataFrame) as ``settings``
    say (:class:`effdim.EMSettings`; ``options`` replace single fields), the
    ``k``-state one also from the split ``k - 1`` fit, then runs ``B``
    replicates drawn from the ``k - 1`` fit where ``execution`` says
    (:class:`effdim.executor.Execution`).
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
    (reps,) = _run([plan.chunks(rng.integers(2**63), B)], progress=progress, cancel=cancel, execution=execution)
    return plan.result(reps)


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

    def result(self, replicates: Any) -> BootstrapResult:
        """The test from its replicates' values (in any order)."""
        reps = np.asarray(replicates, dtype=float)
        return BootstrapResult(
            self.statistic, reps, p_value(self.statistic, reps), "blrt", self.null_model, self.alternative
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
    **options: Any,
) -> BootstrapResult:
    """The bootstrap LRT of two fits a caller already has (:func:`blrt_plan`), ``B`` replicates run where
    ``execution`` says; the settings' seed draws them."""
    settings = EMSettings.of(settings, **options)
    plan = blrt_plan(smaller, larger, settings)
    (reps,) = _run([plan.chunks(settings.seed, B)], progress=progress, cancel=cancel, execution=execution)
    return plan.result(reps)


def blrt_sweep(
    fits: Any,
    B: int = 100,
    settings: EMSettings | None = None,
    *,
    execution: Execution | None = None,
    progress: Callable | None = None,
    cancel: Any = None,
    **options: Any,
) -> dict[int, BootstrapResult]:
    """The bootstrap LRT of every ``k`` of a sweep (:func:`effdim.sweep`) against ``k - 1``, by ``k``.

    Every pair of consecutive fits whose cardinalities differ by one is
    tested; all ``B`` replicates of all tests run as one set of jobs, so the
    workers stay busy until the last. ``progress(done, total)`` counts
    replicates over all tests. Each test draws its replicates from its own
    stream of the settings' seed.
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
    tests = [plan.chunks(stream, B) for plan, stream in zip(plans, streams)]
    values = _run(tests, progress=progress, cancel=cancel, execution=execution)
    return {plan.k: plan.result(reps) for plan, reps in zip(plans, values)}
