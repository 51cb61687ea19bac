"""effdim: effective dimension of latent class (LC) and hierarchical latent
class (HLC) models, and model selection with it.

Implements Kocka & Zhang (2002), "Dimension correction for hierarchical latent
class models": the bounds ds, dc, dp, db of LC models (Theorems 3-4), the exact
effective dimension de as a Jacobian rank, its decomposition over local LC
models (Theorem 5, Corollary 4.1), regularization (Lemmas 3.2, 4.1), and the
scores BIC, BIC+, CS, CS+ for learning from data.

The public face
---------------
Everything a user needs is a name of this package:

* data: :func:`read_data` (CSV, SPSS, Stata, Excel, Parquet; within
  :class:`ReadLimits`), :class:`Dataset`,
  :class:`DataError`, the bundled data sets of :mod:`effdim.datasets`;
* models: :func:`parse_model`, :func:`format_model`, :func:`load_model`,
  :func:`model_from_json`, :func:`model_to_json`, :class:`HLCModel`;
* dimensions: :func:`dimensions` (:class:`DimensionReport`), :func:`regularize`
  (:class:`Regularization`), :func:`is_regular`, :func:`regularity_violations`,
  :func:`largest_regular_card` (Lemmas 3.2 and 4.1);
* learning: :func:`fit` (:class:`FitResult`; :func:`lc_model_for` the LC model
  over every column), :func:`sweep`, :func:`hill_climb`
  (:class:`HillClimb`), :func:`learn_structure` (:class:`LearnedStructure`;
  how it searches: :class:`SearchSettings`),
  the scikit-learn style :class:`LatentTreeLearner`, all run as one
  :class:`EMSettings` says (:class:`ConvergenceWarning` when the best start did
  not converge or no other start reached it);
* errors: every refusal of user input is an :class:`EffdimError`.

Documented submodules, one concept each, for more specialised work:
:mod:`effdim.reading` and :mod:`effdim.data` (reading files, matching leaves
to columns), :mod:`effdim.dimensions` and :mod:`effdim.bounds` (the dimension
report's parts), :mod:`effdim.search` (sweeps, climbs, the caveats of a pick),
:mod:`effdim.scores` (the criteria and their registry), :mod:`effdim.sbic` (the singular BIC over a
sweep's chain of models), :mod:`effdim.enumeration` (the class-enumeration table and its exports),
:mod:`effdim.priors` (the CS prior), :mod:`effdim.profiles` (a fit's
parameters and posteriors in the data's words), :mod:`effdim.diagnostics` (fit
statistics, residuals, identification), :mod:`effdim.threestep` (distal
outcomes of the classes by the three-step method), :mod:`effdim.formula` (covariate
formulas), :mod:`effdim.regression` (a latent class regression's coefficients,
odds ratios and class probabilities), :mod:`effdim.standard_errors` (standard
errors of every parameter, singular information included), :mod:`effdim.bootstrap` (bootstrap
p-values, BLRT), :mod:`effdim.executor` (where jobs run), :mod:`effdim.limits`
(what may be computed), :mod:`effdim.validation` (argument checks),
:mod:`effdim.errors`, :mod:`effdim.report` (the HTML report), :mod:`effdim.charts`
(its SVG figures, which the dashboard draws too),
:mod:`effdim.treedraw` (drawing a tree), :mod:`effdim.survey` (models whose
de falls below the bound), :mod:`effdim.text_formats` (text encodings and
separators in words), :mod:`effdim.paper` (the paper's
examples), :mod:`effdim.experiments` (the paper's studies) and
:mod:`effdim.cli`. The dashboard and the command line import the engine
through these and the names above only (``tests/test_layers.py``).

The models, dimensions and regularity are imported with the package; the rest
when first used (PEP 562), so ``import effdim`` and the command line start
without loading pandas or the EM engine.

>>> import effdim
>>> effdim.dimensions("5(3(2,2),2,3(2,2))").de
23
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .dimensions import DimensionReport, dimensions
from .errors import EffdimError
from .model import HLCModel, ModelError
from .notation import NotationError, format_model, load_model, model_from_json, model_to_json, parse_model
from .regularity import Regularization, is_regular, largest_regular_card, regularity_violations, regularize

try:
    __version__ = version("effdim")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

#: Public names imported when first used -> the module that defines them (``None``: the name is a module).
_LAZY = {
    # data
    "read_data": "reading",
    "ReadLimits": "read_limits",
    "Dataset": "data",
    "DataError": "data",
    "datasets": None,
    # learning
    "EMSettings": "settings",
    "fit": "fitting",
    "FitResult": "fitting",
    "lc_model_for": "fitting",
    "sweep": "search",
    "hill_climb": "search",
    "HillClimb": "search",
    "learn_structure": "structure",
    "LearnedStructure": "structure",
    "SearchSettings": "structure",
    "LatentTreeLearner": "learner",
    "ConvergenceWarning": "em",
}

#: The documented submodules (module docstring): the dashboard and the CLI import the engine only
#: through :data:`__all__` and these (``tests/test_layers.py``).
PUBLIC_SUBMODULES = (
    "bootstrap",
    "bounds",
    "charts",
    "cli",
    "data",
    "datasets",
    "diagnostics",
    "dimensions",
    "enumeration",
    "errors",
    "executor",
    "experiments",
    "formula",
    "limits",
    "paper",
    "priors",
    "profiles",
    "reading",
    "regression",
    "report",
    "sbic",
    "scores",
    "search",
    "standard_errors",
    "survey",
    "text_formats",
    "threestep",
    "treedraw",
    "validation",
)

__all__ = [
    "__version__",
    "DimensionReport",
    "EffdimError",
    "HLCModel",
    "ModelError",
    "NotationError",
    "Regularization",
    "dimensions",
    "format_model",
    "is_regular",
    "largest_regular_card",
    "load_model",
    "model_from_json",
    "model_to_json",
    "parse_model",
    "regularity_violations",
    "regularize",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'effdim' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_LAZY[name] or name}")
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
