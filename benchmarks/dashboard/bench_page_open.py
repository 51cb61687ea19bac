"""Server CPU per page open of a real ``effdim app``: robust to a loaded machine, unlike wall-clock times.

Starts ``effdim app`` (as ``bench_classroom.py`` does), opens ``--pages``
sessions one after the other as a browser does (page request, websocket,
the document pulled; ``bench_classroom.Client``), and reads the server
process's CPU time (user + system, ``psutil``) before and after each. CPU
seconds spent per page do not grow when other processes share the cores, so
a change to what a page costs can be measured on a busy machine; the
classroom's wall-clock open times follow from it on an idle one (30 pages
over 30 s on one event loop: about 30 x this CPU, within the 30 s).

Run: ``python -m benchmarks.dashboard.bench_page_open [--pages 12] [-- effdim app options]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("server_args", nargs="*", help="after --: options for 'effdim app'")
    args = parser.parse_args()
    load = os.getloadavg()[0]
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
