"""The public dimension report of an LC or HLC model.

For a model ``M`` it gives the totals ``ds``, ``dc`` and ``de`` (with how
``de`` was obtained and whether it is proven), and one row per hidden node
with its local LC model's ``ds, de, dc, dp, db``, the binding bound and the
deficit ``ds - de``.

``de`` of an HLC model comes by two routes that must agree:

* **Corollary 4.1** (from Theorem 5): for a regular model,
  ``ds(M) - de(M) = sum_i ds(M_i) - de(M_i)`` over the local LC models
  ``M_i``; an irregular model has the ``de`` of its regularization (equivalent
  models, Lemma 4.1).
* **Direct rank**: the rank of the whole tree's Jacobian (Section 2.4).

Both are certified lower bounds (modular ranks, see :mod:`effdim.rank`), so
the larger wins; a direct rank *below* the Corollary 4.1 value means one route
is wrong (or its random points were unlucky) and raises
:class:`RouteDisagreement`. The upper bound is
``ds(M) - sum_i (ds(M_i) - db(M_i))`` (Theorem 4 on each local model pushed
through Corollary 4.1); ``de`` is *proven* when it meets it. The report's
``de_basis`` says which route the value rests on: the direct route is
skipped above :data:`DIRECT_ROUTE_MAX_DS`, and a ``de`` proven then rests on
Corollary 4.1 alone (docs/theory.md, section 6).

Examples
--------
Figure 2 of the paper: ``ds = 41``, local deficits 12, 3, 3, so ``de = 23``.

>>> from effdim import parse_model
>>> report = dimensions(parse_model("5(3(2,2),2,3(2,2))"), seed=0)
>>> report.ds, report.de, report.de_status, report.de_basis
(41, 23, 'proven', 'Corollary 4.1 and direct rank')
>>> [(row.lc, row.deficit) for row in report.local]
[('5:3,3,2', 12), ('3:5,2,2', 3), ('3:5,2,2', 3)]
>>> dimensions(parse_model("5(3(2,2),2,3(2,2))"), direct=False).de_basis
'Corollary 4.1 alone'
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import asdict, dataclass
from typing import Any

from .bounds import complete_dimension, lc_bounds, standard_dimension
from .model import HLCModel, ModelError
from .notation import format_model
from .rank import FLOAT_MAX_COLUMNS, RankResult, effective_dimension, float_rank, rank_cost
from .regularity import regularity_violations, regularize

__all__ = [
    "LocalDimensions",
    "DimensionReport",
    "RouteDisagreement",
    "dimensions",
    "bounds_report",
    "dimensions_cost",
    "local_dimensions",
    "lc_notation",
    "DIRECT_ROUTE_MAX_DS",
    "DIRECT",
    "BOTH",
    "COROLLARY",
]

#: Above this ds the direct (whole-tree) rank is skipped unless asked for.
DIRECT_ROUTE_MAX_DS = 4000

#: ``DimensionReport.de_basis``: the rank of the whole model's Jacobian (LC models,
#: or an HLC model whose direct rank exceeded the Corollary 4.1 value).
DIRECT = "direct rank"
#: ``de_basis``: Corollary 4.1, and the direct rank agrees.
BOTH = "Corollary 4.1 and direct rank"
#: ``de_basis``: Corollary 4.1 only; the direct route was skipped.
COROLLARY = "Corollary 4.1 alone"


class RouteDisagreement(ModelError):
    """The whole model's Jacobian rank fell below the Corollary 4.1 value.

    Both are certified lower bounds on the same ``de``, so one route is wrong,
    or every random point of the direct route was unlucky (probability at
    most its failure bound). The message names the model and both values.
    """


@dataclass(frozen=True)
class LocalDimensions:
    """Dimensions of the local LC model of one hidden node (paper, Table 1 columns).

    ``de`` and ``deficit`` are ``None`` in a :func:`bounds_report`.
    """

    hidden: str
    lc: str
    ds: int
    de: int | None
    dc: int
    dp: int
    db: int
    binding: str
    deficit: int | None
    de_status: str
    split: tuple[str, ...] | None
    dp_exact: bool

    #: The local LC table's columns (the CLI's ``dims`` and the HTML report):
    #: header and whether the column holds numbers (right-aligned).
    TABLE_COLUMNS = (
        ("hidden", False),
        ("local LC", False),
        ("ds", True),
        ("de", True),
        ("dc", True),
        ("dp", True),
        ("db", True),
        ("binding", False),
        ("ds-de", True),
        ("de status", False),
    )

    def table_row(self) -> tuple:
        """This row of the local LC table, in :attr:`TABLE_COLUMNS` order ("?" where not computed)."""
        unknown = "?"
        return (
            self.hidden,
            self.lc,
            self.ds,
            unknown if self.de is None else self.de,
            self.dc,
            self.dp,
            self.db,
            self.binding,
            unknown if self.deficit is None else self.deficit,
            self.de_status,
        )


@dataclass(frozen=True)
class DimensionReport:
    """Totals and one :class:`LocalDimensions` row per hidden node.

    ``de_direct`` is the rank of the whole model's Jacobian (``None`` when
    skipped), ``de_local_sum`` the Corollary 4.1 value (``None`` for an LC
    model, where both coincide). ``de_basis`` is the route ``de`` rests on:
    :data:`DIRECT`, :data:`BOTH` or :data:`COROLLARY` (the direct route
    skipped; ``de_method`` says why). ``upper_bound`` is the bound ``de`` is
    proven against; ``failure_bound`` bounds the probability that a
    ``probable`` ``de`` is too low. ``dp``/``db`` are set for LC models only.
    A :func:`bounds_report` has ``de = None``, ``de_status = "not computed"``
    and the reason in ``de_method``.
    """

    model: str
    regular: bool
    violations: tuple[str, ...]
    regularized: str | None
    ds: int
    de: int | None
    dc: int
    de_status: str
    de_basis: str
    de_method: str
    failure_bound: float
    upper_bound: int
    de_direct: int | None
    de_local_sum: int | None
    float_rank: int | None
    singular_gap: float | None
    local: tuple[LocalDimensions, ...]
    dp: int | None = None
    db: int | None = None

    @property
    def deficit_sum(self) -> int | None:
        """``sum_i ds(M_i) - de(M_i)`` over the rows of :attr:`local` (the model's own
        local LC models). Corollary 4.1: it equals ``ds - de`` when the model is regular.
        ``None`` in a :func:`bounds_report`."""
        if any(row.deficit is None for row in self.local):
            return None
        return sum(row.deficit for row in self.local)

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--json`` object (see README)."""
        out: dict[str, Any] = {
            "model": self.model,
            "regular": self.regular,
            "ds": self.ds,
            "de": self.de,
            "dc": self.dc,
            "de_status": self.de_status,
            "de_basis": self.de_basis,
            "de_method": self.de_method,
            "failure_bound": self.failure_bound,
            "de_direct": self.de_direct,
            "de_local_sum": self.de_local_sum,
            "deficit_sum": self.deficit_sum,
            "violations": list(self.violations),
            "regularized": self.regularized,
            "local": [
                {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(row).items()} for row in self.local
            ],
        }
        if self.dp is not None:
            out["dp"] = self.dp
            out["db"] = self.db
        return out


