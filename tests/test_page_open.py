"""What opening a served page costs the server: Bokeh models made, walks of the document (no browser).

A class opens the page at once, and every page is built on the server's one
event loop, so each model and each walk of the document is paid thirty times
over (docs/robustness.md, "Opening a page").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import threading
import time
from unittest import mock

import panel as pn
import pytest
from bokeh.core.has_props import HasProps
from bokeh.core.validation.check import check_integrity
from bokeh.document import Document
from bokeh.document.models import DocumentModelManager
from bokeh.models import Axis, Grid, Title
from bokeh.protocol import Protocol
from bokeh.settings import settings
from panel.io.state import set_curdoc
from ui.jupyterlab_session import free_port, wait_for
from waiting import BOUND, until

from effdim_app import compat
from effdim_app import server as served
from effdim_app.dashboard import EXTENSIONS, TEMPLATE_DESIGN, create_app

#: Bokeh models of the first screen on Figure 2 (229 before the tree lost figure()'s axes and the hidden
#: step table and demo bar were built on first use; 190 before the job lines and the selected row's card were;
#: 180 before the Dimensions section below the totals was built when first seen).
MODEL_BUDGET = 130


def _page(model=None):
    pn.extension(*EXTENSIONS)
    doc, app = Document(), create_app(model)
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        template = app.template()
        walks = mock.patch.object(
            DocumentModelManager, "recompute", autospec=True, side_effect=DocumentModelManager.recompute
        )
        with walks as recompute:
            template.server_doc(doc)
    return app, doc, recompute.call_count


def _shape(doc) -> str:
    """``doc`` as the browser receives it, without what differs between two builds of the same page (model ids
    and names, random keys, the time the dimensions took)."""
    text = json.dumps(json.loads(Protocol().create("PULL-DOC-REPLY", "0", doc).content_json), sort_keys=True)
    text = re.sub(r"computed in \d+ ms", "", text)
    return re.sub(r"\bp\d+\b|[0-9a-f]{24,}|\d{5,}", "#", text)


def test_the_page_is_the_same_without_the_checks_its_build_skips():
    """Bokeh's check of every value Panel sets converts nothing on this page (compat.add_page_at_once skips it)."""
    _, unchecked, _ = _page()
    with mock.patch.object(compat, "validate", lambda _on: contextlib.nullcontext()):
        _, checked, _ = _page()
    assert len(checked.models) == len(unchecked.models)
    assert _shape(checked) == _shape(unchecked)


def test_the_page_is_sent_the_same_without_the_defaults_serialization_leaves_out():
    _, doc, _ = _page()
    with mock.patch.object(HasProps, "query_properties_with_values", compat.BOKEH_QUERY):
        compat.serialize_set_values_only()
        quick = _shape(doc)  # first: Bokeh's own would compute (and keep) defaults this one skips
    with mock.patch.object(HasProps, "query_properties_with_values", compat.BOKEH_QUERY):
        assert _shape(doc) == quick


def test_the_first_screen_passes_the_document_checks_the_server_skips():
    _, doc, _ = _page()
    assert not check_integrity(doc.models).error  # effdim app does not run them per page (server.py)


def test_the_server_process_turns_the_authoring_checks_off():
    checks = (settings.perform_document_validation, settings.perform_error_diagnostics)
    try:
        served.skip_authoring_checks()
        assert not any(check() for check in checks)
    finally:
        for check in checks:
            check.unset_value()
    assert all(check() for check in checks)


def _classes(doc):
    return {c for m in doc.models for c in (getattr(m, "css_classes", None) or [])}


def test_the_page_is_added_to_its_document_with_one_walk_of_its_models():
    _, doc, walks = _page()
    assert walks == 1
    assert doc.roots and all(m.document is doc for m in doc.models)


def test_the_first_screen_stays_within_its_model_budget():
    _, doc, _ = _page()
    assert len(doc.models) <= MODEL_BUDGET
    assert not [m for m in doc.models if isinstance(m, (Axis, Grid, Title))]  # the tree shows none


