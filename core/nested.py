"""Starting a larger model from a nested smaller one: split one hidden state in two.

When a hidden cardinality grows by one (a sweep over ``|X|``, a hill-climb
step, a state introduction), the fitted smaller model is itself a point of
the larger model: duplicate one hidden state ``s`` into ``s`` and a new state,
each with half of ``s``'s probability, and give both copies ``s``'s rows in
every child's CPT. That point has exactly the smaller model's distribution of
the observed variables, so EM started there (and EM never lowers its
objective) ends at least as high: along a sweep or a climb the maximised
log-likelihood cannot fall as a cardinality grows (``docs/theory.md``, section
"8. EM restarts and nested models").

Two exact copies would stay copies under EM (their updates are symmetric). So
the rows of *one* child (the first with more than one state) are pulled apart, ``c + delta`` for ``s`` and
``c - delta`` for the new state, with ``delta`` summing to zero. Because only
one child differs and the two copies have equal weight, the observed
distribution is still exactly the smaller model's: the mixture
``1/2 (c + delta) g + 1/2 (c - delta) g = c g`` for any factor ``g`` of the
other children.
"""

from __future__ import annotations

import numpy as np

from .distribution import Parameters
from .errors import InvalidArgument
from .model import HLCModel

__all__ = ["SPREAD", "grown_node", "split_state", "nested_start"]

#: Size of the pull between the two copies, as a fraction of each probability (below 1 keeps them positive).
SPREAD = 0.5


def grown_node(smaller: HLCModel, larger: HLCModel) -> str | None:
    """The hidden node whose cardinality is one higher in ``larger``, all else equal; else ``None``."""
    if sorted(smaller.nodes) != sorted(larger.nodes) or smaller.root != larger.root:
        return None
    if any(smaller.parent(v) != larger.parent(v) for v in smaller.nodes):
        return None
    diff = [v for v in smaller.nodes if smaller.card(v) != larger.card(v)]
    if len(diff) != 1 or not smaller.is_hidden(diff[0]) or larger.card(diff[0]) != smaller.card(diff[0]) + 1:
        return None
    return diff[0]


def split_state(params: Parameters, node: str, state: int | None = None) -> Parameters:
    """Parameters of ``params.model`` with ``|node|`` one higher and the same observed distribution.

    ``state`` (default: the state of ``node`` with the largest marginal
    probability) is split in two; the new state is the last one.

    >>> from effdim.model import HLCModel
    >>> from effdim.distribution import random_parameters, observed_distribution
    >>> small = random_parameters(HLCModel.parse("2:2,2,2"), 0)
    >>> big = split_state(small, "H1")
    >>> big.model.card("H1"), bool(np.allclose(observed_distribution(big), observed_distribution(small)))
    (3, True)
    """
    model = params.model
    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}")
    k = model.card(node)
    if state is None:
        state = int(np.argmax(params.marginals()[node]))
    if not 0 <= state < k:
        raise InvalidArgument(f"{node!r} has states 0..{k - 1}, not {state}")
    cpts = {v: np.array(t, dtype=float, copy=True) for v, t in params.cpts.items()}
    own = cpts[node]
    half = own[..., state] / 2.0
    own[..., state] = half
    cpts[node] = np.concatenate([own, half[..., None]], axis=-1)
    children = model.children(node)
    pulled = next((c for c in children if model.card(c) > 1), None)
    for child in children:
        table = cpts[child]
        row = table[state].copy()
        new = row.copy()
        if child == pulled:
            u = np.linspace(0.0, 1.0, row.size)
            delta = SPREAD * row * (u - row @ u)
            table[state] = row + delta
            new = row - delta
        cpts[child] = np.vstack([table, new[None, :]])
    return Parameters(model.with_card(node, k + 1), cpts)


def nested_start(smaller: Parameters | None, model: HLCModel) -> Parameters | None:
    """A start for ``model`` from the fitted ``smaller`` model when ``model`` is it with one hidden
    cardinality raised by one (:func:`split_state`); ``None`` otherwise (or when ``smaller`` is None)."""
    if smaller is None:
        return None
    node = grown_node(smaller.model, model)
    if node is None:
        return None
    return split_state(smaller, node)
