"""``effdim experiment lc|hlc --ship``: the study writes the summaries the package ships itself, no hand copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from effdim.errors import InvalidArgument
from effdim.experiments import committed


def test_ship_copies_the_studys_summaries_byte_for_byte(tmp_path):
    out, shipped = tmp_path / "out", tmp_path / "results"
    out.mkdir()
    shipped.mkdir()
    for name in committed.SUMMARY_FILES:
        (out / name).write_text(f"{name}\n")
    assert sorted(path.name for path in committed.ship("hlc", out, shipped)) == ["hlc_table2.csv", "hlc_table2.md"]
    assert sorted(path.name for path in shipped.iterdir()) == ["hlc_table2.csv", "hlc_table2.md"]
    assert (shipped / "hlc_table2.md").read_bytes() == (out / "hlc_table2.md").read_bytes()
    with pytest.raises(InvalidArgument, match="the structure study has no summaries"):
        committed.ship("structure", out, shipped)


@pytest.mark.parametrize("argv", [["lc", "--quick"], ["structure"]])
def test_ship_is_refused_for_a_quick_or_structure_run_in_one_line(cli, argv):
    status, _, err = cli("experiment", *argv, "--ship", "--no-cache", "--quiet")
    assert status == 2 and err.count("\n") == 1 and "--ship writes the full lc or hlc design's summaries" in err


def test_a_run_with_ship_writes_what_the_dashboard_reads(cli, tmp_path, monkeypatch):
    shipped = tmp_path / "results"
    monkeypatch.setattr(committed, "RESULTS_DIR", shipped)
    out = tmp_path / "out"
    status, _, err = cli(
        "experiment", "lc", "--ship", "--replicates", "1", "--sizes", "500", "--generator", "3:2,2,2,2",
        "--no-deterministic", "--restarts", "1", "--workers", "1", "--no-plots", "--no-cache", "--quiet",
        "--out", out,
    )  # fmt: skip
    assert status == 0, err
    for name in ("lc_summary.csv", "lc_summary.md"):
        assert (shipped / name).read_bytes() == (out / name).read_bytes()
    hlc_files = [name for name in committed.SUMMARY_FILES if name.startswith("hlc_")]
    for name in hlc_files:  # the dashboard reads all four: the hlc pair from the package as it was
        (shipped / name).write_bytes((Path(committed.__file__).parent / "results" / name).read_bytes())
    assert committed.load_committed(shipped).lc_summary["generator"].tolist()[0] == "3:2,2,2,2"
