"""Learn structure on a 40-item upload with a server whose time limit is short: the progress bar fills with the
share of the search's time used, the best tree so far is drawn while it runs, and the search ends at its own
time limit (below the server's) with its best tree in the editor, "stopped at the time limit; best tree so far";
a cancelled search keeps its best tree too."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from conftest import served
from pages import DEEP, POLL, TIMEOUT, data_tab, model_tab, open_app, upload
from playwright.sync_api import Page, expect
from test_learn_structure import RECORD_DRAWINGS

from effdim import parse_model
from effdim.distribution import sample
from effdim.experiments.structure import random_latent_tree, separated_parameters
from effdim_app.config import search_seconds

pytestmark = pytest.mark.browser

#: The server's time limit of one computation: the search gets search_seconds(TIME_LIMIT) = 15 s.
TIME_LIMIT = 20
#: A staff survey's 40 items: eight topics of five statements each, answered on a three-point scale.
TOPICS = ("workload", "manager", "pay", "tools", "training", "team", "recognition", "stress")
ANSWERS = ("Agree", "Neutral", "Disagree")
TOPIC_ITEMS = [f"{topic}_{i}" for topic in TOPICS for i in range(1, 6)]


@cache
def instrument_csv() -> bytes:
    """1,000 respondents' answers to 40 items, one row each, drawn from a latent tree over them (8-10 hidden
    nodes, two or three answers per item), as text answers under item names."""
    truth = random_latent_tree(np.random.default_rng(3), (40, 40), (8, 10))
    patterns = sample(separated_parameters(truth), 1000, np.random.default_rng(1)).to_frame(decoded=False)
    rows = patterns.loc[patterns.index.repeat(patterns.pop("count"))].sample(frac=1.0, random_state=0)
    rows = rows[sorted(rows.columns)].map(lambda state: ANSWERS[int(state)])
    rows.columns = TOPIC_ITEMS
    return rows.to_csv(index=False).encode()


# From now on, each value the progress bar of the scores shows (its <progress> element, in Panel's shadow roots),
# with the status line's text then, in window.effdimBar; read every 25 ms.
RECORD_BAR = f"""
(statusLine) => {{
  {DEEP}
  const status = () => (statusLine.shadowRoot ?? statusLine).textContent;
  window.effdimBar = [];
  let last = null;
  setInterval(() => {{
    const bar = deep("progress", ".effdim-scores-progress")[0];
    if (!bar || bar.offsetParent === null) return;
    const value = bar.hasAttribute("value") ? Number(bar.value) : null;
    if (value !== last) {{
      last = value;
      window.effdimBar.push({{ value: value, status: status() }});
    }}
  }}, 25);
}}
"""


def _start(page: Page, url: str):
    open_app(page, url)
    data_tab(page)
    upload(page, "staff-survey-40-items.csv", instrument_csv())
    expect(page.get_by_text("1,000 rows")).to_be_visible(timeout=TIMEOUT)
    status = page.locator(".effdim-status")
    status.evaluate(RECORD_DRAWINGS)
    status.evaluate(RECORD_BAR)
    page.get_by_role("button", name="Learn structure").click()
    return status


def test_a_40_item_search_fills_its_bar_draws_its_best_tree_and_ends_at_its_time_limit_with_it(
    page: Page, tmp_path, shots
):
    config = tmp_path / "limits.toml"
    config.write_text(f"time_limit = {TIME_LIMIT}\n")
    budget = search_seconds(TIME_LIMIT)
    with served(tmp_path / "server.log", "--config", str(config)) as (url, _):
        status = _start(page, url)
        # the bar part full while the search runs, with a tree drawn: the screenshots
        page.wait_for_function(
            "() => window.effdimBar.some((b) => b.value >= 20 && b.status.includes('running'))"
            " && window.effdimDrawings.some((d) => d.status.includes('running'))",
            timeout=TIMEOUT,
            polling=POLL,
        )
        page.mouse.move(0, 0)  # no tooltip of the button over the bar
        for width in (1366, 1024):
            page.set_viewport_size({"width": width, "height": 768})
            status.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"learn-structure-40-items-{width}.png"))
        page.set_viewport_size({"width": 1366, "height": 768})
        expect(status).to_contain_text(
            f"Structure search stopped at the time limit ({budget:.3g} s); best tree so far", timeout=TIMEOUT
        )
        expect(status).to_contain_text("now in the tree editor")
        expect(page.locator(".effdim-learned")).to_contain_text("now in the tree editor")
        page.locator(".effdim-learned").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "learn-structure-40-items-end.png"))
        page.mouse.move(1000, 500)
        page.mouse.wheel(0, 350)  # the whole tree, down to its lowest labels
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "learn-structure-40-items-end-tree.png"))
        bar = [b["value"] for b in page.evaluate("window.effdimBar") if "running" in b["status"]]
        filled = [v for v in bar if v is not None]
        assert filled == sorted(filled) and len(set(filled)) >= 4 and filled[-1] >= 75, bar  # it filled
        drawings = page.evaluate("window.effdimDrawings")
        running = [d["nodes"] for d in drawings if "running" in d["status"]]
        assert running and all(
            sorted(n for n, kind, *_ in nodes if kind == "observed") == sorted(TOPIC_ITEMS) for nodes in running
        )
        assert not page.get_by_text(re.compile("failed|stopped after")).count()
        model_tab(page)
        in_editor = parse_model(page.locator(".effdim-notation textarea").input_value())
        final = drawings[-1]["nodes"]  # the last tree drawn is the tree now in the editor
        assert sorted((n, kind) for n, kind, *_ in final) == sorted(
            (n, "hidden" if in_editor.is_hidden(n) else "observed") for n in in_editor.nodes
        )


def test_a_cancelled_40_item_search_keeps_its_best_tree(page: Page, app_url):
    status = _start(page, app_url)
    page.wait_for_function(
        "() => window.effdimDrawings.some((d) => d.status.includes('running'))", timeout=TIMEOUT, polling=POLL
    )
    page.get_by_role("button", name="■ Cancel").click()
    expect(status).to_contain_text("Structure search cancelled after", timeout=TIMEOUT)
    expect(status).to_contain_text("best tree so far")
    expect(page.locator(".effdim-learned")).to_contain_text("now in the tree editor")
    kept = page.evaluate("window.effdimDrawings.at(-1).nodes")
    assert sorted(n for n, kind, *_ in kept if kind == "observed") == sorted(TOPIC_ITEMS)
    model_tab(page)
    in_editor = parse_model(page.locator(".effdim-notation textarea").input_value())
    assert sorted(in_editor.observed) == sorted(TOPIC_ITEMS) and len(in_editor.hidden) > 1
