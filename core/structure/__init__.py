"""Learning the latent tree from data: structure search scored with the effective dimension.

Today's other searches (:mod:`effdim.search`) choose hidden cardinalities on
a tree the user draws. :func:`learn_structure` learns the tree itself, in the
manner of EAST (Chen, Zhang, Liu, Poon & Wang, "Model-based multidimensional
clustering of categorical data", Artificial Intelligence 176, 2012), with any
score of :mod:`effdim.scores` driving it (docs/structure.md).

The package follows the search's seams: :mod:`.start` (mutual information,
the islands start), :mod:`.moves` (the operators), :mod:`.local_em` (the
restricted likelihood), :mod:`.local_de` (``de`` updated locally),
:mod:`.settings` (how it runs), :mod:`.learn` (the search), :mod:`.result` (what it returns),
:mod:`.compare` (Robinson-Foulds).

Start
    The LC model over all columns, or (``start="islands"``, the default) a
    grouping by mutual information: every column joins its nearest neighbour
    (largest empirical mutual information); each connected group gets a
    binary hidden parent, and the hidden parents are joined by a maximum
    spanning tree of the groups' largest pairwise mutual information (Chow &
    Liu 1968). Or any model given by the caller.

Operators (EAST, Section 4): see :mod:`.moves`. ``NI`` gathers a group of
    children of ``H`` (every pair with a hidden child, and the most cohesive
    pairs and larger groups) under a new node with ``|H|`` or 2 states; ``ND``
    from either end of an edge; ``NM`` merges the two ends of an edge into one
    node with a state more than the larger, and ``NS`` splits a node of ``k >= 3``
    states into two adjacent nodes of ``k - 1`` (the inverse); ``NR``, ``SI``,
    ``SD`` as in EAST.

    Only regular candidates are kept (Section 4 of Kocka & Zhang 2002:
    irregular models are equivalent to smaller regular ones), so
    Corollary 4.1 gives ``de = ds - sum_H (ds(M_H) - de(M_H))`` over the
    local LC models ``M_H``. A move changes only the local LC models of the
    hidden nodes whose neighbourhood it changes; :class:`LocalDe` recomputes
    just those (and the local ranks are cached per ``(|H|, neighbour
    cardinalities)`` in :mod:`effdim.dimensions`).

Candidates: restricted likelihood (EAST, Section 5)
    Each candidate inherits every CPT of the current fit that it shares
    (:func:`transfer_parameters`); only the families the move changes
    (:func:`changed_families`) are re-estimated, by EM on the few nodes
    around them with the rest of the tree entering as fixed per-pattern
    messages (:func:`local_fit`), accelerated by SQUAREM. Two starts: the
    exact inheritance (which reproduces the current distribution for ``SI``
    and an ``NI`` with ``|H|`` states, so their restricted log-likelihood
    never falls below the current one) and one with the touched families
    perturbed.

Acceptance
    EAST's phases: the moves that never add parameters (NR, ND, SD) first,
    ranked by restricted score gain; when none is accepted, the expansions
    (NI, SI, NM), ranked by EAST's improvement ratio (gain per added parameter),
    and when none of those either, the node splits (NS).
    Of each operator the best few are refit by full EM (every family free)
    warm-started from their restricted estimate: those whose restricted gain
    already wins first, and when none of either phase wins, the others too
    (for ND and NR the restricted gain is often far too pessimistic); the
    first that wins against the current model under the one tie rule of
    :func:`effdim.scores.best_index` is accepted. When none does, escapes: a
    new climb from the least bad of those refits; a better end is kept.
    Then rounds (:func:`start_again`): the search starts again from its own
    end, the structure refitted from fresh EM starts and nothing barred as
    visited, while that ends higher (at most :data:`ROUNDS` times).
    ``max_time`` covers every phase; the search also stops when ``cancel``
    is set (:class:`effdim.em.Cancelled`).
"""

from __future__ import annotations

from ..em import Cancelled
from ..limits import MAX_ROUNDS, ROUNDS
from .compare import leaf_bipartitions, robinson_foulds, shape
from .learn import (
    ESCAPE,
    SEARCH_VERSION,
    START_STEPS_ON_TIME,
    StructureSearch,
    learn_structure,
    round_seeds,
    start_again,
)
from .local_de import LocalDe
from .local_em import (
    LocalCounts,
    LocalFit,
    Messages,
    candidate_starts,
    local_fit,
    merged_parameters,
    transfer_parameters,
)
from .moves import EXPANSION, OPERATORS, Move, candidate_moves, changed_families
from .result import LearnedStructure, Rounds, Step, StructureProgress
from .settings import SearchSettings
from .start import islands_model, mutual_information

__all__ = [
    "Cancelled",
    "LocalDe",
    "Move",
    "Step",
    "StructureProgress",
    "StructureSearch",
    "SearchSettings",
    "LearnedStructure",
    "EXPANSION",
    "ESCAPE",
    "MAX_ROUNDS",
    "ROUNDS",
    "Rounds",
    "SEARCH_VERSION",
    "START_STEPS_ON_TIME",
    "OPERATORS",
    "candidate_moves",
    "candidate_starts",
    "changed_families",
    "islands_model",
    "leaf_bipartitions",
    "learn_structure",
    "round_seeds",
    "start_again",
    "local_fit",
    "LocalFit",
    "LocalCounts",
    "Messages",
    "robinson_foulds",
    "shape",
    "mutual_information",
    "merged_parameters",
    "transfer_parameters",
]
