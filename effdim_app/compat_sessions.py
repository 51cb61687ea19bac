"""The private Panel and Bokeh internals of building a served session's page (as :mod:`effdim_app.compat`,
whose rule holds here too: each with the public behaviour it stands for, checked against the installed
versions by ``tests/test_page_builds.py`` and ``tests/ui/test_processes.py``)."""

from __future__ import annotations

import asyncio
import threading

import panel as pn
import panel.io.resources as panel_resources
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from panel.io.state import set_curdoc, state

__all__ = ["built_off_the_loop", "panel_files_from_this_server", "sheets_from_this_server"]


def built_off_the_loop(app, turn):
    """``app`` (a Bokeh ``Application``, as ``panel.io.application.build_applications`` makes it) building its
    sessions' documents in a worker thread, one at a time, while the event loop serves the open pages.

    Bokeh builds a session when its websocket connects: it awaits the application's session-created hooks,
    then builds the document (``initialize_document``, the page's Panel objects and Bokeh models) on the
    event loop without yielding, so pages connecting together were built back to back while a connected
    student's edit waited (docs/robustness.md, "A class arriving together"). Here the session-created hook
    waits for the session's turn (``turn(session_context)``, an async context manager: the server's rule of
    which page is built next, one at a time) and builds the document in a thread, as Panel creates
    models off the loop in its threaded mode (``--num-threads``): the thread and the loop take the
    interpreter lock in turns of a few milliseconds, so an edit goes on during a build. The later
    ``initialize_document`` call finds the document built. Panel records the thread a document was built
    in and defers every later change made on another thread to the loop; the document is given the loop's
    thread, where its session runs. A build that fails in the thread is undone and made again on the loop
    (Bokeh logs the failure).
    """
    created, initialize = app.on_session_created, app.initialize_document
    built: set[Document] = set()

    async def on_session_created(session_context):
        await created(session_context)
        doc = session_context._document
        async with turn(session_context):
            loop_thread = threading.get_ident()
            try:
                await asyncio.to_thread(initialize, doc)
            except BaseException:
                doc.clear()
                raise
            finally:
                state._thread_id_[doc] = loop_thread
            built.add(doc)

    def initialize_document(doc):
        if doc in built:
            built.discard(doc)
        else:
            initialize(doc)

    app.on_session_created = on_session_created
    app.initialize_document = initialize_document
    return app


def panel_files_from_this_server(doc: Document) -> None:
    """Point ``doc``'s stylesheets, and those of the components it gets later, at this server's copy of
    Panel's files, as Panel does when it renders a session's page (``server_html_page_for_session``: the
    template variable ``dist_url``, which later updates read, and ``patch_model_css`` of each root).

    A session built when its websocket connects was never rendered as a page: its page came from another
    session (Panel's ``reuse_sessions``) or another server process (``--processes 2``). Without this its
    components asked Panel's CDN for their stylesheets, and on a classroom network without internet the
    page lost part of its styling (the Tabulator and theme CSS). Doing it again when Panel renders the page
    changes nothing (the URLs are already this server's).
    """
    with set_curdoc(doc):
        dist_url = panel_resources.get_dist_path()
    doc._template_variables["theme_name"] = pn.config.theme
    doc._template_variables["dist_url"] = dist_url
    for root in doc.roots:
        panel_resources.patch_model_css(root, dist_url=dist_url)


def sheets_from_this_server(doc: Document) -> None:
    """Point every stylesheet of ``doc``'s models at this server's copy of Panel's files again, after one of
    the dashboard's single-message blocks that changed which models it holds
    (``effdim_app.compat.one_walk_of_models``).

    Inside such a block a new model joins its document only when the block ends, and Panel styles a model
    outside any document with its design's sheets at Panel's CDN, rewriting the sheets the page's models
    share (``theme/default.css``, ``theme/fast.css``, ``css/loading.css``) to point there: a part built in
    a click (the guided demo's bar, the Dimensions table when first seen) had the whole page ask the CDN for
    them, which a classroom network without internet does not serve. Nothing to do outside a served
    session (a notebook inlines its sheets: effdim_app/notebook.py).
    """
    dist_url = doc._template_variables.get("dist_url")
    if dist_url is None:
        return
    for model in doc.models:
        for sheet in getattr(model, "stylesheets", None) or ():
            if isinstance(sheet, ImportedStyleSheet):
                panel_resources.patch_stylesheet(sheet, dist_url)
