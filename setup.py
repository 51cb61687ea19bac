"""Package discovery for setuptools (the metadata lives in pyproject.toml).

``core/`` is installed as ``effdim``, which ``[tool.setuptools.packages.find]``
cannot express, so the packages are found here: every subpackage of ``core/``
and of ``effdim_app/`` ships, and a new one needs no edit.
tests/test_wheel.py builds the wheel and checks all three faces from it.
"""

from setuptools import find_packages, setup

setup(
    package_dir={"effdim": "core"},
    packages=[
        "effdim",
        *(f"effdim.{name}" for name in find_packages("core")),
        *find_packages(include=["effdim_app", "effdim_app.*"]),
    ],
)
