"""Fitting one model to data: :func:`fit` and its result, :class:`FitResult`.

:func:`fit` runs EM with restarts (:func:`effdim.em.fit_em`, settings in
:class:`effdim.EMSettings`) and scores the estimate with every criterion of
:mod:`effdim.scores` (Section 2.3 of Kocka & Zhang 2002: BIC with ds, BIC+
with the exact de, CS, CS+, ...). The result keeps the data it was fitted to,
so its tables and diagnostics speak in the data's own column names and
category labels.

>>> import effdim
>>> result = effdim.fit(effdim.datasets.load("stouffer-toby"), 2, seed=0)
>>> result.model.card("X"), result.ds, result.de
(2, 9, 9)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from .casedata import CaseData, arrange
from .em import EMResult, ModelData, fit_em
from .errors import InvalidArgument
from .formula import Formula, parse_formula
from .model import HLCModel
from .nested import nested_start
from .notation import format_model
from .scores import Scores, model_dimensions, score_fit
from .settings import EMSettings
from .validation import as_dataset, as_model, check_int

__all__ = ["FitResult", "fit", "lc_model_for", "model_for"]


@dataclass(frozen=True)
class FitResult:
    """One fitted and scored model.

    ``card`` is the swept cardinality (``None`` outside a sweep); ``scores``
    every criterion of :mod:`effdim.scores` (natural logs, higher is
    better); ``restarts`` summarises the EM starts
    (:meth:`effdim.em.EMResult.restarts_info`); ``degenerate`` lists empty or
    duplicate hidden states as sentences.

    The fitted model in the data's own words and its diagnostics:
    ``data`` is the dataset arranged for the model
    (:func:`effdim.data.check_matches_model`) and ``columns`` maps each leaf
    to its data column; :meth:`parameter_table`, :meth:`profiles`,
    :meth:`class_shares`, :meth:`posteriors` (:mod:`effdim.profiles`) and
    :meth:`fit_statistics`, :meth:`pattern_table`, :meth:`bivariate_residuals`,
    :meth:`identification` (:mod:`effdim.diagnostics`) read them, and
    :meth:`distal` relates the classes to variables left out of the model
    (:mod:`effdim.threestep`). Hidden states come by decreasing share;
    :meth:`relabeled` reorders them.
    """

    model: HLCModel
    card: int | None
    scores: Scores
    restarts: dict = field(compare=False)
    degenerate: tuple[str, ...] = ()
    em: EMResult | None = field(default=None, repr=False, compare=False)
    data: Any = field(default=None, repr=False, compare=False)
    columns: dict = field(default_factory=dict, repr=False, compare=False)
    case: CaseData | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------- covariates, weights, standard errors
    @property
    def coefficients(self):
        """A latent class regression's coefficients, ``(design columns, classes - 1)``; ``None`` without
        covariates (:mod:`effdim.regression`)."""
        return None if self.em is None else self.em.coefficients

    @property
    def design(self):
        """A regression's :class:`effdim.formula.Design` (its terms' names, reference categories); ``None``
        without covariates."""
        return None if self.case is None else self.case.design

    def model_data(self):
        """EM's :class:`effdim.em.ModelData` of this fit (with a regression's design)."""
        if self.case is not None:
            return self.case.model_data(self.model)
        return ModelData(self.model, self._data())

    def standard_errors(self, method: str | None = None):
        """Standard errors of every probability, share and coefficient
        (:func:`effdim.standard_errors.standard_errors`); ``method`` ``"observed"``, ``"empirical"`` or
        ``"robust"``, by default ``robust`` with sampling weights, else ``observed``. Computed once per
        method."""
        method = method or ("robust" if self.case is not None and self.case.weights else "observed")
        cache = self.__dict__.setdefault("_standard_errors", {})
        if method not in cache:
            from .standard_errors import standard_errors

            cache[method] = standard_errors(
                self.params,
                self.model_data(),
                method=method,
                coefficients=self.coefficients,
                squares=None if self.case is None else self.case.squares,
            )
        return cache[method]

    def coefficient_table(self, method: str | None = None, *, level: float = 0.95):
        """The regression's coefficients with standard errors, ``z``, ``p`` and odds ratios
        (:func:`effdim.regression.coefficient_table`)."""
        from .regression import coefficient_table

        self._regression("a coefficient table")
        return coefficient_table(self.design, self.coefficients, self.standard_errors(method), level=level)

    def probability_curves(self, points: int = 25) -> list:
        """The class probabilities along each covariate, the others held at their mean or reference
        (:func:`effdim.regression.curves`): what the report and the dashboard draw."""
        from .regression import curves

        self._regression("class probabilities along a covariate")
        return curves(self.design, self.coefficients, self.case.covariate_values, self.case.data.counts, points)

    def _regression(self, what: str) -> None:
        if self.coefficients is None:
            raise InvalidArgument(f"{what} needs a fit with covariates (effdim.fit(..., covariates='AGE + SEX'))")

    def _no_regression(self, what: str) -> None:
        if self.coefficients is not None:
            raise InvalidArgument(
                f"{what} is for models without covariates; this fit is a latent class regression on "
                f"{self.design.formula}: read its coefficients (coefficient_table) and compare it with the fit "
                "without covariates by their log-likelihoods"
            )

    @property
    def params(self):
        """The fitted :class:`effdim.distribution.Parameters`."""
        return None if self.em is None else self.em.params

    # ------------------------------------------------------ in the data's words
    @functools.cached_property
    def labels(self):
        """:class:`effdim.profiles.Labels`: column names and category labels of the leaves."""
        from .profiles import Labels

        return Labels.of(self.model, self.data, self.columns)

    def parameter_table(self, se: bool | str = False, *, level: float = 0.95):
        """Every CPT entry as a tidy DataFrame (:func:`effdim.profiles.parameter_table`); with ``se`` (``True``
        or a method of :meth:`standard_errors`) each entry's standard error and ``level`` interval on the
        probability scale, or why it has none."""
        from .profiles import parameter_table

        errors = None if se is False else self.standard_errors(None if se is True else se)
        return parameter_table(self.params, self.labels, errors, level=level)

    def profiles(self, node: str | None = None):
        """``P(item = category | node = class)`` for every item (:func:`effdim.profiles.profiles`)."""
        from .profiles import profiles

        return profiles(self.params, self.labels, node)

    def class_shares(self):
        """``P(H = h)`` of every hidden node (:func:`effdim.profiles.class_shares`)."""
        from .profiles import class_shares

        return class_shares(self.params, self.labels)

    def parameters_json(self) -> dict:
        """The CPTs keyed by column names and category labels (:func:`effdim.profiles.parameters_json`)."""
        from .profiles import parameters_json

        return parameters_json(self.params, self.labels)

    def posteriors(self, nodes: list[str] | None = None, *, ids: Any = None):
        """Posterior membership per input row or pattern (:func:`effdim.profiles.posterior_table`); in a
        regression each row under its own class probabilities, a row left out (a missing covariate or
        weight) with empty posteriors. ``ids``: the identifier columns of the rows
        (:attr:`effdim.reading.Loaded.ids`), put first, so the table merges back into the file
        (:func:`effdim.profiles.with_ids`)."""
        from .profiles import posterior_table, with_ids

        if self.case is None:
            return with_ids(posterior_table(self.params, self._data(), self.labels, nodes), ids)
        if self.coefficients is None:
            posts = None
        else:
            from .regression import pattern_posteriors

            posts = pattern_posteriors(self.em, self.model_data())
        table = posterior_table(
            self.params, self._data(), self.labels, nodes, pattern_posteriors=posts, rows=self.case.pattern_of_row
        )
        return with_ids(table, ids)

    def starts_sentence(self) -> str:
        """EM's starts in words, what each counts (:func:`effdim.em.result.starts_sentence`): every face says it
        alike."""
        from .em.result import starts_sentence

        return starts_sentence(self.restarts)

    def classification(self, node: str | None = None):
        """The modal class of every row against its posteriors, and the classification error
        (:func:`effdim.classification.classification_table`; ``node`` default: the root)."""
        from .classification import classification_table

        return classification_table(self, node)

    def distal(self, data: Any, outcomes: Any, **options: Any) -> list:
        """Class-specific means or probabilities of variables left out of the model, by the three-step
        method (:func:`effdim.threestep.distal_outcomes`: ``data`` the data of this fit with the outcome
        columns; ``method="bch"``, ``"ml"``, ``"modal"``; ...)."""
        from .threestep import distal_outcomes

        return distal_outcomes(self, data, outcomes, **options)

    def relabeled(self, node: str, order: Iterable[int]) -> FitResult:
        """The same fit with hidden ``node``'s states renumbered: new state ``i`` is old ``order[i]``
        (0-based; :meth:`effdim.em.EMResult.relabeled`)."""
        em = self.em.relabeled(node, list(order))
        return replace(self, em=em, degenerate=tuple(str(d) for d in em.degenerate))

    # ------------------------------------------------------------- diagnostics
    @functools.cached_property
    def _statistics(self):
        from .diagnostics import fit_statistics

        self._no_regression("The fit statistics of the answer patterns")
        return fit_statistics(self.params, self._data(), ds=self.ds, de=self.de)

    def fit_statistics(self):
        """G2, X2, df = dc - de, p-values, entropy R2 (:func:`effdim.diagnostics.fit_statistics`)."""
        return self._statistics

    def pattern_table(self):
        """Observed against expected counts per response pattern (:func:`effdim.diagnostics.pattern_table`)."""
        from .diagnostics import pattern_table

        self._no_regression("The table of observed and expected answer patterns")
        return pattern_table(self.params, self._data(), self.labels)

    @functools.cached_property
    def _residuals(self):
        from .diagnostics import bivariate_residuals

        self._no_regression("The bivariate residuals")
        return bivariate_residuals(self.params, self._data(), self.labels)

    def bivariate_residuals(self):
        """Bivariate residuals of every pair of items (:func:`effdim.diagnostics.bivariate_residuals`);
        computed once per fit (the dashboard asks again at every change of the node shown)."""
        return self._residuals

    @functools.cached_property
    def _identification(self):
        from .diagnostics import identification

        self._no_regression("The identification check by the Jacobian's rank")
        return identification(self.params, de=self.de, labels=self.labels)

    def identification(self):
        """Jacobian rank at the estimate against de (:func:`effdim.diagnostics.identification`); computed
        once per fit, as the residuals (an SVD of the Jacobian)."""
        return self._identification

    @property
    def unique(self) -> bool:
        """Whether the parameters, class shares and posteriors are unique: ``de = ds``
        (:mod:`effdim.diagnostics`, "Which fitted quantities are unique"). No computation."""
        return self.de >= self.ds

    @property
    def equivalent_fit_dimension(self) -> int:
        """``ds - de``: the dimension of the set of parameters that fit exactly as well (0 when unique)."""
        return max(self.ds - self.de, 0)

    def non_unique_sentence(self) -> str | None:
        """What is not unique in this fit, as one sentence; ``None`` when ``de = ds``."""
        from .diagnostics import non_unique_sentence

        return non_unique_sentence(self.ds, self.de)

    def equivalent_share_ranges(self, fits: int = 4, *, seed: Any = None) -> dict:
        """The class shares' range over equivalent refits (:func:`effdim.diagnostics.equivalent_share_ranges`)."""
        from .diagnostics import equivalent_share_ranges

        self._no_regression("The share ranges over equivalent fits")
        return equivalent_share_ranges(self.em, self._data(), fits, seed=seed)

    def _data(self):
        if self.data is None:
            raise InvalidArgument("this fit does not keep its data; fit it with effdim.fit")
        return self.data

    @property
    def loglik(self) -> float:
        return self.scores.loglik

    @property
    def ds(self) -> int:
        return self.scores.ds

    @property
    def de(self) -> int:
        return self.scores.de

    @property
    def n(self) -> float:
        return self.scores.n

    def score(self, name: str) -> float:
        """A score by name: ``loglik`` or any name of :data:`effdim.scores.SCORES`."""
        return self.scores.get(name)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``model`` (notation), ``card``, every score of
        :class:`effdim.scores.Scores` (``loglik``, ``bic``, ``bic_plus``, ...,
        ``ds``, ``de``, ``n``), ``unique`` and ``equivalent_fit_dimension``
        (``ds - de``: parameters, shares and posteriors are not unique when
        it is above 0), ``restarts`` and ``degenerate``."""
        scores = {k: (None if isinstance(v, float) and v != v else v) for k, v in self.scores.to_dict().items()}
        n = scores["n"]
        scores["n"] = int(n) if float(n).is_integer() else n
        out = {
            "model": format_model(self.model),
            "card": self.card,
            **scores,
            "unique": self.unique,
            "equivalent_fit_dimension": self.equivalent_fit_dimension,
            "restarts": self.restarts,
            "degenerate": list(self.degenerate),
        }
        if self.case is not None:
            out["rows"] = self.rows_json()
        return out

    def rows_json(self) -> dict:
        """Which rows the fit used (``n``, the ``N`` of the scores), which it left out and why, and the
        weight column; for fits with covariates or weights."""
        case = self.case
        whole = lambda x: int(x) if float(x).is_integer() else x  # noqa: E731
        return {
            "n_input": whole(case.n_input),
            "n_used": whole(case.n_rows),
            "left_out_missing_covariate": whole(case.n_dropped_covariates),
            "left_out_missing_or_zero_weight": whole(case.n_dropped_weights),
            "weights": case.weights,
        }

    def covariates_json(self, method: str | None = None) -> dict:
        """``fit --json``'s ``covariates`` (:func:`effdim.regression.coefficients_json`)."""
        from .regression import coefficients_json

        self._regression("covariates_json")
        root = self.model.root
        states = [self.labels.state(root, h) for h in range(self.model.card(root))]
        return coefficients_json(
            self.design, self.coefficients, self.standard_errors(method), node=self.labels.name(root), states=states
        )

    def standard_errors_json(self, method: str | None = None) -> dict:
        """``fit --json``'s ``params_se``: the standard errors shaped as :meth:`parameters_json`
        (``null`` where there is none), ``flags`` saying why for those, the ``method`` and ``notes``."""
        from .profiles import standard_errors_json

        out = standard_errors_json(self.standard_errors(method), self.params, self.labels)
        if not self.em.converged:
            out["notes"].append(
                "EM stopped before it converged: these standard errors are taken where it stopped, not at the maximum"
            )
        return out


