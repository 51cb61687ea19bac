"""The Panel and Bokeh internals of ``effdim_app/compat.py`` still exist with the shape the dashboard relies on.

Each test names the installed Panel and Bokeh versions and what changed, so
that an upgrade that breaks one says where (``effdim_app/compat.py``) and
what to look for, instead of a blank notebook output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from weakref import WeakKeyDictionary

import bokeh
import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from panel.io.state import state

from effdim_app import compat


def broken(what: str) -> str:
    """The failure message: the versions installed, what changed, where the dashboard relies on it."""
    return (
        f"Panel {pn.__version__} / Bokeh {bokeh.__version__}: {what}. effdim_app/compat.py relies on it; "
        "adapt it there (and the Panel/Bokeh bounds in pyproject.toml)"
    )


@pytest.fixture(scope="module")
def notebook_output():
    """A pane displayed as a notebook displays it (its mimebundle), with a comm that records what is sent."""
    pn.extension()
    pane = pn.pane.Str("first")
    pane._repr_mimebundle_()
    ref = next((ref for ref, view in state._views.items() if view[0] is pane), None)
    assert ref is not None, broken("a displayed pane is no longer registered in state._views")
    _, root, doc, comm = state._views[ref]
    sent: list = []
    comm._comm = True  # open, as once the browser has connected
    comm.send = lambda data=None, buffers=None, **_: sent.append(data)
    return pane, root, doc, sent


def messages(sent: list) -> int:
    """Bokeh messages among what a comm sent: each starts with its header."""
    return sum(isinstance(part, str) and "msgtype" in json.loads(part) for part in sent)


def test_panel_keeps_one_stylesheet_per_url_and_document():
    assert isinstance(state._stylesheets, WeakKeyDictionary), broken(
        "panel.io.state.state._stylesheets is no longer a WeakKeyDictionary document -> {url: sheet}"
    )
    doc = Document()
    url = "https://example.org/effdim-compat.css"
    pn.pane.HTML("x", stylesheets=[url]).get_root(doc)
    sheets = [sheet for sheet in compat.document_stylesheets(doc) if getattr(sheet, "url", None) == url]
    assert len(sheets) == 1 and isinstance(sheets[0], ImportedStyleSheet), broken(
        "a pane's stylesheet URL no longer becomes one ImportedStyleSheet kept in state._stylesheets[doc]"
    )
    assert list(compat.document_stylesheets(None)) == []


def test_a_viewable_keeps_its_model_per_root():
    column = pn.Column(pn.pane.Str("a"))
    root = column.get_root(Document())
    assert compat.model_of(column, root) is root, broken("Viewable._models[root id] is no longer (model, parent)")
    assert compat.model_of(column[0], root) is root.children[0], broken(
        "a child's Viewable._models no longer holds the model rendered under the root"
    )
    assert compat.model_of(pn.pane.Str("never shown"), root) is None


def test_panel_dist_urls_point_at_files_of_the_installed_package():
    assert isinstance(compat.CDN_DIST, str) and compat.CDN_DIST.endswith(f"/{pn.__version__}/dist/"), broken(
        f"panel.io.resources.CDN_DIST is {compat.CDN_DIST!r}, no longer the versioned dist URL"
    )
    assert (Path(compat.DIST_DIR) / "css" / "loading.css").is_file(), broken(
        f"panel.io.resources.DIST_DIR ({compat.DIST_DIR}) no longer holds Panel's css/"
    )


def test_a_notebook_output_is_told_from_a_served_document(notebook_output):
    _, _, doc, _ = notebook_output
    assert compat.is_notebook_output(doc), broken(
        "a notebook output's document no longer has panel.models.comm_manager.CommManager among its roots"
    )
    assert not compat.is_notebook_output(Document())


def test_changes_in_one_notebook_message_go_together(notebook_output):
    pane, _, doc, sent = notebook_output
    sent.clear()
    pane.object = "second"
    pane.object = "third"
    assert messages(sent) == 2, broken(f"two changes of a notebook output sent {messages(sent)} messages, not 2")
    sent.clear()
    with compat.one_notebook_message(doc):
        pane.object = "fourth"
        pane.object = "fifth"
        assert messages(sent) == 0, broken("panel.io.notebook.block_comm no longer holds the comm's pushes")
    assert messages(sent) == 1, broken(
        f"panel.io.notebook.push_on_root sent {messages(sent)} messages for the held changes, not 1"
    )


def test_the_browser_comm_can_be_made_direct():
    """The JS of ``DIRECT_COMM_JS`` replaces an instance method that Panel's CommManager calls through ``this``."""
    from panel.models.comm_manager import CommManager

    assert CommManager.__qualified_model__ == "panel.models.comm_manager.CommManager", broken(
        f"the comm's model type is now {CommManager.__qualified_model__!r}"
    )
    assert "debounce" in CommManager.properties(), broken("CommManager has no debounce property")
    bundle = (Path(pn.__file__).parent / "dist" / "panel.min.js").read_text(encoding="utf-8")
    assert re.search(r"_document_listener=(\w+)=>this\._document_changed\(\1\)", bundle), broken(
        "panel.min.js's CommManager no longer sends the document's changes through this._document_changed"
    )
    assert "panel.models.comm_manager.CommManager" in compat.DIRECT_COMM_JS


