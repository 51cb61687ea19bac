"""The singular BIC of Drton & Plummer (2017, JRSS-B 79(2)) over a chain of nested models.

A sweep fits the models ``M_1 ⊆ M_2 ⊆ ...`` that give one hidden node ``H``
``k_1 < k_2 < ...`` states. Where the data's distribution lies in a smaller
model ``M_j`` of the chain, the larger model ``M_i`` is singular there, and the
marginal likelihood of ``M_i`` falls not as ``N^(-d/2)`` but as
``N^(-lambda_ij)``, with ``lambda_ij`` the *learning coefficient* (real log
canonical threshold) of ``M_i`` at a generic point of ``M_j``. The sBIC
replaces BIC's single penalty by these coefficients: with ``L'_ij = exp(LL_i -
lambda_ij log N)`` and a uniform prior over the models, ``L'_i = exp(sBIC_i)``
solves, model by model from the smallest (Drton & Plummer, equation 3.3),

    sum_{j <= i} (L'_i - L'_ij) L'_j = 0,

a quadratic in ``L'_i`` with one positive root (:func:`solve`).

The learning coefficients (:func:`learning_coefficients`), ``d1`` the number
of parameters one state of ``H`` adds besides its weight (for an LC model
``sum (|O_v| - 1)``; for any node, rooting the tree at ``H``, ``sum (|C| - 1)``
over its neighbours ``C``; :func:`state_parameters`), ``phi`` the Dirichlet
parameter of ``H``'s distribution (default ``(d1 + 1)/2``):

* ``sbic``, as the R package ``sBIC`` (``R/LCAs.R``, ``R/MixtureModels.R``;
  Drton & Plummer, section 6.3, equation 6.19) computes it, generalised from
  items with equal numbers of categories to any ``d1``:
  ``lambda_ii = ds_i / 2`` and for ``j < i``
  ``lambda_ij = min(ds_j + (i - j) phi, ds_j + (i - j) d1) / 2``.
* ``sbic_plus``, with the exact effective dimension (Kocka & Zhang 2002,
  Section 2.4): ``lambda_ii = de_i / 2`` (the model is a smooth manifold of
  dimension ``de_i`` at its generic points); for ``j < i``
  ``lambda_ij = de_i / 2`` when ``de_j = de_i`` (then a generic point of
  ``M_j`` is a generic point of ``M_i``), else
  ``min(de_j + (i - j) phi, de_j + (i - j) d1) / 2``: the package's two bounds
  with ``de_j`` in place of the parameter count ``ds_j``, which their
  derivations allow (``docs/theory.md``, section 11).

The solve works in logarithms (:func:`solve`), so it gives a finite value
where the package's ``exp`` underflows (log-likelihoods thousands of nats
apart); elsewhere it agrees with the package to rounding
(``tests/references/sbic_vignette.R``).

Examples
--------
Eight binary items (``d1 = 8``, the package's default ``phi = 4.5``); ``M_2``
against ``M_1``: ``min(8 + 4.5, 8 + 8) / 2``:

>>> lam = learning_coefficients([1, 2], [8, 17], d1=8, phi=4.5)
>>> float(lam[1, 0]), float(lam[1, 1])
(6.25, 8.5)
>>> [round(v, 4) for v in solve([-100.0, -90.0], lam, 50)]
[-115.6481, -115.3203]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InvalidArgument
from .model import HLCModel
from .validation import check_number

__all__ = ["default_phi", "state_parameters", "learning_coefficients", "solve", "singular_bic", "with_singular_bic"]


def state_parameters(model: HLCModel, node: str) -> int:
    """``d1``: the parameters one state of hidden ``node`` adds besides its weight.

    With the tree rooted at ``node`` (an equivalent model: the same
    distributions and the same ``ds``), a state ``h`` is one row
    ``P(C | node = h)`` for each neighbour ``C``: ``sum (|C| - 1)``. For an
    LC model this is the package's ``numVariables * (numStatesForVariables -
    1)``, with unequal numbers of categories allowed.

    >>> state_parameters(HLCModel.parse("3:2,3,4"), "H1")
    6
    """
    return sum(model.card(c) - 1 for c in model.neighbors(node))


def default_phi(d1: int) -> float:
    """The package's default ``phi = (d1 + 1) / 2`` (``R/LCAs.R``: ``(dimension[1] + 1) / 2``).

    Drton & Plummer (section 6.3) recommend ``phi`` just above ``d1 / 2``,
    where extra states of a mixture fitted with a Dirichlet(``phi``) prior on
    the weights stop being emptied (Rousseau & Mengersen 2011).
    """
    return (d1 + 1) / 2.0


def check_phi(phi: Any) -> float:
    """``phi`` as a positive finite number (the Dirichlet parameter of the hidden node's distribution)."""
    value = check_number("the sBIC's phi (the Dirichlet parameter of the class weights)", phi, low=0)
    if value <= 0:
        raise InvalidArgument(
            f"the sBIC's phi (the Dirichlet parameter of the class weights) must be above 0, got {phi}"
        )
    return value


def learning_coefficients(
    cards: Sequence[int], dims: Sequence[int], d1: int, phi: float, *, exact: bool = False
) -> np.ndarray:
    """``lambda[i, j]`` for ``j <= i`` (``NaN`` above the diagonal) of the chain with ``cards`` states.

    ``dims``: each model's parameter count ``ds`` (the package's sBIC) or
    effective dimension ``de`` (``exact=True``: sBIC+). See the module
    docstring for the formulas. The multiplicity of every coefficient is 1,
    as in the package for mixtures (no ``log log N`` term).
    """
    cards = [int(c) for c in cards]
    k = len(cards)
    lam = np.full((k, k), np.nan)
    for i in range(k):
        lam[i, i] = dims[i] / 2.0
        for j in range(i):
            if exact and dims[j] == dims[i]:
                lam[i, j] = dims[i] / 2.0
            else:
                extra = cards[i] - cards[j]
                lam[i, j] = 0.5 * min(dims[j] + extra * float(phi), dims[j] + extra * d1)
    return lam


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))


