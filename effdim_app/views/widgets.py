"""What the dashboard's views share: HTML, alert and heading builders, typed empty frames, number formats.

Nothing here knows a tab; each tab's module (:mod:`.sidebar`,
:mod:`.model_tab`, :mod:`.data_tab`) builds its panels from these.
"""

from __future__ import annotations

import contextlib
import functools
import html as html_text

import pandas as pd
import panel as pn
import param
from bokeh.events import ModelEvent
from panel.viewable import Viewer
from tornado.ioloop import IOLoop

from ..compat import is_notebook_output, one_notebook_message, one_walk_of_models
from ..style import BUTTON_CSS, HTML_CSS

__all__ = [
    "BIG",
    "compact",
    "typed",
    "html",
    "plain",
    "labelled",
    "message",
    "heading",
    "in_one_message",
    "one_message",
    "JobLine",
    "TableOnDemand",
]

BIG = 10_000_000
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def compact(value: int) -> str:
    """A number short enough for a stat box: 12,345 or 3.92·10¹⁰ (exact value in the tooltip)."""
    if abs(value) < BIG:
        return str(value)
    mantissa, exponent = f"{value:.3e}".split("e")
    return f"{float(mantissa):.3g}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"


#: Tabulator options of a table of a few dozen rows at most that an edit refills (the dimension table, the
#: regularization log): every row drawn at once. Tabulator's default virtual rendering adds, per refill, a
#: fill pass and a redraw when its own resize observer sees the row count change the table's height, a large
#: part of the browser's work for a shape-changing Apply (docs/dashboard.md, "A shape-changing Apply in a
#: JupyterLab cell").
SMALL_TABLE = {"renderVertical": "basic"}


