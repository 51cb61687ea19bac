"""Shared links against a real ``effdim app`` (one server process and two): a page request with no browser
behind it starts no job, a connected page does, and a page that closes ends its job without a traceback
in the server's log (effdim_app/job_sessions.py; docs/robustness.md, "Shared links")."""

from __future__ import annotations

import asyncio
import time
import urllib.request

import psutil
import pytest
from app_server import start_app, stop_app
from protocol_client import Client
from waiting import run_in_fresh_loop

#: A model whose exact de takes a worker for seconds (ds 5,219).
HEAVY = "60:30,30,29"


def job_workers(server_pid: int) -> list[psutil.Process]:
    """The server's job workers: the children of its forkservers (with --processes 2, of each process's)."""
    workers = []
    for proc in psutil.Process(server_pid).children(recursive=True):
        try:
            if "forkserver" in " ".join(proc.cmdline()):
                workers += proc.children()
        except psutil.Error:
            pass
    return workers


def wait_until(condition, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"waited {seconds} s for {what}")
        time.sleep(0.2)


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_link_starts_its_job_only_for_a_connected_page_and_ends_it_quietly(tmp_path, processes):
    log = tmp_path / "app.log"
    server, url = start_app(log, "--processes", processes, "--log-level", "info")
    try:
        link = f"{url}?model={HEAVY}"
        for _ in range(4):  # curl: the page is built, no websocket ever connects
            with urllib.request.urlopen(link, timeout=120) as reply:
                assert reply.status == 200
        time.sleep(3)
        assert job_workers(server.pid) == [], "a page request without a browser started a job"

        async def connect_then_leave():
            client = await Client(link).open()  # as a browser: the page, its websocket, the page-loaded event
            await asyncio.to_thread(wait_until, lambda: job_workers(server.pid), 60, "the connected page's job")
            client.close()

        run_in_fresh_loop(connect_then_leave())
        # the closed page's session is destroyed 5-7 s later, and its job with it
        wait_until(lambda: not job_workers(server.pid), 30, "the closed page's job to end")
    finally:
        stop_app(server)
    text = log.read_text()
    assert "Traceback" not in text and "_roots" not in text, text[-3000:]
