"""Step 3 by maximum likelihood with the classification error held fixed: the ML correction.

Vermunt (2010, Section 3) and Bakk, Tekle and Vermunt (2013, eq. 9) fit a
latent class model whose indicators are the assigned class ``W``, with the
error probabilities ``P(W = s | X = c) = D[c, s]`` of step 2 held fixed, and
the outcome ``Z``::

    log L = sum_rows a_r log sum_c P(X = c) D[c, s_r] f(z_r | c)

``f`` is a categorical distribution (class-specific probabilities) or a
normal one (class-specific mean and variance, as StepMix's ``gaussian_diag``
and Bakk and Vermunt 2016). With modal assignment a row is a unit, ``s_r``
its modal class; with proportional assignment each unit is a row for every
class ``s`` with mass ``a_u P(X = s | y_u)`` (Vermunt 2010, Section 5).
Units without a value of ``Z`` keep their ``W`` term: they inform the class
shares, not the class's outcome parameters.

The class shares are estimated in step 3 (``shares="estimated"``, Vermunt's
model and Latent GOLD's) or held at step 1's (``shares="measurement"``, what
StepMix does: its ``n_steps=3, correction="ML"`` freezes them with the
measurement model).

The maximum is found by EM started from the classification error alone,
then polished by Newton steps on the free parameters (class-share logits;
per class the mean and log variance, or the log-odds of each category
against the class's most probable one). Standard errors come from the
observed information by Louis' formula (the default of Latent GOLD and
Mplus), or the sandwich with it (``robust``: weighted data or proportional
assignment, whose likelihood is a pseudo-likelihood), and reach the reported
shares, means and probabilities by the delta method. A probability below
:data:`BOUNDARY` is on the boundary: it has no standard error and is fixed
at 0 while the others are estimated. Like every step-3 standard error they
treat ``D`` as known (``docs/three-step.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from ..errors import InvalidArgument
from .classification import Classification
from .outcome import Outcome
from .units import Units

__all__ = ["BOUNDARY", "MLFit", "SHARES", "ml_step3"]

#: How the class shares of step 3 are treated (module docstring).
SHARES = {"estimated": "estimated in step 3", "measurement": "held at the measurement model's"}
#: A category probability below this is on the boundary of the parameter space (no standard error).
BOUNDARY = 1e-9
#: A class variance may not fall below this fraction of the outcome's variance (the likelihood of a
#: normal mixture is unbounded as a variance goes to 0).
VARIANCE_FLOOR = 1e-8
#: Rows x parameters of one block of the information's sums (bounds the memory of a large data set).
BLOCK = 2_000_000


@dataclass(frozen=True)
class MLFit:
    """The ML correction's estimates (module docstring).

    ``means[c, j]``: the class mean (``j = 0``) or category probabilities;
    ``covariance``: theirs, class-major; ``shares`` and ``shares_covariance``
    (zeros when the shares are held); ``sd``: the class standard deviations
    of a continuous outcome; ``boundary``: ``(c, j)`` cells at 0 (categorical)
    or classes whose variance reached the floor (``j = 0``);
    ``se``: ``"observed"`` or ``"robust"``; ``singular``: the information
    could not be inverted (every standard error is NaN).
    """

    means: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    shares: np.ndarray = field(repr=False)
    shares_covariance: np.ndarray = field(repr=False)
    sd: np.ndarray | None
    loglik: float
    n_iter: int
    converged: bool
    boundary: tuple[tuple[int, int], ...]
    se: str
    singular: bool = False


@dataclass
class _Model:
    """The step-3 model's data (rows) and parameters; the methods are its E-step, M-step and derivatives."""

    outcome: Outcome
    log_d: np.ndarray  # (r, K): log D[c, s_r]
    mass: np.ndarray  # (r,): a_r
    z: np.ndarray  # (r,): value or category code of the row's unit
    seen: np.ndarray  # (r,): the unit has a value
    free_shares: bool
    shares: np.ndarray
    theta: dict

    @property
    def continuous(self) -> bool:
        return self.outcome.kind == "continuous"

    def log_f(self) -> np.ndarray:
        out = np.zeros(self.log_d.shape)
        z, seen = self.z[self.seen], self.seen
        if self.continuous:
            mu, var = self.theta["mean"], self.theta["var"]
            out[seen] = -0.5 * (np.log(2 * np.pi * var) + (z[:, None] - mu) ** 2 / var)
        else:
            with np.errstate(divide="ignore"):
                out[seen] = np.log(self.theta["p"][:, z.astype(int)].T)
        return out

    def e_step(self) -> tuple[np.ndarray, float]:
        with np.errstate(divide="ignore"):
            joint = np.log(self.shares) + self.log_d + self.log_f()
        norm = logsumexp(joint, axis=1)
        return np.exp(joint - norm[:, None]), float(self.mass @ norm)

    def m_step(self, resp: np.ndarray, floor: float) -> None:
        t = self.mass[:, None] * resp
        if self.free_shares:
            self.shares = t.sum(axis=0) / t.sum()
        ts = t[self.seen]
        size = ts.sum(axis=0)
        z = self.z[self.seen]
        if self.continuous:
            mu = (ts.T @ z) / size
            var = np.einsum("rc,rc->c", ts, (z[:, None] - mu) ** 2) / size
            self.theta = {"mean": mu, "var": np.maximum(var, floor)}
        else:
            counts = np.zeros((t.shape[1], self.outcome.n_categories))
            np.add.at(counts.T, z.astype(int), ts)
            self.theta = {"p": counts / size[:, None]}


