"""A scikit-learn style estimator for LC and HLC models.

>>> from effdim.learner import LatentTreeLearner
>>> from effdim import datasets
>>> learner = LatentTreeLearner("2:2,2,2,2", restarts=5, seed=0).fit(datasets.load("stouffer-toby"))
>>> learner.scores_["bic"]  # doctest: +SKIP

``fit`` runs EM with restarts (:func:`effdim.em.fit_em`) and scores the
estimate (:mod:`effdim.scores`, Section 2.3 of Kocka & Zhang 2002); learned
attributes end in ``_`` as in scikit-learn. ``predict_proba`` gives the
posterior of a hidden node for every row of new data, read in the value
coding of the training data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .em import ModelData, pattern_loglik, posterior
from .errors import EffdimError, InvalidArgument
from .model import HLCModel
from .scores import FIT_SCORES, SCORES
from .settings import EMSettings
from .validation import as_dataset, as_model

__all__ = ["LatentTreeLearner", "NotFittedError"]

#: The learner's parameters that are fields of :class:`effdim.EMSettings`.
_EM_PARAMS = ("restarts", "seed", "tol", "max_iter", "prior", "cs_prior")


class NotFittedError(EffdimError, ValueError, AttributeError):
    """The learner is used before :meth:`LatentTreeLearner.fit`."""


class LatentTreeLearner:
    """Learn the parameters of an LC/HLC model by EM and score the result.

    Parameters
    ----------
    model:
        An :class:`~effdim.model.HLCModel` or its notation (``"3:2,2,2,2"``,
        ``"5(3(2,2),2,3(2,2))"``). Leaves are matched to data columns by name,
        or by position when they carry the default names ``O1..On``.
    restarts, seed, tol, max_iter, prior, cs_prior:
        The fields of :class:`effdim.EMSettings` a model search tunes, flat as
        scikit-learn's ``get_params``/``set_params`` expect: random starts
        with pruning, their seed, tolerance on the per-row log-likelihood
        rise, iteration cap, the pseudo-count of the MAP option (``None``:
        ML), and the prior of CS and CS+. Checked by :class:`~effdim.EMSettings`
        when :meth:`fit` runs.
    mapping:
        Optional ``{leaf: column}`` for data whose column names differ.

    Attributes
    ----------
    model_:
        The parsed model.
    params_:
        The fitted :class:`~effdim.distribution.Parameters`; hidden states
        by decreasing share (state 0 is the largest class; :meth:`reorder`).
    loglik_:
        ``log p(D | theta)`` (natural log).
    scores_:
        ``loglik`` and every criterion of one model (:data:`effdim.scores.FIT_SCORES`) by key
        (``bic``, ``bic_plus``, ``cs``, ...; higher is better).
    ds_, de_:
        Standard and effective dimension.
    n_:
        Sample size ``|D|``.
    restarts_:
        Every start's final log-likelihood (array).
    n_best_:
        How many starts reached the best log-likelihood.
    degenerate_:
        Empty or duplicate hidden states found (:class:`~effdim.em.Degeneracy`).
    n_iter_, converged_:
        EM steps of the returned start and whether it converged.
    expected_counts_:
        Expected counts of the final E-step, per family.
    em_:
        The full :class:`~effdim.em.EMResult`.
    fit_:
        The :class:`~effdim.FitResult` (tables and diagnostics).
    """

    def __init__(
        self,
        model: HLCModel | str,
        *,
        restarts: int = 5,
        seed: Any = None,
        tol: float = 1e-8,
        max_iter: int = 1000,
        prior: float | None = None,
        cs_prior: Any = None,
        mapping: dict[str, str] | None = None,
    ):
        self.model = model
        self.restarts = restarts
        self.seed = seed
        self.tol = tol
        self.max_iter = max_iter
        self.prior = prior
        self.cs_prior = cs_prior
        self.mapping = mapping

    # ------------------------------------------------------------ sklearn API
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("model", *_EM_PARAMS, "mapping")}

    def set_params(self, **params: Any) -> LatentTreeLearner:
        for k, v in params.items():
            if k not in self.get_params():
                raise InvalidArgument(f"unknown parameter {k!r} for LatentTreeLearner")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if k != "model")
        return f"LatentTreeLearner({str(self.model)!r}, {args})"

    def fit(self, X: Any, y: Any = None) -> LatentTreeLearner:
        """Fit the model to ``X`` (a :class:`~effdim.data.Dataset` or a DataFrame); return ``self``.

        Issues a :class:`effdim.em.ConvergenceWarning` when the best EM start
        did not converge or no other start reached its log-likelihood.
        """
        from .fitting import fit

        model = as_model(self.model)
        settings = EMSettings(**{k: getattr(self, k) for k in _EM_PARAMS})
        result = fit(as_dataset(X), model, settings, mapping=self.mapping, warn=False)
        result.em.warn()  # points at the caller of this method
        self.model_ = model
        self.columns_ = result.columns  # leaf -> column of X
        self.states_ = {leaf: result.data.states[j] for j, leaf in enumerate(model.observed)}
        self._set_fit(result)
        return self

    def _set_fit(self, result: Any) -> None:
        self.fit_ = result
        self.em_ = result.em
        self.params_ = result.params
        self.loglik_ = result.loglik
        scores = result.scores.to_dict()
        self.scores_ = {"loglik": scores["loglik"], **{SCORES[c].key: scores[SCORES[c].key] for c in FIT_SCORES}}
        self.ds_ = result.ds
        self.de_ = result.de
        self.n_ = result.n
        self.restarts_ = result.em.start_logliks.copy()
        self.n_best_ = result.em.n_best
        self.degenerate_ = result.em.degenerate
        self.n_iter_ = result.em.n_iter
        self.converged_ = result.em.converged
        self.expected_counts_ = result.em.expected_counts

    def reorder(self, node: str, order: Any) -> LatentTreeLearner:
        """Renumber the states of hidden ``node``: new state ``i`` is old state ``order[i]`` (0-based).

        After :meth:`fit` the states come by decreasing share (state 0 is
        the largest class); this puts them in any order the analyst prefers.
        Every table and prediction follows. Returns ``self``.
        """
        self._check_fitted()
        self._set_fit(self.fit_.relabeled(node, order))
        return self

    # -------------------------------------------------- the fit in the data's words
    def parameter_table(self):
        """Every CPT entry, in column names and category labels (:func:`effdim.profiles.parameter_table`)."""
        self._check_fitted()
        return self.fit_.parameter_table()

    def profiles(self, node: str | None = None):
        """``P(item = category | node = class)`` for every item (:func:`effdim.profiles.profiles`)."""
        self._check_fitted()
        return self.fit_.profiles(node)

    def class_shares(self):
        """``P(H = h)`` of every hidden node (:func:`effdim.profiles.class_shares`)."""
        self._check_fitted()
        return self.fit_.class_shares()

    def fit_statistics(self):
        """G2, X2, df = dc - de, p-values, entropy R2 (:func:`effdim.diagnostics.fit_statistics`)."""
        self._check_fitted()
        return self.fit_.fit_statistics()

    def bivariate_residuals(self):
        """Bivariate residuals of every pair of items (:func:`effdim.diagnostics.bivariate_residuals`)."""
        self._check_fitted()
        return self.fit_.bivariate_residuals()

    def identification(self):
        """Jacobian rank at the estimate against de (:func:`effdim.diagnostics.identification`)."""
        self._check_fitted()
        return self.fit_.identification()

    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise NotFittedError("this LatentTreeLearner is not fitted yet; call fit(data) first")

    def _patterns(self, X: Any) -> tuple[ModelData, np.ndarray, np.ndarray]:
        """ModelData of the unique rows of ``X`` and, per row of ``X``, its pattern index."""
        from .data import Dataset, encode_rows

        leaves = self.model_.observed
        codes, weights = encode_rows(X, {leaf: self.columns_[leaf] for leaf in leaves}, self.states_)
        if codes.shape[0] == 0:
            raise InvalidArgument("no rows to evaluate")
        uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        counts = np.bincount(inverse, weights=weights, minlength=uniq.shape[0])
        positive = np.where(counts > 0, counts, 1.0)  # Dataset wants positive counts; zero-weight rows stay usable
        ds = Dataset(
            columns=tuple(leaves),
            states=tuple(self.states_[leaf] for leaf in leaves),
            patterns=uniq,
            counts=positive,
            n_rows=float(positive.sum()),
            n_missing=int((uniq < 0).sum()),
            source="predict",
        )
        md = ModelData(self.model_, ds)
        # ModelData may reorder patterns: map each unique row to its position there
        where = _match_rows(md.patterns, uniq)
        return md, where[inverse], weights

    # ---------------------------------------------------------------- inference
    def predict_proba(self, X: Any, node: str | None = None) -> np.ndarray:
        """Posterior ``P(node | row)`` of a hidden ``node`` (default: the root) per row of ``X``.

        For a DataFrame: one row per row of the frame. For a
        :class:`~effdim.data.Dataset`: one row per unique pattern, in the
        order of ``X.patterns``. Missing cells are marginalised. Columns hold
        the states ``0 .. |node|-1``.
        """
        self._check_fitted()
        md, rows, _ = self._patterns(X)
        _, post = posterior(self.params_, md, node)
        return post[rows]

    def predict(self, X: Any, node: str | None = None) -> np.ndarray:
        """The most probable state of ``node`` (default: the root) per row."""
        return np.argmax(self.predict_proba(X, node), axis=1)

    def score_samples(self, X: Any) -> np.ndarray:
        """``log P(row)`` under the fitted model for every row of ``X`` (natural log)."""
        self._check_fitted()
        md, rows, _ = self._patterns(X)
        _, llp = pattern_loglik(self.params_, md)
        return llp[rows]

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-likelihood per row of ``X`` (weighted by the counts of a Dataset)."""
        self._check_fitted()
        md, rows, weights = self._patterns(X)
        _, llp = pattern_loglik(self.params_, md)
        return float(np.sum(llp[rows] * weights) / np.sum(weights))


# ------------------------------------------------------------------------- helpers
def _match_rows(patterns: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index into ``patterns`` of each row of ``rows`` (every row must occur)."""
    index = {tuple(r): i for i, r in enumerate(patterns.tolist())}
    return np.array([index[tuple(r)] for r in rows.tolist()], dtype=np.intp)
