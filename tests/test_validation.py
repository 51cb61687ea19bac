"""effdim.validation and the EffdimError family: one wording for bad arguments, one type to catch."""

from __future__ import annotations

import numpy as np
import pytest

import effdim
from effdim.bounds import SplitSearchTooLarge
from effdim.data import DataError
from effdim.distribution import SpaceTooLargeError
from effdim.errors import EffdimError, InvalidArgument
from effdim.experiments import ExperimentError
from effdim.learner import NotFittedError
from effdim.model import ModelError
from effdim.notation import NotationError
from effdim.validation import as_dataset, as_model, as_seed, check_int, spawn_seeds


@pytest.mark.parametrize(
    "error",
    [
        ModelError,
        NotationError,
        DataError,
        SpaceTooLargeError,
        SplitSearchTooLarge,
        ExperimentError,
        NotFittedError,
        InvalidArgument,
    ],
)
def test_every_engine_error_is_an_effdim_error(error):
    assert issubclass(error, EffdimError)
    assert effdim.EffdimError is EffdimError


def test_builtin_bases_are_kept_for_existing_callers():
    assert issubclass(ModelError, ValueError) and issubclass(DataError, ValueError)
    assert issubclass(InvalidArgument, ValueError) and issubclass(ExperimentError, RuntimeError)


@pytest.mark.parametrize(
    "value, message",
    [
        (0, "restarts must be at least 1, got 0"),
        (10**9, "restarts must be at most 200, got 1,000,000,000"),
        (2.5, "restarts must be a whole number, got 2.5"),
        (True, "restarts must be a whole number, got True"),
        ("x", "restarts must be a whole number, got 'x'"),
        (None, "restarts must be a whole number, got None"),
    ],
)
def test_check_int_names_the_value_in_the_users_words(value, message):
    with pytest.raises(InvalidArgument) as info:
        check_int("restarts", value, low=1, high=200)
    assert str(info.value) == message


def test_check_int_accepts_whole_numbers_of_any_type():
    assert check_int("k", np.int64(3), low=1) == 3
    assert check_int("k", 4.0, low=1) == 4
    assert check_int("k", "5", low=1) == 5


def test_seeds_are_normalised_once_and_reproducible():
    a, b = as_seed(7), as_seed(7)
    assert a.integers(1 << 30) == b.integers(1 << 30)
    g = np.random.default_rng(1)
    assert as_seed(g) is g
    streams = [r.integers(1 << 30) for r in spawn_seeds(3, 4)]
    assert streams == [r.integers(1 << 30) for r in spawn_seeds(3, 4)] and len(set(streams)) == 4
    with pytest.raises(InvalidArgument, match="seed must be at least 0"):
        as_seed(-1)


def test_as_model_and_as_dataset():
    model = as_model("3:2,2,2,2")
    assert as_model(model) is model and as_model(effdim.model_to_json(model)) == model
    with pytest.raises(NotationError):
        as_model("3:1")
    with pytest.raises(InvalidArgument, match="expected a model"):
        as_model(42)
    with pytest.raises(
        InvalidArgument, match="expected data read by effdim.read_data, a Dataset or a pandas DataFrame, got list"
    ):
        as_dataset([[1, 2]])
