"""One exception family: every error effdim raises on purpose is an EffdimError."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import effdim
from effdim.errors import EffdimError

#: Modules whose argument checks are converted separately (the EM and structure-search packages).
ELSEWHERE = ()
#: Exceptions that are not errors: control flow between a job and its caller.
NOT_ERRORS = {"Cancelled", "_OutOfTime", "_SameOptimum"}


def modules():
    found = []
    for info in pkgutil.walk_packages(effdim.__path__, "effdim."):
        try:
            found.append(importlib.import_module(info.name))
        except ModuleNotFoundError as err:  # optional extras (dask)
            if (err.name or "").split(".")[0] not in {"dask", "distributed"}:
                raise
    return found


def test_every_exception_class_is_an_effdim_error():
    classes = {
        (module.__name__, name): cls
        for module in modules()
        for name, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseException)
        and not issubclass(cls, Warning)
        and cls.__module__.startswith("effdim")
        and name not in NOT_ERRORS
    }
    assert len(classes) >= 10
    outside = sorted(f"{module}.{name}" for (module, name), cls in classes.items() if not issubclass(cls, EffdimError))
    assert outside == []


@pytest.mark.parametrize(
    "module", [m for m in modules() if not m.__name__.startswith(ELSEWHERE)], ids=lambda m: m.__name__
)
def test_no_bare_builtin_errors_are_raised(module):
    """A ``raise ValueError(...)`` reaches the user as a traceback in faces that catch EffdimError."""
    path = Path(inspect.getfile(module))
    builtin = {"ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError", "AssertionError"}
    bare = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            name = getattr(node.exc.func, "id", None)
            if name in builtin:
                bare.append(f"{path.name}:{node.lineno} raise {name}")
    assert bare == []


def test_the_errors_module_names_every_class_of_the_family():
    """``effdim/errors.py`` lists the family for a reader: a new error class gets its line there."""
    import re

    import effdim.errors

    defined = {
        cls.__name__
        for module in modules()
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, EffdimError) and cls.__module__.startswith("effdim")
    }
    named = {name.rsplit(".", 1)[-1] for name in re.findall(r":class:`~?([\w.]+)`", effdim.errors.__doc__)}
    assert len(defined) >= 10 and sorted(defined - named) == []
