"""The built wheel, installed without ``-e`` away from the checkout, runs all three faces.

An editable install (the README's commands, CI) imports from the source tree, so it
hides a subpackage or data file missing from the wheel: that is how ``effdim app``
once died with ``No module named 'effdim_app.views'`` for anyone who installed the
package. This test builds the wheel, installs it with ``--no-deps`` into a fresh
virtual environment in a temporary directory, and runs everything from there with
the checkout off ``sys.path``.

The third-party dependencies are not downloaded again (that would cost minutes on
every run): the fresh environment sees the test environment's ``site-packages``
through one path line in a ``.pth`` file. Path lines do not run that directory's own
``.pth`` files, so the editable ``effdim`` of the test environment stays invisible;
``pip check`` then confirms that the wheel's declared requirements are met, and the
first test asserts that ``effdim`` really is imported from the installed wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv (outside the checkout) with the built wheel installed, and how to run in it."""
    root = tmp_path_factory.mktemp("wheel")
    # built from a copy: setuptools reuses a build/ folder left in the checkout, which can hold a
    # subpackage that the packaging configuration no longer ships
    source = root / "source"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache", "docs"
        ),
    )
    # with this environment's setuptools (the test extra asks for the build system's requirements): an isolated
    # build would install them into a fresh environment first, 4 of the fixture's CPU seconds
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(root / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        cwd=root,
    )
    (wheel,) = (root / "dist").glob("effdim-*.whl")
    venv = root / "venv"
    # without pip of its own (installing it takes seconds): this environment's pip installs into it (--python)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    dependencies = [path for path in sys.path if path.endswith("site-packages")]
    (site / "zz_test_dependencies.pth").write_text("\n".join(dependencies) + "\n")
    subprocess.run(
        # --no-compile: the interpreters below compile what they import (pip would compile every module)
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = root / "elsewhere"
    work.mkdir()
    return {"python": str(python), "effdim": str(venv / "bin" / "effdim"), "env": env, "cwd": work, "site": site}


def _run(installed: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(args), capture_output=True, text=True, env=installed["env"], cwd=installed["cwd"], timeout=timeout
    )


@pytest.fixture(scope="module")
def notebook_use(installed) -> subprocess.CompletedProcess:
    """Python in the fresh environment as a notebook uses the package: the imports, where they come from, and a
    dashboard built by the notebook entry point (one interpreter for both checks: Panel's import costs seconds)."""
    return _run(
        installed,
        installed["python"],
        "-c",
        "import effdim, effdim_app, effdim.datasets; print(effdim.__file__); print(effdim_app.__file__)\n"
        "dashboard = effdim_app.app('5(3(2,2),2,3(2,2))'); print(type(dashboard).__name__)",
    )


def test_imports_come_from_the_wheel_and_its_requirements_are_met(installed, notebook_use):
    assert notebook_use.returncode == 0, notebook_use.stderr
    for path in notebook_use.stdout.split()[:2]:
        assert Path(path).is_relative_to(installed["site"]), f"imported from {path}, not from the installed wheel"
    check = _run(installed, sys.executable, "-m", "pip", "--python", installed["python"], "check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_cli_dims_on_figure_2(installed):
    out = _run(installed, installed["effdim"], "dims", "5(3(2,2),2,3(2,2))", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["ds"], report["de"]) == (41, 23)
    version = _run(installed, installed["effdim"], "--version")
    assert version.returncode == 0 and version.stdout.startswith("effdim "), version.stdout + version.stderr


def test_bundled_data_sets_ship(installed):
    out = _run(installed, installed["effdim"], "fit", "stouffer-toby", "--model", "2:2,2,2,2", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["n"] == 216


def test_notebook_entry_point_builds_the_dashboard(notebook_use):
    assert notebook_use.returncode == 0, notebook_use.stderr
    assert notebook_use.stdout.strip().splitlines()[-1] == "EffdimApp"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_effdim_app_serves_the_dashboard(installed):
    port = _free_port()
    server = subprocess.Popen(
        [installed["effdim"], "app", "--port", str(port), "--address", "127.0.0.1", "--no-show"],
        env=installed["env"],
        cwd=installed["cwd"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/effdim", timeout=30) as response:
                    status, page = response.status, response.read().decode()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    pytest.fail(f"effdim app did not answer: {server.communicate()[0][-2000:]}")
                time.sleep(0.5)
        assert status == 200
        assert "effdim" in page and "bokeh" in page.lower()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
