"""Keyboard shortcuts of the model editor: Ctrl+Z / Ctrl+Y undo and redo, Enter applies the notation.

A :class:`panel.custom.JSComponent` listens to key presses on the whole page
and counts them in parameters the server watches; it draws nothing. Inside a
text field Ctrl+Z keeps undoing the typing (the browser's own undo), and
Shift+Enter still breaks a line in the notation box. The script is part of
the page, so the shortcuts work offline and in a notebook cell.
"""

from __future__ import annotations

import panel as pn
import param
from panel.custom import JSComponent

from ..compat import SERVER_MODELS_KNOWN_JS, TOOLTIPS_IN_VIEWPORT_JS
from ..state import ModelState
from .widgets import in_one_message

__all__ = ["Shortcuts"]


class Shortcuts(JSComponent):
    """Counts of Ctrl+Z (``undo_presses``), Ctrl+Y or Ctrl+Shift+Z (``redo_presses``) and Enter in
    the notation box (``apply_presses``); Cmd works for Ctrl on macOS."""

    undo_presses = param.Integer(default=0)
    redo_presses = param.Integer(default=0)
    apply_presses = param.Integer(default=0)

    # it also keeps the models the server sends known to it and the tooltips inside the window
    # (effdim_app/compat.py): it is on every page
    _esm = (
        SERVER_MODELS_KNOWN_JS
        + TOOLTIPS_IN_VIEWPORT_JS
        + """
    export function render({ model, view }) {
      serverModelsKnown(view)
      tooltipsInViewport()
      const inNotation = (path) => path.some(
        (n) => n.classList && n.classList.contains("effdim-notation"))
      const isText = (n) => n && (n.tagName === "TEXTAREA" ||
        (n.tagName === "INPUT" && !["checkbox", "radio", "button", "file"].includes(n.type)))
      const onKey = (event) => {
        const path = event.composedPath()
        const target = path[0]
        const key = event.key.toLowerCase()
        if (key === "enter" && !event.shiftKey && target.tagName === "TEXTAREA" && inNotation(path)) {
          event.preventDefault()
          model.apply_presses += 1
          return
        }
        if (!(event.ctrlKey || event.metaKey) || event.altKey || isText(target)) {
          return
        }
        if (key === "z" && !event.shiftKey) {
          event.preventDefault()
          model.undo_presses += 1
        } else if (key === "y" || (key === "z" && event.shiftKey)) {
          event.preventDefault()
          model.redo_presses += 1
        }
      }
      window.addEventListener("keydown", onKey, true)
      model.on("remove", () => window.removeEventListener("keydown", onKey, true))
      const el = document.createElement("span")
      el.className = "effdim-shortcuts"
      return el
    }
    """
    )

    @classmethod
    def for_editor(cls, state: ModelState, apply_notation) -> Shortcuts:
        """Shortcuts wired to ``state``'s undo and redo and to ``apply_notation()``."""
        keys = cls(width=0, height=0, margin=0, visible=True, sizing_mode="fixed")
        keys.param.watch(in_one_message(lambda _: state.undo()), "undo_presses")
        keys.param.watch(in_one_message(lambda _: state.redo()), "redo_presses")
        keys.param.watch(in_one_message(lambda _: apply_notation()), "apply_presses")
        return keys


def shortcut_hint() -> pn.pane.HTML:
    """The line that tells users the shortcuts exist."""
    return pn.pane.HTML(
        "<small>Enter applies the notation (Shift+Enter: new line); "
        "Ctrl+Z / Ctrl+Y undo and redo outside text boxes.</small>",
        margin=(0, 5),
    )
