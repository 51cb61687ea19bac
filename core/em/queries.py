"""Quantities at one given parameter point, each one exact E-step (:mod:`effdim.em.estep`).

The log-likelihood, expected counts, per-pattern log-probabilities,
posteriors and messages at a :class:`effdim.distribution.Parameters`, used by
the scores, the diagnostics, the profiles and the structure search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidArgument
from .design import ModelData
from .estep import estep
from .result import expected_counts
from .state import BatchState, state_from_params

__all__ = ["e_step", "loglikelihood", "messages", "pattern_loglik", "posterior"]


def _single(params: Any, data: Any) -> tuple[ModelData, BatchState]:
    md = data if isinstance(data, ModelData) and data.model == params.model else ModelData(params.model, data)
    return md, state_from_params(md, params)


def e_step(params: Any, data: Any) -> tuple[float, dict]:
    """``(log p(D | theta), expected counts N'_ijk)`` at ``params`` (one exact E-step)."""
    md, st = _single(params, data)
    stats = estep(md, st, 0.0)
    return float(stats.ll[0]), expected_counts(md, stats, 0)


def loglikelihood(params: Any, data: Any) -> float:
    """``log p(D | theta) = sum_p N(p) log P(p)`` (natural log), missing cells marginalised."""
    md, st = _single(params, data)
    return float(estep(md, st, 0.0, counts=False).ll[0])


def pattern_loglik(params: Any, data: Any) -> tuple[ModelData, np.ndarray]:
    """``log P(p)`` of every unique pattern; returns ``(ModelData, (m,) array)``."""
    md, st = _single(params, data)
    stats = estep(md, st, 0.0, counts=False, keep_post=True)
    return md, stats.llp[0]


def posterior(params: Any, data: Any, node: str | None = None) -> tuple[ModelData, np.ndarray]:
    """Posterior ``P(node | pattern)`` of a hidden node for every unique pattern.

    Returns ``(ModelData, (m, |node|) array)``; rows follow ``ModelData.patterns``.
    ``node`` defaults to the root.
    """
    md, st = _single(params, data)
    node = md.hidden[0] if node is None else node
    if node not in md.hidden_index:
        raise InvalidArgument(f"{node!r} is not a hidden node of {md.model}; hidden nodes: {', '.join(md.hidden)}")
    stats = estep(md, st, 0.0, keep_post=True)
    return md, np.ascontiguousarray(stats.post[md.hidden_index[node]][0].T)


def messages(params: Any, data: Any) -> tuple[ModelData, dict, dict]:
    """The per-pattern messages of one exact E-step at ``params``.

    Returns ``(ModelData, below, outside)``: for every hidden node ``H``,
    ``below[H]`` is ``log P(evidence below H | H)`` and ``outside[H]`` is
    ``log P(evidence outside the subtree of H, H)``, each ``(|H|, m)`` with
    patterns ordered as ``ModelData.patterns``; ``below + outside`` is
    ``log P(pattern, H)``. :mod:`effdim.structure` uses them to hold the
    untouched part of a tree fixed while it fits the touched families
    (the restricted likelihood of EAST).
    """
    md, st = _single(params, data)
    stats = estep(md, st, 0.0, keep_post=True)
    below = {h: stats.below[i][0] for i, h in enumerate(md.hidden)}
    outside = {h: stats.outside[i][0] for i, h in enumerate(md.hidden)}
    return md, below, outside
