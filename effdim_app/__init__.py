"""The effdim dashboard (Panel + HoloViews + Bokeh).

In Jupyter, one import and one call::

    import effdim_app
    effdim_app.app()            # the dashboard inline (pn.extension is handled)
    effdim_app.app("3:2,2,2,2") # starting from a model

``effdim_app.show()`` opens the served dashboard in a browser tab instead.
From a shell: ``panel serve apps/effdim.py``.

``effdim_app.state`` holds the param state classes (no Panel import), usable
and testable without a browser.
"""

from __future__ import annotations

import os
import sys

__all__ = ["app", "show", "create_app", "serve", "session_page"]

PR_SET_PDEATHSIG = 1  # prctl(2)


def _extension() -> None:
    """Load Panel's extensions; in a notebook with BokehJS inline, so the output is not empty offline.

    (Served, the server sends the resources itself.)
    """
    import panel as pn

    from .app import EXTENSIONS

    pn.extension(*EXTENSIONS, inline=not pn.state.served)


def create_app(model=None, limits=None, jobs=None):
    """A fresh :class:`effdim_app.app.EffdimApp` (no extension loading)."""
    from .app import create_app as _create

    return _create(model, limits=limits, jobs=jobs)


def app(model=None):
    """The dashboard for display in a notebook (loads the Panel extensions first).

    Served (``pn.serve(effdim_app.app)``), each session gets the templated page.
    """
    import panel as pn

    _extension()
    dashboard = create_app(model)
    if pn.state.served:
        return dashboard.template()
    return dashboard


def session_page(limits=None, jobs=None, model=None, workers=None):
    """The page of one served session: a fresh app whose jobs go to the server's one runner.

    ``jobs`` defaults to a runner shared by every session of the process
    (``pn.state.cache``), so ``panel serve apps/effdim.py`` bounds the worker
    processes as ``effdim app`` does. Closing the session cancels its jobs
    (docs/robustness.md).
    """
    import panel as pn

    from .app import EXTENSIONS, TEMPLATE_DESIGN
    from .config import ServerLimits
    from .jobs import JobRunner
    from .server_memory import release_after_session

    limits = limits or ServerLimits()
    if jobs is None:
        jobs = pn.state.as_cached("effdim_app.jobs", lambda: JobRunner(
            workers=workers or limits.workers, timeout=limits.time_limit, max_bytes=limits.job_bytes))
    pn.extension(*EXTENSIONS)
    # the page's design for every component made in this session (pn.config is per session here):
    # components made under the default design were rendered with the template's stylesheets but
    # sent the default design's on their first update, which reloaded the page's stylesheets
    pn.config.design = TEMPLATE_DESIGN
    jobs.attach()  # sessions are built on the server's event loop: callback threads submit to it
    dashboard = create_app(model, limits=limits, jobs=jobs)

    def closed(_context) -> None:
        dashboard.close()
        release_after_session()

    pn.state.on_session_destroyed(closed)
    return dashboard.template()


def serve(port: int = 0, show: bool = True, threaded: bool = False, limits=None, num_procs: int = 1, **kwargs):
    """Serve the templated dashboard to many browsers, one fresh app per session.

    ``limits`` (:class:`effdim_app.config.ServerLimits`) bound every input;
    one :class:`effdim_app.jobs.JobRunner` runs all sessions' heavy work in
    ``limits.workers`` worker processes. With ``num_procs > 1`` the server
    forks into that many session-serving processes at start (before any
    session or worker exists); each then gets its own runner with its share
    of the workers (docs/robustness.md).
    """
    import panel as pn
    import tornado.process

    from .app import TITLE
    from .config import ServerLimits
    from .jobs import JobRunner
    from .server_memory import tune_collector

    limits = limits or ServerLimits()
    # a closed page's session is destroyed 5 s after its websocket closed (Bokeh's default: 15 s,
    # checked every 17 s), so a class coming and going keeps few dead sessions in memory
    kwargs.setdefault("check_unused_sessions_milliseconds", 2000)
    kwargs.setdefault("unused_session_lifetime_milliseconds", 5000)
    if num_procs > 1:
        os.register_at_fork(after_in_child=_end_with_parent)
        share = max(1, limits.workers // num_procs)
        page = lambda: session_page(limits, workers=share)  # noqa: E731 - one runner per forked process
        kwargs["num_procs"] = num_procs
    else:
        jobs = JobRunner(workers=limits.workers, timeout=limits.time_limit, max_bytes=limits.job_bytes)
        jobs.warm_up()  # the forkserver imports the engine now, not during a student's first job
        page = lambda: session_page(limits, jobs)  # noqa: E731
    if threaded:  # a notebook's or a test's process
        return pn.serve({"effdim": page}, port=port, show=show, threaded=True, title=TITLE, **kwargs)
    tune_collector()
    # with num_procs > 1 the server forks while it is built; each process then starts its own loop,
    # and only the first opens the browser tab (Panel's show would open one per process)
    server = pn.serve({"effdim": page}, port=port, show=False, start=False, title=TITLE, verbose=False, **kwargs)
    if num_procs == 1 or tornado.process.task_id() == 0:
        processes = f" ({num_procs} server processes)" if num_procs > 1 else ""
        print(f"effdim dashboard at http://{server.address or 'localhost'}:{server.port}/effdim{processes}")  # noqa: T201
        if show:
            server.io_loop.add_callback(server.show, "/effdim")
    server.start()
    server.io_loop.start()
    return server


def _end_with_parent() -> None:
    """In a forked server process: end when the parent ends (Linux), so stopping the parent
    (``kill PID``, a service manager) does not leave the forked servers running."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def show(model=None, port: int = 0):
    """Open the templated dashboard in a new browser tab (from a notebook or a script)."""
    import panel as pn

    from .app import TITLE

    return pn.serve({"effdim": lambda: session_page(model=model)}, port=port, show=True, threaded=True,
                    title=TITLE)
