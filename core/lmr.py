"""The Vuong-Lo-Mendell-Rubin test of ``k - 1`` against ``k`` latent classes, and its ad hoc adjustment.

Lo, Mendell & Rubin (2001, Biometrika 88(3), 767-778) take Vuong's (1989,
Econometrica 57, Theorem 3.3) limit of the likelihood ratio between two
models whose best approximations to the truth coincide: with ``f`` the
``k``-class model (parameters ``theta``, ``p`` of them) and ``g`` the ``(k -
1)``-class model (``gamma``, ``q``), both at their maximum-likelihood
estimates,

    LR = 2 (LL_k - LL_{k-1})  ->  sum_i w_i Z_i^2,   Z_i independent N(0, 1),

where the weights ``w_i`` are the eigenvalues of

    W = [ -B_f A_f^-1    -B_fg A_g^-1 ]
        [  B_gf A_f^-1    B_g A_g^-1  ]

``A`` the average Hessian of the log-likelihood of a row, ``B`` the average
outer product of the rows' scores, ``B_fg`` that of the two models' scores
(:func:`vuong_weights`). The p-value ``P(sum w_i Z_i^2 > LR)`` is Imhof's
(1961) inversion of the characteristic function (:func:`weighted_chisq_sf`).
The "adjusted" test (Lo, Mendell & Rubin, equation 15; Mplus's "Lo-Mendell-
Rubin adjusted LRT") divides ``LR`` by ``1 + 1 / ((ds_k - ds_{k-1}) log N)``,
an ad hoc correction their simulations suggested, and refers it to the same
weighted chi-square.

A note the output repeats: Vuong's theorem needs regularity conditions that
fail when the ``(k - 1)``-class model is true (Jeffries 2003, Biometrika
90(4)): the ``k``-class estimate then sits near a singular point where the
information is nearly singular. The test is offered because users expect it;
the bootstrap LRT (:func:`effdim.bootstrap.blrt`) needs no such theory.

How effdim computes it (latent class models, one hidden node):

* scores and Hessians in log-ratio coordinates (each CPT row's last entry the
  reference), exactly, pattern by pattern: the score is the posterior mean of
  the complete-data score and the Hessian Louis's (1982) identity, the
  posterior mean of the complete-data Hessian plus the posterior covariance
  of the complete-data score. ``W``'s eigenvalues do not depend on the
  coordinates (an invertible change of coordinates makes ``W`` a similar
  matrix), and a probability EM drove to 0 becomes an inert coordinate (its
  score and curvature vanish together) instead of a boundary;
* where ``de < ds`` the log-likelihood is flat along a ``ds - de``
  dimensional set (Kocka & Zhang 2002), so ``-A`` is singular: its inverse is
  taken on the span of its eigenvectors but the ``ds - de`` smallest (and any
  eigenvalue below ``RANK_RTOL`` of the largest, a coordinate at a boundary),
  where the scores vanish too;
* ``W = J C N`` with ``C`` the covariance of the stacked scores, ``J =
  diag(I, -I)`` and ``N = diag((-A_f)^+, (-A_g)^+)``, so its eigenvalues are
  those of the symmetric ``C^(1/2) N J C^(1/2)`` (computed as such: real).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidArgument

__all__ = ["LMRResult", "lmr_test", "vuong_weights", "weighted_chisq_sf", "lc_scores", "RANK_RTOL"]

#: Eigenvalues of ``-A`` below this share of the largest count as zero (a coordinate at a boundary).
RANK_RTOL = 1e-9
#: Eigenvalues of ``W`` below this share of the scale of the standardised scores are zero.
WEIGHT_RTOL = 1e-6
#: Entries of the complete-data scores of one block of patterns (``classes * patterns * p``; 32 MB).
BLOCK_ENTRIES = 1 << 22

NOTE = (
    "the VLMR test rests on Vuong's theorem, whose conditions fail when the smaller model is true "
    "(Jeffries 2003): prefer the bootstrap LRT"
)


@dataclass(frozen=True)
class LMRResult:
    """The VLMR test of ``k - 1`` against ``k`` classes (module docstring).

    ``statistic`` is ``LR = 2 (LL_k - LL_{k-1})``; ``adjusted`` the ad hoc
    ``LR / (1 + 1 / (delta log N))`` with ``delta = ds_k - ds_{k-1}``;
    ``weights`` the nonzero eigenvalues of ``W``; ``p_value`` and
    ``p_adjusted`` their tail probabilities under ``sum w_i Z_i^2``.
    """

    statistic: float
    adjusted: float
    p_value: float
    p_adjusted: float
    weights: np.ndarray = field(repr=False)
    k: int
    delta: int
    note: str = NOTE

    def to_json(self) -> dict[str, Any]:
        return {
            "test": "vlmr",
            "k": self.k,
            "statistic": self.statistic,
            "adjusted": self.adjusted,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "parameters_added": self.delta,
            "weights": [float(w) for w in self.weights],
            "note": self.note,
        }


# ------------------------------------------------------------ weighted chi-square
def weighted_chisq_sf(x: float, weights: Sequence[float]) -> float:
    """``P(sum_i w_i Z_i^2 > x)`` for independent standard normal ``Z_i`` (Imhof 1961).

    ``P = 1/2 + 1/pi int_0^inf sin(theta(u)) / (u rho(u)) du`` with
    ``theta(u) = 1/2 sum arctan(w_i u) - x u / 2`` and ``rho(u) = prod (1 +
    w_i^2 u^2)^(1/4)``; weights may have either sign. Equal positive weights
    use the chi-square directly.

    >>> round(weighted_chisq_sf(3.84, [1.0]), 4), round(weighted_chisq_sf(3.84, [0.5, 0.5, 0.5, 0.5]), 4)
    (0.05, 0.104)
    """
    from scipy.integrate import quad
    from scipy.special import chdtrc

    w = np.asarray(weights, dtype=float)
    w = w[np.abs(w) > 1e-12 * max(float(np.max(np.abs(w), initial=0.0)), 1e-300)]
    x = float(x)
    if w.size == 0:
        return 1.0 if x < 0 else 0.0
    if np.all(w == w[0]):
        if w[0] > 0:
            return float(chdtrc(w.size, x / w[0])) if x > 0 else 1.0
        return 1.0 - (float(chdtrc(w.size, x / w[0])) if x < 0 else 1.0)

    def phase(u: float) -> float:
        return 0.5 * float(np.arctan(w * u).sum())

    def amplitude(u: float) -> float:
        return 1.0 / (u * math.exp(0.25 * float(np.log1p((w * u) ** 2).sum())))

    def integrand(u: float) -> float:
        if u == 0.0:
            return 0.5 * float(w.sum()) - omega
        return math.sin(phase(u) - omega * u) * amplitude(u)

    # Plainly up to the first half period of sin(-x u / 2) or to where the tail is below 1e-11 (it falls
    # as u^(-1 - m/2) / prod sqrt|w|), in decades; beyond, that factor as a Fourier weight (QUADPACK's QAWF).
    # The product of the weights in logs: many small weights underflow it to 0.
    omega = 0.5 * x
    log_tail_end = (math.log(2.0 / (w.size * 1e-11)) - 0.5 * float(np.log(np.abs(w)).sum())) * 2.0 / w.size
    tail_end = math.exp(min(log_tail_end, 700.0))
    plain_end = min(tail_end, math.pi / abs(omega)) if omega else tail_end
    edges = (
        [0.0, plain_end] if plain_end <= 1.0 else [0.0, *np.geomspace(1.0, plain_end, 2 + int(math.log10(plain_end)))]
    )
    value = sum(quad(integrand, a, b, limit=200, epsabs=1e-12)[0] for a, b in zip(edges, edges[1:]))
    if plain_end < tail_end:
        sign, freq = math.copysign(1.0, omega), abs(omega)
        fourier = dict(wvar=freq, limlst=200)
        cos_part = quad(lambda u: math.sin(phase(u)) * amplitude(u), plain_end, np.inf, weight="cos", **fourier)[0]
        sin_part = quad(lambda u: math.cos(phase(u)) * amplitude(u), plain_end, np.inf, weight="sin", **fourier)[0]
        value += cos_part - sign * sin_part
    return float(min(1.0, max(0.0, 0.5 + value / math.pi)))


# ----------------------------------------------------------- scores and Hessians
def _lc_tables(params: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    model = params.model
    if not model.is_lc:
        raise InvalidArgument(
            f"the Lo-Mendell-Rubin test is computed for latent class models (one hidden node); {model} "
            "has more: use the bootstrap likelihood-ratio test"
        )
    return np.asarray(params.cpts[model.root]), [np.asarray(params.cpts[o]) for o in model.observed]


def lc_scores(params: Any, patterns: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S, B, H)`` of an LC model at ``params`` in log-ratio coordinates (module docstring).

    ``S``: ``(m, p)`` per-pattern scores; ``B = sum_o c_o s_o s_o^T`` and
    ``H = sum_o c_o d^2 log P(o)`` (sums, not averages) over the patterns
    (``-1`` a missing cell: the item drops out of that pattern).
    Coordinates: the ``k - 1`` class weights, then per item and class the
    ``|O| - 1`` category log-ratios.
    """
    pi, thetas = _lc_tables(params)
    k = pi.size
    patterns = np.asarray(patterns)
    counts = np.asarray(counts, dtype=float)
    sizes = [t.shape[1] - 1 for t in thetas]
    offsets = np.concatenate([[k - 1], k - 1 + np.cumsum([k * s for s in sizes])]).astype(int)
    p = int(offsets[-1])
    S = np.empty((patterns.shape[0], p))
    H = np.zeros((p, p))
    rows = max(16, BLOCK_ENTRIES // (k * p))
    for start in range(0, patterns.shape[0], rows):
        block = slice(start, start + rows)
        S[block], h = _block(pi, thetas, patterns[block], counts[block], offsets, sizes)
        H += h
    B = S.T @ (counts[:, None] * S)
    return S, B, H - B


def _block(pi, thetas, x, c, offsets, sizes):
    """Scores and ``sum c (E[complete Hessian] + E[u u^T])`` of one block of patterns (``- s s^T`` added by the caller)."""
    k = pi.size
    m = x.shape[0]
    p = int(offsets[-1])
    with np.errstate(divide="ignore"):
        logj = np.broadcast_to(np.log(pi), (m, k)).copy()
        for v, t in enumerate(thetas):
            seen = x[:, v] >= 0
            logj[seen] += np.log(t[:, x[seen, v]]).T
    logj -= logj.max(axis=1, keepdims=True)
    r = np.exp(logj)
    r /= r.sum(axis=1, keepdims=True)
    # u_h: the complete-data score when the class is h, (k, m, p)
    U = np.zeros((k, m, p))
    U[:, :, : k - 1] = (np.eye(k)[:, : k - 1] - pi[: k - 1])[:, None, :]
    info = np.zeros((p, p))
    weight = float(c.sum())
    info[: k - 1, : k - 1] = weight * (np.diag(pi[: k - 1]) - np.outer(pi[: k - 1], pi[: k - 1]))
    for v, t in enumerate(thetas):
        size = sizes[v]
        if size == 0:
            continue
        seen = x[:, v] >= 0
        onehot = np.zeros((m, size))
        rows = np.flatnonzero(seen & (x[:, v] < size))
        onehot[rows, x[rows, v]] = 1.0
        mass = (c * seen) @ r  # sum over patterns where the item is seen of c r_h, (k,)
        for h in range(k):
            cols = slice(int(offsets[v]) + h * size, int(offsets[v]) + (h + 1) * size)
            U[h, :, cols] = seen[:, None] * (onehot - t[h, :size])
            th = t[h, :size]
            info[cols, cols] = mass[h] * (np.diag(th) - np.outer(th, th))
    S = np.einsum("mh,hmp->mp", r, U)
    cov = np.zeros((p, p))
    for h in range(k):
        cov += U[h].T @ ((c * r[:, h])[:, None] * U[h])
    return S, cov - info


# ---------------------------------------------------------------------- weights
def _pseudo_inverse_root(neg_hessian: np.ndarray, drop: int) -> np.ndarray:
    """``V Lambda^(-1/2)`` over the eigenpairs of ``-A`` kept (module docstring), columns the kept directions."""
    values, vectors = np.linalg.eigh(0.5 * (neg_hessian + neg_hessian.T))
    top = float(values[-1]) if values.size else 0.0
    keep = values > RANK_RTOL * max(top, 0.0)
    keep[: max(drop, 0)] = False  # eigh sorts ascending: the smallest go first
    return vectors[:, keep] / np.sqrt(values[keep])


def vuong_weights(
    scores_f: np.ndarray,
    hess_f: np.ndarray,
    scores_g: np.ndarray,
    hess_g: np.ndarray,
    counts: np.ndarray,
    *,
    drop_f=0,
    drop_g=0,
) -> np.ndarray:
    """The nonzero eigenvalues of Vuong's ``W`` (module docstring), largest first.

    ``scores_*``: per-pattern scores ``(m, p)`` and ``(m, q)`` on the same
    patterns; ``hess_*`` the summed Hessians; ``counts`` the patterns' counts;
    ``drop_*`` the number of flat directions (``ds - de``) of each model.
    """
    counts = np.asarray(counts, dtype=float)
    n = float(counts.sum())
    root_f = _pseudo_inverse_root(-np.asarray(hess_f) / n, drop_f)
    root_g = _pseudo_inverse_root(-np.asarray(hess_g) / n, drop_g)
    Z = np.hstack([scores_f @ root_f, scores_g @ root_g])  # standardised scores
    M = Z.T @ (counts[:, None] * Z) / n
    sign = np.concatenate([np.ones(root_f.shape[1]), -np.ones(root_g.shape[1])])
    values, vectors = np.linalg.eigh(0.5 * (M + M.T))
    half = vectors * np.sqrt(np.clip(values, 0.0, None))  # M^(1/2) = half @ vectors.T
    sym = half.T @ (sign[:, None] * half)
    w = np.linalg.eigvalsh(0.5 * (sym + sym.T))
    # M's eigenvalues are near 1 (standardised scores): weights far below that are cancellation noise
    w = w[np.abs(w) > WEIGHT_RTOL * max(1.0, float(values[-1]) if values.size else 0.0)]
    return np.sort(w)[::-1]


# ------------------------------------------------------------------------- test
def lmr_test(smaller: Any, larger: Any) -> LMRResult:
    """The VLMR and adjusted LMR tests of ``smaller`` (``k - 1`` classes) against ``larger`` (``k``).

    Both are :class:`effdim.FitResult` of latent class models over the same
    items, fitted to the same data (maximum likelihood).
    """
    from .data import check_matches_model

    for f in (smaller, larger):
        _lc_tables(f.params)
        if getattr(f.em, "prior", None):
            raise InvalidArgument("the Lo-Mendell-Rubin test needs maximum-likelihood fits (no MAP prior)")
    k = larger.model.card(larger.model.root)
    if smaller.model != larger.model.with_card(larger.model.root, k - 1):
        raise InvalidArgument(f"the test compares k - 1 with k classes; got {smaller.model} and {larger.model}")
    if float(smaller.n) != float(larger.n):
        raise InvalidArgument("the two fits must be to the same data")
    data = check_matches_model(larger.data, larger.model)
    patterns, counts = np.asarray(data.patterns), np.asarray(data.counts, dtype=float)
    s_f, _, h_f = lc_scores(larger.params, patterns, counts)
    s_g, _, h_g = lc_scores(smaller.params, patterns, counts)
    weights = vuong_weights(s_f, h_f, s_g, h_g, counts, drop_f=larger.ds - larger.de, drop_g=smaller.ds - smaller.de)
    lr = max(0.0, 2.0 * (larger.loglik - smaller.loglik))
    delta = int(larger.ds - smaller.ds)
    adjusted = lr / (1.0 + 1.0 / (delta * math.log(float(larger.n))))
    return LMRResult(
        statistic=lr,
        adjusted=adjusted,
        p_value=weighted_chisq_sf(lr, weights),
        p_adjusted=weighted_chisq_sf(adjusted, weights),
        weights=weights,
        k=int(k),
        delta=delta,
    )
