"""The engine's public face: what ``import effdim`` offers, and that the dashboard and the command line use
nothing else of the engine (read from the source with ``ast``, as ``tests/test_layers.py`` reads layers)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from test_layers import PACKAGES, modules

import effdim

#: What a user finds on ``effdim`` (the public face named in issue form: read data, fit, search, dimensions).
EXPECTED = {
    "read_data",
    "ReadLimits",
    "fit",
    "sweep",
    "hill_climb",
    "learn_structure",
    "LatentTreeLearner",
    "dimensions",
    "regularize",
    "parse_model",
    "EMSettings",
    "FitResult",
    "HillClimb",
    "LearnedStructure",
    "DimensionReport",
    "Regularization",
    "Dataset",
    "EffdimError",
}


def test_the_face_offers_the_names_a_user_needs():
    assert EXPECTED <= set(effdim.__all__)
    for name in effdim.__all__:
        assert getattr(effdim, name) is not None, name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'fitt'"):
        effdim.fitt  # noqa: B018


def test_documented_submodules_exist_and_are_named_in_the_docstring():
    for name in effdim.PUBLIC_SUBMODULES:
        assert f"effdim.{name}" in modules(), name
        assert f":mod:`effdim.{name}`" in effdim.__doc__, f"effdim.{name} is not described in effdim's docstring"


def test_a_face_function_named_like_its_module_stays_the_function():
    code = "import effdim.dimensions, effdim; print(callable(effdim.dimensions), effdim.dimensions.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "effdim.dimensions"]


def test_import_effdim_loads_neither_pandas_nor_the_em_engine():
    code = "import sys, effdim; print('pandas' in sys.modules, 'effdim.em' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def _engine_imports(name: str) -> list[tuple[str, str | None]]:
    """``(engine module, imported name or None)`` for every import of the engine by module ``name``."""
    path = modules()[name]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.split(".")[0] == "effdim"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: only the command line imports the engine this way
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] == "effdim":
                found += [(target, alias.name) for alias in node.names]
    return found


def _front_ends() -> list[str]:
    return [n for n in modules() if n.split(".")[0] == "effdim_app" or n == "effdim.cli" or n.startswith("effdim.cli.")]


@pytest.mark.parametrize("name", _front_ends())
def test_front_ends_use_the_face_or_a_documented_submodule(name):
    bad = []
    for target, imported in _engine_imports(name):
        parts = target.split(".")
        if parts[:2] == ["effdim", "cli"]:
            continue  # the command line's own modules
        if len(parts) == 1:  # from effdim import X
            if imported not in effdim.__all__ and imported not in effdim.PUBLIC_SUBMODULES:
                bad.append(f"effdim.{imported}")
        elif parts[1] not in effdim.PUBLIC_SUBMODULES:
            bad.append(target)
    assert not bad, f"{name} reaches into the engine past its public face: {sorted(set(bad))}"


def test_the_packages_checked_are_the_repository():
    assert set(PACKAGES) == {"effdim", "effdim_app"}