def lc_notation(model: HLCModel) -> str:
    """The paper's ``r:d1,...,dn`` for an LC model, observed cardinalities descending.

    Examples
    --------
    >>> lc_notation(HLCModel.parse("5(3(2,2),2,3(2,2))").local_lc("H2"))
    '3:5,2,2'
    """
    cards = sorted((model.card(o) for o in model.observed), reverse=True)
    return f"{model.card(model.root)}:{','.join(map(str, cards))}"


@functools.lru_cache(maxsize=4096)
def _lc_rank(
    hidden_card: int, cards: tuple[int, ...], upper: int, repeats: int, max_bytes: int | None = None
) -> RankResult:
    """de of the LC model ``hidden_card:cards`` (cached: results are immutable).

    The random points are seeded from the model itself, so a given LC model
    always gets the same certified value.
    """
    model = HLCModel.lc(hidden_card, cards, min_observed_card=1)
    seed = zlib.crc32(f"{hidden_card}:{cards}".encode())
    return effective_dimension(
        model, upper_bound=upper, repeats=repeats, seed=seed, check_float=False, max_bytes=max_bytes
    )


def local_dimensions(model: HLCModel, hidden: str, *, repeats: int = 2) -> LocalDimensions:
    """The dimensions of the local LC model of ``hidden`` alone (one row of :func:`dimensions`).

    Cached per ``(|H|, neighbour cardinalities)``, so a structure search that
    changes a few hidden nodes pays only for those (Corollary 4.1;
    :mod:`effdim.structure`).
    """
    return _local_row(model, hidden, repeats)


