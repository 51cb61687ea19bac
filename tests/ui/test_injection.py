"""Nothing a user sends runs in a page: every user text shows literally (column names, category labels,
file names, node names and notation echoed in messages, tables, the job line, the columns picker).

A Playwright ``dialog`` handler records any ``alert`` the injected markup would raise; the test fails on the
first one, and checks the text is on screen as typed.
"""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pages import FIG2, TIMEOUT, apply_notation, click_node, data_tab, model_tab, open_app, upload
from playwright.sync_api import Page, expect
from strategies import MARKUP, hostile_text

pytestmark = pytest.mark.browser

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
LABEL = "<img src=y onerror=alert(3)>"
NAME = "<img src=z onerror=alert(4)>.csv"


def hostile_csv(rows: int) -> bytes:
    """A CSV whose header and category labels carry markup: ``rows`` data lines."""
    lines = [f'"{IMG}",{SCRIPT},c'] + [
        f"{LABEL if i % 2 else 'plain'},{'yes' if i % 3 else 'no'},{i % 2}" for i in range(rows)
    ]
    return ("\n".join(lines) + "\n").encode()


def message(page: Page):
    return page.locator(".effdim-message").first


@pytest.fixture
def dialogs(page: Page):
    """Every dialog the page opens (none may)."""
    seen: list[str] = []

    def record(dialog) -> None:
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    return seen


def test_user_text_shows_literally_and_never_runs(page: Page, app_url, dialogs, shots):
    open_app(page, app_url)
    data_tab(page)
    upload(page, NAME, hostile_csv(60))
    expect(message(page)).to_contain_text(f"Loaded upload '{NAME}'", timeout=TIMEOUT)
    picker = page.locator(".effdim-columns-used")
    expect(picker).to_contain_text(IMG, timeout=TIMEOUT)
    expect(picker).to_contain_text(SCRIPT, timeout=TIMEOUT)
    expect(page.locator(".tabulator-cell").filter(has_text=LABEL).first).to_be_visible(timeout=TIMEOUT)
    page.locator(".effdim-order-column select").select_option(IMG)
    expect(page.locator(".effdim-order-states select option")).to_have_text(["plain", LABEL], timeout=TIMEOUT)
    # the edited model's leaves do not match these columns: the refusal names them
    page.locator(".effdim-mapping").get_by_text("Edited model").click()
    expect(page.get_by_text("The model does not match the data")).to_be_visible(timeout=TIMEOUT)
    page.screenshot(path=str(shots / "40-injection-small.png"))
    time.sleep(0.5)  # an onerror handler runs as soon as the image fails to load
    assert dialogs == [], dialogs

    # over the quick-read size: the file is read by a job whose line names it
    upload(page, "big" + NAME, hostile_csv(12_000))
    expect(message(page)).to_contain_text(f"Loaded upload 'big{NAME}'", timeout=TIMEOUT)
    assert len(hostile_csv(12_000)) > 250_000

    model_tab(page)
    apply_notation(page, f"3:2,{IMG}")
    expect(message(page)).to_contain_text("near '3:2,<img src=x o'", timeout=TIMEOUT)  # the notation echoed
    click_node(page, FIG2, "O3")
    name_box = page.locator(".effdim-name-input input")
    expect(name_box).to_have_value("O3", timeout=TIMEOUT)  # the selection has filled the box: replace, not append
    name_box.fill(IMG)
    page.get_by_role("button", name="Rename").click()
    expect(message(page)).to_contain_text(f"Rename O3 to '{IMG}'", timeout=TIMEOUT)
    time.sleep(0.5)  # an onerror handler runs as soon as the image fails to load
    assert dialogs == [], dialogs


def test_a_link_with_markup_in_its_model_shows_it_literally(page: Page, app_url, dialogs):
    page.goto(f"{app_url}?model={quote(IMG)}")
    expect(message(page)).to_contain_text("near '<img src=x o'", timeout=TIMEOUT)
    time.sleep(0.5)
    assert dialogs == [], dialogs


def _with_markup(pair: tuple[list[str], list[str]]) -> list[str]:
    """Each text with another markup string of strategies.MARKUP put in its middle."""
    markups, texts = pair
    return [t[: len(t) // 2] + m + t[len(t) // 2 :] for m, t in zip(markups, texts)]


@settings(max_examples=1, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
@given(
    texts=st.tuples(st.permutations(MARKUP), st.lists(hostile_text(max_size=12), min_size=5, max_size=5)).map(
        _with_markup
    )
)
def test_hostile_text_from_hypothesis_runs_nothing_in_the_page(page: Page, app_url, dialogs, texts):
    """Five hypothesis-made strings, each carrying markup: the first in a ``?model=`` link, the others
    applied in the notation box; each is refused with a message, and nothing runs (one page load)."""
    page.goto(f"{app_url}?model={quote(texts[0], safe='')}")
    expect(message(page)).to_contain_text("Model from the link refused", timeout=TIMEOUT)
    for i, text in enumerate(texts[1:]):
        apply_notation(page, f"{2 + i % 2}:2,2")  # another model each time: a message of its own
        expect(message(page)).to_have_text("Model from notation.", timeout=TIMEOUT)
        apply_notation(page, text)
        expect(message(page)).to_contain_text("Model from notation refused", timeout=TIMEOUT)
    time.sleep(0.5)  # an onerror handler runs as soon as the image fails to load
    assert dialogs == [], (texts, dialogs)
