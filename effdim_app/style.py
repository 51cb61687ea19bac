"""Stylesheets. Panel 1.x renders every component in its own shadow DOM, so
each pane that uses these classes gets the sheet through ``stylesheets=``.

Projector mode scales the type with one CSS custom property,
``--effdim-font-scale``, set on the outermost containers (:data:`SCALE_VAR`).
Document CSS does not cross the shadow roots, but custom properties inherit
into them, so every sheet here multiplies its font sizes by
``var(--effdim-font-scale, 1)``. (CSS ``zoom`` was tried first and mis-sized
the Bokeh canvas.)
"""

ACCENT = "#1d4e89"
#: The CSS custom property projector mode sets; 1 (or unset) is the normal size.
SCALE_VAR = "--effdim-font-scale"
#: Type scale of projector mode: the 14 px table cells become 21 px, the 11.7 px hints 17.5 px.
PROJECTOR_SCALE = 1.5

HTML_CSS = """
:host { font-size: calc(1em * var(--effdim-font-scale, 1)); }
.effdim-h { margin: 4px 0 2px 0; font-size: 1.05em; font-weight: 600; color: #1d4e89; }
.effdim-stats { display: flex; gap: 10px; flex-wrap: wrap; margin: 4px 0; }
.effdim-stat { flex: 1 1 110px; min-width: 110px; border: 1px solid #d5dde8; border-radius: 6px;
  padding: 6px 10px; background: #f7f9fc; cursor: help; }
.effdim-stat-label { font-size: 0.82em; color: #4a5a6a; }
.effdim-stat-value { font-size: 1.65em; font-weight: 700; color: #1b2631; text-align: right;
  font-variant-numeric: tabular-nums; }
.effdim-i { display: inline-block; width: 13px; height: 13px; line-height: 13px; border-radius: 50%;
  background: #1d4e89; color: white; font-size: 10px; font-weight: 700; text-align: center;
  font-style: normal; vertical-align: 1px; }
.effdim-nowrap { white-space: nowrap; }
.effdim-badge { display: inline-block; font-size: 0.75em; padding: 1px 7px; border-radius: 9px;
  float: left; margin-top: -1.7em; }
.effdim-lead { margin: 4px 0; color: #1b2631; font-size: calc(1.02em / var(--effdim-font-scale, 1)); }
.effdim-demo-line { margin: 4px 0; color: #1b2631; font-size: 1.05em; }
.effdim-drawn { font-size: 0.85em; color: #8a5200; text-align: right; margin-top: -0.2em; }
.effdim-proven { background: #d8f0dd; color: #1e6b34; }
.effdim-probable { background: #fdebd0; color: #8a5200; }
.effdim-computing { background: #e3ecfa; color: #1d4e89; }
.effdim-not-computed { background: #eeeeee; color: #555555; }
.effdim-corollary { margin: 4px 0; padding: 5px 10px; background: #eef3f9; border-left: 4px solid #1d4e89;
  font-variant-numeric: tabular-nums; }
.effdim-error { color: #a4161a; font-weight: 600; }
.effdim-legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 0.85em;
  color: #333; }
.effdim-legend span { display: inline-flex; align-items: center; gap: 4px; }
.effdim-sel { line-height: 1.45; }
.effdim-timing { color: #667; }
.effdim-status { color: #333; }
.effdim-best-row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 2px 0 6px 0; }
.effdim-best-item { border: 2px solid; border-radius: 12px; padding: 1px 9px; font-variant-numeric: tabular-nums; }
code, .effdim-code { word-break: break-all; }
.effdim-msg { box-sizing: border-box; min-height: calc(2.7em + 12px); line-height: 1.35em; padding: 5px 12px;
  border-radius: 5px; border: 1px solid transparent; white-space: pre-wrap; overflow-wrap: anywhere; }
.effdim-msg:empty { border-color: transparent; background: none; }
.effdim-msg-folds:empty { min-height: 0; padding: 0; border: 0; }
.effdim-msg-info { background: #e7f1fb; border-color: #b6d4f2; color: #0b3d6b; }
.effdim-msg-success { background: #e3f4e7; border-color: #b7e0c1; color: #1e5631; }
.effdim-msg-warning { background: #fff4d6; border-color: #f3d98b; color: #6b4e00; }
.effdim-msg-danger { background: #fbe3e4; border-color: #f1b5b8; color: #7d1419; font-weight: 600; }
"""

