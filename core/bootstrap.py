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
  replicate is refitted with several random starts (with one start a local
  optimum biases the test; Nylund et al. 2007), and the ``k``-state refit
  also starts from the ``k - 1`` refit with its largest state split in two
  (:func:`effdim.nested.nested_start`; docs/theory.md, section 8), so
  ``LR_b`` cannot go negative through a poor local optimum.

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

__all__ = ["BootstrapResult", "BootstrapError", "bootstrap_g2", "blrt", "bootstrap_job"]

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
    from .nested import nested_start
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
        small = fit_em(data, null, settings)
        if config["test"] == "g2":
            ds, de = model_dimensions(null)
            values.append(fit_statistics(small.params, data, ds=ds, de=de).g2)
            continue
        alt = null.with_card(config["node"], int(config["k"]))
        big = fit_em(data, alt, settings, init=nested_start(small.params, alt))
        values.append(max(0.0, 2.0 * (big.loglik - small.loglik)))
    return {"values": values}


# -------------------------------------------------------------------- the driver
class BootstrapError(EffdimError, RuntimeError):
    """Replicates failed to compute (the message gives the first failure)."""


def _check_B(B: Any) -> int:
    return check_int("the number of bootstrap replicates B", B, low=1)


def _run(config: dict, B: int, seed: Any, *, progress, cancel, execution) -> np.ndarray:
    seeds = [int(x) for x in as_seed(seed).integers(2**63, size=B)]  # JSON-ready, one stream per replicate
    chunks = [seeds[i : i + CHUNK] for i in range(0, B, CHUNK)]
    configs = {str(i): {**config, "seeds": chunk} for i, chunk in enumerate(chunks)}
    values: dict[str, list[float]] = {}
    failures: list[str] = []

    def check_cancel() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("bootstrap cancelled")

    def finish(key: str, result: dict, seconds: float) -> None:
        values[key] = result["values"]
        check_cancel()
        if progress is not None:
            progress(sum(len(v) for v in values.values()), B)

    def fail(key: str, err: BaseException) -> None:
        failures.append(f"{type(err).__name__}: {err}")

    check_cancel()
    if progress is not None:
        progress(0, B)
    run_each(bootstrap_job, configs, list(configs), finish, fail, execution)
    if failures:
        raise BootstrapError(f"{len(failures)} of {len(configs)} chunks of replicates failed; first: {failures[0]}")
    return np.array([v for key in configs for v in values[key]], dtype=float)


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
    reps = _run(config, B, settings.seed, progress=progress, cancel=cancel, execution=execution)
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
    from .notation import format_model

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
    lr = max(0.0, 2.0 * (big.loglik - small.loglik))
    config = {**_config(small, "blrt", settings, small.n), "node": node, "k": k}
    reps = _run(config, B, rng.integers(2**63), progress=progress, cancel=cancel, execution=execution)
    return BootstrapResult(lr, reps, p_value(lr, reps), "blrt", format_model(small.model), format_model(model))
