"""The files a command writes (``--report``, ``--posteriors``, ``experiment --out`` and ``--cache-dir``):
checked before any work, and written with a refusal in words.

The rules, checked by :func:`check_outputs` before the command reads its data:

* an output is never a file the command reads (the data file, a model's JSON file), whatever the
  spelling: the paths are compared as the system resolves them (symbolic links, ``..``) and as files
  (device and inode: a hard link is the same file);
* two outputs of one command are never the same file;
* an existing file is replaced only with ``--overwrite``; a device or a pipe (``/dev/stdout``) is
  written to as it is;
* an output names a file, not a folder, in a folder that exists and this user may write to; an empty
  name is refused.

A folder of outputs (``effdim experiment --out DIR``, ``--cache-dir DIR``) is made if missing and must be
a folder this user may write to; the files effdim writes in it are replaced.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence

from ..errors import EffdimError, os_error_words, shown
from .arguments import UsageError

__all__ = ["OutputError", "check_outputs", "check_output_folder", "writing"]


class OutputError(EffdimError):
    """A file the command writes could not be written (the disk is full, permission denied, ...)."""


def _identity(path: str) -> tuple[int, int] | None:
    """The file ``path`` is (device, inode), following links; ``None`` where there is none."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino)


def check_outputs(command: str, outputs: dict[str, str | None], reads: Sequence[str], overwrite: bool) -> None:
    """Refuse, as a :class:`UsageError` naming the option, an output path that breaks a rule of the module
    docstring; ``outputs``: option -> path (``None``: not asked for); ``reads``: the paths the command reads."""
    inputs = {}
    for path in reads:
        identity = _identity(path)
        if identity is not None and stat.S_ISREG(os.stat(path).st_mode):
            inputs[identity] = path
    taken: dict[tuple, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        where = f"effdim {command}: {option} {shown(path)}"
        if not path.strip():
            raise UsageError(f"effdim {command}: {option} needs a file name, got an empty one")
        identity = _identity(path)
        key = identity if identity is not None else ("path", os.path.realpath(os.path.abspath(path)))
        if identity in inputs:
            raise UsageError(
                f"{where} is the file this command reads ({shown(inputs[identity])}); writing there would destroy "
                "it: give another name"
            )
        if key in taken:
            raise UsageError(f"{where} is the file {taken[key]} writes too; give each its own name")
        taken[key] = option
        _check_target(where, path, overwrite)


def _check_target(where: str, path: str, overwrite: bool) -> None:
    """The file ``path`` can be written: a new file in a folder this user may write to, an existing file with
    ``overwrite``, or a device or pipe."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise UsageError(f"{where}: cannot write there ({os_error_words(err)})") from None
    if info is None:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{where}: the folder {shown(folder)} does not exist")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"{where}: cannot write in the folder {shown(folder)} (permission denied)")
        return
    if stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{where} is a folder; give the name of a file (in it, or elsewhere)")
    if stat.S_ISREG(info.st_mode) and not overwrite:
        raise UsageError(f"{where} exists; add --overwrite to replace it")
    if not os.access(path, os.W_OK):
        raise UsageError(f"{where}: cannot write to it (permission denied)")


def check_output_folder(command: str, option: str, path: str) -> None:
    """Make the folder of outputs ``path`` if missing; refuse (:class:`UsageError`) one that cannot be made,
    is not a folder, or this user may not write in."""
    where = f"effdim {command}: {option} {shown(path)}"
    if not path.strip():
        raise UsageError(f"effdim {command}: {option} needs a folder name, got an empty one")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{where} is a file, not a folder; give a folder name")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise UsageError(f"{where}: cannot make the folder ({os_error_words(err)})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: cannot write in this folder (permission denied)")


@contextlib.contextmanager
def writing(path: str, what: str) -> Iterator[None]:
    """Turn a failed write of ``what`` to ``path`` into an :class:`OutputError` in words, naming the file."""
    try:
        yield
    except OSError as err:
        raise OutputError(f"could not write the {what} to {shown(path)}: {os_error_words(err)}") from None
