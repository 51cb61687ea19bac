"""Browser tests: the dashboard served in a thread, driven by Playwright in headless Chromium.

Debian's Chromium is used (``playwright install`` cannot download browsers
here); ``.ci/run`` installs it when missing. Screenshots go to
``tests/ui/screenshots/`` (git-ignored).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyterlab_session import free_port, jupyterlab, wait_for

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).parent / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}



@pytest.fixture(scope="session", autouse=True)
def chromium_installed():
    """Browser tests fail (never skip) without Chromium: CI must run them."""
    if not Path(CHROMIUM).exists():  # pragma: no cover - .ci/run installs it
        pytest.fail(f"{CHROMIUM} not installed: apt-get install chromium (as .ci/run does)", pytrace=False)


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
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": VIEWPORT}


@pytest.fixture(scope="session")
def app_url():
    """The dashboard served as ``effdim app`` serves it (one job runner, default limits), in a thread."""
    from effdim_app import serve

    port = free_port()
    server = serve(port=port, address="127.0.0.1", threaded=True, show=False,
                   websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    wait_for(port)
    yield f"http://127.0.0.1:{port}/effdim"
    server.stop()


@pytest.fixture(scope="session")
def inline_url():
    """The dashboard's inline (notebook) form, without the page template, one fresh app per session."""
    import panel as pn

    from effdim_app.dashboard import EXTENSIONS, create_app

    def inline():
        pn.extension(*EXTENSIONS)
        return create_app()

    port = free_port()
    server = pn.serve({"inline": inline}, port=port, address="127.0.0.1", threaded=True, show=False,
                      websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    wait_for(port)
    yield f"http://127.0.0.1:{port}/inline"
    server.stop()


@pytest.fixture(scope="session")
def shots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "effdim_dashboard.ipynb"


@pytest.fixture(scope="session")
def jupyterlab_url(tmp_path_factory):
    """JupyterLab (``jupyterlab_session.jupyterlab``) on a copy of the example notebook; yields its URL."""
    try:
        with jupyterlab(NOTEBOOK, tmp_path_factory.mktemp("jupyterlab")) as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error), pytrace=False)
