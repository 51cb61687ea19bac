"""How much memory EM needs, estimated in closed form and checked before anything is allocated.

EM's arrays grow with the hidden states ``K`` (all hidden nodes' states laid
end to end), the leaf states ``D``, the distinct response patterns ``m``, the
joint states of the design's column blocks (:func:`effdim.em.blocks.column_blocks`)
and the number of starts run as one batch. ``1000000000:2,2,2`` or a leaf
with a billion states would need tens of GiB, and a hundred million restarts
as much; :func:`check_em_memory` refuses them with
:class:`effdim.limits.SizeLimitError` under the same memory budget as the
rank of the Jacobian (:data:`effdim.limits.DEFAULT_MAX_BYTES`), so the CLI,
a notebook or the dashboard's server stays alive.

The estimate counts the arrays of :class:`~effdim.em.design.ModelData` (the
design) and, per start, the parameter copies of one SQUAREM cycle and the
block tables of one E-step (:mod:`effdim.em.iteration`, :mod:`effdim.em.estep`;
the E-step's pass over the patterns keeps nothing per pattern,
:mod:`effdim.em.kernel`), with the factors below; the queries that return
messages or posteriors per pattern (:mod:`effdim.em.queries`) add
:data:`PATTERN_ARRAYS` arrays of (hidden states x patterns). It is an upper
estimate within a small factor:
``tests/test_em_limits.py::test_memory_estimate_bounds_the_measured_peak`` checks
it against the peak measured with ``tracemalloc``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..limits import DEFAULT_MAX_BYTES, SizeLimitError, format_bytes, short_text
from ..model import HLCModel
from .blocks import column_blocks
from .kernel import CHUNKS_PER_THREAD, SPARE_ACCUMULATORS, threads

__all__ = ["EMMemory", "check_em_memory", "em_memory"]

#: Bytes of one float64 entry.
FLOAT = 8
#: Copies of the parameters alive in one SQUAREM cycle (three EM points, the
#: extrapolation's differences and trial points, the normalised and stabilised points).
PARAMETER_COPIES = 12
#: Arrays of shape (hidden states, patterns) alive in an E-step that keeps its messages (upward messages,
#: messages to the parents, posteriors, their logarithms below and outside each node, and temporaries).
PATTERN_ARRAYS = 12
#: Arrays of shape (hidden states, block joint states) per start in one E-step (the tables in logarithms and in
#: linear space, their difference, the counts per joint state of each thread and their sum, the leaf counts).
TABLE_ARRAYS = 8


@dataclass(frozen=True)
class EMMemory:
    """Estimated bytes of EM on one model and data: ``design`` once, ``per_start`` for every start, and
    ``messages`` for a query that keeps every node's messages per pattern (one start).

    ``largest`` names the two sizes whose product dominates the estimate,
    among ``"hidden"`` (all hidden states), ``"leaf"`` (all leaf states),
    ``"patterns"`` (distinct patterns) and ``"blocks"`` (the design's joint
    block states, which grow with the leaves' states): the culprit a
    message names.
    """

    design: int
    per_start: int
    messages: int
    largest: tuple[str, str]
    #: Bytes of the accumulators of the E-step's chunks beyond one per thread, per start (at most
    #: :data:`effdim.em.kernel.SPARE_ACCUMULATORS` entries in all).
    spare_chunks: int = 0

    def total(self, starts: int, messages: bool = False) -> int:
        """Bytes of a batch of ``starts`` starts, design included (and the messages of one, with ``messages``)."""
        spare = min(FLOAT * SPARE_ACCUMULATORS, int(starts) * self.spare_chunks)
        return self.design + int(starts) * self.per_start + spare + (self.messages if messages else 0)


def em_memory(model: HLCModel, n_patterns: int, radix: list[int]) -> EMMemory:
    """:class:`EMMemory` of ``model`` on ``n_patterns`` distinct patterns.

    ``radix[j]``: the states of leaf ``j`` in the data (its cardinality, one
    more when it has missing cells), in the order of ``model.observed``.
    Closed form: nothing the size of the model is allocated.

    >>> cost = em_memory(HLCModel.parse("1000000000:2,2,2"), 5, [2, 2, 2])
    >>> cost.largest, cost.per_start > 2**40
    (('hidden', 'leaf'), True)
    """
    blocks = column_blocks(radix, [model.parent(o) for o in model.observed])
    size = {
        "hidden": sum(model.card(h) for h in model.hidden),
        "leaf": sum(model.card(o) for o in model.observed),
        "patterns": int(n_patterns),
        "blocks": sum(math.prod(radix[j] for j in block) for block in blocks),
    }
    # (bytes per product, the two sizes multiplied); design first, then per start
    design_terms = [
        (1 + FLOAT, ("hidden", "leaf")),  # the leaf mask, as booleans and as floats
        (3 * FLOAT, ("blocks", "leaf")),  # each block's spelling, its transpose and its missing cells
        (4 * FLOAT * len(blocks), ("patterns", None)),  # block codes, per block and per pattern, and their making
        (2 * FLOAT * len(radix), ("patterns", None)),  # the patterns as the model orders them, and a copy
        (FLOAT * (len(radix) + 6), ("blocks", None)),  # the block bookkeeping
    ]
    start_terms = [
        ((PARAMETER_COPIES + 4) * FLOAT, ("hidden", "leaf")),  # leaf CPTs, their logs and expected counts
        (TABLE_ARRAYS * FLOAT, ("hidden", "blocks")),  # the block tables and the counts per joint state
    ]
    message_term = (PATTERN_ARRAYS * FLOAT, ("hidden", "patterns"))

    def amount(factor, pair):
        return factor * size[pair[0]] * (size[pair[1]] if pair[1] else 1)

    pairs = sum(model.card(model.parent(h)) * model.card(h) for h in model.hidden[1:])
    design = sum(amount(f, pair) for f, pair in design_terms)
    per_start = sum(amount(f, pair) for f, pair in start_terms)
    per_start += PARAMETER_COPIES * FLOAT * (pairs + model.card(model.root))
    _, largest = max([*design_terms, *start_terms, message_term], key=lambda term: amount(*term))
    accumulators = 1 + model.card(model.root) + pairs + amount(1, ("hidden", "leaf")) + amount(1, ("hidden", "blocks"))
    spare_chunks = FLOAT * (CHUNKS_PER_THREAD - 1) * threads() * accumulators if threads() > 1 else 0
    return EMMemory(
        design=int(design),
        per_start=int(per_start),
        messages=int(amount(*message_term)),
        largest=largest,
        spare_chunks=int(spare_chunks),
    )


def check_em_memory(
    model: HLCModel,
    n_patterns: int,
    radix: list[int],
    starts: int,
    max_bytes: int | None = None,
    messages: bool = False,
) -> EMMemory:
    """:func:`em_memory` of ``starts`` starts (and the messages of one, with ``messages``), refused with
    :class:`~effdim.limits.SizeLimitError` above ``max_bytes``.

    The message names the culprit in the user's words: the node with the
    most states, the number of distinct patterns, or the number of starts
    (with how many would fit).
    """
    limit = DEFAULT_MAX_BYTES if max_bytes is None else int(max_bytes)
    cost = em_memory(model, n_patterns, radix)
    needed = cost.total(starts, messages)
    if needed <= limit:
        return cost
    what = f"fitting {short_text(str(model))} by EM would need about {format_bytes(needed)}"
    over = f"more than the limit of {format_bytes(limit)}"
    if cost.total(1, messages) <= limit:
        room = limit - cost.design - (cost.messages if messages else 0)
        # the starts that fit whether the chunks' spare accumulators reach their cap or grow with the starts
        fit = max(
            1,
            room // max(cost.per_start + cost.spare_chunks, 1),
            (room - FLOAT * SPARE_ACCUMULATORS) // max(cost.per_start, 1),
        )
        fits = "only 1 start fits" if fit == 1 else f"at most {fit:,} starts fit"
        raise SizeLimitError(f"{what} for {starts:,} starts, {over}: {fits}", needed=needed, limit=limit)
    raise SizeLimitError(f"{what}, {over}: {_culprit(model, n_patterns, cost.largest)}", needed=needed, limit=limit)


def _culprit(model: HLCModel, n_patterns: int, largest: tuple[str, str]) -> str:
    """The larger of the two sizes behind the dominant term, as the user knows it."""
    hidden = max(model.hidden, key=model.card)
    leaf = max(model.observed, key=model.card)
    known = {"hidden": model.card(hidden), "leaf": model.card(leaf), "blocks": model.card(leaf), "patterns": n_patterns}
    culprit = max((name for name in largest if name), key=known.get)
    if culprit == "patterns":
        return f"the data have {n_patterns:,} distinct response patterns"
    if culprit == "hidden":
        return f"hidden node {hidden} has {model.card(hidden):,} states"
    return f"leaf {leaf} has {model.card(leaf):,} states"
