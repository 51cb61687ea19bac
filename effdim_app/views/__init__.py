"""Panel views of the dashboard, one module per tab; each displays state and calls state methods.

Every view is a :class:`panel.viewable.Viewer` over the param classes of
:mod:`effdim_app.state`. Views never compute anything about a model
themselves: the state asks the engine, the views show the answers.

* :mod:`.sidebar`: the model controls beside every tab;
* :mod:`.model_tab`: the "Model & dimensions" tab's controls, with the tree editor :mod:`.tree_view`
  and the dimensions :mod:`.dimensions_view`;
* :mod:`.data_panel` and :mod:`.data_tab`: the "Data & scores" tab's data and scores, with the sweep's
  class-enumeration table :mod:`.enumeration_view`, the fitted model :mod:`.fitted_view`, its proposals
  :mod:`.proposal_view`, its distal outcomes :mod:`.distal_view` and its covariates
  :mod:`.regression_view`;
* :mod:`.experiments_view`: the "Experiments" tab;
* :mod:`.demo`: the guided demo; :mod:`.data_demo`: the data demo;
* :mod:`.widgets`: what they share.
"""

from .data_demo import DataDemo
from .data_panel import DataPanel
from .data_tab import ScoresPanel
from .demo import GuidedDemo
from .dimensions_view import DimensionsPanel
from .distal_view import DistalView
from .enumeration_view import EnumerationView
from .experiments_view import ExperimentsPanel
from .fit_checks_view import FitChecksView
from .fitted_view import FittedView
from .model_tab import RegularizationPanel, SelectionPanel
from .proposal_view import ProposalView
from .regression_view import RegressionView
from .sidebar import ModelPanel
from .tree_view import TreeView

__all__ = [
    "ModelPanel",
    "SelectionPanel",
    "RegularizationPanel",
    "DimensionsPanel",
    "DataPanel",
    "ScoresPanel",
    "FittedView",
    "FitChecksView",
    "ProposalView",
    "DistalView",
    "EnumerationView",
    "RegressionView",
    "TreeView",
    "ExperimentsPanel",
    "GuidedDemo",
    "DataDemo",
]
