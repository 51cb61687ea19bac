"""What the dashboard's views share: HTML, alert and heading builders, typed empty frames, number formats.

Nothing here knows a tab; each tab's module (:mod:`.sidebar`,
:mod:`.model_tab`, :mod:`.data_tab`) builds its panels from these.
"""

from __future__ import annotations

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

from ..style import ALERT_CSS, HTML_CSS

__all__ = ["BIG", "compact", "typed", "html", "alert", "heading", "JobLine"]

BIG = 10_000_000
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def compact(value: int) -> str:
    """A number short enough for a stat box: 12,345 or 3.92·10¹⁰ (exact value in the tooltip)."""
    if abs(value) < BIG:
        return str(value)
    mantissa, exponent = f"{value:.3e}".split("e")
    return f"{float(mantissa):.3g}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def typed(**columns: str) -> pd.DataFrame:
    """An empty frame with typed columns: Tabulator picks its formatters from the first dtypes."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})


def html(obj="", **params) -> pn.pane.HTML:
    """An HTML pane that knows the dashboard's classes."""
    params.setdefault("stylesheets", [HTML_CSS])
    return pn.pane.HTML(obj, **params)


def alert(obj: param.Parameterized) -> pn.pane.Alert:
    """An alert showing ``obj.message`` in the colour of ``obj.message_kind``; hidden when empty."""
    pane = pn.pane.Alert(obj.message, alert_type=obj.message_kind, visible=bool(obj.message),
                         sizing_mode="stretch_width", margin=(5, 5), stylesheets=[ALERT_CSS])

    def update(*_):
        pane.param.update(object=obj.message, alert_type=obj.message_kind, visible=bool(obj.message))

    obj.param.watch(update, ["message", "message_kind"])
    return pane


class JobLine(Viewer):
    """The job in ``state.<name>`` while it waits or runs: what it does, progress, a Cancel button."""

    def __init__(self, state: param.Parameterized, name: str, **params):
        super().__init__(**params)
        self.state, self.attr = state, name
        self.text = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-job", f"effdim-{name}"])
        self.bar = pn.indicators.Progress(value=-1, max=100, active=True, width=120, height=14, margin=(6, 5))
        self.cancel = pn.widgets.Button(label="■ Cancel", color="danger", width=90, margin=(0, 5),
                                        css_classes=["effdim-job-cancel", f"effdim-{name}-cancel"])
        self.cancel.on_click(lambda _: self._job() and self._job().cancel())
        self.row = pn.Row(self.bar, self.text, self.cancel, sizing_mode="stretch_width", margin=0, visible=False)
        self._watcher = None
        state.param.watch(self._job_changed, [name])
        self._job_changed()

    def _job(self):
        return getattr(self.state, self.attr)

    def _job_changed(self, *_) -> None:
        if self._watcher is not None:
            self._watcher[0].param.unwatch(self._watcher[1])
            self._watcher = None
        job = self._job()
        if job is not None:
            self._watcher = (job, job.param.watch(self._show, ["state", "done", "total", "position", "seconds"]))
        self._show()

    def _show(self, *_) -> None:
        job = self._job()
        if job is None or job.finished:
            self.row.visible = False
            return
        self.text.object = f"<small>{job.describe()}</small>"
        self.bar.param.update(value=int(100 * job.progress) if job.total else -1, active=job.total == 0)
        self.row.visible = True

    def __panel__(self):
        return self.row


def heading(text: str, help_text: str | None = None) -> pn.viewable.Viewable:
    """A section title, with a hover help icon when ``help_text`` is given."""
    title = html(f"<h3 class='effdim-h'>{text}</h3>", margin=(5, 5, 0, 5))
    if help_text is None:
        return title
    return pn.Row(title, pn.widgets.TooltipIcon(value=help_text, margin=(14, 0, 0, 0)), margin=0)
