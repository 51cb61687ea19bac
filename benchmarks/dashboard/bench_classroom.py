"""A classroom on one ``effdim app``: N students edit while others run heavy and pathological work.

Every simulated student is a real Bokeh/Panel session opened as a browser
opens it (the page's HTTP request, then the websocket with the page's token)
and driven with the Bokeh protocol (the server builds the whole page as for a
browser; the client keeps the models as JSON instead of rebuilding them in
Python as ``bokeh.client`` does, so it spends little CPU; see :class:`Client`).
Every 1-3 s each student sets the cardinality of the selected hidden node
(the "States" box) and waits for the server's patch that shows the new ds:
the **edit round trip**. Meanwhile:

* one *sweeper* session loads a data set and runs long sweeps (in a job);
* one *attacker* session applies ``3:1000000000,2``, ``61:50,50,50``,
  ``40:30,30,30,30``, a 10,000-leaf notation and a JSON file of a huge model,
  over and over;
* at the end, ``--churn`` sessions are opened and closed one after the other
  and the server's memory is compared with its memory before them.

Students open the page spread over ``--ramp`` seconds (a class arriving;
``--ramp 0``: all in the same instant, the worst case).

``--arrive N`` measures a class arriving together instead: ``--students``
connected students edit while N pages are requested within
``--arrive-seconds`` (1 s); a new page is *usable* once its document has
arrived and its first edit is shown. Reported: the time until each new page
is usable and the connected students' edit round trips meanwhile, in wall
time and on the server's clock (:class:`ServerClock`: what an idle machine
would take), against the targets (every page usable within 10 s, edit p95
under 1 s). ``--busy K`` keeps K more processes busy meanwhile (the machine
beside other work). With ``--seen`` every page reports the Dimensions section in its window as soon as it
opens, as a browser window tall enough to show it at first paint does, so its table is built then too
(``effdim_app/views/first_sight.py``); without, as on a laptop's window, it is built only once scrolled to.

Reported: session open time and edit round trip (p50/p95/max), errors
(an edit whose ds never arrived within 15 s), lost sessions (websocket
closed by the server), server memory (PSS of the server processes, and of
their worker processes at their peak), and, after ``--churn``, memory once
the closed sessions have expired.

Run (starts its own ``effdim app`` with the default limits and one server
process; ``-- --processes 2`` for two; ``--url`` to use a running server)::

    python -m benchmarks.dashboard.bench_classroom --students 30 --minutes 3 --churn 200
    python -m benchmarks.dashboard.bench_classroom --students 10 --arrive 30 [--busy 2] [--seen]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import html
import json
import random
import re
import statistics
import subprocess
import sys
import time

import psutil

from benchmarks.common import Client, load_average, start_server, stop_app
from effdim import HLCModel, model_to_json
from effdim.bounds import standard_dimension

FIG2 = HLCModel.parse("5(3(2,2),2,3(2,2))")  # the dashboard's default model; H1 is selected
PATHOLOGICAL = ["3:1000000000,2", "61:50,50,50", "40:30,30,30,30", "3:" + ",".join(["2"] * 10_000)]
HUGE_JSON = json.dumps(model_to_json(HLCModel.lc(3, [2] * 5000)))
DS = re.compile(r"data-stat='ds'>([^<]*)<")
TOKEN = re.compile(r'"token":\s*"([^"]+)"')


def _percentiles(values: list[float]) -> str:
    if not values:
        return "n/a"
    v = sorted(values)
    p95 = v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]
    return f"p50 {statistics.median(v) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {v[-1] * 1000:.0f} ms (n={len(v)})"


#: The targets: a class arriving over 30 s opens within 3 s and edits within 1 s (p95), nothing lost.
OPEN_P95, EDIT_P95 = 3.0, 1.0


def summary(out: dict, load_before: float, load_after: float) -> str:
    """One line to compare runs: the two p95s against their targets, errors, and the machine's load."""

    def p95(values):
        v = sorted(values)
        return v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))] if v else float("inf")

    opened, edited = p95(out["opens"]), p95(out["edits"])
    clean = not (out["errors"] or out["open_errors"] or out["lost"])
    verdict = "meets" if opened < OPEN_P95 and edited < EDIT_P95 and clean else "MISSES"
    return (
        f"summary: open p95 {opened:.2f} s (target < {OPEN_P95:.0f} s), edit p95 {1000 * edited:.0f} ms "
        f"(target < {1000 * EDIT_P95:.0f} ms), errors {len(out['errors']) + len(out['open_errors'])}, "
        f"lost {out['lost']}: {verdict} the targets; load average {load_before:.1f} before, "
        f"{load_after:.1f} after"
    )


