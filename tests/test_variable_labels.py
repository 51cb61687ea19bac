"""SPSS and Stata variable labels (what each short variable name asks) are read with the data and used: the
profile panels' titles in the report and the dashboard, the data tables, the command line's list of items."""

from __future__ import annotations

from questionnaire import ID, ITEMS, survey_frame, survey_sav

from effdim import fit, read_data
from effdim.cli import main
from effdim.report import report_html


def test_an_spss_files_variable_labels_reach_the_data_and_the_fits_labels():
    data = read_data(survey_sav(), name="survey.sav", drop=[ID]).dataset
    assert data.variable_labels == ITEMS
    assert data.subset(["q2_workload", "q1_satisfied"]).variable_labels == {
        "q2_workload": ITEMS["q2_workload"],
        "q1_satisfied": ITEMS["q1_satisfied"],
    }
    result = fit(data, "2:3,3,3,3,3,3", seed=0, restarts=1, warn=False)  # leaves O1..O6, mapped by position
    assert result.labels.described() == ITEMS


def test_a_stata_files_variable_labels_are_read(tmp_path):
    frame = survey_frame().drop(columns=ID).rename(columns={q: name for name, q in ITEMS.items()}).fillna("")
    path = tmp_path / "survey.dta"
    frame.to_stata(path, variable_labels=ITEMS, write_index=False)
    assert read_data(path).dataset.variable_labels == ITEMS


def test_the_report_and_the_command_line_show_what_each_item_asks(tmp_path, capsys):
    data = read_data(survey_sav(), name="survey.sav", drop=[ID]).dataset
    page = report_html(fit(data, "2:3,3,3,3,3,3", seed=0, restarts=1, warn=False), data=data)
    assert f"<title>q6_stay: {ITEMS['q6_stay'].replace(chr(39), '&#x27;')}</title>" in page  # the panel's title
    assert "I have the tools and equipment" in page.split('aria-label="profile of q5_tools"')[1][:900]
    assert f"q1_satisfied: {ITEMS['q1_satisfied']}" in page  # the data section's column
    path = tmp_path / "survey.sav"
    path.write_bytes(survey_sav())
    assert main(["fit", str(path), "--id", ID, "--model", "2", "--seed", "0", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "items (the file's variable labels)" in out and f"q4_recommend  {ITEMS['q4_recommend']}" in out
