"""Whose each job is (no Panel import): the session that submitted it, and the client that session serves.

A session can exist before any browser shows its page, and anyone can send page requests (a plain ``curl``
of a shared link, ``/effdim?model=60:30,30,29``), so the job runner (:class:`effdim_app.jobs.JobRunner`)
keeps a :class:`SessionBook` (docs/robustness.md, "Shared links"):

* a session the server expects (:meth:`SessionBook.expect`, at its page's build) starts no job until its
  page has connected (:meth:`SessionBook.connect`, Panel's page-loaded event); until then its jobs wait,
  and if it closes first they end without having run;
* a session that closes (:meth:`SessionBook.close`) hands back its unfinished jobs, which the runner
  cancels without a word to the closed page (no view of it exists any more);
* each session belongs to a client, the address its page request came from: the runner caps a client's
  waiting jobs and gives a free worker to the client with the fewest jobs running, then started
  (:func:`fair_turn`).

Sessions the server does not expect (a notebook's, a test's state) run their jobs at once, each its own
client. Pages are built by the same rule (:class:`BuildTurns`): one at a time, the next one a page of the
client with the fewest built, so a client opening many pages delays its own, not the class's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BuildTurns", "SessionBook", "fair_turn", "RECENTLY_CLOSED"]

#: Closed sessions remembered (a job submitted after its session closed, by a callback still running, is
#: cancelled too); older ones are forgotten, so a server running for weeks keeps a bounded list.
RECENTLY_CLOSED = 10_000


class SessionBook:
    """The sessions of one job runner: each one's client, whether its page has connected, its unfinished jobs."""

    def __init__(self) -> None:
        self._client: dict[str, str] = {}
        self._connected: dict[str, asyncio.Event] = {}  # expected sessions, set once their page has connected
        self._closed: OrderedDict[str, None] = OrderedDict()
        self._jobs: dict[str, set[Any]] = {}

    def expect(self, session: str, client: str) -> None:
        """``session``'s page is being built for ``client``: its jobs wait until :meth:`connect`."""
        self._client[session] = client
        self._connected.setdefault(session, asyncio.Event())

    def connect(self, session: str) -> None:
        """``session``'s page has connected: its waiting jobs may start."""
        event = self._connected.get(session)
        if event is not None:
            event.set()

    def close(self, session: str) -> set[Any]:
        """``session`` is gone: forget it and hand back its unfinished jobs (to be cancelled)."""
        self._closed[session] = None
        while len(self._closed) > RECENTLY_CLOSED:
            self._closed.popitem(last=False)
        self._client.pop(session, None)
        event = self._connected.pop(session, None)
        if event is not None:
            event.set()  # its waiting jobs wake up, and find their session closed
        return self._jobs.pop(session, set())

    def client(self, session: str) -> str:
        """The client ``session`` serves (a session the server does not expect is a client of its own)."""
        return self._client.get(session, session)

    def closed(self, session: str) -> bool:
        return session in self._closed

    def add(self, job: Any) -> None:
        self._jobs.setdefault(job.session, set()).add(job)

    def discard(self, job: Any) -> None:
        jobs = self._jobs.get(job.session)
        if jobs is not None:
            jobs.discard(job)

    async def until_connected(self, session: str) -> bool:
        """Wait until ``session``'s page has connected (at once for a session not expected); ``False`` if it
        closed instead."""
        event = self._connected.get(session)
        if event is not None and not event.is_set():
            await event.wait()
        return not self.closed(session)


def fair_turn(waiting: Sequence[Any], running: Sequence[Any], started: Counter) -> int:
    """Which of the ``waiting`` jobs (in the order they came) a free worker takes: the first one of the client
    with the fewest jobs running, then with the fewest started (``started``: client -> jobs started while it
    had jobs waiting or running), so a client that queued many jobs delays its own, not the others'."""
    busy = Counter(job.client for job in running)
    return min(range(len(waiting)), key=lambda i: (busy[waiting[i].client], started[waiting[i].client], i))


@dataclass
class _Waiting:
    client: str
    turn: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class BuildTurns:
    """Whose page is built next (``effdim_app.compat_sessions.built_off_the_loop`` builds one at a time): the first
    waiting page of the client with the fewest pages built while it had pages waiting (:func:`fair_turn`)."""

    def __init__(self) -> None:
        self._building = False
        self._waiting: list[_Waiting] = []
        self._started: Counter = Counter()

    @contextlib.asynccontextmanager
    async def turn(self, client: str) -> AsyncIterator[None]:
        """Wait for this build's turn, build within the block; the next build's turn comes when it ends."""
        if self._building:
            waiting = _Waiting(client)
            self._waiting.append(waiting)
            try:
                await waiting.turn
            except BaseException:
                if waiting in self._waiting:
                    self._waiting.remove(waiting)
                elif waiting.turn.done() and not waiting.turn.cancelled():
                    self._pass_on()  # the turn came as this page left: the next one takes it
                raise
        self._building = True
        self._started[client] += 1
        try:
            yield
        finally:
            self._pass_on()

    def _pass_on(self) -> None:
        if not self._waiting:
            self._building = False
            self._started.clear()  # nobody waits: every client starts afresh
            return
        waiting = self._waiting.pop(fair_turn(self._waiting, [], self._started))
        waiting.turn.set_result(None)