def fit(
    dataset: Any,
    model: HLCModel | str | int,
    settings: EMSettings | None = None,
    *,
    covariates: str | Formula | None = None,
    weights: str | None = None,
    mapping: dict[str, str] | None = None,
    init: Any = None,
    cancel: Any = None,
    warn: bool = True,
    max_bytes: int | None = None,
    **options: Any,
) -> FitResult:
    """Fit ``model`` to ``dataset`` by EM and score it.

    Parameters
    ----------
    dataset:
        A :class:`effdim.data.Dataset` (:func:`effdim.read_data`), a pandas
        DataFrame, or a :class:`effdim.em.ModelData` prepared for ``model``.
    model:
        An :class:`~effdim.model.HLCModel`, its notation (``"3:2,2,2,2"``,
        ``"5(3(2,2),2,3(2,2))"``), or a number of classes ``k``: the LC model
        with ``k`` classes over every column (:func:`lc_model_for`) but the
        covariates and the weights.
    settings, options:
        How EM runs (:class:`effdim.EMSettings`); ``options`` replace single
        fields (``restarts=20, seed=1``).
    covariates:
        A formula of data columns left out of the model (``"PARTY"``,
        ``"PARTY * AGE"``, ``"C(GPA) + AGE"``; :mod:`effdim.formula`): a latent
        class regression, the root's classes a multinomial logit on them
        (:mod:`effdim.regression`, :attr:`FitResult.coefficients`). Rows with a
        missing covariate are left out and counted.
    weights:
        A column of sampling weights (not frequency counts): the fit maximises
        the weighted pseudo-log-likelihood, the weights rescaled to sum to the
        rows used, the ``N`` of every score (:mod:`effdim.casedata`); standard
        errors are then robust (:meth:`FitResult.standard_errors`).
    mapping:
        ``{leaf: column}`` where the model's leaf names differ from the
        data's column names (:func:`effdim.data.resolve_mapping`).
    init:
        Further EM starts besides the random ones:
        :class:`~effdim.distribution.Parameters`, a list of them, or the
        :class:`FitResult` of a nested smaller model (``model`` with one hidden
        cardinality one lower), whose solution with one hidden state split in
        two (:func:`effdim.nested.nested_start`) is the start, so the
        log-likelihood of ``model`` ends at least as high as the smaller one's
        (under maximum likelihood; ignored when ``model`` is not nested so).
    cancel:
        A ``threading.Event``: :class:`effdim.em.Cancelled` is raised at the
        next EM step once it is set.
    warn:
        Issue a :class:`effdim.em.ConvergenceWarning` when the best start did
        not converge or no other start reached it (sweeps and climbs turn it
        off: their tables show the starts at the best).
    max_bytes:
        EM's memory budget (:func:`effdim.em.fit_em`).
    """
    from .data import resolve_mapping

    settings = EMSettings.of(settings, **options)
    case = None
    if covariates is not None or weights is not None:
        if isinstance(dataset, ModelData):
            raise InvalidArgument("covariates and weights need the data, not a ModelData")
        formula = parse_formula(covariates) if isinstance(covariates, str) else covariates
        leave_out = [*(formula.columns if formula is not None else ()), *([weights] if weights else [])]
        dataset = as_dataset(dataset, unlimited=leave_out)
        model = model_for(dataset, model, leave_out=leave_out)
        case = arrange(dataset, model, covariates=formula, weights=weights, mapping=mapping)
        columns = case.columns
        dataset = case.model_data(model, max_bytes=max_bytes)
    elif isinstance(dataset, ModelData):
        model = model_for(dataset, model)
        columns = {leaf: leaf for leaf in model.observed}
    else:
        dataset = as_dataset(dataset)
        model = model_for(dataset, model)
        columns = resolve_mapping(dataset, model, mapping)
        # arranges the data once (check_matches_model), within EM's memory budget
        dataset = ModelData(model, dataset, mapping, max_bytes=max_bytes)
    result = fit_em(dataset, model, settings, init=_starts(init, model), cancel=cancel, max_bytes=max_bytes)
    if case is not None:  # the rows used, exactly (rescaled weights sum to it up to rounding)
        result = replace(result, n=case.n_rows)
    if warn:
        result.warn()
    return FitResult(
        model=model,
        card=None,
        scores=_scores(result, settings, dataset),
        restarts=result.restarts_info(),
        degenerate=tuple(str(d) for d in result.degenerate),
        em=result,
        data=dataset.dataset,
        columns=columns,
        case=case,
    )


