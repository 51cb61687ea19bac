"""Covariates of class membership by the three-step method: a multinomial logit of the classes of a fitted
model on variables left out of it, corrected for the classification error.

Step 1 and step 2 as for distal outcomes (:mod:`effdim.threestep.classification`);
step 3 fits ``P(X = c | x) = exp(x beta_c) / sum_k exp(x beta_k)`` (class 1
the reference, :mod:`effdim.mlogit`; the design of a covariate formula,
:mod:`effdim.formula`) by one of

* ``"bch"``: the weighted multinomial logit with the BCH weights ``w = q D^-1``
  (Vermunt 2010, Section 4): maximise ``sum_u a_u sum_c w[u, c] log P(c | x_u)``,
  concave in ``beta`` because each unit's weights sum to 1;
* ``"ml"``: the ML correction (Vermunt 2010, eq. 11): maximise
  ``sum_u a_u sum_s q[u, s] log sum_c P(c | x_u) D[c, s]``, by EM (a Newton
  step of the logit per E-step) and then Newton steps on the log-likelihood
  with its observed information (Louis' formula:
  ``sum_u a_u [(diag(pi_u) - pi_u pi_u') - sum_s q[u, s] (diag(r_us) - r_us r_us')] (x) x_u x_u'``,
  ``r_us`` the posterior of the class given ``W = s`` and ``x_u``);
* ``"modal"``, ``"proportional"``: the logit of the assigned class, uncorrected.

Standard errors: the sandwich for the weighted logits (BCH, modal,
proportional), whose unit scores are ``(w_u - pi_u) (x) x_u``; for ML the
inverse observed information, or the sandwich for weighted data and
proportional assignment. All take ``D`` as known (``docs/three-step.md``).
Each term gets a Wald test that its coefficients are 0 in every class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import chdtrc

from ..formula import Formula, design_matrix, parse_formula
from ..mlogit import class_probabilities, expected_loglik, newton_step
from .classification import Classification, classify
from .request import checked_node
from .step1 import with_step1
from .units import Units, fit_rows

__all__ = ["ThreeStepRegression", "covariates_3step"]

#: Most EM steps (each with one Newton step of the logit) before the Newton steps on the likelihood.
EM_STEPS = 2000


@dataclass(frozen=True)
class ThreeStepRegression:
    """The class membership's multinomial logit on covariates, by the three-step method.

    ``design`` (:class:`effdim.formula.Design`) names the coefficients' rows;
    ``coefficients`` is ``(p, k - 1)`` against class 1, ``covariance`` over
    ``coefficients.ravel()``; ``tests`` each term's Wald test ``(term, W, df, p)``;
    ``n`` the weighted count of the rows used, ``n_missing`` those left out for
    a missing covariate.
    """

    method: str
    node: str
    classes: tuple
    design: Any = field(repr=False)
    coefficients: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    se_method: str
    n: float
    n_missing: float
    tests: tuple = ()
    notes: tuple = ()
    classification: Classification | None = field(default=None, repr=False)

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None)).reshape(self.coefficients.shape)

    def _errors(self):
        from ..standard_errors import StandardErrors

        flags = np.where(np.isfinite(self.se), "", "not identified").astype(object)
        return StandardErrors(
            method=self.se_method,
            tables={},
            flags={},
            shares={},
            share_flags={},
            n_free=self.coefficients.size,
            nullity=0,
            negative=0,
            n_boundary=0,
            coefficients=self.se,
            coefficient_flags=flags,
            coefficient_covariance=self.covariance,
        )

    def table(self, level: float = 0.95):
        """A row per design column and class but the reference (:func:`effdim.regression.coefficient_table`)."""
        from ..regression import coefficient_table

        return coefficient_table(self.design, self.coefficients, self._errors(), level=level)

    def to_json(self) -> dict:
        """The coefficients as ``fit --json``'s one-step ``covariates`` gives them
        (:func:`effdim.regression.coefficients_json`), with ``method``, ``se_method``, ``n``, ``n_missing``,
        ``wald`` (per term), ``classification`` and ``notes``."""
        from ..regression import coefficients_json

        found = coefficients_json(
            self.design, self.coefficients, self._errors(), node=self.node, states=list(self.classes)
        )
        found.update(
            method=self.method,
            se_method=self.se_method,
            n=_count(self.n),
            n_missing=_count(self.n_missing),
            wald=[{"term": t, "statistic": w, "df": df, "p": p} for t, w, df, p in self.tests],
            classification=None if self.classification is None else self.classification.to_json(),
            notes=list(self.notes),
        )
        return found


def _count(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def covariates_3step(
    fit: Any,
    data: Any,
    formula: str | Formula,
    *,
    method: str = "bch",
    assignment: str = "modal",
    node: str | None = None,
    step1: bool = False,
) -> ThreeStepRegression:
    """The three-step regression of ``fit``'s classes of ``node`` (default the root) on ``formula`` (module
    docstring); ``data`` is the data of the fit with the covariate columns beside its items. ``step1``: add
    the measurement model's uncertainty to the standard errors (:mod:`effdim.threestep.step1`)."""
    node = checked_node(fit, node, method, assignment)
    model = fit.model
    formula = parse_formula(formula) if isinstance(formula, str) else formula
    leaves = [fit.columns[leaf] for leaf in model.observed]
    formula.check_columns([c for c in data.columns if c not in leaves], leaves)
    rows = fit_rows(fit, data, node)
    units, codes = rows.merged(list(formula.columns))
    assignment = "proportional" if method == "proportional" else assignment
    classification = classify(units, assignment)
    values, levels = {}, {}
    for j, column in enumerate(formula.columns):
        states = data.states[data.index(column)]
        lookup = np.array([*states, None], dtype=object)
        values[column], levels[column] = list(lookup[codes[:, j]]), states
    design = design_matrix(formula, values, levels=levels, items=leaves, weights=units.mass)
    kept = design.kept
    used = units.take(kept)
    beta, cov, robust = _step3(design.matrix, classification, used, kept, method)
    se_method = "robust" if robust else "observed"
    notes = []
    if rows.left_out:
        notes.append(f"{rows.left_out:g} rows left out of the fit (a missing or zero weight) are left out here too")
    if step1:

        def again(at: Any) -> np.ndarray:
            moved, _ = at.merged(list(formula.columns))
            error = classify(moved, assignment, assigned=classification.assigned)
            return _step3(design.matrix, error, moved.take(kept), kept, method, beta)[0].ravel()

        cov, se_method, note = with_step1(fit, rows, again, cov, se_method)
        notes += [note] if note else []
    return ThreeStepRegression(
        method=method,
        node=node,
        classes=tuple(fit.labels.state(node, c) for c in range(units.n_classes)),
        design=design,
        coefficients=beta,
        covariance=cov,
        se_method=se_method,
        n=float(used.mass.sum()),
        n_missing=float(units.mass[~kept].sum()),
        tests=_term_tests(design, beta, cov),
        notes=tuple(notes),
        classification=classification,
    )


