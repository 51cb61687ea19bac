"""The sweep's status and its chart agree: the status says a sweep is done only in frames where its
curves are on screen, and it arrives in one message with them, the table and the buttons
(effdim_app.state.scores, effdim_app.views.data_tab, effdim_app.views.widgets.one_message)."""

import json

import pytest
from pages import CURVE_POINTS, DEEP, TIMEOUT, open_app, sweep_stouffer_toby
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

# Before each frame from now on: count the frames whose status says the sweep is done while the score curves
# are not drawn; stop at the first frame with both.
WATCH = f"""() => {{
  {DEEP}
  const points = {CURVE_POINTS};
  window.__doneWithoutCurves = 0;
  window.__curvesWithDone = 0;
  const tick = () => {{
    const status = deep('.effdim-status').map((e) => (e.shadowRoot || e).textContent).join(' ');
    if (/: done in|Sweep done/.test(status)) {{  // the job's end, or the sweep's results
      const drawn = points();
      if (drawn === 0) window.__doneWithoutCurves += 1;
      else {{ window.__curvesWithDone = drawn; return; }}
    }}
    requestAnimationFrame(tick);
  }};
  requestAnimationFrame(tick);
}}"""


def test_the_status_says_done_only_with_the_curves_on_screen(page: Page, app_url):
    received = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: isinstance(f, str) and received.append(f)))
    open_app(page, app_url)
    page.evaluate(WATCH)
    sweep_stouffer_toby(page, up_to=3)
    page.wait_for_function("() => window.__curvesWithDone > 0", timeout=TIMEOUT)
    assert page.evaluate("() => window.__curvesWithDone") == 3
    assert page.evaluate("() => window.__doneWithoutCurves") == 0, "frames saying 'Sweep done' without the curves"
    # the sweep's end is one message: its status with the data of the curves and the table (new models at a
    # page's first sweep, new data after), and the buttons
    (end,) = [json.loads(f) for f in received if "Sweep done" in f]
    attributes = {e.get("attr") for e in end["events"]}
    assert {"disabled", "text"} <= attributes, attributes
    assert {"score", "|H|"} <= map_keys(end), "the curves' or the table's data came in another message"


def map_keys(content) -> set[str]:
    """The keys of every map in a Bokeh message (a data source's columns among them)."""
    if isinstance(content, list):
        return set().union(*map(map_keys, content))
    if not isinstance(content, dict):
        return set()
    keys = (
        {entry[0] for entry in content.get("entries", []) if isinstance(entry[0], str)}
        if content.get("type") == "map"
        else set()
    )
    return keys.union(*map(map_keys, content.values()))