def test_bokehjs_counts_models_from_the_server_as_new_until_the_browser_sends_a_patch():
    """What ``SERVER_MODELS_KNOWN_JS`` corrects: the decoded models go into ``_new_models``, which a patch
    from the browser sends in full; ``apply_json_patch`` is the document's entry point for a server patch."""
    bundle = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.min.js").read_text(encoding="utf-8")
    assert re.search(r"apply_json_patch\(\w+,\w+=new Map\)\{", bundle), broken(
        "BokehJS's Document.apply_json_patch(patch, buffers) is gone"
    )
    assert re.search(
        r"new \w+\.Deserializer\(this\.resolver,this\._all_models,\(\w+=>\{\w+\.attach_document\(this\),"
        r"this\._new_models\.add\(\w+\)",
        bundle,
    ), broken(
        "BokehJS no longer adds the models of a server patch to Document._new_models: drop "
        "SERVER_MODELS_KNOWN_JS if they are now known"
    )
    assert re.search(r"for\(const \w+ of this\._all_models\.values\(\)\)this\._new_models\.has\(\w+\)\|\|", bundle), (
        broken("BokehJS's create_json_patch no longer sends the models of Document._new_models in full")
    )


def test_a_bokeh_class_s_overridden_defaults_merge_along_its_mro_and_can_be_kept():
    from bokeh.core.has_props import HasProps
    from bokeh.model import Model

    def merged(cls):
        defaults = {}
        for c in reversed(cls.__mro__):
            defaults.update(getattr(c, "__overridden_defaults__", {}))
        return defaults

    classes = [cls for cls in Model.model_class_reverse_map.values() if issubclass(cls, HasProps)]
    assert classes, broken("Model.model_class_reverse_map lists no model classes")
    assert isinstance(HasProps.__dict__["_overridden_defaults"], classmethod), broken(
        "HasProps._overridden_defaults is no longer a classmethod"
    )
    compat.cache_class_defaults()
    for cls in classes:
        assert dict(cls._overridden_defaults()) == merged(cls), broken(f"{cls.__name__}'s overridden defaults differ")


def test_the_served_pages_design_and_page_freeze_still_find_their_internals():
    """The Fast theme's ``_resources`` (:class:`effdim_app.compat.Fast`: its files, the font left out for
    an offline classroom) and a template's ``_init_doc`` (:func:`effdim_app.compat.add_page_at_once`:
    wrapped so that the page is added to its document under one freeze)."""
    from panel.template import FastListTemplate

    resources = getattr(pn.theme.Fast, "_resources", None)
    assert isinstance(resources, dict) and "font" in resources, broken(
        "panel.theme.Fast._resources is no longer a dict of resource kinds holding 'font'"
    )
    assert callable(getattr(FastListTemplate, "_init_doc", None)), broken(
        "a Panel template no longer has the _init_doc(doc) method its server_doc calls"
    )


