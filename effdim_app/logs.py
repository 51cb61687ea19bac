"""The dashboard's log: the logger ``effdim_app``, each of whose records names the session it came from.

Wherever the dashboard catches an error to show it and keep running (an
engine failure shown in a view, a job that failed in its worker), it logs
the error with its traceback through :func:`swallowed`, so a server's
operator sees what the user saw and why. ``effdim app --log-level`` sets the
level (:func:`configure`). The session is found by a lookup the dashboard
installs (:func:`use_session_lookup`; this module does not import Panel),
or given with the record (``extra={"session": ...}``) where the error
surfaces outside the session, as a job's does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from effdim.errors import EffdimError

__all__ = ["LOG", "LEVELS", "configure", "current_session", "swallowed", "use_session_lookup"]

LOG = logging.getLogger("effdim_app")
#: The levels ``effdim app --log-level`` offers, most verbose first.
LEVELS = ("debug", "info", "warning", "error")
#: A record's line: time, level, session, message (the traceback follows on its own lines).
FORMAT = "%(asctime)s %(levelname)s effdim_app [session %(session)s] %(message)s"
#: The session of a record logged outside any session (start-up, the job runner's own failures).
NO_SESSION = "-"


def _no_session() -> str:
    return NO_SESSION


_session_lookup: Callable[[], str] = _no_session  # replaced by the dashboard's (use_session_lookup)


def use_session_lookup(lookup: Callable[[], str]) -> None:
    """Name records' sessions with ``lookup()`` (the dashboard's: the current Bokeh session's id)."""
    global _session_lookup
    _session_lookup = lookup


def current_session() -> str:
    """The id of the session the code runs for now (:data:`NO_SESSION` outside one)."""
    try:
        return _session_lookup()
    except Exception:
        return NO_SESSION


class _SessionFilter(logging.Filter):
    """Gives every record of :data:`LOG` a ``session`` (the current one unless the caller gave it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "session"):
            record.session = current_session()
        return True


LOG.addFilter(_SessionFilter())


def swallowed(what: str, error: BaseException, session: str | None = None) -> None:
    """Log ``error``, which the dashboard shows and carries on after, with its traceback.

    At INFO when the engine refused the user's input (an ``EffdimError``:
    the message already names the culprit), at ERROR otherwise (a defect or
    a resource running out).
    """
    level = logging.INFO if isinstance(error, EffdimError) else logging.ERROR
    extra = {} if session is None else {"session": session}
    LOG.log(level, "%s: %s", what, error, exc_info=error, extra=extra)


def configure(level: str = "warning", stream=None) -> logging.Handler:
    """Send :data:`LOG`'s records at ``level`` (one of :data:`LEVELS`) and above to ``stream`` (stderr).

    Called once by ``effdim app``; calling it again replaces the handler it added.
    """
    if level not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    for handler in [h for h in LOG.handlers if getattr(h, "effdim_app", False)]:
        LOG.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.effdim_app = True
    handler.setFormatter(logging.Formatter(FORMAT))
    LOG.addHandler(handler)
    LOG.setLevel(level.upper())
    LOG.propagate = False
    return handler
