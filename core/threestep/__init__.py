"""The bias-adjusted three-step method: distal outcomes of a fitted model's classes.

Step 1 fits the measurement model (:func:`effdim.fit`); step 2
assigns the units to classes and estimates the classification error it makes
(:mod:`effdim.threestep.classification`); step 3 relates the classes to
variables left out of the model, correcting for that error (Vermunt 2010,
Political Analysis 18(4); Bakk, Tekle and Vermunt 2013, Sociological
Methodology 43). One concept per module:

* :mod:`effdim.threestep.units`: the units, their posteriors and weights;
* :mod:`effdim.threestep.classification`: step 2 and the classification error matrix;
* :mod:`effdim.threestep.outcome`: a distal outcome, categorical or continuous;
* :mod:`effdim.threestep.weighted`: the BCH correction and the uncorrected methods, as class-weighted means;
* :mod:`effdim.threestep.ml`: the ML correction;
* :mod:`effdim.threestep.wald`: the test of equal class means or probabilities;
* :mod:`effdim.threestep.step1`: the measurement model's uncertainty added to step 3's standard errors;
* :mod:`effdim.threestep.request`: the one check of a request (method, assignment, hidden node);
* :mod:`effdim.threestep.result`: :class:`DistalOutcome`;
* :mod:`effdim.threestep.distal`: :func:`distal_outcomes`, the entry point for distal outcomes;
* :mod:`effdim.threestep.covariates`: :func:`covariates_3step`, covariates of the classes (a multinomial
  logit corrected for the classification error).

``docs/three-step.md`` says where the conventions differ from StepMix's and Latent GOLD's.
"""

from __future__ import annotations

from .classification import ASSIGNMENTS, Classification, SingularClassification, classify
from .covariates import ThreeStepRegression, covariates_3step
from .distal import distal_outcomes
from .outcome import KINDS, Outcome, outcome_kind
from .result import METHODS, DistalOutcome, has_step1
from .units import Units
from .wald import Wald, equality_test

__all__ = [
    "ASSIGNMENTS",
    "KINDS",
    "METHODS",
    "Classification",
    "DistalOutcome",
    "Outcome",
    "SingularClassification",
    "ThreeStepRegression",
    "Units",
    "Wald",
    "classify",
    "covariates_3step",
    "distal_outcomes",
    "equality_test",
    "has_step1",
    "outcome_kind",
]
