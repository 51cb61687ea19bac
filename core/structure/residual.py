"""What the current fit does not explain: groups of a hidden node's children that stay dependent given it.

A hidden node ``H`` of a fitted latent tree claims that its children are independent given ``H``. Where
the data say otherwise, a new hidden node over the dependent children is missing (the idea of the
unidimensionality test of HLTA, Liu, Zhang et al. 2014, applied to an existing node). For every pair of
``H``'s children the conditional mutual information given ``H`` is measured on the current fit's
completed data (each pattern's count shared out by the fit's posterior of ``H`` and the pair, exact
under the fit), as a standardized G statistic; the children are then clustered by average linkage on that residual dependence, and every cluster of the
hierarchy, of any size, is a group a node introduction may gather (docs/structure.md, "How it searches").
"""

from __future__ import annotations

import numpy as np

from ..model import HLCModel
from .local_em import Messages

__all__ = ["residual_dependence", "residual_groups"]


def _joints_with_parent(model: HLCModel, messages: Messages, node: str) -> tuple[list[str], list[np.ndarray]]:
    """``node``'s children and, per child ``c``, ``(|node|, |c|, m)``: ``P(node, c | pattern)`` under the
    fit behind ``messages`` (a leaf: ``node``'s posterior where the leaf has that value, zero where it is
    missing; a hidden child: from its message up and the rest of the tree's evidence)."""
    md, params = messages.md, messages.params
    joint = messages.below[node] + messages.outside[node]  # log P(pattern, node)
    log_p = np.logaddexp.reduce(joint, axis=0)
    post = np.exp(joint - log_p)
    col = {o: j for j, o in enumerate(md.observed)}
    kids, joints = list(model.children(node)), []
    for c in kids:
        if not model.is_hidden(c):
            values = md.patterns[:, col[c]]
            joints.append(post[:, None, :] * (np.arange(model.card(c))[:, None] == values[None, :])[None])
            continue
        log_table = np.log(np.maximum(params.cpts[c], 1e-300))[:, :, None]  # (|node|, |c|, 1)
        pair = log_table + messages.below[c][None, :, :]  # log P(c's evidence, c | node)
        up = np.logaddexp.reduce(pair, axis=1)  # c's message to node
        joints.append(np.exp((joint - up)[:, None, :] + pair - log_p))
    return kids, joints


def residual_dependence(model: HLCModel, messages: Messages, node: str) -> tuple[list[str], np.ndarray]:
    """``(children, dependence)``: for every pair of ``node``'s children their conditional mutual information
    given ``node`` on the completed data of the fit behind ``messages``, as the standardized G statistic
    ``(2 n CMI - df) / sqrt(2 df)`` (``df = (|a| - 1)(|b| - 1)|node|``: about 0 to a few where the fit
    explains the pair, large where it does not); zero diagonal. The completed joint of a pair is exact under
    the fit: ``P(node, a, b | x) = P(node, a | x) P(node, b | x) / P(node | x)``."""
    kids, joints = _joints_with_parent(model, messages, node)
    w = messages.md.counts
    n = float(w.sum())
    post = joints[0].sum(axis=1)  # P(node | pattern), (|node|, m)
    weight = w / np.maximum(post, 1e-300)
    stacked = np.concatenate(joints, axis=1)  # (|node|, sum of the children's states, m)
    edges = np.concatenate([[0], np.cumsum([j.shape[1] for j in joints])])
    tables = np.stack([(stacked[h] * weight[h]) @ stacked[h].T for h in range(model.card(node))])
    out = np.zeros((len(kids), len(kids)))
    for a in range(len(kids)):
        for b in range(a + 1, len(kids)):
            t = tables[:, edges[a] : edges[a + 1], edges[b] : edges[b + 1]]
            total = t.sum()
            if total <= 0:
                continue
            p = t / total
            ph = p.sum(axis=(1, 2), keepdims=True)
            outer = p.sum(axis=2, keepdims=True) * p.sum(axis=1, keepdims=True)
            used = (p > 0) & (outer > 0)
            ratio = np.where(used, p * ph / np.where(used, outer, 1.0), 1.0)
            cmi = max(0.0, float(np.sum(p[used] * np.log(ratio[used]))))
            df = (t.shape[1] - 1) * (t.shape[2] - 1) * t.shape[0]
            out[a, b] = out[b, a] = (2 * n * cmi - df) / np.sqrt(2 * df)
    return kids, out


def _hierarchy(dependence: np.ndarray, least: float) -> list[tuple[int, ...]]:
    """The clusters of an average-linkage agglomeration on ``dependence`` (most dependent first), in merge
    order, while the linkage of the merged pair exceeds ``least``."""
    clusters = [(i,) for i in range(dependence.shape[0])]
    merged = []
    while len(clusters) > 2:
        best, pair = -np.inf, None
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                link = dependence[np.ix_(clusters[i], clusters[j])].mean()
                if link > best:
                    best, pair = link, (i, j)
        if best <= least:
            break
        i, j = pair
        new = tuple(sorted(clusters[i] + clusters[j]))
        clusters = [c for k, c in enumerate(clusters) if k not in pair] + [new]
        merged.append(new)
    return merged


#: The standardized G statistic above which a pair (or, on average, two clusters) of children counts as left
#: dependent by the fit: about the 0.1% point of the statistic where the fit explains them.
SIGNIFICANT = 3.0


def residual_groups(
    model: HLCModel, messages: Messages, per_node: int, least: float = SIGNIFICANT
) -> dict[str, list[tuple[str, ...]]]:
    """Per hidden node with three or more children, the first ``per_node`` clusters of its children by
    residual dependence (:func:`residual_dependence`, :func:`_hierarchy`) whose members stay dependent (a
    linkage above ``least``), each a tuple of children in the model's order; any size from two to all
    children but one. A node whose fit explains its children has none of those; one with four or more children
    also gets, whatever the threshold, the group of all its children but the one the others leave most
    dependent (the largest total residual dependence): two adjacent nodes learned as one, where one of them
    holds a single child, leave that child weakly dependent on all the others (docs/structure.md,
    "How it searches")."""
    out = {}
    for h in model.hidden:
        if len(model.children(h)) < 3:
            continue
        names, dependence = residual_dependence(model, messages, h)
        groups = [tuple(names[i] for i in group) for group in _hierarchy(dependence, least)[:per_node]]
        if len(names) >= 4:
            odd = int(np.argmax(dependence.sum(axis=1)))
            rest = tuple(c for i, c in enumerate(names) if i != odd)
            groups += [rest] if rest not in groups else []
        out[h] = groups
    return out
