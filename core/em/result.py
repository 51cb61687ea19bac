"""What :func:`effdim.em.fit_em` returns: :class:`EMResult`, its :class:`Degeneracy` findings
and the :class:`ConvergenceWarning` it can issue.

The returned parameters are the ones of the final E-step: the expected
counts, the log-likelihood and the parameters belong together, as the
Cheeseman-Stutz score requires (:mod:`effdim.scores`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import HLCModel
from .design import ModelData
from .estep import EStepStats
from .state import BatchState

__all__ = ["ConvergenceWarning", "Degeneracy", "EMResult", "degeneracies", "expected_counts"]


class ConvergenceWarning(UserWarning):
    """EM's best start did not converge, or no other start reached its log-likelihood
    (as scikit-learn's warning of the same name; :meth:`EMResult.convergence_notes`)."""


@dataclass(frozen=True)
class Degeneracy:
    """A degenerate feature of a fitted model.

    ``kind`` is ``"empty"`` (hidden state ``states[0]`` of ``node`` has
    near-zero mass; ``value`` = its probability) or ``"duplicate"`` (states
    ``states[0]`` and ``states[1]`` of ``node`` give near-identical
    distributions to every child; ``value`` = the largest total-variation
    distance between their conditional rows). Either way the model uses fewer
    effective hidden states than its cardinality. ``states`` are 0-based codes;
    the sentence numbers states from 1, as the readable tables do
    (:mod:`effdim.profiles`).
    """

    node: str
    kind: str
    states: tuple[int, ...]
    value: float

    def __str__(self) -> str:
        if self.kind == "empty":
            return f"{self.node}: state {self.states[0] + 1} has near-zero mass ({self.value:.2g})"
        return (
            f"{self.node}: states {self.states[0] + 1} and {self.states[1] + 1} are near-duplicates "
            f"(children's rows differ by at most {self.value:.2g} in total variation)"
        )


@dataclass(frozen=True)
class EMResult:
    """The outcome of :func:`fit_em`.

    Attributes
    ----------
    model, params:
        The model and the estimate ``theta`` (a :class:`effdim.distribution.Parameters`).
    loglik:
        ``log p(D | theta)`` (natural log) at ``params``.
    objective:
        What EM maximised: ``loglik`` (ML) or ``loglik + prior * sum log theta`` (MAP).
    n:
        Sample size ``|D|`` (sum of the pattern counts).
    n_iter, converged:
        E-steps made by the returned start (its EM steps; a SQUAREM cycle
        counts the 2 to 4 E-steps it makes); whether its objective settled
        within ``tol`` (else ``max_iter`` stopped it).
    trace:
        The objective at each point the returned start passed through: the
        start, then every EM step, or per SQUAREM cycle its first EM step and
        the point it moved to (a rejected extrapolation is not a point of the
        path). Never decreasing, up to rounding.
    start_logliks, start_iters:
        Every start's log-likelihood at its last E-step and its number of EM
        steps (pruned starts stop early; the returned start is
        ``best_start``).
    n_best:
        How many starts ended within ``agree_tol`` of the best log-likelihood
        (more than one: the optimum was found repeatedly).
    expected_counts:
        ``N'_ijk`` of the final E-step, keyed by node, shaped like the CPTs:
        ``(|root|,)`` for the root, ``(|parent|, |X|)`` for every other node,
        hidden families included.
    degenerate:
        :class:`Degeneracy` findings (empty or duplicate hidden states).
    coefficients:
        A latent class regression's coefficients (``ModelData.design``):
        ``(p, |root| - 1)``, design column by root state, state 1 the
        reference (:mod:`effdim.mlogit`); the root's table in ``params`` is
        then its mean share over the rows. ``None`` without covariates.
    """

    model: HLCModel
    params: Any
    loglik: float
    objective: float
    n: float
    n_iter: int
    converged: bool
    trace: np.ndarray = field(repr=False)
    start_logliks: np.ndarray = field(repr=False)
    start_iters: np.ndarray = field(repr=False)
    best_start: int
    n_best: int
    expected_counts: dict = field(repr=False)
    degenerate: tuple
    prior: float | None = None
    tol: float = 0.0
    seed: Any = None
    coefficients: np.ndarray | None = field(default=None, repr=False)
    #: Starts given as estimates (``init`` of :func:`effdim.em.fit_em`), before the random ones.
    given_starts: int = 0

    @property
    def restarts(self) -> int:
        """Number of starts: the random ones and the ``given_starts`` (estimates given as starts, such as a
        smaller model's fit with a state split in two in a sweep, :func:`effdim.nested.nested_start`), which come first."""
        return len(self.start_logliks)

    def convergence_notes(self) -> list[str]:
        """Sentences on doubtful convergence (empty when all is well).

        The best start stopped at ``max_iter`` before its log-likelihood
        settled; or, with several starts, it was the only one to reach the
        best log-likelihood (the optimum may not be global: more restarts
        would tell).
        """
        notes = []
        if not self.converged:
            notes.append(
                f"the best EM start stopped after {self.n_iter} steps without converging; "
                "raise the step limit (max_iter, --max-iter)"
            )
        if self.restarts > 1 and self.n_best < 2:
            notes.append(
                f"only 1 of {self.restarts} EM starts reached the best log-likelihood; "
                "more restarts may find a better one"
            )
        return notes

    def warn(self) -> None:
        """Issue a :class:`ConvergenceWarning` for each of :meth:`convergence_notes`."""
        import warnings

        for note in self.convergence_notes():
            warnings.warn(f"{self.model}: {note}", ConvergenceWarning, stacklevel=3)

    def relabeled(self, node: str, order: Any) -> EMResult:
        """The same fit with hidden ``node``'s states renumbered: new state ``i`` is old ``order[i]``.

        Parameters (:meth:`effdim.distribution.Parameters.relabeled`),
        expected counts and the state numbers of :attr:`degenerate` follow.
        """
        from dataclasses import replace

        from ..distribution import permute_states

        params = self.params.relabeled(node, order)  # checks node and order
        new = {int(old): i for i, old in enumerate(order)}
        degenerate = tuple(
            Degeneracy(d.node, d.kind, tuple(sorted(new[s] for s in d.states)), d.value) if d.node == node else d
            for d in self.degenerate
        )
        counts = permute_states(self.model, self.expected_counts, node, list(order))
        coefficients = self.coefficients
        if coefficients is not None and node == self.model.root:  # the new state 1 becomes the reference
            full = np.concatenate([np.zeros((coefficients.shape[0], 1)), coefficients], axis=1)[:, list(order)]
            coefficients = full[:, 1:] - full[:, :1]
        return replace(self, params=params, expected_counts=counts, degenerate=degenerate, coefficients=coefficients)

    def restarts_info(self) -> dict:
        """A JSON-ready summary of the restarts."""
        return {
            "restarts": self.restarts,
            "given_starts": int(self.given_starts),
            "start_logliks": [float(x) for x in self.start_logliks],
            "start_iters": [int(x) for x in self.start_iters],
            "best_start": int(self.best_start),
            "n_best": int(self.n_best),
            "n_iter": int(self.n_iter),
            "converged": bool(self.converged),
        }


def starts_sentence(info: dict) -> str:
    """EM's starts of :meth:`EMResult.restarts_info` in words, what each counts (the CLI, the report and the
    dashboard say it alike): ``"6 starts (5 random, 1 from an earlier fit), the best log-likelihood reached
    by 3"``."""
    starts, given = int(info["restarts"]), int(info.get("given_starts", 0))
    kinds = f" ({starts - given} random, {given} from an earlier fit)" if given else ""
    return f"{starts} start{'s' if starts != 1 else ''}{kinds}, the best log-likelihood reached by {info['n_best']}"


def expected_counts(md: ModelData, stats: EStepStats, s: int) -> dict:
    out = {md.hidden[0]: stats.root[s].copy()}
    for i in range(1, md.n_hidden):
        out[md.hidden[i]] = stats.pair[i][s].copy()
    for j, o in enumerate(md.observed):
        out[o] = stats.leaf[s, *md.leaf_block(j)].copy()
    return out


def degeneracies(md: ModelData, st: BatchState, mass: np.ndarray, s: int, mass_tol: float, dup_tol: float) -> tuple:
    found: list[Degeneracy] = []
    kids_obs: list[list[int]] = [[] for _ in range(md.n_hidden)]
    for j, p in enumerate(md.observed_parent):
        kids_obs[p].append(j)
    total = md.n_rows if md.n_rows > 0 else 1.0
    for i, h in enumerate(md.hidden):
        k = md.hidden_cards[i]
        frac = mass[s, md.hidden_slices[i]] / total
        empty = set(np.flatnonzero(frac < mass_tol).tolist())
        for state in sorted(empty):
            found.append(Degeneracy(h, "empty", (state,), float(frac[state])))
        if k < 2:
            continue
        blocks = [st.theta[c][s] for c in md.hidden_children[i]]  # (k, k_c)
        blocks += [st.leaf[s, *md.leaf_block(j)] for j in kids_obs[i]]
        for x in range(k):
            if x in empty:
                continue
            # total variation between state x's and each later state's conditionals, the largest over the blocks
            # (one row of pairs at a time: memory stays that of one block)
            tv = np.max([0.5 * np.abs(b[x + 1 :] - b[x]).sum(axis=1) for b in blocks], axis=0)
            for y in np.flatnonzero(tv <= dup_tol) + x + 1:
                if y not in empty:
                    found.append(Degeneracy(h, "duplicate", (x, int(y)), float(tv[y - x - 1])))
    return tuple(found)
