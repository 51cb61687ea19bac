"""How many whole-page layouts an edit costs the browser (no browser: the document's change events).

In BokehJS each change of a layout property (``visible``, ``css_classes``,
sizes, margins) re-lays out the whole page, one pass per property changed,
even within one message (docs/dashboard.md, "Where the time went").
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import panel as pn
from bokeh.document import Document
from bokeh.document.events import ModelChangedEvent
from panel.io.state import set_curdoc

from effdim_app.dashboard import EXTENSIONS, TEMPLATE_DESIGN, create_app

#: Properties whose change makes BokehJS lay out the page again (LayoutDOMView.connect_signals).
LAYOUT_PROPERTIES = {
    "css_classes",
    "stylesheets",
    "width",
    "height",
    "min_width",
    "min_height",
    "max_width",
    "max_height",
    "margin",
    "width_policy",
    "height_policy",
    "flow_mode",
    "sizing_mode",
    "aspect_ratio",
    "visible",
    "resizable",
}


def _layout_changes(doc: Document, edit) -> list[tuple[str, str]]:
    events = []
    doc.on_change(events.append)
    # under the page's design, as a served session edits (effdim_app/server.py sets it per session); under the
    # default design an update re-sends some panes' stylesheets, once earlier tests have made other pages
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        edit()
    return [
        (type(e.model).__name__, e.attr)
        for e in events
        if isinstance(e, ModelChangedEvent) and e.attr in LAYOUT_PROPERTIES
    ]


def _regular_irregular_changes() -> list[list[tuple[str, str]]]:
    """The layout changes of turning a page's model irregular, regular again, and into another regular model."""
    pn.extension(*EXTENSIONS)
    doc, app = Document(), create_app()
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        app.template().server_doc(doc)
        app.models.load_notation("9(2,2)")  # the step log is built on the first irregular model
        app.models.load_notation("5(3(2,2),2,3(2,2))")
    return [
        _layout_changes(doc, lambda: app.models.load_notation(notation))
        for notation in ["4(3(2,2,2),3(2,2))", "5(2,3(2,2),2,2)", "3(3(2,2),3(2,2),3(2,2))"]
    ]


def test_turning_regular_or_irregular_re_lays_out_nothing():
    # a page of its own process, as a server's first: after other tests have built pages in this process, one
    # HTML pane re-sent its design's stylesheets on the first of these edits (not understood; CONTRIBUTING.md)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        to_irregular, to_regular, between_regular = pool.submit(_regular_irregular_changes).result(timeout=120)
    # the summary's colour and the box holding the step log and the Replace button change inline styles only
    assert to_irregular == [], to_irregular
    assert to_regular == [], to_regular
    assert between_regular == []
