"""What the job runner's forkserver imports before it forks a worker (no Panel import here).

The forkserver (:mod:`effdim_app.jobs`) imports these modules once, in this order: the stand-in for the
server's main script (:mod:`.worker_main`), its watch on the server (:mod:`.lifeline`), the worker's entry
(:mod:`.job_worker`) and the engine's tasks (:mod:`.tasks`), so a worker starts in milliseconds.

The imports take a second or more, and an interrupt can arrive meanwhile: a notebook kernel shutting down
interrupts its process group, as a terminal's Ctrl-C does to ``effdim app``. Python's forkserver ignores
interrupts only once its imports are done, so one arriving during them printed a ``KeyboardInterrupt``
traceback from inside the engine's imports under the notebook's or the terminal's output. Here it ends the
forkserver quietly instead: it was being stopped anyway, and had forked no worker yet.
"""

from __future__ import annotations

import importlib
import os

__all__ = ["MODULES"]

#: The modules, in the order they must be imported (:mod:`.worker_main` first: see its docstring).
MODULES = ("effdim_app.worker_main", "effdim_app.lifeline", "effdim_app.job_worker", "effdim_app.tasks")

try:
    for _name in MODULES:
        importlib.import_module(_name)
except KeyboardInterrupt:
    os._exit(130)  # as an interrupted process ends (128 + SIGINT), without a traceback
