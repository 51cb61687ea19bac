"""The benchmarks stay one documented command each: grouped, listed, and importing only shared helpers as packages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
GROUPS = ("engine", "dashboard", "suite")
SCRIPTS = sorted(path for group in GROUPS for path in (BENCHMARKS / group).glob("*.py") if path.name != "__init__.py")


def test_every_script_is_in_a_group_and_listed_with_its_command():
    assert not [path.name for path in BENCHMARKS.glob("*.py") if path.name not in ("__init__.py", "common.py")]
    listing = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    for path in SCRIPTS:
        assert f"`{path.name}`" in listing, path.name
        if path.name.startswith("bench_"):
            assert f"-m benchmarks.{path.parent.name}.{path.stem}" in listing, path.name


@pytest.mark.parametrize("path", [*SCRIPTS, BENCHMARKS / "common.py"], ids=lambda path: path.name)
def test_a_benchmark_imports_shared_helpers_as_packages_never_through_sys_path(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), "a benchmark says what it measures"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
            pytest.fail(f"{path.name}:{node.lineno} edits sys.path")
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            assert not module.startswith("bench_"), f"{path.name}:{node.lineno} imports another benchmark by path"
            if module.startswith("benchmarks.") and module != "benchmarks.common":
                private = [alias.name for alias in node.names if alias.name.startswith("_")]
                assert not private, f"{path.name}:{node.lineno} imports another benchmark's private {private}"
            if module.startswith("tests."):
                assert module.startswith(("tests.ui.", "tests.structure_cases")), module
