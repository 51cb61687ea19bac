"""Judging a fitted model: goodness of fit with the true degrees of freedom, classification
quality, local dependence and identification at the estimate.

Goodness of fit (docs/theory.md, section 9; Agresti, *Categorical Data Analysis*, 2002)
----------------------------------------------------------------------------------------
Over the table of all ``C = prod |O_i|`` response patterns, with observed
counts ``n`` and expected counts ``m = N P(o | theta)``:

* ``G2 = 2 sum n log(n / m)`` over cells with ``n > 0``;
* ``X2 = sum (n - m)^2 / m`` over *all* cells, computed without listing the
  empty ones: ``X2 = sum_{n>0} (n - m)^2 / m + (N - sum_{n>0} m)``;
* ``df = dc - de`` with ``dc = C - 1`` (Kocka & Zhang 2002, Section 2.1) and
  the effective dimension ``de`` (Section 2.4): the model's distributions
  form a manifold of dimension ``de``, so the likelihood-ratio statistic is
  asymptotically chi-square with ``dc - de`` degrees of freedom.

What other tools report instead, both counting parameters (``ds``, poLCA's
``npar``) where ``de`` belongs, so too small (even negative) when ``de < ds``:

* ``df_standard = dc - ds``: the residual df of the full table with the
  parameters counted, the usual textbook and manual definition (Latent GOLD
  and Mplus describe their chi-square df this way; effdim has not read their
  code). For the 3-class Stouffer-Toby model it is 1; the right number is
  ``15 - 13 = 2``.
* ``df_polca = min(N, dc) - ds``: what poLCA prints as "residual degrees of
  freedom" (``resid.df <- min(ret$N, (prod(K.j) - 1)) - ret$npar`` in its
  ``R/poLCA.R``, version 1.6; ``N`` the rows it fitted, the complete rows
  by default). It equals ``df_standard`` unless the sample is smaller than
  the table: for carcinoma (N = 118, 128 cells) poLCA reports 103, 95, 87
  for 2, 3, 4 classes where ``dc - ds`` is 112, 104, 96.

When ``N < dc`` effdim still uses ``dc - de``. The likelihood-ratio
statistic is compared with the multinomial on all ``C`` cells, whose
saturated model has ``dc`` free parameters whatever the sample; the chi-square
distribution with ``dc - de`` df is its large-sample limit. poLCA's ``min``
bounds the df by the number of observations, which no asymptotic result
gives; and with fewer rows than cells most expected counts are small, so no
chi-square reference is trustworthy: the notes say so and point to the
parametric bootstrap (:func:`effdim.bootstrap.bootstrap_g2`), which needs
no df.

Missing cells: ``G2``, ``X2`` and both df use the *complete rows only*
(``n_used`` of them; expected counts ``n_used P(o)``), because the table of
complete patterns is the one the saturated model describes. Posteriors,
entropy R2 and the fit itself use every row (missing cells marginalised).

When many expected counts are small (``share_expected_below_5``), the
chi-square reference is unreliable: use the parametric bootstrap p-value
(:func:`effdim.bootstrap.bootstrap_g2`).

Classification
--------------
Entropy R2 (Ramaswamy et al. 1993) of the root's posteriors ``p_nk`` over all
``N`` rows: ``1 - sum_n sum_k -p_nk log p_nk / (N log K)``; 1 is a perfect
separation, 0 none. ``avepp[k]``: the average posterior of class ``k`` over
the rows whose modal class is ``k`` (Nagin 2005; poLCA users compute it from
``posterior``; values above 0.7 are usually read as well separated).

Bivariate residuals (Latent GOLD's BVR; Vermunt & Magidson 2005)
----------------------------------------------------------------
For observed items ``i, j``: the Pearson statistic of their observed two-way
table (rows where both are answered) against the model's two-way marginal
times that number of rows, divided by ``(|O_i| - 1)(|O_j| - 1)``. Values well
above 1 mark local dependence the hidden structure does not explain; the
HLC answer is a new hidden node over the pair (:func:`relax_pair`).

Identification at the estimate
------------------------------
``de`` is the rank of the Jacobian of ``P(O)`` at a *generic* point
(Section 2.4). A fitted estimate can sit on a special point (an empty class,
two equal classes, probabilities at 0 or 1) where the rank is lower; the
model is then not locally identified there (Latent GOLD reports this rank).
:func:`identification` computes the singular values of the Jacobian at the
estimate (:func:`effdim.rank.jacobian_at`, rows scaled to unit norm) and,
when the rank falls below ``de``, names the parameters that move along the
null directions (leverage above one half).

Which fitted quantities are unique
----------------------------------
Where ``de < ds`` the model's parameters are not identifiable anywhere: the
parameters that give the fitted distribution form a set of dimension
``ds - de`` (Kocka & Zhang 2002, Section 2.4; ``docs/theory.md``). The
fitted distribution is unique, and with it the log-likelihood, G2, X2, df
and every score; the parameters, class shares, posteriors, entropy R2 and
the profiles are not: on the Stouffer-Toby data, ``3:2,2,2,2`` (ds 14,
de 13) gives fits with the same log-likelihood within 3e-9 and class shares
from 0.584 to 0.651. :class:`Identification` then reports ``identified``
false with ``equivalent_fit_dimension = ds - de``
(:func:`non_unique_sentence`), and :func:`equivalent_share_ranges` refits
the model from other starts to show how far the shares move.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import chdtrc  # chi2's survival function, without importing scipy.stats

from .profiles import Labels

__all__ = [
    "FitStatistics",
    "fit_statistics",
    "pattern_table",
    "bivariate_residuals",
    "relax_pair",
    "Identification",
    "identification",
    "non_unique_sentence",
    "equivalent_share_ranges",
    "RANK_RTOL",
]

#: Singular values below ``RANK_RTOL * sigma_max`` count as zero at a fitted estimate
#: (EM stops at a tolerance, so exact zeros are not expected).
RANK_RTOL = 1e-6
#: Tables with more cells are not listed to count small expected counts; a bound is given instead.
MAX_CELLS = 1 << 20


#: Share of expected counts below 5 beyond which the chi-square p-values are not to be trusted.
SPARSE_SHARE = 0.2


@dataclass(frozen=True)
class FitStatistics:
    """Goodness of fit and classification quality of one fitted model (see the module docstring).

    ``df = dc - de``; ``df_standard = dc - ds`` and ``df_polca = min(N, dc) - ds``
    are what other tools report (module docstring).
    ``p_g2`` and ``p_x2`` are ``None`` when ``df <= 0``; ``p_g2_bootstrap`` is
    ``None`` until :func:`effdim.bootstrap.bootstrap_g2` fills it (``bootstrap``
    replicates). ``entropy_r2`` is ``None`` for a one-state root.
    """

    g2: float
    x2: float
    df: int
    df_standard: int
    df_polca: int
    p_g2: float | None
    p_x2: float | None
    n_used: float
    cells: int
    share_expected_below_5: float
    entropy_r2: float | None
    avepp: list
    p_g2_bootstrap: float | None = None
    bootstrap: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def sparse(self) -> bool:
        """Whether more than :data:`SPARSE_SHARE` of the expected counts are below 5, so that the chi-square
        p-values are unreliable and the bootstrap's is wanted (:func:`effdim.bootstrap.bootstrap_g2`; each face
        says how to get it: ``--bootstrap B``, the dashboard's button)."""
        return self.share_expected_below_5 > SPARSE_SHARE and self.n_used > 0

    def df_sentence(self) -> str | None:
        """One sentence on ``df`` against what other tools report when they differ, else ``None``."""
        if self.df == self.df_standard == self.df_polca:
            return None
        parts = [f"df = dc - de = {self.df} uses the effective dimension"]
        if self.df_standard != self.df:
            parts.append(f"counting parameters instead gives dc - ds = {self.df_standard}")
        if self.df_polca != self.df_standard:
            parts.append(
                f"poLCA reports min(N, dc) - ds = {self.df_polca}, since N = {self.n_used:g} is below "
                f"dc = {self.cells - 1}; effdim keeps dc - de (docs/theory.md, section 9)"
            )
        return "; ".join(parts) + "."

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; ``NaN`` (no complete row) becomes ``None``."""
        out = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}
        out["notes"] = list(self.notes)
        sentence = self.df_sentence()
        if sentence:
            out["notes"].insert(0, sentence)
        return out


def fit_statistics(params: Any, data: Any, *, ds: int, de: int) -> FitStatistics:
    """:class:`FitStatistics` of ``params`` on ``data`` (arranged for the model; see
    :func:`effdim.data.check_matches_model`), with the model's ``ds`` and ``de``."""
    from .distribution import observed_distribution
    from .em import pattern_loglik, posterior

    model = params.model
    md, llp = pattern_loglik(params, data)
    complete = ~(md.patterns < 0).any(axis=1)
    n = md.counts[complete]
    n_used = float(n.sum())
    cells = math.prod(model.card(o) for o in model.observed)
    dc = cells - 1
    notes = []
    if n_used > 0:
        m = n_used * np.exp(llp[complete])
        g2 = float(2.0 * np.sum(n * np.log(n / m)))
        x2 = float(np.sum((n - m) ** 2 / m) + max(n_used - float(m.sum()), 0.0))
    else:
        g2 = x2 = math.nan
        notes.append("no row is complete: G2 and X2 need complete rows")
    if n_used < md.n_rows:
        notes.append(
            f"G2, X2 and df use the {n_used:g} complete rows only; "
            f"{md.n_rows - n_used:g} rows with missing answers are left out of them (not out of the fit)"
        )
    if cells <= MAX_CELLS:
        expected = n_used * observed_distribution(params, max_states=MAX_CELLS).reshape(-1)
        small = float(np.mean(expected < 5))
    else:  # at most n_used / 5 cells can hold 5 or more
        small = max(0.0, 1.0 - n_used / (5.0 * cells))
    if small > SPARSE_SHARE and n_used > 0:
        notes.append(
            f"{small:.0%} of the expected counts are below 5: the chi-square p-values are unreliable; "
            "use the bootstrap p-value of G2"
        )
    df, df_standard = dc - de, dc - ds
    df_polca = min(math.floor(n_used), dc) - ds
    ok = n_used > 0
    p_g2 = float(chdtrc(df, g2)) if df > 0 and ok else None
    p_x2 = float(chdtrc(df, x2)) if df > 0 and ok else None

    _, post = posterior(params, md, model.root)
    k = post.shape[1]
    w = md.counts
    if k > 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(post > 0, post * np.log(post), 0.0).sum(axis=1)
        entropy_r2 = float(1.0 - np.sum(w * ent) / (md.n_rows * math.log(k)))
    else:
        entropy_r2 = None
    modal = np.argmax(post, axis=1)
    avepp = []
    for c in range(k):
        rows = modal == c
        mass = float(w[rows].sum())
        avepp.append(float(np.sum(w[rows] * post[rows, c]) / mass) if mass > 0 else None)
    return FitStatistics(
        g2=g2,
        x2=x2,
        df=int(df),
        df_standard=int(df_standard),
        df_polca=int(df_polca),
        p_g2=p_g2,
        p_x2=p_x2,
        n_used=n_used,
        cells=int(cells),
        share_expected_below_5=small,
        entropy_r2=entropy_r2,
        avepp=avepp,
        notes=tuple(notes),
    )