def _local_row(model: HLCModel, hidden: str, repeats: int, max_bytes: int | None = None) -> LocalDimensions:
    lc = model.local_lc(hidden)
    bounds = lc_bounds(lc)
    rank = _lc_rank(*_key(model, hidden), bounds.db, repeats, max_bytes)
    return LocalDimensions(
        hidden=hidden,
        lc=lc_notation(lc),
        ds=bounds.ds,
        de=rank.de,
        dc=bounds.dc,
        dp=bounds.dp,
        db=bounds.db,
        binding=bounds.binding,
        deficit=bounds.ds - rank.de,
        de_status=rank.status,
        split=bounds.split,
        dp_exact=bounds.dp_exact,
    )


def _lc_report(model, violations, target, local, *, repeats, seed, check_float, max_bytes) -> DimensionReport:
    """The report of an LC model: its one local row is the whole model, de its rank (Theorem 4's db the
    upper bound), computed on the regular equivalent ``target`` (Lemma 3.2) when ``model`` is irregular."""
    row = local[0]
    upper = lc_bounds(target).db
    rank = _lc_rank(*_key(target, target.root), upper, repeats, max_bytes)  # the local row's cached rank
    method = rank.method if target is model else f"{rank.method}, on the regular equivalent"
    second = _float_opinion(target, seed, max_bytes) if check_float else None
    return _report(
        model,
        violations,
        target,
        second,
        ds=standard_dimension(model),
        de=rank.de,
        de_status=rank.status,
        de_basis=DIRECT,
        de_method=method,
        failure_bound=rank.failure_bound,
        upper_bound=upper,
        de_direct=rank.de,
        de_local_sum=None,
        local=local,
        dp=row.dp,
        db=row.db,
    )


