"""Bounded waits for the tests: each fails with what it waited for instead of hanging (pytest-timeout is the
last resort, and it names no condition)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

#: Seconds a test waits for a condition or a result before failing (a loaded CI machine included).
BOUND = 90.0


async def until(condition: Callable[[], bool], what: str, seconds: float = BOUND, every: float = 0.02) -> None:
    """Return once ``condition()`` holds; fail with ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        await asyncio.sleep(every)


def run_in_fresh_loop(coro: Coroutine[Any, Any, Any], seconds: float = BOUND) -> Any:
    """``coro`` run on a fresh event loop in its own thread (a browser test may own this thread's loop).

    The thread is a daemon: a loop stuck past ``seconds`` neither holds the test nor the interpreter's exit.
    """
    outcome: dict[str, Any] = {}

    def body() -> None:
        try:
            outcome["result"] = asyncio.run(coro)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = error

    name = coro.__qualname__
    thread = threading.Thread(target=body, name=f"fresh loop for {name}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"the coroutine {name} did not finish in {seconds:.0f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
