"""A researcher's own survey file, as the tests (and the screenshots) upload it: 800 respondents, an ID column,
six items of a staff survey worded as a form exports them (the question as the column's name), three answers
each, some left blank.

The answers are drawn from a latent class model of three classes (content, mixed, leaving) with a fixed seed,
so a sweep has something to find; each column lists its answers in another order of first appearance, as a
real export does. :func:`survey_frame` is the table, :func:`survey_csv` and :func:`survey_sav` the files (the
``.sav`` stores codes 1-3 with value labels and a variable label per item, as SPSS writes a survey).

(pytest puts this folder on ``sys.path``: tests import it as ``questionnaire``.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROWS = 800
ID = "respondent_id"
#: The items: the question as the survey form wrote it (the CSV's column names and the .sav's variable labels),
#: and the short name a .sav file gives the variable.
ITEMS = {
    "q1_satisfied": "I am satisfied with my job overall",
    "q2_workload": "My workload is manageable within normal working hours",
    "q3_manager": "My manager listens to my concerns",
    "q4_recommend": "I would recommend this organisation as a place to work",
    "q5_tools": "I have the tools and equipment I need to do my job well",
    "q6_stay": "I see myself still working here in two years' time",
}
#: The answers, in the order the scale runs (codes 1, 2, 3 of the .sav file).
ANSWERS = ("Agree", "Neither agree nor disagree", "Disagree")
#: P(answer | class) per class (content, mixed, leaving), the same for every item but the workload.
_PROFILE = np.array([[0.80, 0.15, 0.05], [0.30, 0.45, 0.25], [0.06, 0.24, 0.70]])
_WORKLOAD = np.array([[0.55, 0.30, 0.15], [0.35, 0.35, 0.30], [0.20, 0.30, 0.50]])
_SHARES = np.array([0.45, 0.35, 0.20])
#: The share of answers left blank.
MISSING = 0.03


def survey_frame(seed: int = 60) -> pd.DataFrame:
    """The survey as a table: ``respondent_id`` ("R0001", ...) and one column per item, named by its question;
    each cell one of :data:`ANSWERS` or ``None`` (left blank). The first rows are put in an order that makes each
    column meet its answers in another order."""
    rng = np.random.default_rng(seed)
    classes = rng.choice(3, size=ROWS, p=_SHARES)
    table = {ID: [f"R{i + 1:04d}" for i in range(ROWS)]}
    for j, question in enumerate(ITEMS.values()):
        profile = _WORKLOAD if j == 1 else _PROFILE
        codes = np.array([rng.choice(3, p=profile[c]) for c in classes])
        codes[: len(ANSWERS)] = np.roll(np.arange(len(ANSWERS)), j)  # the order of first appearance differs
        answers = np.array(ANSWERS, dtype=object)[codes]
        answers[len(ANSWERS) :][rng.random(ROWS - len(ANSWERS)) < MISSING] = None
        table[question] = answers
    return pd.DataFrame(table)


def survey_csv(seed: int = 60) -> bytes:
    """:func:`survey_frame` as a form exports it: UTF-8, commas, blank cells where nothing was answered."""
    return survey_frame(seed).to_csv(index=False).encode("utf-8")


def survey_sav(seed: int = 60) -> bytes:
    """:func:`survey_frame` as SPSS stores it: short variable names, codes 1-3 with value labels, the question as
    the variable label, blanks as system-missing."""
    import pyreadstat

    frame = survey_frame(seed)
    code = {answer: i + 1 for i, answer in enumerate(ANSWERS)}
    stored = pd.DataFrame({ID: frame[ID]})
    for name, question in ITEMS.items():
        stored[name] = frame[question].map(code).astype("float64")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "survey.sav"
        pyreadstat.write_sav(
            stored,
            str(path),
            column_labels={ID: "Respondent", **ITEMS},
            variable_value_labels={name: {float(c): a for a, c in code.items()} for name in ITEMS},
        )
        return path.read_bytes()


#: Columns of :func:`survey_with_covariates` beside the items.
YEARS, CONTRACT, WEIGHT = "Years of service", "Contract", "Survey weight"


def survey_with_covariates() -> pd.DataFrame:
    """The survey with two covariates that follow its answers (fewer years of service and more fixed-term
    contracts the more items a respondent disagreed with) and a column of post-stratification weights."""
    frame = survey_frame()
    rng = np.random.default_rng(61)
    disagree = (frame[list(ITEMS.values())] == "Disagree").sum(axis=1).to_numpy()
    frame[YEARS] = np.clip(np.round(rng.normal(14 - 1.5 * disagree, 4)), 0, 30).astype(int)
    frame[CONTRACT] = np.where(rng.random(len(frame)) < 0.2 + 0.1 * disagree, "Fixed-term", "Permanent")
    frame[WEIGHT] = rng.choice([0.8, 1.0, 1.25, 1.6], len(frame))
    return frame
