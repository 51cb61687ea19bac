"""The dashboard's server: one fresh app per browser session, all sessions' heavy work in one job runner.

:func:`serve` is what ``effdim app`` runs, :func:`session_page` the page of
one session (``panel serve apps/effdim.py`` serves it too), :func:`show` a
served dashboard opened from a notebook or a script. With several server
processes the server forks at start; each forked process ends with its
parent (docs/robustness.md).
"""

from __future__ import annotations

import os

import panel as pn
import tornado.process
from bokeh.settings import settings
from panel.io.application import build_applications

from effdim.executor import die_with_parent

from .compat import cache_class_defaults, no_typeset_math, serialize_set_values_only
from .compat_sessions import built_off_the_loop
from .config import ServerLimits
from .dashboard import EXTENSIONS, TEMPLATE_DESIGN, TITLE, create_app
from .job_sessions import BuildTurns
from .jobs import JobRunner
from .server_memory import release_after_session, settle_session, tune_collector

__all__ = ["serve", "session_page", "show", "keep_until_connected"]

#: How long a page's session waits for its browser to connect before it may expire unused.
CONNECT_GRACE_SECONDS = 60


def session_page(limits=None, jobs=None, model=None, workers=None):
    """The page of one served session: a fresh app whose jobs go to the server's one runner.

    ``jobs`` defaults to a runner shared by every session of the process
    (``pn.state.cache``), so ``panel serve apps/effdim.py`` bounds the worker
    processes as ``effdim app`` does. Closing the session cancels its jobs
    (docs/robustness.md).
    """
    limits = limits or ServerLimits()
    if jobs is None:
        # made with the first page (panel serve apps/effdim.py): its forkserver starts beside that page's build
        jobs = pn.state.as_cached("effdim_app.jobs", lambda: _runner(limits, workers or limits.workers, wait=False))
    pn.extension(*EXTENSIONS)
    no_typeset_math()  # the page without MathJax, which it does not use: 1.8 MB less to load (effdim_app/compat.py)
    # the page's design for every component made in the session (pn.config is per session here):
    # a component made under the default design is rendered with the template's stylesheets but
    # sends the default design's on its first update, which reloads the page's stylesheets
    pn.config.design = TEMPLATE_DESIGN
    jobs.attach(_serving_loop())  # callback threads and the page's build thread submit to it
    session = _expect_connection(jobs)
    dashboard = create_app(model, limits=limits, jobs=jobs)

    def closed(_context) -> None:
        if session is not None:
            jobs.close_session(session)  # silently: the page is gone
        dashboard.close()
        release_after_session()

    pn.state.on_session_destroyed(closed)
    page = dashboard.template()
    keep_until_connected(pn.state.curdoc)
    return page


def _client_of(request, otherwise: str = "") -> str:
    """The client a session serves: the address its page request came from (``otherwise`` when unknown)."""
    return str(getattr(request, "remote_ip", None) or otherwise)


def _serving_loop():
    """The event loop serving the session being built (it may be built in a thread: effdim_app/compat_sessions.py,
    ``built_off_the_loop``); ``None`` outside a served session (then the running loop)."""
    doc = pn.state.curdoc
    context = doc.session_context if doc is not None else None
    server = context.server_context if context is not None else None
    application = server.application_context if server is not None else None
    return application.io_loop.asyncio_loop if application is not None and application.io_loop is not None else None


def _expect_connection(jobs: JobRunner) -> str | None:
    """Hold the jobs of the session being built until its page has connected (Panel's page-loaded event): a
    page request with no browser behind it (``curl`` of a shared link) starts nothing
    (effdim_app/job_sessions.py). The session's id, or None outside a served session."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return None
    session = doc.session_context.id
    jobs.expect_session(session, client=_client_of(doc.session_context.request, session))
    pn.state.onload(lambda: jobs.session_connected(session))
    return session


def _runner(limits: ServerLimits, workers: int, wait: bool) -> JobRunner:
    """The server's job runner within ``limits``, its forkserver started now (the engine imported), not during
    a student's first job; ``wait=False``: in a thread, beside the caller (:meth:`JobRunner.warm_up`)."""
    jobs = JobRunner(
        workers=workers, timeout=limits.time_limit, max_bytes=limits.job_bytes, max_waiting=limits.max_waiting
    )
    jobs.warm_up(wait=wait)
    return jobs


def keep_until_connected(doc) -> None:
    """Keep ``doc``'s session alive until its page has loaded in the browser, or for
    :data:`CONNECT_GRACE_SECONDS`.

    The page request builds the session; the browser connects its websocket
    only once it has loaded the page's scripts. ``effdim app`` lets an
    unconnected session expire after 5 s (:func:`serve`, meant for closed
    pages), and on a busy server a page's websocket can come later than that:
    its session would be destroyed unused and built a second time for the
    websocket, on the event loop that is already behind (docs/robustness.md,
    "Opening a page"). Bokeh's
    own expiration block holds the session until Panel's page-loaded event
    (``pn.state.onload``), or until the grace has passed for a page that
    never connects.
    """
    if doc is None or doc.session_context is None:
        return
    held = {"blocked": False, "released": False}

    def release() -> None:
        session = doc.session_context.session
        if held["blocked"] and not held["released"] and session is not None:
            session.unblock_expiration()
        held["released"] = True

    def hold() -> None:
        session = doc.session_context.session  # exists once the page's build has returned
        if session is None or held["released"]:
            return
        session.block_expiration()
        held["blocked"] = True
        doc.add_timeout_callback(release, int(CONNECT_GRACE_SECONDS * 1000))

    doc.add_next_tick_callback(hold)
    pn.state.onload(release)


