"""The effdim dashboard (Panel + HoloViews + Bokeh).

In Jupyter, one import and one call::

    import effdim_app
    effdim_app.app()            # the dashboard inline (pn.extension is handled)
    effdim_app.app("3:2,2,2,2") # starting from a model

``effdim_app.show()`` opens the served dashboard in a browser tab instead.
From a shell: ``panel serve apps/effdim.py``.

``effdim_app.state`` holds the param state classes (no Panel import), usable
and testable without a browser.
"""

from __future__ import annotations

__all__ = ["app", "show", "create_app", "serve"]


def _extension() -> None:
    import panel as pn

    from .app import EXTENSIONS

    pn.extension(*EXTENSIONS)


def create_app(model=None):
    """A fresh :class:`effdim_app.app.EffdimApp` (no extension loading)."""
    from .app import create_app as _create

    return _create(model)


def app(model=None):
    """The dashboard for display in a notebook (loads the Panel extensions first).

    Served (``pn.serve(effdim_app.app)``), each session gets the templated page.
    """
    import panel as pn

    _extension()
    dashboard = create_app(model)
    if pn.state.served:
        return dashboard.template()
    return dashboard


def serve(port: int = 0, show: bool = True, threaded: bool = False, **kwargs):
    """Serve the templated dashboard, one fresh app per browser session."""
    import panel as pn

    from .app import EXTENSIONS, TITLE

    def session():
        pn.extension(*EXTENSIONS)
        return create_app().template()

    return pn.serve({"effdim": session}, port=port, show=show, threaded=threaded, title=TITLE, **kwargs)


def show(model=None, port: int = 0):
    """Open the templated dashboard in a new browser tab (from a notebook or a script)."""
    import panel as pn

    from .app import EXTENSIONS, TITLE

    def session():
        pn.extension(*EXTENSIONS)
        return create_app(model).template()

    return pn.serve({"effdim": session}, port=port, show=True, threaded=True, title=TITLE)
