"""`effdim fit --distal COLUMN`: distal outcomes by the three-step method on the command line, its JSON,
its report, and its refusals (one line, exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from effdim import ReadLimits, fit, read_data
from effdim.threestep import distal_outcomes

SIMULATED = Path(__file__).parent / "references" / "three_step_simulated.csv"
MODEL = "X:3:i1:2,i2:2,i3:2,i4:2,i5:2,i6:2"


def test_fit_json_gives_each_outcome_as_the_python_api_does(cli):
    code, out, _ = cli("fit", SIMULATED, "--model", MODEL, "--seed", 3, "--distal", "z", "--distal", "zc", "--json")
    assert code == 0
    distal = json.loads(out)["distal"]
    assert [d["column"] for d in distal] == ["z", "zc"]
    z, zc = distal
    assert (z["method"], z["type"], zc["type"], z["se_method"]) == ("bch", "continuous", "categorical", "robust")
    assert set(z["by_state"][0]) == {"state", "share", "mean", "se", "ci", "sd"}
    assert set(zc["by_state"][0]) == {"state", "share", "probabilities", "se", "ci"}
    assert list(zc["by_state"][0]["probabilities"]) == ["1", "2", "3"]
    assert z["wald"]["df"] == 2 and zc["wald"]["df"] == 4 and z["wald"]["p"] < 1e-10
    assert len(z["classification"]["error_matrix"]) == 3 and 0 < z["classification"]["error_rate"] < 0.3
    data = read_data(SIMULATED, limits=ReadLimits(unlimited=["z", "zc"])).dataset
    fitted = fit(data.subset([f"i{j}" for j in range(1, 7)]), MODEL, seed=3, warn=False)
    [python] = distal_outcomes(fitted, data, "z")
    assert [s["mean"] for s in z["by_state"]] == pytest.approx(python.estimates[:, 0].tolist(), rel=1e-12)
    assert [s["se"] for s in z["by_state"]] == pytest.approx(python.se[:, 0].tolist(), rel=1e-12)


def test_fit_prints_the_tables_and_a_positional_model_leaves_the_outcomes_out(cli):
    code, out, _ = cli("fit", SIMULATED, "--model", "3:2,2,2,2,2,2", "--seed", 3, "--distal", "z",
        "--distal", "zc:categorical", "--distal-method", "ml",
    )  # fmt: skip
    assert code == 0
    assert "distal outcomes by the three-step method (ML correction; modal assignment misclassifies" in out
    assert "z (continuous; 2000 rows with a value)" in out and "zc (categorical; 2000 rows with a value)" in out
    assert "Wald test of equal means in every class: W = " in out
    assert "Wald test of equal probabilities in every class: W = " in out


def test_a_distal_outcome_goes_into_the_report_and_its_command(cli, tmp_path):
    report = tmp_path / "report.html"
    code, _, _ = cli("fit", SIMULATED, "--model", MODEL, "--seed", 3, "--distal", "z", "--distal", "zc",
        "--distal-method", "modal", "--report", report,
    )  # fmt: skip
    assert code == 0
    page = report.read_text()
    assert '<section id="distal"' in page and 'href="#distal"' in page
    assert "step 3 by the modal assignment, uncorrected" in page
    assert "--distal z --distal zc --distal-method modal --distal-assignment modal" in page
    assert page.count('aria-label="class means of z"') == 1 and 'aria-label="profile of zc"' in page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--distal", "z", "--distal", "nope"], "--distal 'nope' names no column of the data"),
        (["--distal", "z:ordinal"], "--distal 'z:ordinal': the kind after ':' is categorical or continuous"),
        (["--distal", "z", "--distal", "i1"], "--distal names 'i1', an item of the model"),
        (["--distal", "z", "--distal", "z:continuous"], "--distal names 'z' twice"),
        (["--distal", "z", "--distal-method", "lca"], "argument --distal-method: invalid choice: 'lca'"),
    ],
)
def test_bad_distal_requests_are_one_line_and_exit_2(cli, argv, message):
    code, out, err = cli("fit", SIMULATED, "--model", MODEL, "--seed", 1, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_continuous_outcome_needs_numbers(cli, tmp_path):
    rows = ["a,b,c,d,z"] + [
        f"{a},{b},{a},{b},{z}" for a, b, z in [(1, 1, "x"), (2, 1, "y"), (1, 2, "x"), (2, 2, "y")]
    ] * 6
    path = tmp_path / "text.csv"
    path.write_text("\n".join(rows) + "\n")
    code, _, err = cli("fit", path, "--model", "X:2:a:2,b:2,c:2,d:2", "--distal", "z:continuous")
    assert code == 2 and "the outcome z cannot be continuous: its value 'x' is not a number" in err


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["z", "zc", "i1", "z:continuous", "zc:continuous", "zc:categorical", ":", "z:", ":z"]),
            st.text(min_size=0, max_size=12),
        ),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from(["bch", "ml", "modal", "proportional"]),
)
def test_any_distal_text_gets_an_answer_or_one_line(cli, texts, method):
    argv = ["fit", SIMULATED, "--model", MODEL, "--seed", 1, "--restarts", 1, "--json", "--distal-method", method]
    for text in texts:
        argv += [f"--distal={text}"]
    code, out, err = cli(*argv)
    if code == 0:
        distal = json.loads(out)["distal"]
        assert len(distal) == len(texts)
        assert all(np.isfinite([s["share"] for s in d["by_state"]]).all() for d in distal)
    else:
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