def serve(port: int = 0, show: bool = True, threaded: bool = False, limits=None, num_procs: int = 1, **kwargs):
    """Serve the templated dashboard to many browsers, one fresh app per session.

    ``limits`` (:class:`effdim_app.config.ServerLimits`) bound every input;
    one :class:`effdim_app.jobs.JobRunner` runs all sessions' heavy work in
    ``limits.workers`` worker processes. With ``num_procs > 1`` the server
    forks into that many session-serving processes at start (before any
    session or worker exists); each then gets its own runner with its share
    of the workers (docs/robustness.md). Served from its own loop (not
    ``threaded``, as ``effdim app`` serves), a page request builds no session:
    its HTML comes from one kept session, and the page's session is built when
    its websocket connects, in a thread, one session at a time, while the loop
    serves the pages already open (docs/robustness.md, "A class arriving
    together").
    """
    limits = limits or ServerLimits()
    cache_class_defaults()  # every session's models read them (effdim_app/compat.py)
    serialize_set_values_only()  # and every session's document is sent
    # a closed page's session is destroyed 5 s after its websocket closed (Bokeh's default: 15 s,
    # checked every 17 s), so a class coming and going keeps few dead sessions in memory; a page whose
    # browser has not connected yet is kept longer (keep_until_connected)
    kwargs.setdefault("check_unused_sessions_milliseconds", 2000)
    kwargs.setdefault("unused_session_lifetime_milliseconds", 5000)
    if num_procs > 1:
        os.register_at_fork(after_in_child=die_with_parent)  # forked servers end with the parent
        share = max(1, limits.workers // num_procs)
        page = lambda: session_page(limits, workers=share)  # noqa: E731 - one runner per forked process
        kwargs["num_procs"] = num_procs
    else:
        jobs = _runner(limits, limits.workers, wait=True)
        page = lambda: session_page(limits, jobs)  # noqa: E731
    if threaded:  # a notebook's or a test's process
        return pn.serve({"effdim": page}, port=port, show=show, threaded=True, title=TITLE, **kwargs)
    tune_collector()
    page = settled(page)
    skip_authoring_checks()
    # a page request is answered with the HTML of one kept session (its template is every session's), and
    # the page's session is built once, when its websocket connects, in the process that websocket reaches,
    # off the event loop (compat_sessions.built_off_the_loop): a page request builds nothing, and with several
    # processes no page is built twice (docs/robustness.md, "A class arriving together")
    pn.config.reuse_sessions = True
    # with num_procs > 1 the server forks while it is built; each process then starts its own loop,
    # and only the first opens the browser tab (Panel's show would open one per process)
    (app,) = build_applications({"effdim": page}, title=TITLE).values()
    turns = BuildTurns()  # made before the fork: each process uses its own copy
    server = pn.serve(
        {"effdim": built_off_the_loop(app, lambda context: turns.turn(_client_of(context.request)))},
        port=port,
        show=False,
        start=False,
        title=TITLE,
        verbose=False,
        **kwargs,
    )
    if num_procs == 1 or tornado.process.task_id() == 0:
        processes = f" ({num_procs} server processes)" if num_procs > 1 else ""
        print(f"effdim dashboard at http://{server.address or 'localhost'}:{server.port}/effdim{processes}")  # noqa: T201
        if show:
            server.io_loop.add_callback(server.show, "/effdim")
    server.start()
    server.io_loop.start()
    return server


def settled(build):
    """``build`` (a page's function) followed, once the session's document is built, by
    :func:`effdim_app.server_memory.settle_session`: the new session's objects leave the collector's sight."""

    def page():
        template = build()
        doc = pn.state.curdoc
        if doc is not None:
            doc.add_next_tick_callback(settle_session)  # runs once the page's Bokeh models exist
        return template

    return page


def skip_authoring_checks() -> None:
    """Turn off, in this server process, two of Bokeh's checks meant for a page's author (public Bokeh settings).

    Bokeh validated every new session's document (layout warnings, one walk
    of the models per root) and checked the signature of every callback Panel
    registered on a model (``inspect.signature``, some 350 per page): about
    15 % of the Python calls of a page open, repeated for every student
    (docs/robustness.md, "Opening a page"). The tests build the same page
    with both checks on (``tests/test_page_open.py``).
    """
    settings.perform_document_validation.set_value(False)
    settings.perform_error_diagnostics.set_value(False)


def show(model=None, port: int = 0):
    """Open the templated dashboard in a new browser tab (from a notebook or a script)."""
    return pn.serve({"effdim": lambda: session_page(model=model)}, port=port, show=True, threaded=True, title=TITLE)
