"""Example models from Kocka & Zhang (2002) for the dashboard's preset menu.

Each preset is model notation (parsed by :func:`effdim.parse_model`); nothing
here computes a dimension: the dashboard asks the engine.
"""

from __future__ import annotations

import functools

from effdim import HLCModel, parse_model
from effdim.paper import FIGURE2 as PAPER_FIGURE2
from effdim.paper import TABLE1

__all__ = ["PRESETS", "PRESET_GROUPS", "TABLE1_LC", "DEFAULT_PRESET", "CUSTOM", "menu_entry"]

#: The LC models of the paper's Table 1, in the table's order.
TABLE1_LC: tuple[str, ...] = tuple(row.model for row in TABLE1)

FIGURE1 = "Figure 1: LC model 3:2,2,2,2"
FIGURE2 = "Figure 2: HLC model 5,3,3:2,2,2,2,2"
IRREGULAR = "Irregular HLC model (both rules of Lemma 4.1)"
IRREGULAR_LC = "Irregular LC model 9:2,2,2,2 (Lemma 3.2)"

#: Grouped for the preset menu: {group: {label: notation}}.
PRESET_GROUPS: dict[str, dict[str, str]] = {
    "Paper figures": {
        FIGURE1: "3:2,2,2,2",
        FIGURE2: PAPER_FIGURE2.model,
    },
    "Irregular examples": {
        # H2 has 9 > (2*2*3)/3 = 4 states (shrink, Lemma 4.1); H3 has exactly
        # two neighbours, one hidden, and |H3| = 4 >= min(4, 2): it is removed.
        IRREGULAR: "H1:3(H2:9(O1:2,O2:2),O3:2,H3:4(H4:2(O4:2,O5:2,O6:2)))",
        IRREGULAR_LC: "9:2,2,2,2",
    },
    "Table 1 LC models": {f"Table 1: LC {lc}": lc for lc in TABLE1_LC},
}

#: Flat {label: notation}.
PRESETS: dict[str, str] = {label: text for group in PRESET_GROUPS.values() for label, text in group.items()}

DEFAULT_PRESET = FIGURE2

#: The menu's entry while the model on screen is none of the presets (typed, learned, loaded by the demo).
CUSTOM = "Custom model (not a preset)"


@functools.cache
def _models() -> dict[str, HLCModel]:
    return {label: parse_model(text) for label, text in PRESETS.items()}


def menu_entry(model: HLCModel, shown: str | None = None) -> str:
    """The preset menu's entry for ``model``: ``shown`` if that preset is this model, else the first preset
    that is, else :data:`CUSTOM`."""
    models = _models()
    if shown in models and models[shown] == model:
        return shown
    return next((label for label, preset in models.items() if preset == model), CUSTOM)
