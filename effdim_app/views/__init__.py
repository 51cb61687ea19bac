"""Panel views of the dashboard, one module per tab; each displays state and calls state methods.

Every view is a :class:`panel.viewable.Viewer` over the param classes of
:mod:`effdim_app.state`. Views never compute anything about a model
themselves: the state asks the engine, the views show the answers.

* :mod:`.sidebar`: the model controls beside every tab;
* :mod:`.model_tab`: the "Model & dimensions" tab (with :mod:`effdim_app.tree_view`);
* :mod:`.data_tab`: the "Data & scores" tab;
* :mod:`.widgets`: what they share.

The "Experiments" tab is :mod:`effdim_app.experiments_view`.
"""

from .data_tab import DataPanel, ScoresPanel
from .model_tab import DimensionsPanel, RegularizationPanel, SelectionPanel
from .sidebar import ModelPanel

__all__ = [
    "ModelPanel",
    "SelectionPanel",
    "RegularizationPanel",
    "DimensionsPanel",
    "DataPanel",
    "ScoresPanel",
]