@dataclass(frozen=True)
class _Layout:
    """Where each free parameter sits in the vector Newton steps and the information work on."""

    n_classes: int
    free_shares: bool
    blocks: tuple  # per class: continuous (mean, log var) or categorical (ref, the other active categories)
    offsets: tuple

    @classmethod
    def of(cls, model: _Model) -> _Layout:
        k = model.shares.size
        blocks = []
        for c in range(k):
            if model.continuous:
                blocks.append(None)
            else:
                p = model.theta["p"][c]
                active = np.flatnonzero(p > BOUNDARY)
                ref = int(active[np.argmax(p[active])])
                blocks.append((ref, tuple(int(j) for j in active if j != ref)))
        sizes = [2 if b is None else len(b[1]) for b in blocks]
        start = k - 1 if model.free_shares else 0
        offsets = tuple(int(x) for x in start + np.concatenate([[0], np.cumsum(sizes)]))
        return cls(k, model.free_shares, tuple(blocks), offsets)

    @property
    def size(self) -> int:
        return self.offsets[-1]

    def pack(self, model: _Model) -> np.ndarray:
        parts = [np.log(model.shares[1:]) - np.log(model.shares[0])] if self.free_shares else []
        for c, block in enumerate(self.blocks):
            if block is None:
                parts.append([model.theta["mean"][c], np.log(model.theta["var"][c])])
            else:
                p = model.theta["p"][c]
                parts.append(np.log(p[list(block[1])]) - np.log(p[block[0]]))
        return np.concatenate([np.asarray(x, dtype=float) for x in parts])

    def unpack(self, vector: np.ndarray, model: _Model, floor: float) -> None:
        if self.free_shares:
            model.shares = _softmax(np.concatenate([[0.0], vector[: self.n_classes - 1]]))
        if model.continuous:
            pairs = np.array([vector[self.offsets[c] : self.offsets[c] + 2] for c in range(self.n_classes)])
            model.theta = {"mean": pairs[:, 0], "var": np.maximum(np.exp(pairs[:, 1]), floor)}
            return
        p = np.zeros_like(model.theta["p"])
        for c, (ref, others) in enumerate(self.blocks):
            logits = np.concatenate([[0.0], vector[self.offsets[c] : self.offsets[c + 1]]])
            p[c, [ref, *others]] = _softmax(logits)
        model.theta = {"p": p}


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def ml_step3(
    classification: Classification,
    units: Units,
    outcome: Outcome,
    *,
    shares: str = "estimated",
    robust: bool | None = None,
    max_iter: int = 5000,
    start: MLFit | None = None,
) -> MLFit:
    """Fit the step-3 model of the module docstring; ``robust=None`` picks the sandwich for weighted
    data and proportional assignment, the observed information otherwise. ``start``: EM starts from this
    fit's estimates (a fit of nearby data, :mod:`effdim.threestep.step1`) instead of the classification
    error alone."""
    model, rows_unit, rows_q = _rows(classification, units, outcome, shares)
    floor = _variance_floor(model)
    if start is None:
        resp = np.exp(model.log_d) * model.shares  # the first E-step ignores the outcome
        resp /= resp.sum(axis=1, keepdims=True)
    else:
        if model.free_shares:
            model.shares = start.shares.copy()
        continuous = (
            {"mean": start.means[:, 0].copy(), "var": np.maximum(start.sd**2, floor)} if start.sd is not None else None
        )
        model.theta = continuous or {"p": start.means.copy()}
        resp, _ = model.e_step()
    loglik, n_iter = -np.inf, 0
    while n_iter < max_iter:
        n_iter += 1
        model.m_step(resp, floor)
        resp, new = model.e_step()
        done = new - loglik <= 1e-10 * (1.0 + abs(new))
        loglik = new
        if done:
            break
    loglik, converged = _newton(model, floor, loglik)
    robust = units.weighted or classification.assignment == "proportional" if robust is None else robust
    return _estimates(model, floor, rows_unit, rows_q, units, robust, loglik, n_iter, converged)


