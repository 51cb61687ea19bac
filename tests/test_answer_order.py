"""The order of a questionnaire's answers (effdim.data.ordinal): common scales told by their words, numbered
labels by their number, and one order for every column with the same answers, whatever the file's row order."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from questionnaire import ANSWERS, survey_csv, survey_sav

from effdim import ReadLimits
from effdim.data import from_frame
from effdim.data.ordinal import SCALES, answer_order, shared_orders
from effdim.reading import load_csv, read_data

#: Scales as a questionnaire writes them, low end first.
WRITTEN = [
    ["Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree", "Strongly agree"],
    ["Never", "Rarely", "Sometimes", "Often", "Always"],
    ["Poor", "Fair", "Good", "Very good", "Excellent"],
    ["Very dissatisfied", "Dissatisfied", "Neutral", "Satisfied", "Very satisfied"],
    ["Not at all important", "Slightly important", "Moderately important", "Very important", "Extremely important"],
    ["Very unlikely", "Unlikely", "Likely", "Very likely"],
    ["No", "Yes"],
    ["False", "True"],
    ["1 Extremely well", "2 Quite well", "3 Not too well", "4 Not well at all"],
    ["1. Agree", "2. Neutral", "10. Disagree"],
]


@pytest.mark.parametrize("scale", WRITTEN, ids=lambda s: s[0])
@given(data=st.data())
def test_a_scale_comes_out_in_its_order_whatever_order_its_answers_came_in(scale, data):
    shuffled = data.draw(st.permutations(scale))
    assert answer_order(shuffled) == scale


@given(st.lists(st.sampled_from(WRITTEN), min_size=1, max_size=1).flatmap(lambda s: st.permutations(s[0])))
def test_case_punctuation_and_curly_apostrophes_do_not_hide_a_scale(answers):
    spelled = [f"  {a.upper()}." if i % 2 else a.lower() for i, a in enumerate(answers)]
    ordered = answer_order(spelled)
    assert ordered is not None and sorted(ordered) == sorted(spelled)
    assert answer_order(["Don\u2019t know", "Agree", "Disagree"]) == ["Disagree", "Agree", "Don\u2019t know"]


def test_answers_off_the_scale_go_last_and_unknown_words_are_not_a_scale():
    assert answer_order(["Refused", "Often", "Never", "Don't know"]) == ["Never", "Often", "Refused", "Don't know"]
    assert answer_order(["Often", "Blue"]) is None  # one word off every scale: no scale
    assert answer_order(["Agree", "Often"]) is None  # two scales mixed
    assert answer_order(["Disagree", "disagree"]) is None  # two answers of one rank: not read as the scale
    assert answer_order(["Agree"]) is None


@given(
    st.lists(st.text(alphabet="abcdef", min_size=1, max_size=3), min_size=2, max_size=6, unique=True),
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.randoms(),
)
def test_every_column_with_the_same_answers_gets_the_same_order(labels, keep, random):
    columns = []
    for kept in keep:
        subset = [x for x in labels if kept or x != labels[-1]]
        random.shuffle(subset)
        columns.append(tuple(subset))
    ordered = shared_orders(columns, [False] * len(columns))
    assert [sorted(c) for c in ordered] == [sorted(c) for c in columns]  # nothing added or removed
    for a in ordered:
        for b in ordered:
            common = set(a) & set(b)
            if set(a) <= set(b) or set(b) <= set(a):  # a column's answers all among another's: the same order
                assert [x for x in a if x in common] == [x for x in b if x in common]


def test_the_files_own_order_stands_and_sets_the_order_of_text_columns_with_its_answers():
    columns = [("x", "y", "z"), ("z", "y", "x"), ("y", "x"), (1, 2)]
    assert shared_orders(columns, [False, True, False, False]) == [
        ("z", "y", "x"),
        ("z", "y", "x"),
        ("y", "x"),
        (1, 2),
    ]


def test_the_survey_file_has_one_order_for_its_six_items_in_csv_and_sav_alike():
    """The 800-respondent survey lists its answers in another order in each column; read, every item runs
    along the agreement scale (a CSV, low end first) or along the codes of its value labels (the .sav)."""
    csv = read_data(survey_csv(), name="survey.csv", limits=ReadLimits(too_many_states="drop")).dataset
    assert set(csv.states) == {("Disagree", "Neither agree nor disagree", "Agree")}
    sav = read_data(survey_sav(), name="survey.sav", limits=ReadLimits(too_many_states="drop")).dataset
    assert set(sav.states) == {ANSWERS}

    # the same answers of the same respondents, whatever the order: the same patterns, counted alike
    def counted(data):  # (answers..., count) of every pattern; the columns' names differ (questions, variables)
        return sorted(map(tuple, data.to_frame().fillna("").to_numpy().tolist()))

    assert counted(csv) == counted(sav) and csv.n_rows == 800


def test_a_data_frame_and_a_csv_order_alike_and_an_ordered_categorical_keeps_its_order():
    frame = pd.DataFrame(
        {"a": ["Often", "Never", "Sometimes"], "b": ["Sometimes", "Often", "Never"], "c": ["p", "q", "p"]}
    )
    from_csv = load_csv(io.BytesIO(frame.to_csv(index=False).encode()))
    assert from_frame(frame).states == from_csv.states == (("Never", "Sometimes", "Often"),) * 2 + (("p", "q"),)
    frame["a"] = pd.Categorical(frame["a"], categories=["Often", "Sometimes", "Never"], ordered=True)
    assert from_frame(frame).states[:2] == (("Often", "Sometimes", "Never"),) * 2  # the frame's own order leads


def test_the_scales_name_each_answer_once():
    for name, lines in SCALES.items():
        words = [w for line in lines for w in line]
        assert len(words) == len(set(words)), name


def test_one_order_in_the_report_plots_and_tables_and_the_cli_table(tmp_path, capsys):
    """One column's answers put in another order than the rest: the report's profile panel, its table and the
    command line's table all list that column's answers in its order, and the others' in theirs."""
    import re

    from effdim import fit
    from effdim.cli import main
    from effdim.report import report_html

    data = load_csv(
        io.BytesIO(b"a,b,c\n" + b"Often,Never,Sometimes\nNever,Often,Often\nSometimes,Sometimes,Never\n" * 9)
    )
    data = data.with_state_order("b", ["Often", "Sometimes", "Never"])
    page = report_html(fit(data, "2:3,3,3", seed=0, warn=False))
    drawn = [re.findall(r"<title>(\w+) = (\w+) \|", panel) for panel in page.split('aria-label="profile of')[1:]]
    assert [list(dict.fromkeys(c for _, c in bars)) for bars in drawn] == [
        ["Never", "Sometimes", "Often"],
        ["Often", "Sometimes", "Never"],
        ["Never", "Sometimes", "Often"],
    ]
    table = page[page.index('class="profiles') :]
    tabled = re.findall(r"<td>([abc])</td><td>(\w+)</td>", table)
    assert [c for item, c in tabled if item == "b"] == ["Often", "Sometimes", "Never"]
    assert [c for item, c in tabled if item == "a"] == ["Never", "Sometimes", "Often"]
    path = tmp_path / "s.csv"
    path.write_bytes(b"a,b\n" + b"Often,Sometimes\nNever,Often\nSometimes,Never\n" * 9)
    assert main(["fit", str(path), "--model", "2:3,3", "--seed", "0", "--quiet"]) in (0, None)
    printed = re.findall(r"^\s*([ab])\s+(\w+)\s+[\d.]+", capsys.readouterr().out, re.M)
    assert [c for item, c in printed if item == "a"] == ["Never", "Sometimes", "Often"]
    assert [c for item, c in printed if item == "b"] == ["Never", "Sometimes", "Often"]
