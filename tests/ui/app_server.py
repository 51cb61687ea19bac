"""``effdim app`` in a process group of its own, as a class's server runs it: for the browser tests and benchmarks.

(The browser tests import it as ``app_server``, pytest putting this folder on ``sys.path``; the benchmarks as
``tests.ui.app_server``, from the repository root.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.ui.jupyterlab_session import free_port, wait_for  # as the benchmarks import it too


def start_app(log: Path, *options: str) -> tuple[subprocess.Popen, str]:
    """``effdim app`` with ``options`` on a free port of 127.0.0.1, its output to ``log``; the process and the
    dashboard's URL once it listens (its log's end quoted if it ends or does not listen first)."""
    port = free_port()
    command = [sys.executable, "-m", "effdim.cli", "app", "--no-show", "--port", str(port), "--address", "127.0.0.1"]
    command += ["--allow-websocket-origin", f"127.0.0.1:{port}", "--allow-websocket-origin", f"localhost:{port}"]
    with open(log, "w") as out:
        # its own process group: with --processes N the forked servers, and its job workers, go with it
        server = subprocess.Popen([*command, *options], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(port, 90, server)
    except RuntimeError as failure:
        stop_app(server)
        raise RuntimeError(f"{failure}; its log ({log}) ends: {Path(log).read_text()[-2000:]}") from None
    return server, f"http://127.0.0.1:{port}/effdim"


def stop_app(server: subprocess.Popen) -> None:
    """Stop the server's whole process group: SIGTERM to the parent alone would orphan the processes that
    ``--processes N`` forked (a terminal's Ctrl-C reaches them all); SIGKILL if it has not ended in 20 s."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(20)
    except ProcessLookupError:
        pass


def serve_in_thread(path: str, make) -> tuple[str, object]:
    """``make()``, one fresh app per session with the dashboard's Panel extensions, served by ``pn.serve`` in a
    thread of this process on a free port at ``/path``, once the port answers; returns ``(url, server)``
    (``server.stop()`` ends it)."""
    import panel as pn

    from effdim_app.dashboard import EXTENSIONS

    def session():
        pn.extension(*EXTENSIONS)
        return make()

    port = free_port()
    server = pn.serve(
        {path: session},
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"],
    )
    wait_for(port)
    return f"http://127.0.0.1:{port}/{path}", server
