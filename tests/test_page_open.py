"""What opening a served page costs the server: Bokeh models made, walks of the document (no browser).

A class opens the page at once, and every page is built on the server's one
event loop, so each model and each walk of the document is paid thirty times
over (docs/robustness.md, "Opening a page").
"""

from __future__ import annotations

from unittest import mock

import panel as pn
from bokeh.document import Document
from bokeh.document.models import DocumentModelManager
from bokeh.models import Axis, Grid, Title
from panel.io.state import set_curdoc

from effdim_app.dashboard import EXTENSIONS, TEMPLATE_DESIGN, create_app

#: Bokeh models of the first screen on Figure 2 (229 before the tree lost figure()'s axes and the hidden
#: step table and demo bar were built on first use).
MODEL_BUDGET = 200


def _page(model=None):
    pn.extension(*EXTENSIONS)
    doc, app = Document(), create_app(model)
    with set_curdoc(doc), pn.config.set(design=TEMPLATE_DESIGN):
        template = app.template()
        walks = mock.patch.object(
            DocumentModelManager, "recompute", autospec=True, side_effect=DocumentModelManager.recompute
        )
        with walks as recompute:
            template.server_doc(doc)
    return app, doc, recompute.call_count


def _classes(doc):
    return {c for m in doc.models for c in (getattr(m, "css_classes", None) or [])}


def test_the_page_is_added_to_its_document_with_one_walk_of_its_models():
    _, doc, walks = _page()
    assert walks == 1
    assert doc.roots and all(m.document is doc for m in doc.models)


def test_the_first_screen_stays_within_its_model_budget():
    _, doc, _ = _page()
    assert len(doc.models) <= MODEL_BUDGET
    assert not [m for m in doc.models if isinstance(m, (Axis, Grid, Title))]  # the tree shows none


def test_the_step_table_and_the_demo_bar_are_built_when_first_shown():
    app, doc, _ = _page()
    assert {"effdim-steps", "effdim-demo"}.isdisjoint(_classes(doc))
    with set_curdoc(doc):
        app.demo.go(0)
        assert app.models.load_notation("9(2,2)")  # irregular: the step log appears
    assert {"effdim-steps", "effdim-demo"} <= _classes(doc)
    assert app.regularity.log_shown and len(app.regularity.steps.value) >= 1 and app.demo.bar.visible


def test_a_page_opened_on_an_irregular_model_shows_its_steps_at_once():
    app, doc, _ = _page("9(2,2)")
    assert "effdim-steps" in _classes(doc) and app.regularity.log_shown
