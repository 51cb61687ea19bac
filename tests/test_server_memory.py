"""The served dashboard's collector: each built session leaves its sight, closed sessions are still collected."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

from bokeh.document import Document
from panel.io.state import set_curdoc

from effdim_app import server
from effdim_app.server_memory import settle_session


def in_a_fresh_process(body: str) -> None:
    """Run ``body`` (Python, with ``Node``: a stand-in for a session's objects, reference cycles as Panel's and
    Bokeh's are) in a new interpreter. The collector's freeze is process-wide, and a dashboard that an earlier
    test served from this process thaws it whenever its closed sessions are released: here, nothing else runs."""
    script = "import gc, weakref\nfrom effdim_app.server_memory import release_freed_memory, settle_session\n\n"
    script += "class Node:\n    def __init__(self):\n        self.me = self\n\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_settled_session_is_out_of_the_collectors_sight():
    in_a_fresh_process(
        """
        session = [Node() for _ in range(20_000)]
        frozen = gc.get_freeze_count()
        settle_session()
        # a full collection no longer walks them (they were walked at every one while the class arrived)
        assert gc.get_freeze_count() >= frozen + len(session)
        assert not any(obj is session[0] for obj in gc.get_objects(generation=2))
        """
    )


def test_a_closed_sessions_cycles_are_collected_though_they_were_frozen():
    in_a_fresh_process(
        """
        session = Node()
        alive = weakref.ref(session)
        settle_session()
        del session
        gc.collect()
        assert alive() is not None  # frozen: no collection finds it ...
        release_freed_memory()  # ... until the release after closed sessions thaws everything
        assert alive() is None
        assert gc.get_freeze_count() > 0  # the living are frozen again
        """
    )


def test_effdim_app_settles_each_page_once_it_is_built():
    doc = Document()
    with set_curdoc(doc):
        assert server.settled(lambda: "the page")() == "the page"
    assert [inspect.unwrap(c.callback) for c in doc.callbacks.session_callbacks] == [settle_session]
