"""Where the classroom's event-loop time goes: every step of ``effdim app``'s loop timed and labelled.

Starts ``effdim app`` with each step of its asyncio loop timed (wall and
CPU time of the loop's thread) and labelled by what ran in it (a page build,
the document sent, a student's edit, the sweeper's or the attacker's input,
the memory release), and each pass of the garbage collector timed; runs
``bench_classroom.py``'s class against it; then prints, for the time the
class arrives (its first ``--ramp`` + 5 s) and for the rest, the loop's busy
time per kind of work, the collector's passes, when each student's open
started and how long it took, and the longest steps. A step's wall time
above its CPU time is time the server process waited for a core.

The labels come from wrapping a few Panel, Bokeh and effdim_app functions in
the server process (``_label_steps``); a step that ran none of them is
``other`` (Tornado's and Bokeh's own work, job results arriving).

Run: ``python -m benchmarks.dashboard.bench_loop_trace [--students 30 --minutes 1.5]``
(docs/robustness.md, "Opening a page").
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import stop_app
from benchmarks.dashboard.bench_classroom import classroom, summary
from tests.ui.jupyterlab_session import free_port, wait_for

GENERIC = ("ws: message received", "ws: message sent")


def _label_steps(steps: list, passes: list) -> None:
    """In the server process: time every loop step and collector pass, labelled by what ran (see the module)."""
    import asyncio.events

    import panel as pn
    import panel.reactive
    from bokeh.document import Document
    from bokeh.server.views.ws import WSHandler
    from panel.io import server as panel_server

    import effdim_app.server
    import effdim_app.server_memory
    import effdim_app.views

    start = time.perf_counter()
    seen: list[str] = []
    run = asyncio.events.Handle._run

    def timed_run(handle):
        seen.clear()
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return run(handle)
        finally:
            took = time.perf_counter() - wall
            if took > 0.0005:
                steps.append((wall - start, took, time.thread_time() - cpu, list(dict.fromkeys(seen))))

    asyncio.events.Handle._run = timed_run
    began = []

    def collector(phase, info):
        if phase == "start":
            began[:] = [time.perf_counter(), time.thread_time()]
        elif began:
            passes.append(
                (
                    began[0] - start,
                    time.perf_counter() - began[0],
                    time.thread_time() - began[1],
                    info["generation"],
                    list(dict.fromkeys(seen)),
                )
            )

    gc.callbacks.append(collector)

    def label(owner, name, what):
        original = getattr(owner, name)

        def labelled(*args, **kwargs):
            seen.append(what(*args, **kwargs) if callable(what) else what)
            return original(*args, **kwargs)

        setattr(owner, name, labelled)

    def event(self, doc, event):
        return f"click {self.name}" if type(self).__name__ == "Button" else f"event on {type(self).__name__}"

    def change(self, doc, event_id=None):
        return f"change of {type(self).__name__} {','.join(getattr(self, 'css_classes', None) or [])}"

    label(effdim_app.server, "session_page", "open: page built")
    label(panel_server, "server_html_page_for_session", "open: page's HTML")
    label(Document, "to_json", "open: document sent")
    label(type(pn.state), "_schedule_on_load", "open: document ready")
    label(panel.reactive.Syncable, "_process_bokeh_event", event)
    label(panel.reactive.Syncable, "_change_coroutine", change)
    label(effdim_app.views.ScoresPanel, "_update_results", "sweeper: results shown")
    label(effdim_app.views.FittedView, "_render", "sweeper: results shown")
    label(effdim_app.server_memory, "release_freed_memory", "memory released")
    label(WSHandler, "on_message", "ws: message received")
    label(WSHandler, "send_message", "ws: message sent")


def serve(trace_path: str, app_args: list[str]) -> None:
    """The server process: ``effdim app`` with its loop traced; the trace written on SIGTERM."""
    steps, passes = [], []
    _label_steps(steps, passes)
    started = time.time()

    def dump(*_):
        with open(trace_path, "w") as fh:
            json.dump({"started": started, "steps": steps, "passes": passes}, fh)
        os._exit(0)

    signal.signal(signal.SIGTERM, dump)
    from effdim.cli import main

    sys.argv = ["effdim", "app", *app_args]
    main()


def kind(labels: list[str]) -> str:
    """One kind of work per step: the first specific label, the students' edits and the two rogues named."""
    specific = [name for name in labels if name not in GENERIC] or labels or ["other"]
    name = specific[0]
    if "effdim-card-input" in name or name == "click Set":
        return "student: edit"
    if "effdim-notation" in name or "Apply notation" in name or "FileInput" in name:
        return "attacker: " + name
    if any(word in name for word in ("Sweep", "Load data set", "card-max", "restarts", "effdim-tabs")):
        return "sweeper: " + name
    return name


