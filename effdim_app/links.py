"""What a shared link asks the dashboard to show (no Panel import): :func:`read_link`.

A page's address keeps the model (notation), the open tab and projector mode,
``?model=5(3(2,2),2,3(2,2))&tab=1&projector=1`` (``EffdimApp._share_in_url``
in :mod:`effdim_app.dashboard`). Anyone can type or send any address, so each
argument is read here, whatever its bytes: a model is text for the notation
box to judge (:meth:`effdim_app.state.ModelState.open_link`), a tab is a
plain decimal number within the tabs or nothing, projector mode is on only
for ``1``, ``true`` or ``on``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LinkView", "read_link"]

@dataclass(frozen=True)
class LinkView:
    """What a link asks for: ``model`` notation ("" for none), ``tab`` index (None: the first), ``projector``."""

    model: str = ""
    tab: int | None = None
    projector: bool = False


def read_link(args: dict[str, list[bytes]], tabs: int) -> LinkView:
    """The view a page's query arguments ask for (``args``: name -> values, as the server passes them;
    the first value of each counts), with ``tabs`` tabs on the page."""

    model = args.get("model", [b""])[0].decode("utf-8", "replace")
    tab_text = args.get("tab", [b""])[0].decode("ascii", "replace")
    tab = int(tab_text) if tab_text.isdigit() and int(tab_text) < tabs else None
    return LinkView(model=model, tab=tab, projector=args.get("projector", [b""])[0] in (b"1", b"true", b"on"))
