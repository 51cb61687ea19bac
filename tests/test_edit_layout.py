"""How many whole-page layouts an edit costs the browser (no browser: the document's change events).

In BokehJS each change of a layout property (``visible``, ``css_classes``,
sizes, margins) re-lays out the whole page, one pass per property changed,
even within one message (docs/dashboard.md, "Where the time went").
"""

from __future__ import annotations

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
    with set_curdoc(doc):
        edit()
    return [
        (type(e.model).__name__, e.attr)
        for e in events
        if isinstance(e, ModelChangedEvent) and e.attr in LAYOUT_PROPERTIES
    ]


def test_turning_regular_or_irregular_re_lays_out_nothing():
    pn.extension(*EXTENSIONS)
    doc, app = Document(), create_app()
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        app.template().server_doc(doc)
        app.models.load_notation("9(2,2)")  # the step log is built on the first irregular model
        app.models.load_notation("5(3(2,2),2,3(2,2))")
    to_irregular = _layout_changes(doc, lambda: app.models.load_notation("4(3(2,2,2),3(2,2))"))
    to_regular = _layout_changes(doc, lambda: app.models.load_notation("5(2,3(2,2),2,2)"))
    # the summary's colour and the box holding the step log and the Replace button change inline styles only
    assert to_irregular == [], to_irregular
    assert to_regular == [], to_regular
    between_regular = _layout_changes(doc, lambda: app.models.load_notation("3(3(2,2),3(2,2),3(2,2))"))
    assert between_regular == []