def typed(**columns: str) -> pd.DataFrame:
    """An empty frame with typed columns: Tabulator picks its formatters from the first dtypes."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})


def plain(text: object) -> str:
    """``text`` as HTML that shows it literally: the dashboard's one escape of user text.

    Everything a user typed or uploaded (column names, category labels, file
    names, notation, node names) and every message that may quote it goes
    through here where it enters HTML: an HTML or Markdown pane runs the
    markup it is given, ``<script>`` included (docs/robustness.md, "User
    text").
    """
    return html_text.escape(str(text))


def labelled(values) -> dict[str, str]:
    """Options of a choice widget that renders its labels as HTML (``MultiChoice``): escaped label -> value."""
    return {plain(v): v for v in values}


def html(obj="", **params) -> pn.pane.HTML:
    """An HTML pane that knows the dashboard's classes."""
    params.setdefault("stylesheets", [HTML_CSS])
    return pn.pane.HTML(obj, **params)


def message(obj: param.Parameterized, keep_height: bool = True) -> pn.pane.HTML:
    """A line showing ``obj.message`` in the colour of ``obj.message_kind``.

    Plain text, never Markdown: messages quote what the user typed (names
    with underscores, stars, backquotes) and must show it as typed. With
    ``keep_height`` the line keeps its height when empty, so a message
    appearing does not push the rest of the page down (under the tree, where
    the next click lands); without it an empty line takes no room (above the
    score curves, which would otherwise sit under a blank band).
    """
    pane = html(sizing_mode="stretch_width", margin=(2, 5), css_classes=["effdim-message"])
    folds = "" if keep_height else " effdim-msg-folds"

    def update(*_):
        text = plain(obj.message)
        pane.object = f"<div class='effdim-msg effdim-msg-{obj.message_kind}{folds}' role='status'>{text}</div>"

    obj.param.watch(update, ["message", "message_kind"])
    update()
    return pane


class TableOnDemand(Viewer):
    """A table made the first time it has rows to show, hidden while it has none.

    A hidden Tabulator still costs the browser its build when its tab opens,
    and the Data & scores tab's four tables have no rows on a new page
    (docs/dashboard.md, "Opening the Data & scores tab"). ``empty`` is the typed empty frame it starts from
    (:func:`typed`); ``options`` are Tabulator's.
    """

    def __init__(self, empty: pd.DataFrame, **options):
        self._empty = empty
        self._options = options
        self.table: pn.widgets.Tabulator | None = None
        self.box = pn.Column(sizing_mode="stretch_width", margin=0)

    def show(self, rows: pd.DataFrame, **params) -> None:
        """Show ``rows`` (and other Tabulator ``params``, e.g. ``formatters``)."""
        if self.table is None:
            self.table = pn.widgets.Tabulator(self._empty, **self._options)
            self.box.objects = [self.table]
        # shown before its rows arrive: Tabulator draws no rows into a hidden table, and showing it again with
        # the same rows (Undo bringing a sweep back) does not draw them
        self.table.visible = True
        self.table.param.update(value=rows, **params)

    def hide(self) -> None:
        if self.table is not None:
            self.table.visible = False

    def __panel__(self):
        return self.box


class JobLine(Viewer):
    """The job in ``state.<name>`` while it waits or runs: what it does, progress, a Cancel button.

    The line's parts are made when its first job starts: most pages never
    run one, and each part is a model every page open would build and send
    (docs/robustness.md, "Opening a page").
    """

    def __init__(self, state: param.Parameterized, name: str, **params):
        super().__init__(**params)
        self.state, self.attr = state, name
        self.text: pn.pane.HTML | None = None
        self.bar: pn.indicators.Progress | None = None
        self.cancel: pn.widgets.Button | None = None
        self.row = pn.Row(sizing_mode="stretch_width", margin=0, visible=False)
        self._watcher = None
        state.param.watch(self._job_changed, [name])
        self._job_changed()

    def _build(self) -> None:
        name = self.attr
        self.text = html("", sizing_mode="stretch_width", margin=(0, 5), css_classes=["effdim-job", f"effdim-{name}"])
        self.bar = pn.indicators.Progress(value=-1, max=100, active=True, width=120, height=14, margin=(6, 5))
        self.cancel = pn.widgets.Button(
            label="■ Cancel",
            color="danger",
            width=90,
            margin=(0, 5),
            css_classes=["effdim-job-cancel", f"effdim-{name}-cancel"],
            stylesheets=[BUTTON_CSS],
        )
        self.cancel.on_click(in_one_message(lambda _: self._job() and self._job().cancel()))
        self.row.objects = [self.bar, self.text, self.cancel]

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
        with one_message():
            if self.bar is None:
                self._build()
            self.text.object = f"<small>{plain(job.describe())}</small>"
            self.bar.param.update(value=int(100 * job.progress) if job.total else -1, active=job.total == 0)
            self.row.visible = True

    def __panel__(self):
        return self.row


def in_one_message(callback):
    """``callback`` (a widget handler) with every screen change it causes sent to the browser at once.

    Without this each pane's change travels as its own message, and the
    browser lays the page out again after each one; held, the browser gets
    one message per user action (``benchmarks/dashboard/bench_app_update.py
    --browser``; Panel's ``freeze=True`` is slower here).

    In a notebook cell's output Panel (1.9) sends
    each pane's change as its own comm message, and runs a click before the
    property changes that arrived in the same message, so a click right after
    typing would read the previous text. There the handler runs on the
    next turn of the kernel's event loop, once the whole message has been
    applied, with Panel's comm pushes blocked, and its changes then go to
    the browser as one message.
    """

    @functools.wraps(callback)
    def run(*args, **kwargs):
        doc = pn.state.curdoc
        if doc is None and args and isinstance(args[0], ModelEvent):  # a Bokeh figure's own event
            doc = args[0].model.document
        if doc is not None and is_notebook_output(doc):
            IOLoop.current().add_callback(functools.partial(_run_in_notebook, doc, callback, *args, **kwargs))
            return None
        with one_update(doc):
            return callback(*args, **kwargs)

    return run


@contextlib.contextmanager
def one_update(doc):
    """``doc``'s changes made inside reach the browser as one message, after one walk of its models.

    Each change of a layout (a pane shown, a figure replaced, a table's columns) has Bokeh walk every model of
    the document again to find the new ones, several times at the end of a sweep, on the server's event loop.
    Inside the block the walk runs once, if at all, as the block exits, before the message goes out
    (:func:`effdim_app.compat.one_walk_of_models`).
    """
    if doc is None:
        yield
    elif is_notebook_output(doc):
        with one_notebook_message(doc), one_walk_of_models(doc):
            yield
    else:
        with pn.io.hold(doc), one_walk_of_models(doc):
            yield


@contextlib.contextmanager
def one_message():
    """Changes to the current page made inside reach the browser together, as one message, when it exits.

    For what a session's state does on its own, outside a user's action (:func:`in_one_message`): a job that
    ends (a sweep's results, table, curves and status were some thirty messages, each laid out again by the
    browser; ``benchmarks/dashboard/bench_job_messages.py`` counts them). A state holds nothing by itself
    (``effdim_app.state.shared.NOTHING_HELD``); the dashboard gives it this.
    """
    with one_update(pn.state.curdoc):
        yield


def _run_in_notebook(doc, callback, *args, **kwargs) -> None:
    """``callback`` on ``doc``'s notebook output, its changes sent as one message (see :func:`in_one_message`)."""
    with one_update(doc):
        callback(*args, **kwargs)


def heading(text: str, help_text: str | None = None) -> pn.viewable.Viewable:
    """A section title, with a hover help icon when ``help_text`` is given."""
    title = html(f"<h3 class='effdim-h'>{text}</h3>", margin=(5, 5, 0, 5))
    if help_text is None:
        return title
    return pn.Row(title, pn.widgets.TooltipIcon(value=help_text, margin=(14, 0, 0, 0)), margin=0)
