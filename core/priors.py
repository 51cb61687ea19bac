"""Dirichlet priors on the CPT families, for the Cheeseman-Stutz score.

The Cheeseman-Stutz score (Kocka & Zhang 2002, Section 2.3) needs the
marginal likelihood of the completed data, which depends on the Dirichlet
hyper-parameters ``alpha_ijk`` of every family ``i`` (a node and its parent,
``q_i`` parent states, ``r_i`` states). The paper does not say which it used;
the choice moves CS+ from the paper's ordering to the largest model
(``docs/theory.md``, section "7. Scores and the Cheeseman-Stutz prior";
``docs/experiments.md``). Three are offered:

* ``k2:ALPHA`` (Cooper & Herskovits 1992): ``alpha_ijk = ALPHA`` on every
  cell (``k2`` alone: ``ALPHA = 1``, the uniform prior).
* ``bdeu:ESS`` (Buntine 1991; Heckerman, Geiger & Chickering 1995):
  ``alpha_ijk = ESS / (q_i r_i)``, an equivalent sample size ``ESS`` spread
  over each family's cells.
* ``jeffreys``: ``alpha_ijk = 1/2`` on every cell.

EM's ``prior = a`` (a MAP estimate, :func:`effdim.em.fit_em`) maximises the
posterior under Dirichlet(a + 1) on every cell, that is ``k2:(a + 1)``;
:func:`resolve_cs_prior` keeps the CS prior consistent with it.

>>> DirichletPrior.parse("bdeu:1").alpha(2, 2), DirichletPrior.parse("k2").alpha(5, 3)
(0.25, 1.0)
>>> str(resolve_cs_prior(None, 1.0))
'k2:2'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import InvalidArgument

__all__ = ["DirichletPrior", "DEFAULT_CS_PRIOR", "CS_PRIOR_CHOICES", "resolve_cs_prior"]

#: What the CLI's ``--cs-prior`` accepts, for help and error texts.
CS_PRIOR_CHOICES = "k2, k2:ALPHA, bdeu:ESS or jeffreys"


@dataclass(frozen=True)
class DirichletPrior:
    """A Dirichlet prior on every CPT family: ``kind`` ``"k2"``, ``"bdeu"`` or ``"jeffreys"`` and its
    ``value`` (K2: the pseudo-count per cell; BDeu: the equivalent sample size; Jeffreys: 1/2)."""

    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in ("k2", "bdeu", "jeffreys"):
            raise InvalidArgument(f"unknown CS prior {self.kind!r}; choose {CS_PRIOR_CHOICES}")
        if not (self.value > 0 and math.isfinite(self.value)):
            what = "equivalent sample size" if self.kind == "bdeu" else "pseudo-count"
            raise InvalidArgument(f"the {what} of the CS prior must be a positive number, got {self.value!r}")

    @classmethod
    def parse(cls, text: str | DirichletPrior) -> DirichletPrior:
        """``"k2"``, ``"k2:2"``, ``"bdeu:1"``, ``"jeffreys"`` (case and spaces ignored)."""
        if isinstance(text, DirichletPrior):
            return text
        raw = str(text).strip().lower().replace(" ", "")
        kind, _, number = raw.partition(":")
        if kind == "jeffreys" and not number:
            return cls("jeffreys", 0.5)
        if kind == "k2" and not number:
            return cls("k2", 1.0)
        if kind in ("k2", "bdeu") and number:
            try:
                value = float(number)
            except ValueError:
                raise InvalidArgument(f"CS prior {text!r}: {number!r} is not a number") from None
            return cls(kind, value)
        raise InvalidArgument(f"unknown CS prior {text!r}; choose {CS_PRIOR_CHOICES}")

    def alpha(self, q: int, r: int) -> float:
        """``alpha_ijk`` of a family with ``q`` parent states and ``r`` states."""
        if self.kind == "bdeu":
            return self.value / (q * r)
        return self.value

    def __str__(self) -> str:
        if self.kind == "jeffreys":
            return "jeffreys"
        return f"{self.kind}:{self.value:g}"

    @property
    def label(self) -> str:
        """How tables and the dashboard name it, e.g. ``"BDeu, ESS 1"``."""
        if self.kind == "jeffreys":
            return "Jeffreys, alpha 1/2"
        if self.kind == "bdeu":
            return f"BDeu, ESS {self.value:g}"
        return f"K2, alpha {self.value:g}"


#: The default CS prior. BDeu with equivalent sample size 1 is the one under which CS+ ranks
#: the selected cardinalities as the paper does (docs/experiments.md, "The CS prior").
DEFAULT_CS_PRIOR = DirichletPrior("bdeu", 1.0)


def resolve_cs_prior(choice: str | DirichletPrior | None, em_prior: float | None) -> DirichletPrior:
    """The CS prior to use, given the user's ``choice`` (``None``: the default) and EM's MAP ``prior``.

    A maximum-likelihood fit (``em_prior`` 0 or ``None``) takes ``choice`` or
    :data:`DEFAULT_CS_PRIOR`. A MAP fit with pseudo-count ``a`` was made under
    ``k2:(a + 1)``, and CS must use the same prior: that is the answer when
    ``choice`` is ``None``, and any other ``choice`` is refused.
    """
    if not em_prior:
        return DEFAULT_CS_PRIOR if choice is None else DirichletPrior.parse(choice)
    implied = DirichletPrior("k2", 1.0 + float(em_prior))
    if choice is None:
        return implied
    chosen = DirichletPrior.parse(choice)
    if chosen != implied:
        raise InvalidArgument(
            f"the MAP fit with prior {em_prior:g} assumes a Dirichlet({1 + float(em_prior):g}) prior on every "
            f"cell, so the CS prior must be {implied}, not {chosen}; drop one of the two"
        )
    return chosen
