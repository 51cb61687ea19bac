"""Server CPU per page open of a real ``effdim app``: robust to a loaded machine, unlike wall-clock times.

Starts ``effdim app`` (as ``bench_classroom.py`` does), opens ``--pages``
sessions one after the other as a browser does (page request, websocket,
the document pulled; ``bench_classroom.Client``), and reads the server
process's CPU time (user + system, ``psutil``) before and after each. CPU
seconds spent per page do not grow when other processes share the cores, so
a change to what a page costs can be measured on a busy machine; the
classroom's wall-clock open times follow from it on an idle one (30 pages
over 30 s on one event loop: about 30 x this CPU, within the 30 s).

``--in-process`` builds the pages in this process instead, as ``effdim app`` builds one (its settings, the
session's document, the document as sent), with the collector run before each so that no page pays for
another's garbage, and reports the CPU of each build and the Bokeh models it sends; ``--app DIR`` builds
the pages of the ``effdim_app`` in ``DIR`` instead (another version of the dashboard:
``git archive COMMIT effdim_app | tar -x -C DIR``), to compare two in one run.

Run: ``python -m benchmarks.dashboard.bench_page_open [--pages 12] [--in-process [--app DIR]] [-- effdim app
options]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time

import psutil

from benchmarks.common import Client, start_server, stop_app


async def open_pages(url: str, pid: int, pages: int) -> tuple[list[float], list[float]]:
    server = psutil.Process(pid)
    clients, cpu, wall = [], [], []
    (await Client(url).open()).close()  # the first page also imports and warms up: not counted
    for _ in range(pages):
        before = sum(server.cpu_times()[:2])
        client = await Client(url).open()
        await asyncio.sleep(0.3)  # the deferred parts (document_ready) are built
        cpu.append(sum(server.cpu_times()[:2]) - before)
        wall.append(client.open_seconds)
        clients.append(client)
    for client in clients:
        client.close()
    return cpu, wall


def build_pages(pages: int) -> tuple[list[float], int, int]:
    """CPU seconds of each of ``pages`` page builds in this process, as ``effdim app`` builds one; the Bokeh
    models and the bytes of the document sent."""
    import panel as pn
    from bokeh.document import Document
    from bokeh.protocol import Protocol
    from panel.io.state import set_curdoc

    from effdim_app import compat, server
    from effdim_app.dashboard import EXTENSIONS, TEMPLATE_DESIGN, create_app

    compat.cache_class_defaults()
    compat.serialize_set_values_only()
    server.skip_authoring_checks()
    pn.extension(*EXTENSIONS)

    def page() -> tuple[int, int]:
        doc = Document()
        with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
            create_app().template().server_doc(doc)
        return len(doc.models), len(Protocol().create("PULL-DOC-REPLY", "0", doc).content_json)

    for _ in range(3):  # the first pages also import and warm up: not counted
        page()
    cpu = []
    for _ in range(pages):
        gc.collect()
        start = time.process_time()
        models, size = page()
        cpu.append(time.process_time() - start)
    return cpu, models, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--in-process", action="store_true", help="build the pages in this process (see above)")
    parser.add_argument("--app", default=None, help="with --in-process: a folder holding another effdim_app")
    parser.add_argument("server_args", nargs="*", help="after --: options for 'effdim app'")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    if args.in_process and args.app:  # a fresh interpreter run from DIR, whose effdim_app comes first
        argv = [a for a in sys.argv[1:] if a != args.app and not a.startswith("--app")]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.pathsep.join(p for p in (args.app, root, os.environ.get("PYTHONPATH", "")) if p)
        command = [sys.executable, "-m", "benchmarks.dashboard.bench_page_open", *argv]
        subprocess.run(command, check=True, cwd=args.app, env={**os.environ, "PYTHONPATH": path})
        return
    if args.in_process:
        cpu, models, size = build_pages(args.pages)
        print(
            f"summary: a page build in this process: p50 {1000 * statistics.median(cpu):.0f} ms of CPU, min "
            f"{1000 * min(cpu):.0f} ms (n={len(cpu)}), {models} Bokeh models, {size / 1024:.0f} KiB sent; load "
            f"average {load:.1f} before, {os.getloadavg()[0]:.1f} after"
        )
        return
    server, url = start_server(args.server_args)
    try:
        cpu, wall = asyncio.run(open_pages(url, server.pid, args.pages))
    finally:
        stop_app(server)
    print(
        f"server CPU per page open: p50 {1000 * statistics.median(cpu):.0f} ms, min {1000 * min(cpu):.0f} ms, "
        f"max {1000 * max(cpu):.0f} ms (n={len(cpu)})"
    )
    print(f"open (page request to document received): p50 {1000 * statistics.median(wall):.0f} ms")
    print(
        f"summary: {1000 * statistics.median(cpu):.0f} ms of server CPU per page open; "
        f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after"
    )


if __name__ == "__main__":
    main()