def test_a_validate_block_turns_bokehs_checks_off_in_its_own_thread_only():
    """Two threads' ``validate(False)`` blocks overlap, as a page build and the Experiments tab's figures drawn
    in a thread do (:func:`effdim_app.compat.validation_per_thread`): meanwhile a third thread's plot still gets
    its text title made a ``Title`` (Bokeh skips that conversion with its checks off), and after both blocks the
    checks are on (Bokeh's own switch stayed off: each block restored what it found when it opened)."""
    import threading

    from bokeh.core.properties import validate
    from bokeh.core.property import bases
    from bokeh.models import Plot, Title

    assert callable(getattr(bases, "validation_on", None)) and isinstance(bases.Property._should_validate, bool), (
        broken("bokeh.core.property.bases no longer has validation_on() reading Property._should_validate")
    )
    compat.validation_per_thread()
    a_in, b_in, a_out, both_in = (threading.Event() for _ in range(4))
    inside = []

    def first():
        with validate(False):
            inside.append(bases.validation_on())
            a_in.set()
            b_in.wait(30)
            both_in.wait(30)
        a_out.set()

    def second():
        a_in.wait(30)
        with validate(False):
            b_in.set()
            a_out.wait(30)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    b_in.wait(30)
    plot = Plot(title="drawn meanwhile")  # this thread, while both blocks are open
    both_in.set()
    for thread in threads:
        thread.join(30)
    assert inside == [False], "the block's own thread checks nothing"
    assert isinstance(plot.title, Title) and plot.title.text == "drawn meanwhile"
    later = threading.Thread(target=lambda: inside.append(bases.validation_on()))
    later.start()
    later.join(30)
    assert inside[-1] and bases.validation_on() and bases.Property._should_validate, "the checks are on again"


def test_the_file_droppers_scripts_are_its_models_javascript_list_with_filepond_last():
    """``quiet_filepond`` puts its painter first in the list of scripts Panel loads for the file dropper's
    model (``__javascript__``), so that it runs before FilePond's; the served page lists them in that order.
    (That FilePond joins the painter in the browser, served and in JupyterLab, is checked by
    ``tests/ui/pages.py``'s ``open_app`` and ``tests/ui/test_jupyterlab.py``.)"""
    from panel.io.resources import Resources
    from panel.models.file_dropper import FileDropper

    compat.quiet_filepond()
    compat.quiet_filepond()  # idempotent
    scripts = FileDropper.__javascript__
    assert scripts[0] == compat.QUIET_FILEPOND_URL and scripts.count(compat.QUIET_FILEPOND_URL) == 1
    assert scripts[-1].endswith("filepond.min.js"), broken(f"the file dropper's scripts are now {scripts}")
    served = Resources(mode="server").js_files
    painter = served.index(compat.QUIET_FILEPOND_URL)
    filepond = next(i for i, url in enumerate(served) if "filepond.min.js" in url)
    assert painter < filepond, broken("the page no longer loads a model's scripts in its __javascript__ order")


