"""The effdim dashboard (Panel + HoloViews + Bokeh).

In Jupyter, one import and one call::

    import effdim_app
    effdim_app.app()            # the dashboard inline (pn.extension is handled)
    effdim_app.app("3:2,2,2,2") # starting from a model

``effdim_app.show()`` opens the served dashboard in a browser tab instead.
From a shell: ``panel serve apps/effdim.py``.

The entry points live in :mod:`effdim_app.dashboard` (``app``,
``create_app``) and :mod:`effdim_app.server` (``serve``, ``session_page``,
``show``); they are imported on first use, so ``import effdim_app.state``
(the param state classes, usable and testable without a browser) does not
import Panel. The layers of the package are listed in tests/test_layers.py.
"""

from __future__ import annotations

__all__ = ["app", "show", "create_app", "serve", "session_page"]


def __getattr__(name: str):
    """The public entry points, imported when first used (they import Panel)."""
    if name in ("app", "create_app"):
        from . import dashboard as module
    elif name in ("serve", "session_page", "show"):
        from . import server as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
