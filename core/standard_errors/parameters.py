"""The free parameters of a fitted model in log-ratio form: what the information matrix is taken over.

Each row of a conditional probability table (a node given one state of its parent; the root's one row)
is written ``theta_c = s exp(eta_c) / sum_j exp(eta_j)`` over its categories off the boundary, with
``eta`` of the row's largest category fixed at 0 (its reference: never near 0, so the log-ratios stay
finite) and ``s`` the row's mass off the boundary. A category whose probability is within
:data:`BOUNDARY` of 0 is *on the boundary*: its log-ratio would be minus infinity, so it is held at
its value, has no free parameter and gets no standard error (flagged instead; a row with one
category left has no free parameter at all). The log-ratio form is poLCA's (Linzer & Lewis 2011,
section 3.3, with its first category as reference); standard errors on the probability scale do not
depend on the reference chosen, where the information is regular.

In a latent class regression the root's row is replaced by the coefficients ``beta`` (``p x (k - 1)``,
state 1 the reference; :mod:`effdim.mlogit`), all free.

:class:`Parametrisation` packs a fit into the vector ``eta`` and back (for a batch of points, as EM's
starts), and gives the Jacobian of every probability with respect to ``eta`` (the delta method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..distribution import Parameters

__all__ = ["BOUNDARY", "Parametrisation", "Row"]

#: A probability closer than this to 0 is on the boundary of the parameter space: held fixed, no SE.
BOUNDARY = 1e-7


@dataclass(frozen=True)
class Row:
    """One row of a CPT: ``node`` given ``parent_state`` (``None`` for the root), its ``reference``
    category, its ``free`` categories (one parameter each, from ``offset`` on in ``eta``) and its
    categories on the ``boundary``."""

    node: str
    parent_state: int | None
    reference: int
    free: tuple[int, ...]
    boundary: tuple[int, ...]
    offset: int


class Parametrisation:
    """The log-ratio parameters of a fit at ``params`` (and a regression's ``coefficients``)."""

    def __init__(self, params: Parameters, coefficients: np.ndarray | None = None):
        self.model = params.model
        self.params = params
        self.coefficients = None if coefficients is None else np.asarray(coefficients, dtype=float)
        rows: list[Row] = []
        offset = 0
        for node in self.model.nodes:
            if node == self.model.root and self.coefficients is not None:
                continue
            table = np.atleast_2d(params.cpts[node])
            for h, theta in enumerate(table):
                reference = int(np.argmax(theta))
                boundary = tuple(int(c) for c in np.flatnonzero(theta < BOUNDARY) if c != reference)
                free = tuple(c for c in range(theta.size) if c != reference and c not in boundary)
                parent_state = None if self.model.parent(node) is None else h
                rows.append(Row(node, parent_state, reference, free, boundary, offset))
                offset += len(free)
        self.rows = rows
        self.beta_offset = offset
        self.n_free = offset + (0 if self.coefficients is None else self.coefficients.size)

    # ------------------------------------------------------------- packing
    def eta(self) -> np.ndarray:
        """The estimate's parameter vector."""
        out = np.empty(self.n_free)
        for row in self.rows:
            theta = self.table_row(self.params.cpts, row)
            out[row.offset : row.offset + len(row.free)] = np.log(theta[list(row.free)] / theta[row.reference])
        if self.coefficients is not None:
            out[self.beta_offset :] = self.coefficients.ravel()
        return out

    @staticmethod
    def table_row(cpts: dict, row: Row) -> np.ndarray:
        table = cpts[row.node]
        return table if row.parent_state is None else table[..., row.parent_state, :]

    def points(self, etas: np.ndarray) -> tuple[dict, np.ndarray | None]:
        """The CPTs (each with a first axis of ``S`` points) and coefficients ``(S, p, k - 1)`` at the
        ``(S, n_free)`` parameter vectors ``etas``; categories on the boundary keep their values."""
        S = etas.shape[0]
        cpts = {node: np.repeat(np.asarray(t)[None], S, axis=0) for node, t in self.params.cpts.items()}
        for row in self.rows:
            theta0 = self.table_row(self.params.cpts, row)
            kept = [row.reference, *row.free]
            mass = theta0[kept].sum()
            logits = np.zeros((S, len(kept)))
            logits[:, 1:] = etas[:, row.offset : row.offset + len(row.free)]
            logits -= logits.max(axis=1, keepdims=True)
            w = np.exp(logits)
            target = cpts[row.node] if row.parent_state is None else cpts[row.node][:, row.parent_state, :]
            target[:, kept] = mass * w / w.sum(axis=1, keepdims=True)
        beta = None
        if self.coefficients is not None:
            beta = etas[:, self.beta_offset :].reshape(S, *self.coefficients.shape)
        return cpts, beta

    # ------------------------------------------------------ delta method
    def probability_jacobian(self, node: str) -> np.ndarray:
        """``d theta / d eta`` for every entry of ``node``'s table: ``(*table.shape, n_free)``; zero
        for entries on the boundary and for a regression's root (whose shares come from the
        coefficients: :func:`effdim.standard_errors.variance.share_jacobian`)."""
        table = np.asarray(self.params.cpts[node])
        out = np.zeros((*table.shape, self.n_free))
        for row in self.rows:
            if row.node != node or not row.free:
                continue
            theta = self.table_row(self.params.cpts, row)
            kept = [row.reference, *row.free]
            mass = theta[kept].sum()
            block = out if row.parent_state is None else out[row.parent_state]
            cols = slice(row.offset, row.offset + len(row.free))
            free = list(row.free)
            # theta_c' = mass softmax_c'(eta): d theta_c' / d eta_c = theta_c' (delta_c'c - theta_c / mass)
            jac = -np.outer(theta[kept], theta[free]) / mass
            jac[1:, :] += np.diag(theta[free])
            block[kept, cols] = jac
        return out

    def on_boundary(self, node: str) -> np.ndarray:
        """A mask shaped as ``node``'s table: the entries held on the boundary (rows with no free
        category included, whose one category is 1)."""
        table = np.asarray(self.params.cpts[node])
        mask = np.zeros(table.shape, dtype=bool)
        for row in self.rows:
            if row.node != node:
                continue
            target = mask if row.parent_state is None else mask[row.parent_state]
            target[list(row.boundary)] = True
            if not row.free:
                target[row.reference] = True
        return mask