def test_a_page_with_html_panes_loads_mathjax_only_until_no_typeset_math(monkeypatch):
    """Panel bundles Bokeh's MathJax into a page as soon as it has an HTML pane (``_panel_use_mathjax``);
    after :func:`effdim_app.compat.no_typeset_math` it does not (the served dashboard's pages)."""
    from panel.io import resources

    doc = Document()
    page = [pn.pane.Markdown("$$x^2$$ as a CSV header").get_root(doc)]
    served = resources.Resources(mode="server")

    def with_mathjax() -> bool:
        return any("mathjax" in str(url) for url in resources.bundle_resources(page, served).js_files)

    # Panel's own rule (a dashboard served earlier in this process has replaced it), put back afterwards
    monkeypatch.setattr(resources, "_panel_use_mathjax", compat.PANEL_USE_MATHJAX)
    assert with_mathjax(), broken("a page with an HTML pane no longer gets bokeh-mathjax: no_typeset_math may go")
    compat.no_typeset_math()
    assert not with_mathjax(), broken("bundle_resources no longer asks _panel_use_mathjax whether to load MathJax")


def test_one_walk_of_models_walks_once_and_only_when_the_documents_models_changed():
    """``one_walk_of_models`` holds Bokeh's freeze count (``DocumentModelManager._freeze_count``) and notes its
    ``invalidate`` calls: a change that adds no model walks nothing; several that do, a freeze as Panel puts
    around a layout's update and a nested block among them, walk once, as the outermost block exits."""
    from unittest import mock

    from bokeh.document.models import DocumentModelManager
    from bokeh.models import Column, Div

    doc = Document()
    root = Column(Div(text="a"))
    doc.add_root(root)
    assert isinstance(getattr(doc.models, "_freeze_count", None), int), broken("the models' freeze count is gone")
    walks = mock.patch.object(
        DocumentModelManager, "recompute", autospec=True, side_effect=DocumentModelManager.recompute
    )
    added = Div(text="c")
    with walks as recompute:
        with compat.one_walk_of_models(doc):
            root.children[0].text = "b"  # a value, no model
        assert recompute.call_count == 0, broken("a change of a plain value walked the document's models")
        with compat.one_walk_of_models(doc):
            root.children = [*root.children, added]
            with doc.models.freeze():
                root.children = [*root.children, Div(text="d")]
            with compat.one_walk_of_models(doc):
                root.children = [root.children[0], added]
            assert recompute.call_count == 0, broken("the models were walked inside the block")
        assert recompute.call_count == 1, broken(f"{recompute.call_count} walks for one block, not 1")
    assert doc.get_model_by_id(added.id) is added and doc.models._freeze_count == 0
    assert "invalidate" not in vars(doc.models)  # Bokeh's own method again


def test_copies_of_models_are_deep_equal_and_each_joins_a_document_of_its_own():
    """``copies_of`` relies on Bokeh's wire format (an object ``{"type": "object", "id": ...}``, a reference
    ``{"id": ...}``): each copy has every model anew under new ids, the same values (arrays included), the
    ``CustomJS`` callbacks too, and two copies can be shown at once, each in its own document."""
    import numpy as np
    from bokeh.models import CustomJS
    from bokeh.plotting import figure

    original = figure(title="KL", y_axis_type="log")
    original.line(np.arange(5.0), np.array([1.0, 2.0, 4.0, 8.0, 16.0]), legend_label="BIC+")
    original.js_on_event("tap", CustomJS(code="console.log('tap')"))
    copy = compat.copies_of([original])
    first, second = copy()[0], copy()[0]
    ids = [{m.id for m in fig.references()} for fig in (original, first, second)]
    assert len(ids[1]) == len(ids[0]) and not ids[0] & ids[1] and not ids[1] & ids[2], broken(
        "a copy of a figure shares model ids with the figure or another copy, or lost models"
    )
    assert sorted(type(m).__name__ for m in first.references()) == sorted(
        type(m).__name__ for m in original.references()
    ), broken("a copy of a figure has other models than the figure")
    source = first.renderers[0].data_source
    assert first.title.text == "KL" and list(source.data["y"]) == [1.0, 2.0, 4.0, 8.0, 16.0], broken(
        "a copy of a figure lost its values"
    )
    assert first.js_event_callbacks["tap"][0].code == "console.log('tap')", broken("a copy lost its CustomJS")
    for fig in (first, second):
        Document().add_root(fig)  # each in a document of its own
