"""The EM iterations of a batch of starts: plain EM steps or SQUAREM cycles, and when to stop.

By default every iteration is a SQUAREM cycle (Varadhan & Roland 2008;
:mod:`effdim.squarem`): two EM steps, an extrapolation along them kept
inside the simplex, one stabilising EM step, and a fallback to the plain EM
point whenever the extrapolated objective is lower. Models whose effective
dimension is below the standard one have flat directions along which plain
EM crawls; on the Table 2 fits (``benchmarks/engine/bench_em_accuracy.py``) the
share of fits meeting ``tol`` within 1000 steps rose from 13% to 100%.
``accelerate=False`` runs plain EM.

Convergence needs three tests at once (``max_iter`` E-steps stop a start
that has not passed them, reported as not converged):

1. the objective (log-likelihood, plus ``a sum log theta`` under MAP) rose
   by less than ``tol`` per data row (``tol * |D|`` in total) per E-step in
   the last iteration (one step of plain EM, a whole SQUAREM cycle divided
   by its E-steps);
2. the objective's rise still to come is below ``tol * |D|`` too, by EM's
   own rate (:func:`remaining_rise`): a plain EM step's rise measures the
   gap still to close, so where the rises of the first EM step of the last
   ``RATE_WINDOW + 1`` iterations shrink by at most ``q`` per iteration, the
   last iteration's rise ``g`` leaves at most ``g q / (1 - q)`` to come;
3. where ``de = ds``, the parameters are within ``param_tol`` (Euclidean
   distance over every CPT entry) of EM's fixed point, by the estimate of
   linear convergence: an EM step of length ``s`` at contraction rate ``r``
   leaves about ``s / (1 - r)`` to go (:func:`distance_to_fixed_point`).
   ``r`` is the ratio of two successive EM step lengths (within a SQUAREM
   cycle, its two EM steps), taken as the largest of the last
   :data:`RATE_WINDOW` iterations: SQUAREM's extrapolation removes the slow
   direction from the next cycle's steps, so one cycle alone underestimates
   the rate.

Test 1 alone stops where EM crawls. Where ``de < ds`` the rate is close to 1
(0.9973 per step for three classes on the Stouffer-Toby data): a rise per
step below ``tol * |D|`` left up to 700 ``tol * |D|`` (1.5e-3 nats) to
come. On LC 4 of the carcinoma data and LC 3 of gss82 (``tests/data``) it
stopped 6e-5 nats below the optimum with posteriors off by 1.2e-2; test 3
(``param_tol = 1e-6``) brings every fit reported converged within 1e-4 of the
optimum's posteriors and class shares
(``tests/test_em.py::test_converged_fits_have_posteriors_right_to_1e4``).

What "converged" promises, and what it cannot (``tests/test_convergence.py``
continues converged fits of each kind and checks it; ``docs/theory.md``,
section 8):

* every model: the objective within ``tol * |D|`` of the limit EM leads to
  from the fit, where EM's rises shrink geometrically (tests 1-2);
* where ``de = ds``: an LC model's posteriors and class shares within 1e-4
  of that limit, an HLC model's posteriors within
  :data:`HLC_POSTERIOR_BOUND` (test 3);
* where ``de < ds``: the log-likelihood only, which is unique though the
  parameters are not; every score and G2 is a function of it. Where the
  rises shrink more slowly than geometrically EM may still creep up a few
  ``tol * |D|`` (3.1 measured on Figure 2's model with 3,000 rows).

All three tests are local. A start near a saddle point of the likelihood,
where EM's steps shrink before they turn away, passes them and is reported
converged; EM may leave it thousands of steps later for a higher optimum.
The restarts are the guard: :attr:`effdim.em.EMResult.n_best` counts the
starts that agree. The objective never falls;
:attr:`effdim.em.EMResult.trace` records it for the returned start.
"""

from __future__ import annotations

import numpy as np

from ..squarem import adapt_step_max, extrapolate
from .design import ModelData
from .estep import EStepStats, estep
from .mstep import mstep, normalised
from .state import BatchState

__all__ = ["HLC_POSTERIOR_BOUND", "RATE_WINDOW", "BatchRun", "distance_to_fixed_point", "remaining_rise"]

#: EM's contraction rate is taken as the largest of this many recent estimates (one per iteration).
RATE_WINDOW = 4
#: Where de = ds, a converged HLC fit's posteriors are within this of the limit EM leads to (module docstring).
HLC_POSTERIOR_BOUND = 1e-3
#: An EM step's rise below this times the objective is the rounding of a sum of float64 terms, not progress.
ROUNDING = 1e-13


