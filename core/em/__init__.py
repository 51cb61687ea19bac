"""Expectation-maximisation for LC and HLC models (Kocka & Zhang 2002, Section 2.3).

The scores of Section 2.3 need the maximum-likelihood (ML) or maximum a
posteriori (MAP) estimate of the parameters of a model with hidden variables,
which the paper obtains with EM. This package runs EM on *any* HLC tree, not
only on LC models. Its modules, one concept each:

* :mod:`effdim.em.design`: the data arranged for one model
  (:class:`ModelData`: unique patterns, counts, the block one-hot design);
* :mod:`effdim.em.blocks`: how the design groups columns into blocks;
* :mod:`effdim.em.memory`: EM's memory, estimated and checked before
  anything is allocated;
* :mod:`effdim.em.products`: matrix products kept off threaded BLAS;
* :mod:`effdim.em.state`: the parameters of a batch of starts;
* :mod:`effdim.em.estep`: the exact E-step by message passing;
* :mod:`effdim.em.kernel`: its compiled pass over the patterns, on every core;
* :mod:`effdim.em.mstep`: the M-step (ML or MAP with pseudo-counts);
* :mod:`effdim.em.iteration`: plain EM or SQUAREM cycles, and when to stop;
* :mod:`effdim.em.result`: :class:`EMResult`, :class:`Degeneracy`,
  :class:`ConvergenceWarning`;
* :mod:`effdim.em.driver`: :func:`fit_em` (arguments, starts, restarts with
  pruning);
* :mod:`effdim.em.queries`: quantities at one given parameter point
  (:func:`e_step`, :func:`loglikelihood`, :func:`posterior`, ...).

Natural logarithms throughout.
"""

from __future__ import annotations

from .design import ModelData
from .driver import Cancelled, fit_em
from .estep import TINY
from .queries import e_step, loglikelihood, messages, pattern_loglik, posterior
from .result import ConvergenceWarning, Degeneracy, EMResult

__all__ = [
    "TINY",
    "Cancelled",
    "ConvergenceWarning",
    "Degeneracy",
    "EMResult",
    "ModelData",
    "e_step",
    "fit_em",
    "loglikelihood",
    "messages",
    "pattern_loglik",
    "posterior",
]
