"""The weighted multinomial logit of class membership on covariates, for a batch of fits at once.

Class ``k`` of ``K`` has probability ``pi_k(x) = exp(x beta_k) / sum_j exp(x beta_j)`` at a design
row ``x`` (:func:`effdim.formula.design_matrix`), with ``beta_0 = 0``: class 1 (index 0) is the
reference, and ``beta`` holds the ``p x (K - 1)`` coefficients of the others. Every function works on
``S`` coefficient sets at once (a first axis, as EM's starts; :mod:`effdim.em.state`).

Given target counts ``R[k, n]`` (the expected number of members of class ``k`` among row ``n``'s
``N_n`` copies: EM's posteriors times the row's count or weight), the coefficients maximise
``Q(beta) = sum_n sum_k R[k, n] log pi_k(x_n)``, concave in ``beta``, with gradient
``sum_n x_n (R[k, n] - N_n pi_k(x_n))`` and information (minus the Hessian)
``sum_n N_n pi_k (delta_kj - pi_j) x_n x_n^T`` (coefficients ordered term by term, class by class
within a term, as :func:`information`). :func:`newton_step` is one Newton step, halved until ``Q``
does not fall: the M-step of a latent class regression (as poLCA's, Linzer & Lewis 2011, section 3.2),
a generalised EM step that never lowers the likelihood.

>>> import numpy as np
>>> x = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
>>> beta = np.zeros((1, 2, 1))
>>> class_probabilities(x, beta)[0].round(2).tolist()
[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "GroupedDesign",
    "class_probabilities",
    "expected_loglik",
    "gradient",
    "information",
    "newton_step",
]

#: Halvings of a Newton step before the coefficients are kept as they were.
MAX_HALVINGS = 30


def linear_predictors(design: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``x beta_k`` for every class (the reference's 0): ``(S, K, m)``."""
    eta = np.empty((beta.shape[0], beta.shape[2] + 1, design.shape[0]))
    eta[:, 0, :] = 0.0
    np.matmul(beta.transpose(0, 2, 1), design.T, out=eta[:, 1:, :])
    return eta


def class_probabilities(design: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``pi_k(x_n)`` for ``S`` coefficient sets ``beta`` ``(S, p, K - 1)`` at the rows of ``design``
    ``(m, p)``: ``(S, K, m)``, summing to 1 over the classes."""
    eta = linear_predictors(design, beta)
    eta -= eta.max(axis=1, keepdims=True)
    np.exp(eta, out=eta)
    eta /= eta.sum(axis=1, keepdims=True)
    return eta


def log_class_probabilities(design: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``log pi_k(x_n)``: ``(S, K, m)``, exact where the probabilities underflow."""
    eta = linear_predictors(design, beta)
    top = eta.max(axis=1, keepdims=True)
    return eta - (top + np.log(np.exp(eta - top).sum(axis=1, keepdims=True)))


def expected_loglik(design: np.ndarray, beta: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``Q(beta) = sum_n sum_k R[k, n] log pi_k(x_n)`` per coefficient set: ``(S,)``."""
    return np.einsum("skm,skm->s", targets, log_class_probabilities(design, beta))


def gradient(design: np.ndarray, probs: np.ndarray, targets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``dQ / dbeta``: ``sum_n x_n (R[k, n] - N_n pi_k(x_n))`` for the classes but the reference,
    ``(S, p, K - 1)``; ``probs`` from :func:`class_probabilities`, ``counts`` the rows' ``N_n``."""
    residual = targets[:, 1:, :] - counts * probs[:, 1:, :]
    return np.matmul(residual, design).transpose(0, 2, 1)


def information(design: np.ndarray, probs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Minus the Hessian of ``Q``: ``(S, p (K - 1), p (K - 1))``, coefficients flattened as
    ``beta.reshape(S, -1)`` orders them (term by term, class by class within a term)."""
    S, K, m = probs.shape
    p = design.shape[1]
    q = probs[:, 1:, :]  # (S, K-1, m)
    # W[s, k, j, n] = N_n q_k (delta_kj - q_j)
    w = -np.einsum("skm,sjm->skjm", q, q)
    idx = np.arange(K - 1)
    w[:, idx, idx, :] += q
    w *= counts
    outer = (design[:, :, None] * design[:, None, :]).reshape(m, p * p)
    info = np.matmul(w.reshape(S * (K - 1) ** 2, m), outer).reshape(S, K - 1, K - 1, p, p)
    return info.transpose(0, 3, 1, 4, 2).reshape(S, p * (K - 1), p * (K - 1))


def newton_step(
    design: np.ndarray, beta: np.ndarray, targets: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One Newton step on ``Q`` from ``beta`` (``(S, p, K - 1)``), halved while ``Q`` would fall.

    Returns the new coefficients and ``Q`` there. A step that cannot be
    made to raise ``Q`` (at its maximum already, or a singular information
    where a class is empty) leaves the coefficients unchanged, so ``Q``
    never falls.
    """
    S, p, km1 = beta.shape
    probs = class_probabilities(design, beta)
    grad = gradient(design, probs, targets, counts).reshape(S, -1)
    info = information(design, probs, counts)
    step = np.einsum("sij,sj->si", np.linalg.pinv(info, rcond=1e-12, hermitian=True), grad).reshape(S, p, km1)
    q_old = expected_loglik(design, beta, targets)
    new = beta + step
    q_new = expected_loglik(design, new, targets)
    worse = ~(q_new >= q_old)
    for _ in range(MAX_HALVINGS):
        if not worse.any():
            break
        step[worse] *= 0.5
        new[worse] = beta[worse] + step[worse]
        q_new[worse] = expected_loglik(design, new[worse], targets[worse])
        worse = ~(q_new >= q_old)
    new[worse] = beta[worse]
    q_new[worse] = q_old[worse]
    return new, q_new


@dataclass(frozen=True, eq=False)
class GroupedDesign:
    """A design's distinct rows, and which of them each of its rows is.

    The class probabilities depend on a row's covariates only, and the
    Newton step on the targets summed over the rows that share them, so the
    logit is computed on the ``G`` distinct rows (seven for poLCA's PARTY)
    and spread to the ``m`` rows by :meth:`spread`.
    """

    rows: np.ndarray  # (G, p)
    index: np.ndarray  # (m,): the distinct row of each row

    @staticmethod
    def of(design: np.ndarray) -> GroupedDesign:
        rows, index = np.unique(np.asarray(design, dtype=np.float64), axis=0, return_inverse=True)
        return GroupedDesign(np.ascontiguousarray(rows), index.reshape(-1))

    @property
    def n_groups(self) -> int:
        return int(self.rows.shape[0])

    def spread(self, per_group: np.ndarray) -> np.ndarray:
        """``(..., G)`` values per distinct row, given to every row: ``(..., m)``."""
        return np.take(per_group, self.index, axis=-1)

    def sums(self, per_row: np.ndarray) -> np.ndarray:
        """``(..., m)`` values summed over the rows of each distinct row: ``(..., G)``."""
        lead = per_row.shape[:-1]
        flat = per_row.reshape(-1, per_row.shape[-1])
        G = self.n_groups
        keys = (np.arange(flat.shape[0])[:, None] * G + self.index[None, :]).ravel()
        return np.bincount(keys, weights=flat.ravel(), minlength=flat.shape[0] * G).reshape(*lead, G)

    def probabilities(self, beta: np.ndarray) -> np.ndarray:
        """:func:`class_probabilities` of every row: ``(S, K, m)``."""
        return self.spread(class_probabilities(self.rows, beta))
