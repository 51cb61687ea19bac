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
import sys
from collections.abc import Sequence

from ..errors import EffdimError
from .arguments import UsageError
from .output import _STDERR, format_table
from .parser import build_parser

__all__ = ["main", "build_parser", "UsageError", "format_table"]


def _error_line(err: BaseException) -> str:
    """A refused input's one line in the CLI's words: a leaf that names no column gets the CLI's remedy
    (``--map``) instead of the Python argument the engine's message names."""
    data = sys.modules.get("effdim.data")  # not imported: no data were read, so no such error
    if data is not None and isinstance(err, data.LeavesWithoutColumns):
        return f"effdim: {err.problem}; name the leaves after the columns, or map them with --map LEAF=COLUMN"
    return str(err) if isinstance(err, UsageError) else f"effdim: {err}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``effdim`` command; returns the exit status."""
    _STDERR.reset()
    try:
        args = build_parser().parse_args(argv)
        args.run(args)
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (EffdimError, OSError) as err:
        _STDERR.fail(_error_line(err))
        return 2
    except KeyboardInterrupt:
        _STDERR.fail("effdim: interrupted", notes=False)
        return 130
    _STDERR.succeeded()
    return 0
