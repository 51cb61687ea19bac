"""Argument checks in one place: whole numbers in a range, seeds, models, data sets.

Every public entry point of the engine checks its arguments here once, so a
bad value is refused with the same wording whichever face (Python, CLI,
dashboard) passed it, and deeper code can trust what it receives. Errors are
:class:`effdim.errors.InvalidArgument` (a ``ValueError``), except where a
module has its own family member (:class:`effdim.model.ModelError` for
models, :class:`effdim.data.DataError` for data).

Examples
--------
>>> check_int("restarts", 5, low=1)
5
>>> check_int("restarts", 0, low=1)
Traceback (most recent call last):
...
effdim.errors.InvalidArgument: restarts must be at least 1, got 0
>>> as_model("3:2,2,2,2").observed
['O1', 'O2', 'O3', 'O4']
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .errors import InvalidArgument

__all__ = ["check_int", "check_number", "as_seed", "spawn_seeds", "as_model", "as_dataset"]


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` if it is a whole number in ``[low, high]``; else :class:`InvalidArgument`.

    ``name`` is how the user knows the value (``"restarts"``, ``"|H1|"``).
    Booleans and non-integral floats are refused rather than silently rounded.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float, str)):
        raise InvalidArgument(f"{name} must be a whole number, got {value!r}")
    try:
        number = int(value) if not isinstance(value, float) else None
    except ValueError:
        raise InvalidArgument(f"{name} must be a whole number, got {value!r}") from None
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidArgument(f"{name} must be a whole number, got {value!r}")
        number = int(value)
    if low is not None and number < low:
        raise InvalidArgument(f"{name} must be at least {low}, got {number}")
    if high is not None and number > high:
        raise InvalidArgument(f"{name} must be at most {high:,}, got {number:,}")
    return number


def check_number(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite ``float`` in ``[low, high]``; else :class:`InvalidArgument`.

    ``name`` is how the user knows the value (``"tol"``, ``"prior"``).
    Booleans, text, infinity and NaN are refused.

    >>> check_number("tol", 1e-8, low=0)
    1e-08
    >>> check_number("tol", -1, low=0)
    Traceback (most recent call last):
    ...
    effdim.errors.InvalidArgument: tol must be at least 0, got -1.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgument(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidArgument(f"{name} must be a finite number, got {number!r}")
    if low is not None and number < low:
        raise InvalidArgument(f"{name} must be at least {low:g}, got {number!r}")
    if high is not None and number > high:
        raise InvalidArgument(f"{name} must be at most {high:g}, got {number!r}")
    return number


def as_seed(seed: Any) -> np.random.Generator:
    """The random generator for ``seed``: ``None`` (fresh entropy), a non-negative int,
    a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator` (used as is).

    Every engine function that draws random numbers takes one argument named
    ``seed`` and passes it through here.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    return np.random.default_rng(check_int("seed", seed, low=0))


def spawn_seeds(seed: Any, count: int) -> list[np.random.Generator]:
    """``count`` independent generators derived from ``seed`` (as :func:`as_seed` accepts it)."""
    return list(as_seed(seed).spawn(count))


def as_model(model: Any):
    """An :class:`effdim.model.HLCModel` from a model, notation text or a JSON dict."""
    from .model import HLCModel
    from .notation import model_from_json, parse_model

    if isinstance(model, HLCModel):
        return model
    if isinstance(model, str):
        return parse_model(model)
    if isinstance(model, dict):
        return model_from_json(model)
    raise InvalidArgument(
        f"expected a model (notation such as '3:2,2,2,2', JSON or an HLCModel), got {type(model).__name__}"
    )


def as_dataset(data: Any, unlimited: Any = ()):
    """An :class:`effdim.data.Dataset` from a Dataset, a file as :func:`effdim.read_data` read it, or a
    pandas DataFrame of categorical columns (those named in ``unlimited``, such as covariates and
    weights, keep every value they have)."""
    from .data import Dataset, from_frame
    from .reading import Loaded

    if isinstance(data, Loaded):
        return data.dataset
    if isinstance(data, Dataset):
        return data
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        return from_frame(data, unlimited=[c for c in unlimited if c in data.columns])
    raise InvalidArgument(
        f"expected data read by effdim.read_data, a Dataset or a pandas DataFrame, got {type(data).__name__}"
    )
