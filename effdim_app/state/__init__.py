"""Session state of the dashboard as param classes (no Panel import here).

One module per state of a session:

* :mod:`.model`: :class:`ModelState`, the edited model, its selection and
  history, and the engine's verdicts on it; its edits are :mod:`.model_edits`.
* :mod:`.data`: :class:`DataState`, the loaded data set.
* :mod:`.scores`: :class:`ScoresState`, sweeps, hill climbs and the
  structure search of the model on the data, and their results (the tables
  and picks the views show of them: :mod:`.score_tables`; the structure
  search's runs: :mod:`.learning`).
* :mod:`.fitted`: :class:`FittedState`, which fit of the last sweep or climb
  the "Fitted model" view shows; :mod:`.fit_checks`: :class:`FitChecksState`,
  its checks that take refits (the bootstrap p-value of G2, the share ranges).
* :mod:`.proposal`: :class:`ProposalState`, a model proposed from a bivariate
  residual, applied on confirmation and undone with its results.
* :mod:`.distal`: :class:`DistalState`, columns left out of the model related
  to the shown fit's classes by the three-step method.
* :mod:`.enumeration`: :class:`EnumerationState`, the last sweep's
  class-enumeration table and its bootstrap LRT.
* :mod:`.regression`: :class:`RegressionState`, covariates chosen for the shown
  fit's model and the latent class regression fitted with them.

:mod:`.reproduce` writes the ``effdim`` command that reproduces a sweep's or
climb's result (for its report); :mod:`.shared` holds what they share (message kinds, the engine's answers
cached across sessions). The views (``effdim_app.views``) only display these
parameters and call these methods, so everything here is testable without a
browser.
"""

from .data import DataState
from .distal import DistalState
from .enumeration import EnumerationState
from .fit_checks import FitChecksState
from .fitted import DEFAULT_SCORE, FittedState
from .model import ModelState
from .proposal import ProposalState
from .regression import RegressionState
from .scores import CLIMB_SCORES, CS_PRIORS, SHOWN_SCORES, ScoresState

__all__ = [
    "ModelState",
    "DataState",
    "ScoresState",
    "FittedState",
    "FitChecksState",
    "ProposalState",
    "DistalState",
    "EnumerationState",
    "RegressionState",
    "SHOWN_SCORES",
    "CLIMB_SCORES",
    "CS_PRIORS",
    "DEFAULT_SCORE",
]
