"""The file dropper's painter (``effdim_app/quiet_filepond.js``): FilePond redrawn rarely while the page is not in
use, and, while it is, STEPS times a frame on a clock STEPS times as fast: FilePond sends a file it has added only
once its animations rest, 1.2 s later at one redraw a frame (docs/dashboard.md, "An upload's first second").

Read on the worker's swept page (``stouffer_toby_swept``, tests/ui/conftest.py), on the Data tab with its drop zone
shown; the test only adds a writer of its own to the painter and takes it out again."""

import pytest
from playwright.sync_api import Page

pytestmark = pytest.mark.browser

#: The painter's calls of a writer of the test's own: how many in one second without input, then, after a pointer
#: move, how many in half a second and how fast the clock they were given ran against the page's.
PAINTER_PACE = """async () => {
  const painter = window.__framePainter;
  const calls = [];
  const probe = (clock) => calls.push([performance.now(), clock]);
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  painter.writers.push(probe);
  try {
    await sleep(2300);  // no input for 2 s: quiet
    calls.length = 0;
    await sleep(1000);
    const quiet = calls.length;
    calls.length = 0;
    document.dispatchEvent(new Event("pointermove"));  // in use
    await sleep(500);
    const [first, last] = [calls[0], calls[calls.length - 1]];
    return {quiet, inUse: calls.length, pace: calls.length > 1 ? (last[1] - first[1]) / (last[0] - first[0]) : 0};
  } finally {
    painter.writers.splice(painter.writers.indexOf(probe), 1);
  }
}"""


def test_filepond_is_redrawn_rarely_when_quiet_and_on_a_fast_clock_while_in_use(stouffer_toby_swept: Page):
    seen = stouffer_toby_swept.evaluate(PAINTER_PACE)
    assert seen["quiet"] <= 6, seen  # 4 times a second, not on each of 60 frames
    assert seen["inUse"] >= 8, seen  # one frame's redraws at least
    assert seen["pace"] >= 6, seen  # STEPS (8) times the page's clock; 1 without the fast clock
