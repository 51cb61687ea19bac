"""The class-enumeration table (effdim.enumeration): its measures, picks and exports."""

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from effdim import sweep
from effdim.bootstrap import BootstrapResult
from effdim.distribution import Parameters, random_parameters, sample
from effdim.em import posterior
from effdim.enumeration import COLUMNS, EnumerationRow, EnumerationTable, enumeration_table
from effdim.errors import EffdimError
from effdim.model import HLCModel

THREE = Parameters(
    HLCModel.parse("3:2,2,2,2,2"),
    {
        "H1": [0.5, 0.3, 0.2],
        **{f"O{i}": [[0.9, 0.1], [0.2, 0.8], [0.1 if i % 2 else 0.9, 0.9 if i % 2 else 0.1]] for i in range(1, 6)},
    },
)


@pytest.fixture(scope="module")
def swept():
    data = sample(THREE, 600, 3)
    return sweep(data, cards=range(1, 5), restarts=4, seed=2)


@pytest.fixture(scope="module")
def table(swept):
    return enumeration_table(swept, {k: _blrt(0.01 * k, 19) for k in (2, 3, 4)})


def _blrt(p: float, B: int) -> BootstrapResult:
    """A bootstrap LRT with p-value ``p`` from ``B`` replicates (what the table reads of it)."""
    return BootstrapResult(1.0, np.zeros(B), p, "blrt", "", "")


def test_rows_carry_the_sweeps_scores_on_the_deviance_scale(swept, table):
    assert [r.k for r in table.rows] == [1, 2, 3, 4]
    for fit, row in zip(swept, table.rows):
        assert row.loglik == fit.loglik and (row.ds, row.de) == (fit.ds, fit.de)
        assert row.bic == pytest.approx(-2 * fit.loglik + fit.ds * math.log(600))
        assert row.sabic == pytest.approx(-2 * fit.scores.sabic) and row.caic == pytest.approx(-2 * fit.scores.caic)
        assert row.sbic == pytest.approx(-2 * fit.scores.sbic) and row.sbic_plus == pytest.approx(
            -2 * fit.scores.sbic_plus
        )
        assert (row.starts_at_best, row.starts) == (fit.restarts["n_best"], fit.restarts["restarts"])
    assert table.phi == swept[0].scores.sbic_phi == 3.0  # (d1 + 1) / 2 with d1 = 5
    assert table.blrt_B == 19 and [r.blrt_p for r in table.rows] == [None, 0.02, 0.03, 0.04]


def test_the_three_entropy_measures_follow_their_definitions(swept, table):
    fit, row = swept[2], table.rows[2]
    md, post = posterior(fit.params, fit.data)
    e = -float(md.counts @ np.sum(post * np.log(post), axis=1))
    shares = fit.params.marginals()[fit.model.root]
    assert row.entropy == pytest.approx(e)
    assert row.relative_entropy == pytest.approx(1 - e / (600 * math.log(3)))
    assert row.relative_entropy == pytest.approx(fit.fit_statistics().entropy_r2)  # Mplus's Entropy
    assert row.entropy_r2 == pytest.approx(1 - e / (600 * float(-np.sum(shares * np.log(shares)))))
    assert row.smallest_share == pytest.approx(shares.min())
    assert table.rows[0].relative_entropy is None and table.rows[0].entropy == 0.0


def test_vlmr_tests_k_minus_1_against_k_and_picks_by_the_first_non_significant(table):
    assert table.rows[0].vlmr_p is None
    assert table.rows[1].vlmr_p < 1e-6 and table.rows[2].vlmr_p < 0.05  # three real classes
    picks = table.picks()
    assert picks["BIC"] == 3 and picks["sBIC"] == 3
    assert picks["BLRT"] == 4  # every stored p is below 0.05: the last k


def _row(k, **changes):
    base = dict(
        k=k, loglik=-100.0, ds=k, de=k, bic=0.0, sabic=0.0, caic=0.0, aic=0.0, bic_plus=0.0, sbic=0.0, sbic_plus=0.0,
        entropy=0.0, relative_entropy=None, entropy_r2=None, smallest_share=1.0, blrt_p=None, vlmr_p=None,
        lmr_adjusted_p=None, starts_at_best=1, starts=1,
    )  # fmt: skip
    return EnumerationRow(**{**base, **changes})


def test_a_test_picks_the_first_k_whose_next_k_is_not_significant():
    rows = (_row(1), _row(2, blrt_p=0.001), _row(3, blrt_p=0.2), _row(4, blrt_p=0.001))
    assert EnumerationTable(rows, "X", 100, 2.0).picks()["BLRT"] == 2
    assert EnumerationTable(rows[:2], "X", 100, 2.0).picks()["BLRT"] == 2
    assert EnumerationTable(rows, "X", 100, 2.0).picks()["VLMR"] is None
    # ties go to the smaller model: equal BIC for k = 1 and 2
    assert EnumerationTable((_row(1, bic=10.0), _row(2, bic=10.0)), "X", 100, 2.0).picks()["BIC"] == 1


def test_exports_hold_the_same_numbers(table):
    back = pd.read_csv(io.StringIO(table.to_csv()))
    frame = table.frame()
    assert list(back.columns) == list(frame.columns)
    assert np.allclose(back["bic"], frame["bic"], rtol=1e-9) and list(back["starts"]) == list(frame["starts"])
    assert back["blrt_p"].isna().tolist() == [True, False, False, False]
    md = table.to_markdown().splitlines()
    assert md[0].count("|") == len(COLUMNS) + 1 and len(md[2:6]) == 4
    assert md[2].startswith("| 1 | ") and "Picks: BIC 3" in table.to_markdown()
    tex = table.to_latex()
    assert tex.count("\\\\") == 1 + 4 and "\\toprule" in tex and "\\caption{" in tex
    text = json.dumps(table.to_json(), allow_nan=False)  # NaN-free JSON
    assert json.loads(text)["rows"][2]["k"] == 3


def test_latex_escapes_a_node_name_and_markdown_keeps_it():
    tree = HLCModel.parse("Big_Hidden:2(A:2,B:2,C:2)")
    data = sample(random_parameters(tree, 0), 300, 0)
    fits = sweep(data, tree, cards=[1, 2], restarts=2, seed=0)
    table = enumeration_table(fits)
    assert "Big\\_Hidden" in table.to_latex() and "Big_Hidden" in table.to_markdown()


def test_vlmr_is_left_out_of_trees_with_a_note_and_bad_input_is_refused():
    tree = HLCModel.parse("2(2(2,2),2(2,2))")
    data = sample(random_parameters(tree, 1), 300, 1)
    fits = sweep(data, tree, cards=[1, 2, 3], restarts=2, seed=0)
    table = enumeration_table(fits)
    assert all(r.vlmr_p is None for r in table.rows)
    assert any("latent class models only" in note for note in table.notes)
    with pytest.raises(EffdimError, match="at least one"):
        enumeration_table([])
    with pytest.raises(EffdimError, match="significance level"):
        enumeration_table(fits, alpha=1.5)