def pattern_table(params: Any, data: Any, labels: Labels | None = None) -> pd.DataFrame:
    """Observed against expected counts of every observed complete response pattern (poLCA's ``predcell``).

    One row per complete pattern that occurs, in the data's column names and
    category labels: ``observed`` ``n``, ``expected`` ``m = n_used P(o)`` (as in
    :func:`fit_statistics`), and the Pearson residual ``(n - m) / sqrt(m)``;
    largest absolute residual first. Patterns that never occur are not listed
    (their residual is ``-sqrt(m)``; they enter ``X2`` through ``N - sum m``).
    """
    from .em import pattern_loglik

    model = params.model
    labels = labels or Labels.of(model, data)
    md, llp = pattern_loglik(params, data)
    complete = ~(md.patterns < 0).any(axis=1)
    n = md.counts[complete]
    m = float(n.sum()) * np.exp(llp[complete])
    frame = pd.DataFrame(
        {
            labels.name(leaf): [labels.state(leaf, c) for c in md.patterns[complete, j]]
            for j, leaf in enumerate(model.observed)
        }
    )
    frame["observed"] = n
    frame["expected"] = m
    frame["residual"] = (n - m) / np.sqrt(m)
    return frame.sort_values("residual", key=np.abs, ascending=False, kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------ bivariate residuals
def pair_marginal(params: Any, a: str, b: str, _cache: dict | None = None) -> np.ndarray:
    """The model's two-way marginal ``P(O_a, O_b)`` of two observed leaves, shape ``(|O_a|, |O_b|)``.

    ``P(O_a, O_b) = sum_h P(H = h) P(O_a | h) P(O_b | h)`` with ``H`` the parent
    of ``O_a`` and ``P(. | H)`` taken along the tree
    (:func:`effdim.profiles.conditionals`); ``_cache`` keeps those per ``H``.
    """
    from .profiles import conditionals

    top = params.model.parent(a)
    cache = {} if _cache is None else _cache
    if top not in cache:
        cache[top] = (params.marginals()[top], conditionals(params, top))
    share, cond = cache[top]
    return (share[:, None] * cond[a]).T @ cond[b]


def bivariate_residuals(params: Any, data: Any, labels: Labels | None = None) -> pd.DataFrame:
    """Latent GOLD's bivariate residuals of every pair of observed items (module docstring).

    A symmetric DataFrame indexed both ways by the items (column names when
    ``labels`` are given); the diagonal, and pairs never answered together,
    are ``NaN``.
    """
    model = params.model
    leaves = model.observed
    patterns = np.asarray(data.patterns)
    counts = np.asarray(data.counts, dtype=np.float64)
    out = np.full((len(leaves), len(leaves)), np.nan)
    cache: dict = {}
    for i, a in enumerate(leaves):
        for j in range(i + 1, len(leaves)):
            b = leaves[j]
            ka, kb = model.card(a), model.card(b)
            both = (patterns[:, i] >= 0) & (patterns[:, j] >= 0)
            cell = patterns[both, i] * kb + patterns[both, j]
            observed = np.bincount(cell, weights=counts[both], minlength=ka * kb).reshape(ka, kb)
            if not observed.sum() > 0:
                continue  # never answered together: no residual (NaN)
            expected = observed.sum() * pair_marginal(params, a, b, cache)
            cells = expected > 0
            x2 = float(np.sum((observed[cells] - expected[cells]) ** 2 / expected[cells]))
            out[i, j] = out[j, i] = x2 / ((ka - 1) * (kb - 1))
    names = [labels.name(x) for x in leaves] if labels is not None else list(leaves)
    return pd.DataFrame(out, index=names, columns=names)


def relax_pair(model: Any, a: str, b: str, card: int = 2) -> Any:
    """The HLC move that relaxes the local dependence of leaves ``a`` and ``b``.

    A new hidden node with ``card`` states takes ``a``'s place under its
    parent and gets ``a`` and ``b`` as its children (node introduction,
    EAST; Chen et al. 2012). The new node is named ``H1``, ``H2``, ... (the
    first name not taken). Raises :class:`effdim.model.ModelError` when
    moving ``b`` would leave a hidden node as a leaf.
    """
    from .model import HLCModel, ModelError

    for leaf in (a, b):
        if leaf not in model or model.is_hidden(leaf):
            raise ModelError(f"{leaf!r} is not an observed leaf of {model}")
    if a == b:
        raise ModelError("a new hidden node needs two different leaves")
    name = next(f"H{i}" for i in range(1, len(model.nodes) + 2) if f"H{i}" not in model)
    top = model.parent(a)
    edges = [(u, v) for u, v in model.edges if v not in (a, b)]
    edges += [(top, name), (name, a), (name, b)]
    cards = {n: model.card(n) for n in model.nodes}
    cards[name] = int(card)
    return HLCModel(cards, model.hidden + [name], edges, model.root)


# ---------------------------------------------------------------------- identification
@dataclass(frozen=True)
class Identification:
    """Rank of the Jacobian at the estimate against the generic ``de`` (module docstring).

    ``null_parameters`` names groups of parameters that move along the null
    directions (filled only when ``rank < de``); ``gap`` is
    ``sigma_rank / sigma_{rank+1}`` (``inf`` at full column rank).
    """

    rank: int
    de: int
    ds: int
    gap: float
    singular_values: np.ndarray = field(repr=False)
    null_parameters: tuple[str, ...] = ()

    @property
    def unique(self) -> bool:
        """True when ``de = ds``: the model's parameters are identifiable (module docstring)."""
        return self.de >= self.ds

    @property
    def equivalent_fit_dimension(self) -> int:
        """``ds - de``: the dimension of the set of parameters that fit exactly as well (0 when unique)."""
        return max(self.ds - self.de, 0)

    @property
    def identified(self) -> bool:
        """True when the estimate is locally identified: ``de = ds`` and the rank at the estimate reaches it."""
        return self.unique and self.rank >= self.de

    def sentence(self) -> str:
        if self.identified:
            return f"Jacobian rank at the estimate {self.rank} = de = ds: locally identified"
        parts = []
        if not self.unique:
            parts.append(non_unique_sentence(self.ds, self.de))
        if self.rank < self.de:
            named = "; ".join(self.null_parameters) or "no single group of parameters stands out"
            parts.append(
                f"Jacobian rank at the estimate {self.rank} < de = {self.de}: the estimate is not locally "
                f"identified; parameters that cannot be told apart: {named}"
            )
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "de": self.de,
            "ds": self.ds,
            "identified": self.identified,
            "unique": self.unique,
            "equivalent_fit_dimension": self.equivalent_fit_dimension,
            "gap": self.gap if math.isfinite(self.gap) else None,
            "null_parameters": list(self.null_parameters),
            "text": self.sentence(),
        }


