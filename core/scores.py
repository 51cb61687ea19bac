"""Model-selection scores of Kocka & Zhang (2002), Section 2.3, and the one registry of them.

All scores approximate the log marginal likelihood ``log p(D | G)`` of the
data ``D`` given the model structure ``G``, evaluated at an ML or MAP
estimate ``theta`` (from :func:`effdim.em.fit_em`). Natural logarithms
throughout; ``N = |D|`` is the number of data rows (the sum of the pattern
counts); ``ds`` is the standard dimension (number of free parameters) and
``de`` the effective dimension (:func:`effdim.dimensions.dimensions`).

effdim's scale is the paper's: ``log-likelihood - penalty``, **higher is
better**. :meth:`Criterion.deviance` turns a value into the ``-2 log L +
penalty`` scale that poLCA, Mplus and Latent GOLD print (lower is better).

* log-likelihood: ``LL = log p(D | G, theta) = sum_p N(p) log P(p | theta)``
* ``BIC   = LL - ds/2 log N``                     (Schwarz 1978)
* ``BIC+  = LL - de/2 log N``                     (Geiger et al. 1996)
* ``CS    = log p(D'| G) - log p(D'| G, theta) + LL``   (Cheeseman & Stutz 1995)
* ``CS+   = CS + (ds - de)/2 log N``              (Geiger et al. 1996)
* ``AIC   = LL - ds``                             (Akaike 1973)
* ``AIC3  = LL - 3 ds/2``                         (Bozdogan 1993)
* ``SABIC = LL - ds/2 log((N + 2)/24)``           (Sclove 1987)
* ``CAIC  = LL - ds/2 (log N + 1)``               (Bozdogan 1987)

and for each penalised criterion its ``+`` version with ``de`` in place of
``ds`` (``aic_plus``, ``aic3_plus``, ``sabic_plus``, ``caic_plus``); and the
singular BIC (Drton & Plummer 2017), a score of a sweep's chain of nested
models rather than of one fit (:mod:`effdim.sbic`): ``sbic`` with the
``sBIC`` package's learning coefficients, ``sbic_plus`` with ``de``. A lone
fit's ``sbic`` and ``sbic_plus`` are NaN (``None`` in JSON) until a sweep fills
them (:func:`effdim.sbic.with_singular_bic`).
:data:`SCORES` lists them with their CLI names, labels and colours;
:func:`best` picks the best of several fits with the one tie rule.

``D'`` is the data completed by the final E-step: the expected counts
``N'_ijk`` (family ``i``: a node and its parent, every hidden family
included; ``j`` a parent state; ``k`` a state of the node; the root's family
has one ``j``). Its marginal likelihood is the Cooper-Herskovits formula
with Dirichlet hyper-parameters ``alpha_ijk`` (docs/theory.md, section 7)::

    log p(D' | G) = sum_ij [lgamma(alpha_ij) - lgamma(alpha_ij + N'_ij)]
                  + sum_ijk [lgamma(alpha_ijk + N'_ijk) - lgamma(alpha_ijk)],

``alpha_ij = sum_k alpha_ijk``, ``N'_ij = sum_k N'_ijk``, and the
completed-data log-likelihood is ``log p(D' | G, theta) = sum_ijk N'_ijk
log theta_ijk`` (``0 log 0 = 0``). ``theta`` must be the estimate that
produced ``N'`` (Chickering & Heckerman 1997), which
:class:`effdim.em.EMResult` guarantees. As in the paper, no ``log r!``
correction for relabelling hidden states is applied.

The hyper-parameters are a choice (:mod:`effdim.priors`): K2 (``alpha_ijk =
1``, the formula's usual form), BDeu (``alpha_ijk = ESS / (q_i r_i)``) or
Jeffreys (1/2). The default is BDeu with ``ESS = 1``, under which CS+ ranks
the selected cardinalities as the paper does; under K2 it picks the largest
model almost always (``docs/experiments.md``, "The CS prior").

Examples
--------
The Figure 2 model has ``ds = 41`` and ``de = 23``; with ``N = 1000`` rows and
``LL = -3000`` BIC charges 141.6 nats and BIC+ 79.4:

>>> round(bic(-3000.0, 41, 1000), 1), round(bic_plus(-3000.0, 23, 1000), 1)
(-3141.6, -3079.4)
>>> SCORES["bic+"].label, SCORES["bic+"].uses_de, SCORES["bic+"].deviance(-3079.4)
('BIC+', True, 6158.8)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidArgument
from .model import HLCModel
from .priors import DEFAULT_CS_PRIOR, DirichletPrior, resolve_cs_prior

__all__ = [
    "Criterion",
    "SCORES",
    "TIE_TOLERANCE",
    "FIT_SCORES",
    "Scores",
    "criterion",
    "fit_criterion",
    "best",
    "best_index",
    "bic",
    "bic_plus",
    "aic",
    "cooper_herskovits",
    "completed_loglik",
    "cheeseman_stutz",
    "cs_plus",
    "model_dimensions",
    "score_fit",
]


# ----------------------------------------------------------------- the registry
@dataclass(frozen=True)
class Criterion:
    """One model-selection criterion: how it is named, drawn and compared.

    ``key`` is the attribute of :class:`Scores` and the JSON key; ``name`` the
    name the CLI and the Python API accept (``"bic+"``); ``label`` what tables
    and plots print; ``uses_de`` whether the dimension it charges is ``de``
    (the paper's correction) rather than ``ds``; ``rate(n)`` the penalty per
    parameter on the log-likelihood scale (``None`` for CS, which is not a
    penalised likelihood); ``formula`` one line for help texts.
    """

    key: str
    name: str
    label: str
    color: str
    uses_de: bool
    formula: str
    rate: Callable[[float], float] | None = field(default=None, repr=False, compare=False)
    chain: bool = False

    #: Every criterion is on effdim's scale ``LL - penalty``: higher is better.
    direction = "higher"
    #: The one tie rule (:func:`best`).
    tie_rule = "the smaller model (fewer standard parameters) wins a tie within TIE_TOLERANCE per row"

    @property
    def dash(self) -> str:
        """Line style in plots: solid for the ``ds`` criteria, dashed for their ``de`` versions."""
        return "dashed" if self.uses_de else "solid"

    @staticmethod
    def deviance(value: float) -> float:
        """``value`` on the ``-2 log L + penalty`` scale of poLCA and Mplus (lower is better)."""
        return -2.0 * float(value)


def _penalised(key, name, label, color, formula, rate, plus_color):
    """A ``ds`` criterion ``LL - ds * rate(N)`` and its ``de`` twin ``LL - de * rate(N)``."""
    return (
        Criterion(key, name, label, color, False, formula.format(d="ds"), rate),
        Criterion(f"{key}_plus", f"{name}+", f"{label}+", plus_color, True, formula.format(d="de"), rate),
    )


_BIC, _BIC_PLUS = _penalised("bic", "bic", "BIC", "#1f77b4", "LL - {d}/2 log N", lambda n: math.log(n) / 2, "#17becf")
_AIC, _AIC_PLUS = _penalised("aic", "aic", "AIC", "#2ca02c", "LL - {d}", lambda n: 1.0, "#98df8a")
_AIC3, _AIC3_PLUS = _penalised("aic3", "aic3", "AIC3", "#8c564b", "LL - 3 {d}/2", lambda n: 1.5, "#c49c94")
_SABIC, _SABIC_PLUS = _penalised(
    "sabic", "sabic", "SABIC", "#9467bd", "LL - {d}/2 log((N+2)/24)", lambda n: math.log((n + 2) / 24) / 2, "#c5b0d5"
)
_CAIC, _CAIC_PLUS = _penalised(
    "caic", "caic", "CAIC", "#7f7f7f", "LL - {d}/2 (log N + 1)", lambda n: (math.log(n) + 1) / 2, "#c7c7c7"
)

#: Every criterion, by CLI name, in display order: the paper's four first.
SCORES: dict[str, Criterion] = {
    c.name: c
    for c in (
        _BIC,
        _BIC_PLUS,
        Criterion("cs", "cs", "CS", "#d62728", False, "Cheeseman-Stutz: log p(D'|G) - log p(D'|G,theta) + LL"),
        Criterion("cs_plus", "cs+", "CS+", "#ff7f0e", True, "CS + (ds - de)/2 log N"),
        _AIC,
        _AIC_PLUS,
        _AIC3,
        _AIC3_PLUS,
        _SABIC,
        _SABIC_PLUS,
        _CAIC,
        _CAIC_PLUS,
        Criterion(
            "sbic",
            "sbic",
            "sBIC",
            "#bcbd22",
            False,
            "singular BIC over the sweep, learning coefficients from ds (the sBIC package)",
            chain=True,
        ),
        Criterion(
            "sbic_plus",
            "sbic+",
            "sBIC+",
            "#dbdb8d",
            True,
            "singular BIC over the sweep, learning coefficients from de",
            chain=True,
        ),
    )
}
#: The criteria of one fit (every one but the sweep's singular BIC): what a fit, a climb or a search can use.
FIT_SCORES: tuple[str, ...] = tuple(name for name, c in SCORES.items() if not c.chain)
#: The criteria of the paper's Sections 5 and 6, in its order.
PAPER_SCORES: tuple[str, ...] = ("bic", "bic+", "cs", "cs+")
#: Scores closer than this many nats per data row are tied (EM stops at a
#: relative rise of 1e-8 per row, so smaller gaps are convergence noise).
TIE_TOLERANCE = 1e-6


def criterion(name: str) -> Criterion:
    """The :class:`Criterion` called ``name`` (CLI name such as ``"bic+"`` or key such as ``"bic_plus"``)."""
    text = str(name).strip().lower()
    found = SCORES.get(text) or next((c for c in SCORES.values() if c.key == text), None)
    if found is None:
        raise InvalidArgument(f"unknown score {name!r}; choose from {', '.join(SCORES)}")
    return found


def fit_criterion(name: str, use: str) -> Criterion:
    """:func:`criterion` for ``use`` (``"a hill climb"``), refusing a score of a sweep's chain (the sBIC).

    >>> fit_criterion("sbic+", "a hill climb")
    Traceback (most recent call last):
    ...
    effdim.errors.InvalidArgument: sBIC+ is a score of a sweep's chain of models (docs/theory.md, section 11), not of one model: a hill climb cannot use it; choose bic, bic+, cs, cs+, aic, aic+, aic3, aic3+, sabic, sabic+, caic or caic+
    """
    found = criterion(name)
    if found.chain:
        raise InvalidArgument(
            f"{found.label} is a score of a sweep's chain of models (docs/theory.md, section 11), not of one model: "
            f"{use} cannot use it; choose {', '.join(FIT_SCORES[:-1])} or {FIT_SCORES[-1]}"
        )
    return found


def best_index(values: Sequence[float], sizes: Sequence[float], n: float) -> int:
    """Position of the best of ``values`` (higher is better) under the one tie rule.

    Values within ``TIE_TOLERANCE * n`` of the top are tied; of those the one
    with the smallest ``sizes`` entry (the standard dimension) wins, then the
    earliest. NaN values never win.

    >>> best_index([-10.0, -9.0, -9.0 + 1e-9], [3, 5, 7], n=100)
    1
    """
    finite = [(v, i) for i, v in enumerate(values) if not math.isnan(float(v))]
    if not finite:
        raise InvalidArgument("no finite score to choose from")
    top = max(v for v, _ in finite)
    tol = TIE_TOLERANCE * max(float(n), 1.0)
    tied = [i for v, i in finite if v >= top - tol]
    return min(tied, key=lambda i: (sizes[i], i))


def best(fits: Iterable[Any], score: str) -> Any:
    """The fit with the best ``score`` among ``fits`` (objects with ``.scores``), by the one tie rule.

    The smaller model (fewer standard parameters ``ds``) wins a tie within
    :data:`TIE_TOLERANCE` nats per row; CLI, dashboard, searches and
    experiments all choose through here.
    """
    fits = list(fits)
    if not fits:
        raise InvalidArgument("no fits to choose from")
    key = criterion(score).key
    values = [getattr(f.scores, key) for f in fits]
    return fits[best_index(values, [f.scores.ds for f in fits], fits[0].scores.n)]


def beats(challenger: Any, incumbent: Any, score: str) -> bool:
    """Whether ``challenger`` is better than ``incumbent`` on ``score`` by more than a tie (:func:`best`)."""
    key = criterion(score).key
    tol = TIE_TOLERANCE * max(float(incumbent.scores.n), 1.0)
    return getattr(challenger.scores, key) > getattr(incumbent.scores, key) + tol


# -------------------------------------------------------------- the formulas
def bic(loglik: float, ds: int, n: float) -> float:
    """``BIC = LL - ds/2 log N`` (Section 2.3)."""
    return float(loglik) - ds * _BIC.rate(n)


def bic_plus(loglik: float, de: int, n: float) -> float:
    """``BIC+ = LL - de/2 log N``: BIC with the effective dimension (Section 2.3)."""
    return bic(loglik, de, n)


def aic(loglik: float, ds: int) -> float:
    """``AIC = LL - ds`` (half of Akaike's ``2 LL - 2 ds``, on the scale of the other scores)."""
    return float(loglik) - ds


def cooper_herskovits(counts: dict[str, np.ndarray], prior: float | str | DirichletPrior = 1.0) -> float:
    """``log p(D' | G)`` of completed data with expected counts ``N'_ijk`` (Section 2.3).

    ``counts[node]`` has shape ``(r,)`` for the root and ``(q, r)`` for a
    node with ``q`` parent states; each row is one ``j``::

        sum_ij [lgamma(alpha_ij) - lgamma(alpha_ij + N'_ij)]
        + sum_ijk [lgamma(alpha_ijk + N'_ijk) - lgamma(alpha_ijk)],

    with ``alpha_ijk`` from ``prior`` (:class:`effdim.priors.DirichletPrior`
    or its text; a number is the K2 pseudo-count, 1 in the formula above)
    and ``alpha_ij = r * alpha_ijk``.
    """
    from scipy.special import gammaln  # here, not at the top: every `effdim` command would pay its import

    prior = DirichletPrior("k2", float(prior)) if isinstance(prior, (int, float)) else DirichletPrior.parse(prior)
    total = 0.0
    for table in counts.values():
        t = np.atleast_2d(np.asarray(table, dtype=np.float64))
        q, r = t.shape
        alpha = prior.alpha(q, r)
        a_ij = r * alpha
        n_ij = t.sum(axis=1)
        total += float(np.sum(gammaln(a_ij) - gammaln(a_ij + n_ij)))
        total += float(np.sum(gammaln(alpha + t) - gammaln(alpha)))
    return total


def completed_loglik(counts: dict[str, np.ndarray], cpts: dict[str, np.ndarray]) -> float:
    """``log p(D' | G, theta) = sum_ijk N'_ijk log theta_ijk`` with ``0 log 0 = 0``."""
    total = 0.0
    for node, table in counts.items():
        n = np.asarray(table, dtype=np.float64)
        theta = np.asarray(cpts[node], dtype=np.float64)
        used = n > 0
        with np.errstate(divide="ignore"):
            total += float(np.sum(n[used] * np.log(theta[used])))
    return total


def cheeseman_stutz(
    loglik: float, counts: dict[str, np.ndarray], cpts: dict[str, np.ndarray], prior: float | str | DirichletPrior = 1.0
) -> float:
    """``CS = log p(D'|G) - log p(D'|G, theta) + log p(D|G, theta)`` (Section 2.3).

    ``counts`` are the expected counts of the E-step at ``theta`` (``cpts``)
    and ``loglik`` is ``log p(D | G, theta)`` at the same ``theta``; ``prior``
    as in :func:`cooper_herskovits`.
    """
    return cooper_herskovits(counts, prior) - completed_loglik(counts, cpts) + float(loglik)


def cs_plus(cs: float, ds: int, de: int, n: float) -> float:
    """``CS+ = CS + (ds - de)/2 log N``: CS with the effective dimension (Section 2.3)."""
    return float(cs) + (ds - de) / 2.0 * math.log(n)


def model_dimensions(model: HLCModel) -> tuple[int, int]:
    """``(ds, de)`` of ``model``: Corollary 4.1 from the cached local LC ranks.

    Neither the whole-tree Jacobian rank nor the floating-point SVD is
    computed (:func:`effdim.dimensions.dimensions` with ``direct=False``).
    """
    return _dims(model)


@functools.lru_cache(maxsize=512)
def _dims(model: HLCModel) -> tuple[int, int]:
    from .dimensions import dimensions

    report = dimensions(model, direct=False, check_float=False)
    return int(report.ds), int(report.de)


@dataclass(frozen=True)
class Scores:
    """Every score of one fitted model (natural logs, higher is better; ``n = |D|``).

    Attributes are the :data:`SCORES` keys plus ``loglik``, ``ds``, ``de``,
    ``n`` and ``cs_prior`` (the prior of CS and CS+, e.g. ``"bdeu:1"``);
    ``sbic``, ``sbic_plus`` and their ``sbic_phi`` are NaN, NaN and ``None``
    outside a sweep (:mod:`effdim.sbic`). :meth:`get` takes a CLI name or key.
    """

    loglik: float
    bic: float
    bic_plus: float
    cs: float
    cs_plus: float
    aic: float
    aic_plus: float
    aic3: float
    aic3_plus: float
    sabic: float
    sabic_plus: float
    caic: float
    caic_plus: float
    ds: int
    de: int
    n: float
    #: The Dirichlet prior behind ``cs`` and ``cs_plus`` (:class:`effdim.priors.DirichletPrior` as text).
    cs_prior: str = str(DEFAULT_CS_PRIOR)
    #: The singular BIC over the sweep this fit belongs to (:mod:`effdim.sbic`), and its Dirichlet parameter.
    sbic: float = math.nan
    sbic_plus: float = math.nan
    sbic_phi: float | None = None

    def get(self, name: str) -> float:
        """A score by name: ``loglik`` or any :data:`SCORES` name (``bic+``) or key (``bic_plus``)."""
        if str(name).strip().lower() == "loglik":
            return float(self.loglik)
        return float(getattr(self, criterion(name).key))

    def to_dict(self) -> dict[str, Any]:
        """Every field, on effdim's scale (higher is better); a score not computed (NaN) is ``None``."""
        return {k: _json_number(v) for k, v in asdict(self).items()}

    def deviance(self) -> dict[str, float | None]:
        """``-2 LL`` and every criterion on the ``-2 log L + penalty`` scale (lower is better)."""
        return {
            "minus_2_loglik": -2.0 * self.loglik,
            **{c.key: _json_number(c.deviance(getattr(self, c.key))) for c in SCORES.values()},
        }


def _json_number(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def score_fit(
    fit: Any, *, ds: int | None = None, de: int | None = None, cs_prior: str | DirichletPrior | None = None
) -> Scores:
    """All scores of an :class:`effdim.em.EMResult` (``ds``, ``de`` computed unless given).

    ``cs_prior``: the Dirichlet prior of CS (``"k2"``, ``"k2:ALPHA"``,
    ``"bdeu:ESS"``, ``"jeffreys"``; :mod:`effdim.priors`). ``None``: the
    default (:data:`effdim.priors.DEFAULT_CS_PRIOR`) for a maximum-likelihood
    fit, and for a MAP fit the prior EM used (``k2:(prior + 1)``); a MAP fit
    refuses any other.

    CS is a function of the estimate, not of the model alone: where ``de <
    ds`` the maximum-likelihood estimates form a set along which the
    completed-data marginal likelihood varies, and CS is taken at the
    estimate EM returned (``docs/theory.md``, section 7).
    """
    prior = resolve_cs_prior(cs_prior, getattr(fit, "prior", None))
    if ds is None or de is None:
        d_s, d_e = model_dimensions(fit.model)
        ds = d_s if ds is None else ds
        de = d_e if de is None else de
    n = float(fit.n)
    ll = float(fit.loglik)
    cs = cheeseman_stutz(ll, fit.expected_counts, fit.params.cpts, prior)
    values: dict[str, float] = {"cs": cs, "cs_plus": cs_plus(cs, ds, de, n)}
    for c in SCORES.values():
        if c.rate is not None:
            values[c.key] = ll - (de if c.uses_de else ds) * c.rate(n)
    return Scores(loglik=ll, **values, ds=int(ds), de=int(de), n=n, cs_prior=str(prior))
