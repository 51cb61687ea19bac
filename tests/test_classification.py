"""The classification table of a fitted model (effdim.classification): the modal class against the posteriors,
summed over the rows, and the classification error; checked against the posteriors' table row by row."""

from __future__ import annotations

import numpy as np
import pytest
from questionnaire import ID, survey_csv

from effdim import datasets, fit, read_data


@pytest.mark.parametrize("name, model", [("stouffer-toby", "2:2,2,2,2"), ("survey", "3:3,3,3,3,3,3")])
def test_the_table_sums_each_rows_posteriors_into_its_modal_class(name, model):
    data = read_data(survey_csv(), drop=[ID]).dataset if name == "survey" else datasets.load(name)
    result = fit(data, model, seed=1, restarts=2, warn=False)
    table = result.classification()
    posteriors = result.posteriors()  # one row per case (the survey, missing answers marginalised) or pattern
    node = result.labels.name(result.model.root)
    probs = posteriors[[c for c in posteriors.columns if c.startswith(f"P({node}=")]].to_numpy()
    weights = posteriors["count"].to_numpy() if "count" in posteriors else np.ones(len(posteriors))
    expected = np.zeros_like(table.counts)
    for row, weight in zip(probs, weights):
        expected[np.argmax(row)] += weight * row
    np.testing.assert_allclose(table.counts, expected, rtol=1e-9, atol=1e-9)
    assert table.counts.sum() == pytest.approx(data.n_rows)
    assert table.error == pytest.approx(1 - np.trace(expected) / data.n_rows)
    frame = table.frame()
    assert list(frame["rows"]) == pytest.approx(list(table.assigned)) and frame.shape == (
        table.counts.shape[0],
        len(table.counts) + 1,
    )


def test_perfectly_separated_classes_have_no_classification_error():
    codes = np.array([[0, 0, 0]] * 50 + [[1, 1, 1]] * 50)
    from effdim.data import from_patterns

    result = fit(from_patterns(codes), "2:2,2,2", seed=0, restarts=3, warn=False)
    assert result.classification().error == pytest.approx(0, abs=1e-6)