def non_unique_sentence(ds: int, de: int) -> str | None:
    """What is and is not unique in a fit when ``de < ds`` (module docstring); ``None`` when ``de = ds``.

    >>> print(non_unique_sentence(14, 13))
    not unique: de = 13 < ds = 14, so the parameters that fit equally well form a 1-dimensional set; \
the parameters, class shares, posteriors and entropy R2 are not unique (the fitted distribution, \
log-likelihood, G2 and scores are)
    """
    if de >= ds:
        return None
    return (
        f"not unique: de = {de} < ds = {ds}, so the parameters that fit equally well form a "
        f"{ds - de}-dimensional set; the parameters, class shares, posteriors and entropy R2 are not unique "
        "(the fitted distribution, log-likelihood, G2 and scores are)"
    )


def equivalent_share_ranges(em: Any, data: Any, fits: int = 4, *, seed: Any = None, agree: float = 1e-6) -> dict:
    """The range of every hidden node's class shares over fits equivalent to ``em``.

    ``em`` is an :class:`effdim.em.EMResult` of ``data``. Its model is
    refitted ``fits`` times from other random starts (``em``'s EM settings);
    the fits whose log-likelihood is within ``agree`` per row of the best
    (``em`` included) are equivalent: they give the same distribution. Returns
    ``{"fits": k, "shares": {node: [[min, max] per state]}}``, states by
    decreasing share in each fit. Meaningful where ``de < ds``; elsewhere
    the ranges collapse to points (up to EM's tolerance).
    """
    from .em import fit_em
    from .validation import check_int, spawn_seeds

    fits = check_int("equivalent fits", fits, low=1)
    settings = {"restarts": max(em.restarts, 1), "tol": em.tol or None, "prior": em.prior}
    results = [em] + [fit_em(data, em.model, seed=s, **settings) for s in spawn_seeds(seed, fits)]
    best = max(r.loglik for r in results)
    same = [r for r in results if r.loglik >= best - agree * em.n]
    shares = {}
    for node in em.model.hidden:
        table = np.array([r.params.marginals()[node] for r in same])
        shares[node] = [[float(lo), float(hi)] for lo, hi in zip(table.min(axis=0), table.max(axis=0))]
    return {"fits": len(same), "shares": shares}


