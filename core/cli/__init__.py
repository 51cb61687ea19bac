"""The ``effdim`` command: argument parsing and printing only; the engine does the work.

Bad input exits with status 2 and one line on stderr naming the problem;
never a traceback.

One module per part: :mod:`.parser` (the commands and their arguments), :mod:`.arguments`
(argument types and option groups), :mod:`.output` (tables, JSON, stderr), and one module per family
of commands (:mod:`.model_commands`, :mod:`.data_commands`, :mod:`.experiment_command`,
:mod:`.app_command`).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence

from ..errors import EffdimError, os_error_words, shown
from .arguments import UsageError
from .output import _STDERR, format_table
from .parser import build_parser

__all__ = ["main", "build_parser", "UsageError", "format_table"]


def _error_line(err: BaseException) -> str:
    """A refused input's one line in the CLI's words: a leaf that names no column, or a column that names no
    leaf, gets the CLI's remedy (``--map``) instead of the Python argument the engine's message names."""
    data = sys.modules.get("effdim.data")  # not imported: no data were read, so no such error
    if data is not None and isinstance(err, data.LeavesWithoutColumns):
        return f"effdim: {err.problem}; name the leaves after the columns, or map them with --map LEAF=COLUMN"
    if data is not None and isinstance(err, data.ColumnsWithoutLeafNames):
        return f"effdim: {err.problem}; name its leaf with --map LEAF=COLUMN"
    if data is not None and isinstance(err, data.TooManyValues):
        name = shlex.quote(err.column)
        return (
            f"effdim: {err.problem}: probably continuous or an identifier; leave it out with --drop {name}, or "
            f"keep it beside the posteriors with --id {name}"
        )
    if isinstance(err, OSError):  # the system's refusal in words, naming the file (never "[Errno 28] ...")
        where = f"{shown(os.fsdecode(err.filename))}: " if err.filename is not None else ""
        return f"effdim: {where}{os_error_words(err)}"
    return str(err) if isinstance(err, UsageError) else f"effdim: {err}"


#: The one line of a command that ran out of memory (a file that expands beyond this computer's memory, a model
#: whose tables do not fit): never Python's traceback.
OUT_OF_MEMORY = (
    "effdim: ran out of memory; the data or the model need more memory than this computer has "
    "(docs/robustness.md lists the limits)"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``effdim`` command; returns the exit status."""
    _STDERR.reset()
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "scheduler", None) is not None:
            from ..executor import check_scheduler

            check_scheduler(args.scheduler)  # before the work, not after it
        args.run(args)
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (EffdimError, OSError) as err:
        _STDERR.fail(_error_line(err))
        return 2
    except MemoryError:
        _STDERR.fail(OUT_OF_MEMORY)
        return 2
    except KeyboardInterrupt:
        _STDERR.fail("effdim: interrupted", notes=False)
        return 130
    _STDERR.succeeded()
    return 0
