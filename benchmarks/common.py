"""What the benchmarks share: reading the machine's load and processes' CPU seconds, and serving the dashboard.

Every benchmark runs from the repository root as a module, ``python -m benchmarks.GROUP.NAME [options]``
(``benchmarks/README.md`` lists them), so that it imports this module and the browser tests' page helpers
(``tests.ui``) as packages.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from tests.ui.app_server import start_app, stop_app
from tests.ui.protocol_client import Client

__all__ = [
    "TICK",
    "Client",
    "chromium_cpu_seconds",
    "load_average",
    "process_stat",
    "program_of",
    "start_server",
    "stop_app",
]

#: Clock ticks per second of ``/proc/PID/stat``'s CPU times.
TICK = os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    """The machine's one-minute load average, to print beside the figures (``/proc/loadavg``)."""
    return os.getloadavg()[0]


def program_of(pid: int) -> str:
    """Which program a process runs: chromium, python, node (Playwright's driver) or the name of another; "" once
    it has ended."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:  # ended (a zombie keeps its CPU seconds, not its program)
        return ""
    name = Path(exe).name
    if "chrom" in exe or "headless" in name:
        return "chromium"
    if name.startswith("python"):
        return "python"
    return name


def process_stat(pid: int) -> tuple[int, str, float] | None:
    """A process's parent, start time (its identity with the pid) and CPU seconds so far."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[19], (int(fields[11]) + int(fields[12])) / TICK


def chromium_cpu_seconds() -> float:
    """CPU seconds so far of every running Chromium process of the machine."""
    pids = map(int, filter(str.isdigit, os.listdir("/proc")))
    return sum(stat[2] for pid in pids if program_of(pid) == "chromium" and (stat := process_stat(pid)))


def start_server(extra: list[str]) -> tuple[subprocess.Popen, str]:
    """``effdim app`` with the options ``extra``, its log in a temporary file (``tests/ui/app_server.py``); stop it
    with :func:`stop_app`."""
    log = tempfile.NamedTemporaryFile(prefix="effdim-benchmark-", suffix=".log", delete=False)
    log.close()
    return start_app(Path(log.name), *extra)