def solve(logliks: Sequence[float], lambdas: np.ndarray, n: float) -> list[float]:
    """``sBIC_i = log L'_i`` for the chain, smallest model first (Drton & Plummer, section 3).

    ``L'_ij = exp(LL_i - lambda_ij log n)``; ``L'_1 = L'_11``; for ``i > 1``
    the positive root of ``L'^2 + b L' + c = 0`` with ``b = sum_{j<i} L'_j -
    L'_ii`` and ``c = -sum_{j<i} L'_ij L'_j`` (uniform prior over the models,
    as the package's ``rep(1, numModels)``). Everything is scaled by the
    largest of ``L'_ii``, ``sum L'_j`` and ``sqrt(-c)`` before the root is
    taken, and for ``b > 0`` the root is written ``2 (-c) / (b + sqrt(b^2 -
    4c))``, so neither underflow nor cancellation loses it.
    """
    n = float(n)
    if not n > 1:
        raise InvalidArgument(f"the sBIC needs more than one data row, got n = {n:g}")
    log_n = math.log(n)
    lam = np.asarray(lambdas, dtype=float).tolist()
    out: list[float] = []
    for i, ll in enumerate(logliks):
        log_ii = float(ll) - lam[i][i] * log_n
        if i == 0:
            out.append(log_ii)
            continue
        log_s = _logsumexp(out)
        log_t = _logsumexp([float(ll) - lam[i][j] * log_n + out[j] for j in range(i)])
        scale = max(log_ii, log_s, 0.5 * log_t)
        b = math.exp(log_s - scale) - math.exp(log_ii - scale)
        t = math.exp(log_t - 2.0 * scale)
        root = math.sqrt(b * b + 4.0 * t)
        if b > 0:
            out.append(math.log(2.0) + log_t - scale - math.log(b + root))
        else:
            out.append(scale + math.log((root - b) / 2.0))
    return out


def singular_bic(fits: Sequence[Any], node: str | None = None, phi: float | None = None) -> dict[str, list[float]]:
    """``{"sbic": [...], "sbic_plus": [...]}`` of a sweep's fits, in their order.

    ``fits``: fitted models (each with ``model`` and ``scores``: ``loglik``,
    ``ds``, ``de``, ``n``) that differ only in the cardinality of hidden
    ``node`` (default: the node whose cardinality differs, else the root),
    with strictly increasing cardinalities; one sBIC over exactly these models
    (it depends on which models are compared). ``phi``: the Dirichlet
    parameter, default :func:`default_phi`.
    """
    fits = list(fits)
    if not fits:
        raise InvalidArgument("the sBIC needs at least one fitted model")
    first = fits[0].model
    node = node if node is not None else _swept_node(fits)
    if node not in first or not first.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {first}")
    cards = [f.model.card(node) for f in fits]
    for f in fits[1:]:
        if f.model.with_card(node, first.card(node)) != first:
            raise InvalidArgument(
                f"the sBIC compares models that differ only in |{node}|; {f.model} differs from {first}"
            )
    if any(b <= a for a, b in zip(cards, cards[1:])):
        raise InvalidArgument(f"the sBIC needs |{node}| strictly increasing along the models, got {cards}")
    ns = {float(f.scores.n) for f in fits}
    if len(ns) > 1:
        raise InvalidArgument("the sBIC compares fits to the same data; these fits have different numbers of rows")
    d1 = state_parameters(first, node)
    phi = default_phi(d1) if phi is None else check_phi(phi)
    n = ns.pop()
    logliks = [f.scores.loglik for f in fits]
    out = {}
    for key, attr, exact in (("sbic", "ds", False), ("sbic_plus", "de", True)):
        dims = [int(getattr(f.scores, attr)) for f in fits]
        out[key] = solve(logliks, learning_coefficients(cards, dims, d1, phi, exact=exact), n)
    return out


def with_singular_bic(fits: Sequence[Any], node: str | None = None, phi: float | None = None) -> list[Any]:
    """``fits`` (:class:`effdim.FitResult` of one sweep) with ``sbic``, ``sbic_plus`` and ``sbic_phi``
    of their scores filled by :func:`singular_bic` over exactly these fits."""
    from dataclasses import replace

    fits = list(fits)
    if not fits:
        return fits
    values = singular_bic(fits, node, phi)
    node = node if node is not None else _swept_node(fits)
    used = default_phi(state_parameters(fits[0].model, node)) if phi is None else check_phi(phi)
    return [
        replace(f, scores=replace(f.scores, sbic=a, sbic_plus=b, sbic_phi=used))
        for f, a, b in zip(fits, values["sbic"], values["sbic_plus"])
    ]


def _swept_node(fits: Sequence[Any]) -> str:
    first, last = fits[0].model, fits[-1].model
    changed = [h for h in first.hidden if first.card(h) != last.card(h)]
    return changed[0] if changed else first.root
