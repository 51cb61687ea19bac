"""Linear algebra over the prime field GF(p): exact products and the rank.

The exact effective dimension is the rank of a Jacobian whose entries are
residues mod a prime ``p`` (docs/theory.md, section 3): any such rank is a
certified lower bound on ``de``. This module holds the field's linear
algebra, apart from the Jacobian (:mod:`effdim.rank`), which only calls
:func:`rank_mod_p`.

Residues are int64 in ``[0, p)`` with ``p < 2**31``, so the product of two
fits in int64. The rank is a recursive (column-halving) Gaussian elimination
whose work is in exact float64 BLAS products (:func:`matmul_mod`: one product
per block for ``p < 2**20``, three Karatsuba products of 16-bit halves for
``p < 2**31``); about ``n^3 / 3`` multiply-adds for an ``n x n`` matrix, like
LU.

python-flint where it wins
--------------------------
:func:`rank_mod_p` hands a matrix whose smaller side is at most
``FLINT_MAX_SIDE = 256`` (every local LC model, Table 1) to python-flint's
``nmod_mat`` and eliminates larger ones here: converting a numpy array into
flint costs more than flint's rank itself once the side is in the hundreds
(``benchmarks/engine/bench_rank.py --section 4``; figures in docs/performance.md).

Examples
--------
>>> import numpy as np
>>> rank_mod_p(np.array([[1, 2], [2, 4]]), 7)
1
>>> rank_mod_p(np.array([[1, 2], [3, 4]]), 2)   # det = -2 = 0 mod 2
1
>>> rank_mod_p(np.array([[1, 2], [3, 4]]), 5)
2
>>> matmul_mod(np.array([[2**30, 3]]), np.array([[4], [5]]), 2**31 - 1).tolist()
[[17]]
"""

from __future__ import annotations

import flint
import numpy as np

from .errors import InvalidArgument

__all__ = ["P", "FLINT_MAX_SIDE", "check_prime", "is_prime", "matmul_mod", "rank_mod_p"]

#: Default prime, the Mersenne prime 2**31 - 1: residues below 2**31, products below 2**62.
P = 2**31 - 1
#: :func:`rank_mod_p` uses python-flint when the matrix's smaller side is at most this.
FLINT_MAX_SIDE = 256


def check_prime(p: object) -> None:
    """Refuse ``p`` unless it is a prime with ``2 <= p < 2**31`` (an ``InvalidArgument`` naming it)."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise InvalidArgument(f"prime must be an integer, got {p!r}")
    p = int(p)
    if not 2 <= p < 2**31:
        raise InvalidArgument(f"prime must satisfy 2 <= p < 2**31 (products must fit in int64), got {p}")
    if not is_prime(p):
        raise InvalidArgument(f"prime={p} is not prime")


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin, exact for n < 3.2e9 (bases 2, 3, 5, 7)."""
    if n < 2:
        return False
    for q in (2, 3, 5, 7):
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in (2, 3, 5, 7):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def matmul_mod(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """``a @ b mod p`` for int64 residues, exactly, through float64 BLAS products.

    If ``k (p-1)^2 < 2**53`` one float product is exact (in inner chunks).
    Otherwise (``p < 2**31``) both factors are split into 16-bit halves and
    the three Karatsuba products, each exact below ``2**53`` for inner
    chunks of ``2**19``, are recombined mod ``p``.
    """
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), dtype=np.int64)
    if k == 0 or m == 0 or n == 0:
        return out
    chunk = (2**53) // ((p - 1) ** 2) if p > 1 else k
    if chunk >= 1:
        af, bf = a.astype(np.float64), b.astype(np.float64)
        for s in range(0, k, chunk):
            out += (af[:, s : s + chunk] @ bf[s : s + chunk]).astype(np.int64) % p
        return out % p
    chunk = 2**19
    t16, t32 = pow(2, 16, p), pow(2, 32, p)
    for s in range(0, k, chunk):
        ac, bc = a[:, s : s + chunk], b[s : s + chunk]
        ah, al = (ac >> 16).astype(np.float64), (ac & 0xFFFF).astype(np.float64)
        bh, bl = (bc >> 16).astype(np.float64), (bc & 0xFFFF).astype(np.float64)
        low = al @ bl
        high = ah @ bh
        mid = (ah + al) @ (bh + bl)
        mid -= low
        mid -= high
        out += (high.astype(np.int64) % p) * t32 % p
        out += (mid.astype(np.int64) % p) * t16 % p
        out += low.astype(np.int64) % p
        out %= p
    return out


