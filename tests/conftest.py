"""What every test file may use: the hypothesis profiles (CI runs the same examples every time), the run's
scheduling (the plugin ``scheduling.py``), one runner of the ``effdim`` command and one Stouffer-Toby fit."""

import os
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ("scheduling",)

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


class CommandRun(NamedTuple):
    """What one ``effdim`` command left: its exit status and what it printed."""

    status: int
    out: str
    err: str


@pytest.fixture
def cli(capsys):
    """Runs ``effdim ARG ...`` in this process (:func:`effdim.cli.main`; an exception escaping it is what a
    traceback would be): ``status, out, err = cli("dims", "3:2,2,2")``."""
    from effdim.cli import main

    def run(*argv) -> CommandRun:
        capsys.readouterr()  # what came before is not this command's
        status = main([str(arg) for arg in argv])
        out, err = capsys.readouterr()
        return CommandRun(status, out, err)

    return run


@pytest.fixture(scope="session")
def stouffer_toby():
    """The bundled Stouffer-Toby data (216 respondents, 4 binary items)."""
    from effdim import datasets

    return datasets.load("stouffer-toby")


@pytest.fixture(scope="session")
def stouffer_toby_fit(stouffer_toby):
    """The LC model with two classes fitted to Stouffer-Toby (5 starts, seed 0): shared, so read it, never change it."""
    from effdim import fit

    return fit(stouffer_toby, "2:2,2,2,2", restarts=5, seed=0, warn=False)
