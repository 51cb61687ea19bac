"""How the ``effdim`` command prints: plain-text tables, JSON, and everything it writes to stderr
besides its results (notes, the progress bar, the one error line of a failed command)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from ..limits import MAX_EXACT_DIGITS, number_text


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool] | None = None) -> str:
    """A plain-text table; numbers right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    if right is None:
        right = [all(isinstance(row[i], (int, float)) for row in rows) if rows else False for i in range(len(headers))]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for r in cells:
        lines.append("  ".join(c.rjust(w) if ra else c.ljust(w) for c, w, ra in zip(r, widths, right)).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return number_text(value)
    return str(value)


def _emit_json(obj: Any) -> None:
    print(json.dumps(_json_safe(obj), indent=2))


def _json_safe(obj: Any) -> Any:
    """``obj`` with whole numbers too long to print exactly as text (:func:`effdim.limits.number_text`)."""

    def fix(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_EXACT_DIGITS:
            return number_text(value)
        return value

    top = {"": obj}
    stack = [top]
    while stack:  # without recursion: any depth
        container = stack.pop()
        keys = range(len(container)) if isinstance(container, list) else list(container)
        for key in keys:
            value = container[key]
            if isinstance(value, (list, tuple)):
                value = container[key] = list(value)
                stack.append(value)
            elif isinstance(value, dict):
                value = container[key] = dict(value)
                stack.append(value)
            else:
                container[key] = fix(value)
    return top[""]


class _Stderr:
    """Everything a command writes to stderr besides its results, so that a failing command writes one
    line: notes (what was detected in a data file, cached jobs computed again) wait until the command
    has succeeded and are folded into the error line otherwise; the progress bar is drawn on a terminal
    only, and an error line replaces it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the notes and the status line of an earlier command (:func:`effdim.cli.main` runs one
        command per call, and tests call it many times in one process)."""
        self.notes: list[str] = []
        self.status = False

    def note(self, text: str) -> None:
        self.notes.append(text)

    def show(self, line: str) -> None:
        """Draw ``line`` in place of the status line (on a terminal; elsewhere nothing)."""
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[K{line}")
            sys.stderr.flush()
            self.status = True

    def end_status(self) -> None:
        if self.status:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.status = False

    def succeeded(self) -> None:
        self.end_status()
        for text in self.notes:
            print(f"effdim: {text}", file=sys.stderr)

    def fail(self, message: str, notes: bool = True) -> None:
        """Print ``message`` (its first line) as the one line of a failed command, the notes in brackets."""
        line = message.splitlines()[0] if message else "effdim: error"
        if notes and self.notes:
            more = f"; {len(self.notes) - 1} more" if len(self.notes) > 1 else ""
            line = f"{line} ({self.notes[0]}{more})"
        if self.status:
            sys.stderr.write("\r\x1b[K")
            self.status = False
        print(line, file=sys.stderr)


_STDERR = _Stderr()


class _Progress:
    """A one-line progress bar on stderr, on a terminal (``--quiet`` turns it off); :meth:`close` ends
    it once the work has succeeded (after a failure the error line replaces it)."""

    def __init__(self, quiet: bool, label: str, unit: str = "fits"):
        self.quiet = quiet
        self.label = label
        self.unit = unit

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        self.show(f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {self.unit}")

    def show(self, line: str) -> None:
        """Overwrite the status line with ``line`` (nothing with ``--quiet``)."""
        if not self.quiet:
            _STDERR.show(line)

    def close(self) -> None:
        _STDERR.end_status()


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
