"""Without Chromium the browser tests skip with one line on a person's machine and fail the run in CI
(tests/ui/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run_browser_tests(ci: bool) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["EFFDIM_CHROMIUM"] = "/nonexistent/chromium"
    if ci:
        env["CI"] = "true"
    # one process (no xdist workers): the rule is applied at collection, and starting two workers
    # for one skipped or failed file cost this test 15-45 s
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "tests/ui/test_shortcuts.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.parametrize("ci", [False, True], ids=["a person's machine", "CI"])
def test_missing_chromium(ci):
    result = run_browser_tests(ci)
    out = result.stdout + result.stderr
    if ci:
        assert result.returncode != 0, out
        assert "no Chromium at /nonexistent/chromium" in out and "CI must run the browser tests" in out, out
    else:
        assert result.returncode == 0, out
        skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
        assert len(skips) == 1 and "apt-get install chromium" in skips[0], out
        assert " passed" not in out and "skipped" in out