def test_the_step_table_and_the_demo_bar_are_built_when_first_shown():
    app, doc, _ = _page()
    assert {"effdim-steps", "effdim-demo"}.isdisjoint(_classes(doc))
    with set_curdoc(doc):
        app.demo.go(0)
        assert app.models.load_notation("9(2,2)")  # irregular: the step log appears
    assert {"effdim-steps", "effdim-demo"} <= _classes(doc)
    assert app.regularity.log_shown and len(app.regularity.steps.value) >= 1 and app.demo.bar.visible


def test_the_dimensions_below_the_totals_are_built_when_first_seen():
    """A page request builds the totals only; the table and the rest come once the browser reports the
    section in its window (effdim_app/views/first_sight.py), as they would have been built with the page."""
    app, doc, _ = _page("9(2,2)")  # irregular: the table shows the regular equivalent's rows
    dimensions = app.dimensions
    assert not dimensions.details_built and "effdim-dims" not in _classes(doc)
    assert "data-stat='ds'" in dimensions.totals.object
    with set_curdoc(doc):
        app.projector = True  # before the table exists: it is laid out for the large type when built
        app.models.highlight = "H1"  # a highlight it does not know yet
        dimensions.sight.seen = True
    assert {"effdim-dims", "effdim-verify", "effdim-dims-csv"} <= _classes(doc)
    assert all(m.document is doc for m in doc.models)
    assert list(dimensions.table.value["hidden"]) == [r.hidden for r in app.models.report.local]
    assert dimensions.table.layout == "fit_data_fill" and dimensions.table.selection == [0]
    assert dimensions.row_card.visible and "Row H1" in dimensions.row_card.title
    with set_curdoc(doc):
        assert app.models.load_notation("3:2,2,2")  # later edits reach the built table
    assert list(dimensions.table.value["hidden"]) == ["H1"]
    assert dimensions.corollary.object.startswith("<div class='effdim-corollary'>An LC model")


def test_the_job_lines_and_the_row_card_are_built_when_first_needed():
    app, doc, _ = _page()
    dimensions = app.dimensions
    with set_curdoc(doc):
        dimensions.sight.seen = True
    assert dimensions.de_job.bar is None and dimensions.direct_job.bar is None and dimensions.row_card is None
    cards = _classes_count(doc, "card")
    with set_curdoc(doc):
        app.models.highlight = "H2"  # a row of the table clicked
    assert dimensions.row_card.visible and dimensions.row_card.title == "Row H2 explained"
    assert "H2" in dimensions.row_note.object and _classes_count(doc, "card") == cards + 1
    with set_curdoc(doc):
        app.models.highlight = None
    assert not dimensions.row_card.visible and dimensions.row_hint.visible


def _classes_count(doc, css_class: str) -> int:
    return sum(css_class in (getattr(m, "css_classes", None) or []) for m in doc.models)


def test_a_page_opened_on_an_irregular_model_shows_its_steps_at_once():
    app, doc, _ = _page("9(2,2)")
    assert "effdim-steps" in _classes(doc) and app.regularity.log_shown


async def _late_browser(url: str, late: float) -> str:
    """Request the page, connect its websocket ``late`` seconds later (a browser still loading scripts);
    the type of the server's first message."""
    from tornado.httpclient import AsyncHTTPClient
    from tornado.websocket import websocket_connect

    page = (await AsyncHTTPClient().fetch(url, request_timeout=60)).body.decode()
    token = re.search(r'"token":\s*"([^"]+)"', page).group(1)
    await asyncio.sleep(late)
    connection = await websocket_connect(url.replace("http://", "ws://") + "/ws", subprotocols=["bokeh", token])
    header = await connection.read_message()
    connection.close()
    return header


