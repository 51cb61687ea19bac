"""Which columns of a file become the data (effdim.data.choice: read_data's columns, drop and ids; the CLI's
--columns, --drop and --id), and identifiers kept beside the posteriors so they merge back into the file."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from questionnaire import ID, ITEMS, survey_csv, survey_sav

from effdim import datasets, fit
from effdim.cli import main
from effdim.data import DataError, TooManyValues
from effdim.reading import read_data

SMALL = b"id,a,b,c,note\n1,x,y,z,free text one\n2,y,x,z,free text two\n3,x,x,y,free text three\n"


def test_columns_keep_in_the_files_order_drop_leaves_out_and_ids_come_back_per_row():
    assert read_data(SMALL, columns=["c", "a"], drop=()).dataset.columns == ("a", "c")
    loaded = read_data(SMALL, drop=["note", "c"], ids=["id"])
    assert loaded.dataset.columns == ("a", "b") and loaded.ids["id"].tolist() == ["1", "2", "3"]
    assert read_data(SMALL).ids is None


def test_a_column_too_wide_for_an_item_is_named_with_its_remedies_and_leaves_with_drop_or_ids():
    with pytest.raises(TooManyValues, match="'respondent_id'.*drop=\\['respondent_id'\\].*ids=") as refused:
        read_data(survey_csv(), name="survey.csv")
    assert refused.value.column == ID
    assert read_data(survey_csv(), drop=[ID]).dataset.columns == tuple(ITEMS.values())
    kept = read_data(survey_csv(), columns=list(ITEMS.values())[:3]).dataset  # the identifier is not read as data
    assert kept.columns == tuple(ITEMS.values())[:3]
    with pytest.raises(DataError, match=f"column '{ID}' has 800 or more distinct values"):
        read_data(survey_csv(), columns=[ID, *list(ITEMS.values())[:2]])


def test_names_the_file_does_not_have_or_named_twice_are_refused_by_name():
    with pytest.raises(DataError, match="no column named 'd'; columns are id, a, b, c, note"):
        read_data(SMALL, drop=["d"])
    with pytest.raises(DataError, match="drop names the column 'a' twice"):
        read_data(SMALL, drop=["a", "a"])
    with pytest.raises(DataError, match="the column 'a' is both kept and dropped"):
        read_data(SMALL, columns=["a", "b"], drop=["a"])
    with pytest.raises(DataError, match="identifiers need one row per case"):
        read_data(b"id,a,b,count\n1,x,y,2\n2,y,x,3\n", ids=["id"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(max_size=8), max_size=4) | st.none(),
    st.lists(st.text(max_size=8), max_size=3),
    st.lists(st.text(max_size=8), max_size=2),
)
def test_any_choice_of_names_reads_or_is_refused_in_one_line(columns, drop, ids):
    try:
        loaded = read_data(SMALL, columns=columns, drop=drop, ids=ids)
    except DataError as err:
        assert "\n" not in str(err)
        return
    assert not set(loaded.dataset.columns) & {*drop, *ids}


def test_the_sav_survey_reads_with_its_identifier_apart():
    loaded = read_data(survey_sav(), name="survey.sav", ids=[ID])
    assert loaded.ids[ID].tolist()[:2] == ["R0001", "R0002"] and len(loaded.dataset.columns) == 6


def test_posteriors_put_the_identifiers_first_and_refuse_ids_of_other_rows():
    loaded = read_data(survey_csv(), name="survey.csv", ids=[ID])
    result = fit(loaded.dataset, "2:3,3,3,3,3,3", seed=0, restarts=1, warn=False)
    table = result.posteriors(ids=loaded.ids)
    assert list(table.columns[:2]) == [ID, next(iter(ITEMS.values()))] and len(table) == 800
    assert table[ID].tolist() == loaded.ids[ID].tolist()
    with pytest.raises(ValueError, match="799 identifiers for 800 rows"):
        result.posteriors(ids=loaded.ids.iloc[1:])
    counts = fit(datasets.load("stouffer-toby"), "2:2,2,2,2", seed=0, restarts=1, warn=False)
    with pytest.raises(ValueError, match="counts of response patterns"):
        counts.posteriors(ids=pd.DataFrame({"id": range(3)}))


def test_the_command_line_chooses_columns_and_writes_the_identifier_into_the_posteriors(tmp_path, capsys):
    path = tmp_path / "survey.csv"
    path.write_bytes(survey_csv())
    assert main(["sweep", str(path), "--max-card", "2", "--restarts", "1", "--quiet"]) == 2
    assert f"--drop {ID}, or keep it beside the posteriors with --id {ID}" in capsys.readouterr().err
    assert main(["sweep", str(path), "--drop", ID, "--max-card", "2", "--restarts", "1", "--quiet"]) == 0
    assert "n = 800" in capsys.readouterr().out
    first, second = list(ITEMS.values())[:2]
    assert main(["fit", str(path), "--columns", first, "--columns", second, "--model", "1", "--quiet"]) == 0
    assert "n = 800" in capsys.readouterr().out
    posteriors = tmp_path / "post.csv"
    status = main(["fit", str(path), "--id", ID, "--model", "2", "--seed", "0", "--posteriors", str(posteriors)])
    assert status == 0
    table = pd.read_csv(posteriors)
    assert table.columns[0] == ID and table[ID].tolist()[:3] == ["R0001", "R0002", "R0003"]
    assert main(["sweep", "stouffer-toby", "--columns", "A", "--columns", "B", "--columns", "C", "--quiet"]) == 0
    assert "(A:2,B:2,C:2)   data stouffer-toby" in capsys.readouterr().out  # the three columns named
    assert main(["fit", "stouffer-toby", "--id", "A", "--model", "2"]) == 2
    assert "--id apply to data files" in capsys.readouterr().err


def test_a_frame_of_an_spss_file_reads_its_columns_as_chosen():
    frame = read_data(io.BytesIO(survey_sav()), name="survey.sav", columns=["q1_satisfied", "q2_workload"]).dataset
    assert frame.columns == ("q1_satisfied", "q2_workload")
