"""``effdim app --processes 2`` in the browser: every page works whichever process serves it.

With two server processes a page's HTTP request and its websocket can reach
different processes (the kernel hands each new connection to either). A page
request builds no session (its HTML comes from one kept session); the session
is built once, where the websocket lands. Four pages are opened on one such
server and each applies a model, the last one edits it; each must show its
own numbers, and the two processes must both have served sessions. One more
page is made to take its HTML from one process and its websocket to the
other: it shows its link's model, styled by this server's copy of Panel's
files, never Panel's CDN.

Which process accepts a connection is the kernel's choice, and one that has
just run tends to win again: left to it, all of four pages, and once all of
seven, went to one process. So the first page opens while the second process
is stopped (``SIGSTOP``) and the second page while the first is: each is
served by the other one, whatever the kernel prefers. A browser context's
pages reuse its kept-alive connections, and one to a stopped process would
hang: the first page has a context of its own, the second is the test's page
of the shared profile (``warm_browser``), which has no connection to this
server yet. The last two open there with both processes running, wherever
their connections land.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager, nullcontext

import psutil
import pytest
from conftest import VIEWPORT, served
from pages import TIMEOUT, apply_notation, open_app, see_the_dimensions, stat
from playwright.sync_api import expect

from effdim import parse_model
from effdim.bounds import standard_dimension

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def two_process_url(tmp_path_factory):
    with served(tmp_path_factory.mktemp("server") / "effdim-app.log", "--processes", "2") as (url, server):
        yield url, server


def _forked_servers(pid: int, count: int, seconds: float = 60) -> list[psutil.Process]:
    """The ``count`` servers the process ``pid`` forked (they appear after its port opens)."""
    deadline = time.time() + seconds
    while True:
        forked = [p for p in psutil.Process(pid).children() if "effdim.cli" in " ".join(p.cmdline())]
        if len(forked) >= count or time.time() > deadline:
            return forked
        time.sleep(0.2)


def _cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


@contextmanager
def _stopped(process: psutil.Process):
    """``process`` stopped (``SIGSTOP``) for the block, then resumed, whatever the block raised."""
    process.suspend()
    try:
        yield
    finally:
        process.resume()


def _selected_node(page, model, seconds: float = TIMEOUT / 1000) -> str:
    """The node of ``model`` that ``page`` says is selected, read until it names one: the line is redrawn as the
    page settles (a check that it named a node followed by a read of it once read an empty line)."""
    shown = page.locator(".effdim-sel b")
    deadline = time.monotonic() + seconds
    while True:
        match = re.fullmatch(r"Selected: (\S+)", (shown.first.text_content() or "").strip())
        if match and match[1] in model:
            return match[1]
        assert time.monotonic() < deadline, f"no node of {model} shown as selected after {seconds:.0f} s"
        time.sleep(0.1)


#: Regular models (ds as drawn), one per page.
MODELS = ["3:2,2,2,2", "4:3,3,3", "3(2,2,2(2,2))", "5(3(2,2),2,3(2,2))"]
#: CPU seconds a server process must have spent for it to count as having served a page (an idle one: 0.04).
SERVED = 0.3


@pytest.fixture
def own_context_page(browser):
    """A page in a browser context of its own (its own connections, nothing cached), closed after the test."""
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def test_pages_on_two_server_processes_each_keep_their_own_model(own_context_page, page, two_process_url):
    url, server = two_process_url
    forked = _forked_servers(server.pid, 2)
    assert len(forked) == 2, forked
    before = [_cpu_seconds(p) for p in forked]
    ds = {notation: str(standard_dimension(parse_model(notation))) for notation in MODELS}
    pages = [own_context_page, page] + [page.context.new_page() for _ in MODELS[2:]]  # closed after the test
    for index, (one, notation) in enumerate(zip(pages, MODELS)):
        # the first two pages: one on each process, the other stopped while it opens
        with _stopped(forked[1 - index]) if index < 2 else nullcontext():
            open_app(one, url)
            apply_notation(one, notation)
            expect(stat(one, "ds")).to_have_text(ds[notation], timeout=TIMEOUT)
    for one, notation in zip(pages, MODELS):
        expect(stat(one, "ds")).to_have_text(ds[notation], timeout=TIMEOUT)
        expect(one.locator(".effdim-notation textarea")).to_have_value(notation)
    # an edit once all the pages exist: the selected node of the last page to 4 states
    last, model = pages[-1], parse_model(MODELS[-1])
    selected = _selected_node(last, model)
    box = last.locator(".effdim-card-input input")
    box.fill("4")
    box.press("Enter")
    edited = model.with_card(selected, 4)
    expect(stat(last, "ds")).to_have_text(str(standard_dimension(edited)), timeout=TIMEOUT)
    served = [_cpu_seconds(p) - b for p, b in zip(forked, before)]  # since the test began
    assert all(u > SERVED for u in served), f"CPU seconds per server process while serving {len(pages)} pages: {served}"


#: The address of every stylesheet a page's components link, in their shadow roots however deep.
STYLESHEETS_JS = """() => {
  const found = [];
  const visit = (root) => root.querySelectorAll('*').forEach((element) => {
    if (element.shadowRoot) {
      element.shadowRoot.querySelectorAll('link[rel=stylesheet]').forEach((link) => found.push(link.href));
      visit(element.shadowRoot);
    }
  });
  visit(document);
  return found;
}"""


def test_a_page_whose_request_and_websocket_reach_different_processes_works_and_is_styled(
    own_context_page, two_process_url
):
    """The page's HTML from the first process, everything after it (scripts, stylesheets, the websocket) from the
    second: the browser's request for the page is answered with HTML fetched while the second process is
    stopped, then the first is stopped while the page loads (a context of its own: no connection to either yet).
    The session the second process builds must show the link's model and its tables must load their styles from
    this server (a classroom may have no internet), not from Panel's CDN."""
    import urllib.request

    url, server = two_process_url
    first, second = _forked_servers(server.pid, 2)
    link = f"{url}?model=4:3,3,3"
    page = own_context_page
    asked = []
    page.on("request", lambda request: asked.append(request.url))

    def html_from_the_first(route):
        with _stopped(second):
            with urllib.request.urlopen(link, timeout=TIMEOUT / 1000) as reply:
                body = reply.read()
        first.suspend()  # resumed below, once the page has loaded from the second
        route.fulfill(status=200, body=body, headers={"Content-Type": "text/html"})

    page.route(re.compile(r".*/effdim\?model=.*"), html_from_the_first)
    try:
        page.goto(link)
        expect(stat(page, "ds")).to_have_text(str(standard_dimension(parse_model("4:3,3,3"))), timeout=TIMEOUT)
        see_the_dimensions(page)
    finally:
        first.resume()
    from effdim_app.compat import CDN_DIST

    assert not [u for u in asked if u.startswith(CDN_DIST)], [u for u in asked if u.startswith(CDN_DIST)][:3]
    sheets = page.evaluate(STYLESHEETS_JS)
    assert any("tabulator" in href for href in sheets), sheets[:5]
    assert all(href.startswith(url.split("/effdim")[0]) for href in sheets), [h for h in sheets if "cdn" in h][:3]
