"""The parameters of a batch of EM starts, in the layout of :class:`~effdim.em.design.ModelData`.

EM runs all its starts at once (:mod:`effdim.em.driver`): every CPT has a
first axis indexing the starts. :class:`BatchState` holds them; the functions
here make random starts, read a start from
:class:`effdim.distribution.Parameters` and write one back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from .design import ModelData

__all__ = ["BatchState", "params_from_state", "random_starts", "state_from_params"]


@dataclass
class BatchState:
    """Parameters of ``S`` starts at once, in the layout of :class:`ModelData`."""

    pi: np.ndarray  # (S, k_root)
    theta: list  # per hidden index: None for the root, else (S, k_parent, k_i)
    leaf: np.ndarray  # (S, K, D), zero outside the blocks of ``mask``

    @property
    def S(self) -> int:
        return self.pi.shape[0]

    def select(self, idx: np.ndarray) -> BatchState:
        return BatchState(
            self.pi[idx],
            [None if t is None else t[idx] for t in self.theta],
            self.leaf[idx],
        )

    def arrays(self) -> list[np.ndarray]:
        """Every parameter array (first axis: the starts), for arithmetic on whole states."""
        return [self.pi, *(t for t in self.theta if t is not None), self.leaf]

    def like(self, arrays: Sequence[np.ndarray]) -> BatchState:
        """A state laid out as this one, from arrays in the order of :meth:`arrays`."""
        it = iter(arrays)
        pi = next(it)
        theta = [None if t is None else next(it) for t in self.theta]
        return BatchState(pi, theta, next(it))

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
        return BatchState(
            np.concatenate([s.pi for s in states]),
            [
                None if t is None else np.concatenate([s.theta[i] for s in states])
                for i, t in enumerate(states[0].theta)
            ],
            np.concatenate([s.leaf for s in states]),
        )


def random_starts(md: ModelData, S: int, rng: np.random.Generator) -> BatchState:
    """``S`` starts with every CPT row uniform on its simplex (Dirichlet(1))."""

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
    return BatchState(pi, theta, leaf)


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
    return BatchState(pi, theta, leaf)


def params_from_state(md: ModelData, st: BatchState, s: int = 0):
    from ..distribution import Parameters

    cpts = {md.hidden[0]: st.pi[s].copy()}
    for i in range(1, md.n_hidden):
        cpts[md.hidden[i]] = st.theta[i][s].copy()
    for j, o in enumerate(md.observed):
        cpts[o] = st.leaf[s, *md.leaf_block(j)].copy()
    # renormalise away rounding so that Parameters' row-sum check never trips
    for n, t in cpts.items():
        cpts[n] = t / t.sum(axis=-1, keepdims=True)
    return Parameters(md.model, cpts)
