"""`effdim learn`: the learned tree in the data's column names, its steps, and one-line errors (exit status 2)."""

import json
import re

import pytest
from structure_cases import clear_tree_data

from effdim.notation import parse_model
from effdim.structure import (
    ESCAPE,
)


def test_cli_learn_json_names_leaves_after_columns(cli, tmp_path):
    path = tmp_path / "clear.csv"
    clear_tree_data().to_frame().to_csv(path, index=False)
    status, out, _ = cli("learn", path, "--json", "--seed", "0", "--map", "first=A", "--restarts", "2")
    assert status == 0
    data = json.loads(out)
    learned = parse_model(data["model"])
    assert set(learned.observed) == {"first", *"BCDEFGHI"}
    for key in ("loglik", "bic", "bic_plus", "cs", "cs_plus", "aic", "ds", "de", "steps"):
        assert key in data
    assert all(step["gain"] > 0 for step in data["steps"] if step["operator"] != ESCAPE)


@pytest.mark.parametrize("body, culprit", [("A,B,C\n1,2,3\n4,5\n", "line 3"), ("A,B,C\n", "no data rows")])
def test_cli_learn_bad_data_gets_the_same_error_as_fit(cli, tmp_path, body, culprit):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    errors = []
    for argv in (["fit", str(path), "--model", "2:2,2,2"], ["learn", str(path)]):
        status, _, err = cli(*argv)
        assert status == 2
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        errors.append(err)
    assert culprit in errors[1]
    assert errors[0] == errors[1]


def test_cli_learn_bad_max_time_is_one_line(cli):
    status, _, err = cli("learn", "hlc-figure2", "--max-time", "0")
    assert status == 2
    assert "--max-time" in err and len(err.strip().splitlines()) == 1


def test_cli_learn_prints_steps_and_the_learned_model(cli):
    status, out, _ = cli("learn", "hlc-figure2", "--quiet", "--seed", "0", "--start", "lc")
    assert status == 0
    assert "structure search by bic+ from lc" in out and "learned: " in out and "stopped: converged" in out
    assert re.search(r"\b[0-2] of at most 2 rounds from its own end ended higher", out)
    assert "NI" in out  # the LC start is wrong for these data (two groups of leaves): a node is introduced