def identification(params: Any, *, de: int, labels: Labels | None = None, rng: Any = 0) -> Identification:
    """:class:`Identification` of the estimate ``params`` (module docstring).

    Refused (:class:`effdim.errors.InvalidArgument`) above
    :data:`effdim.rank.FLOAT_MAX_COLUMNS` free parameters, where the SVD would
    hold up a shared server.
    """
    from .bounds import standard_dimension
    from .errors import InvalidArgument
    from .rank import FLOAT_MAX_COLUMNS, jacobian_at, parameter_labels

    model = params.model
    labels = labels or Labels.of(model)
    if standard_dimension(model) > FLOAT_MAX_COLUMNS:
        raise InvalidArgument(
            f"the rank at the estimate is not computed for more than {FLOAT_MAX_COLUMNS} "
            f"parameters (this model has {standard_dimension(model)}): the SVD would take too long"
        )
    jac = jacobian_at(params, rng)
    ds = jac.shape[1]
    norm = np.linalg.norm(jac, axis=1, keepdims=True)
    jac = jac / np.where(norm > 0, norm, 1.0)
    _, sv, vt = np.linalg.svd(jac, full_matrices=True)
    tol = sv[0] * RANK_RTOL if sv.size else 0.0
    rank = int(np.sum(sv > tol))
    gap = math.inf if rank >= sv.size else (float(sv[rank - 1] / sv[rank]) if rank and sv[rank] > 0 else math.inf)
    named: list[str] = []
    if rank < de:
        null = vt[rank:]  # rows: an orthonormal basis of the null space
        leverage = np.sum(null**2, axis=0)
        groups: dict[str, float] = {}
        for (node, u, _), lev in zip(parameter_labels(model), leverage):
            key = _group(model, labels, node, u)
            groups[key] = max(groups.get(key, 0.0), float(lev))
        named = [g for g, lev in groups.items() if lev > 0.5]
    return Identification(rank=rank, de=int(de), ds=int(ds), gap=gap, singular_values=sv, null_parameters=tuple(named))


def _group(model: Any, labels: Labels, node: str, u: int | None) -> str:
    """A readable name for the free parameters of one CPT row."""
    parent = model.parent(node)
    if parent is None:
        return f"the shares of {labels.name(node)}'s states"
    where = f"{labels.name(parent)} = {labels.state(parent, u)}"
    if model.is_hidden(node):
        return f"P({labels.name(node)} | {where})"
    return f"{where}'s item probabilities"
