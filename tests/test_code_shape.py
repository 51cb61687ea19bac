"""Code a newcomer can read: no function of the engine longer than :data:`MAX_FUNCTION_LINES`, no public
function or method with more than :data:`MAX_PARAMETERS` parameters (a settings object, such as
:class:`effdim.EMSettings`, holds the rest). Read from the source with ``ast``. The exceptions the code
has today are listed with their reason in :data:`KNOWN_LONG` and :data:`KNOWN_CROWDED`; one that no longer
applies fails, so the lists only shrink."""

from __future__ import annotations

import ast

import pytest
from test_layers import REPO, modules

MAX_FUNCTION_LINES = 120
#: Named parameters, ``self``/``cls`` and ``*args``/``**options`` not counted.
MAX_PARAMETERS = 10
#: "module:function" -> why it is longer today.
KNOWN_LONG: dict[str, str] = {}
#: "module:function" -> why it takes more parameters today.
KNOWN_CROWDED: dict[str, str] = {}


def _functions(name: str):
    path = modules()[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _engine() -> list[str]:
    return sorted(n for n in modules() if n.split(".")[0] == "effdim")


def _parameters(node: ast.FunctionDef) -> int:
    args = node.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return len([a for a in named if a.arg not in ("self", "cls")])


def test_no_engine_function_is_too_long():
    long = {}
    for name in _engine():
        for node in _functions(name):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                long[f"{name}:{node.name}"] = lines
    new = {k: v for k, v in long.items() if k not in KNOWN_LONG}
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines (split them along their phases): {new}"
    gone = sorted(set(KNOWN_LONG) - set(long))
    assert not gone, f"no longer too long, remove from KNOWN_LONG: {gone}"


@pytest.mark.parametrize("package", ["effdim", "effdim_app"])
def test_no_public_function_takes_too_many_parameters(package):
    crowded = {}
    for name in sorted(n for n in modules() if n.split(".")[0] == package):
        for node in _functions(name):
            if node.name.startswith("_") and node.name != "__init__":
                continue
            count = _parameters(node)
            if count > MAX_PARAMETERS:
                crowded[f"{name}:{node.name}"] = count
    new = {k: v for k, v in crowded.items() if k not in KNOWN_CROWDED}
    assert not new, (
        f"public functions with more than {MAX_PARAMETERS} parameters (group them in a settings object): {new}"
    )
    gone = sorted(k for k in KNOWN_CROWDED if k.startswith(f"{package}.") and k not in crowded)
    assert not gone, f"no longer crowded, remove from KNOWN_CROWDED: {gone}"


def test_the_repository_is_read():
    assert (REPO / "core" / "settings.py").exists()
    assert any(node.name == "fit" for node in _functions("effdim.fitting"))
