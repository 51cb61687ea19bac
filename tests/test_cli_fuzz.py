"""Random notations, JSON models and CSV files fed to the CLI: exit 0 or 2, never a traceback.

In process through :func:`effdim.cli.main` (an exception escaping it is what a
traceback would be), plus a few real subprocess runs of the ``effdim`` command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import hlc_models

from effdim.cli import main

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def run(capsys, argv: list[str]) -> tuple[int, str]:
    status = main(argv)
    _, err = capsys.readouterr()
    assert status in (0, 2), (argv[:3], status, err)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err  # one line
    return status, err


# ------------------------------------------------------------------ notations
_cards = st.one_of(st.integers(0, 5).map(str), st.integers(6, 10**120).map(str), st.just("9" * 5000))
_names = st.sampled_from(["", "H:", "A:", "x1:", "_:", "1a:", "a b:", "é:"])


@st.composite
def notation_like(draw, depth: int = 0) -> str:
    """Mostly-plausible notation: nested groups of named or unnamed cardinalities, sometimes broken."""
    head = draw(_names) + draw(_cards)
    if depth < 4 and draw(st.booleans()):
        kids = draw(st.lists(notation_like(depth + 1), min_size=0, max_size=4))
        return head + "(" + ",".join(kids) + draw(st.sampled_from([")", ")", ")", "", "))", ",)"]))
    return head


notations = st.one_of(
    notation_like(),
    st.builds(lambda r, leaves: f"{r}:{','.join(leaves)}", _cards, st.lists(_cards, max_size=6)),
    st.text(alphabet="0123456789(),:HOX_ .-", max_size=60),
    st.text(max_size=40),
    st.one_of(st.integers(1, 30), st.integers(201, 3000)).map(lambda d: "2(" * d + "2,2" + ",2)" * d),
)


@FUZZ
@given(text=notations)
def test_random_notations(capsys, text):
    if "\x00" in text:  # a command line cannot hold a NUL
        return
    run(
        capsys,
        ["dims", "--", text, "--max-memory-mb", "8", "--repeats", "1"]
        if text.startswith("-")
        else ["dims", text, "--max-memory-mb", "8", "--repeats", "1"],
    )
    run(capsys, ["regularize", text] if not text.startswith("-") else ["regularize", "--", text])


# ---------------------------------------------------------------- JSON models
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10**50), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def json_models(draw):
    """A valid model's JSON with one part replaced by a random value, or random JSON altogether."""
    from effdim import model_to_json

    if draw(st.integers(0, 4)) == 0:
        return draw(json_values)
    data = model_to_json(draw(hlc_models(max_hidden=3, max_card=3)))
    where = draw(st.sampled_from(["root", "nodes", "edges", "node", "edge", "card", "none"]))
    if where in ("root", "nodes", "edges"):
        data[where] = draw(json_values)
    elif where == "node":
        data["nodes"][0][draw(st.sampled_from(["name", "card", "hidden"]))] = draw(json_values)
    elif where == "edge" and data["edges"]:
        data["edges"][0] = draw(json_values)
    elif where == "card":
        data["nodes"][-1]["card"] = draw(st.integers(-2, 10**200))
    return data


@FUZZ
@given(data=json_models())
def test_random_json_models(capsys, tmp_path, data):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    run(capsys, ["dims", str(path), "--max-memory-mb", "8", "--repeats", "1"])
    if _cards_at_most(data, 50):  # EM's own memory limit guards larger ones (tests/test_em_limits.py)
        run(capsys, ["fit", "stouffer-toby", "--model", str(path), "--restarts", "1", "--max-iter", "5", "--quiet"])


def _cards_at_most(data, limit: int) -> bool:
    """Whether every cardinality a JSON model gives is at most ``limit`` (or not a number at all)."""
    nodes = data.get("nodes") if isinstance(data, dict) else None
    entries = nodes if isinstance(nodes, list) else []
    return not any(isinstance(e, dict) and isinstance(e.get("card"), int) and e["card"] > limit for e in entries)


# ------------------------------------------------------------------ CSV files
_cells = st.one_of(
    st.sampled_from(
        ["0", "1", "2", "yes", "no", "", "NA", "?", " 1 ", '"a,b"', '"x""y"', "é", "1e308", "-1", "9" * 4400, "\t", ";"]
    ),
    st.text(alphabet='ab01,;"\t \n\r', max_size=5),
)


@st.composite
def csv_files(draw) -> bytes:
    """A small table written with a random separator and encoding, or random bytes."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.binary(max_size=200))
    sep = draw(st.sampled_from([",", ";", "\t", "|"]))
    width = draw(st.integers(1, 5))
    header = draw(
        st.lists(st.sampled_from(["a", "b", "c", "count", "n", "", "a", "x y"]), min_size=width, max_size=width)
    )
    rows = draw(st.lists(st.lists(_cells, min_size=width, max_size=width + draw(st.integers(0, 1))), max_size=25))
    text = "\n".join(sep.join(r) for r in [header, *rows]) + draw(st.sampled_from(["", "\n", "\r\n"]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]))
    return text.encode(encoding, errors="replace")


@FUZZ
@given(content=csv_files())
def test_random_csv_files(capsys, tmp_path, content):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    options = ["--restarts", "1", "--max-iter", "5"]
    # without --quiet: what was detected in the file is said too, and a failure is still one line
    run(capsys, ["fit", str(path), "--model", "2:2,2", "--map", "O1=a", "--map", "O2=b", *options])
    run(capsys, ["sweep", str(path), "--max-card", "2", *options, "--quiet"])


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
