"""The data arranged for one model: patterns, counts and the block one-hot design.

All patterns are handled at once as arrays (patterns along the contiguous
axis), and all observed leaves at once through the one-hot design
``Z = B E`` (:meth:`ModelData._design`), so the cost of an E-step
(:mod:`effdim.em.estep`) depends on the number of *unique* patterns: 243,000
rows over 5 binary columns cost what their at most 32 distinct patterns cost.
Large products avoid multi-threaded BLAS (:mod:`effdim.em.products`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from ..model import HLCModel
from .blocks import DENSE_LIMIT, column_blocks
from .memory import check_em_memory
from .products import matmul, small_product

__all__ = ["ModelData"]


class ModelData:
    """Data arranged for one model: the design matrix and index bookkeeping.

    Built once per (data, model) pair and reused by every EM run and E-step.

    Hidden nodes are numbered in pre-order (``hidden``, ``hidden_index``) and
    their states laid end to end (``n_hidden_states`` in all,
    ``hidden_slices[i]`` for node ``i``); the leaves' states likewise
    (``n_leaf_states``, ``observed_offsets``, ``leaf_column`` = the leaf of
    each leaf state). ``counts`` holds the count of each of the
    ``n_patterns`` unique patterns, ``n_rows`` their sum ``|D|``.

    Parameters
    ----------
    model:
        The HLC model.
    dataset:
        A :class:`effdim.data.Dataset` (arranged with
        :func:`effdim.data.check_matches_model`; ``mapping`` is passed on) or a
        pandas DataFrame (converted by :func:`effdim.validation.as_dataset`).
    max_bytes:
        Memory budget of the design and one start (:mod:`effdim.em.memory`;
        default :data:`effdim.limits.DEFAULT_MAX_BYTES`): above it
        :class:`effdim.limits.SizeLimitError` is raised before any array the
        size of the model is allocated. ``radix[j]`` holds leaf ``j``'s
        states in the data (one more when it has missing cells).
    """

    def __init__(
        self, model: HLCModel, dataset: Any, mapping: dict[str, str] | None = None, max_bytes: int | None = None
    ):
        from ..data import check_matches_model
        from ..validation import as_dataset

        data = check_matches_model(as_dataset(dataset), model, mapping)
        self.model = model
        self.dataset = data
        self.patterns = data.patterns
        self.counts = np.ascontiguousarray(data.counts, dtype=np.float64)
        self.n_rows = float(data.n_rows)
        self.n_patterns = int(self.patterns.shape[0])
        missing = (self.patterns < 0).any(axis=0)
        self.radix = [model.card(o) + int(missing[j]) for j, o in enumerate(model.observed)]
        check_em_memory(model, self.n_patterns, self.radix, 1, max_bytes)
        self._compile(model)

    def _compile(self, model: HLCModel) -> None:
        hidden = model.hidden  # pre-order: the root first, parents before children
        self.hidden = hidden
        self.hidden_index = {h: i for i, h in enumerate(hidden)}
        self.n_hidden = len(hidden)
        self.hidden_cards = [model.card(h) for h in hidden]
        self.hidden_offsets = np.concatenate([[0], np.cumsum(self.hidden_cards)]).astype(int)
        self.n_hidden_states = int(self.hidden_offsets[-1])
        offsets = self.hidden_offsets
        self.hidden_slices = [slice(int(offsets[i]), int(offsets[i + 1])) for i in range(self.n_hidden)]
        self.hidden_parent = [-1 if i == 0 else self.hidden_index[model.parent(h)] for i, h in enumerate(hidden)]
        self.hidden_children = [[self.hidden_index[c] for c in model.children(h) if model.is_hidden(c)] for h in hidden]
        observed = model.observed
        self.observed = observed
        self.observed_cards = [model.card(o) for o in observed]
        self.observed_parent = [self.hidden_index[model.parent(o)] for o in observed]
        self.observed_offsets = np.concatenate([[0], np.cumsum(self.observed_cards)]).astype(int)
        self.n_leaf_states = int(self.observed_offsets[-1])
        self.leaf_column = np.repeat(np.arange(len(observed)), self.observed_cards)
        mask = np.zeros((self.n_hidden_states, self.n_leaf_states), dtype=bool)
        for j, _p in enumerate(self.observed_parent):
            mask[self.leaf_block(j)] = True
        self.leaf_mask = mask
        self.leaf_mask_float = mask.astype(np.float64)
        self._design()

    def _design(self) -> None:
        """Block one-hot design: ``Z = B E`` without forming ``Z``.

        ``Z`` (patterns x leaf states, ``Z[p, off_j + v] = 1`` when pattern
        ``p`` has value ``v`` in column ``j``) would be read twice per EM step.
        Instead consecutive columns are grouped into blocks of at most
        :data:`effdim.em.blocks.BLOCK_STATES` joint states (a missing cell is one more state of
        its column); ``B`` (patterns x block states) has one 1 per block and
        row, ``E`` (block states x leaf states) spells each joint state out.
        ``Em`` marks which block states leave column ``j`` missing.
        """
        patterns = self.patterns
        ncol = len(self.observed)
        missing = patterns < 0
        self.has_missing = bool(missing.any())
        radix = self.radix
        blocks = column_blocks(radix)
        offsets, total = [], 0
        code_cols = []
        e_rows, e_cols, m_rows, m_cols = [], [], [], []
        for block in blocks:
            rad = [radix[j] for j in block]
            n_states = math.prod(rad)
            code = np.zeros(self.n_patterns, dtype=np.int64)
            for j, r in zip(block, rad):
                digit = np.where(patterns[:, j] < 0, self.observed_cards[j], patterns[:, j])
                code = code * r + digit
            code_cols.append(code + total)
            states = np.arange(n_states)
            rest = states.copy()
            for j, r in reversed(list(zip(block, rad))):
                digit = rest % r
                rest //= r
                seen = digit < self.observed_cards[j]
                e_rows.append(total + states[seen])
                e_cols.append(self.observed_offsets[j] + digit[seen])
                m_rows.append(total + states[~seen])
                m_cols.append(np.full(int((~seen).sum()), j))
            offsets.append(total)
            total += n_states
        self.n_block_states = total
        E = np.zeros((total, self.n_leaf_states))
        E[np.concatenate(e_rows), np.concatenate(e_cols)] = 1.0
        self.block_leaf = E
        self.block_leaf_t = np.ascontiguousarray(E.T)
        if self.has_missing:
            Em = np.zeros((total, ncol))
            Em[np.concatenate(m_rows), np.concatenate(m_cols)] = 1.0
            self.block_missing = Em
        else:
            self.block_missing = None
        codes = np.stack(code_cols, axis=1)  # (m, n_blocks)
        self.block_codes = [np.ascontiguousarray(codes[:, b]) for b in range(codes.shape[1])]
        rows = np.repeat(np.arange(self.n_patterns), len(blocks))
        self.pattern_block_sparse = sparse.csr_matrix(
            (np.ones(rows.size), (rows, codes.reshape(-1))), shape=(self.n_patterns, total)
        )
        self.pattern_block_t_sparse = self.pattern_block_sparse.T.tocsr()
        self.dense = self.n_patterns * total <= DENSE_LIMIT
        if self.dense:
            B = np.zeros((self.n_patterns, total))
            B[rows, codes.reshape(-1)] = 1.0
            self.pattern_block = B
            self.pattern_block_t = np.ascontiguousarray(B.T)

    def leaf_block(self, j: int) -> tuple[slice, slice]:
        """Where leaf ``j``'s CPT ``P(O_j | parent)`` sits in a (hidden states, leaf states) array."""
        return (
            self.hidden_slices[self.observed_parent[j]],
            slice(int(self.observed_offsets[j]), int(self.observed_offsets[j + 1])),
        )

    def leaf_messages(self, x: np.ndarray) -> np.ndarray:
        """``x Z^T`` = ``(x E^T) B^T``: (rows, D) -> (rows, m), each pattern's sum of leaf entries."""
        y = matmul(x, self.block_leaf_t)  # (rows, block states)
        if self.dense and small_product(y.shape[0], self.n_block_states, self.n_patterns):
            return y @ self.pattern_block_t
        out = np.take(y, self.block_codes[0], axis=1)
        for code in self.block_codes[1:]:
            out += np.take(y, code, axis=1)
        return out

    def block_counts(self, r: np.ndarray) -> np.ndarray:
        """``r B``: (rows, m) -> (rows, block states), pattern weights summed per block state."""
        if self.dense and small_product(r.shape[0], self.n_patterns, self.n_block_states):
            return r @ self.pattern_block
        return np.ascontiguousarray((self.pattern_block_t_sparse @ np.ascontiguousarray(r.T)).T)
