"""The parameters of a batch of EM starts, in the layout of :class:`~effdim.em.design.ModelData`.

EM runs all its starts at once (:mod:`effdim.em.driver`): every CPT has a
first axis indexing the starts. :class:`BatchState` holds them; the functions
here make random starts, read a start from
:class:`effdim.distribution.Parameters` and write one back.

In a latent class regression (data with covariates, ``ModelData.design``)
the root's distribution differs from pattern to pattern: ``pi`` is
``(S, k_root, m)``, the multinomial logit ``pi = softmax(x beta)`` of each
pattern's covariates ``x`` (:mod:`effdim.mlogit`), and the coefficients
``beta`` are the state's parameters in its place (:meth:`BatchState.arrays`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..mlogit import GroupedDesign
from .design import ModelData

__all__ = ["BatchState", "params_from_state", "random_starts", "root_shares", "state_from_params"]


@dataclass
class BatchState:
    """Parameters of ``S`` starts at once, in the layout of :class:`ModelData`."""

    pi: np.ndarray  # (S, k_root), or (S, k_root, m) per pattern in a regression
    theta: list  # per hidden index: None for the root, else (S, k_parent, k_i)
    leaf: np.ndarray  # (S, K, D), zero outside the blocks of ``mask``
    beta: np.ndarray | None = None  # (S, p, k_root - 1): a regression's coefficients (effdim.mlogit)
    design: GroupedDesign | None = None  # a regression's covariates per pattern, shared by the starts

    @property
    def S(self) -> int:
        return self.pi.shape[0]

    def select(self, idx: np.ndarray) -> BatchState:
        return BatchState(
            self.pi[idx],
            [None if t is None else t[idx] for t in self.theta],
            self.leaf[idx],
            None if self.beta is None else self.beta[idx],
            self.design,
        )

    def arrays(self) -> list[np.ndarray]:
        """Every parameter array (first axis: the starts), for arithmetic on whole states; in a
        regression the coefficients stand for the root's distribution."""
        root = self.pi if self.beta is None else self.beta
        return [root, *(t for t in self.theta if t is not None), self.leaf]

    def like(self, arrays: Sequence[np.ndarray]) -> BatchState:
        """A state laid out as this one, from arrays in the order of :meth:`arrays`."""
        it = iter(arrays)
        root = next(it)
        theta = [None if t is None else next(it) for t in self.theta]
        if self.beta is None:
            return BatchState(root, theta, next(it))
        return BatchState(self.design.probabilities(root), theta, next(it), root, self.design)

    def distance(self, other: BatchState) -> np.ndarray:
        """Per start, the Euclidean distance between this state's parameters and ``other``'s."""
        return np.sqrt(
            sum(np.square(a - b).reshape(a.shape[0], -1).sum(axis=1) for a, b in zip(self.arrays(), other.arrays()))
        )

    def where(self, mask: np.ndarray, other: BatchState) -> BatchState:
        """Per start: this state where ``mask``, else ``other``."""
        return self.like(
            [np.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), a, b) for a, b in zip(self.arrays(), other.arrays())]
        )

    @staticmethod
    def stack(states: Sequence[BatchState]) -> BatchState:
        first = states[0]
        return BatchState(
            np.concatenate([s.pi for s in states]),
            [None if t is None else np.concatenate([s.theta[i] for s in states]) for i, t in enumerate(first.theta)],
            np.concatenate([s.leaf for s in states]),
            None if first.beta is None else np.concatenate([s.beta for s in states]),
            first.design,
        )


def random_starts(md: ModelData, S: int, rng: np.random.Generator) -> BatchState:
    """``S`` starts with every CPT row uniform on its simplex (Dirichlet(1)); in a regression the
    intercepts give the root such random shares and the other coefficients are 0."""

    def rows(shape):
        x = rng.standard_exponential(shape) + 1e-12
        return x / x.sum(axis=-1, keepdims=True)

    pi = rows((S, md.hidden_cards[0]))
    theta = [None] + [
        rows((S, md.hidden_cards[md.hidden_parent[i]], md.hidden_cards[i])) for i in range(1, md.n_hidden)
    ]
    leaf = np.zeros((S, md.n_hidden_states, md.n_leaf_states))
    for j, p in enumerate(md.observed_parent):
        leaf[:, *md.leaf_block(j)] = rows((S, md.hidden_cards[p], md.observed_cards[j]))
    return _regression(md, BatchState(pi, theta, leaf))


def _regression(md: ModelData, st: BatchState) -> BatchState:
    """``st`` as a regression's state where ``md`` has covariates: the coefficients whose intercepts give
    the root the shares ``st.pi`` (the first design column is the intercept) and no other effect."""
    if md.design is None:
        return st
    log_pi = np.log(np.maximum(st.pi, 1e-300))
    beta = np.zeros((st.S, md.design.rows.shape[1], st.pi.shape[1] - 1))
    beta[:, 0, :] = log_pi[:, 1:] - log_pi[:, :1]
    return BatchState(md.design.probabilities(beta), st.theta, st.leaf, beta, md.design)


def state_from_params(md: ModelData, params: Any) -> BatchState:
    """One start from a :class:`effdim.distribution.Parameters` of the same model."""
    model = md.model
    cpts = params.cpts
    if getattr(params, "model", model) != model:
        pm = params.model
        same = sorted(pm.nodes) == sorted(model.nodes) and all(pm.card(n) == model.card(n) for n in pm.nodes)
        if not same:
            raise InvalidArgument(f"initial parameters are for {pm}, not for {model}")
        if pm.root != model.root:
            params = params.rerooted(model.root)
            cpts = params.cpts
    pi = np.asarray(cpts[md.hidden[0]], dtype=float)[None, :].copy()
    theta = [None] + [np.asarray(cpts[h], dtype=float)[None].copy() for h in md.hidden[1:]]
    leaf = np.zeros((1, md.n_hidden_states, md.n_leaf_states))
    for j, o in enumerate(md.observed):
        leaf[0, *md.leaf_block(j)] = np.asarray(cpts[o], dtype=float)
    return _regression(md, BatchState(pi, theta, leaf))


def params_from_state(md: ModelData, st: BatchState, s: int = 0):
    """Start ``s`` as :class:`effdim.distribution.Parameters`; in a regression the root's table is its
    mean share over the data's rows (:func:`root_shares`)."""
    from ..distribution import Parameters

    cpts = {md.hidden[0]: root_shares(md, st.pi[s])}
    for i in range(1, md.n_hidden):
        cpts[md.hidden[i]] = st.theta[i][s].copy()
    for j, o in enumerate(md.observed):
        cpts[o] = st.leaf[s, *md.leaf_block(j)].copy()
    # renormalise away rounding so that Parameters' row-sum check never trips
    for n, t in cpts.items():
        cpts[n] = t / t.sum(axis=-1, keepdims=True)
    return Parameters(md.model, cpts)


def root_shares(md: ModelData, pi: np.ndarray) -> np.ndarray:
    """The root's share of each state: ``pi`` itself, or in a regression (``pi`` per pattern,
    ``(k, m)``) its mean over the data's rows, weighted by the patterns' counts."""
    return pi.copy() if pi.ndim == 1 else pi @ md.counts / md.counts.sum()
