"""Defects of the dashboard, each seen in headless Chromium (see tests/ui/test_dashboard.py for the helpers)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from pages import (
    FIG2,
    POLL,
    SCORES_PLOT,
    TIMEOUT,
    apply_notation,
    click_node,
    css,
    cut_off,
    data_tab,
    load_bundled_data,
    model_tab,
    open_app,
    stat,
    upload,
)
from playwright.sync_api import Page, expect

from effdim import model_to_json, parse_model
from effdim.scores import SCORES
from effdim_app.state import SHOWN_SCORES

pytestmark = pytest.mark.browser


def message(page: Page):
    return page.locator(".effdim-message").first


def test_states_box_refuses_bad_values_visibly_set_applies_without_enter_and_messages_are_plain_text(
    page: Page, app_url
):
    """On one page, O3 selected: refused states leave the box and the model as they were; the Set button applies
    states without Enter (JupyterLab can swallow Enter in outputs); messages show names as typed, underscores
    kept, and the engine's refusals as plain text."""
    open_app(page, app_url)
    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    box = page.locator(".effdim-card-input input")
    for typed in ("0", "-2", "2.5", "two"):
        box.fill(typed)
        box.press("Enter")
        expect(message(page)).to_contain_text(f"Set |O3| = {typed} refused", timeout=TIMEOUT)
        expect(box).to_have_value("2")  # the box shows the node's states again, not the refused value
        expect(stat(page, "ds")).to_have_text("41")
    expect(page.locator(".effdim-notation textarea")).to_have_value(FIG2)

    box.fill("3")
    page.get_by_role("button", name="Set", exact=True).click()
    expect(page.locator(".effdim-notation textarea")).to_have_value("5(3(2,2),3,3(2,2))", timeout=TIMEOUT)

    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3")
    name = page.locator(".effdim-name-input input")
    name.fill("my_new_*name*")
    page.get_by_role("button", name="Rename").click()
    expect(message(page)).to_contain_text("'my_new_*name*'", timeout=TIMEOUT)
    apply_notation(page, "3(2,2")  # the engine's refusal, shown as written
    expect(message(page)).to_contain_text("Model from notation refused", timeout=TIMEOUT)
    assert message(page).locator("em, strong, code").count() == 0


# True when some cell of the table shows less than its text (Tabulator cuts it with an ellipsis).
CUT_CELLS = """(selector) => {
  const cut = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches(selector + ' .tabulator-cell') && el.scrollWidth > el.clientWidth + 1) cut.push(el.textContent);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return cut;
}"""


def test_lc_sweep_survives_tree_edit_table_uncut_toggle_follows_editor(page: Page, app_url, shots):
    open_app(page, app_url)
    data_tab(page)
    load_bundled_data(page)
    # long enough to still run after the tree edit below (SQUAREM made 30 starts finish too soon)
    for selector, value in ((".effdim-card-max input", "4"), (".effdim-restarts input", "200")):
        box = page.locator(selector)
        box.fill(value)
        box.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    expect(page.get_by_role("button", name="■ Cancel")).to_be_enabled(timeout=TIMEOUT)
    # a tree edit while the LC model over all columns is swept: the sweep goes on
    model_tab(page)
    click_node(page, FIG2, "O3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: O3", timeout=TIMEOUT)
    box = page.locator(".effdim-card-input input")
    box.fill("3")
    box.press("Enter")
    expect(stat(page, "ds")).to_have_text("46", timeout=TIMEOUT)
    data_tab(page)
    expect(page.locator(".effdim-best")).to_contain_text("Best cardinality by score", timeout=TIMEOUT)
    expect(page.get_by_text("cancelled")).to_have_count(0)
    page.locator(".effdim-results").scroll_into_view_if_needed()
    expect(page.locator(".effdim-results .tabulator-row")).to_have_count(4)
    assert page.evaluate(CUT_CELLS, ".effdim-results") == []
    page.screenshot(path=str(shots / "10-lc-sweep-after-tree-edit.png"))
    # the editor takes the LC model: the toggle shows the mapping now scored
    page.get_by_role("button", name="Edit the LC model over these columns in the tree editor").click()
    mapping = page.locator(".effdim-mapping")
    expect(mapping.locator(".bk-active")).to_have_text("Edited model (leaves = columns)", timeout=TIMEOUT)
    mapping.get_by_text("LC model over all columns").click()
    expect(mapping.locator(".bk-active")).to_have_text("LC model over all columns", timeout=TIMEOUT)


