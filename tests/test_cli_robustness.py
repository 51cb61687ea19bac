"""Inputs that once gave the CLI a traceback: each is now one line on stderr and exit status 2."""

from __future__ import annotations

import json
import warnings

import pytest

from effdim.cli import main
from effdim.model import MAX_DEPTH


def one_line_error(cli, *argv) -> str:
    """The one line on stderr of ``effdim ARGV``, which must exit 2 without a traceback."""
    status, out, err = cli(*argv)
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def chain(depth: int) -> str:
    """A tree whose hidden nodes form a path ``depth`` levels deep (every hidden node regular)."""
    return "2(" * depth + "2,2" + ",2)" * depth


def test_a_cardinality_of_5000_digits(cli):
    line = one_line_error(cli, "dims", "3:" + "9" * 5000 + ",2")
    assert "a cardinality of 5,000 digits is larger than the limit" in line


def test_cardinality_above_the_model_limit_names_the_node(cli, tmp_path):
    path = tmp_path / "big.json"
    nodes = [
        {"name": "H", "card": 2, "hidden": True},
        {"name": "A", "card": 10**150, "hidden": False},
        {"name": "B", "card": 2, "hidden": False},
    ]
    path.write_text(json.dumps({"nodes": nodes, "edges": [["H", "A"], ["H", "B"]]}))
    line = one_line_error(cli, "dims", str(path))
    assert line == "effdim: node 'A': cardinality about 1e150 (151 digits) is larger than the limit 1e100"


@pytest.mark.parametrize("name", [["a"], {"x": 1}, 7, None])
def test_json_model_whose_name_is_not_text(cli, tmp_path, name):
    path = tmp_path / "m.json"
    nodes = [
        {"name": name, "card": 2, "hidden": True},
        {"name": "A", "card": 2, "hidden": False},
        {"name": "B", "card": 2, "hidden": False},
    ]
    path.write_text(json.dumps({"nodes": nodes, "edges": [["H", "A"], ["H", "B"]]}))
    assert "nodes[0]: 'name' must be text" in one_line_error(cli, "dims", str(path))


def test_json_edges_and_root_must_be_names(cli, tmp_path):
    path = tmp_path / "m.json"
    nodes = [
        {"name": "H", "card": 2, "hidden": True},
        {"name": "A", "card": 2, "hidden": False},
        {"name": "B", "card": 2, "hidden": False},
    ]
    path.write_text(json.dumps({"nodes": nodes, "edges": [["H", ["A"]], ["H", "B"]]}))
    assert "edges[0] must be a [parent, child] pair of names" in one_line_error(cli, "dims", str(path))
    path.write_text(json.dumps({"nodes": nodes, "edges": [["H", "A"], ["H", "B"]], "root": ["H"]}))
    assert "'root' must be a node's name" in one_line_error(cli, "regularize", str(path))


def test_notation_nested_1000_deep(cli):
    line = one_line_error(cli, "dims", chain(1000))
    assert f"the tree is nested more than {MAX_DEPTH} levels deep (the limit)" in line


def test_json_model_1000_levels_deep(cli, tmp_path):
    depth = 1000
    nodes = [{"name": f"H{i}", "card": 2, "hidden": True} for i in range(depth)]
    nodes += [{"name": f"O{i}", "card": 2, "hidden": False} for i in range(depth + 1)]
    edges = [[f"H{i}", f"H{i + 1}"] for i in range(depth - 1)] + [[f"H{i}", f"O{i}"] for i in range(depth)]
    edges.append([f"H{depth - 1}", f"O{depth}"])
    path = tmp_path / "deep.json"
    path.write_text(json.dumps({"nodes": nodes, "edges": edges}))
    assert f"the tree is more than {MAX_DEPTH} levels deep below 'H0'" in one_line_error(cli, "dims", str(path))
    path.write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + ', "edges": []}')
    assert "nested too deeply" in one_line_error(cli, "dims", str(path))


def test_trees_as_deep_as_the_limit_still_work(cli):
    from effdim import parse_model

    model = parse_model(chain(MAX_DEPTH))
    assert len(model.hidden) == MAX_DEPTH and str(parse_model(str(model))) == str(model)
    assert cli("regularize", chain(MAX_DEPTH)).status == 0
    assert "nested more than" in one_line_error(cli, "regularize", chain(MAX_DEPTH + 1))


def test_dims_of_an_lc_model_with_15000_binary_leaves(cli):
    status, out, err = cli("dims", "3:" + ",".join(["2"] * 15_000))
    assert status == 0 and err == ""
    assert "ds 45002" in out and "dc about 2.818e4515" in out  # 2**15000 - 1: too long to print exactly


def test_json_output_of_numbers_too_long_to_print(capsys):
    from effdim.cli.output import _emit_json

    _emit_json({"dc": 2**15000 - 1, "local": [{"dp": 10**5000, "ds": 7}], "pair": (1, 2)})
    assert json.loads(capsys.readouterr().out) == {
        "dc": "about 2.818e4515",
        "local": [{"dp": "about 1.000e5000", "ds": 7}],
        "pair": [1, 2],
    }


