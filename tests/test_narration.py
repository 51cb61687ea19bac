"""Code states rules, not measurements or history: the usual words of a timing log or a diary fail here.

A docstring or comment says what the code does and why, with at most one pointer to the benchmark or page
that measured it; the figures themselves (dates, machines, loads, medians) go to ``docs/performance.md`` and the
story of a change to its commit message (CONTRIBUTING.md, "Where each rule lives")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The code a reader lives in: the engine, the dashboard, its serving script, the tests and their helpers.
CODE = [ROOT / "core", ROOT / "effdim_app", ROOT / "apps", ROOT / "tests"]
_MONTH = r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
#: What narration looks like, each with the reason a reader does not need it in the code.
NARRATION = {
    r"\bmedians? of\b": "a statistic of runs (docs/performance.md)",
    r"\byardstick\b": "a machine's speed on the day (docs/performance.md)",
    r"\bthis session\b": "a work session: say the rule instead",
    r"\bon this machine\b": "a machine (docs/performance.md)",
    r"\b(took|takes) (about )?[0-9][0-9.,]* ?(ms|s|seconds|minutes|min)\b": "a timing (docs/performance.md)",
    r"\b[0-9][0-9.,]* CPU s\b": "a timing (docs/performance.md)",
    r"\bload (average )?[0-9][0-9.]*": "a machine's load (docs/performance.md)",
    rf"\b[0-9]{{1,2}} {_MONTH} 20[0-9]{{2}}\b|\b{_MONTH} [0-9]{{1,2}},? 20[0-9]{{2}}\b": "a date (the commit has one)",
    r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b": "a date (the commit has one)",
}
#: This file names the words it looks for.
SELF = Path(__file__).resolve()


def _files() -> list[Path]:
    return sorted(path for root in CODE for path in root.rglob("*.py") if path.resolve() != SELF)


@pytest.mark.parametrize("pattern", list(NARRATION))
def test_no_code_narrates_measurements_or_history(pattern):
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in _files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(pattern, line, flags=re.I)
    ]
    assert not found, f"{NARRATION[pattern]}:\n" + "\n".join(found)


def test_the_words_are_caught():
    """Each pattern catches the narration it is for (so a pattern that matches nothing cannot pass unseen)."""
    samples = [
        "1.5 ms (median of 5 runs)",
        "the yardstick read 1.8",
        "measured in this session",
        "0.3 s on this machine",
        "it took 4 ms",
        "460 CPU s in all",
        "at load 3.4 on the 2 cores",
        "on 4 Dec 2026",
        "2026-11-26 run",
    ]
    for pattern, sample in zip(NARRATION, samples, strict=True):
        assert re.search(pattern, sample, flags=re.I), (pattern, sample)