class BatchRun:
    """The EM iterations of a batch of starts, and the bookkeeping :class:`effdim.em.EMResult` reports.

    ``ids`` are the starts still in the batch (pruning removes the others);
    per start (indexed by its original number): EM steps made ``n_iter``,
    the last log-likelihood and objective, ``converged``, ``done`` (converged
    or out of steps), the objective ``traces``, the SQUAREM ``step_max``, and
    for the parameter test the last plain EM step's length ``last_step`` and
    the recent contraction ``rates``, and for the rise still to come the
    ``first_rises`` of the recent iterations (module docstring).

    With ``accelerate`` every iteration is a SQUAREM cycle
    (:mod:`effdim.squarem`): two EM steps, the extrapolated point, one EM
    step from it (stabilisation), and that point's E-step. A result whose
    objective is below the first EM step's is replaced by the second EM step
    (one more E-step), so the objective never falls. ``n_iter`` counts
    E-steps (2 for a cycle that does not extrapolate, 3 for an accepted
    extrapolation, 4 for a rejected one), the work of as many plain EM steps;
    the budget ``max_iter`` is in the same unit, and a start with fewer than
    4 steps left makes plain EM steps.
    """

    def __init__(
        self,
        md: ModelData,
        st: BatchState,
        prior: float,
        tol_abs: float,
        max_iter: int,
        accelerate: bool,
        check_cancel,
        param_tol: float | None = None,
    ):
        S = st.S
        self.md, self.prior, self.tol_abs, self.max_iter = md, prior, tol_abs, max_iter
        self.param_tol = param_tol
        self.last_step = np.full(S, np.inf)  # length of each start's last EM step (plain EM)
        self.rates = np.zeros((S, RATE_WINDOW))  # the last contraction rates of EM, per start (none yet: 0)
        self.first_rises = np.full((S, RATE_WINDOW + 1), np.nan)  # the rises of the last iterations' first EM steps
        self.accelerate, self.check_cancel = accelerate, check_cancel
        self.ids = np.arange(S)
        self.n_iter = np.zeros(S, dtype=int)
        self.step_max = np.ones(S)
        self.converged = np.zeros(S, dtype=bool)
        check_cancel()
        self.st = st
        self.stats = estep(md, st, prior)
        self.last_ll = self.stats.ll.copy()
        self.last_obj = self.stats.obj.copy()
        self.traces: list[list[float]] = [[float(v)] for v in self.stats.obj]
        self.done = self.n_iter >= max_iter

    def keep(self, positions: np.ndarray) -> None:
        """Keep only the starts at ``positions`` of the batch."""
        self.ids = self.ids[positions]
        self.st = self.st.select(positions)
        self.stats = self.stats.select(positions)

    def advance(self, steps: int | None) -> None:
        """Up to ``steps`` more EM steps per start (``None``: until converged or ``max_iter``)."""
        limit = np.full(len(self.ids), self.max_iter)
        if steps is not None:
            limit = np.minimum(limit, self.n_iter[self.ids] + int(steps))
        while True:
            budget = limit - self.n_iter[self.ids]
            active = ~self.done[self.ids] & (budget > 0)
            if not active.any():
                return
            self.check_cancel()
            if self.accelerate:
                self._squarem_cycle(active, budget)
            else:
                st = mstep(self.md, self.st, self.stats, self.prior, active)
                step = st.distance(self.st)
                steps = (self.last_step[self.ids], step)
                self.last_step[self.ids[active]] = step[active]
                self._record(active, st, estep(self.md, st, self.prior), np.ones(len(self.ids), dtype=int), steps)

    def _squarem_cycle(self, active: np.ndarray, budget: np.ndarray) -> None:
        md, prior = self.md, self.prior
        st0, s0 = self.st, self.stats
        st1 = mstep(md, st0, s0, prior, active)
        s1 = estep(md, st1, prior)
        one = active & (budget == 1)
        st2 = mstep(md, st1, s1, prior, active & ~one)
        x, alpha = extrapolate(st0.arrays(), st1.arrays(), st2.arrays(), self.step_max[self.ids])
        extrapolated = active & (budget >= 4) & (alpha > 1)
        # rows of the SQUAREM point sum to 1 only up to rounding, which (a - 1)^2 would amplify cycle after cycle
        st_new = normalised(md, st0.like(x), st2).where(extrapolated, st2)
        if extrapolated.any():  # stabilise with one EM step from the SQUAREM point, as the SQUAREM R package does
            st_new = mstep(md, st_new, estep(md, st_new, prior), prior, extrapolated)
        s_new = estep(md, st_new, prior)
        rejected = extrapolated & ~(s_new.obj >= s1.obj)
        if rejected.any():
            idx = np.flatnonzero(rejected)
            st_new = st2.where(rejected, st_new)
            s_new = s_new.replace(idx, estep(md, st2.select(idx), prior))
        eligible = active & (budget >= 4)
        step_max = self.step_max[self.ids]
        tried = np.where(extrapolated, alpha, 1.0)
        self.step_max[self.ids] = np.where(eligible, adapt_step_max(step_max, tried, ~rejected), step_max)
        used = np.where(one, 1, np.where(rejected, 4, np.where(extrapolated, 3, 2)))
        steps = (st1.distance(st0), np.where(one, np.inf, st2.distance(st1)))
        self._record(active, st_new, s_new, used, steps, middle=np.where(one, np.nan, s1.obj))

    def _record(
        self,
        active: np.ndarray,
        st: BatchState,
        stats: EStepStats,
        used: np.ndarray,
        steps: tuple[np.ndarray, np.ndarray],
        middle: np.ndarray | None = None,
    ) -> None:
        """Move the batch to ``st`` (inactive starts are unchanged in it) and book the ``used`` steps."""
        self.st, self.stats = st, stats
        act = self.ids[active]
        self.n_iter[act] += used[active]
        new_obj = stats.obj[active]
        rise = new_obj - self.last_obj[act]
        mid = middle[active] if middle is not None else np.full(len(act), np.nan)
        for s, m, v in zip(act, mid, new_obj):
            if not np.isnan(m):
                self.traces[s].append(float(m))
            self.traces[s].append(float(v))
        first = np.where(np.isnan(mid), rise, mid - self.last_obj[act])  # the rise of the first plain EM step
        self.last_ll[act] = stats.ll[active]
        self.last_obj[act] = stats.obj[active]
        conv = rise / used[active] < self.tol_abs  # per E-step, as for plain EM
        step, next_step = steps[0][active], steps[1][active]
        measured = np.isfinite(next_step)  # a single EM step (the last of a budget) measures no rate
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(step > 0, next_step / step, 0.0)
        window = np.concatenate([self.rates[act, 1:], rate[:, None]], axis=1)
        self.rates[act] = np.where(measured[:, None], window, self.rates[act])
        slowest = self.rates[act].max(axis=1)
        first = np.where(first <= ROUNDING * np.abs(new_obj), 0.0, first)
        self.first_rises[act] = np.concatenate([self.first_rises[act, 1:], first[:, None]], axis=1)
        conv &= remaining_rise(self.first_rises[act], rise) < self.tol_abs
        if self.param_tol is not None:
            conv &= measured & (distance_to_fixed_point(next_step, slowest) < self.param_tol)
        self.converged[act[conv]] = True
        self.done[act] = conv | (self.n_iter[act] >= self.max_iter)


