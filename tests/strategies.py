"""Hypothesis strategies: random LC and HLC models, and the random or hostile input every face of effdim is
fed (notations, JSON models, data files, user text) by tests/test_cli_fuzz.py and tests/test_app_fuzz.py."""

import io
import tempfile
import warnings
from pathlib import Path

import pandas as pd
from hypothesis import strategies as st

from effdim import HLCModel
from effdim.regularity import regularize


@st.composite
def hlc_models(draw, max_hidden: int = 4, max_card: int = 4, max_children: int = 3, min_hidden_card: int = 1):
    """A random valid HLC tree: hidden nodes with 2..max_children+1 neighbours."""
    n_hidden = draw(st.integers(1, max_hidden))
    cards: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    hidden = [f"H{i + 1}" for i in range(n_hidden)]
    for i, h in enumerate(hidden):
        cards[h] = draw(st.integers(min_hidden_card, max_card))
        if i:
            edges.append((hidden[draw(st.integers(0, i - 1))], h))
    n_obs = 0
    for h in hidden:
        degree = sum(h in e for e in edges)
        need = max(0, 2 - degree) if h != hidden[0] or n_hidden > 1 else 2
        extra = draw(st.integers(need, max(need, max_children - degree + 1)))
        for _ in range(extra):
            n_obs += 1
            name = f"O{n_obs}"
            cards[name] = draw(st.integers(2, max_card))
            edges.append((h, name))
    return HLCModel(cards, hidden, edges)


@st.composite
def regular_hlc_models(draw, **kwargs):
    """A random regular HLC model (the regularization of a random one)."""
    return regularize(draw(hlc_models(**kwargs))).model


@st.composite
def lc_models(draw, max_observed: int = 5, max_card: int = 4, max_hidden_card: int = 6):
    cards = draw(st.lists(st.integers(2, max_card), min_size=2, max_size=max_observed))
    return HLCModel.lc(draw(st.integers(1, max_hidden_card)), cards)


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


# ------------------------------------------------------------------ data files of every format
FILE_KINDS = ["csv", "sav", "dta", "xlsx", "parquet"]


@st.composite
def tables(draw) -> pd.DataFrame:
    """A small table of text with hostile column names and values."""
    width = draw(st.integers(1, 4))
    names = draw(st.lists(hostile_text(max_size=8), min_size=width, max_size=width))
    values = st.one_of(st.sampled_from(["yes", "no", "1", "2", "", "NA", "a\nb", MARKUP[0]]), hostile_text(max_size=6))
    rows = draw(st.integers(0, 12))
    return pd.DataFrame(
        {f"{n}{i}"[-30:]: draw(st.lists(values, min_size=rows, max_size=rows)) for i, n in enumerate(names)}
    )


def written(frame: pd.DataFrame, kind: str) -> bytes | None:
    """``frame`` as a file of ``kind`` (sav, dta, xlsx, parquet), or None when the writer refuses it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the writers' notes on the names and values they changed
        try:
            return _write(frame, kind)
        except Exception:  # noqa: BLE001 - each writer has its own rules for names and values
            return None


def _write(frame: pd.DataFrame, kind: str) -> bytes:
    if kind == "sav":
        import pyreadstat

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "upload.sav"
            pyreadstat.write_sav(frame, str(path))
            return path.read_bytes()
    buffer = io.BytesIO()
    if kind == "dta":
        frame.to_stata(buffer, write_index=False, version=118)
    elif kind == "xlsx":
        frame.to_excel(buffer, index=False)
    else:
        frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


#: (kind, content): a CSV file, a random table written as another format (content None when its writer
#: refuses the table), or random bytes after another format's first bytes.
data_files = st.one_of(
    csv_files().map(lambda content: ("csv", content)),
    st.tuples(st.sampled_from(FILE_KINDS[1:]), tables()).map(lambda t: (t[0], written(t[1], t[0]))),
    st.tuples(
        st.just("bytes"),
        st.tuples(
            st.sampled_from([b"", b"$FL2", b"PAR1", b"PK\x03\x04", b"<stata_dta>", b"\xff\xfe", b"\xef\xbb\xbf"]),
            st.binary(max_size=300),
        ).map(b"".join),
    ),
)


# ------------------------------------------------------------------ hostile user text
#: Markup that runs if a page renders it as HTML (each raises a dialog), and text that breaks naive code.
MARKUP = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "<svg onload=alert(3)>",
    '"><img src=y onerror=alert(4)>',
    "<a href='javascript:alert(5)'>x</a>",
    "&lt;b&gt;",
    "*bold* _under_ `code` $x$",
    "{{7*7}}",
]
_awkward = st.sampled_from(["", " ", "\t", "\n", "\r\n", "\x00", "\u202e", "\ufeff", "é", "²", "٣", "💥", "9" * 5000])


@st.composite
def hostile_text(draw, max_size: int = 40) -> str:
    """User text: markup, awkward characters, plausible names and numbers, glued together."""
    parts = st.one_of(
        st.sampled_from(MARKUP),
        _awkward,
        st.sampled_from(["H1", "O1", "X", "a b", "x_1", "2", "-1", "3.5", "1e9", "0x10", "(", ")", ",", ":"]),
        st.text(max_size=max_size),
    )
    return "".join(draw(st.lists(parts, min_size=1, max_size=3)))
