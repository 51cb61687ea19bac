"""A mark on the page that tells the server when the user first sees its place: what lies below the first
screen is built then, not with the page.

Every page open builds the page's Panel components and Bokeh models on the server, and a class opening the
page at once pays that for every student (docs/robustness.md, "A class arriving together"). A part of a
view that only shows once the user scrolls to it starts as a :class:`FirstSight` mark: a
:class:`panel.custom.JSComponent` one pixel high that watches its place with the browser's
``IntersectionObserver`` and sets :attr:`FirstSight.seen` once that place is first within the window (a
mark in a hidden tab never is). The view then builds the part there (:meth:`FirstSight.then`): on a window
tall enough to show it at first paint, right after the page opens; otherwise when the user scrolls to it,
which a class does at different times. A page request with no browser behind it never builds it.
"""

from __future__ import annotations

from collections.abc import Callable

import param
from panel.custom import JSComponent

from .widgets import in_one_message

__all__ = ["FirstSight"]


class FirstSight(JSComponent):
    """Sets :attr:`seen` once its place on the page is first within the browser's window."""

    seen = param.Boolean(default=False, doc="Whether the mark's place has been within the window.")

    _esm = """
    export function render({ model }) {
      const mark = document.createElement("div")
      mark.style.height = "1px"
      const observer = new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) {
          observer.disconnect()
          model.seen = true
        }
      })
      observer.observe(mark)
      model.on("remove", () => observer.disconnect())
      return mark
    }
    """

    @classmethod
    def then(cls, build: Callable[[], None]) -> FirstSight:
        """A mark that calls ``build()`` once, when first seen (its changes sent to the browser as one message)."""
        mark = cls(height=1, margin=0, sizing_mode="stretch_width", css_classes=["effdim-first-sight"])

        def seen(event) -> None:
            if event.new:
                build()

        mark.param.watch(in_one_message(seen), "seen")
        return mark