class ServerClock:
    """The server's CPU time as a clock that runs only while the server computes: the CPU seconds its busiest
    process spent between two readings. On an idle machine, where every server process has a core, a wait is
    about this long; on a loaded machine the wall-clock wait is longer by the share of the cores the server
    did not get, and this figure estimates what the same run takes on an idle machine (a little above it:
    CPU time itself grows on a crowded machine)."""

    def __init__(self, pid: int | None):
        self.processes: list[psutil.Process] = []
        if pid is not None:
            proc = psutil.Process(pid)
            children = [c for c in proc.children(recursive=True) if "effdim.cli" in " ".join(c.cmdline())]
            self.processes = [proc, *children]

    def read(self) -> list[float]:
        times = []
        for proc in self.processes:
            try:
                cpu = proc.cpu_times()
                times.append(cpu.user + cpu.system)
            except psutil.Error:
                times.append(0.0)
        return times

    def since(self, mark: list[float]) -> float:
        return max((now - then for now, then in zip(self.read(), mark)), default=float("nan"))


async def see_the_dimensions(client: Client) -> None:
    """Report the Dimensions section's mark in the window, as a browser showing it does (its table is built)."""
    mark = client.find(css="effdim-first-sight")
    await client.set(client.models[mark]["attributes"]["data"]["id"], seen=True)


class Editor:
    """A student's page: sets the cardinality of the selected hidden node (H1) in the States box and waits for
    the server's patch that shows the new ds (with a ``clock``, :attr:`cpu` is the round trip on it)."""

    def __init__(self, client: Client, clock: ServerClock | None = None):
        self.client, self.clock = client, clock
        self.card, self.expected, self.cpu = 5, "", float("nan")
        self.totals, self.box = client.find(css="effdim-totals"), client.find(css="effdim-card-input")
        self.shown = asyncio.Event()
        client.watch(self.totals, "text", self._changed)

    def _changed(self, _new) -> None:
        m = DS.search(self.client.text(self.totals))
        if m and m.group(1) == self.expected:
            self.shown.set()

    async def edit(self, rng: random.Random, seconds: float = 15) -> float | None:
        """One edit's round trip in seconds (None: the new ds did not arrive within ``seconds``)."""
        self.card = rng.choice([k for k in (2, 3, 4, 5) if k != self.card])
        self.expected = str(standard_dimension(FIG2.with_card("H1", self.card)))
        self.shown.clear()
        start, mark = time.perf_counter(), self.clock.read() if self.clock is not None else []
        await self.client.set(self.box, value=str(self.card), value_input=str(self.card))  # type in the States box
        await self.client.click("Set")  # ... and press Set (what Enter does in a browser)
        try:
            await asyncio.wait_for(self.shown.wait(), seconds)
        except TimeoutError:
            return None
        if self.clock is not None:
            self.cpu = self.clock.since(mark)
        return time.perf_counter() - start


async def student(
    url: str,
    seconds: float,
    seed: int,
    out: dict,
    delay: float = 0.0,
    stop=None,
    clock: ServerClock | None = None,
    seen: bool = False,
) -> None:
    """Open the page after ``delay`` s, then edit every 1-3 s for ``seconds`` (or until ``stop`` is set): each
    round trip in ``out["edits"]``, its start (perf_counter) in ``out["edit_starts"]`` and, with a ``clock``,
    the round trip on it in ``out["edit_cpu"]``; an edit not shown within 15 s in ``out["errors"]``."""
    rng = random.Random(seed)
    await asyncio.sleep(delay)
    try:
        client = await Client(url).open()
    except Exception as err:  # noqa: BLE001 - a failed open is a result
        out["open_errors"].append(repr(err))
        return
    out["opens"].append(client.open_seconds)
    out["open_starts"].append(time.time() - client.open_seconds - out["start_wall"])
    if seen:
        await see_the_dimensions(client)
    editor = Editor(client, clock)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and not client.closed and not (stop is not None and stop.is_set()):
        await asyncio.sleep(rng.uniform(1, 3))
        start = time.perf_counter()
        took = await editor.edit(rng)
        if took is None:
            out["errors"].append(f"edit to |H1| = {editor.card} not shown within 15 s")
            took, editor.cpu = float("inf"), float("inf")
        out["edits"].append(took)
        out.setdefault("edit_starts", []).append(start)
        out.setdefault("edit_cpu", []).append(editor.cpu)
    out["lost"] += int(client.closed)
    client.close()


