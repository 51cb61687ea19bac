"""effdim: effective dimension of latent class (LC) and hierarchical latent
class (HLC) models, and model selection with it.

Implements Kocka & Zhang (2002), "Dimension correction for hierarchical latent
class models": the bounds ds, dc, dp, db of LC models (Theorems 3-4), the exact
effective dimension de as a Jacobian rank, its decomposition over local LC
models (Theorem 5, Corollary 4.1), regularization (Lemmas 3.2, 4.1), and the
scores BIC, BIC+, CS, CS+ for learning from data.
"""

from importlib.metadata import PackageNotFoundError, version

from .dimensions import DimensionReport, dimensions
from .errors import EffdimError
from .model import HLCModel, ModelError
from .notation import NotationError, format_model, load_model, model_from_json, model_to_json, parse_model
from .regularity import is_regular, regularity_violations, regularize

try:
    __version__ = version("effdim")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "DimensionReport",
    "EffdimError",
    "dimensions",
    "is_regular",
    "regularity_violations",
    "regularize",
    "HLCModel",
    "ModelError",
    "NotationError",
    "format_model",
    "load_model",
    "model_from_json",
    "model_to_json",
    "parse_model",
]
