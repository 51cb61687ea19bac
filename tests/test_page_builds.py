"""Pages arriving together (effdim_app/compat_sessions.py, ``built_off_the_loop``; effdim_app/job_sessions.py,
``BuildTurns``): each session's document is built in a thread, one at a time, while the event loop goes on
serving the pages already open, and the later ``initialize_document`` call builds nothing again."""

from __future__ import annotations

import asyncio
import threading
import time

from bokeh.document import Document
from waiting import run_in_fresh_loop

from effdim_app.compat_sessions import built_off_the_loop
from effdim_app.job_sessions import BuildTurns

#: Seconds one page's build holds its thread (the real build is about a third of a second of CPU).
BUILD = 0.4


class SlowApplication:
    """What ``built_off_the_loop`` wraps: Bokeh's session-created hook and document build, the build slow."""

    def __init__(self) -> None:
        self.builds: list[tuple[str, float, float]] = []  # (thread name, start, end)

    async def on_session_created(self, session_context) -> None:
        return None

    def initialize_document(self, doc: Document) -> None:
        start = time.monotonic()
        time.sleep(BUILD)
        self.builds.append((threading.current_thread().name, start, time.monotonic()))


class Context:
    """The part of a Bokeh session context the hook reads: its document, and the page request's address."""

    def __init__(self, client: str) -> None:
        self._document = Document()
        self.request = type("Request", (), {"remote_ip": client})()


def test_pages_are_built_off_the_loop_one_at_a_time_and_the_loop_goes_on():
    app = SlowApplication()
    turns = BuildTurns()
    wrapped = built_off_the_loop(app, lambda context: turns.turn(context.request.remote_ip))
    contexts = [Context(f"10.0.0.{i}") for i in range(3)]

    async def go():
        ticks, stop = [], asyncio.Event()

        async def tick() -> None:  # a connected student's messages, served between the builds' slices
            while not stop.is_set():
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        await asyncio.gather(*(wrapped.on_session_created(context) for context in contexts))
        stop.set()
        await ticker
        for context in contexts:  # Bokeh's own call once the hooks are done: the document is built already
            wrapped.initialize_document(context._document)
        return ticks, threading.current_thread().name

    ticks, loop_thread = run_in_fresh_loop(go())
    assert len(app.builds) == 3, app.builds  # one build per page, none again at initialize_document
    assert all(name != loop_thread for name, _, _ in app.builds), app.builds
    spans = sorted((start, end) for _, start, end in app.builds)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans  # one at a time
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 3 * BUILD / 0.05 and max(gaps) < BUILD / 2, (len(ticks), max(gaps))


def test_a_page_built_in_a_thread_belongs_to_the_loop_thread_after():
    """Panel defers a change made outside a document's thread to the loop: the built document is the loop's."""
    from panel.io.state import state

    app = SlowApplication()
    turns = BuildTurns()
    wrapped = built_off_the_loop(app, lambda context: turns.turn("10.0.0.1"))
    context = Context("10.0.0.1")

    async def go():
        await wrapped.on_session_created(context)
        return threading.get_ident()

    loop_thread = run_in_fresh_loop(go())
    assert state._thread_id_[context._document] == loop_thread
