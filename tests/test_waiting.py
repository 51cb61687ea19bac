"""The tests' bounded waits (tests/waiting.py) fail with what they waited for instead of hanging."""

from __future__ import annotations

import asyncio

import pytest
from waiting import run_in_fresh_loop, until


def test_a_condition_that_never_holds_fails_naming_it():
    with pytest.raises(AssertionError, match="waited 0 s for the job running"):
        run_in_fresh_loop(until(lambda: False, "the job running", seconds=0.2))


def test_a_coroutine_that_never_ends_fails_naming_it():
    async def stuck():
        await asyncio.sleep(3600)

    with pytest.raises(AssertionError, match=r"stuck did not finish in 0 s"):
        run_in_fresh_loop(stuck(), seconds=0.3)
