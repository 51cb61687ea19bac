"""The EM driver, :func:`fit_em`: arguments, starts, restarts with pruning, the result.

Restarts with pruning (Chickering & Heckerman 1997)
---------------------------------------------------
``restarts`` random starts (every CPT row uniform on the simplex), plus any
given ``init`` starts, follow the schedule of :mod:`effdim.restarts`: run a
few steps together, keep the better half, double the steps, until one start
remains, which then runs to convergence (``docs/theory.md``, section
"8. EM restarts and nested models"). All starts of a stage are computed as
one batch of arrays, so five starts cost little more than one on compressed
data. A larger model grown from a fitted smaller one gets that solution with
one hidden state split in two as an extra start (:mod:`effdim.nested`).

Hidden states are returned in a stable order: every hidden node's states by
decreasing marginal probability, so state 1 (state 0 in code) is the largest
class (:meth:`effdim.distribution.Parameters.size_order`;
:meth:`~effdim.distribution.Parameters.relabeled` reorders them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data import DataError
from ..errors import EffdimError, InvalidArgument
from ..model import HLCModel
from ..restarts import best_starts, restart_schedule
from ..settings import EMSettings
from ..validation import as_model, as_seed
from .design import ModelData
from .iteration import BatchRun
from .memory import check_em_memory
from .result import EMResult, degeneracies, expected_counts
from .state import BatchState, params_from_state, random_starts, state_from_params

__all__ = ["Cancelled", "fit_em", "parameters_identifiable"]


class Cancelled(Exception):
    """Raised when the ``cancel`` event was set; the computation stopped cleanly.

    ``partial``: what was finished before, where the computation has parts (a sweep's fits,
    :func:`effdim.sweep`); ``None`` otherwise.
    """

    partial: list | None = None


def fit_em(
    dataset: Any,
    model: HLCModel | str,
    settings: EMSettings | None = None,
    *,
    init: Any = None,
    mapping: dict[str, str] | None = None,
    cancel: Any = None,
    order_states: bool = True,
    max_bytes: int | None = None,
    **options: Any,
) -> EMResult:
    """Fit ``model`` to ``dataset`` by EM with random restarts and pruning.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset`, a pandas DataFrame, or a
        :class:`ModelData` prepared for ``model`` (reused: cheapest when the
        same data and model are fitted repeatedly).
    model:
        An :class:`~effdim.model.HLCModel` or its notation.
    settings, options:
        How EM runs (:class:`effdim.EMSettings`: starts, seed, tolerances,
        steps, MAP prior, pruning, SQUAREM, the degeneracy flags); ``options``
        replace single fields (``restarts=20``). ``param_tol`` applies only
        where the parameters are identifiable (:func:`parameters_identifiable`):
        where ``de < ds`` they are not unique, EM creeps along the set of
        equivalent fits, and the log-likelihood test alone decides.
    init:
        Optional :class:`~effdim.distribution.Parameters` (or a list of them)
        used as extra starts besides the random ones.
    mapping:
        Leaf -> column mapping for :func:`effdim.data.check_matches_model`.
    cancel:
        A ``threading.Event``; when set, :class:`Cancelled` is raised at the
        next EM step.
    order_states:
        Return every hidden node's states by decreasing share (the default;
        see the module docstring); ``False`` keeps the order EM ended in
        (e.g. the labels of ``init``).
    max_bytes:
        Memory budget of the whole batch of starts (:mod:`effdim.em.memory`;
        default :data:`effdim.limits.DEFAULT_MAX_BYTES`, the budget of the
        rank). Above it :class:`effdim.limits.SizeLimitError` names the
        culprit (a node's states, the distinct patterns or the number of
        starts) before any array the size of the model is allocated.
    """
    model = as_model(model)
    settings = EMSettings.of(settings, **options)
    restarts, seed, tol, param_tol = settings.restarts, settings.seed, settings.tol, settings.param_tol
    prior = settings.prior or 0.0
    agree_tol, mass_tol = settings.agree_tol, settings.mass_tol
    rng = as_seed(seed)
    inits = [] if init is None else list(init) if isinstance(init, (list, tuple)) else [init]
    if not restarts and not inits:
        raise InvalidArgument("EM needs at least one start: restarts >= 1 or an initial estimate")
    if isinstance(dataset, ModelData) and dataset.model == model:
        md = dataset
    else:
        md = ModelData(model, dataset, mapping, max_bytes=max_bytes)
    if md.n_patterns == 0 or not md.n_rows > 0:
        raise DataError("the data have no rows to learn from")
    check_em_memory(model, md.n_patterns, md.radix, restarts + len(inits), max_bytes)
    states = [state_from_params(md, p) for p in inits]
    if restarts:
        states.append(random_starts(md, restarts, rng))
    st = BatchState.stack(states) if len(states) > 1 else states[0]
    S0 = st.S
    tol_abs = -np.inf if tol is None else tol * md.n_rows
    if agree_tol is None:
        agree_tol = max(1e-3, 100.0 * (tol or 0.0) * md.n_rows)
    if mass_tol is None:
        mass_tol = min(1e-3, 1.0 / md.n_rows)

    def check_cancel():
        if cancel is not None and cancel.is_set():
            raise Cancelled("EM cancelled")

    if tol is None or (param_tol is not None and not parameters_identifiable(model)):
        param_tol = None
    run = BatchRun(md, st, prior, tol_abs, settings.max_iter, settings.accelerate, check_cancel, param_tol)
    for stage in restart_schedule(S0, settings.prune_steps, settings.prune):
        run.advance(stage.steps)
        if stage.keep < len(run.ids):
            run.keep(best_starts(run.last_obj[run.ids], stage.keep))
    pos = int(np.argmax(run.last_obj[run.ids]))
    best = int(run.ids[pos])
    best_ll = float(run.last_ll[best])
    n_best = int(np.sum(run.last_ll >= best_ll - agree_tol))
    params = params_from_state(md, run.st, pos)
    counts = expected_counts(md, run.stats, pos)
    degenerate = degeneracies(md, run.st, run.stats.mass, pos, mass_tol, settings.dup_tol)
    result = EMResult(
        model=model,
        params=params,
        loglik=best_ll,
        objective=float(run.last_obj[best]),
        n=md.n_rows,
        n_iter=int(run.n_iter[best]),
        converged=bool(run.converged[best]),
        trace=np.asarray(run.traces[best]),
        start_logliks=run.last_ll.copy(),
        start_iters=run.n_iter.copy(),
        best_start=best,
        n_best=n_best,
        expected_counts=counts,
        degenerate=degenerate,
        prior=prior or None,
        tol=tol if tol is not None else 0.0,
        seed=seed if not isinstance(seed, np.random.Generator) else None,
        coefficients=None if run.st.beta is None else run.st.beta[pos].copy(),
        given_starts=len(inits),
    )
    if order_states:  # every hidden node's states by decreasing share (module docstring)
        for node, order in params.size_order().items():
            result = result.relabeled(node, order)
    return result


def parameters_identifiable(model: HLCModel) -> bool:
    """Whether ``de = ds`` (:func:`effdim.scores.model_dimensions`, cached per model).

    Where ``de < ds`` a ``(ds - de)``-dimensional set of parameters gives the
    same distribution (Kocka & Zhang 2002, Section 2.4), so no test on the
    parameters can settle. A model too large for ``de`` counts as
    identifiable: the stricter test.
    """
    from ..scores import model_dimensions

    try:
        ds, de = model_dimensions(model)
    except EffdimError:
        return True
    return de >= ds
