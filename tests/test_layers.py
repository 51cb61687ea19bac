"""The layers of effdim and its dashboard, read from the source (``ast``; nothing is imported).

The engine (``core/``, imported as ``effdim``) and the dashboard
(``effdim_app/``) are stacked in the layers of :data:`LAYERS`, lowest
first. The rules, each a test below:

* a module imports only from its own layer or from layers below it, never
  back up (a module-level import and one inside a function count the same:
  an import put off until a call is still a dependency);
* no two modules import each other, directly or round a longer loop;
* nothing in the engine imports Panel, Bokeh or HoloViews, and neither does
  the dashboard's session state (``effdim_app.state``) nor anything it
  imports, so both are usable and testable without a browser;
* no module of ``effdim_app`` is longer than :data:`MAX_APP_LINES` lines.

A new module goes into the layer of what it is (:data:`LAYERS`); a module
the layers do not place fails :func:`test_every_module_has_a_layer`. The
exceptions the code has today are listed, each with its reason, in
:data:`KNOWN_CYCLES`, :data:`KNOWN_UPWARD` and :data:`UI_IMPORT_ALLOWED`; an
exception that is no longer needed fails its test, so the lists only shrink.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Import name -> its source directory.
PACKAGES = {"effdim": REPO / "core", "effdim_app": REPO / "effdim_app"}

#: The layers, lowest first: (what it is, the modules in it). A name stands for
#: the module and its submodules; the longest name that matches places a module.
#: ``effdim_app`` itself (its ``__init__``) is the package's entry points only.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("the engine", ("effdim",)),
    ("the experiment harness (the paper's studies)", ("effdim.experiments",)),
    (
        "the dashboard's foundations, no Panel: presets, limits, engine tasks, the job runner, the log",
        (
            "effdim_app.presets",
            "effdim_app.demo_script",
            "effdim_app.data_demo_script",
            "effdim_app.config",
            "effdim_app.tasks",
            "effdim_app.job",
            "effdim_app.job_sessions",
            "effdim_app.job_worker",
            "effdim_app.forkserver_preload",
            "effdim_app.jobs",
            "effdim_app.lifeline",
            "effdim_app.worker_main",
            "effdim_app.links",
            "effdim_app.server_memory",
            "effdim_app.logs",
        ),
    ),
    ("the session state, no Panel", ("effdim_app.state",)),
    (
        "what the views share: Panel's internals, styles, explanations, Bokeh figures, the notebook glue",
        (
            "effdim_app.compat",
            "effdim_app.compat_sessions",
            "effdim_app.style",
            "effdim_app.explain",
            "effdim_app.figures",
            "effdim_app.notebook",
        ),
    ),
    ("the views", ("effdim_app.views",)),
    ("the dashboard of one session", ("effdim_app.dashboard",)),
    ("the server", ("effdim_app.server",)),
    ("the dashboard's entry points", ("effdim_app",)),
    ("the command line", ("effdim.cli",)),
]

#: Import cycles the code has today (the modules of each), and why.
KNOWN_CYCLES: dict[frozenset[str], str] = {
    frozenset(
        {"effdim.model", "effdim.notation"}
    ): "HLCModel's str() and parse() call the notation module, which builds HLCModels",
}
#: Imports back up the layers the code has today, (importer, imported) -> why.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}
#: Modules of the engine that may import a UI library, and why.
UI_IMPORT_ALLOWED: dict[str, str] = {
    "effdim.experiments.plots": "the studies' figures are HoloViews plots, imported inside the functions that draw them",
}
#: Libraries the engine and the session state must not import.
UI_LIBRARIES = {"panel", "bokeh", "holoviews", "hvplot"}
#: Longest module of effdim_app, in lines, as ruff formats them.
MAX_APP_LINES = 500


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages: dotted name -> file."""
    found = {}
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names one import statement of module ``name`` (file ``path``) reads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module
    # ``from package import module`` reads the module, ``from module import name`` the module
    return [f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules() else target for alias in node.names]


