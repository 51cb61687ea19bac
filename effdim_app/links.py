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

#: Longest tab number read: anything longer is no tab of the page (and ``int()`` refuses a number of
#: more than 4,300 digits: ``?tab=<5,000 nines>`` stopped the page from opening).
_TAB_DIGITS = 3


@dataclass(frozen=True)
class LinkView:
    """What a link asks for: ``model`` notation ("" for none), ``tab`` index (None: the first), ``projector``."""

    model: str = ""
    tab: int | None = None
    projector: bool = False


def read_link(args: dict[str, list[bytes]], tabs: int) -> LinkView:
    """The view a page's query arguments ask for (``args``: name -> values, as the server passes them;
    the first value of each counts), with ``tabs`` tabs on the page."""

    def first(name: str) -> bytes:
        values = args.get(name) or [b""]
        return values[0] if isinstance(values[0], bytes) else b""

    model = first("model").decode("utf-8", "replace")
    tab_text = first("tab").decode("ascii", "replace")
    tab = None
    if 0 < len(tab_text) <= _TAB_DIGITS and all("0" <= c <= "9" for c in tab_text) and int(tab_text) < tabs:
        tab = int(tab_text)
    return LinkView(model=model, tab=tab, projector=first("projector") in (b"1", b"true", b"on"))
