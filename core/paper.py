"""The examples of Kocka & Zhang (2002) as the paper prints them, written once.

These are the paper's published values, for the dashboard's preset menu, the
benchmarks and the tests to compare the engine with. The engine never reads
them to compute anything: every de, db, ds, dc and dp the engine reports
comes out of the general computation (:mod:`effdim.bounds`,
:mod:`effdim.rank`, :mod:`effdim.dimensions`).

>>> from effdim.paper import TABLE1, FIGURE2
>>> len(TABLE1), TABLE1[12]
(21, Table1Row(model='3:2,2,2,2', de=13, db=14, ds=14, dc=15, dp=14))
>>> FIGURE2.ds, FIGURE2.de
(41, 23)
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["FIGURE1", "FIGURE2", "TABLE1", "Figure", "Table1Row"]


class Table1Row(NamedTuple):
    """One LC model of Table 1: its notation and dimensions; ``dp`` is ``None`` where the table
    writes "dc" (no split of the observed variables qualifies for Theorem 3's pairwise bound)."""

    model: str
    de: int
    db: int
    ds: int
    dc: int
    dp: int | None


#: Table 1 of the paper, in its order.
TABLE1: tuple[Table1Row, ...] = tuple(
    Table1Row(*row)
    for row in (
        ("2:2,2", 3, 3, 5, 3, None),
        ("2:2,2,2", 7, 7, 7, 7, None),
        ("3:2,2,2", 7, 7, 11, 7, None),
        ("4:2,2,2", 7, 7, 15, 7, None),
        ("2:3,3", 7, 7, 9, 8, 7),
        ("2:3,3,3", 13, 13, 13, 26, 19),
        ("3:3,3,3", 20, 20, 20, 26, None),
        ("3:4,5", 17, 17, 23, 19, 17),
        ("4:3,3,3", 25, 26, 27, 26, None),
        ("5:3,3,3", 26, 26, 34, 26, None),
        ("6:3,3,3", 26, 26, 41, 26, None),
        ("2:2,2,2,2", 9, 9, 9, 15, 11),
        ("3:2,2,2,2", 13, 14, 14, 15, 14),
        ("4:2,2,2,2", 15, 15, 19, 15, None),
        ("5:2,2,2,2", 15, 15, 24, 15, None),
        ("6:2,2,2,2", 15, 15, 29, 15, None),
        ("3:5,2,2", 17, 17, 20, 19, 17),
        ("3:4,2,2", 14, 14, 17, 15, 14),
        ("5:3,3,2", 17, 17, 29, 17, None),
        ("5:6,3,2", 34, 34, 44, 35, 34),
        ("5:10,3,2", 54, 54, 64, 59, 54),
    )
)


class Figure(NamedTuple):
    """A model of one of the paper's figures: its notation, ds, de, and for an HLC model its local LC
    models (one per hidden node, in pre-order) with their deficits ds - de."""

    model: str
    ds: int
    de: int
    local: tuple[tuple[str, int], ...] = ()


#: Figure 1: the LC model 3:2,2,2,2, whose de (13) is below the bound db (14).
FIGURE1 = Figure("3:2,2,2,2", ds=14, de=13)
#: Figure 2: the HLC model 5,3,3:2,2,2,2,2 (Section 4), ds 41, de 23.
FIGURE2 = Figure("5(3(2,2),2,3(2,2))", ds=41, de=23, local=(("5:3,3,2", 12), ("3:5,2,2", 3), ("3:5,2,2", 3)))
