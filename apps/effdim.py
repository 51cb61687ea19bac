"""The effdim dashboard: ``panel serve apps/effdim.py``.

Panel runs this script once per browser session, and every run builds a
fresh app (fresh state): sessions never share mutable state.
"""

import panel as pn

from effdim_app.app import EXTENSIONS, create_app

pn.extension(*EXTENSIONS)
create_app().template().servable()
