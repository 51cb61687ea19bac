"""The effective dimension of a candidate, updated locally by Corollary 4.1 of Kocka & Zhang (2002).

A move changes only the local LC models of the hidden nodes whose
neighbourhood it changes; :class:`LocalDe` recomputes just those (and the
local ranks are cached per ``(|H|, neighbour cardinalities)`` in
:mod:`effdim.dimensions`).
"""

from __future__ import annotations

from ..dimensions import local_dimensions
from ..model import HLCModel

__all__ = ["LocalDe"]

#: The deficit ``ds - de`` of a local LC model per key ``(|H|, sorted neighbour cardinalities)``: it depends
#: on nothing else, and a search asks for the same few keys thousands of times.
_DEFICITS: dict[tuple, int] = {}


class LocalDe:
    """``ds`` and ``de`` of regular models, updated locally by Corollary 4.1.

    ``de(M) = ds(M) - sum_H deficit(M_H)`` over the local LC models ``M_H``
    (Kocka & Zhang 2002, Corollary 4.1; :mod:`effdim.dimensions`). The
    deficit of a hidden node depends only on ``|H|`` and its neighbours'
    cardinalities; :meth:`update` recomputes it only for hidden nodes whose
    key changed, and counts them in :attr:`recomputed`.
    """

    def __init__(self, model: HLCModel):
        self.recomputed = 0
        self._keys: dict[str, tuple] = {}
        self._deficits: dict[str, int] = {}
        self.model = model
        self._refresh(model, self._keys, self._deficits)

    @staticmethod
    def _key(model: HLCModel, h: str) -> tuple:
        return model.card(h), tuple(sorted(model.card(n) for n in model.neighbors(h)))

    def _refresh(self, model: HLCModel, keys: dict, deficits: dict) -> None:
        for h in model.hidden:
            key = self._key(model, h)
            if keys.get(h) != key:
                keys[h] = key
                if key not in _DEFICITS:
                    _DEFICITS[key] = local_dimensions(model, h).deficit
                deficits[h] = _DEFICITS[key]
                self.recomputed += 1
        for h in set(keys) - set(model.hidden):
            del keys[h], deficits[h]

    def dims(self, model: HLCModel) -> tuple[int, int]:
        """``(ds, de)`` of the regular ``model`` (a neighbour of the current one), without moving to it."""
        from ..bounds import standard_dimension

        keys, deficits = dict(self._keys), dict(self._deficits)
        self._refresh(model, keys, deficits)
        ds = standard_dimension(model)
        return ds, ds - sum(deficits.values())

    def update(self, model: HLCModel) -> tuple[int, int]:
        """Move to ``model``; return its ``(ds, de)``."""
        from ..bounds import standard_dimension

        self._refresh(model, self._keys, self._deficits)
        self.model = model
        ds = standard_dimension(model)
        return ds, ds - sum(self._deficits.values())
