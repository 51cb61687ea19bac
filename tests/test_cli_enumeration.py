"""``effdim sweep --table``: the class-enumeration table printed, exported (CSV, Markdown, LaTeX, JSON) and
refused in words; the sBIC's phi on the command line; the sBIC refused where a sweep's chain is missing."""

import csv
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from effdim.enumeration import COLUMNS

SWEEP = ["sweep", "stouffer-toby", "--max-card", "3", "--restarts", "2", "--seed", "1", "--quiet"]


def test_the_table_is_printed_with_its_picks_and_the_sbic_is_in_the_plain_sweep_too(cli):
    status, out, _ = cli(*SWEEP, "--table")
    assert status == 0
    header = out.splitlines()[1]
    assert all(c.label in header for c in COLUMNS)
    assert "picks: BIC " in out and "sBIC" in out and "VLMR" in out
    status, plain, _ = cli(*SWEEP)
    assert status == 0 and "best by sBIC+" in plain and "best by sBIC " in plain


def test_every_export_holds_the_rows(cli, tmp_path):
    written = {}
    for ext in (".csv", ".md", ".tex", ".json"):
        path = tmp_path / f"table{ext}"
        status, out, _ = cli(*SWEEP, "--table-file", str(path), "--blrt", "3", "--workers", "1")
        assert status == 0 and f"written to {path}" in out
        written[ext] = path.read_text(encoding="utf-8")
    rows = list(csv.DictReader(written[".csv"].splitlines()))
    assert [int(r["k"]) for r in rows] == [1, 2, 3] and rows[0]["blrt_p"] == "" and float(rows[1]["blrt_p"]) > 0
    assert written[".md"].startswith("| k | LL |") and written[".md"].count("\n| ") == 3  # the three rows
    assert written[".tex"].startswith("\\begin{table}") and "\\bottomrule" in written[".tex"]
    table = json.loads(written[".json"])
    assert [r["k"] for r in table["rows"]] == [1, 2, 3] and table["blrt_B"] == 3
    assert float(rows[2]["bic"]) == pytest.approx(table["rows"][2]["bic"])


def test_json_output_carries_the_table_and_phi_reaches_the_sbic(cli):
    status, out, _ = cli(*SWEEP, "--json", "--table", "--sbic-phi", "2")
    payload = json.loads(out)
    assert status == 0 and payload["table"]["phi"] == 2.0
    assert all(f["sbic_phi"] == 2.0 for f in payload["fits"])
    _, default, _ = cli(*SWEEP, "--json")
    assert json.loads(default)[0]["sbic_phi"] == 2.5  # (d1 + 1) / 2 with d1 = 4 binary items


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--table-file", "out.xlsx"], "--table-file"),
        (["--sbic-phi", "0"], "--sbic-phi"),
        (["--sbic-phi", "nan"], "--sbic-phi"),
        (["--blrt", "0"], "--blrt"),
    ],
)
def test_bad_options_are_one_line_naming_the_option(cli, tmp_path, monkeypatch, extra, words):
    monkeypatch.chdir(tmp_path)
    status, _, err = cli(*SWEEP, *extra)
    assert status == 2 and words in err and len(err.strip().splitlines()) == 1


def test_an_existing_table_file_needs_overwrite(cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("mine")
    status, _, err = cli(*SWEEP, "--table-file", str(path))
    assert status == 2 and "--overwrite" in err and path.read_text() == "mine"


def test_searches_refuse_the_sbic_which_only_a_sweep_has(cli):
    for argv in (
        ["search", "stouffer-toby", "--model", "2:2,2,2,2", "--score", "sbic"],
        ["learn", "stouffer-toby", "--score", "sbic+"],
    ):
        status, _, err = cli(*argv)
        assert status == 2 and "invalid choice" in err


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    phi=st.text(max_size=8),
    blrt=st.text(max_size=4),
    name=st.text(alphabet=st.characters(blacklist_characters="/\x00"), min_size=1, max_size=12),
)
def test_any_table_option_text_is_a_result_or_one_line(cli, tmp_path, phi, blrt, name):
    argv = [*SWEEP[:5], "1", "--max-iter", "3", "--quiet", "--sbic-phi=" + phi, "--blrt=" + blrt]
    argv += ["--workers", "1", "--table-file", str(tmp_path / name), "--overwrite"]
    status, _, err = cli(*argv)
    assert status in (0, 2), err
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err