def _rows(classification: Classification, units: Units, outcome: Outcome, shares: str):
    if shares not in SHARES:
        raise InvalidArgument(f"the class shares must be one of {', '.join(SHARES)}, got {shares!r}")
    q = classification.assigned
    rows_unit, rows_s = np.nonzero(q > 0)
    with np.errstate(divide="ignore"):
        log_d = np.log(classification.error_matrix)[:, rows_s].T
    z = outcome.values[rows_unit]
    seen = outcome.observed[rows_unit]
    theta = {"mean": None, "var": None} if outcome.kind == "continuous" else {"p": None}
    model = _Model(
        outcome=outcome,
        log_d=log_d,
        mass=units.mass[rows_unit] * q[rows_unit, rows_s],
        z=np.where(seen, z, 0),
        seen=seen,
        free_shares=shares == "estimated",
        shares=classification.shares.copy(),
        theta=theta,
    )
    return model, rows_unit, q[rows_unit, rows_s]


def _variance_floor(model: _Model) -> float:
    if not model.continuous:
        return 0.0
    a, z = model.mass[model.seen], model.z[model.seen]
    mean = a @ z / a.sum()
    return VARIANCE_FLOOR * max(float(a @ (z - mean) ** 2 / a.sum()), np.finfo(float).tiny)


def _newton(model: _Model, floor: float, loglik: float, steps: int = 50) -> tuple[float, bool]:
    """Newton steps from EM's point on the free parameters, halved until the log-likelihood rises.

    A category probability that a step takes below :data:`BOUNDARY` is set to 0 and leaves the free
    parameters (its log-odds would run off to minus infinity, one step at a time)."""
    layout = _Layout.of(model)
    x = layout.pack(model)
    for _ in range(steps):
        if not model.continuous and _Layout.of(model).blocks != layout.blocks:
            p = np.where(model.theta["p"] > BOUNDARY, model.theta["p"], 0.0)
            model.theta = {"p": p / p.sum(axis=1, keepdims=True)}
            layout = _Layout.of(model)
            x = layout.pack(model)
        resp, loglik = model.e_step()
        grad, info, _ = _derivatives(model, layout, resp)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            return loglik, False
        if not np.all(np.isfinite(step)):
            return loglik, False
        if np.max(np.abs(step)) < 1e-9:
            return loglik, True
        first = step
        for _ in range(30):
            with np.errstate(over="ignore", invalid="ignore"):  # a step too far gives no finite likelihood: halved
                layout.unpack(x + step, model, floor)
                _, trial = model.e_step()
            if trial >= loglik - 1e-12 * (1.0 + abs(loglik)):
                x = x + step
                break
            step = step / 2
        else:
            layout.unpack(x, model, floor)  # no step raises it: the optimum up to rounding, if the step was tiny
            return loglik, bool(np.max(np.abs(first)) < 1e-6)
    return model.e_step()[1], False


def _scores(model: _Model, layout: _Layout, rows: slice) -> tuple[np.ndarray, np.ndarray]:
    """Complete-data scores ``S[r, c, :]`` of the rows in ``rows``, and each class's ``-H`` of ``log f``
    summed over those rows with the mass and responsibilities folded in by the caller."""
    k = layout.n_classes
    n = len(range(*rows.indices(model.mass.size)))
    scores = np.zeros((n, k, layout.size))
    if layout.free_shares:
        scores[:, :, : k - 1] = (np.eye(k) - model.shares)[:, 1:]
    z, seen = model.z[rows], model.seen[rows]
    for c, block in enumerate(layout.blocks):
        o = layout.offsets[c]
        if block is None:
            mu, var = model.theta["mean"][c], model.theta["var"][c]
            dev = np.where(seen, z - mu, 0.0)
            scores[:, c, o] = dev / var
            scores[:, c, o + 1] = np.where(seen, -0.5 + dev**2 / (2 * var), 0.0)
        else:
            others = list(block[1])
            p = model.theta["p"][c, others]
            hit = (z[:, None] == np.array(others)[None, :]).astype(float)
            scores[:, c, o : o + len(others)] = np.where(seen[:, None], hit - p, 0.0)
    return scores, seen