@cache
def imports() -> dict[str, dict[str, set[str]]]:
    """Module -> {"own": modules of these packages it imports, "other": top-level names of other packages}."""
    found = {}
    for name, path in modules().items():
        own, other = set(), set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _imported(name, path, node):
                while target not in modules() and "." in target:  # a name inside a module: the module
                    target = target.rsplit(".", 1)[0]
                if target in modules():
                    if target != name:
                        own.add(target)
                else:
                    other.add(target.split(".")[0])
        found[name] = {"own": own, "other": other}
    return found


def layer_of(name: str) -> int | None:
    """Index in :data:`LAYERS` of the module ``name`` (None: no layer places it)."""
    best = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (name == member or name.startswith(member + ".")) and (best is None or len(member) > best[1]):
                best = (index, len(member))
    return None if best is None else best[0]


def cycles() -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    graph = {name: sorted(found["own"]) for name, found in imports().items()}
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(frozenset(group))

    for name in graph:
        if name not in index:
            visit(name)
    return groups


def test_the_packages_are_read():
    assert {"effdim", "effdim.cli", "effdim_app", "effdim_app.state", "effdim_app.views"} <= set(modules())
    assert "effdim_app.jobs" in imports()["effdim_app.state.model"]["own"]
    assert "param" in imports()["effdim_app.state.model"]["other"]


def test_every_module_has_a_layer():
    package_only = {"effdim_app"}  # the entry points' layer holds the package itself, no module falls into it
    unplaced = [
        name
        for name in modules()
        if layer_of(name) is None or (LAYERS[layer_of(name)][1] == ("effdim_app",) and name not in package_only)
    ]
    assert not unplaced, f"modules no layer of tests/test_layers.py places: {unplaced}"


def test_no_import_cycle():
    found = set(cycles())
    new = [sorted(group) for group in found - set(KNOWN_CYCLES)]
    assert not new, f"modules that import each other (directly or round a loop): {new}"
    gone = [sorted(group) for group in set(KNOWN_CYCLES) - found]
    assert not gone, f"no longer a cycle, remove it from KNOWN_CYCLES: {gone}"


def test_no_import_back_up_the_layers():
    upward = {
        (name, target)
        for name, found in imports().items()
        for target in found["own"]
        if layer_of(target) > layer_of(name)
    }
    new = [
        f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for name, target in sorted(upward - set(KNOWN_UPWARD))
    ]
    assert not new, "imports back up the layers:\n" + "\n".join(new)
    gone = sorted(set(KNOWN_UPWARD) - upward)
    assert not gone, f"no longer imported, remove it from KNOWN_UPWARD: {gone}"


def _reachable(start: list[str]) -> set[str]:
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imports()[name]["own"])
    return seen


def test_the_engine_imports_no_ui_library():
    engine = [name for name in modules() if name.split(".")[0] == "effdim" and name != "effdim.cli"]
    found = {name: sorted(imports()[name]["other"] & UI_LIBRARIES) for name in engine}
    bad = {name: libs for name, libs in found.items() if libs and name not in UI_IMPORT_ALLOWED}
    assert not bad, f"UI libraries imported by the engine: {bad}"
    unused = [name for name in UI_IMPORT_ALLOWED if not found.get(name)]
    assert not unused, f"no UI import left, remove it from UI_IMPORT_ALLOWED: {unused}"


def test_the_session_state_imports_no_ui_library_even_indirectly():
    state = [name for name in modules() if name == "effdim_app.state" or name.startswith("effdim_app.state.")]
    bad = {name: sorted(imports()[name]["other"] & UI_LIBRARIES) for name in _reachable(state)}
    bad = {name: libs for name, libs in bad.items() if libs}
    assert not bad, f"effdim_app.state reaches UI libraries through: {bad}"


@pytest.mark.parametrize("name", sorted(name for name in modules() if name.split(".")[0] == "effdim_app"))
def test_app_module_length(name):
    lines = len(modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_APP_LINES, f"{modules()[name].relative_to(REPO)} has {lines} lines, more than {MAX_APP_LINES}"