def dimensions(
    model: HLCModel,
    *,
    repeats: int = 2,
    seed: int | None = None,
    direct: bool | None = None,
    check_float: bool = True,
    max_bytes: int | None = None,
) -> DimensionReport:
    """Compute ds, dc, de (two routes) and the per-hidden-node table of ``model``.

    Parameters
    ----------
    repeats:
        Independent random points per rank that is not yet proven.
    seed:
        Seed of the direct route's random points (local LC ranks are seeded
        by the LC model itself).
    direct:
        Compute the whole-tree rank too; default: when ``ds`` is at most
        :data:`DIRECT_ROUTE_MAX_DS` (always for LC models).
    check_float:
        Add the floating-point SVD rank and its singular-value gap.
    max_bytes:
        Memory limit of each rank (default
        :data:`effdim.limits.DEFAULT_MAX_BYTES`). :func:`dimensions_cost`
        tells in advance; :func:`bounds_report` gives the closed forms of any model.

    Raises
    ------
    RouteDisagreement
        When the direct rank is below the Corollary 4.1 value.
    SizeLimitError
        Before anything is allocated, when a rank would need more than ``max_bytes``.
    """
    ds = standard_dimension(model)
    violations = regularity_violations(model)
    target = regularize(model).model if violations else model
    local = tuple(_local_row(model, h, repeats, max_bytes) for h in model.hidden)

    if model.is_lc:
        return _lc_report(
            model, violations, target, local, repeats=repeats, seed=seed, check_float=check_float, max_bytes=max_bytes
        )

    # Corollary 4.1 on the regular equivalent (the model itself when regular)
    target_rows = local if target is model else tuple(_local_row(target, h, repeats, max_bytes) for h in target.hidden)
    ds_target = standard_dimension(target)
    de_sum = ds_target - sum(r.deficit for r in target_rows)
    upper = ds_target - sum(r.ds - r.db for r in target_rows)
    fail = min(
        1.0,
        sum(
            _lc_rank(*_key(target, r.hidden), r.db, repeats, max_bytes).failure_bound
            for r in target_rows
            if r.de_status != "proven"
        ),
    )
    method = "Corollary 4.1: ds minus the sum of local deficits"
    if target is not model:
        method += " of the regular equivalent"

    if direct is None:
        direct = ds <= DIRECT_ROUTE_MAX_DS
        skipped = f"; direct rank of the whole tree skipped (ds {ds} > DIRECT_ROUTE_MAX_DS = {DIRECT_ROUTE_MAX_DS})"
    else:
        skipped = "; direct rank of the whole tree not asked for"
    rank = None
    de, basis = de_sum, COROLLARY
    if direct:
        rank = effective_dimension(
            model, upper_bound=upper, repeats=repeats, seed=seed, check_float=check_float, max_bytes=max_bytes
        )
        if rank.de < de_sum:
            raise RouteDisagreement(
                f"the rank of the whole Jacobian of {format_model(model)} is {rank.de}, below the Corollary 4.1 "
                f"value {de_sum}: both are certified lower bounds on de, so one route is wrong, or the random "
                f"points were unlucky (probability at most {rank.failure_bound:.1e}); rerun with another seed"
            )
        if rank.de > de:
            de, fail, basis = rank.de, rank.failure_bound, DIRECT
        else:
            fail, basis = min(fail, rank.failure_bound), BOTH
        method += f"; direct rank of the whole tree: {rank.de} ({rank.method})"
    else:
        method += skipped
    status = "proven" if de == upper else "probable"
    second = (rank.float_rank, rank.singular_gap) if rank else None
    return _report(
        model,
        violations,
        target,
        second,
        ds=ds,
        de=de,
        de_status=status,
        de_basis=basis,
        de_method=method,
        failure_bound=fail,
        upper_bound=upper,
        de_direct=rank.de if rank else None,
        de_local_sum=de_sum,
        local=local,
    )


def _rank_models(model: HLCModel, direct: bool | None) -> list[HLCModel]:
    """The models whose Jacobian rank :func:`dimensions` computes (local LC models, maybe the whole tree)."""
    violations = regularity_violations(model)
    target = regularize(model).model if violations else model
    models = [model.local_lc(h) for h in model.hidden]
    if target is not model:
        models += [target.local_lc(h) for h in target.hidden]
    if direct is None:
        direct = standard_dimension(model) <= DIRECT_ROUTE_MAX_DS
    if direct and not model.is_lc:
        models.append(model)
    return models


def dimensions_cost(model: HLCModel, *, direct: bool | None = None) -> tuple[int, int]:
    """``(peak bytes, multiply-adds)`` of :func:`dimensions` with this ``direct``, from closed forms.

    The peak is the largest single rank's memory, the work the sum over the
    ranks (:func:`effdim.rank.rank_cost`); cached local ranks cost nothing in
    fact, so the work is an upper estimate.

    Examples
    --------
    >>> peak, work = dimensions_cost(HLCModel.parse("5(3(2,2),2,3(2,2))"), direct=False)
    >>> peak < 2**20 and work < 10**5
    True
    """
    costs = [rank_cost(m) for m in _rank_models(model, direct)]
    return max(c.bytes for c in costs), sum(c.work for c in costs)