@pytest.fixture(scope="module")
def quick_expiry():
    """``effdim app`` in a thread, unconnected sessions expiring after 0.3 s and a page's grace of 3 s; the
    times at which it built a page and released a session.

    Only this server's: both run on its thread, and this test process may serve the browser tests' dashboard
    too, whose closed pages' sessions are released meanwhile (counted with this server's, one of them once
    passed for this server's unconnected page, released 1.5 s after it was asked for)."""
    port = free_port()
    built: list[float] = []
    released: list[float] = []
    server = None

    def on_this_server(times: list[float], then=lambda *_, **__: None):
        def call(*args, **kwargs):
            if threading.current_thread() is server:
                times.append(time.monotonic())
            return then(*args, **kwargs)

        return call

    builds = mock.patch.object(served, "create_app", side_effect=on_this_server(built, create_app))
    releases = mock.patch.object(served, "release_after_session", side_effect=on_this_server(released))
    with builds, releases, mock.patch.object(served, "CONNECT_GRACE_SECONDS", 3):
        server = served.serve(
            port=port,
            address="127.0.0.1",
            threaded=True,
            show=False,
            websocket_origin=[f"127.0.0.1:{port}"],
            check_unused_sessions_milliseconds=100,
            unused_session_lifetime_milliseconds=300,
        )
        try:
            wait_for(port)
            yield f"http://127.0.0.1:{port}/effdim", built, released
        finally:
            server.stop()


@pytest.mark.exclusive  # a late browser 1.5 s after the page, sessions expiring after 0.3 s and a grace of 3 s
def test_a_page_whose_browser_connects_late_is_built_once(quick_expiry):
    url, built, _ = quick_expiry
    before = len(built)
    header = _own_loop(lambda: asyncio.run(asyncio.wait_for(_late_browser(url, late=1.5), BOUND)))
    assert '"ACK"' in header
    assert len(built) == before + 1  # the websocket found the page's session, not a new one


def test_a_page_that_never_connects_expires_after_its_grace(quick_expiry):
    """The page's session is released, but not before the grace has passed since the page was asked for.

    Timed from the request, not by a count taken 1.5 s after the page arrived: on a loaded machine the page
    itself took long enough to build that the grace was over at that count (a lower bound on a delay holds
    at any load, so the test needs no machine to itself)."""
    from tornado.httpclient import HTTPClient

    url, built, released = quick_expiry
    _wait(lambda: len(released) == len(built), "the other tests' sessions to expire")
    asked = time.monotonic()
    _own_loop(lambda: HTTPClient().fetch(url, request_timeout=60))
    _wait(lambda: len(released) == len(built), "the unconnected page's session to expire")
    assert released[-1] - asked >= served.CONNECT_GRACE_SECONDS, "released before its browser's grace was over"


def _wait(condition, what: str) -> None:
    _own_loop(lambda: asyncio.run(until(condition, what, every=0.1)))


def _own_loop(call):
    """``call()`` in a thread of its own: the browser tests' Playwright keeps an event loop running in this one,
    where ``asyncio.run`` and Tornado's blocking client refuse to start another."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result(timeout=2 * BOUND)


def test_parts_built_in_a_click_leave_the_page_styled_from_this_server():
    """A served page's sheets point at its server; the guided demo's bar and the Dimensions table, built
    in a click (one message), had Panel rewrite the sheets the page shares to its CDN (compat_sessions)."""
    from bokeh.models import ImportedStyleSheet
    from panel.io.resources import CDN_DIST, patch_model_css

    from effdim_app.views.widgets import in_one_message

    here = "static/extensions/panel/"
    pn.extension(*EXTENSIONS)
    doc, app = Document(), create_app()
    doc._template_variables["dist_url"] = here  # as a served session's (compat_sessions.panel_files_from_this_server)
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        app.template().server_doc(doc)
        for root in doc.roots:
            patch_model_css(root, dist_url=here)

        def sheets() -> set[str]:
            return {sheet.url for sheet in doc.select({"type": ImportedStyleSheet})}

        assert sheets() and not [url for url in sheets() if url.startswith(CDN_DIST)]
        in_one_message(lambda _: app.demo.go(0))(None)
        app.dimensions.sight.seen = True
        assert app.demo.bar.visible and app.dimensions.details_built
        assert not [url for url in sheets() if url.startswith(CDN_DIST)]
