"""How the design groups the data's columns into blocks (:class:`effdim.em.design.ModelData`).

Consecutive columns are grouped while their joint states number at most
:data:`BLOCK_STATES`, so the pattern x block-state matrix ``B`` has one 1 per
block and row; ``B`` is held dense up to :data:`DENSE_LIMIT` entries. The
design builds its arrays from this grouping and :mod:`effdim.em.memory`
estimates their size from it, before anything is allocated.
"""

from __future__ import annotations

__all__ = ["BLOCK_STATES", "DENSE_LIMIT", "column_blocks"]

#: The block design matrix is held dense up to this many entries, sparse beyond.
DENSE_LIMIT = 4_000_000
#: Consecutive columns are grouped while their joint states number at most this.
BLOCK_STATES = 256


def column_blocks(radix: list[int]) -> list[list[int]]:
    """Consecutive columns grouped while their joint states number at most :data:`BLOCK_STATES`.

    ``radix[j]`` is column ``j``'s number of states (a missing cell is one
    more); a column with more states than that forms a block of its own.

    >>> column_blocks([2, 2, 2, 300, 3])
    [[0, 1, 2], [3], [4]]
    """
    blocks: list[list[int]] = []
    size = 0
    for j, r in enumerate(radix):
        if blocks and size * r <= BLOCK_STATES:
            blocks[-1].append(j)
            size *= r
        else:
            blocks.append([j])
            size = r
    return blocks
