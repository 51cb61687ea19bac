"""The ``Examples`` in the engine's docstrings run as tests.

Every docstring example of every module of the installed package ``effdim``
(the directory ``core/``) is collected here, one test each. They are
imported by their package name, not by path, so the classes they show are
the ones users get (``effdim.data.DataError``, not a second copy under
``core.data``).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import effdim

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: Optional extras (``pip install effdim[dask]``): a module that needs one is skipped when it is absent.
OPTIONAL = {"dask", "distributed"}


def _docstring_examples() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for info in pkgutil.walk_packages(effdim.__path__, "effdim."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as err:
            if (err.name or "").split(".")[0] in OPTIONAL:
                continue
            raise
        found.extend(test for test in finder.find(module, module.__name__) if test.examples)
    return sorted(found, key=lambda test: test.name)


EXAMPLES = _docstring_examples()


def test_the_engine_has_examples():
    """Guards the collection itself: an empty list would make the test below vacuous."""
    documented = {test.name.split(".")[1] for test in EXAMPLES}
    assert {"model", "notation", "bounds", "rank", "modp", "regularity", "dimensions", "data"} <= documented


@pytest.mark.parametrize("test", EXAMPLES, ids=[test.name for test in EXAMPLES])
def test_docstring_example(test: doctest.DocTest) -> None:
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test, out=report.append, clear_globs=True)
    assert runner.failures == 0, "".join(report)
