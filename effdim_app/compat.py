"""Every private Panel and Bokeh internal the dashboard relies on, each with the public behaviour it stands for.

The notebook output (:mod:`effdim_app.notebook`) and the one-message edits
(:func:`effdim_app.views.widgets.in_one_message`) need things Panel and Bokeh do not offer publicly. They are
reached only through this module (and :mod:`effdim_app.compat_sessions`, those of building served sessions), so
an upgrade that changes one breaks one place, and ``tests/test_compat.py`` checks each against the installed
versions and names what changed. ``pyproject.toml`` pins Panel and Bokeh below the next minor version for the
same reason: raise the bound once ``tests/test_compat.py`` passes on it.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import panel as pn
import panel.io.resources as panel_resources
from bokeh.core.has_props import HasProps
from bokeh.core.properties import validate
from bokeh.core.property import bases as property_bases
from bokeh.core.property.wrappers import PropertyValueContainer
from bokeh.core.serialization import Deserializer, Serializer
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet, Model
from bokeh.util.serialization import make_id
from panel.io.notebook import block_comm, push_on_root
from panel.io.resources import CDN_DIST, DIST_DIR
from panel.io.state import set_curdoc, state
from panel.models.comm_manager import CommManager
from panel.models.file_dropper import FileDropper
from panel.util import classproperty

from .compat_sessions import panel_files_from_this_server, sheets_from_this_server

__all__ = [
    "CDN_DIST",
    "DIST_DIR",
    "DIRECT_COMM_JS",
    "SERVER_MODELS_KNOWN_JS",
    "TOOLTIPS_IN_VIEWPORT_JS",
    "cache_class_defaults",
    "copies_of",
    "serialize_set_values_only",
    "document_stylesheets",
    "is_notebook_output",
    "model_of",
    "one_notebook_message",
    "one_walk_of_models",
    "Fast",
    "add_page_at_once",
    "validation_per_thread",
    "quiet_filepond",
    "load_with_file_dropper",
    "no_typeset_math",
]

# CDN_DIST, DIST_DIR (panel.io.resources): the URL prefix Panel gives its own files when a document has no
# server (a notebook) and the folder of the installed package those URLs stand for; the notebook points the
# former at the latter (effdim_app/notebook.py).


def document_stylesheets(doc: Document | None) -> Iterable[ImportedStyleSheet]:
    """The stylesheets Panel reuses for every later update of ``doc``.

    Panel keeps one ``ImportedStyleSheet`` per URL and document
    (``state._stylesheets``, a ``WeakKeyDictionary`` document -> {url: sheet})
    and re-sends those objects with every update of a pane; the notebook
    converts them where they are kept so that later updates stay offline.
    """
    if doc is None:
        return ()
    return state._stylesheets.get(doc, {}).values()


def cache_class_defaults() -> None:
    """Keep, per Bokeh model class, the property defaults its class and base classes override.

    Bokeh merges them along the class's MRO at every read of a default value
    (``HasProps._overridden_defaults``, a classmethod; some 4,000 reads per
    page open, docs/robustness.md, "Opening a page"). Each class sets its own
    overrides when it is created (``__overridden_defaults__``) and never
    changes them, so one merge per class gives the same answer; it is
    returned read-only, as its one caller only reads it.
    """
    merge = HasProps._overridden_defaults
    if hasattr(merge, "cache_info"):
        return  # already kept

    @functools.cache
    def overridden_defaults(cls):
        return types.MappingProxyType(merge.__func__(cls))

    HasProps._overridden_defaults = classmethod(overridden_defaults)


#: Bokeh's own ``HasProps.query_properties_with_values`` (kept for :func:`serialize_set_values_only` and its test).
BOKEH_QUERY = HasProps.query_properties_with_values


def _query_set_values(self, query, *, include_defaults=True, include_undefined=False):
    """``HasProps.query_properties_with_values`` without reading the values it then leaves out.

    With ``include_defaults=False`` (how Bokeh serializes a model) Bokeh's
    own version reads every property's value, computing and checking each
    default, and then keeps only the properties set on the model, its
    mutable defaults and its theme's values: some 25 reads per model sent,
    most of them defaults it drops (a TODO in Bokeh 3.9's ``has_props.py``).
    This one decides first, and keeps the same values.
    """
    if include_defaults or include_undefined:
        return BOKEH_QUERY(self, query, include_defaults=include_defaults, include_undefined=include_undefined)
    themed = self.themed_values() or {}
    kept = set(self._property_values) | set(self._unstable_default_values) | set(themed)
    result = {}
    for key in self.properties(_with_props=True):
        descriptor = self.lookup(key)
        if key not in kept or not query(descriptor):
            continue
        value = descriptor.get_value(self)
        if key not in themed and isinstance(value, PropertyValueContainer) and key in self._unstable_default_values:
            continue  # a mutable default left as it was: the browser has it
        result[key] = value
    return result


def serialize_set_values_only() -> None:
    """Serialize Bokeh models without computing the defaults serialization leaves out (:func:`_query_set_values`).

    About a tenth of a page open's Python calls (docs/robustness.md,
    "Opening a page"); ``tests/test_page_open.py`` checks that the page's
    document is sent the same.
    """
    HasProps.query_properties_with_values = _query_set_values


def model_of(viewable, root: Model) -> Model | None:
    """The Bokeh model ``viewable`` rendered into the output whose root is ``root`` (None if not rendered there).

    Panel's public ``get_root`` makes a new model; the one already sent is
    kept in ``viewable._models`` (root id -> (model, parent)).
    """
    entry = viewable._models.get(root.ref["id"])
    return None if entry is None else entry[0]


def is_notebook_output(doc: Document) -> bool:
    """Whether ``doc`` is a notebook cell's output: no server session, Panel's comm among its roots.

    Panel adds a ``CommManager`` model (``panel.models.comm_manager``) to a
    notebook output's document; it is how the kernel and the browser talk.
    """
    return doc.session_context is None and any(isinstance(root, CommManager) for root in doc.roots)


@contextlib.contextmanager
def one_notebook_message(doc: Document) -> Iterator[None]:
    """Changes made to ``doc`` inside go to the browser together, as one comm message, when it exits.

    A server session has ``pn.io.hold()`` for this; a notebook output does
    not (Panel pushes each change on its comm at once). Panel's own
    ``block_comm`` holds every comm push and ``push_on_root`` sends what a
    root's document has gathered; ``set_curdoc`` makes ``doc`` the current
    document for the changes, as Panel does around its own callbacks.
    """
    try:
        with set_curdoc(doc), block_comm():
            yield
    finally:
        for root in doc.roots:
            push_on_root(root.ref["id"])


@contextlib.contextmanager
def one_walk_of_models(doc: Document) -> Iterator[None]:
    """``doc``'s models walked once for all the changes made inside, if one of them changed which models it holds.

    Bokeh walks every model of a document again (``doc.models.recompute``) after each change of a property whose
    value refers to models, a layout's children or a figure's renderers (``invalidate``), unless the models are
    frozen; its public ``doc.models.freeze()`` then walks on exit whether anything changed or not, which would add
    a walk to every edit that changes no layout. Inside, the freeze count is held up (private:
    ``DocumentModelManager._freeze_count``), so the freezes Panel puts around each layout update do not walk, and
    ``invalidate`` only notes that a walk is due (the document's own attribute shadows the method); on exit the
    walk runs once if it is due (docs/dashboard.md, "A sweep's end on the server"), then the sheets re-pointed.
    """
    models = doc.models
    shadowed = models.__dict__.get("invalidate")  # an enclosing block's note
    due = False

    def note() -> None:
        nonlocal due
        due = True

    models.invalidate = note
    models._freeze_count += 1
    try:
        yield
    finally:
        models._freeze_count -= 1
        if shadowed is None:
            del models.invalidate
        else:
            models.invalidate = shadowed
        if due:
            models.invalidate()  # walks now, unless an enclosing freeze or block walks on its exit
            if shadowed is None:
                sheets_from_this_server(doc)


#: Browser side (BokehJS, run from a component's ``render``): makes the notebook output's comm send a user's
#: action at once and stops it echoing the kernel's own changes back. Panel's ``CommManager`` model (type
#: ``panel.models.comm_manager.CommManager``, a root of the output's document) gathers the browser's changes
#: for ``debounce`` ms before sending them (at 0: the changes of one event together), and forwards every change
#: of the document through its ``_document_changed`` method, including those the kernel's messages made (BokehJS
#: marks them ``sync = false``; its server connection skips them). Defines ``directComm(view)``.
DIRECT_COMM_JS = """
function directComm(view) {
  const comm = view.model.document?.roots().find(
    (root) => root.type === "panel.models.comm_manager.CommManager")
  if (comm && !comm.effdimDirect) {
    comm.effdimDirect = true
    comm.debounce = 0
    const changed = comm._document_changed.bind(comm)
    comm._document_changed = (event) => {
      if (event.sync !== false) {
        changed(event)
      }
    }
  }
}
"""


#: Browser side (BokehJS): models the server sent stay known to the server. BokehJS's ``Document`` marks every
#: model it decodes from a server patch as new (``_new_models``, in ``_apply_json_patch``) until the browser next
#: sends a patch of its own, and sends new models in full. So when the first thing a model sent by the server
#: does is send an event (a file dropper the server put in place of the previous one, uploading), the event
#: carries the whole model: the server warns ``reference already known`` and, had it dropped the model
#: meanwhile, would make a stray copy. After each patch from the server this takes its models off the new
#: ones. Defines ``serverModelsKnown(view)``; run once per document.
SERVER_MODELS_KNOWN_JS = """
function serverModelsKnown(view) {
  const doc = view.model.document
  if (doc == null || doc.effdimServerModelsKnown || !(doc._new_models instanceof Set)) {
    return
  }
  doc.effdimServerModelsKnown = true
  const apply = doc.apply_json_patch.bind(doc)
  doc.apply_json_patch = (...args) => {
    const before = new Set(doc._new_models)
    try {
      return apply(...args)
    } finally {
      for (const model of [...doc._new_models]) {
        if (!before.has(model)) {
          doc._new_models.delete(model)
        }
      }
    }
  }
}
"""


#: BokehJS places a tooltip on the side its model names (Panel's help icons and widget descriptions: the right)
#: and keeps it inside the window only along the other axis, so a tooltip of a control near the window's right
#: edge ran past it (the Regularity "?", the Learn structure button at 1366 and 1024 px). After BokehJS has
#: placed one (``TooltipView._reposition``, private), this moves a tooltip that does not fit to the left of its
#: target, or below it when the left has no room either, its arrow with it, and keeps it inside the window.
#: Defines ``tooltipsInViewport()``; run once per page.
TOOLTIPS_IN_VIEWPORT_JS = """
function tooltipsInViewport() {
  const Tooltip = window.Bokeh && Bokeh.Models && Bokeh.Models.get("Tooltip")
  const View = Tooltip && Tooltip.prototype.default_view
  if (View == null || View.prototype.effdimInViewport) {
    return
  }
  View.prototype.effdimInViewport = true
  const place = View.prototype._reposition
  View.prototype._reposition = function (...args) {
    place.apply(this, args)
    const el = this.el
    const target = this.target
    if (!el.isConnected || target == null || target.getBoundingClientRect == null) {
      return
    }
    const box = el.getBoundingClientRect()
    const [width, height] = [window.innerWidth, window.innerHeight]
    if (box.width === 0 || (box.left >= 0 && box.right <= width && box.top >= 0 && box.bottom <= height)) {
      return
    }
    const at = target.getBoundingClientRect()
    const gap = 8
    const sides = ["bk-left", "bk-right", "bk-above", "bk-below"]
    let left, top, side, arrow
    if (box.right > width && at.left - box.width - gap >= 0) {
      // to the left of the target, the arrow on the tooltip's right side
      [left, top, side, arrow] = [at.left - box.width - gap, box.top, "bk-right", [at.left, at.top + at.height / 2]]
    } else if (box.right > width || box.left < 0) {
      // below the target, the arrow on the tooltip's top side
      left = Math.min(Math.max(0, at.left + at.width / 2 - box.width / 2), width - box.width)
      ;[top, side, arrow] = [at.bottom + gap, "bk-above", [at.left + at.width / 2, at.bottom]]
    } else {
      [left, top, side, arrow] = [box.left, box.top, null, null]
    }
    top = Math.min(Math.max(0, top), Math.max(0, height - box.height))
    el.style.left = `${Math.max(0, left)}px`
    el.style.top = `${top}px`
    if (side != null) {
      el.classList.remove(...sides)
      el.classList.add(side)
      if (this.arrow_el != null) {
        this.arrow_el.style.left = `${arrow[0]}px`
        this.arrow_el.style.top = `${arrow[1]}px`
      }
    }
  }
}
"""


class Fast(pn.theme.Fast):
    """Panel's Fast design without its web font: Fast links Open Sans from a font service on the internet,
    which failed twice per load offline and sent every classroom page's visit outside. (The class keeps
    the name ``Fast``: Panel finds a design's own files under its class name.) ``_resources`` is the
    design's private dict of the files it links, by kind."""

    _resources = {kind: files for kind, files in pn.theme.Fast._resources.items() if kind != "font"}


#: Per thread, whether Bokeh checks property values: set only inside a ``validate(...)`` block of that thread
#: (:func:`validation_per_thread`); elsewhere Bokeh's process-wide setting holds.
_VALIDATION = threading.local()


def _validation_on() -> bool:
    """``bokeh.core.property.bases.validation_on``, this thread's ``validate(...)`` block first."""
    return getattr(_VALIDATION, "on", property_bases.Property._should_validate)


def _validate_init(self, value) -> None:
    self.old = getattr(_VALIDATION, "on", None)
    _VALIDATION.on = value


def _validate_exit(self, typ, value, traceback) -> None:
    if self.old is None:
        del _VALIDATION.on
    else:
        _VALIDATION.on = self.old


def validation_per_thread() -> None:
    """Make Bokeh's ``validate(False)`` blocks hold for the thread that opens them only.

    Bokeh keeps the switch in one class attribute (``Property._should_validate``):
    a block in one thread turned the checks off in every thread, and two blocks
    overlapping in two threads could leave them off for good (each restores
    what it found). With the checks off, Bokeh also skips the conversions it
    makes when a check fails (a plot's title given as text becomes a ``Title``),
    so a figure drawn in another thread kept a text title, which HoloViews then
    failed on ("'str' object has no attribute 'update'"), and a process whose
    checks stayed off serves blank pages (BokehJS cannot render a document
    built without them; docs/robustness.md). The dashboard
    builds each page in such a block (:func:`add_page_at_once`) while the
    Experiments tab draws its figures in a thread, as does HoloViews (its
    ``validate(False)`` while it updates a plot's data). Installed once;
    Panel's ``set_bokeh_validation`` still sets the process-wide switch.
    """
    if property_bases.validation_on is _validation_on:
        return
    property_bases.validation_on = _validation_on
    validate.__init__ = _validate_init
    validate.__exit__ = _validate_exit


def add_page_at_once(template: pn.template.BaseTemplate) -> None:
    """Let ``template`` add its page to the session's document under one freeze of the document's models,
    without checking each property value Panel sets.

    Panel adds the page's parts (sidebar, main, header, modal, location...) as
    separate roots, and Bokeh walked every model of the document again after
    each one: a sixth of the CPU of opening a page went to those walks.
    Frozen, Bokeh walks the models once at the end. Bokeh also checked each of
    the thousands of values Panel gives the page's new models against its
    property's type (Bokeh's public ``validate(False)`` turns that off);
    ``tests/test_page_open.py`` checks that the page's document is the same
    with the checks; they are off in the thread that builds the page only
    (:func:`validation_per_thread`). ``_init_doc`` is the private method
    ``server_doc`` calls with the session's document.
    """
    validation_per_thread()
    init_doc = template._init_doc

    def init_doc_frozen(doc=None, *args, **kwargs):
        document = doc if doc is not None else pn.state.curdoc
        if document is None:
            return init_doc(doc, *args, **kwargs)
        with document.models.freeze(), validate(False):
            page = init_doc(document, *args, **kwargs)
        if document.session_context is not None:
            panel_files_from_this_server(document)
        return page

    template._init_doc = init_doc_frozen


def script_url(name: str) -> str:  # effdim_app/<name> as a data: URL: a script to the page, inlined by a notebook
    return "data:text/javascript;base64," + base64.b64encode(Path(__file__).with_name(name).read_bytes()).decode()


QUIET_FILEPOND_URL = script_url("quiet_filepond.js")


def load_with_file_dropper(url: str) -> None:
    """Load the script ``url`` before FilePond's (after those loaded so before) in every page and notebook output:
    each has a file dropper. Panel loads a Bokeh model's scripts from its class's ``__javascript__`` list, in order
    (private; a class property, since Panel names the files by where the page gets them)."""
    scripts = FileDropper.__dict__["__javascript__"]
    first, original = getattr(scripts, "loaded_first", ()), getattr(scripts, "original", scripts)
    if url not in first:
        extended = classproperty(lambda cls: [*first, url, *original.__get__(None, cls)])
        extended.loaded_first, extended.original = (*first, url), original
        FileDropper.__javascript__ = extended


def quiet_filepond() -> None:
    """Load ``effdim_app/quiet_filepond.js`` first of the file dropper's scripts (:func:`load_with_file_dropper`).
    FilePond 4 (Panel's ``FileDropper``) redraws 60 times a second from the moment its script loads, shown or not
    (pqina/filepond#243), 7 % of a core per open dashboard; first, it offers a painter on ``window.__framePainter``
    that FilePond joins, drawing at full rate only while the page is in use (docs/dashboard.md)."""
    load_with_file_dropper(QUIET_FILEPOND_URL)


#: Panel's own rule for "does this page need MathJax?", as imported (before :func:`no_typeset_math` replaces it).
PANEL_USE_MATHJAX = panel_resources._panel_use_mathjax


def no_typeset_math() -> None:
    """Serve pages without MathJax, which no text of the dashboard uses.

    Panel adds Bokeh's MathJax bundle (``bokeh-mathjax.min.js``, 1.8 MB, the largest script of the page) to
    every served page that has an HTML or Markdown pane (``_panel_use_mathjax``, private, consulted by
    ``bundle_resources`` for each page), so every page open downloaded and parsed it: about a tenth of the
    browser's main-thread time of opening the dashboard (README, the paragraph after the test command).
    Without it Panel's ``HTML`` view shows its text as it is. A Bokeh figure whose own texts hold TeX still
    gets MathJax (Bokeh's ``_use_mathjax``; the dashboard's figures have none); the notebook output loads it
    only when asked (``pn.extension('mathjax')``), so there is nothing to change there."""
    panel_resources._panel_use_mathjax = _no_panel_mathjax


def _no_panel_mathjax(roots) -> bool:
    """:func:`no_typeset_math`'s answer to Panel's "does this page need MathJax for its HTML panes?"."""
    return False


def copies_of(models: list[Model]) -> Callable[[], list[Model]]:
    """A maker of fresh copies of ``models``, every model they reference copied too, each copy under ids of its
    own, so that each can join a document of its own (a Bokeh model belongs to one document at a time).

    Bokeh has no deep copy of models. The models are serialized once, as Bokeh sends them to a browser
    (``bokeh.core.serialization``), and each copy is deserialized from that with every object's id replaced:
    a model's representation is ``{"type": "object", "id": ..., "attributes": ...}`` and a reference to one
    ``{"id": ...}`` (the wire format of Bokeh's protocol, not a documented Python API). Python callbacks are
    not copied; ``CustomJS`` ones are models and are."""
    serialized = Serializer().serialize(models)
    ids = _object_ids(serialized.content)

    def copy() -> list[Model]:
        renamed = {old: make_id() for old in ids}
        return Deserializer().decode(_renamed(serialized.content, renamed), serialized.buffers)

    return copy


def _object_ids(rep) -> set[str]:
    """The ids of the models serialized in ``rep`` (a Bokeh representation, see :func:`copies_of`)."""
    if isinstance(rep, dict):
        found = {rep["id"]} if rep.get("type") == "object" and "id" in rep else set()
        return found.union(*(_object_ids(value) for value in rep.values()))
    if isinstance(rep, list | tuple):  # a map's entries are (key, value) tuples
        return set().union(*(_object_ids(value) for value in rep))
    return set()


def _renamed(rep, ids: dict[str, str]):
    """``rep`` with every model id (an ``"id"`` entry naming a key of ``ids``) replaced by its value in ``ids``."""
    if isinstance(rep, dict):
        return {
            key: ids.get(value, value) if key == "id" and isinstance(value, str) else _renamed(value, ids)
            for key, value in rep.items()
        }
    if isinstance(rep, list | tuple):
        return type(rep)(_renamed(value, ids) for value in rep)
    return rep
