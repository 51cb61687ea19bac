"""What the benchmarks share: reading the machine's load and processes' CPU seconds, and serving the dashboard.

Every benchmark runs from the repository root as a module, ``python -m benchmarks.GROUP.NAME [options]``
(``benchmarks/README.md`` lists them), so that it imports this module and the browser tests' page helpers
(``tests.ui``) as packages.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import random
import re
import subprocess
import tempfile
import time
from pathlib import Path

from tests.ui.app_server import start_app, stop_app

__all__ = [
    "TICK",
    "Client",
    "chromium_cpu_seconds",
    "load_average",
    "process_stat",
    "program_of",
    "start_server",
    "stop_app",
]

#: Clock ticks per second of ``/proc/PID/stat``'s CPU times.
TICK = os.sysconf("SC_CLK_TCK")
TOKEN = re.compile(r'"token":\s*"([^"]+)"')


def load_average() -> float:
    """The machine's one-minute load average, to print beside the figures (``/proc/loadavg``)."""
    return os.getloadavg()[0]


def program_of(pid: int) -> str:
    """Which program a process runs: chromium, python, node (Playwright's driver) or the name of another; "" once
    it has ended."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:  # ended (a zombie keeps its CPU seconds, not its program)
        return ""
    name = Path(exe).name
    if "chrom" in exe or "headless" in name:
        return "chromium"
    if name.startswith("python"):
        return "python"
    return name


def process_stat(pid: int) -> tuple[int, str, float] | None:
    """A process's parent, start time (its identity with the pid) and CPU seconds so far."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[19], (int(fields[11]) + int(fields[12])) / TICK


def chromium_cpu_seconds() -> float:
    """CPU seconds so far of every running Chromium process of the machine."""
    pids = map(int, filter(str.isdigit, os.listdir("/proc")))
    return sum(stat[2] for pid in pids if program_of(pid) == "chromium" and (stat := process_stat(pid)))


def start_server(extra: list[str]) -> tuple[subprocess.Popen, str]:
    """``effdim app`` with the options ``extra``, its log in a temporary file (``tests/ui/app_server.py``); stop it
    with :func:`stop_app`."""
    log = tempfile.NamedTemporaryFile(prefix="effdim-benchmark-", suffix=".log", delete=False)
    log.close()
    return start_app(Path(log.name), *extra)


class Client:
    """One session over the Bokeh websocket protocol, without building Python Bokeh models.

    ``bokeh.client`` would rebuild the page's hundreds of models in Python for
    every student, on the cores the server needs; this client speaks the same protocol (ACK, PULL-DOC, PATCH-DOC
    with ModelChanged and bokeh_event messages) but keeps each model as its
    JSON attributes, updated from the server's patches.
    """

    def __init__(self, url: str):
        self.url = url
        self.models: dict[str, dict] = {}  # id -> {"name": ..., "attributes": {...}}
        self.watchers: dict[tuple[str, str], list] = {}
        self.open_seconds = float("nan")
        self.closed = False
        self._conn = None
        self._reader = None
        self._replies: dict[str, asyncio.Future] = {}

    # ------------------------------------------------------------ protocol
    async def open(self) -> Client:
        from tornado.httpclient import AsyncHTTPClient
        from tornado.websocket import websocket_connect

        # as a browser does: GET the page (the server builds the session for it), then open the
        # websocket with the page's token (with --processes N it may reach another process,
        # which then builds the session again)
        start = time.perf_counter()
        page = await AsyncHTTPClient().fetch(self.url, request_timeout=120)
        token = TOKEN.search(page.body.decode("utf-8", "replace")).group(1)
        ws = self.url.replace("http://", "ws://") + "/ws"
        self._conn = await websocket_connect(ws, subprotocols=["bokeh", token], max_message_size=100 * 2**20)
        await self._receive()  # ACK
        reply = await self._request("PULL-DOC-REQ", {})
        self._learn(reply)
        self.open_seconds = time.perf_counter() - start
        self._reader = asyncio.ensure_future(self._read_forever())
        await self._patch(
            [
                {
                    "kind": "MessageSent",
                    "msg_type": "bokeh_event",
                    "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map"}},
                }
            ]
        )  # deferred parts load now
        return self

    async def _receive(self):
        header = await self._conn.read_message()
        if header is None:
            return None
        header = json.loads(header)
        await self._conn.read_message()  # metadata
        content = json.loads(await self._conn.read_message())
        for _ in range(2 * header.get("num_buffers", 0)):
            await self._conn.read_message()
        return header, content

    async def _send(self, msgtype: str, content: dict, msgid: str) -> None:
        await self._conn.write_message(json.dumps({"msgid": msgid, "msgtype": msgtype}))
        await self._conn.write_message("{}")
        await self._conn.write_message(json.dumps(content))

    async def _request(self, msgtype: str, content: dict) -> dict:
        msgid = f"c{random.getrandbits(48)}"
        await self._send(msgtype, content, msgid)
        while True:
            header, reply = await self._receive()
            if header.get("reqid") == msgid:
                return reply

    async def _patch(self, events: list) -> None:
        await self._send("PATCH-DOC", {"events": events}, f"c{random.getrandbits(48)}")

    async def _read_forever(self) -> None:
        while True:
            message = await self._receive()
            if message is None:
                self.closed = True
                return
            header, content = message
            if header["msgtype"] != "PATCH-DOC":
                continue
            self._learn(content)
            for event in content.get("events", []):
                if event.get("kind") == "ModelChanged":
                    model_id, attr = event["model"]["id"], event["attr"]
                    if model_id in self.models:
                        self.models[model_id]["attributes"][attr] = event["new"]
                    for fn in self.watchers.get((model_id, attr), []):
                        fn(event["new"])

    def _learn(self, tree) -> None:
        """Remember every model defined in a reply or patch (new tabs bring new models)."""
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("type") == "object" and "id" in node and "attributes" in node:
                    self.models[node["id"]] = {"name": node.get("name"), "attributes": node["attributes"]}
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)

    # ------------------------------------------------------------ the page
    def find(self, css: str | None = None, name: str | None = None, label: str | None = None) -> str:
        for model_id, model in self.models.items():
            attrs = model["attributes"]
            if css is not None and css not in (attrs.get("css_classes") or []):
                continue
            if name is not None and not str(model["name"]).split(".")[-1] == name:
                continue
            if label is not None and attrs.get("label") != label:
                continue
            return model_id
        raise LookupError(f"no model with css={css!r} name={name!r} label={label!r}")

    def text(self, model_id: str) -> str:
        return html.unescape(str(self.models[model_id]["attributes"].get("text", "")))

    def watch(self, model_id: str, attr: str, fn) -> None:
        self.watchers.setdefault((model_id, attr), []).append(fn)

    async def set(self, model_id: str, **values) -> None:
        for attr, new in values.items():
            self.models[model_id]["attributes"][attr] = new
        await self._patch(
            [
                {"kind": "ModelChanged", "model": {"id": model_id}, "attr": attr, "new": new}
                for attr, new in values.items()
            ]
        )

    async def click(self, label: str) -> None:
        button = self.find(name="Button", label=label)
        await self._patch(
            [
                {
                    "kind": "MessageSent",
                    "msg_type": "bokeh_event",
                    "msg_data": {
                        "type": "event",
                        "name": "button_click",
                        "values": {"type": "map", "entries": [["model", {"id": button}]]},
                    },
                }
            ]
        )

    def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self._conn is not None:
            self._conn.close()
