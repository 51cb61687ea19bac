"""Hypothesis strategies for random LC and HLC models."""

from hypothesis import strategies as st

from effdim import HLCModel
from effdim.regularity import regularize


@st.composite
def hlc_models(draw, max_hidden: int = 4, max_card: int = 4, max_children: int = 3, min_hidden_card: int = 1):
    """A random valid HLC tree: hidden nodes with 2..max_children+1 neighbours."""
    n_hidden = draw(st.integers(1, max_hidden))
    cards: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    hidden = [f"H{i + 1}" for i in range(n_hidden)]
    for i, h in enumerate(hidden):
        cards[h] = draw(st.integers(min_hidden_card, max_card))
        if i:
            edges.append((hidden[draw(st.integers(0, i - 1))], h))
    n_obs = 0
    for h in hidden:
        degree = sum(h in e for e in edges)
        need = max(0, 2 - degree) if h != hidden[0] or n_hidden > 1 else 2
        extra = draw(st.integers(need, max(need, max_children - degree + 1)))
        for _ in range(extra):
            n_obs += 1
            name = f"O{n_obs}"
            cards[name] = draw(st.integers(2, max_card))
            edges.append((h, name))
    return HLCModel(cards, hidden, edges)


@st.composite
def regular_hlc_models(draw, **kwargs):
    """A random regular HLC model (the regularization of a random one)."""
    return regularize(draw(hlc_models(**kwargs))).model


@st.composite
def lc_models(draw, max_observed: int = 5, max_card: int = 4, max_hidden_card: int = 6):
    cards = draw(st.lists(st.integers(2, max_card), min_size=2, max_size=max_observed))
    return HLCModel.lc(draw(st.integers(1, max_hidden_card)), cards)
