"""One exception family for everything effdim refuses.

Every error the engine raises on purpose derives from :class:`EffdimError`,
so each face (the CLI, the dashboard, a notebook) catches one type and shows
its message, which names the culprit in the user's words. Each subclass also
derives from the built-in type it used to be (``ValueError``,
``RuntimeError``), so ``except ValueError`` in existing code keeps working.

Examples
--------
>>> import effdim
>>> try:
...     effdim.parse_model("3:1")
... except effdim.EffdimError as err:
...     print(type(err).__name__)
NotationError
"""

from __future__ import annotations

__all__ = ["EffdimError", "InvalidArgument"]


class EffdimError(Exception):
    """Base of every error effdim raises on purpose; ``str(err)`` is the user-facing message."""


class InvalidArgument(EffdimError, ValueError):
    """An argument outside what the function accepts (see :mod:`effdim.validation`)."""