def _derivatives(model: _Model, layout: _Layout, resp: np.ndarray):
    """The gradient, the observed information (Louis' formula) and the rows' scores ``g_r``."""
    size, k = layout.size, layout.n_classes
    grad, info = np.zeros(size), np.zeros((size, size))
    g_all = np.zeros((model.mass.size, size))
    step = max(1, BLOCK // max(1, k * size))
    for start in range(0, model.mass.size, step):
        rows = slice(start, start + step)
        s, seen = _scores(model, layout, rows)
        r, a = resp[rows], model.mass[rows]
        g = np.einsum("rc,rcp->rp", r, s)
        g_all[rows] = g
        grad += a @ g
        info += np.einsum("r,rp,rq->pq", a, g, g) - np.einsum("r,rc,rcp,rcq->pq", a, r, s, s)
        info += _complete_information(model, layout, r * a[:, None], seen, rows)
    return grad, info, g_all


def _complete_information(model: _Model, layout: _Layout, t: np.ndarray, seen: np.ndarray, rows: slice):
    """``sum_r sum_c t[r, c] (-H_rc)``: the complete data's information, ``t = a_r resp[r, c]``."""
    k = layout.n_classes
    out = np.zeros((layout.size, layout.size))
    if layout.free_shares:
        pi = model.shares[1:]
        out[: k - 1, : k - 1] = t.sum() * (np.diag(pi) - np.outer(pi, pi))
    z = model.z[rows]
    for c, block in enumerate(layout.blocks):
        o = layout.offsets[c]
        w = t[:, c] * seen
        if block is None:
            mu, var = model.theta["mean"][c], model.theta["var"][c]
            dev = z - mu
            out[o : o + 2, o : o + 2] += [
                [w.sum() / var, w @ dev / var],
                [w @ dev / var, w @ dev**2 / (2 * var)],
            ]
        else:
            p = model.theta["p"][c, list(block[1])]
            end = o + len(block[1])
            out[o:end, o:end] += w.sum() * (np.diag(p) - np.outer(p, p))
    return out


def _estimates(model, floor, rows_unit, rows_q, units, robust, loglik, n_iter, converged) -> MLFit:
    layout = _Layout.of(model)
    resp, loglik = model.e_step()
    _, info, g = _derivatives(model, layout, resp)
    singular = not np.linalg.cond(info) < 1e12
    if singular:
        cov = np.full(info.shape, np.nan)
    else:
        cov = np.linalg.inv(info)
        if robust:
            per_unit = np.zeros((units.n_units, layout.size))
            np.add.at(per_unit, rows_unit, rows_q[:, None] * g)
            cov = cov @ (per_unit.T @ (units.meat[:, None] * per_unit)) @ cov
    jac_means, jac_shares, means, boundary = _jacobians(model, layout, floor)
    sd = np.sqrt(model.theta["var"]) if model.continuous else None
    return MLFit(
        means=means,
        covariance=jac_means @ cov @ jac_means.T,
        shares=model.shares.copy(),
        shares_covariance=jac_shares @ cov @ jac_shares.T,
        sd=sd,
        loglik=loglik,
        n_iter=n_iter,
        converged=converged,
        boundary=boundary,
        se="robust" if robust else "observed",
        singular=singular,
    )


def _jacobians(model: _Model, layout: _Layout, floor: float):
    """d(means)/d(free parameters), d(shares)/d(free parameters), the means ``(K, J)`` and the boundary cells."""
    k, size = layout.n_classes, layout.size
    j_shares = np.zeros((k, size))
    if layout.free_shares:
        pi = model.shares
        j_shares[:, : k - 1] = (np.diag(pi) - np.outer(pi, pi))[:, 1:]
    if model.continuous:
        means = model.theta["mean"][:, None].copy()
        j_means = np.zeros((k, size))
        for c in range(k):
            j_means[c, layout.offsets[c]] = 1.0
        boundary = tuple((int(c), 0) for c in np.flatnonzero(model.theta["var"] <= floor * (1 + 1e-9)))
        return j_means, j_shares, means, boundary
    p = model.theta["p"]
    n_cat = p.shape[1]
    j_means = np.zeros((k * n_cat, size))
    boundary = []
    for c, (ref, others) in enumerate(layout.blocks):
        o = layout.offsets[c]
        for j in range(n_cat):
            if j != ref and j not in others:
                boundary.append((c, j))
                continue
            for i, m in enumerate(others):
                j_means[c * n_cat + j, o + i] = p[c, j] * ((j == m) - p[c, m])
    return j_means, j_shares, p.copy(), tuple(boundary)
