"""Tests of effdim.modp: exact linear algebra over GF(p) (docs/theory.md, section 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import modp
from effdim.modp import P, check_prime, is_prime, matmul_mod, rank_mod_p


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(0, 90),
    n=st.integers(0, 90),
    r=st.integers(0, 90),
    p=st.sampled_from([2, 3, 65521, 1048573, P]),
    top=st.integers(0, 90),
    seed=st.integers(0, 2**16),
)
def test_rank_mod_p_matches_flint(m, n, r, p, top, seed):
    """Low rank, zero or repeated leading rows, zero columns: against python-flint."""
    import flint

    rng = np.random.default_rng(seed)
    r = min(r, m, n)
    a = matmul_mod(rng.integers(0, p, (m, r)), rng.integers(0, p, (r, n)), p)
    if m:
        a[: min(top, m)] = 0 if seed % 2 else a[m - 1]
    if seed % 3 == 0 and n:
        a[:, rng.integers(0, n, n // 2)] = 0
    want = flint.nmod_mat(m, n, a.ravel().tolist(), p).rank() if m and n else 0
    assert modp._rank_blas(a, p) == want  # the elimination rank_mod_p uses above FLINT_MAX_SIDE
    assert rank_mod_p(a, p) == want


def test_rank_mod_p_above_the_flint_threshold():
    """Both routes of rank_mod_p give the same rank on either side of FLINT_MAX_SIDE."""
    rng = np.random.default_rng(1)
    for side in (modp.FLINT_MAX_SIDE, modp.FLINT_MAX_SIDE + 1):
        a = matmul_mod(rng.integers(0, P, (side + 20, side - 3)), rng.integers(0, P, (side - 3, side)), P)
        assert rank_mod_p(a) == modp._rank_blas(a, P) == side - 3


def test_rank_mod_p_tall_rank_deficient():
    """Many rows, few columns, rank deficient: the base case must not recurse per row block."""
    rng = np.random.default_rng(0)
    a = np.zeros((5000, 12), dtype=np.int64)
    a[4990:, :5] = rng.integers(0, P, (10, 5))
    a[:, 5] = a[:, 0]
    assert rank_mod_p(a) == modp._rank_blas(a, P) == 5


@pytest.mark.parametrize("shape", [(40, 40), (300, 100), (100, 70), (7, 200)])
def test_eliminate_solver_inverts_pivot_block(shape):
    """The recursion's solver applies M^-1 for the reported pivot block M."""
    rng = np.random.default_rng(shape[0])
    a = rng.integers(0, P, shape)
    a[:, 5] = a[:, 3]  # rank deficient
    r, rows, cols, solve = modp._eliminate(a, P, True)
    assert r == min(shape[0], shape[1] - 1)
    y = rng.integers(0, P, (r, 3))
    np.testing.assert_array_equal(matmul_mod(a[np.ix_(rows, cols)], solve(y), P), y)


def test_matmul_mod_exact():
    rng = np.random.default_rng(5)
    for p in (P, 1048573, 7):
        a = rng.integers(0, p, (13, 700))
        b = rng.integers(0, p, (700, 9))
        want = np.array([[sum(int(x) * int(y) for x, y in zip(row, col)) % p for col in b.T] for row in a])
        np.testing.assert_array_equal(matmul_mod(a, b, p), want)


def test_is_prime_matches_trial_division():
    small = [n for n in range(2000) if n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))]
    assert [n for n in range(2000) if is_prime(n)] == small
    assert is_prime(P) and is_prime(1048573) and not is_prime(2**31 - 3)


@pytest.mark.parametrize("bad, words", [(4, "not prime"), (2**31 + 11, "2\\*\\*31"), (1, "2 <= p"), (True, "integer")])
def test_check_prime_names_the_value(bad, words):
    with pytest.raises(ValueError, match=words):
        check_prime(bad)


def test_rank_mod_p_refuses_a_vector():
    with pytest.raises(ValueError, match="2-dimensional"):
        rank_mod_p(np.arange(3), 7)
