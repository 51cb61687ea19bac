"""The files a command writes (effdim.cli.outputs): never a file it reads, never another output of the same
run, an existing file only with --overwrite; every output checked before the data are read; a failed write
named in words. And the messages around them: one line, no errno, the CLI's own words."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import effdim.reading
from effdim.cli import OUT_OF_MEMORY, main

DATA = "a,b,c\n1,2,1\n2,1,1\n1,1,2\n2,2,2\n1,2,2\n2,1,1\n"
FIT = ["--model", "2:2,2,2", "--restarts", "1", "--max-iter", "20", "--quiet"]


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A small data file in the working folder (``tmp_path``)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "data.csv"
    path.write_text(DATA)
    return path


def replace_reader(monkeypatch, reader) -> None:
    """The command line reads data with ``effdim.read_data`` (the public face, bound once first used)."""
    monkeypatch.setattr(effdim.reading, "read_data", reader)
    monkeypatch.setattr(effdim, "read_data", reader, raising=False)


@pytest.fixture
def nothing_read(monkeypatch):
    """Fail the test if the command reads its data: a refusal must come before any work."""

    def tripwire(*args, **kwargs):
        raise AssertionError("the data were read before the outputs were checked")

    replace_reader(monkeypatch, tripwire)


def refused(capsys, argv: list[str]) -> str:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "Errno" not in err, err
    assert out == "", out
    return lines[0]


@pytest.mark.parametrize("option", ["--report", "--posteriors"])
@pytest.mark.parametrize("spelling", ["same", "dot", "absolute", "parent", "symlink", "hardlink"])
def test_an_output_that_is_the_data_file_is_refused_before_any_work(capsys, data, nothing_read, option, spelling):
    names = {
        "same": "data.csv",
        "dot": "./data.csv",
        "absolute": str(data),
        "parent": f"../{data.parent.name}/data.csv",
    }
    if spelling == "symlink":
        os.symlink("data.csv", "link.csv")
        names[spelling] = "link.csv"
    elif spelling == "hardlink":
        os.link("data.csv", "hard.csv")
        names[spelling] = "hard.csv"
    line = refused(capsys, ["fit", "data.csv", *FIT, option, names[spelling], "--overwrite"])
    assert f"{option} {names[spelling]} is the file this command reads (data.csv)" in line
    assert data.read_text() == DATA


def test_an_output_that_is_the_model_file_is_refused(capsys, data, nothing_read):
    (data.parent / "model.json").write_text('{"nodes": [], "edges": []}')
    line = refused(capsys, ["fit", "data.csv", "--model", "model.json", "--report", "model.json", "--overwrite"])
    assert "is the file this command reads (model.json)" in line


@pytest.mark.parametrize(
    "command", [["sweep", "data.csv", "--max-card", "2"], ["search", "data.csv", "--score", "bic"]]
)
def test_sweep_and_search_reports_never_replace_the_data(capsys, data, nothing_read, command):
    extra = ["--model", "2:2,2,2"] if command[0] == "search" else []
    line = refused(capsys, [*command, *extra, "--report", "data.csv", "--overwrite"])
    assert "is the file this command reads" in line
    assert data.read_text() == DATA


def test_two_outputs_on_one_file_are_refused(capsys, data, nothing_read):
    line = refused(capsys, ["fit", "data.csv", *FIT, "--report", "out.html", "--posteriors", "./out.html"])
    assert line == "effdim fit: --posteriors ./out.html is the file --report writes too; give each its own name"
    assert not (data.parent / "out.html").exists()


def test_an_existing_file_is_replaced_only_with_overwrite(capsys, data, nothing_read, monkeypatch):
    old = data.parent / "post.csv"
    old.write_text("keep me")
    line = refused(capsys, ["fit", "data.csv", *FIT, "--posteriors", "post.csv"])
    assert line == "effdim fit: --posteriors post.csv exists; add --overwrite to replace it"
    assert old.read_text() == "keep me"
    monkeypatch.undo()  # the data may be read now
    monkeypatch.chdir(data.parent)
    assert main(["fit", "data.csv", *FIT, "--posteriors", "post.csv", "--overwrite"]) == 0
    assert len(pd.read_csv(old)) == 6


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "effdim fit: --report needs a file name, got an empty one"),
        (" ", "effdim fit: --report needs a file name, got an empty one"),
        (".", "effdim fit: --report . is a folder; give the name of a file (in it, or elsewhere)"),
        ("missing/r.html", "effdim fit: --report missing/r.html: the folder {here}/missing does not exist"),
    ],
)
def test_bad_report_paths_are_refused_before_the_fit(capsys, data, nothing_read, value, expected):
    line = refused(capsys, ["fit", "data.csv", *FIT, "--report", value])
    assert line == expected.format(here=data.parent)


def test_a_folder_this_user_cannot_write_in_is_refused(capsys, data, nothing_read, monkeypatch):
    """As a user without write permission on the folder (``os.access``; root may write anywhere, so the
    refusal is checked with the system's answer replaced; docs/robustness.md has the run as such a user)."""
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    line = refused(capsys, ["fit", "data.csv", *FIT, "--report", "r.html"])
    assert line == f"effdim fit: --report r.html: cannot write in the folder {data.parent} (permission denied)"
    for option in ("--out", "--cache-dir"):
        others = ["--no-cache"] if option == "--out" else []
        line = refused(capsys, ["experiment", "lc", "--quick", *others, option, str(data.parent / "sub")])
        assert line.endswith(f"{option} {data.parent / 'sub'}: cannot write in this folder (permission denied)")


def test_a_full_disk_is_said_in_words_naming_the_file(capsys, data):
    if not os.path.exists("/dev/full"):  # Linux's always-full device; elsewhere, a file the fit cannot write
        pytest.fail("this test needs /dev/full (Linux)")
    status = main(["fit", "data.csv", *FIT, "--report", "/dev/full"])
    _, err = capsys.readouterr()
    assert status == 2 and err.strip() == "effdim: could not write the report to /dev/full: the disk is full"


@pytest.mark.parametrize("option", ["--out", "--cache-dir"])
def test_experiment_folders_are_checked_before_any_job(capsys, data, option):
    assert refused(capsys, ["experiment", "lc", "--quick", option, "data.csv"]) == (
        f"effdim experiment: {option} data.csv is a file, not a folder; give a folder name"
    )
    assert refused(capsys, ["experiment", "lc", "--quick", option, ""]) == (
        f"effdim experiment: {option} needs a folder name, got an empty one"
    )
    assert data.read_text() == DATA


def test_a_system_error_is_said_in_words_with_its_file(capsys, data, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "secret.csv")

    replace_reader(monkeypatch, denied)
    assert refused(capsys, ["fit", "data.csv", *FIT]) == "effdim: secret.csv: permission denied"


def test_running_out_of_memory_is_one_line(capsys, data, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    replace_reader(monkeypatch, exhausted)
    assert refused(capsys, ["fit", "data.csv", *FIT]) == OUT_OF_MEMORY


def test_learn_names_the_cli_remedy_not_the_python_argument(capsys, tmp_path):
    path = tmp_path / "spaced.csv"
    path.write_text("a b,c,d\n1,2,1\n2,1,1\n1,1,2\n2,2,2\n")
    line = refused(capsys, ["learn", str(path), "--quiet"])
    assert line.startswith("effdim: column 'a b' cannot name a leaf") and line.endswith("--map LEAF=COLUMN")
    assert "mapping=" not in line


def test_learn_says_its_time_limit_in_the_cli_words(capsys):
    assert main(["learn", "stouffer-toby", "--quiet", "--max-time", "0.01"]) == 0
    out, _ = capsys.readouterr()
    assert "stopped: the time limit (--max-time 0.01 s)" in out and "max_time" not in out


@pytest.mark.parametrize(
    ("option", "value"), [("--tol", "-1"), ("--tol", "nan"), ("--prior", "-1"), ("--prior", "inf")]
)
def test_em_numbers_are_refused_in_the_cli_words(capsys, data, nothing_read, option, value):
    line = refused(capsys, ["fit", "data.csv", *FIT, option, value])
    assert line == f"effdim fit: argument {option}: expected a number >= 0, got {value}"


def test_stata_values_are_quoted_once(capsys, tmp_path):
    path = tmp_path / "ids.dta"
    frame = pd.DataFrame({"a": [f"c{i}" for i in range(60)], "b": ["x", "y"] * 30})
    frame.to_stata(path, write_index=False)
    line = refused(capsys, ["sweep", str(path), "--quiet"])
    assert "(e.g. 'c0', 'c1', 'c2', 'c3', 'c4', ...)" in line, line