def bounds_report(model: HLCModel, reason: str = "") -> DimensionReport:
    """Everything :func:`dimensions` reports that needs no Jacobian: closed forms only.

    ``ds``, ``dc``, regularity, the regular equivalent and, per hidden node,
    the local LC model's ``ds, dc, dp, db`` and binding bound (Theorems 3-4);
    the upper bound on ``de`` of Corollary 4.1 pushed through Theorem 4. ``de``
    and the deficits are ``None``; ``reason`` (why ``de`` was not computed)
    goes to ``de_method``. Cheap for any model, however large its cardinalities.

    Examples
    --------
    >>> report = bounds_report(HLCModel.parse("3:1000000000,2"), "too large")
    >>> report.ds, report.dc, report.de, report.de_status
    (3000000002, 1999999999, None, 'not computed')
    """
    violations = regularity_violations(model)
    target = regularize(model).model if violations else model

    def row(m: HLCModel, hidden: str) -> LocalDimensions:
        lc = m.local_lc(hidden)
        b = lc_bounds(lc)
        return LocalDimensions(
            hidden=hidden,
            lc=lc_notation(lc),
            ds=b.ds,
            de=None,
            dc=b.dc,
            dp=b.dp,
            db=b.db,
            binding=b.binding,
            deficit=None,
            de_status="not computed",
            split=b.split,
            dp_exact=b.dp_exact,
        )

    local = tuple(row(model, h) for h in model.hidden)
    target_rows = local if target is model else tuple(row(target, h) for h in target.hidden)
    if model.is_lc:
        upper = lc_bounds(target).db
    else:
        upper = standard_dimension(target) - sum(r.ds - r.db for r in target_rows)
    lc = model.is_lc
    return _report(
        model,
        violations,
        target,
        None,
        ds=standard_dimension(model),
        de=None,
        de_status="not computed",
        de_basis="",
        de_method=reason,
        failure_bound=1.0,
        upper_bound=upper,
        de_direct=None,
        de_local_sum=None,
        local=local,
        dp=local[0].dp if lc else None,
        db=local[0].db if lc else None,
    )


def _float_opinion(model: HLCModel, seed: int | None, max_bytes: int | None) -> tuple[int, float] | None:
    """The floating-point SVD rank and its singular-value gap, when cheap enough."""
    if standard_dimension(model) > FLOAT_MAX_COLUMNS:
        return None
    result = float_rank(model, seed, max_bytes=max_bytes)
    return result.rank, result.gap


def _key(model: HLCModel, hidden: str) -> tuple[int, tuple[int, ...]]:
    """The cache key of a local LC model: ``|H|`` and its neighbours' cardinalities, descending."""
    return model.card(hidden), tuple(sorted((model.card(n) for n in model.neighbors(hidden)), reverse=True))


def _report(
    model: HLCModel, violations, target: HLCModel, second: tuple[int, float] | None, **fields: Any
) -> DimensionReport:
    """The report of ``model``: ``fields`` are :class:`DimensionReport` fields; the
    rest derive from the model, its violations, its regular ``target`` and the
    float ``second`` opinion. A proven ``de`` has failure bound 0."""
    if fields["de_status"] == "proven":
        fields["failure_bound"] = 0.0
    return DimensionReport(
        model=format_model(model),
        regular=not violations,
        violations=tuple(v.message for v in violations),
        regularized=None if target is model else format_model(target),
        dc=complete_dimension(model),
        float_rank=second[0] if second else None,
        singular_gap=second[1] if second else None,
        **fields,
    )
