"""The data arranged for one model: patterns, counts and the block one-hot design.

Each distinct pattern once, with its count, and the leaves of each hidden node
at once through blocks of their columns' joint states (:meth:`ModelData._design`),
so the cost of an E-step (:mod:`effdim.em.estep`) depends on the number of
*unique* patterns: 243,000 rows over 5 binary columns cost what their at most 32
distinct patterns cost. :attr:`ModelData.layout` is the same arrangement as
the compiled pass of :mod:`effdim.em.kernel` reads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..mlogit import GroupedDesign
from ..model import HLCModel
from .blocks import column_blocks
from .kernel import Layout
from .memory import check_em_memory

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
        Memory budget of the design and one start with its messages per pattern (:mod:`effdim.em.memory`;
        default :data:`effdim.limits.DEFAULT_MAX_BYTES`): above it
        :class:`effdim.limits.SizeLimitError` is raised before any array the
        size of the model is allocated. ``radix[j]`` holds leaf ``j``'s
        states in the data (one more when it has missing cells).
    design:
        A latent class regression's covariates, one row per pattern of
        ``dataset`` (:mod:`effdim.regression`), which must then be arranged
        for the model already: its patterns are used as they are, a pattern
        of answers once per distinct row of covariates.
    """

    def __init__(
        self,
        model: HLCModel,
        dataset: Any,
        mapping: dict[str, str] | None = None,
        max_bytes: int | None = None,
        design: np.ndarray | None = None,
    ):
        from ..data import check_matches_model
        from ..validation import as_dataset

        self.design = None if design is None else GroupedDesign.of(design)
        if self.design is None:
            data = check_matches_model(as_dataset(dataset), model, mapping)
        else:  # the patterns are taken as they are: their order is the design's
            data = as_dataset(dataset)
            if data.columns != tuple(model.observed) or len(self.design.index) != data.n_patterns:
                raise InvalidArgument("a design needs data arranged for the model, one design row per pattern")
        self.model = model
        self.dataset = data
        self.patterns = data.patterns
        self.counts = np.array(data.counts, dtype=np.float64)
        self.counts.flags.writeable = False  # one type for the compiled pass, whatever the data's array was
        self.n_rows = float(data.n_rows)
        self.n_patterns = int(self.patterns.shape[0])
        #: A regression's count of rows per distinct row of covariates (``design.rows``).
        self.design_counts = None if self.design is None else self.design.sums(self.counts[None, :])[0]
        missing = (self.patterns < 0).any(axis=0)
        self.radix = [model.card(o) + int(missing[j]) for j, o in enumerate(model.observed)]
        check_em_memory(model, self.n_patterns, self.radix, 1, max_bytes, messages=True)
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
        """The leaves' evidence and counts by column blocks, each block under one hidden node.

        The leaves of each hidden node are grouped into blocks of at most
        :data:`effdim.em.blocks.BLOCK_STATES` joint states (a missing cell is
        one more state of its column; :func:`effdim.em.blocks.column_blocks`).
        A pattern is one joint state per block (``LeafBlock.codes``) and
        ``LeafBlock.spell`` spells each joint state out into its leaves'
        states. So a hidden node's leaf evidence is a lookup in its own
        blocks' tables (:meth:`block_tables`) and its expected leaf
        counts a sum of pattern weights per joint state (:meth:`leaf_counts`):
        work in each node's own states, where blocks shared by every hidden
        node cost all hidden states times all blocks.
        """
        patterns = self.patterns
        self.has_missing = bool((patterns < 0).any())
        radix = self.radix
        self.blocks = []
        for block in column_blocks(radix, self.observed_parent):
            rad = [radix[j] for j in block]
            n_states = math.prod(rad)
            code = np.zeros(self.n_patterns, dtype=np.int64)
            for j, r in zip(block, rad):
                digit = np.where(patterns[:, j] < 0, self.observed_cards[j], patterns[:, j])
                code = code * r + digit
            leaf_states = np.concatenate(
                [np.arange(self.observed_offsets[j], self.observed_offsets[j + 1]) for j in block]
            )
            spell = np.zeros((n_states, leaf_states.size))
            missing = np.zeros((n_states, leaf_states.size))
            rest, first = np.arange(n_states), leaf_states.size
            for j, r in reversed(list(zip(block, rad))):
                digit = rest % r
                rest //= r
                first -= self.observed_cards[j]
                seen = digit < self.observed_cards[j]
                spell[np.flatnonzero(seen), first + digit[seen]] = 1.0
                missing[np.flatnonzero(~seen), first : first + self.observed_cards[j]] = 1.0
            self.blocks.append(
                LeafBlock(
                    rows=self.hidden_slices[self.observed_parent[block[0]]],
                    leaf_states=leaf_states,
                    codes=code,
                    spell=spell,
                    spell_t=np.ascontiguousarray(spell.T),
                    missing=missing if self.has_missing else None,
                )
            )
        self.layout = self._layout()
        self.joint_counts = np.concatenate(
            [np.bincount(b.codes, weights=self.counts, minlength=b.spell.shape[0]) for b in self.blocks] or [[]]
        )  # the patterns' counts per joint state of each block, in the order of the tables' joint states

    def leaf_block(self, j: int) -> tuple[slice, slice]:
        """Where leaf ``j``'s CPT ``P(O_j | parent)`` sits in a (hidden states, leaf states) array."""
        return (
            self.hidden_slices[self.observed_parent[j]],
            slice(int(self.observed_offsets[j]), int(self.observed_offsets[j + 1])),
        )

    def _layout(self) -> Layout:
        """The tree and the design as :mod:`effdim.em.kernel` reads them (:class:`~effdim.em.kernel.Layout`)."""
        H = self.n_hidden
        kids = self.hidden_children
        msg_sizes = [0] + [self.hidden_cards[self.hidden_parent[i]] for i in range(1, H)]
        theta_sizes = [0] + [self.hidden_cards[self.hidden_parent[i]] * self.hidden_cards[i] for i in range(1, H)]
        node_of = [self.hidden_slices.index(b.rows) for b in self.blocks]
        by_node = [[j for j, n in enumerate(node_of) if n == i] for i in range(H)]
        joint = [b.spell.shape[0] for b in self.blocks]
        table = [joint[j] * self.hidden_cards[node_of[j]] for j in range(len(self.blocks))]

        def ptr(sizes):
            return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

        codes = np.stack([b.codes for b in self.blocks]) if self.blocks else np.zeros((0, self.n_patterns))
        return Layout(
            parent=np.asarray(self.hidden_parent, dtype=np.int64),
            card=np.asarray(self.hidden_cards, dtype=np.int64),
            offset=np.asarray(self.hidden_offsets, dtype=np.int64),
            kid_ptr=ptr([len(k) for k in kids]),
            kids=np.asarray([c for k in kids for c in k], dtype=np.int64),
            msg_offset=ptr(msg_sizes),
            theta_offset=ptr(theta_sizes),
            block_ptr=ptr([len(b) for b in by_node]),
            blocks=np.asarray([j for b in by_node for j in b], dtype=np.int64),
            table_offset=ptr(table),
            joint_offset=ptr(joint),
            codes=np.ascontiguousarray(codes, dtype=np.int64),
        )

    def block_tables(self, log_leaf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each block's log table, joint states x its node's states, of every start: ``(S, table entries)``
        laid out as :class:`~effdim.em.kernel.Layout` says, and its column maxima ``(S, joint states)``.

        ``log_leaf[s, h, d]`` is start ``s``'s log ``P(leaf state d | hidden state h)``, read only
        within the blocks of the mask (:meth:`leaf_block`)."""
        S = log_leaf.shape[0]
        logs = np.empty((S, self.layout.n_table))
        maxima = np.empty((S, int(self.layout.joint_offset[-1])))
        for j, b in enumerate(self.blocks):
            joint = (log_leaf[:, b.rows, b.leaf_states] @ b.spell_t).transpose(0, 2, 1)  # (S, joint states, k)
            lo, hi = self.layout.table_offset[j], self.layout.table_offset[j + 1]
            logs[:, lo:hi] = joint.reshape(S, -1)
            maxima[:, self.layout.joint_offset[j] : self.layout.joint_offset[j + 1]] = joint.max(axis=2)
        return logs, maxima

    def leaf_counts(self, per_state: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        """Expected leaf counts (S, K, D) from ``per_state`` (S, table entries): per block joint state and
        node state, the sum of ``N(p) P(h | p)`` over the patterns in that joint state (laid out as the
        tables of :meth:`block_tables`).

        A missing leaf under ``h`` gains ``sum_p N(p) P(h | p) P(o | h)``, with ``leaf`` the CPTs (S, K, D)."""
        S = per_state.shape[0]
        out = np.zeros((S, self.n_hidden_states, self.n_leaf_states))
        for j, b in enumerate(self.blocks):
            lo, hi = self.layout.table_offset[j], self.layout.table_offset[j + 1]
            joint = per_state[:, lo:hi].reshape(S, b.spell.shape[0], -1).transpose(0, 2, 1)  # (S, k, joint states)
            counts = joint @ b.spell
            if b.missing is not None:
                counts += leaf[:, b.rows, b.leaf_states] * (joint @ b.missing)
            out[:, b.rows, b.leaf_states] = counts
        return out


@dataclass(frozen=True)
class LeafBlock:
    """Columns of the leaves of one hidden node, taken together (:meth:`ModelData._design`).

    ``rows``: the hidden node's states (a slice of all hidden states); ``leaf_states``: its leaves'
    states (indices into all leaf states); ``codes``: each pattern's joint state; ``spell`` (joint
    states x leaf states): 1 where a joint state has that leaf state, ``spell_t`` its transpose;
    ``missing``: 1 where a joint state leaves that leaf state's column missing (``None`` without
    missing cells).
    """

    rows: slice
    leaf_states: np.ndarray
    codes: np.ndarray
    spell: np.ndarray
    spell_t: np.ndarray
    missing: np.ndarray | None
