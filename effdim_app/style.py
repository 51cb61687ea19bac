"""Stylesheets. Panel 1.x renders every component in its own shadow DOM, so
each pane that uses these classes gets the sheet through ``stylesheets=``."""

ACCENT = "#1d4e89"

HTML_CSS = """
.effdim-h { margin: 4px 0 2px 0; font-size: 1.05em; font-weight: 600; color: #1d4e89; }
.effdim-stats { display: flex; gap: 10px; flex-wrap: wrap; margin: 4px 0; }
.effdim-stat { flex: 1 1 110px; min-width: 110px; border: 1px solid #d5dde8; border-radius: 6px;
  padding: 6px 10px; background: #f7f9fc; cursor: help; }
.effdim-stat-label { font-size: 0.82em; color: #4a5a6a; white-space: nowrap; }
.effdim-stat-value { font-size: 1.65em; font-weight: 700; color: #1b2631; text-align: right;
  font-variant-numeric: tabular-nums; }
.effdim-i { display: inline-block; width: 13px; height: 13px; line-height: 13px; border-radius: 50%;
  background: #1d4e89; color: white; font-size: 10px; font-weight: 700; text-align: center;
  font-style: normal; vertical-align: 1px; }
.effdim-badge { display: inline-block; font-size: 0.75em; padding: 1px 7px; border-radius: 9px;
  float: left; margin-top: -1.7em; }
.effdim-lead { margin: 4px 0; color: #1b2631; font-size: 1.02em; }
.effdim-drawn { font-size: 0.85em; color: #8a5200; text-align: right; margin-top: -0.2em; }
.effdim-proven { background: #d8f0dd; color: #1e6b34; }
.effdim-probable { background: #fdebd0; color: #8a5200; }
.effdim-computing { background: #e3ecfa; color: #1d4e89; }
.effdim-not-computed { background: #eeeeee; color: #555555; }
.effdim-corollary { margin: 4px 0; padding: 5px 10px; background: #eef3f9; border-left: 4px solid #1d4e89;
  font-variant-numeric: tabular-nums; }
.effdim-error { color: #a4161a; font-weight: 600; }
.effdim-legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 0.85em; color: #333; }
.effdim-legend span { display: inline-flex; align-items: center; gap: 4px; }
.effdim-sel { line-height: 1.45; }
.effdim-timing { color: #667; }
.effdim-status { color: #333; }
.effdim-best-row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 2px 0 6px 0; }
.effdim-best-item { border: 2px solid; border-radius: 12px; padding: 1px 9px; font-variant-numeric: tabular-nums; }
code, .effdim-code { word-break: break-all; }
.effdim-msg { min-height: 1.4em; padding: 5px 12px; border-radius: 5px; border: 1px solid transparent;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.effdim-msg:empty { padding: 0 12px; border-color: transparent; background: none; }
.effdim-msg-info { background: #e7f1fb; border-color: #b6d4f2; color: #0b3d6b; }
.effdim-msg-success { background: #e3f4e7; border-color: #b7e0c1; color: #1e5631; }
.effdim-msg-warning { background: #fff4d6; border-color: #f3d98b; color: #6b4e00; }
.effdim-msg-danger { background: #fbe3e4; border-color: #f1b5b8; color: #7d1419; font-weight: 600; }
"""

CARD_CSS = """
:host(.effdim-card) { border: 1px solid #d5dde8; border-radius: 6px; background: #fbfcfe; padding: 4px; }
"""

TEMPLATE_CSS = """
#header .title, .title { font-weight: 600; }
"""

ALERT_CSS = """
:host(.alert) { padding: 4px 12px; border-radius: 5px; }
p { margin: 3px 0; }
ul { margin: 3px 0; padding-left: 20px; }
code { word-break: break-all; white-space: normal; }
"""
