"""How the design groups the data's columns into blocks (:class:`effdim.em.design.ModelData`).

The leaves of one hidden node are grouped, in column order, while their joint
states number at most :data:`BLOCK_STATES`: a pattern is one joint state per
block, and a block touches the states of one hidden node only. The design
builds its arrays from this grouping and :mod:`effdim.em.memory` estimates
their size from it, before anything is allocated.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["BLOCK_STATES", "column_blocks"]

#: The columns of one group are joined into a block while their joint states number at most this.
BLOCK_STATES = 256


def column_blocks(radix: list[int], groups: Sequence[Hashable] | None = None) -> list[list[int]]:
    """The columns of each group, in order, joined while their joint states number at most :data:`BLOCK_STATES`.

    ``radix[j]`` is column ``j``'s number of states (a missing cell is one
    more); a column with more states than that forms a block of its own.
    ``groups[j]`` is column ``j``'s group (its leaf's hidden parent; one
    group by default): a block never mixes groups.

    >>> column_blocks([2, 2, 2, 300, 3])
    [[0, 1, 2], [3], [4]]
    >>> column_blocks([2, 2, 2, 2], groups=[0, 1, 0, 1])
    [[0, 2], [1, 3]]
    """
    groups = [0] * len(radix) if groups is None else groups
    blocks: list[list[int]] = []
    growing: dict[Hashable, tuple[int, int]] = {}  # group -> (its last block, that block's joint states)
    for j, r in enumerate(radix):
        last = growing.get(groups[j])
        if last is not None and last[1] * r <= BLOCK_STATES:
            blocks[last[0]].append(j)
            growing[groups[j]] = (last[0], last[1] * r)
        else:
            growing[groups[j]] = (len(blocks), r)
            blocks.append([j])
    return blocks
