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

from .em import EMResult, ModelData, fit_em
from .errors import InvalidArgument
from .model import HLCModel
from .nested import nested_start
from .notation import format_model
from .scores import Scores, score_fit
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

    def parameter_table(self):
        """Every CPT entry as a tidy DataFrame (:func:`effdim.profiles.parameter_table`)."""
        from .profiles import parameter_table

        return parameter_table(self.params, self.labels)

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

    def posteriors(self, nodes: list[str] | None = None):
        """Posterior membership per input row or pattern (:func:`effdim.profiles.posterior_table`)."""
        from .profiles import posterior_table

        return posterior_table(self.params, self._data(), self.labels, nodes)

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

        return fit_statistics(self.params, self._data(), ds=self.ds, de=self.de)

    def fit_statistics(self):
        """G2, X2, df = dc - de, p-values, entropy R2 (:func:`effdim.diagnostics.fit_statistics`)."""
        return self._statistics

    def pattern_table(self):
        """Observed against expected counts per response pattern (:func:`effdim.diagnostics.pattern_table`)."""
        from .diagnostics import pattern_table

        return pattern_table(self.params, self._data(), self.labels)

    @functools.cached_property
    def _residuals(self):
        from .diagnostics import bivariate_residuals

        return bivariate_residuals(self.params, self._data(), self.labels)

    def bivariate_residuals(self):
        """Bivariate residuals of every pair of items (:func:`effdim.diagnostics.bivariate_residuals`);
        computed once per fit (the dashboard asks again at every change of the node shown)."""
        return self._residuals

    @functools.cached_property
    def _identification(self):
        from .diagnostics import identification

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
        scores = self.scores.to_dict()
        n = scores["n"]
        scores["n"] = int(n) if float(n).is_integer() else n
        return {
            "model": format_model(self.model),
            "card": self.card,
            **scores,
            "unique": self.unique,
            "equivalent_fit_dimension": self.equivalent_fit_dimension,
            "restarts": self.restarts,
            "degenerate": list(self.degenerate),
        }


def fit(
    dataset: Any,
    model: HLCModel | str | int,
    settings: EMSettings | None = None,
    *,
    mapping: dict[str, str] | None = None,
    smaller: FitResult | None = None,
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
        with ``k`` classes over every column (:func:`lc_model_for`).
    settings, options:
        How EM runs (:class:`effdim.EMSettings`); ``options`` replace single
        fields (``restarts=20, seed=1``).
    mapping:
        ``{leaf: column}`` where the model's leaf names differ from the
        data's column names (:func:`effdim.data.resolve_mapping`).
    smaller:
        The fit of a nested smaller model (``model`` with one hidden
        cardinality one lower). Its solution with one hidden state split in
        two (:func:`effdim.nested.nested_start`) is one more EM start besides
        the random ones, so the log-likelihood of ``model`` ends at least as
        high as that of ``smaller`` (under maximum likelihood). Ignored when
        ``model`` is not nested that way.
    init:
        Further EM starts (:class:`~effdim.distribution.Parameters` or a list
        of them) besides the random ones.
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
    model = model_for(dataset, model)
    if isinstance(dataset, ModelData):
        columns = {leaf: leaf for leaf in model.observed}
    else:
        dataset = as_dataset(dataset)
        columns = resolve_mapping(dataset, model, mapping)
        # arranges the data once (check_matches_model), within EM's memory budget
        dataset = ModelData(model, dataset, mapping, max_bytes=max_bytes)
    starts = [] if init is None else list(init) if isinstance(init, (list, tuple)) else [init]
    split = nested_start(smaller.params if smaller is not None else None, model)
    if split is not None:
        starts.insert(0, split)
    result = fit_em(dataset, model, settings, init=starts or None, cancel=cancel, max_bytes=max_bytes)
    if warn:
        result.warn()
    return FitResult(
        model=model,
        card=None,
        scores=score_fit(result, cs_prior=settings.cs_prior),
        restarts=result.restarts_info(),
        degenerate=tuple(str(d) for d in result.degenerate),
        em=result,
        data=dataset.dataset,
        columns=columns,
    )


def model_for(dataset: Any, model: HLCModel | str | int) -> HLCModel:
    """``model`` as an :class:`~effdim.model.HLCModel`: a number of classes ``k`` is the LC model over
    every column of ``dataset`` (:func:`lc_model_for`); notation is parsed."""
    if isinstance(model, int) and not isinstance(model, bool):
        k = check_int("the number of classes", model, low=1)
        return lc_model_for(dataset.dataset if isinstance(dataset, ModelData) else dataset, k)
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
