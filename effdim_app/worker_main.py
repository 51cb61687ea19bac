"""The job workers' main module: the server's main script is not run again for every job (no Panel import here).

Before a worker forked by the forkserver runs its job, multiprocessing makes
the worker's ``__main__`` the server's: a server started by a script's path
(``effdim app``'s and ``panel serve``'s console scripts) has that script run
again in every worker, unless the worker's ``__main__`` already names that
path (``multiprocessing.spawn``, ``_fixup_main_from_path``). Python 3.11's
forkserver cannot preload it for its workers (its ``"__main__"`` preload looks
for a key the preparation data does not have), so under ``panel serve`` every
job would import Panel again before it starts.

No job needs the server's main module: a job runs a function of
:mod:`effdim_app.tasks`, pickled by reference. So the forkserver imports this
module first (:mod:`effdim_app.forkserver_preload`) and its ``__main__`` takes
the path the server's has (:data:`MAIN_PATH_VARIABLE`, which
:func:`name_the_main_script` sets in the server before the forkserver starts);
every worker it forks then skips the run. A server whose ``__main__`` has no
path (a notebook's kernel, ``python -m``) runs nothing again anyway.
"""

from __future__ import annotations

import multiprocessing.spawn
import os
import sys

__all__ = ["MAIN_PATH_VARIABLE", "name_the_main_script", "main_script"]

#: The environment variable through which the server tells the forkserver its main script's path.
MAIN_PATH_VARIABLE = "EFFDIM_SERVER_MAIN_SCRIPT"


def main_script() -> str | None:
    """The path multiprocessing gives a new worker as this process's main script (``None``: it gives none)."""
    return multiprocessing.spawn.get_preparation_data("effdim").get("init_main_from_path")


def name_the_main_script() -> None:
    """In the server, before its forkserver starts: tell the forkserver the path of the server's main script."""
    path = main_script()
    if path is not None:
        os.environ[MAIN_PATH_VARIABLE] = path


def _stand_in_for_the_main_script() -> None:
    """In the forkserver: name the server's main script as this process's ``__main__`` without running it."""
    path = os.environ.pop(MAIN_PATH_VARIABLE, None)  # the workers do not pass it on
    main = sys.modules.get("__main__")
    if path and main is not None and getattr(main, "__file__", None) is None:
        main.__file__ = path


_stand_in_for_the_main_script()
