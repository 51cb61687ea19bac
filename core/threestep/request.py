"""One check of a three-step request, shared by :func:`effdim.threestep.distal_outcomes` and
:func:`effdim.threestep.covariates_3step`: the step-3 method, step 2's assignment and the hidden node."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgument
from .classification import ASSIGNMENTS
from .result import METHODS

__all__ = ["checked_node"]


def checked_node(fit: Any, node: str | None, method: str, assignment: str) -> str:
    """The hidden node of a three-step analysis of ``fit`` (default the root), once the step-3 ``method``
    and step 2's ``assignment`` are known ones; :class:`effdim.errors.InvalidArgument` naming the culprit."""
    if method not in METHODS:
        raise InvalidArgument(f"the three-step method must be one of {', '.join(METHODS)}, got {method!r}")
    if assignment not in ASSIGNMENTS:
        raise InvalidArgument(f"the assignment must be one of {', '.join(ASSIGNMENTS)}, got {assignment!r}")
    model = fit.model
    node = model.root if node is None else node
    if node not in model or not model.is_hidden(node):
        raise InvalidArgument(f"{node!r} is not a hidden node of {model}; hidden nodes: {', '.join(model.hidden)}")
    return node
