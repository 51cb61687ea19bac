"""Matrix products of the E-step kept off multi-threaded BLAS when they are large.

Multi-threaded BLAS on thin products is many times slower than one thread
when the cores are shared (docs/performance.md, "Dimension engine"). So products up to
:data:`BLAS_MAX` multiply-adds go to BLAS and larger ones to numpy's own loops
(einsum, gathers, scipy.sparse).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLAS_MAX", "batched_matmul", "small_product"]

#: Matrix products with at most this many multiply-adds go to BLAS; larger ones
#: use numpy's own loops (module docstring).
BLAS_MAX = 1 << 17


def small_product(a: int, b: int, c: int) -> bool:
    return a * b * c <= BLAS_MAX


def batched_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Batched ``x @ y`` for (S, a, b) @ (S, b, c), kept off threaded BLAS when large."""
    if small_product(x.shape[1], x.shape[2], y.shape[2]):
        return np.matmul(x, y)
    return np.einsum("sab,sbc->sac", x, y)