def _step3(x: np.ndarray, classification: Classification, used: Units, kept: np.ndarray, method: str, start=None):
    """The coefficients, their covariance and whether it is the sandwich, by ``method`` (ML from ``start``)."""
    if method == "ml":
        return _ml(x, classification, used, kept, start)
    weights = classification.bch_weights() if method == "bch" else classification.assigned
    return (*_weighted(x, weights[kept], used), True)


def _solve(design: np.ndarray, beta: np.ndarray, targets: np.ndarray, counts: np.ndarray, steps: int = 200):
    """Newton steps of the weighted logit (:func:`effdim.mlogit.newton_step`) until ``Q`` settles."""
    q = expected_loglik(design, beta[None], targets[None])[0]
    for _ in range(steps):
        new, q_new = newton_step(design, beta[None], targets[None], counts)
        change = float(q_new[0] - q)
        beta, q = new[0], float(q_new[0])
        if change <= 1e-12 * (1.0 + abs(q)):
            break
    return beta


def _kron_rows(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Per unit, ``x_u (x) d_u`` ordered as ``beta.ravel()`` (term by term, class by class within a term)."""
    return (x[:, :, None] * d[:, None, :]).reshape(x.shape[0], -1)


def _information(x: np.ndarray, mass: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """``sum_u mass_u kron(x_u x_u', blocks_u)``, ``blocks`` ``(u, k-1, k-1)``, in ``beta.ravel()``'s order."""
    p, k1 = x.shape[1], blocks.shape[1]
    info = np.einsum("u,ui,uj,ukl->ikjl", mass, x, x, blocks, optimize=True)
    return info.reshape(p * k1, p * k1)


def _logit_blocks(pi: np.ndarray) -> np.ndarray:
    """``diag(pi) - pi pi'`` over the classes but the reference, per unit: ``(u, k-1, k-1)``."""
    rest = pi[:, 1:]
    return np.einsum("uk,kl->ukl", rest, np.eye(rest.shape[1])) - rest[:, :, None] * rest[:, None, :]


def _inverse(info: np.ndarray) -> np.ndarray:
    if not np.linalg.cond(info) < 1e12:
        return np.full(info.shape, np.nan)
    return np.linalg.inv(info)


def _weighted(x: np.ndarray, weights: np.ndarray, units: Units) -> tuple[np.ndarray, np.ndarray]:
    """The weighted logit of BCH, modal and proportional assignment, with its sandwich covariance."""
    k = weights.shape[1]
    targets = (units.mass[:, None] * weights).T
    beta = _solve(x, np.zeros((x.shape[1], k - 1)), targets, units.mass)
    pi = class_probabilities(x, beta[None])[0].T
    bread = _inverse(_information(x, units.mass, _logit_blocks(pi)))
    score = _kron_rows(x, (weights - pi)[:, 1:])
    return beta, bread @ (score.T @ (units.meat[:, None] * score)) @ bread


def _ml(x: np.ndarray, classification: Classification, units: Units, kept: np.ndarray, start=None):
    """The ML correction (module docstring): EM from ``start`` (default the modal logit), then Newton on the
    log-likelihood; the observed information or the sandwich."""
    q = classification.assigned[kept]
    d = classification.error_matrix
    k = d.shape[0]
    if start is None:
        start = _solve(x, np.zeros((x.shape[1], k - 1)), (units.mass[:, None] * q).T, units.mass)
    beta = np.array(start, dtype=float)
    loglik = _ml_loglik(x, beta, q, d, units.mass)
    for _ in range(EM_STEPS):
        r = _ml_posteriors(x, beta, q, d)
        targets = units.mass[:, None] * np.einsum("us,usc->uc", q, r)
        beta = newton_step(x, beta[None], targets.T[None], units.mass)[0][0]
        new = _ml_loglik(x, beta, q, d, units.mass)
        done = new - loglik <= 1e-10 * (1.0 + abs(new))
        loglik = new
        if done:
            break
    for _ in range(50):
        grad, info, _ = _ml_derivatives(x, beta, q, d, units.mass)
        step = np.linalg.lstsq(info, grad, rcond=None)[0].reshape(beta.shape)
        for _ in range(30):
            trial = _ml_loglik(x, beta + step, q, d, units.mass)
            if trial >= loglik - 1e-12 * (1.0 + abs(loglik)):
                beta, loglik = beta + step, trial
                break
            step = step / 2
        if np.max(np.abs(step)) < 1e-10:
            break
    _, info, score = _ml_derivatives(x, beta, q, d, units.mass)
    cov = _inverse(info)
    robust = units.weighted or classification.assignment == "proportional"
    if robust:
        cov = cov @ (score.T @ (units.meat[:, None] * score)) @ cov
    return beta, cov, robust


def _ml_posteriors(x, beta, q, d) -> np.ndarray:
    """``r[u, s, c] = P(X = c | W = s, x_u)``, for the classes ``s`` with ``q[u, s] > 0`` (else 0)."""
    pi = class_probabilities(x, beta[None])[0].T  # (u, k)
    joint = pi[:, None, :] * d.T[None, :, :]  # (u, s, c)
    total = joint.sum(axis=2, keepdims=True)
    return np.divide(joint, total, out=np.zeros_like(joint), where=total > 0)


def _ml_loglik(x, beta, q, d, mass) -> float:
    pi = class_probabilities(x, beta[None])[0].T
    with np.errstate(divide="ignore"):
        log_w = np.log(pi @ d)  # (u, s): log P(W = s | x_u)
    return float(mass @ np.where(q > 0, q * log_w, 0.0).sum(axis=1))


def _ml_derivatives(x, beta, q, d, mass):
    """The ML log-likelihood's gradient (``beta.ravel()`` order), observed information and unit scores."""
    pi = class_probabilities(x, beta[None])[0].T
    r = _ml_posteriors(x, beta, q, d)
    expected = np.einsum("us,usc->uc", q, r)  # sum_s q_us r_us
    score = _kron_rows(x, (expected - pi)[:, 1:])
    rest = r[:, :, 1:]
    spread = np.einsum("us,usk->uk", q, rest)
    within = np.einsum("us,usk,usl->ukl", q, rest, rest)
    blocks = _logit_blocks(pi) - (np.einsum("uk,kl->ukl", spread, np.eye(spread.shape[1])) - within)
    return mass @ score, _information(x, mass, blocks), score


def _term_tests(design: Any, beta: np.ndarray, cov: np.ndarray) -> tuple:
    """Per term, the Wald test that its coefficients are 0 in every class: ``(term, W, df, p)``."""
    tests = []
    flat = beta.ravel()
    k1 = beta.shape[1]
    for term in dict.fromkeys(t for t in design.term_of if t is not None):
        rows = [i for i, t in enumerate(design.term_of) if t == term]
        index = [i * k1 + k for i in rows for k in range(k1)]
        sub = cov[np.ix_(index, index)]
        if not np.all(np.isfinite(sub)):
            tests.append((str(term), None, len(index), None))
            continue
        b = flat[index]
        statistic = float(b @ np.linalg.solve(sub, b))
        tests.append((str(term), statistic, len(index), float(chdtrc(len(index), statistic))))
    return tuple(tests)