#: The Selected-node card: the teacher's controls keep their size in projector mode.
CARD_CSS = """
:host(.effdim-card) { border: 1px solid #d5dde8; border-radius: 6px; background: #fbfcfe; padding: 4px;
  --effdim-font-scale: 1; }
"""

#: The page (light DOM). Below 1100 px the header's title gets smaller, so the title, the Guided demo
#: and Projector buttons fit at 1024 px and at 150 % zoom.
#: Buttons: a disabled one looks unavailable (greyed, no hand pointer), not merely a shade lighter.
BUTTON_CSS = """
.bk-btn:disabled, .bk-btn[disabled] { opacity: 0.4 !important; cursor: not-allowed !important; filter: grayscale(1);
  box-shadow: none; }
"""

#: Two-choice toggles: the chosen side filled and bold, the other white with a thin outline.
TOGGLE_CSS = """
.bk-btn-group .bk-btn { background: white !important; color: #1d4e89 !important; border: 1px solid #9fb3c8;
  font-weight: 400; }
.bk-btn-group .bk-btn.bk-active { background: #1d4e89 !important; color: white !important; border-color: #1d4e89;
  font-weight: 700; box-shadow: inset 0 -3px 0 #0d2d52; }
"""

TEMPLATE_CSS = """
#header .title, .title { font-weight: 600; }
@media (max-width: 1100px) { #header .title { font-size: 20px; } }
"""

ALERT_CSS = """
:host { font-size: calc(1em * var(--effdim-font-scale, 1)); }
:host(.alert) { padding: 4px 12px; border-radius: 5px; }
p { margin: 3px 0; }
ul { margin: 3px 0; padding-left: 20px; }
code { word-break: break-all; white-space: normal; }
"""

#: Tabulator tables (the dimension table, the regularization log): the cells scale, the headers
#: half as much (so a 1024 px screen still holds nine columns) and wrap rather than end in "…".
#: ``:host`` outranks the theme's later ``.tabulator { font-size: 14px }``.
TABLE_CSS = """
:host .tabulator { font-size: calc(14px * var(--effdim-font-scale, 1)); }
:host .tabulator .tabulator-header { font-size: calc(7px + 7px * var(--effdim-font-scale, 1)); }
:host .tabulator .tabulator-header .tabulator-col .tabulator-col-content .tabulator-col-title { white-space: normal; }
"""

#: A table wider than its card scrolls sideways inside it, its right edge faded while more columns lie beyond
#: (a scroll-driven animation: inactive, so no fade, when the table fits; the fade goes at the scroll's end).
#: ``{scroller}`` is the element that scrolls: Tabulator's rows area, or the report table's ``.scroll`` box.
MORE_RIGHT_CSS = """
@keyframes effdim-more-right {
  0%, 96% { -webkit-mask-image: linear-gradient(to right, #000 calc(100% - 56px), transparent);
            mask-image: linear-gradient(to right, #000 calc(100% - 56px), transparent); }
  100% { -webkit-mask-image: none; mask-image: none; }
}
{scroller} { animation: effdim-more-right linear both; animation-timeline: scroll(self inline); }
"""


def more_right_css(scroller: str) -> str:
    """:data:`MORE_RIGHT_CSS` for the element ``scroller`` (a CSS selector inside the component's shadow root)."""
    return MORE_RIGHT_CSS.replace("{scroller}", scroller)
