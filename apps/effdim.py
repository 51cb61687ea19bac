"""The effdim dashboard: ``panel serve apps/effdim.py``.

Panel runs this script once per browser session, and every run builds a
fresh app (fresh state): sessions never share mutable state, only the
process's one job runner (effdim_app.session_page). ``effdim app`` serves the
same page with configurable limits (docs/robustness.md).
"""

import os
import sys

# `panel serve` puts this script's folder on sys.path, where this file would
# shadow the engine package `effdim`; drop the folder before importing it.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

from effdim_app import session_page  # noqa: E402

session_page().servable()
