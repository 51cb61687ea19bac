"""The singular BIC (effdim.sbic) against the R package sBIC's stored output and exact arithmetic."""

from decimal import Decimal, getcontext
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effdim import sweep
from effdim.errors import EffdimError
from effdim.model import HLCModel
from effdim.reading import load_csv
from effdim.sbic import default_phi, learning_coefficients, singular_bic, solve, state_parameters
from effdim.scores import best

REFERENCES = Path(__file__).parent / "references"
#: The package's output (tests/references/sbic_reference.R): poLCA's log-likelihoods and its sBIC and BIC.
REFERENCE = pd.read_csv(REFERENCES / "sbic_reference.csv", dtype={"phi": str})
ITEMS = {"vignette": (8, 2), "election": (12, 4)}


def _fits(data, logliks, ds=None, de=None, n=None):
    """Stand-ins for a sweep's fits: an LC model per class count with the given log-likelihoods."""
    items, states = ITEMS[data]
    n = n if n is not None else {"vignette": 50, "election": 1311}[data]
    out = []
    for k, ll in enumerate(logliks, start=1):
        model = HLCModel.lc(k, [states] * items)
        size = k * items * (states - 1) + k - 1
        scores = SimpleNamespace(loglik=ll, ds=ds[k - 1] if ds else size, de=de[k - 1] if de else size, n=n)
        out.append(SimpleNamespace(model=model, scores=scores))
    return out


def _exact(logliks, lam, n, *, with_loss=False):
    """sBIC in 100-digit decimal arithmetic (the stable root), a check independent of the code's floats.

    ``with_loss``: also each model's ``b^2 / 4 T`` where ``b > 0`` (else 0): the factor by which the
    package's root ``(-b + sqrt(b^2 + 4 T)) / 2`` in doubles magnifies rounding, so its error in log L'.
    """
    getcontext().prec = 100
    log_n, out, loss = Decimal(n).ln(), [], [0.0]
    for i, ll in enumerate(logliks):
        l_ii = (Decimal(ll) - Decimal(lam[i][i]) * log_n).exp()
        if i == 0:
            out.append(l_ii)
            continue
        b = sum(out) - l_ii
        t = sum((Decimal(ll) - Decimal(lam[i][j]) * log_n).exp() * out[j] for j in range(i))
        root = (b * b + 4 * t).sqrt()
        out.append(2 * t / (b + root) if b > 0 else (root - b) / 2)
        loss.append(float(b * b / (4 * t)) if b > 0 else 0.0)
    values = [float(x.ln()) for x in out]
    return (values, loss) if with_loss else values


@pytest.mark.parametrize("phi", sorted(set(REFERENCE[REFERENCE.data == "vignette"].phi)))
def test_sbic_equals_the_package_on_its_vignette_data(phi):
    ref = REFERENCE[(REFERENCE.data == "vignette") & (REFERENCE.phi == phi)].sort_values("classes")
    fits = _fits("vignette", list(ref.loglik))
    ours = singular_bic(fits, phi=None if phi == "default" else float(phi))
    d1 = 8
    lam = learning_coefficients(
        range(1, 7), [f.scores.ds for f in fits], d1, default_phi(d1) if phi == "default" else float(phi)
    )
    exact, loss = _exact(list(ref.loglik), lam.tolist(), 50, with_loss=True)
    assert ours["sbic"] == pytest.approx(exact, abs=1e-9)
    # the package's own doubles lose up to 4 eps b^2 / 4T where its root cancels (phi >= 8, 6 classes: 2e-5)
    assert np.all(np.abs(np.array(ours["sbic"]) - ref.sbic.to_numpy()) <= 1e-9 + 1e-15 * np.array(loss))
    # the package's bounds are those of a non-defective model: with de = ds, sBIC+ is sBIC
    assert ours["sbic_plus"] == pytest.approx(ours["sbic"], abs=1e-12)


def test_on_the_vignette_data_bic_picks_one_class_and_sbic_picks_four():
    ref = REFERENCE[(REFERENCE.data == "vignette") & (REFERENCE.phi == "default")].sort_values("classes")
    assert int(np.argmax(ref.bic)) + 1 == 1 and int(np.argmax(ref.sbic)) + 1 == 4
    data = load_csv(REFERENCES / "sbic_vignette_data.csv")
    fits = sweep(data, cards=range(1, 7), restarts=20, seed=0)
    assert [f.loglik for f in fits] == pytest.approx(list(ref.loglik), abs=1e-5)  # poLCA's optimum, 50 starts
    assert [f.card for f in fits if f.scores.sbic == max(g.scores.sbic for g in fits)] == [4]
    assert best(fits, "sbic").card == best(fits, "sbic+").card == 4 and best(fits, "bic").card == 1
    assert fits[0].scores.sbic_phi == 4.5
    assert max(fits, key=lambda f: f.scores.bic).card == 1


