"""The served dashboard's collector: each built session leaves its sight, closed sessions are still collected."""

from __future__ import annotations

import gc
import inspect
import weakref

import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from effdim_app import server
from effdim_app.server_memory import release_freed_memory, settle_session


class Node:
    """A stand-in for a session's objects: reference cycles, as Panel's and Bokeh's are."""

    def __init__(self):
        self.me = self


@pytest.fixture
def thawed_after():
    yield
    gc.unfreeze()  # the test process's objects back in the collector's generations


def test_a_settled_session_is_out_of_the_collectors_sight(thawed_after):
    session = [Node() for _ in range(20_000)]
    frozen = gc.get_freeze_count()
    settle_session()
    # a full collection no longer walks them (they were walked at every one while the class arrived)
    assert gc.get_freeze_count() >= frozen + len(session)
    assert not any(obj is session[0] for obj in gc.get_objects(generation=2))


def test_a_closed_sessions_cycles_are_collected_though_they_were_frozen(thawed_after):
    session = Node()
    alive = weakref.ref(session)
    settle_session()
    del session
    gc.collect()
    assert alive() is not None  # frozen: no collection finds it ...
    release_freed_memory()  # ... until the release after closed sessions thaws everything
    assert alive() is None
    assert gc.get_freeze_count() > 0  # the living are frozen again


def test_effdim_app_settles_each_page_once_it_is_built():
    doc = Document()
    with set_curdoc(doc):
        assert server.settled(lambda: "the page")() == "the page"
    assert [inspect.unwrap(c.callback) for c in doc.callbacks.session_callbacks] == [settle_session]
