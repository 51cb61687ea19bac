"""In front of a class: projector mode, the tree as SVG, the guided demo."""

from __future__ import annotations

import pytest
from pages import DEEP, POLL, TIMEOUT, apply_notation, box, css, cut_off, open_app, stat
from playwright.sync_api import Page, expect

from effdim import parse_model
from effdim_app.presets import IRREGULAR, PRESETS

pytestmark = pytest.mark.browser

# The tree's label glyph as BokehJS has it (the size set from Python in projector mode).
TREE_LABEL_SIZE = """() => {
  const plot = Bokeh.documents.flatMap((d) => [...d.all_models]).find((m) => m.name === "effdim-tree");
  return plot.renderers.map((r) => r.glyph).find((g) => g.type === "Text").text_font_size.value;
}"""


def sizes(page: Page) -> tuple[float, float, float]:
    """Font sizes in px: a big number, a dimension-table cell, the hint under the table."""
    number = css(page, "[data-stat=ds]", "fontSize")[0]
    cell = css(page, ".tabulator-cell", "fontSize", within=".effdim-dims")[0]
    hint = css(page, "small", "fontSize", within=".effdim-row-hint")[0]
    return float(number[:-2]), float(cell[:-2]), float(hint[:-2])


def settled(page: Page, read):
    """``read(page)`` once the layout has settled (two reads 300 ms apart agree)."""
    last = read(page)
    for _ in range(20):
        page.wait_for_timeout(300)
        now = read(page)
        if now == last:
            break
        last = now
    return last


def below_lead(page: Page, selector: str) -> float:
    """How far below the first sentence ``selector`` starts (the page may scroll to a focused box), once the
    layout has settled."""
    return settled(page, lambda page: box(page, selector)["y"] - box(page, ".effdim-lead")["y"])


def test_projector_mode_from_the_link_and_the_toggle(page: Page, app_url, shots):
    open_app(page, app_url + "?projector=1")
    toggle = page.get_by_role("button", name="Projector: on ✓")
    expect(toggle).to_be_visible()
    number, cell, hint = sizes(page)
    assert cell == 21 and number >= 1.5 * 1.65 * 14 - 1 and hint >= 17, (number, cell, hint)
    assert page.evaluate(TREE_LABEL_SIZE) == "16.5pt"
    # the four numbers are above the tree, and both on the first screen at 1366x768
    totals, tree = box(page, ".effdim-totals"), box(page, ".bk-Canvas")
    assert totals["bottom"] <= tree["y"] and tree["bottom"] <= 768, (totals, tree)
    page.screenshot(path=str(shots / "16-projector-1366.png"))
    toggle.click()
    expect(page.get_by_role("button", name="Projector: off")).to_be_visible()
    page.wait_for_function("() => location.search.includes('projector=0')", timeout=TIMEOUT, polling=POLL)
    page.wait_for_function(f"() => ({TREE_LABEL_SIZE})() === '11pt'", timeout=TIMEOUT, polling=POLL)
    number, cell, hint = sizes(page)
    assert cell == 14 and number < 25, (number, cell)