def report(trace: dict, out: dict, ramp: float) -> None:
    offset = out["start_wall"] - trace["started"]
    end = max(t for t, *_ in trace["steps"]) - offset
    for low, high in ((0.0, ramp + 5), (ramp + 5, end)):
        wall, cpu, count, longest = (collections.Counter() for _ in range(4))
        for t, took, used, labels in trace["steps"]:
            if low <= t - offset < high:
                k = kind(labels)
                wall[k] += took
                cpu[k] += used
                count[k] += 1
                longest[k] = max(longest[k], took)
        passes = [p for p in trace["passes"] if low <= p[0] - offset < high]
        full = [p for p in passes if p[3] == 2]
        print(
            f"{low:.0f}-{high:.0f} s of the class: loop busy {sum(wall.values()):.1f} s (CPU {sum(cpu.values()):.1f} s)"
            f" of {high - low:.0f} s; collector {sum(p[1] for p in passes):.2f} s (CPU {sum(p[2] for p in passes):.2f}"
            f" s) in {len(passes)} passes, {len(full)} full, longest {max([p[2] for p in passes] or [0]) * 1000:.0f}"
            " ms of CPU"
        )
        for k, seconds in wall.most_common():
            if seconds >= 0.05:
                print(
                    f"  {seconds:6.2f} s (CPU {cpu[k]:6.2f} s) in {count[k]:5d} steps, longest"
                    f" {longest[k] * 1000:5.0f} ms: {k}"
                )
    opens = sorted(zip(out["open_starts"], out["opens"]))
    print("opens (start s: seconds):", " ".join(f"{s:.0f}:{d:.1f}" for s, d in opens))
    longest = sorted(((took, t - offset, kind(labels)) for t, took, _, labels in trace["steps"]), reverse=True)
    print("longest steps:", "; ".join(f"{took * 1000:.0f} ms at {t:.0f} s ({k})" for took, t, k in longest[:10]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--minutes", type=float, default=1.5)
    parser.add_argument("--ramp", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)  # internal: be the traced server
    parser.add_argument("app_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.app_args)
    port = free_port()
    trace_path = tempfile.mktemp(prefix="effdim-loop-trace-", suffix=".json")
    app = ["--no-show", "--port", str(port), "--address", "127.0.0.1", "--allow-websocket-origin", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.dashboard.bench_loop_trace", "--serve", trace_path, "--", *app],
        cwd=Path(__file__).resolve().parents[2],  # the repository, where the benchmarks are a package
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/effdim"
    try:
        wait_for(port, 60, server)
    except RuntimeError:
        stop_app(server)
        raise
    load = os.getloadavg()[0]
    args.churn = 0
    try:
        out, *_ = asyncio.run(classroom(url, server.pid, args))
    finally:
        stop_app(server)
    print(summary(out, load, os.getloadavg()[0]))
    with open(trace_path) as fh:
        report(json.load(fh), out, args.ramp)
    os.unlink(trace_path)


if __name__ == "__main__":
    main()