async def sweeper(url: str, seconds: float, out: dict) -> None:
    client = await Client(url).open()
    await client.set(client.find(css="effdim-tabs"), active=1)  # the Data & scores tab (rendered on demand)
    for _ in range(300):  # the tab is built when first opened: wait until its models arrived
        try:
            status = client.find(css="effdim-status")
            client.find(name="Button", label="Load data set")
            break
        except LookupError:
            await asyncio.sleep(0.1)
    await client.click("Load data set")
    await client.set(client.find(css="effdim-card-max"), value=12)
    await client.set(client.find(css="effdim-restarts"), value=30)
    done = asyncio.Event()

    def changed(new) -> None:
        if any(word in html.unescape(str(new)) for word in ("Sweep done", "failed", "cancelled")):
            done.set()

    client.watch(status, "text", changed)
    end = time.perf_counter() + seconds
    await asyncio.sleep(2)
    while time.perf_counter() < end and not client.closed:
        done.clear()
        start = time.perf_counter()
        await client.click("▶ Sweep cardinality")
        try:
            await asyncio.wait_for(done.wait(), max(1.0, end - time.perf_counter()))
            out["sweeps"].append((client.text(status)[:80], time.perf_counter() - start))
        except TimeoutError:
            break
        await asyncio.sleep(1)
    out["lost"] += int(client.closed)
    client.close()


async def attacker(url: str, seconds: float, out: dict) -> None:
    client = await Client(url).open()
    notation = client.find(css="effdim-notation")
    upload = client.find(name="FileInput")
    inputs = PATHOLOGICAL + ["json"]
    end = time.perf_counter() + seconds
    step = 0
    await asyncio.sleep(3)
    while time.perf_counter() < end and not client.closed:
        what = inputs[step % len(inputs)]
        step += 1
        if what == "json":
            await client.set(
                upload,
                value=base64.b64encode(HUGE_JSON.encode()).decode(),
                mime_type="application/json",
                filename="huge.json",
            )
        else:
            await client.set(notation, value=what, value_input=what)
            await client.click("Apply notation")
        out["attacks"] += 1
        await asyncio.sleep(4)
    out["lost"] += int(client.closed)
    client.close()


def _resident(proc: psutil.Process) -> int:
    """Proportional set size where the system reports it (pages shared after a fork counted once), else RSS."""
    try:
        return proc.memory_full_info().pss
    except (AttributeError, psutil.AccessDenied):
        return proc.memory_info().rss


def memory(pid: int) -> tuple[float, float]:
    """Memory in MiB of the server (its process and, with ``--processes N``, the servers it forked)
    and of its worker processes (forkservers and workers); PSS where available, else RSS."""
    proc = psutil.Process(pid)
    servers, workers = _resident(proc), 0.0
    for child in proc.children(recursive=True):
        try:
            rss = _resident(child)
            if "effdim.cli" in " ".join(child.cmdline()):
                servers += rss
            else:
                workers += rss
        except psutil.Error:
            pass
    return servers / 2**20, workers / 2**20


#: Seconds to wait before the last memory mark: effdim app destroys a closed session 5-7 s after its
#: websocket closed (panel serve: 15-32 s), then collects and trims 5 s later (effdim_app/server_memory.py).
SESSION_EXPIRY = 40


async def churn(url: str, count: int, pid: int) -> list[tuple[str, float]]:
    """Open and close ``count`` sessions one after the other; server memory every 50, and once the
    closed sessions have expired (Bokeh destroys a closed session only after its unused lifetime)."""
    marks = []
    for i in range(count):
        client = await Client(url).open()
        await asyncio.sleep(0.2)
        client.close()
        if (i + 1) % 50 == 0:
            marks.append((f"{i + 1}", memory(pid)[0]))
    await asyncio.sleep(SESSION_EXPIRY)
    marks.append((f"{SESSION_EXPIRY} s later", memory(pid)[0]))
    return marks


