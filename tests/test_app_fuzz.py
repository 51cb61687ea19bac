"""Random and hostile input on every path of the dashboard, driven the way its views drive it.

The notation box, a JSON model import, data uploads of every supported format
(read by :func:`effdim_app.tasks.read_upload_task`, the function the upload
job runs), the page's link arguments (``?model=``, ``tab``, ``projector``),
renaming a node, the States box and the order of a column's states, each fed
hypothesis' input (tests/strategies.py). Each action must end in success or
in one line naming the culprit in the user's words (no traceback, no Python
exception class, no engine keyword), keep the previous model or data after a
failure, and show any user text escaped wherever it reaches the page's HTML
(every HTML pane of one dashboard built over the states).

The states run without worker processes (what a job would compute is computed
in the test's process) and with a small memory limit per computation, so that
each example takes milliseconds.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import panel as pn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import FILE_KINDS, MARKUP, data_files, hostile_text, json_models, notations, tables, written

from effdim_app.config import ServerLimits
from effdim_app.dashboard import EffdimApp
from effdim_app.links import LinkView, read_link

FUZZ = settings(
    max_examples=100,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
UPLOADS = settings(FUZZ, max_examples=60)
LIMITS = ServerLimits(max_memory_mb=4, max_upload_mb=1)

#: What must never reach a user: a traceback, a Python exception's class name, an engine keyword or CLI option.
LEAKS = re.compile(
    r"Traceback|\b[A-Z]\w*(?:Error|Exception|Warning|Interrupt)\b|--[a-z]\w*|"
    r"\b(?:max_iter|max_bytes|max_states|max_columns|too_many_states|check_float|cs_prior|count_column|"
    r"sheet_name|dtype|kwargs|self)\b"
)
#: Elements the dashboard's own HTML never has: in a pane they come from user text.
FOREIGN_TAGS = {"img", "script", "iframe", "object", "embed", "a", "form", "input", "body", "style"}


class _Runnable(HTMLParser):
    """The elements of an HTML text that could run code: a foreign tag, an ``on...`` handler, a
    ``javascript:`` address."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        handlers = [name for name, value in attrs if name.startswith("on")]
        scripts = [name for name, value in attrs if (value or "").strip().lower().startswith("javascript:")]
        if tag in FOREIGN_TAGS or handlers or scripts:
            self.found.append(f"<{tag} {' '.join(handlers + scripts)}>")


def runnable(text: str) -> list[str]:
    parser = _Runnable()
    parser.feed(text)
    parser.close()
    return parser.found


@pytest.fixture(scope="module")
def dashboard():
    """One session's dashboard: its states with no job runner, and every view of both tabs built."""
    app = EffdimApp(limits=LIMITS, jobs=None)
    for state in (app.models, app.data, app.scores):
        state.jobs = None
    app.tabs.active = 1  # builds the Data & scores tab
    app.tabs.active = 0
    app.data.load_bundled("stouffer-toby")
    return app


def page_html(app: EffdimApp) -> list[str]:
    """The text of every HTML and Markdown pane of the dashboard."""
    panes = []
    for root in (app.tabs, pn.panel(app.model_panel)):
        panes += root.select(pn.pane.HTML) + root.select(pn.pane.Markdown)
    return [str(p.object) for p in panes if p.object]


def assert_clear(message: str, user_text: str = "") -> None:
    """One line; whatever looks like an exception class or a keyword is the user's own text."""
    assert message.strip(), "no message"
    assert "\n" not in message.strip() and "\r" not in message, repr(message)
    for leak in LEAKS.finditer(message):
        assert leak.group() in user_text, f"{leak.group()!r} in {message!r}"


def assert_escaped(app: EffdimApp) -> None:
    for text in page_html(app):
        assert runnable(text) == [], text[:300]


def outcome(state, ok: bool, before, after, user_text: str) -> None:
    """A refused action says why in one line and changes nothing; an accepted one says so too."""
    assert isinstance(ok, bool)
    assert_clear(state.message, user_text)
    if not ok:
        assert state.message_kind in ("danger", "warning"), state.message
        assert after == before


# ------------------------------------------------------------------ the model
@FUZZ
@given(text=st.one_of(notations, hostile_text()))
def test_the_notation_box(dashboard, text):
    models = dashboard.models
    before = models.model
    ok = models.load_notation(text)
    outcome(models, ok, before, models.model, text)
    assert_escaped(dashboard)


@FUZZ
@given(content=st.one_of(json_models().map(lambda d: json.dumps(d).encode()), st.binary(max_size=300)))
def test_a_json_model_import(dashboard, content):
    models = dashboard.models
    before = models.model
    ok = models.load_json(content)
    outcome(models, ok, before, models.model, content.decode("utf-8", "replace"))
    assert_escaped(dashboard)


