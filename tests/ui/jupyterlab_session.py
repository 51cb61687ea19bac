"""A JupyterLab server isolated from the user's Jupyter set-up, for browser tests and benchmarks.

(The browser tests import it as ``jupyterlab_session``, the benchmarks as ``tests.ui.jupyterlab_session``.) Root, configuration, data, runtime and settings
directories are temporary, so the server sees neither the user's Jupyter
set-up nor other servers; its python3 kernel is this Python.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

#: JupyterLab settings of the server: no news or update pop-up over the notebook.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False}
}


#: A page function: true once the kernel of JupyterLab's current notebook is idle.
KERNEL_IDLE = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"


def refuse_other_hosts(page, refused: list[str] | None = None, asked: list[str] | None = None) -> None:
    """Every request of ``page`` to a host other than this machine is refused (and listed in ``refused``); those
    to this machine are listed in ``asked``. Routed, the page loads nothing from the browser's cache."""

    def route(request_route):
        if urlparse(request_route.request.url).hostname in ("127.0.0.1", "localhost"):
            if asked is not None:
                asked.append(request_route.request.url)
            request_route.continue_()
        else:
            if refused is not None:
                refused.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, seconds: float = 90.0, server: subprocess.Popen | None = None) -> None:
    """Return once a server listens on ``port``; fail after ``seconds`` or once ``server`` has ended."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if server is not None and server.poll() is not None:
            raise RuntimeError(f"the server ended (exit status {server.returncode}) before listening on {port}")
        time.sleep(0.2)
    raise RuntimeError(f"nothing listened on port {port} after {seconds:.0f} s")


def lab_extension_dirs() -> list[str]:
    """The ``share/jupyter`` directories holding the JupyterLab extensions of the installed packages.

    JupyterLab looks for extensions under its own prefix's ``share/jupyter``
    only; a venv whose packages come from another environment (through a
    ``.pth``, as a git worktree's venv here does) has none there, and then
    loads no extension: without pyviz_comms's, Panel's notebook output never
    talks to the kernel and stays at its placeholder line.
    """
    found = []
    for dist in importlib.metadata.distributions():
        for file in dist.files or ():
            parts = file.parts
            if "labextensions" in parts and parts[-1] == "package.json":
                share = Path(dist.locate_file(file)).resolve().parents[len(parts) - parts.index("labextensions") - 1]
                if share.name == "jupyter" and str(share) not in found:
                    found.append(str(share))
                break
    return found


@contextlib.contextmanager
def jupyterlab(notebook: Path, home: Path):
    """JupyterLab on a copy of ``notebook``, with every directory under ``home``; yields the notebook's URL.

    ``window.jupyterapp`` is exposed so that a page can run JupyterLab's
    commands by name. The server is terminated on exit.
    """
    root = home / "root"
    root.mkdir(parents=True)
    (root / notebook.name).write_bytes(notebook.read_bytes())
    for name, settings in LAB_SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(settings))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PATH": os.pathsep.join([*lab_extension_dirs(), os.environ.get("JUPYTER_PATH", "")]),
    }
    port = free_port()
    log_path = home / "server.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--allow-root",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--IdentityProvider.token=",
                "--ServerApp.password=",
                f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            try:
                wait_for(port, server=server)
            except RuntimeError as error:
                raise RuntimeError(f"jupyter lab did not start ({error}):\n{log_path.read_text()}") from None
            yield f"http://127.0.0.1:{port}/lab/tree/{notebook.name}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung shutdown
                server.kill()
                server.wait()