@pytest.mark.parametrize(
    "argv, words",
    [
        (["dims", "3:2,2,2", "--seed", "-1"], "--seed: expected a seed from 0 to 2**63 - 1, got -1"),
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--seed", "-5"], "expected a seed from 0"),
        (["app", "--port", "99999999"], "--port: expected a port from 0 to 65535, got 99999999"),
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--sep", "ab"], "--sep: expected one character"),
        (["fit", "stouffer-toby", "--model", "2:2,2,2,2", "--sep", ";"], "--sep and --encoding apply to data files"),
    ],
)
def test_bad_options(cli, argv, words):
    assert words in one_line_error(cli, *argv)


@pytest.mark.parametrize("command", [["fit", "--model", "2:4,2,2"], ["sweep", "--max-card", "2"], ["learn"]])
def test_csv_cell_of_4400_digits(cli, tmp_path, command):
    """More digits than Python turns into a number, and more characters than a category label may have
    (effdim.limits.MAX_LABEL_CHARS): one line, never a conversion's traceback or a warning."""
    big = "9" * 4400
    rows = [f"{big if i == 0 else i % 3},{i % 2},{(i // 2) % 2}" for i in range(30)]
    path = tmp_path / "big.csv"
    path.write_text("a,b,c\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a Python warning line on stderr is not output either
        line = one_line_error(
            cli, command[0], str(path), *command[1:], "--restarts", "1", "--quiet", "--max-iter", "20"
        )
    assert "column 'a' holds a text of 4,400 characters" in line


def test_count_column_of_1e308_names_the_column(cli, tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a,b,count\n0,1,1e308\n1,0,1e308\n0,0,3\n")
    line = one_line_error(cli, "fit", str(path), "--model", "2:2,2")
    assert line == (
        "effdim: c.csv: the counts in column 'count' sum to inf, more than 1e+15; "
        "no survey is that large: is it a count column?"
    )


# ------------------------------------------------------- one line, whatever was said before
def test_a_data_command_that_fails_after_reading_says_how_in_its_one_line(cli, tmp_path):
    """What was detected in the file is folded into the error line (it printed as a line of its own
    before the error); a command that succeeds prints it as before, after its results."""
    path = tmp_path / "survey.csv"
    path.write_text("a;b;c\n1;2;1\n2;1;1\n1;1;2\n", encoding="latin-1")
    line = one_line_error(cli, "fit", str(path), "--model", "2:2,2", "--map", "O1=zz", "--restarts", "1")
    assert line == (
        "effdim: mapping gives no column for leaves 'O2' (read survey.csv as CSV, UTF-8, fields separated by semicolons)"
    )
    line = one_line_error(cli, "sweep", str(path), "--node", "Q")
    assert line.startswith("effdim: 'Q' is not a hidden node") and line.endswith("separated by semicolons)")
    status, _, err = cli("sweep", path, "--max-card", "2", "--restarts", "1")
    assert status == 0 and err == "effdim: read survey.csv as CSV, UTF-8, fields separated by semicolons\n"


class _Terminal:
    """A stand-in for stderr on a terminal: what was written, ``isatty()`` true."""

    def __init__(self):
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_error_line_replaces_the_progress_bar(monkeypatch):
    """A sweep that fails after its first fit: the bar is wiped and the error line written in its
    place (the bar stayed, and the error line began at its end); off a terminal there is no bar."""
    import effdim.search
    from effdim.errors import EffdimError

    real_fit, calls = effdim.fit, []

    def fit_then_fail(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise EffdimError("the second fit failed")
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(effdim.search, "fit", fit_then_fail)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["sweep", "stouffer-toby", "--max-card", "3", "--restarts", "1"]) == 2
    assert "sweep [" in terminal.text  # the bar was drawn
    assert terminal.text.endswith("\r\x1b[Keffdim: the second fit failed\n")  # and the error line replaced it


def test_progress_bars_are_drawn_on_terminals_only(cli):
    status, _, err = cli("sweep", "stouffer-toby", "--max-card", "2", "--restarts", "1")
    assert status == 0 and err == ""


def test_a_file_name_with_a_line_break_is_quoted_in_the_one_line(cli, tmp_path):
    """The reader's messages begin with the file's name; one with a line break made them two lines
    (the CLI kept the first: the name's first half, without the reason)."""
    empty = tmp_path / "survey\n2024.csv"
    empty.write_bytes(b"")
    assert (
        one_line_error(cli, "fit", str(empty), "--model", "2:2,2") == "effdim: 'survey\\n2024.csv': the file is empty"
    )
    line = one_line_error(cli, "sweep", str(tmp_path / "no\nsuch.csv"))
    assert line.endswith("no\\nsuch.csv': cannot read the file (no such file or folder)"), line


@pytest.mark.parametrize("content", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\n\n", b"\xef\xbb\xbf \n"])
def test_a_file_holding_only_a_byte_order_mark_is_empty(cli, tmp_path, content):
    """The structure scan counted the mark as a record, pandas saw no columns: an EmptyDataError traceback
    (found by tests/test_cli_fuzz.py)."""
    path = tmp_path / "bom.csv"
    path.write_bytes(content)
    assert one_line_error(cli, "sweep", str(path)) == "effdim: bom.csv: the file is empty"


def test_column_names_with_a_line_break_are_quoted_in_the_one_line(cli, tmp_path):
    """Messages listing the columns joined their names as they are: one with a line break made two lines
    (found by tests/test_app_fuzz.py in an uploaded Parquet file)."""
    path = tmp_path / "header.csv"
    path.write_bytes(b'"first\nname",second\n')
    line = one_line_error(cli, "sweep", str(path))
    assert line == "effdim: header.csv: no data rows (only a header: 'first\\nname', second)"
