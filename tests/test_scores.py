"""Scores of Section 2.3 checked against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln
from strategies import hlc_models

from effdim.data import from_patterns
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import e_step, fit_em
from effdim.errors import EffdimError
from effdim.model import HLCModel
from effdim.priors import DEFAULT_CS_PRIOR, DirichletPrior
from effdim.scores import (
    SCORES,
    TIE_TOLERANCE,
    Scores,
    aic,
    beats,
    best,
    best_index,
    bic,
    bic_plus,
    cheeseman_stutz,
    completed_loglik,
    cooper_herskovits,
    criterion,
    cs_plus,
    model_dimensions,
    score_fit,
)

# a tiny LC model 2:2,2 and three response patterns
PI = [0.6, 0.4]
T1 = [[0.9, 0.1], [0.2, 0.8]]
T2 = [[0.7, 0.3], [0.25, 0.75]]
PATTERNS = [(0, 0), (1, 1), (0, 1)]
COUNTS = [5.0, 3.0, 2.0]


def tiny():
    model = HLCModel.parse("2:2,2")
    params = Parameters(model, {"H1": np.array(PI), "O1": np.array(T1), "O2": np.array(T2)})
    data = from_patterns(PATTERNS, COUNTS, cardinalities=[2, 2])
    return model, params, data


def hand_cs():
    """CS of the tiny case written out with math.lgamma, term by term (docs/theory.md, section 7)."""
    ll = 0.0
    n_h = [0.0, 0.0]
    n_1 = [[0.0, 0.0], [0.0, 0.0]]
    n_2 = [[0.0, 0.0], [0.0, 0.0]]
    for (a, b), w in zip(PATTERNS, COUNTS):
        joint = [PI[h] * T1[h][a] * T2[h][b] for h in (0, 1)]
        p = joint[0] + joint[1]
        ll += w * math.log(p)
        for h in (0, 1):
            post = joint[h] / p
            n_h[h] += w * post
            n_1[h][a] += w * post
            n_2[h][b] += w * post
    families = [[n_h], n_1, n_2]  # each: list of rows j, each row over k
    log_marginal = 0.0
    for rows in families:
        for row in rows:
            r = len(row)
            log_marginal += math.lgamma(r) - math.lgamma(r + sum(row))
            log_marginal += sum(math.lgamma(1 + x) - math.lgamma(1) for x in row)
    completed = sum(n_h[h] * math.log(PI[h]) for h in (0, 1))
    completed += sum(n_1[h][v] * math.log(T1[h][v]) + n_2[h][v] * math.log(T2[h][v]) for h in (0, 1) for v in (0, 1))
    return ll, log_marginal - completed + ll, (n_h, n_1, n_2)


def test_cs_of_a_tiny_case_by_hand():
    model, params, data = tiny()
    ll, counts = e_step(params, data)
    ll_hand, cs_hand, (n_h, n_1, n_2) = hand_cs()
    assert ll == pytest.approx(ll_hand, rel=1e-13)
    np.testing.assert_allclose(counts["H1"], n_h, rtol=1e-12)
    np.testing.assert_allclose(counts["O1"], n_1, rtol=1e-12)
    np.testing.assert_allclose(counts["O2"], n_2, rtol=1e-12)
    assert cheeseman_stutz(ll, counts, params.cpts) == pytest.approx(cs_hand, rel=1e-13)


def test_bic_bic_plus_aic_cs_plus_formulas():
    ll, n = -1234.5, 216.0
    assert bic(ll, 9, n) == pytest.approx(ll - 4.5 * math.log(216))
    assert bic_plus(ll, 7, n) == pytest.approx(ll - 3.5 * math.log(216))
    assert aic(ll, 9) == pytest.approx(ll - 9)
    assert cs_plus(-1300.0, 14, 13, n) == pytest.approx(-1300.0 + 0.5 * math.log(216))
    # the corrections agree: BIC+ - BIC = CS+ - CS = (ds - de)/2 log N
    assert bic_plus(ll, 13, n) - bic(ll, 14, n) == pytest.approx(cs_plus(0.0, 14, 13, n))


def test_cooper_herskovits_is_the_beta_binomial_by_factorials():
    # one binary family with counts (a, b), alpha = 1: log a! b! / (a + b + 1)!
    for a, b in [(0, 0), (3, 5), (10, 0), (7, 7)]:
        value = cooper_herskovits({"X": np.array([a, b], dtype=float)})
        assert value == pytest.approx(math.log(math.factorial(a) * math.factorial(b) / math.factorial(a + b + 1)))
    # a (2 x 3) family: rows are independent Dirichlet-multinomials
    table = np.array([[1.0, 2.0, 0.0], [4.0, 0.0, 1.0]])
    expected = sum(
        math.log(math.factorial(2))
        - math.log(math.factorial(2 + int(row.sum())))
        + sum(math.log(math.factorial(int(x))) for x in row)
        for row in table
    )
    assert cooper_herskovits({"Y": table}) == pytest.approx(expected)


def test_completed_loglik_uses_zero_log_zero():
    cpts = {"X": np.array([1.0, 0.0]), "Y": np.array([[0.5, 0.5], [0.0, 1.0]])}
    counts = {"X": np.array([3.0, 0.0]), "Y": np.array([[1.0, 2.0], [0.0, 0.0]])}
    assert completed_loglik(counts, cpts) == pytest.approx(3 * math.log(0.5))


def test_cs_is_the_exact_marginal_likelihood_without_hidden_structure():
    """|X| = 1: the completed data are the data, so CS = log p(D | G) exactly."""
    model = HLCModel.parse("1:2,3")
    data = from_patterns([(0, 0), (0, 2), (1, 1), (1, 2)], [4, 1, 2, 3], cardinalities=[2, 3])
    fit = fit_em(data, model, restarts=1, seed=0)
    # independent columns, each a Dirichlet(1)-multinomial: log (r-1)! prod n_k! / (N + r - 1)!
    exact = math.log(math.factorial(1) * math.factorial(5) * math.factorial(5) / math.factorial(11))
    exact += math.log(
        math.factorial(2) * math.factorial(4) * math.factorial(2) * math.factorial(4) / math.factorial(12)
    )
    s = score_fit(fit, ds=3, de=3, cs_prior="k2")
    assert s.cs == pytest.approx(exact, rel=1e-10)
    assert s.cs_prior == "k2:1"


@pytest.mark.parametrize(
    "prior,alpha",
    [("bdeu:1", lambda r: 1 / r), ("bdeu:10", lambda r: 10 / r), ("jeffreys", lambda r: 0.5), ("k2:3", lambda r: 3.0)],
)
def test_cs_prior_sets_the_dirichlet_of_each_family(prior, alpha):
    """|X| = 1: CS is the exact Dirichlet-multinomial marginal likelihood of each column."""
    model = HLCModel.parse("1:2,3")
    data = from_patterns([(0, 0), (0, 2), (1, 1), (1, 2)], [4, 1, 2, 3], cardinalities=[2, 3])
    fit = fit_em(data, model, restarts=1, seed=0)
    exact = 0.0
    for counts in ([5, 5], [4, 2, 4]):
        a = alpha(len(counts))
        exact += gammaln(a * len(counts)) - gammaln(a * len(counts) + 10)
        exact += sum(gammaln(a + c) - gammaln(a) for c in counts)
    s = score_fit(fit, ds=3, de=3, cs_prior=prior)
    assert s.cs == pytest.approx(exact, rel=1e-10)
    assert s.cs_prior == str(DirichletPrior.parse(prior))


def test_default_cs_prior_is_bdeu_1_and_map_fits_keep_their_own():
    model, params, data = tiny()
    ml = fit_em(data, model, restarts=0, init=params, max_iter=0)
    assert score_fit(ml, ds=5, de=3).cs_prior == str(DEFAULT_CS_PRIOR) == "bdeu:1"
    m = fit_em(data, model, restarts=0, init=params, max_iter=3, prior=1.0)
    s = score_fit(m, ds=5, de=3)
    assert s.cs_prior == "k2:2"
    assert s.cs == pytest.approx(cheeseman_stutz(m.loglik, m.expected_counts, m.params.cpts, 2.0))
    with pytest.raises(EffdimError, match="MAP fit with prior 1 .* must be k2:2, not bdeu:1"):
        score_fit(m, ds=5, de=3, cs_prior="bdeu:1")


@pytest.mark.parametrize(
    "text,message",
    [
        ("dirichlet", "unknown CS prior 'dirichlet'"),
        ("bdeu", "unknown CS prior 'bdeu'"),
        ("bdeu:x", "'x' is not a number"),
        ("k2:0", "must be a positive number"),
        ("bdeu:-1", "equivalent sample size .* positive"),
    ],
)
def test_bad_cs_prior_is_named(text, message):
    with pytest.raises(EffdimError, match=message):
        DirichletPrior.parse(text)


def test_score_fit_combines_everything():
    model, params, data = tiny()
    fit = fit_em(data, model, restarts=0, init=params, max_iter=0)
    s = score_fit(fit, ds=5, de=3, cs_prior="k2")
    _, cs_hand, _ = hand_cs()
    assert isinstance(s, Scores)
    assert s.loglik == pytest.approx(fit.loglik)
    assert s.cs == pytest.approx(cs_hand)
    assert s.bic == pytest.approx(fit.loglik - 2.5 * math.log(10))
    assert s.bic_plus == pytest.approx(fit.loglik - 1.5 * math.log(10))
    assert s.cs_plus == pytest.approx(cs_hand + math.log(10))
    assert s.aic == pytest.approx(fit.loglik - 5)
    assert s.get("bic+") == s.bic_plus and s.get("CS+") == s.cs_plus
    with pytest.raises(ValueError, match="unknown score"):
        s.get("hqic")
    assert set(s.to_dict()) == {"loglik", *(c.key for c in SCORES.values()), "ds", "de", "n", "cs_prior", "sbic_phi"}


def test_dimensions_come_from_the_engine():
    ds, de = model_dimensions(HLCModel.parse("5(3(2,2),2,3(2,2))"))
    assert (ds, de) == (41, 23)  # paper, Section 4
    assert model_dimensions(HLCModel.parse("3:2,2,2,2")) == (14, 13)


@settings(max_examples=15, deadline=None)
@given(model=hlc_models(max_hidden=3, max_card=3, max_children=2), seed=st.integers(0, 2**16))
def test_scores_invariant_under_relabelling_hidden_and_observed_states(model, seed):
    rng = np.random.default_rng(seed)
    params = random_parameters(model, rng)
    data = sample(params, 200, rng)
    ll, counts = e_step(params, data)
    cs = cheeseman_stutz(ll, counts, params.cpts)
    # permute the states of every node (hidden ones and leaves alike)
    perms = {n: rng.permutation(model.card(n)) for n in model.nodes}
    cpts = {}
    for n in model.nodes:
        table = params.cpts[n]
        parent = model.parent(n)
        new = np.empty_like(table)
        if parent is None:
            new[perms[n]] = table
        else:
            new[np.ix_(perms[parent], perms[n])] = table
        cpts[n] = new
    relabelled = Parameters(model, cpts)
    codes = data.patterns.copy()
    for j, o in enumerate(model.observed):
        codes[:, j] = perms[o][codes[:, j]]
    data2 = from_patterns(codes, data.counts, columns=data.columns, cardinalities=data.cardinalities)
    ll2, counts2 = e_step(relabelled, data2)
    assert ll2 == pytest.approx(ll, rel=1e-10, abs=1e-9)
    assert cheeseman_stutz(ll2, counts2, relabelled.cpts) == pytest.approx(cs, rel=1e-10, abs=1e-9)


# ----------------------------------------------------------------- the registry
def test_registry_names_keys_and_labels_are_consistent():
    keys = [c.key for c in SCORES.values()]
    assert len(set(keys)) == len(keys) == len(SCORES)
    for name, c in SCORES.items():
        assert c.name == name and criterion(name) is c and criterion(c.key) is c
        assert c.uses_de == name.endswith("+") == c.key.endswith("_plus")
        assert c.label.lower().replace("+", "") == name.replace("+", "")
        assert c.direction == "higher"
        assert ("de" in c.formula) == c.uses_de or c.key == "cs"
        if c.uses_de and c.key != "cs_plus" and not c.chain:  # each de criterion charges the same rate as its ds twin
            twin = criterion(name[:-1])
            assert twin.rate is not None and c.rate(1234.0) == twin.rate(1234.0)
    assert len({c.color for c in SCORES.values()}) == len(SCORES)
    with pytest.raises(ValueError, match="unknown score 'hqic'"):
        criterion("hqic")


@given(ll=st.floats(-1e6, -1.0), ds=st.integers(1, 500), gap=st.integers(0, 499), n=st.integers(30, 10**7))
def test_penalised_criteria_by_hand(ll, ds, gap, n):
    de = max(1, ds - gap)
    values = {
        "bic": ll - ds / 2 * math.log(n),
        "aic": ll - ds,
        "aic3": ll - 1.5 * ds,
        "sabic": ll - ds / 2 * math.log((n + 2) / 24),
        "caic": ll - ds / 2 * (math.log(n) + 1),
    }
    for key, value in values.items():
        c = criterion(key)
        assert ll - ds * c.rate(n) == pytest.approx(value)
        # the + version charges de instead of ds, so it is never below the ds version
        assert ll - de * criterion(key + "+").rate(n) >= value - 1e-9 * abs(value)
        # -2LL scale: -2LL + penalty, lower is better
        assert c.deviance(value) == pytest.approx(-2 * ll + 2 * ds * c.rate(n))


def _fake(value, ds, n=1000):
    return type("Fit", (), {"scores": type("S", (), {"bic": value, "ds": ds, "n": n})()})()


def test_best_prefers_the_smaller_model_within_the_tie_tolerance():
    n = 1000
    tie = TIE_TOLERANCE * n / 2
    small, large = _fake(-100.0, 5), _fake(-100.0 + tie, 9)
    assert best([large, small], "bic") is small
    clear = _fake(-100.0 + 3 * TIE_TOLERANCE * n, 9)
    assert best([small, clear], "bic") is clear
    assert not beats(large, small, "bic") and beats(clear, small, "bic")
    # equal size and value: the first wins (pre-order in a climb)
    a, b = _fake(-50.0, 7), _fake(-50.0, 7)
    assert best([a, b], "bic") is a
    assert best_index([float("nan"), -3.0], [1, 2], n) == 1
    with pytest.raises(ValueError, match="no finite score"):
        best_index([float("nan")], [1], n)


def test_prior_examples_run():
    import doctest

    import effdim.priors

    failed, attempted = doctest.testmod(effdim.priors)
    assert attempted > 0 and failed == 0