def distance_to_fixed_point(step: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Estimated distance to EM's fixed point from where an EM ``step`` began.

    EM converges linearly: near the fixed point each step is ``rate`` times
    the one before, so the remaining steps sum to ``step / (1 - rate)``.
    Infinite where the steps do not shrink.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rate < 1, step / (1 - rate), np.inf)


def remaining_rise(first_rises: np.ndarray, rise: np.ndarray) -> np.ndarray:
    """Estimated rise of the objective still to come, per start, after an iteration that rose by ``rise``.

    ``first_rises`` holds, per start (rows), the rises of the first plain EM
    step of its last iterations, oldest first (NaN: no iteration yet; 0: the
    step rose by no more than the objective's rounding). A plain EM step's
    rise measures the gap still to close; where it shrinks by at most ``q``
    per iteration (the largest ratio of successive rises), the iterations'
    rises to come sum to at most ``rise * q / (1 - q)``. Infinite where the
    rises do not shrink or are not yet known; 0 where the last was 0.

    >>> remaining_rise(np.array([[8.0, 4.0, 2.0], [4.0, 3.0, 3.0], [1.0, 1.0, 0.0]]), np.array([2.0, 3.0, 0.0]))
    array([ 2., inf,  0.])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = first_rises[:, 1:] / first_rises[:, :-1]
        q = np.where(np.isnan(ratios), np.inf, ratios).max(axis=1)
        tail = np.where(q < 1, rise * q / (1 - q), np.inf)
    return np.where(first_rises[:, -1] == 0, 0.0, tail)
