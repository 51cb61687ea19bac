"""Browser tests: the dashboard served by ``effdim app``, driven by Playwright in headless Chromium.

Debian's Chromium is used (``playwright install`` cannot download browsers
here); ``.ci/run`` installs it when missing. Screenshots go to
``tests/ui/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from app_server import serve_in_thread, start_app, stop_app
from jupyterlab_session import jupyterlab
from pages import TIMEOUT, open_app, sweep_stouffer_toby
from playwright.sync_api import Page, expect

#: The browser the tests drive (Debian's; EFFDIM_CHROMIUM names another).
CHROMIUM = os.environ.get("EFFDIM_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).parent / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}
#: How long an ``expect`` waits for the page to reach what it asserts, unless it says otherwise (Playwright's own
#: default is 5 s). The browser tests check where the page ends up, not how fast (the latency tests time
#: themselves, ``@pytest.mark.exclusive``); on a loaded machine a table could fill 5 s after the numbers
#: above it, and a bare ``expect`` then failed a correct page.
EXPECT_SECONDS = 30
expect.set_options(timeout=EXPECT_SECONDS * 1000)

#: Why the browser tests do not run here, and how to make them run.
NO_CHROMIUM = (
    f"browser tests skipped: no Chromium at {CHROMIUM} (install it: apt-get install chromium, "
    "or set EFFDIM_CHROMIUM to its path)"
)

# Without Chromium, CI fails the run as soon as it reaches the browser tests (CI must run them; every CI service sets
# CI): raised while this file loads, the message reaches the run's summary from any pytest-xdist worker too.
if os.environ.get("CI") and not Path(CHROMIUM).exists():
    raise pytest.UsageError(
        f"{NO_CHROMIUM.replace('browser tests skipped: ', '')}: CI must run the browser tests (.ci/run installs it)"
    )


def pytest_collection_modifyitems(config, items):
    """Without Chromium, the browser tests are skipped on a person's machine (one line in the summary)."""
    if Path(CHROMIUM).exists():
        return
    here = Path(__file__).parent
    browser_tests = [item for item in items if here in Path(str(item.fspath)).parents]
    if not browser_tests:
        return
    for item in browser_tests:
        item.add_marker(pytest.mark.skip(reason=NO_CHROMIUM))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            # a page whose HTML a test serves from a route (test_processes.py) connects its websocket to this
            # machine's server, which Chromium's local network access checks would block for such a page
            "--disable-features=LocalNetworkAccessChecks",
        ],
    }


@pytest.fixture(scope="session")
def warm_browser(browser_type, browser_type_launch_args, tmp_path_factory):
    """Chromium with one profile on disk for the whole run (per worker), as a returning student's browser.

    Playwright's ``browser.new_context()`` is an incognito profile: it keeps no compiled code, so every page
    opened in a fresh one parsed and compiled the dashboard's 5 MB of scripts again. Pages of this profile
    reuse them (HTTP cache and V8's code cache): a quarter of Chromium's CPU seconds in the browser tests
    (CONTRIBUTING.md, "Running the tests"). Each test still gets a page of its own, hence a server session of
    its own; the dashboard keeps nothing in the browser (no cookies or storage, its page is sent ``no-store``).
    A page that routes its requests (the offline checks, ``refuse_other_hosts``) loads without the cache
    (Playwright turns it off for a routed page), so it still asks for everything."""
    context = browser_type.launch_persistent_context(
        tmp_path_factory.mktemp("chromium-profile"), **browser_type_launch_args, viewport=VIEWPORT
    )
    yield context
    context.close()


@pytest.fixture
def page(warm_browser):
    """A page of :func:`warm_browser` at 1366x768; it and every page the test opened are closed after it."""
    before = set(warm_browser.pages)
    page = warm_browser.new_page()
    yield page
    for opened in set(warm_browser.pages) - before:
        opened.close()


@contextmanager
def served(log: Path, *options: str):
    """``effdim app`` with ``options`` in a process of its own (:func:`app_server.start_app`), stopped after;
    yields its URL and the process.

    Not in a thread of the test worker: the server's collections would then walk the worker's whole heap
    (pytest's, Hypothesis's and Playwright's objects too), 0.3 s each time it hands back closed sessions'
    memory (effdim_app/server_memory.py), and the server would share the worker's interpreter lock."""
    server, url = start_app(log, *options)
    try:
        yield url, server
    finally:
        stop_app(server)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """The dashboard served by ``effdim app`` with the default limits (:func:`served`)."""
    with served(tmp_path_factory.mktemp("server") / "effdim-app.log") as (url, _):
        yield url


#: The fit the Stouffer-Toby sweep shows first (BIC+'s pick), in the fitted view's menu, and its G2.
STOUFFER_TOBY_FIT, STOUFFER_TOBY_G2 = "|X| = 2: X:2(A:2,B:2,C:2,D:2)", "2.7199"


@pytest.fixture(scope="session")
def stouffer_toby_swept(warm_browser, app_url):
    """One page per worker with Stouffer-Toby swept for |X| = 1 .. 3 and its fitted view showing BIC+'s pick, on
    the Data & scores tab, for the tests that read a swept page (a sweep and its drawing cost seconds of both
    cores). A test that changes what the page shows puts it back (:func:`show_the_first_fit`); one that changes
    the model or the sweep sweeps a page of its own."""
    page = warm_browser.new_page()
    open_app(page, app_url)
    sweep_stouffer_toby(page, up_to=3)
    expect(page.locator(".effdim-fit-stats")).to_contain_text(STOUFFER_TOBY_G2, timeout=TIMEOUT)
    yield page
    page.close()


def show_the_first_fit(page: Page) -> None:
    """Puts :func:`stouffer_toby_swept`'s page back as it was made: BIC+'s pick in the fitted view, the window at
    its usual size."""
    page.set_viewport_size(VIEWPORT)
    page.locator(".effdim-fit-choice select").select_option(STOUFFER_TOBY_FIT)
    expect(page.locator(".effdim-fit-stats")).to_contain_text(STOUFFER_TOBY_G2, timeout=TIMEOUT)


@pytest.fixture(scope="session")
def inline_url():
    """The dashboard's inline (notebook) form, without the page template, one fresh app per session."""
    from effdim_app.dashboard import create_app

    url, server = serve_in_thread("inline", create_app)
    yield url
    server.stop()


@pytest.fixture(scope="session")
def shots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "effdim_dashboard.ipynb"


@pytest.fixture(scope="module")
def jupyterlab_url(tmp_path_factory):
    """JupyterLab (``jupyterlab_session.jupyterlab``) on a copy of the example notebook; yields its URL and stops
    it, and its kernel, after the module's tests."""
    try:
        with jupyterlab(NOTEBOOK, tmp_path_factory.mktemp("jupyterlab")) as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
