"""The user's edits of the model, mixed into :class:`~effdim_app.state.model.ModelState`: :class:`ModelEdits`.

Every edit goes through an engine method of the immutable
:class:`effdim.HLCModel` and the server's size limits
(:class:`~effdim_app.config.ServerLimits`); an edit the engine refuses leaves
the model as it was and says why (``ModelState.message``). An accepted edit is
pushed on the undo history and shown through ``ModelState._show``, which
derives everything drawn from the new model in one update.
"""

from __future__ import annotations

import json
import math
from typing import Any

from effdim import HLCModel, ModelError, model_from_json, model_to_json, parse_model

from .. import presets

__all__ = ["ModelEdits"]


def _whole_number(value: int | str) -> int:
    """``value`` as an int: an int, or text such as ' 3 ' (ValueError for '2.5', 'abc', '')."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text.lstrip("+-").isdigit():
        raise ValueError(value)
    return int(text)


class ModelEdits:
    """History, selection, edits and loading of :class:`~effdim_app.state.model.ModelState`.

    What it relies on, all provided by ``ModelState``: the parameters ``model``,
    ``selected``, ``regularization``, ``limits`` and ``max_history``, the
    history lists ``_undo`` and ``_redo``, and the methods ``_show`` (make a
    model current), ``_say`` and ``_refuse`` (the message line).
    """

    # ------------------------------------------------------------ history
    def _commit(self, new: HLCModel, what: str, select: str | None = None) -> bool:
        if new == self.model:
            if select is not None:
                self.select(select)
            self._say(f"{what}: nothing changed.", "info")
            return True
        self._undo.append(self.model)
        del self._undo[: -self.max_history]
        self._redo.clear()
        self._show(new, select, message=what + ".", message_kind="success")
        return True

    def _edit(self, what: str, make, select: str | None = None) -> bool:
        try:
            new = make()
            self.limits.check_model(new)
        except (ModelError, ValueError, TypeError) as err:
            return self._refuse(err, what)
        return self._commit(new, what, select)

    def undo(self) -> bool:
        if not self._undo:
            self._say("Nothing to undo.", "info")
            return False
        self._redo.append(self.model)
        self._show(self._undo.pop(), message="Undone.", message_kind="info")
        return True

    def redo(self) -> bool:
        if not self._redo:
            self._say("Nothing to redo.", "info")
            return False
        self._undo.append(self.model)
        self._show(self._redo.pop(), message="Redone.", message_kind="info")
        return True

    # ------------------------------------------------------------ selection
    def select(self, node: str | None) -> None:
        if node is not None and node not in self.model:
            return
        if node != self.selected:
            self.param.update(selected=node, revision=self.revision + 1)

    def select_nearest(
        self, x: float, y: float, positions: dict[str, tuple[float, float]], max_distance: float = 0.45
    ) -> str | None:
        """Select the node of ``positions`` nearest to ``(x, y)`` (layout units).

        Taps farther than ``max_distance`` from every node select nothing new.
        """
        if x is None or y is None or not positions:
            return None
        if any(isinstance(v, float) and math.isnan(v) for v in (x, y)):
            return None
        node, dist = min(((n, math.hypot(px - x, py - y)) for n, (px, py) in positions.items()), key=lambda t: t[1])
        if dist > max_distance:
            return None
        self.select(node)
        return node

    # ------------------------------------------------------------ edits
    def _need_selection(self) -> str | None:
        if self.selected is None or self.selected not in self.model:
            self._say("Select a node first (click it in the tree).", "warning")
            return None
        return self.selected

    def _free_name(self, prefix: str) -> str:
        k = 1
        while f"{prefix}{k}" in self.model:
            k += 1
        return f"{prefix}{k}"

    def set_card(self, card: int | str, node: str | None = None) -> bool:
        """Set the number of states of ``node`` (default: the selected node); ``card`` may be typed text."""
        node = node or self._need_selection()
        if node is None:
            return False
        what = f"Set |{node}| = {str(card).strip()}"
        try:
            number = _whole_number(card)
        except ValueError:
            return self._refuse(
                ValueError(f"the number of states must be a whole number, not {str(card).strip()!r}"), what
            )
        return self._edit(what, lambda: self.model.with_card(node, number))

    def rename(self, new: str, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        new = (new or "").strip()
        return self._edit(f"Rename {node} to {new!r}", lambda: self.model.renamed(node, new), select=new)

    def add_observed_child(self, card: int = 2, name: str | None = None) -> bool:
        node = self._need_selection()
        if node is None:
            return False
        name = name or self._free_name("O")
        return self._edit(
            f"Add observed {name}:{card} under {node}",
            lambda: self.model.with_child(node, name, int(card), hidden=False),
            select=name,
        )

    def add_hidden_child(self, card: int = 2, leaves: int = 2, leaf_card: int = 2, name: str | None = None) -> bool:
        node = self._need_selection()
        if node is None:
            return False
        name = name or self._free_name("H")
        leaf_names: dict[str, int] = {}
        k = 1
        while len(leaf_names) < leaves:
            candidate = f"O{k}"
            if candidate not in self.model and candidate != name:
                leaf_names[candidate] = int(leaf_card)
            k += 1
        return self._edit(
            f"Add hidden {name}:{card} with {leaves} leaves under {node}",
            lambda: self.model.with_hidden_child(node, name, int(card), leaf_names),
            select=name,
        )

    def delete(self, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        parent = self.model.parent(node)
        what = f"Delete {node}" + (" and its subtree" if self.model.is_hidden(node) else "")
        return self._edit(what, lambda: self.model.without(node), select=parent)

    def make_root(self, node: str | None = None) -> bool:
        node = node or self._need_selection()
        if node is None:
            return False
        return self._edit(f"Make {node} the root", lambda: self.model.rerooted(node), select=node)

    def adopt_regular(self) -> bool:
        """Replace the edited model by its regular equivalent (undoable)."""
        if self.regularization is None:
            self._say("The model is regular already.", "info")
            return False
        return self._commit(self.regularization.model, "Replaced by the regular equivalent")

    def set_model(self, model: HLCModel, what: str = "Loaded model") -> bool:
        return self._edit(what, lambda: model, select=model.root)

    # ------------------------------------------------------------ loading
    def _parse(self, text: str) -> HLCModel:
        self.limits.check_text(text, "notation")
        return parse_model(text.strip())

    def load_notation(self, text: str, what: str = "Model from notation") -> bool:
        return self._edit(what, lambda: self._parse(text), select=None) and self._reselect()

    def open_link(self, text: str) -> bool:
        """The model of a shared link (``?model=...``), loaded as typed notation is, but without a word when
        the link names the model already shown (a link to the default model changes nothing to report)."""
        try:
            if self._parse(text) == self.model:
                return True
        except (ModelError, ValueError, TypeError):
            pass  # load_notation refuses it with the reason
        return self.load_notation(text, "Model from the link")

    def load_preset(self, label: str) -> bool:
        if label not in presets.PRESETS:
            self._say(f"No preset named {label!r}.", "danger")
            return False
        return self._edit(f"Preset {label}", lambda: parse_model(presets.PRESETS[label])) and self._reselect()

    def load_json(self, data: str | bytes | dict[str, Any]) -> bool:
        if isinstance(data, (str, bytes)):
            try:
                self.limits.check_text(data, "JSON file")
            except ModelError as err:
                return self._refuse(err, "JSON import")
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                self._say("JSON import refused: the file is not UTF-8 text. The model is unchanged.", "danger")
                return False
        if isinstance(data, str) and not data.strip():
            self._say("JSON import refused: the file is empty. The model is unchanged.", "danger")
            return False
        return self._edit("Model from JSON", lambda: model_from_json(data)) and self._reselect()

    def _reselect(self) -> bool:
        if self.selected not in self.model:
            self.select(self.model.root)
        return True

    def to_json(self) -> str:
        return json.dumps(model_to_json(self.model), indent=2) + "\n"