async def classroom(url: str, pid: int | None, args):
    from tornado.httpclient import AsyncHTTPClient

    AsyncHTTPClient.configure(None, max_clients=1000)  # every student's page request at once, as browsers do
    warm = await Client(url).open()  # the first session pays the imports; not a student's experience
    await asyncio.sleep(2)
    warm.close()
    await asyncio.sleep(2)
    base = memory(pid) if pid else (float("nan"), float("nan"))
    out = {"opens": [], "open_starts": [], "open_errors": [], "edits": [], "errors": [], "lost": 0, "sweeps": []}
    out.update(attacks=0, start_wall=time.time())  # open_starts: seconds after start_wall
    seconds = 60 * args.minutes
    tasks = [sweeper(url, seconds, out), attacker(url, seconds, out)]
    tasks += [
        student(url, seconds, args.seed + i, out, delay=args.ramp * i / max(1, args.students))
        for i in range(args.students)
    ]
    peak = [0.0, 0.0]

    async def sample():
        while True:
            if pid:
                rss, kids = memory(pid)
                peak[0], peak[1] = max(peak[0], rss), max(peak[1], kids)
            await asyncio.sleep(1)

    sampler = asyncio.ensure_future(sample())
    start = time.perf_counter()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - start
    sampler.cancel()
    after_class = memory(pid)[0] if pid else float("nan")
    marks = await churn(url, args.churn, pid) if (args.churn and pid) else []
    return out, marks, peak, base, wall, after_class


#: The targets of a class arriving at once: every page usable within 10 s, a connected student's edit p95 under 1 s.
USABLE_MAX, ARRIVAL_EDIT_P95 = 10.0, 1.0


async def newcomer(url: str, delay: float, seed: int, out: dict, clock: ServerClock, seen: bool = False) -> None:
    """Request the page ``delay`` s after the arrival began; it is usable once open and its first edit shown:
    that time, from the request, in ``out["usable"]``, and on the server's clock in ``out["usable_cpu"]``."""
    await asyncio.sleep(delay)
    start, mark = time.perf_counter(), clock.read()
    try:
        client = await Client(url).open()
        if seen:
            await see_the_dimensions(client)
        took = await Editor(client).edit(random.Random(seed), seconds=120)
    except Exception as err:  # noqa: BLE001 - a failed open is a result
        out["open_errors"].append(repr(err))
        return
    if took is None:
        out["errors"].append("a new page's first edit not shown within 120 s")
    else:
        out["usable"].append(time.perf_counter() - start)
        out["usable_cpu"].append(clock.since(mark))
    out["newcomers"].append(client)


async def arrival(url: str, pid: int | None, args) -> dict:
    """``--arrive N``: ``--students`` connected students edit while N pages are requested within
    ``--arrive-seconds``; the edits started from the first request until the last page is usable count."""
    from tornado.httpclient import AsyncHTTPClient

    AsyncHTTPClient.configure(None, max_clients=1000)
    warm = await Client(url).open()  # the first session pays the imports; not a student's experience
    await asyncio.sleep(2)
    warm.close()
    out = {"opens": [], "open_starts": [], "open_errors": [], "edits": [], "edit_starts": [], "edit_cpu": []}
    out.update(errors=[], lost=0, usable=[], usable_cpu=[], newcomers=[], start_wall=time.time())
    clock = ServerClock(pid)
    stop = asyncio.Event()
    students = [
        asyncio.ensure_future(
            student(url, 3600, args.seed + i, out, delay=0.3 * i, stop=stop, clock=clock, seen=args.seen)
        )
        for i in range(args.students)
    ]
    while len(out["opens"]) + len(out["open_errors"]) < args.students:
        await asyncio.sleep(0.2)
    await asyncio.sleep(5)  # the students settle into their edits
    begin, cpu = time.perf_counter(), clock.read()
    await asyncio.gather(
        *(
            newcomer(url, args.arrive_seconds * i / args.arrive, args.seed + 1000 + i, out, clock, args.seen)
            for i in range(args.arrive)
        )
    )
    end = time.perf_counter()
    out["server_cpu"] = sum(now - then for now, then in zip(clock.read(), cpu))
    stop.set()
    await asyncio.gather(*students)
    for client in out.pop("newcomers"):
        client.close()
    during = [i for i, started in enumerate(out["edit_starts"]) if begin <= started <= end]
    out["arrival_edits"] = [out["edits"][i] for i in during]
    out["arrival_edits_cpu"] = [out["edit_cpu"][i] for i in during]
    out["arrival_seconds"] = end - begin
    return out