def test_projector_mode_reflows_without_cutting_anything_off(page: Page, app_url, shots):
    """At 1024x768, then at 910x512 (1366x768 at 150 % zoom: zooming in narrows the page as this does)."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_app(page, app_url + f"?projector=1&model={PRESETS[IRREGULAR]}")
    expect(page.locator(".effdim-steps .tabulator-row")).to_have_count(3, timeout=TIMEOUT)
    for width, height in ((1024, 768), (910, 512)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function(  # the page laid out again for the window (fails here if it is not)
            "(w) => document.scrollingElement.scrollWidth <= w", arg=width, timeout=TIMEOUT, polling=POLL
        )
        # then, settled: what is cut off, the tree, the log, the numbers and the table
        edges, tree, log, totals, table = settled(
            page,
            lambda page: (
                cut_off(page),
                *(box(page, s) for s in (".bk-Canvas", ".effdim-steps", ".effdim-totals", ".effdim-dims")),
            ),
        )
        assert edges["scroll"] <= width and edges["card"] <= width and edges["cells"] == [], (width, edges)
        # the numbers above the tree; the regularization log beside the tree when there is room, else
        # under it, before the table
        assert totals["bottom"] <= tree["y"] < tree["bottom"] < log["y"] < table["y"], (width, totals, tree, log)
        page.screenshot(path=str(shots / f"17-projector-{width}.png"))


@pytest.mark.exclusive  # the layout counts as settled when two reads 300 ms apart agree
def test_no_layout_shift_when_a_message_appears(page: Page, app_url):
    page.set_viewport_size({"width": 1024, "height": 768})  # the message's column sets the row's height
    open_app(page, app_url + f"?projector=1&model={PRESETS[IRREGULAR]}")
    expect(page.locator(".effdim-steps .tabulator-row")).to_have_count(3, timeout=TIMEOUT)
    page.get_by_role("button", name="↶ Undo").click()  # back to Figure 2, "Undone." in the message line
    expect(stat(page, "ds")).to_have_text("41", timeout=TIMEOUT)
    before = below_lead(page, ".effdim-dims")
    card = page.locator(".effdim-card-input input")
    card.fill("0")  # refused: a red message appears under the tree
    card.press("Enter")
    expect(page.locator(".effdim-msg-danger").first).to_be_visible(timeout=TIMEOUT)
    assert below_lead(page, ".effdim-dims") == before
    expect(stat(page, "ds")).to_have_text("41")


# [scrollWidth, clientWidth] of the regularization log's rows area: wider content scrolls sideways, hiding
# the end of its last column.
LOG_WIDTHS = f"""() => {{ {DEEP} const log = deep('.effdim-steps')[0];
  const holder = log && log.shadowRoot && log.shadowRoot.querySelector('.tabulator-tableholder');
  return holder ? [holder.scrollWidth, holder.clientWidth] : null; }}"""


def test_tree_as_svg_then_the_guided_demo_then_the_projector_log_at_its_whole_width(
    page: Page, app_url, shots, tmp_path
):
    """On one page: Figure 2's tree downloaded as SVG beside the PNG; the guided demo through the paper's cases with
    the engine's numbers; projector mode switched on after an edit, the regularization log whole at 1366 px, then
    at 1024 px; last, the SVG opened in the browser."""
    import xml.etree.ElementTree as ET

    open_app(page, app_url)
    with page.expect_download() as drawing:
        page.get_by_role("button", name="Download the tree (SVG)").click()
    assert drawing.value.suggested_filename == "effdim-tree.svg"
    svg = ET.parse(drawing.value.path()).getroot()  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    assert svg.tag == f"{ns}svg"
    assert sorted(t.text for t in svg.iter(f"{ns}text")) == [
        "H1 : 5",
        "H2 : 3",
        "H3 : 3",
        "O1 : 2",
        "O2 : 2",
        "O3 : 2",
        "O4 : 2",
        "O5 : 2",
    ]  # Figure 2
    assert len(svg.findall(f"{ns}circle")) == 3 and len(svg.findall(f"{ns}line")) == 7
    saved = tmp_path / "effdim-tree.svg"
    drawing.value.save_as(saved)

    page.get_by_role("button", name="▶ Guided demo").click()
    bar = page.locator(".effdim-demo-text")
    notation = page.locator(".effdim-notation textarea")
    expect(bar).to_contain_text("Step 1 of 3 · Table 1.", timeout=TIMEOUT)
    expect(notation).to_have_value("4:3,3,3")  # the first Table 1 row with de < db
    expect(bar).to_contain_text("de = 25 (probable) is below db = min(ds, dc, dp) = 26")
    expect(stat(page, "de")).to_have_text("25")
    expect(page.get_by_role("button", name="◀ Back")).to_be_disabled()
    page.get_by_role("button", name="Next ▶").click()
    expect(notation).to_have_value("5(3(2,2),2,3(2,2))", timeout=TIMEOUT)
    expect(bar).to_contain_text("ds = 41 parameters but only de = 23 effective ones")
    expect(bar).to_contain_text("lose 12 + 3 + 3 = 18")
    expect(stat(page, "de")).to_have_text("23")
    page.get_by_role("button", name="Next ▶").click()
    expect(notation).to_have_value(str(parse_model(PRESETS[IRREGULAR])), timeout=TIMEOUT)
    expect(bar).to_contain_text("as drawn it has ds = 66")
    expect(bar).to_contain_text("has ds = 31 and de = 20")
    expect(stat(page, "drawn-ds")).to_have_text("as drawn: 66")  # the totals say the same, labelled
    expect(stat(page, "ds")).to_have_text("31")
    expect(page.get_by_role("button", name="Next ▶")).to_be_disabled()
    page.screenshot(path=str(shots / "18-guided-demo.png"))
    page.get_by_role("button", name="◀ Back").click()
    expect(notation).to_have_value("5(3(2,2),2,3(2,2))", timeout=TIMEOUT)
    page.get_by_role("button", name="↶ Undo").click()  # each step was an undoable load
    expect(notation).to_have_value(str(parse_model(PRESETS[IRREGULAR])), timeout=TIMEOUT)
    page.get_by_role("button", name="End demo").click()
    expect(bar).to_be_hidden()

    # projector mode switched on after an edit, at 1366 px, then again at 1024 px
    apply_notation(page, "4(3(2,2,2),3(2,2))")  # irregular: the log's removal step reads "H2 - H1:3 - H3 → H2 - H3"
    expect(page.locator(".effdim-steps .tabulator-row")).to_have_count(2, timeout=TIMEOUT)
    for width in (1366, 1024):
        page.set_viewport_size({"width": width, "height": 768})
        page.get_by_role("button", name="Projector: off").click()
        expect(page.get_by_role("button", name="Projector: on ✓")).to_be_visible(timeout=TIMEOUT)
        page.wait_for_timeout(1000)  # the log's new layout
        content, shown = page.evaluate(LOG_WIDTHS)
        assert content <= shown + 1, f"at {width} px the regularization log is {content} px wide in {shown} px"
        page.get_by_role("button", name="Projector: on ✓").click()
        expect(page.get_by_role("button", name="Projector: off")).to_be_visible(timeout=TIMEOUT)

    # the SVG opens in a browser: it draws as an image of its own size
    page.goto(saved.as_uri())
    size = page.evaluate("() => [document.documentElement.width.baseVal.value, document.documentElement.tagName]")
    assert size == [float(svg.get("width")), "svg"]