@FUZZ
@given(name=hostile_text(), card=hostile_text(max_size=12), node=st.integers(0, 50))
def test_renaming_a_node_and_the_states_box(dashboard, name, card, node):
    models = dashboard.models
    models.load_notation("5(3(2,2),2,3(2,2))")
    nodes = list(models.model.nodes)
    models.select(nodes[node % len(nodes)])
    before = models.model
    outcome(models, models.rename(name), before, models.model, name)
    assert_escaped(dashboard)
    before = models.model
    outcome(models, models.set_card(card), before, models.model, card)
    assert_escaped(dashboard)


# ------------------------------------------------------------------ the data
#: (file name, (kind, content)): a data file of any format (tests/strategies.py) under a hostile name.
uploads = st.tuples(
    st.tuples(hostile_text(max_size=12), st.sampled_from([*FILE_KINDS, "txt"])).map(lambda t: f"{t[0]}.{t[1]}"),
    data_files,
)


@UPLOADS
@given(upload=uploads)
def test_a_data_upload(dashboard, upload):
    """Every format the upload reads, written from a random table with hostile names and labels, or
    random bytes under any name (the format is told by the first bytes, else by the name)."""
    name, (_, content) = upload
    if content is None:
        return
    data = dashboard.data
    before = data.dataset
    ok = data.load_upload(name, content)
    outcome(data, ok, before, data.dataset, name + content.decode("utf-8", "replace"))
    assert_escaped(dashboard)
    if ok:
        columns = list(data.full.columns)
        state_texts = [str(s) for s in data.full.states[0]]
        data.move_state(columns[0], state_texts[-1], -1)
        assert_clear(data.message, " ".join(columns + state_texts))
        assert_escaped(dashboard)


@UPLOADS
@given(frame=tables(), step=st.integers(-3, 3))
def test_reordering_the_states_of_hostile_labels(dashboard, frame, step):
    """Every state of an uploaded table's first column moved: the message names them all, on one line."""
    content = written(frame, "parquet")
    data = dashboard.data
    if content is None or not data.load_upload("labels.parquet", content):
        return
    column = data.full.columns[0]
    for state in [str(s) for s in data.full.states[0]]:
        before = data.dataset
        ok = data.move_state(column, state, step)
        outcome(data, ok, before, data.dataset, column + state)
        assert_escaped(dashboard)


@FUZZ
@given(column=hostile_text(), state=hostile_text(max_size=8), step=st.integers(-3, 3))
def test_reordering_a_columns_states(dashboard, column, state, step):
    data = dashboard.data
    before = data.dataset
    ok = data.move_state(column, state, step)
    outcome(data, ok, before, data.dataset, column + state)
    assert_escaped(dashboard)


# ------------------------------------------------------------------ the link
link_values = st.one_of(
    hostile_text(), notations, st.sampled_from(["0", "1", "2", "3", "-1", "²", "٣", "9" * 5000, "1.0", "on", "true"])
)


@st.composite
def link_arguments(draw) -> dict[str, list[bytes]]:
    """A page's query arguments as the server hands them over: name -> list of byte values."""
    names = draw(st.lists(st.sampled_from(["model", "tab", "projector", "other"]), max_size=4, unique=True))
    encode = lambda text: text.encode("utf-8", "surrogatepass")  # noqa: E731
    return {
        n: draw(st.lists(st.one_of(link_values.map(encode), st.binary(max_size=20)), min_size=0, max_size=2))
        for n in names
    }


@FUZZ
@given(args=link_arguments())
def test_a_link(dashboard, args):
    view = read_link(args, tabs=len(dashboard.tabs))
    assert isinstance(view, LinkView)
    assert view.tab is None or 0 <= view.tab < len(dashboard.tabs)
    assert isinstance(view.projector, bool)
    models = dashboard.models
    before = models.model
    if view.model:
        ok = models.open_link(view.model)
        outcome(models, ok, before, models.model, view.model)
    assert_escaped(dashboard)


def test_the_check_sees_the_hostile_strings_unescaped_and_not_escaped():
    """Every markup string of strategies.MARKUP that would run in a page is seen by :func:`runnable`,
    and none once escaped as the dashboard escapes user text (effdim_app/views/widgets.py plain())."""
    from effdim_app.views.widgets import plain

    assert [m for m in MARKUP if runnable(f"<div>{m}</div>")] == MARKUP[:5]
    assert not any(runnable(f"<div>{plain(m)}</div>") for m in MARKUP)
