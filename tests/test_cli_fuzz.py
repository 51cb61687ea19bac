"""Random notations, JSON models and data files of every format fed to the CLI (every command that reads
data): exit 0 or 2, never a traceback.

In process through :func:`effdim.cli.main` (an exception escaping it is what a
traceback would be), plus a few real subprocess runs of the ``effdim`` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hostile_files as hostile
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import csv_files, data_files, json_models, notations

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def checked(cli, argv: list[str]) -> tuple[int, str]:
    """``effdim ARGV`` exits 0 or 2, and with 2 says why in one line."""
    status, _, err = cli(*argv)
    assert status in (0, 2), (argv[:3], status, err)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err  # one line
    return status, err


@FUZZ
@given(text=notations)
def test_random_notations(cli, text):
    if "\x00" in text:  # a command line cannot hold a NUL
        return
    checked(
        cli,
        ["dims", "--", text, "--max-memory-mb", "8", "--repeats", "1"]
        if text.startswith("-")
        else ["dims", text, "--max-memory-mb", "8", "--repeats", "1"],
    )
    checked(cli, ["regularize", text] if not text.startswith("-") else ["regularize", "--", text])


@FUZZ
@given(data=json_models())
def test_random_json_models(cli, tmp_path, data):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    checked(cli, ["dims", str(path), "--max-memory-mb", "8", "--repeats", "1"])
    if _cards_at_most(data, 50):  # EM's own memory limit guards larger ones (tests/test_em_limits.py)
        checked(cli, ["fit", "stouffer-toby", "--model", str(path), "--restarts", "1", "--max-iter", "5", "--quiet"])


def _cards_at_most(data, limit: int) -> bool:
    """Whether every cardinality a JSON model gives is at most ``limit`` (or not a number at all)."""
    nodes = data.get("nodes") if isinstance(data, dict) else None
    entries = nodes if isinstance(nodes, list) else []
    return not any(isinstance(e, dict) and isinstance(e.get("card"), int) and e["card"] > limit for e in entries)


def data_commands(path: str) -> list[list[str]]:
    """Every command that reads a data file, each with the least work that still reads and fits."""
    em = ["--restarts", "1", "--max-iter", "5"]
    return [
        # without --quiet: what was detected in the file is said too, and a failure is still one line
        ["fit", path, "--model", "2:2,2", "--map", "O1=a", "--map", "O2=b", *em],
        ["sweep", path, "--max-card", "2", *em, "--quiet"],
        ["blrt", path, "--model", "2:2,2", "--map", "O1=a", "--map", "O2=b", "--bootstrap", "2", "--workers", "1"]
        + [*em, "--quiet"],
        ["search", path, "--model", "2:2,2", "--map", "O1=a", "--map", "O2=b", "--score", "bic", *em, "--quiet"],
        ["learn", path, "--max-time", "2", *em, "--quiet"],
    ]


@FUZZ
@given(content=csv_files())
def test_random_csv_files(cli, tmp_path, content):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    for argv in data_commands(str(path)):
        checked(cli, argv)


@settings(FUZZ, max_examples=40)
@given(data=data_files, extension=st.sampled_from([".sav", ".dta", ".xlsx", ".parquet", ".csv"]))
def test_random_files_of_every_format(cli, tmp_path, data, extension):
    """SPSS, Stata, Excel and Parquet files written from random tables, and random bytes after each
    format's first bytes, under any of the names the reader knows."""
    _, content = data
    if content is None:  # the format's writer refused the table
        return
    path = tmp_path / f"data{extension}"
    path.write_bytes(content)
    for argv in data_commands(str(path)):
        checked(cli, argv)


@FUZZ
@given(
    encoding=st.one_of(
        st.text(max_size=12),
        st.sampled_from(["utf-8", "UTF8", "utf_8_sig", "Latin1", "ISO-8859-1", "windows_1252", "UTF16", "cp1252"]),
    )
)
def test_random_encoding_names(cli, tmp_path, encoding):
    """`--encoding` with any text, or a name the reader knows in any spelling: a fit or one line, never a traceback
    (a name it knows that does not fit the bytes, UTF-16 here, is refused in one line too)."""
    if "\x00" in encoding or encoding.startswith("-"):
        return  # a command line cannot hold a NUL; a leading dash would be read as an option
    path = tmp_path / "data.csv"
    path.write_bytes("a;b\n\xe9;1\ne;2\n\xe9;2\n".encode("latin-1"))
    checked(
        cli,
        [
            "fit",
            str(path),
            "--model",
            "2:2,2",
            "--map",
            "O1=a",
            "--map",
            "O2=b",
            "--restarts",
            "1",
            "--max-iter",
            "5",
            "--quiet",
            "--encoding",
            encoding,
        ],
    )