def test_where_the_packages_exp_underflows_effdim_keeps_the_exact_value():
    # election: log-likelihoods 2,300 nats apart; the package's L' = exp(... - max) is 0 for 1 and 2 classes
    ref = REFERENCE[(REFERENCE.data == "election") & (REFERENCE.phi == "default")].sort_values("classes")
    assert np.isinf(ref.sbic.iloc[0]) and np.isinf(ref.sbic.iloc[1])
    fits = _fits("election", list(ref.loglik))
    ours = singular_bic(fits)
    d1 = 12 * 3
    lam = learning_coefficients([1, 2, 3, 4], [f.scores.ds for f in fits], d1, default_phi(d1))
    assert np.all(np.isfinite(ours["sbic"]))
    assert ours["sbic"] == pytest.approx(_exact(list(ref.loglik), lam.tolist(), 1311), abs=1e-8)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 7),
    st.integers(1, 30),
    st.floats(0.1, 40),
    st.integers(10, 100_000),
    st.floats(-50_000, -10),
    st.lists(st.floats(0, 3000), min_size=6, max_size=6),
)
def test_the_solve_agrees_with_exact_arithmetic_however_far_apart_the_models_are(k, d1, phi, n, first, rises):
    logliks = list(np.cumsum([first, *rises[: k - 1]]))
    ds = [c * d1 + c - 1 for c in range(1, k + 1)]
    lam = learning_coefficients(list(range(1, k + 1)), ds, d1, phi)
    assert solve(logliks, lam, n) == pytest.approx(_exact(logliks, lam.tolist(), n), abs=1e-7)


def test_learning_coefficients_follow_the_package_and_the_effective_dimension():
    # the package: lambda_ij = min(j d1 + j - 1 + (i - j) phi, i d1 + j - 1) / 2, lambda_ii = ds_i / 2
    d1, phi = 4, 2.5
    ds = [c * d1 + c - 1 for c in range(1, 5)]
    lam = learning_coefficients([1, 2, 3, 4], ds, d1, phi)
    for i in range(1, 5):
        assert lam[i - 1, i - 1] == ds[i - 1] / 2
        for j in range(1, i):
            assert lam[i - 1, j - 1] == 0.5 * min(j * d1 + j - 1 + (i - j) * phi, i * d1 + j - 1)
    # four binary items: de = 4, 9, 13, 15 (3 classes are defective, 4 saturate the table)
    plus = learning_coefficients([1, 2, 3, 4], [4, 9, 13, 15], d1, phi, exact=True)
    assert plus[2, 2] == 6.5 and plus[3, 3] == 7.5
    assert plus[3, 2] == 0.5 * min(13 + phi, 13 + d1)  # de_3 < de_4: the bounds with de_3 for ds_3
    same = learning_coefficients([5, 6], [15, 15], d1, phi, exact=True)
    assert same[1, 0] == 7.5  # de_5 = de_6: a generic point of M_5 is a generic point of M_6


def test_unequal_categories_and_tree_nodes_count_one_states_parameters():
    assert state_parameters(HLCModel.parse("3:2,3,5"), "H1") == 1 + 2 + 4
    tree = HLCModel.parse("3(2(2,2),3,4(2,2,2))")
    assert state_parameters(tree, "H1") == 1 + 2 + 3  # the neighbours of the root
    assert state_parameters(tree, "H3") == 2 + 1 + 1 + 1  # its parent H1 (3 states) and three binary leaves
    assert default_phi(7) == 4.0


def test_sbic_plus_is_sbic_with_de_and_charges_less_where_de_is_below_ds():
    logliks = [-900.0, -850.0, -830.0, -829.0]
    ds, de = [4, 9, 14, 19], [4, 9, 13, 15]
    fits = [
        SimpleNamespace(model=HLCModel.lc(k, [2] * 4), scores=SimpleNamespace(loglik=ll, ds=a, de=b, n=500))
        for k, ll, a, b in zip(range(1, 5), logliks, ds, de)
    ]
    values = singular_bic(fits)
    assert values["sbic"][:2] == pytest.approx(values["sbic_plus"][:2])
    assert values["sbic_plus"][2] > values["sbic"][2] and values["sbic_plus"][3] > values["sbic"][3]


def test_bad_chains_are_refused_in_words():
    fits = _fits("vignette", [-250.0, -240.0, -235.0])
    with pytest.raises(EffdimError, match="strictly increasing"):
        singular_bic([fits[1], fits[0]])
    with pytest.raises(EffdimError, match="phi"):
        singular_bic(fits, phi=0)
    with pytest.raises(EffdimError, match="phi"):
        singular_bic(fits, phi=float("nan"))
    other = SimpleNamespace(model=HLCModel.lc(2, [2] * 7), scores=fits[1].scores)
    with pytest.raises(EffdimError, match="differ only"):
        singular_bic([fits[0], other])
    with pytest.raises(EffdimError, match="same data"):
        singular_bic([fits[0], _fits("vignette", [-250.0, -240.0], n=60)[1]])
    with pytest.raises(EffdimError, match="at least one"):
        singular_bic([])
