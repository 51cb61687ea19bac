"""Where the structure search starts: the empirical mutual information of the columns and the
islands model built from it (docs/structure.md, "How it searches")."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import networkx as nx
import numpy as np

from ..data import Dataset
from ..model import HLCModel

__all__ = ["islands_model", "mutual_information"]

#: Patterns per block of the indicator product in :func:`mutual_information`.
MI_BLOCK = 4096


def mutual_information(dataset: Dataset) -> np.ndarray:
    """Empirical mutual information (nats) of every pair of columns, ``(n, n)``, zero diagonal.

    Each pair uses the rows where both cells are present (pairwise deletion). All pairwise tables come
    from one product of the patterns' indicator matrix with itself (a missing cell has no indicator), in
    blocks of patterns so that memory stays bounded.
    """
    pats, w = dataset.patterns, dataset.counts
    cards = list(dataset.cardinalities)
    n = len(cards)
    offsets = np.concatenate([[0], np.cumsum(cards)]).astype(int)
    tables = np.zeros((offsets[-1], offsets[-1]))
    for lo in range(0, pats.shape[0], MI_BLOCK):
        block = pats[lo : lo + MI_BLOCK]
        ind = np.zeros((block.shape[0], offsets[-1]))
        rows = np.arange(block.shape[0])
        for j in range(n):
            ok = block[:, j] >= 0
            ind[rows[ok], offsets[j] + block[ok, j]] = 1.0
        tables += (ind * w[lo : lo + MI_BLOCK, None]).T @ ind
    mi = np.zeros((n, n))
    for i, j in itertools.combinations(range(n), 2):
        table = tables[offsets[i] : offsets[i + 1], offsets[j] : offsets[j + 1]]
        total = table.sum()
        if total <= 0:
            continue
        p = table / total
        outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
        used = p > 0
        mi[i, j] = mi[j, i] = max(0.0, float(np.sum(p[used] * np.log(p[used] / outer[used]))))
    return mi


def islands_model(dataset: Dataset, mi: np.ndarray | None = None) -> HLCModel:
    """The mutual-information start: nearest-neighbour groups under binary hidden parents.

    Every column points to the column it shares most mutual information with;
    the connected groups of these links are the islands. One island gives the
    binary LC model; otherwise each island gets a binary hidden parent and
    the parents form the maximum spanning tree (Chow & Liu 1968) of the
    largest mutual information between their members. ``dataset.columns``
    must be valid node names (see :func:`learn_structure`). An island that
    would be irregular (Section 4: a hidden node with two neighbours, one of
    them hidden) is merged into the island it is closest to.
    """
    mi = mutual_information(dataset) if mi is None else mi
    cols = list(dataset.columns)
    n = len(cols)
    if n < 3:
        return HLCModel.lc(2, dataset.cardinalities, hidden_name=_fresh(cols, 1)[0], observed_names=cols)
    links = nx.Graph()
    links.add_nodes_from(range(n))
    for i in range(n):
        links.add_edge(i, int(np.argmax(np.where(np.arange(n) == i, -np.inf, mi[i]))))
    groups = [sorted(g) for g in nx.connected_components(links)]
    while len(groups) > 1 and min(len(g) for g in groups) < 2:
        small = min(groups, key=len)
        groups.remove(small)
        near = max(groups, key=lambda g: mi[np.ix_(small, g)].max())
        near.extend(small)
    if len(groups) == 1:
        return HLCModel.lc(2, dataset.cardinalities, hidden_name=_fresh(cols, 1)[0], observed_names=cols)
    names = _fresh(cols, len(groups))
    between = nx.Graph()
    for a, b in itertools.combinations(range(len(groups)), 2):
        between.add_edge(a, b, weight=float(mi[np.ix_(groups[a], groups[b])].max()))
    tree = nx.maximum_spanning_tree(between)
    cards = {h: 2 for h in names}
    cards.update({c: k for c, k in zip(cols, dataset.cardinalities)})
    edges = [(names[a], names[b]) for a, b in tree.edges]
    edges += [(names[g], cols[i]) for g, group in enumerate(groups) for i in group]
    root = names[max(range(len(groups)), key=lambda g: tree.degree[g])]
    return HLCModel(cards, names, edges, root)


def _fresh(taken: Iterable[str], count: int) -> list[str]:
    """``count`` hidden-node names ``H1, H2, ...`` not in ``taken``."""
    taken = set(taken)
    out: list[str] = []
    k = 1
    while len(out) < count:
        name = f"H{k}"
        if name not in taken:
            out.append(name)
        k += 1
    return out
