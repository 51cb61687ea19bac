"""What the dashboard needs in a notebook cell: Panel's stylesheets offline, no update lost to Run All, and
a comm that sends a user's action at once (:class:`DrawnSignal`).

**Offline.** ``pn.extension(..., inline=True)`` puts BokehJS, Panel and the
Tabulator and FileDropper bundles into the notebook, and Panel inlines the
stylesheets of the first render. Later updates do not keep that: every
update of an HTML pane re-sends the pane's stylesheets, which Panel (1.9)
resolves against its CDN (``cdn.holoviz.org/panel/<version>/dist/...``)
whenever the document has no server of its own, i.e. in a notebook. Offline
those links fail and the panes lose their theme; worse, the stylesheet
objects Panel re-sends are the ones it swapped out at the first render, so
BokehJS refuses the whole update (``reference <id> isn't known``) and
whatever else it carried. Panel keeps one ``ImportedStyleSheet`` per URL
and document and reuses it for every update; :func:`local_stylesheets`, a
preprocessing hook on the displayed root, points each such sheet at a
``data:`` URL holding the file Panel ships under ``panel/dist``, before
anything is sent. Served (``panel serve``), the URLs point at the server and
are left alone.

**Run All.** Panel's notebook comm opens as soon as the browser has created
the output's document, but until the document's views are built Panel's
browser side drops every update it receives. Run All of the example
notebook edits the model in the next cell while the dashboard's output is
still being built, so some of those updates were lost: the tree stayed on
the old model in 3 of 6 runs while the table showed the new one.
:class:`RenderGate` shows a one-line placeholder first and puts the
dashboard in only once the browser reports the placeholder drawn; edits made
before then change the Python state alone, and the dashboard is drawn from
that state.
"""

from __future__ import annotations

import base64
import functools
import mimetypes
import re
from pathlib import Path

import panel as pn
import param
from bokeh.models import ImportedStyleSheet, UIElement
from panel.custom import JSComponent

from .compat import CDN_DIST, DIRECT_COMM_JS, DIST_DIR, document_stylesheets, model_of

__all__ = ["local_stylesheets", "data_url", "RenderGate"]

_CSS_URL = re.compile(r"""url\((['"]?)([^'")]+)\1\)""")


@functools.cache
def data_url(path: Path) -> str:
    """``path`` as a ``data:`` URL; a stylesheet's relative ``url(...)`` (spinner images) is inlined too."""
    if path.suffix == ".css":

        def inline(match: re.Match) -> str:
            target = (path.parent / match.group(2)).resolve()
            if match.group(2).startswith(("data:", "http:", "https:", "#")) or not target.is_file():
                return match.group(0)
            return f"url('{data_url(target)}')"

        content = _CSS_URL.sub(inline, path.read_text(encoding="utf-8")).encode("utf-8")
        mime = "text/css"
    else:
        content = path.read_bytes()
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(content).decode('ascii')}"


def _local(url: str) -> Path | None:
    if not url.startswith(CDN_DIST):
        return None
    path = DIST_DIR / url[len(CDN_DIST) :].split("?")[0]
    return path if path.is_file() else None


def local_stylesheets(viewable, root, changed=None, old_models=None) -> None:
    """Preprocessing hook: every stylesheet Panel would fetch from its CDN points at its local copy instead.

    Runs on the whole tree at the first render and on the changed part at
    every later change of a layout (new models bring new sheets, e.g. the
    Data tab's Tabulator theme). Panel's own inlining runs first on a
    change and replaces the new models' sheets by copies, so the sheets it
    will reuse for later updates are also converted where Panel keeps them
    (its per-document cache).
    """
    top = (model_of(changed, root) if changed is not None else None) or root
    sheets = [sheet for model in top.select({"type": UIElement}) for sheet in model.stylesheets]
    sheets += document_stylesheets(root.document)  # no document while the first render is built
    for sheet in sheets:
        if isinstance(sheet, ImportedStyleSheet) and (path := _local(sheet.url)) is not None:
            sheet.url = data_url(path)


class DrawnSignal(JSComponent):
    """Tells the server it has been drawn (``drawn``) until the server answers (``seen``); draws nothing.

    It tells it again every 200 ms: while a Run All keeps the kernel busy, the
    output's comm is not yet connected and Panel keeps the first change in its
    buffer until the next one.

    It also makes the output's comm send a user's action at once: Panel's
    ``CommManager`` (a root of the output's document) gathers the browser's
    changes for ``debounce`` ms, 50 by default, before sending them. At 0 it
    still sends the changes of one event together and still waits for the
    kernel's acknowledgement before sending more. And it stops the comm from
    sending the kernel's own changes back: the comm forwards every change of
    the document, including those the kernel's messages made (Bokeh marks
    them ``sync = false``, and its server connection skips them), so each
    update would come back to the kernel as many changes to process
    (``benchmarks/dashboard/bench_app_update.py --jupyterlab``).
    """

    drawn = param.Integer(default=0)
    seen = param.Boolean(default=False)

    _esm = (
        DIRECT_COMM_JS
        + """
    export function render({ model, view }) {
      directComm(view)
      const tell = () => {
        if (!model.seen) {
          model.drawn += 1
          setTimeout(tell, 200)
        }
      }
      tell()
      return document.createElement("span")
    }
    """
    )


class RenderGate(pn.Column):
    """``content`` once the browser has drawn the gate; until then a placeholder line."""

    def __init__(self, content, **params):
        self._drawn = DrawnSignal(width=0, height=0, margin=0)
        self._content = content
        super().__init__(
            pn.pane.HTML("<p>Drawing the dashboard…</p>", margin=(0, 10)),
            self._drawn,
            hooks=[local_stylesheets],
            **params,
        )
        self._drawn.param.watch(self._open, "drawn")

    def _open(self, _event) -> None:
        if not self._drawn.seen:
            self._drawn.seen = True
            self.objects = [self._content, self._drawn]