def report_arrival(out: dict, args, load_before: float, load_after: float) -> None:
    def p95(values):
        v = sorted(values)
        return v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))] if v else float("inf")

    print(
        f"arrival: {args.arrive} pages requested within {args.arrive_seconds:g} s beside {args.students} connected "
        f"students editing (effdim app {' '.join(args.server_args) or 'with its defaults'}; "
        f"{args.busy} busy processes beside it; the Dimensions table {'built at once' if args.seen else 'not seen'})"
    )
    print(f"new page usable {_percentiles(out['usable'])}; failed {len(out['open_errors'])}")
    print(f"   on the server's clock {_percentiles(out['usable_cpu'])}")
    print(f"students' edits ({out['arrival_seconds']:.1f} s of arrival) {_percentiles(out['arrival_edits'])}")
    print(f"   on the server's clock {_percentiles(out['arrival_edits_cpu'])}")
    print(f"errors {len(out['errors'])}; server CPU meanwhile {out['server_cpu']:.1f} s")
    for err in (out["open_errors"] + out["errors"])[:3]:
        print("  error:", err)
    usable = max(out["usable"]) if len(out["usable"]) == args.arrive else float("inf")
    usable_cpu = max(out["usable_cpu"]) if len(out["usable_cpu"]) == args.arrive else float("inf")
    edited, edited_cpu = p95(out["arrival_edits"]), p95(out["arrival_edits_cpu"])
    clean = not (out["errors"] or out["open_errors"])
    verdict = "meets" if usable < USABLE_MAX and edited < ARRIVAL_EDIT_P95 and clean else "MISSES"
    print(
        f"summary: every page usable within {usable:.1f} s (target < {USABLE_MAX:.0f} s), edit p95 "
        f"{1000 * edited:.0f} ms (target < {1000 * ARRIVAL_EDIT_P95:.0f} ms): {verdict} the targets; load average "
        f"{load_before:.1f} before, {load_after:.1f} after; on the server's clock: {usable_cpu:.1f} s, "
        f"{1000 * edited_cpu:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument(
        "--ramp", type=float, default=30.0, help="seconds over which the students open the page (0: all at once)"
    )
    parser.add_argument("--churn", type=int, default=200, help="sessions opened and closed at the end")
    parser.add_argument("--url", default=None, help="a running effdim app (default: start one)")
    parser.add_argument("--pid", type=int, default=None, help="its process id (for memory, with --url)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--arrive",
        type=int,
        default=0,
        help="instead of the class above: this many pages requested within --arrive-seconds beside --students "
        "connected students editing (no sweeper, attacker or churn)",
    )
    parser.add_argument("--arrive-seconds", type=float, default=1.0)
    parser.add_argument("--busy", type=int, default=0, help="processes that keep a core busy each, meanwhile")
    parser.add_argument(
        "--seen",
        action="store_true",
        help="every page shows its Dimensions section at once (a tall window), which builds its table",
    )
    parser.add_argument("server_args", nargs="*", help="after --: options for 'effdim app' (e.g. --threads 4)")
    args = parser.parse_args()

    server = None
    if args.url:
        url, pid = args.url, args.pid
    else:
        server, url = start_server(args.server_args)
        pid = server.pid
    load_before = load_average()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        if args.arrive:
            report_arrival(asyncio.run(arrival(url, pid, args)), args, load_before, load_average())
            return
        out, marks, peak, base, wall, after_class = asyncio.run(classroom(url, pid, args))
        alive = server is None or server.poll() is None
        print(
            f"classroom: {args.students} students (opening over {args.ramp:.0f} s) + 1 sweeper + 1 attacker "
            f"for {wall:.0f} s against {url}"
            + (f" (effdim app {' '.join(args.server_args)})" if args.server_args else "")
        )
        print(f"session open   {_percentiles(out['opens'])}; failed opens {len(out['open_errors'])}")
        print(f"edit -> new ds {_percentiles(out['edits'])}")
        print(f"errors {len(out['errors'])}, lost sessions {out['lost']}, server alive: {alive}")
        print(
            f"attacks sent {out['attacks']}; sweeps finished {len(out['sweeps'])}: "
            + "; ".join(f"{t:.0f} s {text!r}" for text, t in out["sweeps"][:3])
        )
        print(
            f"server memory: before {base[0]:.0f} MiB, peak {peak[0]:.0f} MiB, after the class {after_class:.0f} MiB;"
            f" workers' peak {peak[1]:.0f} MiB"
        )
        if marks:
            print(
                "server memory while opening and closing sessions one by one: "
                + ", ".join(f"{n}: {rss:.0f} MiB" for n, rss in marks)
            )
        for err in (out["errors"] + out["open_errors"])[:5]:
            print("  error:", err)
        print(summary(out, load_before, load_average()))
    finally:
        for proc in busy:
            proc.kill()
        if server is not None:
            stop_app(server)


if __name__ == "__main__":
    main()
