"""A dashboard session driven over the Bokeh websocket protocol, as a browser drives it but without one:
the page's HTTP request, the websocket with the page's token, the document pulled, the page-loaded event
sent, then edits, clicks and the server's patches (for the tests of many sessions on one server and the
dashboard's benchmarks, ``benchmarks/common.py``).

(The tests import it as ``protocol_client``, pytest putting this folder on ``sys.path``; the benchmarks as
``tests.ui.protocol_client``.)
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import time

#: The page's session token, in its HTML.
TOKEN = re.compile(r'"token":\s*"([^"]+)"')


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
        ws = self.url.split("?")[0].replace("http://", "ws://") + "/ws"  # a link's query goes with the page only
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
