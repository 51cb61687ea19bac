"""How every EM fit runs: one frozen, checked settings object.

:class:`EMSettings` holds what :func:`effdim.fit`, :func:`effdim.sweep`,
:func:`effdim.hill_climb`, :func:`effdim.learn_structure`, the bootstrap tests
(:mod:`effdim.bootstrap`) and the studies (:mod:`effdim.experiments`) pass to
EM (:func:`effdim.em.fit_em`): the random starts and their pruning, the seed,
the convergence tests, the MAP prior and the prior of CS and CS+. Each value
is checked once, when the object is made, in the words a user knows it by; an
entry point takes ``settings=EMSettings(...)`` or the same fields as keyword
options (:meth:`EMSettings.of`), never a hand-made list of its own.

>>> from effdim import EMSettings
>>> EMSettings(restarts=20, seed=1).restarts
20
>>> EMSettings(restarts=-1)
Traceback (most recent call last):
...
effdim.errors.InvalidArgument: restarts must be at least 0, got -1
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .errors import InvalidArgument
from .priors import DirichletPrior, resolve_cs_prior
from .sbic import check_phi
from .validation import check_int, check_number

__all__ = ["EMSettings"]


@dataclass(frozen=True)
class EMSettings:
    """The settings of EM with restarts (:func:`effdim.em.fit_em`) and of the scores it feeds.

    Attributes
    ----------
    restarts:
        Random starts (every CPT row uniform on its simplex); 0 only where
        EM is given starts of its own (``init`` of :func:`effdim.em.fit_em`).
    seed:
        Seed (an ``int``), :class:`numpy.random.Generator` or ``None`` (fresh
        entropy) for the starts; a search spawns one stream per fit from it.
    tol:
        Convergence tolerance on the rise of the objective per data row in
        one EM step. ``None``: no test, every start runs ``max_iter`` steps.
    param_tol:
        Convergence also needs the parameters within this distance of EM's
        fixed point where they are identifiable (:mod:`effdim.em.iteration`).
        ``None``: the log-likelihood test alone.
    max_iter:
        Maximum EM steps of any start, pruning stages included.
    prior:
        ``None`` or 0: maximum likelihood. ``a > 0``: ``a`` pseudo-counts per
        CPT cell (MAP under Dirichlet(a + 1)).
    cs_prior:
        Dirichlet prior of CS and CS+ (``"k2"``, ``"bdeu:1"``, ``"jeffreys"``
        or a :class:`~effdim.priors.DirichletPrior`; ``None``: the default,
        or the MAP prior when ``prior`` is set: :func:`effdim.priors.resolve_cs_prior`).
    prune, prune_steps:
        Prune the starts (Chickering & Heckerman 1997; ``docs/theory.md``,
        section 8): run all ``prune_steps`` steps, keep the better half,
        double the steps, until one start remains.
    accelerate:
        SQUAREM cycles (:mod:`effdim.squarem`) instead of plain EM steps.
    agree_tol:
        Starts within this of the best log-likelihood count as reaching it;
        ``None``: ``max(1e-3, 100 * tol * |D|)``.
    mass_tol:
        A hidden state with less probability is flagged empty; ``None``:
        ``min(1e-3, 1 / |D|)``.
    dup_tol:
        Two hidden states whose children's rows all differ by at most this
        in total variation are flagged duplicates.
    sbic_phi:
        The Dirichlet parameter ``phi`` of the singular BIC a sweep computes
        (:mod:`effdim.sbic`); ``None``: the ``sBIC`` package's default ``(d1 +
        1) / 2``, ``d1`` the parameters one state of the swept node adds.
    """

    restarts: int = 5
    seed: Any = None
    tol: float | None = 1e-8
    param_tol: float | None = 1e-6
    max_iter: int = 1000
    prior: float | None = None
    cs_prior: str | DirichletPrior | None = None
    prune: bool = True
    prune_steps: int = 50
    accelerate: bool = True
    agree_tol: float | None = None
    mass_tol: float | None = None
    dup_tol: float = 1e-3
    sbic_phi: float | None = None

    def __post_init__(self) -> None:
        fix = object.__setattr__
        fix(self, "restarts", check_int("restarts", self.restarts, low=0))
        for name in ("tol", "param_tol", "agree_tol", "mass_tol"):
            value = getattr(self, name)
            fix(self, name, None if value is None else check_number(name, value, low=0))
        fix(self, "max_iter", check_int("max_iter", self.max_iter, low=0))
        fix(self, "prior", check_number("prior", self.prior, low=0) if self.prior else None)
        fix(self, "prune_steps", check_int("prune_steps", self.prune_steps, low=1))
        fix(self, "dup_tol", check_number("dup_tol", self.dup_tol, low=0))
        for name in ("prune", "accelerate"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgument(f"{name} must be True or False, got {getattr(self, name)!r}")
        resolve_cs_prior(self.cs_prior, self.prior)  # refuse a bad or contradictory prior now
        if self.sbic_phi is not None:
            fix(self, "sbic_phi", check_phi(self.sbic_phi))

    @property
    def cs_prior_resolved(self) -> DirichletPrior:
        """The prior CS and CS+ use (:func:`effdim.priors.resolve_cs_prior`)."""
        return resolve_cs_prior(self.cs_prior, self.prior)

    @classmethod
    def of(cls, settings: EMSettings | None = None, **options: Any) -> EMSettings:
        """``settings`` (default: the defaults) with the fields named in ``options`` replaced.

        An unknown option is refused naming it and the known ones, so a typo
        (``restart=20``) is never silently ignored.

        >>> EMSettings.of(None, restarts=3).restarts
        3
        >>> EMSettings.of(None, restart=3)
        Traceback (most recent call last):
        ...
        effdim.errors.InvalidArgument: unknown EM setting 'restart'; the settings are: restarts, seed, tol, param_tol, max_iter, prior, cs_prior, prune, prune_steps, accelerate, agree_tol, mass_tol, dup_tol, sbic_phi
        """
        if settings is not None and not isinstance(settings, EMSettings):
            raise InvalidArgument(f"settings must be an EMSettings, got {type(settings).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        for key in options:
            if key not in names:
                raise InvalidArgument(f"unknown EM setting {key!r}; the settings are: {', '.join(names)}")
        base = settings if settings is not None else cls()
        return dataclasses.replace(base, **options) if options else base

    def with_seed(self, seed: Any) -> EMSettings:
        """These settings with another seed (a search gives each fit its own stream)."""
        return dataclasses.replace(self, seed=seed)

    def to_json(self) -> dict[str, Any]:
        """The settings a user can repeat, as JSON values (the seed only when it is an ``int``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["seed"] = self.seed if isinstance(self.seed, int) else None
        out["cs_prior"] = str(self.cs_prior_resolved)
        return out
