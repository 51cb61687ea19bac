"""`effdim fit` shows the fitted model and judges it; `effdim blrt`."""

import json

import pandas as pd
import pytest


def test_fit_json_has_readable_params_fit_statistics_and_diagnostics(cli):
    code, out, _ = cli("fit", "stouffer-toby", "--model", "3:2,2,2,2", "--seed", "0", "--restarts", "10", "--json")
    assert code == 0
    payload = json.loads(out)
    fit = payload["fit"]
    assert (fit["df"], fit["df_standard"]) == (2, 1)
    assert any("dc - ds = 1" in note for note in fit["notes"])
    assert fit["g2"] >= 0 and 0 <= fit["p_g2"] <= 1 and len(fit["avepp"]) == 3
    tables = payload["params"]["tables"]
    assert tables["A"]["given"] == "H1" and set(tables["A"]["rows"]["1"]) == {"+", "-"}
    shares = list(payload["params"]["shares"]["H1"].values())
    assert shares == sorted(shares, reverse=True)
    assert payload["identification"]["rank"] == 13
    assert len(payload["bvr"]) == 6 and payload["bvr"][0]["bvr"] >= payload["bvr"][-1]["bvr"]
    worst = payload["worst_patterns"]
    assert len(worst) == 16 and set(worst[0]) == {"A", "B", "C", "D", "observed", "expected", "residual"}


def test_fit_prints_tables_and_writes_posteriors_in_input_order(cli, tmp_path):
    rows = ["a,b,c"] + ["x,1,p", "y,2,q", "x,1,q", "y,,p", "x,2,p", "y,2,q"] * 5
    data = tmp_path / "answers.csv"
    data.write_text("\n".join(rows) + "\n")
    post = tmp_path / "post.csv"
    code, out, _ = cli("fit", str(data), "--model", "2:2,2,2", "--seed", "1", "--posteriors", str(post))
    assert code == 0
    assert "P(item = category | H1)" in out and "df = dc - de" in out and "entropy R2" in out
    table = pd.read_csv(post, keep_default_na=False)
    assert len(table) == 30 and table["a"].tolist()[:6] == ["x", "y", "x", "y", "x", "y"]
    assert table["b"].tolist()[3] == ""  # the missing answer stays empty
    assert ((table["P(H1=1)"] + table["P(H1=2)"]) - 1).abs().max() < 1e-9


def test_fit_order_and_bootstrap(cli):
    code, out, _ = cli("fit", "stouffer-toby", "--model", "2:2,2,2,2", "--seed", "0", "--json")
    plain = json.loads(out)
    code, out, _ = cli(
        "fit",
        "stouffer-toby",
        "--model",
        "2:2,2,2,2",
        "--seed",
        "0",
        "--json",
        "--order",
        "H1=2,1",
        "--bootstrap",
        "5",
        "--workers",
        "1",
    )
    assert code == 0
    swapped = json.loads(out)
    assert swapped["params"]["shares"]["H1"]["1"] == pytest.approx(plain["params"]["shares"]["H1"]["2"])
    assert swapped["fit"]["bootstrap"] == 5 and 0 < swapped["fit"]["p_g2_bootstrap"] <= 1


@pytest.mark.parametrize(
    "argv, culprit",
    [
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--order", "H1=1,1"], "must list each of 1..2 once"),
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--order", "H1"], "--order expects NODE=STATE"),
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--bootstrap", "0"], "--bootstrap"),
        (["blrt", "stouffer-toby", "--model", "2:2,2,2,2", "--node", "A"], "'A' is not a hidden node"),
        (["blrt", "stouffer-toby", "--model", "1:2,2,2,2"], "compares k - 1 with k states"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, argv, culprit):
    code, _, err = cli(*argv)
    assert code == 2
    assert culprit in err and len(err.strip().splitlines()) == 1


def test_blrt_runs_on_local_processes(cli):
    code, out, _ = cli(
        "blrt",
        "stouffer-toby",
        "--model",
        "2:2,2,2,2",
        "--bootstrap",
        "4",
        "--seed",
        "0",
        "--workers",
        "2",
        "--restarts",
        "2",
        "--json",
    )
    assert code == 0
    result = json.loads(out)
    assert result["B"] == 4 and result["p_value"] == pytest.approx(1 / 5)  # two classes are far better than one
    assert result["null_model"] == "1:2,2,2,2"


def test_fit_says_when_shares_and_posteriors_are_not_unique(cli):
    """de < ds (3:2,2,2,2 on Stouffer-Toby: ds 14, de 13): the fitted distribution is unique, the
    parameters, shares and posteriors are not; the CLI, the JSON and the fit result say so."""
    code, out, _ = cli("fit", "stouffer-toby", "--model", "3:2,2,2,2", "--seed", "0")
    assert code == 0
    assert "not unique: de = 13 < ds = 14" in out and "1-dimensional set" in out
    assert "locally identified as far as the model allows" not in out
    line = next(x for x in out.splitlines() if x.startswith("class shares over"))
    low, high = (float(v) for v in line.split("H1 1: ")[1].split(",")[0].split("-"))
    assert high - low > 0.01  # equally good fits, visibly different shares

    code, out, _ = cli("fit", "stouffer-toby", "--model", "3:2,2,2,2", "--seed", "0", "--json")
    payload = json.loads(out)
    assert payload["unique"] is False and payload["equivalent_fit_dimension"] == 1
    assert payload["identification"]["identified"] is False
    assert payload["identification"]["equivalent_fit_dimension"] == 1
    shares = payload["equivalent_fits"]["shares"]["H1"]
    assert payload["equivalent_fits"]["fits"] >= 2 and all(lo <= hi for lo, hi in shares)

    code, out, _ = cli("fit", "stouffer-toby", "--model", "2:2,2,2,2", "--seed", "0", "--json")
    payload = json.loads(out)
    assert payload["unique"] is True and payload["equivalent_fit_dimension"] == 0
    assert payload["identification"]["identified"] is True and "equivalent_fits" not in payload