# Line styles of the score curves (the Bokeh plot whose title starts "Scores against").
CURVE_STYLES = (
    "() => {"
    + SCORES_PLOT
    + """
  if (!plot) return [];
  views.length = 0;
  walk(plot);
  const out = [];
  for (const v of views) {
    const g = v.model && v.model.glyph;
    if (g && g.type === "Line" && v.model.data_source.get_length() > 0)
      out.push([g.line_dash.value.length > 0, g.line_width.value]);  // [dashed?, width]
  }
  return out;
}"""
)


def test_default_sweep_stops_at_saturation_and_coinciding_curves_stay_visible(page: Page, app_url, shots):
    open_app(page, app_url)
    data_tab(page)
    load_bundled_data(page)  # hlc-figure2: 5 binary columns, dc = 31
    box = page.locator(".effdim-restarts input")
    box.fill("1")
    box.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    expect(page.get_by_text("Stopped at |X| = 6, where de = dc")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".effdim-results .tabulator-row")).to_have_count(6)
    styles = page.evaluate(CURVE_STYLES)
    with_de = sum(SCORES[k].uses_de for k in SHOWN_SCORES)
    # the de scores (BIC+, CS+, sBIC+) thin and dashed over the ds ones
    assert sorted(styles) == [[False, 5]] * (len(SHOWN_SCORES) - with_de) + [[True, 2]] * with_de, styles
    page.locator(".effdim-curves").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "11-sweep-to-saturation.png"))
    page.locator(".effdim-past-saturation input").check()
    to = page.locator(".effdim-card-max input")
    to.fill("40")
    to.press("Enter")
    page.get_by_role("button", name="▶ Sweep cardinality").click()
    # on to the largest regular |H| (16): seen running or done, whichever comes first
    expect(page.locator(".effdim-status")).to_contain_text(re.compile(r"of 16 done|16 cardinalities"), timeout=TIMEOUT)


