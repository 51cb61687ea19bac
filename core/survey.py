"""Surveys over families of LC models: where is the bound of Theorem 4 not tight?

The paper (Section 3.1) found two LC models, 3:2,2,2,2 and 4:3,3,3, whose
``db`` exceeds ``de``; there are more. :func:`bound_gaps` finds every such
model in a family by computing ``de`` (never by a lookup table).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from .dimensions import dimensions
from .model import HLCModel
from .regularity import shrink_limit

__all__ = ["regular_lc_models", "BoundGap", "bound_gaps"]


def regular_lc_models(max_observed: int, max_card: int, min_observed: int = 2) -> Iterator[HLCModel]:
    """Every regular LC model (Lemma 3.2) with ``min_observed..max_observed``
    observed variables of ``2..max_card`` states (cardinalities descending)
    and hidden cardinality ``1..prod/max``."""
    for n in range(min_observed, max_observed + 1):
        for cards in itertools.combinations_with_replacement(range(max_card, 1, -1), n):
            limit = shrink_limit(HLCModel.lc(1, cards), "H1")
            for r in range(1, limit + 1):
                yield HLCModel.lc(r, cards)


@dataclass(frozen=True)
class BoundGap:
    """An LC model whose effective dimension is below ``db = min(ds, dc, dp)``."""

    model: str
    de: int
    db: int
    ds: int
    dc: int
    dp: int
    de_status: str
    failure_bound: float


def bound_gaps(max_observed: int = 4, max_card: int = 3, repeats: int = 3) -> list[BoundGap]:
    """All regular LC models in the family with ``de < db``.

    ``de`` below ``db`` cannot be *proven* by a rank (a rank is a lower
    bound), so each gap carries the probability bound that it is an accident
    of the random points, after ``repeats`` independent points.
    """
    gaps = []
    for model in regular_lc_models(max_observed, max_card):
        report = dimensions(model, repeats=repeats, check_float=False)
        if report.de < report.db:
            gaps.append(
                BoundGap(
                    report.model,
                    report.de,
                    report.db,
                    report.ds,
                    report.dc,
                    report.dp,
                    report.de_status,
                    report.failure_bound,
                )
            )
    return gaps