#: Files small on disk that unpack to many rows, far columns or long cells (tests/hostile_files.py), each
#: shape within a size the test writes in milliseconds.
hostile_files = st.one_of(
    st.builds(hostile.xlsx_far_column, st.integers(1, 40), st.integers(1, 16_384), st.booleans()).map(
        lambda raw: (".xlsx", raw)
    ),
    st.builds(hostile.xlsx_long_cell, st.integers(0, 3_000), st.booleans()).map(lambda raw: (".xlsx", raw)),
    st.builds(hostile.xlsx_rows, st.integers(0, 300), st.integers(1, 40)).map(lambda raw: (".xlsx", raw)),
    st.just((".xlsx", hostile.xlsx_mixed_one())),
    st.builds(hostile.parquet_rows, st.integers(1, 3_000), st.integers(1, 5)).map(lambda raw: (".parquet", raw)),
    st.builds(hostile.parquet_long_text, st.integers(0, 3_000), st.integers(2, 50)).map(lambda raw: (".parquet", raw)),
)


@settings(FUZZ, max_examples=30)
@given(shape=hostile_files)
def test_compressed_file_shapes(cli, tmp_path, shape):
    """Far columns, long cells, many rows and mixed cells in Excel and Parquet files: a result or one line."""
    extension, content = shape
    path = tmp_path / f"data{extension}"
    path.write_bytes(content)
    for argv in data_commands(str(path)):
        checked(cli, argv)


#: How an output path may be spelled: the data file itself in several ways, another output, a folder, a
#: missing folder, an empty name, an existing file, a full device, or any text.
OUTPUT_PATHS = st.one_of(
    st.sampled_from(
        ["data.csv", "./data.csv", "../work/data.csv", "link.csv", "hard.csv", "other.html", ".", "missing/r.html"]
        + ["", " ", "existing.html", "/dev/full", "model.json"]
    ),
    st.text(st.characters(blacklist_characters="\x00/", blacklist_categories=("Cs",)), min_size=1, max_size=12),
)


@settings(FUZZ, max_examples=40)
@given(report=OUTPUT_PATHS, posteriors=st.one_of(st.none(), OUTPUT_PATHS), overwrite=st.booleans())
def test_output_paths_never_destroy_an_input(cli, tmp_path, monkeypatch, report, posteriors, overwrite):
    """`fit --report --posteriors` with any pair of paths: exit 0 or one line, and the data file and the model
    file unchanged, whatever the spelling (a link, ``..``, the other output)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    data, model = work / "data.csv", work / "model.json"
    data.write_text("a,b\n1,x\n2,y\n1,y\n2,x\n")
    model.write_text(
        '{"nodes": [{"name": "H", "card": 2, "hidden": true}, {"name": "a", "card": 2, "hidden": false}, '
        '{"name": "b", "card": 2, "hidden": false}], "edges": [["H", "a"], ["H", "b"]]}'
    )
    (work / "existing.html").write_text("keep")
    for name, make in (("link.csv", os.symlink), ("hard.csv", os.link)):
        if not os.path.lexists(name):
            make("data.csv", name)
    before = (data.read_bytes(), model.read_bytes())
    argv = ["fit", "data.csv", "--model", "model.json", "--restarts", "1", "--max-iter", "5", "--quiet"]
    argv += ["--report", report] + (["--posteriors", posteriors] if posteriors is not None else [])
    if report.startswith("-") or (posteriors or "").startswith("-"):
        return  # a leading dash would be read as an option
    status, _ = checked(cli, argv + (["--overwrite"] if overwrite else []))
    assert (data.read_bytes(), model.read_bytes()) == before
    if not overwrite and report == "existing.html":
        assert status == 2 and (work / "existing.html").read_text() == "keep"


# ---------------------------------------------------------- the real command
@pytest.mark.parametrize(
    "argv",
    [
        ["dims", "3:" + "9" * 5000 + ",2"],
        ["dims", "2(" * 1000 + "2,2" + ",2)" * 1000],
        ["app", "--port", "99999999"],
    ],
)
def test_the_command_exits_2_with_one_line(argv):
    proc = subprocess.run(
        [sys.executable, "-m", "effdim.cli", *argv], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@FUZZ
@given(
    leaves=st.one_of(
        st.text(max_size=12), st.tuples(st.integers(-5, 40), st.integers(-5, 40)).map("{0[0]}..{0[1]}".format)
    ),
    hidden=st.one_of(
        st.text(max_size=12), st.tuples(st.integers(-5, 10), st.integers(-5, 10)).map("{0[0]}..{0[1]}".format)
    ),
    rounds=st.one_of(st.text(max_size=6), st.integers(0, 200).map(str)),
)
def test_random_structure_design_ranges(cli, tmp_path, leaves, hidden, rounds):
    """`experiment structure --leaves/--hidden/--rounds`: any text gives a result or one line, never a traceback
    (nothing is cached in the fresh directory, so --cached-only runs no job)."""
    if "\x00" in leaves + hidden + rounds or any(t.startswith("-") for t in (leaves, hidden, rounds)):
        return  # a command line cannot hold a NUL; a leading dash would be read as an option
    args = [
        "experiment",
        "structure",
        "--cached-only",
        "--cache-dir",
        str(tmp_path),
        "--out",
        str(tmp_path),
        "--no-png",
    ]
    checked(cli, [*args, "--leaves", leaves, "--hidden", hidden, "--rounds", rounds, "--sizes", "1k"])