def test_dimension_table_as_csv_tree_as_png_then_json_import_empty_file_named_and_same_file_again(page: Page, app_url):
    """Figure 2's table and tree downloaded; then a JSON model imported: an empty file named as such, the same
    file taken again after an edit."""
    open_app(page, app_url)
    with page.expect_download() as table:
        page.get_by_role("button", name="Download this table (CSV)").click()
    text = Path(table.value.path()).read_text()
    assert text.splitlines()[0] == "hidden,LC model,ds,de,dc,dp,db,binding,deficit"
    assert text.splitlines()[1] == 'H1,"5:3,3,2",29,17,17,17,17,dc,12'
    page.locator(".bk-Canvas").first.hover()  # the toolbar shows on hover
    with page.expect_download() as drawing:
        page.locator(".bk-tool-icon-save").first.click()
    assert drawing.value.suggested_filename == "effdim-tree.png"
    assert Path(drawing.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    chooser = page.locator("input[type=file][accept*=json]")
    chooser.set_input_files({"name": "empty.json", "mimeType": "application/json", "buffer": b""})
    expect(message(page)).to_contain_text("the file is empty", timeout=TIMEOUT)
    saved = {
        "name": "lc.json",
        "mimeType": "application/json",
        "buffer": json.dumps(model_to_json(parse_model("3:2,2,2"))).encode(),
    }
    chooser.set_input_files(saved)
    expect(page.locator(".effdim-notation textarea")).to_have_value("3:2,2,2", timeout=TIMEOUT)
    apply_notation(page, FIG2)
    expect(stat(page, "ds")).to_have_text("41", timeout=TIMEOUT)
    chooser.set_input_files(saved)  # the same file again, after editing
    expect(page.locator(".effdim-notation textarea")).to_have_value("3:2,2,2", timeout=TIMEOUT)


def test_uploads_refused_then_read_categories_in_file_order_reordered_wrapped_and_id_column_left_out(
    page: Page, app_url, shots
):
    """One page, one file after another on the Data tab: a refused file leaves no "Upload complete", and the
    model and its selected node as they were; the next has its categories along their scale, and a column's
    states can be reordered; a long value list wraps in the columns table; a Latin-1 file with semicolons is read,
    its identifier column left out."""
    open_app(page, app_url)
    click_node(page, FIG2, "H3")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: H3")
    data_tab(page)
    upload(page, "ragged.csv", b"A,B,C\n1,2,3\n1,2\n")
    expect(page.get_by_text("line 3 has 2 fields")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text("Upload complete")).to_have_count(0, timeout=TIMEOUT)
    page.screenshot(path=str(shots / "07-bad-file.png"))
    model_tab(page)
    expect(page.locator(".effdim-notation textarea")).to_have_value(FIG2)
    expect(stat(page, "ds")).to_have_text("41")
    expect(page.locator(".effdim-sel")).to_contain_text("Selected: H3")
    data_tab(page)
    # the fresh drop zone takes the next file; categories along their scale, numbered ones by number
    upload(page, "ok.csv", b"freq,rating\nsometimes,10 Not at all\nnever,2 Very well\noften,1 Extremely well\n")
    expect(page.get_by_text("Loaded upload 'ok.csv'")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text("never, sometimes, often")).to_be_visible()
    expect(page.get_by_text("1 Extremely well, 2 Very well, 10 Not at all")).to_be_visible()
    page.screenshot(path=str(shots / "12-upload-after-refusal.png"))

    page.locator(".effdim-order-column select").select_option("freq")
    page.locator(".effdim-order-states select").select_option("often")
    page.get_by_role("button", name="▲ Earlier").click()
    expect(page.get_by_text("never, often, sometimes", exact=True)).to_be_visible(timeout=TIMEOUT)  # columns table
    expect(page.get_by_text("Column 'freq': states in the order never, often, sometimes.")).to_be_visible()
    page.get_by_role("button", name="▼ Later").click()
    page.get_by_role("button", name="▼ Later").click()  # past the end: stays last
    expect(page.get_by_text("never, sometimes, often", exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".effdim-order-states select option")).to_have_text(["never", "sometimes", "often"])
    page.screenshot(path=str(shots / "12b-reorder-states.png"))

    labels = [
        "1 Extremely well",
        "2 Very well",
        "3 Moderately well",
        "4 Not very well",
        "5 Not at all well",
        "6 Refused to answer",
    ]
    rows = "".join(f"{label},{region}\n" for label in labels for region in ("north", "south"))
    upload(page, "long.csv", ("satisfaction,region\n" + rows).encode())
    values = page.locator(".tabulator-cell").filter(has_text="6 Refused to answer")
    expect(values).to_be_visible(timeout=TIMEOUT)
    shown, room = values.evaluate("(cell) => [cell.scrollWidth, cell.clientWidth]")
    assert shown <= room + 1, f"the value list is cut off: {shown} px in a {room} px cell"

    rows = ["id;Fréquence;Qualité"] + [
        f"{i};{'jamais' if i % 3 else 'souvent'};{'élevée' if i % 2 else 'basse'}" for i in range(1, 61)
    ]
    upload(page, "enquête.csv", "\n".join(rows).encode("latin-1"))
    for said in ("Left out 'id' (a value per row: an identifier", "semicolons", "Latin-1"):
        expect(message(page)).to_contain_text(said, timeout=TIMEOUT)
    expect(page.get_by_text("jamais, souvent")).to_be_visible()
    picker = page.locator(".effdim-columns-used")
    expect(picker).to_contain_text("Fréquence")
    picker.locator(".choices__inner").click()  # an identifier cannot be a variable: left out while reading
    expect(page.get_by_role("option", name="id")).to_have_count(0)
    page.screenshot(path=str(shots / "13-csv-id-column.png"))


@pytest.mark.parametrize("form, width", [("inline", 900), ("served", 1024)])
def test_nothing_cut_off_in_a_notebook_cell_or_at_1024_px(page: Page, app_url, inline_url, shots, form, width):
    page.set_viewport_size({"width": width, "height": 768})
    open_app(page, inline_url if form == "inline" else app_url)
    edges = cut_off(page)
    assert edges["scroll"] <= width and edges["card"] <= width, edges
    page.screenshot(path=str(shots / f"14-{form}-{width}.png"), full_page=True)


IRREGULAR = "H1:3(H2:9(O1:2,O2:2),O3:2,H3:4(H4:2(O4:2,O5:2,O6:2)))"  # H2 irregular


def test_first_screen_says_what_the_numbers_are_irregular_totals_show_both_and_projector_cuts_nothing(
    page: Page, app_url, shots
):
    """The first screen's sentence; an irregular model's totals, its regular equivalent's and as drawn; the
    projector switched on with it cuts nothing, scales every text and puts the regularization log beside the
    tree at 1366 px (tests/ui/test_classroom.py: under it where the window is narrower)."""
    open_app(page, app_url)
    expect(page.locator(".effdim-lead")).to_contain_text("ds counts a model's free parameters")
    apply_notation(page, IRREGULAR)
    expect(stat(page, "ds")).to_have_text("31", timeout=TIMEOUT)  # the regular equivalent's
    expect(stat(page, "drawn-ds")).to_have_text("as drawn: 66")
    expect(page.get_by_text("ds · regular equivalent")).to_be_visible()
    page.screenshot(path=str(shots / "15-irregular-totals.png"))

    expect(page.locator(".effdim-steps .tabulator-row")).to_have_count(3, timeout=TIMEOUT)
    legend = float(css(page, ".effdim-legend", "fontSize")[0].rstrip("px"))
    summary = float(css(page, "p", "fontSize", ".alert")[0].rstrip("px"))
    page.get_by_role("button", name="Projector: off").click()
    expect(page.get_by_role("button", name="Projector: on ✓")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1000)  # the tables' new layout
    steps = page.locator(".effdim-steps")
    steps.scroll_into_view_if_needed()
    cut = cut_off(page)["cells"]
    assert cut == [], f"cut to '…': {cut}"
    log = steps.bounding_box()
    rows = page.locator(".effdim-steps .tabulator-row")
    last = rows.last.bounding_box()
    assert last["y"] + last["height"] <= log["y"] + log["height"] + 1, "the log's last row is cut"
    assert float(css(page, ".effdim-legend", "fontSize")[0].rstrip("px")) >= 1.4 * legend
    assert float(css(page, "p", "fontSize", ".alert")[0].rstrip("px")) >= 1.4 * summary
    tree = page.locator(".bk-Canvas").first.bounding_box()
    # in the column right of the tree (under the regularity explanation, however tall that grows), not under it
    assert log["x"] >= tree["x"] + tree["width"] - 5, (tree, log)


def test_shared_link_opens_its_model_and_tab_and_follows_edits(page: Page, app_url):
    page.goto(app_url + "?model=3:2,2,2&tab=0")
    expect(stat(page, "ds")).to_have_text("11", timeout=TIMEOUT)
    apply_notation(page, "2:3,3")
    expect(stat(page, "ds")).to_have_text("9", timeout=TIMEOUT)
    page.wait_for_function(
        "() => decodeURIComponent(location.search).includes('model=2:3,3')", timeout=TIMEOUT, polling=POLL
    )
    page.goto(page.url)  # the link as copied from the address bar
    expect(stat(page, "ds")).to_have_text("9", timeout=TIMEOUT)


def test_a_link_to_the_default_model_says_nothing_and_a_typo_stays_in_the_notation_box(page: Page, app_url):
    page.goto(app_url + "?model=5(3(2,2),2,3(2,2))&tab=0")
    expect(stat(page, "ds")).to_have_text("41", timeout=TIMEOUT)
    page.wait_for_timeout(500)  # the message pane is filled by then if it ever is
    expect(page.get_by_text("nothing changed")).to_have_count(0)
    typo = "5(3(2,2),2,3(2,2)"
    page.goto(app_url + "?model=" + quote(typo) + "&tab=0")
    expect(message(page)).to_contain_text("Model from the link refused", timeout=TIMEOUT)
    expect(page.locator(".effdim-notation textarea")).to_have_value(typo)


def test_preset_menu_names_a_custom_model_and_toggles_and_disabled_cancel_are_plain(page: Page, app_url):
    open_app(page, app_url)
    menu = page.locator(".effdim-preset select")
    expect(menu).to_have_value("Figure 2: HLC model 5,3,3:2,2,2,2,2")
    apply_notation(page, "H1:3(O1:2,O2:2,H2:2(O3:2,O4:2,O5:2))")
    expect(menu).to_have_value("Custom model (not a preset)", timeout=TIMEOUT)
    expect(page.get_by_role("button", name="Load preset")).to_be_disabled()
    apply_notation(page, "3:2,2,2,2")
    expect(menu).to_have_value("Figure 1: LC model 3:2,2,2,2", timeout=TIMEOUT)

    # the chosen side of a two-choice toggle: filled and bold; the other white
    chosen = css(page, ".bk-btn.bk-active", "backgroundColor", ".effdim-tree-mode")
    other = css(page, ".bk-btn:not(.bk-active)", "backgroundColor", ".effdim-tree-mode")
    assert chosen and other and chosen[0] != other[0] and other[0] == "rgb(255, 255, 255)"
    assert css(page, ".bk-btn.bk-active", "fontWeight", ".effdim-tree-mode") == ["700"]

    data_tab(page)
    cancel = page.get_by_role("button", name="■ Cancel").first
    expect(cancel).to_be_disabled(timeout=TIMEOUT)
    assert css(page, ".bk-btn", "cursor", ".effdim-scores-cancel") == ["not-allowed"]
    assert float(css(page, ".bk-btn", "opacity", ".effdim-scores-cancel")[0]) <= 0.5
