"""The effdim dashboard: ``panel serve apps/effdim.py``.

Panel runs this script once per browser session, and every run builds a
fresh app (fresh state): sessions never share mutable state.
"""

import os
import sys

# `panel serve` puts this script's folder on sys.path, where this file would
# shadow the engine package `effdim`; drop the folder before importing it.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

import panel as pn  # noqa: E402

from effdim_app.app import EXTENSIONS, create_app  # noqa: E402

pn.extension(*EXTENSIONS)
create_app().template().servable()
