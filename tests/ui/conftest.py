"""Browser tests: the dashboard served in a thread, driven by Playwright in headless Chromium.

Debian's Chromium is used (``playwright install`` cannot download browsers
here); ``.ci/run`` installs it when missing. Screenshots go to
``tests/ui/screenshots/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(port: int, seconds: float = 30.0) -> None:
    """Return once a server listens on ``port`` (or after ``seconds``)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)


@pytest.fixture(scope="session")
def app_url():
    """The dashboard served as ``effdim app`` serves it (one job runner, default limits), in a thread."""
    from effdim_app import serve

    port = _free_port()
    server = serve(port=port, address="127.0.0.1", threaded=True, show=False,
                   websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    _wait_for(port)
    yield f"http://127.0.0.1:{port}/effdim"
    server.stop()


@pytest.fixture(scope="session")
def inline_url():
    """The dashboard's inline (notebook) form, without the page template, one fresh app per session."""
    import panel as pn

    from effdim_app.app import EXTENSIONS, create_app

    def inline():
        pn.extension(*EXTENSIONS)
        return create_app()

    port = _free_port()
    server = pn.serve({"inline": inline}, port=port, address="127.0.0.1", threaded=True, show=False,
                      websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    _wait_for(port)
    yield f"http://127.0.0.1:{port}/inline"
    server.stop()


@pytest.fixture(scope="session")
def shots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "effdim_dashboard.ipynb"
#: JupyterLab settings of the test server: no news or update pop-up over the notebook.
LAB_SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                {"fetchNews": "false", "checkForUpdates": False}}


@pytest.fixture(scope="session")
def jupyterlab_url(tmp_path_factory):
    """JupyterLab of this environment (its python3 kernel is this Python) on a copy of the example notebook.

    Root, configuration, data, runtime and settings directories are temporary,
    so the server sees neither the user's Jupyter set-up nor other servers.
    Yields the notebook's URL; the server is terminated at the end.
    """
    home = tmp_path_factory.mktemp("jupyterlab")
    root = home / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root)
    for name, settings in LAB_SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(settings))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "IPYTHONDIR": str(home / "ipython")}
    port = _free_port()
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True"],  # window.jupyterapp: the tests run commands by name
        env=env, stdout=log, stderr=subprocess.STDOUT)
    _wait_for(port)
    if server.poll() is not None:
        pytest.fail(f"jupyter lab did not start:\n{(home / 'server.log').read_text()}", pytrace=False)
    yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}"
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung shutdown
        server.kill()
        server.wait()
    log.close()