def _starts(init: Any, model: HLCModel) -> list | None:
    """EM's extra starts from ``init`` (module :func:`fit`): a smaller fit becomes its split solution."""
    given = [] if init is None else list(init) if isinstance(init, (list, tuple)) else [init]
    starts = []
    for start in given:
        if isinstance(start, FitResult):
            split = nested_start(start.params, model)
            if split is not None:
                starts.append(split)
        else:
            starts.append(start)
    return starts or None


def _scores(result: EMResult, settings: EMSettings, md: ModelData) -> Scores:
    """Every score; a regression counts its coefficients beyond the intercepts in ``ds`` and ``de``
    (``(p - 1)(k - 1)``, identified where the design has full rank and the classes are), and has no CS or
    CS+ (their Dirichlet prior on the root has no counterpart for coefficients): NaN."""
    if result.coefficients is None:
        return score_fit(result, cs_prior=settings.cs_prior)
    ds, de = model_dimensions(result.model)
    extra = (result.coefficients.shape[0] - 1) * result.coefficients.shape[1]
    scores = score_fit(result, ds=ds + extra, de=de + extra, cs_prior=settings.cs_prior)
    return replace(scores, cs=float("nan"), cs_plus=float("nan"))


def model_for(dataset: Any, model: HLCModel | str | int, leave_out: Iterable[str] = ()) -> HLCModel:
    """``model`` as an :class:`~effdim.model.HLCModel`: a number of classes ``k`` is the LC model over
    every column of ``dataset`` but those in ``leave_out`` (:func:`lc_model_for`); notation is parsed."""
    if isinstance(model, int) and not isinstance(model, bool):
        k = check_int("the number of classes", model, low=1)
        data = as_dataset(dataset.dataset if isinstance(dataset, ModelData) else dataset)
        leave_out = [c for c in leave_out if c in data.columns]
        if leave_out:
            data = data.subset([c for c in data.columns if c not in leave_out])
        return lc_model_for(data, k)
    return as_model(model)


def lc_model_for(dataset: Any, card: int = 2) -> HLCModel:
    """The LC model ``card : |O_1|, ..., |O_n|`` over all columns of ``dataset``.

    Leaves are named after the columns when the names are valid node names,
    else ``O1..On`` (matched to the columns by position).
    """
    from .model import NAME_PATTERN

    dataset = as_dataset(dataset)
    columns = list(dataset.columns)
    cards = list(dataset.cardinalities)
    names = columns if all(NAME_PATTERN.match(c) for c in columns) else None
    taken = set(names or [f"O{i + 1}" for i in range(len(columns))])
    hidden = next(h for h in ("X", "H", "H1", "Latent", "_X") if h not in taken)
    return HLCModel.lc(card, cards, hidden_name=hidden, observed_names=names)
