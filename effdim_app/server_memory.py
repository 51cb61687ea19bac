"""The served dashboard's memory and garbage collector (docs/robustness.md, "Memory").

A session is some 40,000 Python objects (Panel views, Bokeh models, param
watchers), many in reference cycles; thirty open sessions make the cyclic
garbage collector's full passes long pauses on the one event loop that serves
every student. Two measures:

* :func:`tune_collector`: after start-up, the imported modules' objects are
  frozen out of the collector's sight (:func:`gc.freeze`) and the youngest
  generation is collected less often;
* :func:`settle_session`: once a page's session is built, its objects are
  frozen too, so the collections while a class keeps arriving do not walk
  every open session again;
* :func:`release_freed_memory`: after sessions close, everything is thawed,
  their garbage is collected, the rest frozen again, and glibc is asked to
  hand the freed pages back to the system (``malloc_trim``), so the server's
  memory returns towards its baseline instead of staying at its peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

__all__ = ["tune_collector", "settle_session", "release_freed_memory"]

#: Allocations between two collections of the youngest generation (CPython's default: 700).
YOUNG_THRESHOLD = 20_000


def tune_collector() -> None:
    """Freeze what exists now (imports, the job runner) and collect the young generation less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def settle_session() -> None:
    """Collect the young generations' garbage, then freeze what remains, a new session's objects included.

    A session is some 40,000 objects that live as long as its page; left in the
    collector's generations, every collection of the oldest one walked all open
    sessions again, on the event loop every page waits for. Frozen objects are
    never collected until :func:`release_freed_memory` thaws them, so the young
    garbage is collected first (a pass over the young generations only).
    """
    gc.collect(1)
    gc.freeze()


def _malloc_trim():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None)
    except OSError:
        return None


_TRIM = _malloc_trim()


def release_freed_memory() -> None:
    """Collect the closed sessions' cycles (frozen with their sessions: thawed first, the rest frozen again),
    then return free heap pages to the system (glibc only)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    if _TRIM is not None:
        _TRIM(0)


_release_scheduled = False


def release_after_session(delay: float = 5.0) -> None:
    """Run :func:`release_freed_memory` once, ``delay`` seconds after the last of a burst of closed sessions.

    Called from a session's destroy hook on the server's event loop; a class
    leaving at once costs one collection, not thirty.
    """
    global _release_scheduled
    if _release_scheduled:
        return
    from tornado.ioloop import IOLoop

    def release() -> None:
        global _release_scheduled
        _release_scheduled = False
        release_freed_memory()

    _release_scheduled = True
    IOLoop.current().call_later(delay, release)