_BASE_COLUMNS = 32
_EMPTY = np.zeros(0, dtype=np.intp)


def _inverse_small(m: np.ndarray, p: int) -> np.ndarray:
    """Inverse of a small invertible matrix mod p (Gauss-Jordan)."""
    r = m.shape[0]
    g = np.concatenate([m % p, np.eye(r, dtype=np.int64)], axis=1)
    for j in range(r):
        piv = j + int(np.flatnonzero(g[j:, j])[0])
        if piv != j:
            g[[j, piv]] = g[[piv, j]]
        g[j] = g[j] * pow(int(g[j, j]), p - 2, p) % p
        f = g[:, j].copy()
        f[j] = 0
        g -= (f[:, None] * g[j]) % p
        g %= p
    return g[:, r:]


def _pivots_small(w: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Unblocked elimination of a small block, in place: pivot rows and columns."""
    h, n = w.shape
    active = np.ones(h, dtype=bool)
    rows, cols = [], []
    for j in range(n):
        cand = np.flatnonzero(active & (w[:, j] != 0))
        if cand.size == 0:
            continue
        i = int(cand[0])
        rows.append(i)
        cols.append(j)
        active[i] = False
        if j + 1 < n:
            f = w[i, j + 1 :] * pow(int(w[i, j]), p - 2, p) % p
            w[:, j + 1 :] -= (w[:, j : j + 1] * f) % p
            w[:, j + 1 :] %= p
    return np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp)


def _combine(a, p, need_solve, r1, rows1, cols1, solve1, x, r2, rows2, cols2, cols2_in_x, solve2):
    """Join two pivot blocks; solve with the joint block by block elimination.

    With ``M = [[A11, A12], [A21, A22]]`` (pivot rows ``rows1 + rows2``, columns
    ``cols1 + cols2``) and ``S = A22 - A21 A11^-1 A12`` (the second block, a
    Schur complement), ``M [X1; X2] = [Y1; Y2]`` is solved by
    ``X1' = A11^-1 Y1``, ``X2 = S^-1 (Y2 - A21 X1')``, ``X1 = X1' - (A11^-1 A12) X2``.
    ``A11^-1 A12`` is ``x[:, cols2_in_x]``, already computed. No inverse is formed.
    """
    rows = np.concatenate([rows1, rows2])
    cols = np.concatenate([cols1, cols2])
    solve = None
    if need_solve:
        if r2 == 0:
            solve = solve1
        elif r1 == 0:
            solve = solve2
        else:
            a21 = a[np.ix_(rows2, cols1)]
            a11_inv_a12 = x[:, cols2_in_x]

            def solve(y: np.ndarray) -> np.ndarray:
                x1 = solve1(y[:r1])
                x2 = solve2((y[r1:] - matmul_mod(a21, x1, p)) % p)
                return np.concatenate([(x1 - matmul_mod(a11_inv_a12, x2, p)) % p, x2])

    return r1 + r2, rows, cols, solve


def _eliminate(a: np.ndarray, p: int, need_solve: bool):
    """Rank of ``a`` mod p with pivot rows/columns (and a solver with the pivot block).

    Returns ``(r, rows, cols, solve)``: ``M = a[rows][:, cols]`` is invertible
    mod p, ``r = rank(a)``, and ``solve(y) = M^-1 y`` when ``need_solve``.
    Recursion on the column halves: ``rank(a) = r1 + rank(S)``, ``S`` the
    Schur complement of the left half's pivot block, so all the work is in
    BLAS products; about ``n^3 / 3`` multiply-adds for an ``n x n`` matrix,
    like LU.
    """
    m, n = a.shape
    if m == 0 or n == 0:
        return 0, _EMPTY, _EMPTY, None
    if n <= _BASE_COLUMNS:
        return _eliminate_base(a, p, need_solve)
    n1 = n // 2
    left, right = a[:, :n1], a[:, n1:]
    r1, rows1, cols1, solve1 = _eliminate(left, p, True)
    if r1 == 0:
        r2, rows2, cols2, solve2 = _eliminate(right, p, need_solve)
        return r2, rows2, cols2 + n1, solve2
    x = solve1(right[rows1])
    mask = np.ones(m, dtype=bool)
    mask[rows1] = False
    others = np.flatnonzero(mask)
    schur = (right[others] - matmul_mod(left[np.ix_(others, cols1)], x, p)) % p
    r2, rows2, cols2, solve2 = _eliminate(schur, p, need_solve)
    rows2 = others[rows2]
    return _combine(a, p, need_solve, r1, rows1, cols1, solve1, x, r2, rows2, cols2 + n1, cols2, solve2)


def _eliminate_base(a: np.ndarray, p: int, need_solve: bool):
    """Few columns: eliminate the top ``2n`` rows; Schur-complement the rest if needed."""
    m, n = a.shape
    h = min(m, 2 * n)
    rows1, cols1 = _pivots_small(a[:h].copy(), p)
    r1 = len(rows1)
    solve1 = None
    if r1 and (need_solve or (r1 < n and h < m)):
        inv1 = _inverse_small(a[np.ix_(rows1, cols1)], p)
        solve1 = lambda y: matmul_mod(inv1, y, p)  # noqa: E731
    if r1 == n or h == m:
        return r1, rows1, cols1, solve1 if need_solve else None
    free = np.setdiff1d(np.arange(n), cols1)
    rest = a[h:]
    x = None
    if r1:
        x = solve1(a[np.ix_(rows1, free)])
        schur = (rest[:, free] - matmul_mod(rest[:, cols1], x, p)) % p
    else:
        schur = rest[:, free]
    # Zero rows add nothing; without them the next top block has a pivot, so
    # every level removes a column and the recursion depth stays below n.
    nonzero = np.flatnonzero(schur.any(axis=1))
    r2, rows2, cols2, solve2 = _eliminate(schur[nonzero], p, need_solve)
    rows2 = h + nonzero[rows2]
    return _combine(a, p, need_solve, r1, rows1, cols1, solve1, x, r2, rows2, free[cols2], cols2, solve2)


def rank_mod_p(matrix: np.ndarray, p: int = P) -> int:
    """Rank of an integer matrix over GF(p), ``p`` a prime below ``2**31``.

    Matrices whose smaller side is at most :data:`FLINT_MAX_SIDE` go to
    python-flint's ``nmod_mat.rank`` (FLINT's C elimination); larger ones to
    the BLAS-backed elimination of this module (:func:`matmul_mod`), which
    wins there because flint's conversion from numpy costs as much as its
    rank (docs/performance.md, "Dimension engine").
    """
    check_prime(p)
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise InvalidArgument(f"matrix must be 2-dimensional, got shape {a.shape}")
    if min(a.shape) == 0:
        return 0
    a = a.astype(np.int64) % p
    if min(a.shape) <= FLINT_MAX_SIDE:
        return int(flint.nmod_mat(a.shape[0], a.shape[1], a.ravel().tolist(), int(p)).rank())
    return _rank_blas(a, int(p))


def _rank_blas(a: np.ndarray, p: int) -> int:
    """Rank of int64 residues mod ``p`` by the recursive elimination :func:`_eliminate`."""
    if a.shape[0] < a.shape[1]:
        a = a.T
    return _eliminate(np.ascontiguousarray(a), p, False)[0]
