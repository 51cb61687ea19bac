"""Example data bundled with effdim, loadable by name.

>>> from effdim import datasets
>>> datasets.names()
['carcinoma', 'cheating', 'election', 'gss82', 'hlc-figure2', 'lc-8-2222', 'stouffer-toby']
>>> datasets.load("stouffer-toby")
Dataset(stouffer-toby: 4 columns [2,2,2,2], 216 rows, 16 unique patterns, 0 missing cells)

``stouffer-toby``
    Real data. Stouffer & Toby (1951), "Role conflict and personality",
    *American Journal of Sociology* 56(5):395-406: 216 respondents, four
    binary items A-D (``+`` / ``-``) on a dilemma between obligations to a
    friend and general (universalistic) obligations. Analysed with latent
    class models by Goodman (1974), "Exploratory latent structure analysis
    using both identifiable and unidentifiable models", *Biometrika*
    61(2):215-231; distributed as the data set ``values`` of the R package
    poLCA (Linzer & Lewis 2011, *Journal of Statistical Software* 42(10)).
    Stored as the published table of the 16 response-pattern counts. Four
    binary items make the paper's LC models 2:2,2,2,2 and 3:2,2,2,2 (Kocka &
    Zhang 2002, Table 1) directly applicable.

``election``
    Real data. The 2000 American National Election Study: 1,785 respondents
    rate how well each of 12 traits describes Al Gore (``MORALG`` ...
    ``INTELG``) and George W. Bush (``MORALB`` ... ``INTELB``): moral, caring,
    knowledgeable, a good leader, dishonest, intelligent; four answers each
    (``1 Extremely well`` to ``4 Not well at all``), some missing; covariates
    ``VOTE3`` (1 Gore, 2 Bush, 3 other), ``AGE`` (years), ``EDUC`` (1-7),
    ``GENDER`` (1 male, 2 female), ``PARTY`` (1 strong Democrat to 7 strong
    Republican). poLCA's manual fits 3 classes to the 12 items with
    ``PARTY`` (and ``PARTY * AGE``) as covariates.

``cheating``
    Real data. 319 undergraduates' answers (1 no, 2 yes) on four kinds of
    academic dishonesty: lying to avoid an exam (``LIEEXAM``), lying to avoid a
    term paper (``LIEPAPER``), purchasing a term paper (``FRAUD``), copying
    answers in an exam (``COPYEXAM``); and grade point average ``GPA`` in five
    groups (1: < 2.99, ... 5: 3.75-4.00; missing for 4 students), poLCA's
    example of a covariate. Dayton (1998), Table 3.1.

``carcinoma``
    Real data. Seven pathologists (``A`` ... ``G``) each rated 118 slides of
    the uterine cervix for carcinoma (1 no, 2 yes); Agresti (2002), Table
    13.1, the data of his latent class example. The published table of the 20
    response patterns seen. The data set where the chosen model's parameters
    are not unique: the latent tree that effdim's structure search learns by
    BIC+ (:func:`effdim.structure.learn_structure`, from every seed tried),
    ``H1:2(A:2,C:2,D:2,F:2,H2:2(G:2,H3:3(B:2,E:2)))``, scores above the best
    LC model (3 classes) and has ``de = 19`` below ``ds = 23``: a hidden node of
    three states between two binary neighbours (Lemma 4.1's largest regular
    cardinality); BIC, penalising ``ds``, prefers the LC model of 3 classes to it.

``gss82``
    Real data. 1,202 white respondents to the 1982 General Social Survey on
    surveys: their purpose (``PURPOSE``: good, depends, waste of time),
    their accuracy (``ACCURACY``: mostly true, not true), the
    respondent's understanding of the questions (``UNDERSTA``: good,
    fair/poor) and cooperation with the interviewer (``COOPERAT``: interested,
    cooperative, impatient); McCutcheon (1987), Table 3.1. Polytomous items
    with text labels, as the published table of 33 response-pattern counts.
    poLCA's manual fits 2 to 4 classes (log-likelihoods -2783.268,
    -2754.545, -2746.621).

All four are poLCA's data sets of these names as it distributes them (version
1.6.0.2), written to CSV by ``benchmarks/engine/make_polca_datasets.R``: published
tables and a public survey's sample, the values and labels unchanged. poLCA's
code is GPL (>= 2); only its data are used here, none of its code.

``lc-8-2222``
    Synthetic. 10,000 cases sampled from the LC model 8:2,2,2,2 with random
    parameters (every CPT row Dirichlet(1)), as in the paper's Section 6
    experiment on LC models (Figure 4). Columns O1-O4, states 0/1.

``hlc-figure2``
    Synthetic. 10,000 cases sampled from the HLC model of the paper's
    Figure 2, ``5(3(2,2),2,3(2,2))`` (5,3,3:2,2,2,2,2: standard dimension 41,
    effective dimension 23), with random Dirichlet(1) parameters, as in the
    Section 6 experiment on HLC models (Table 2). Columns O1-O5, states 0/1.

The synthetic sets are written by ``benchmarks/engine/make_datasets.py`` (fixed
seeds); their generating parameters are bundled too, so
:func:`generating_parameters` gives the true model to measure a learned one
against (``effdim.distribution.kl_divergence``).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from importlib import resources

from ..data import DataError

__all__ = ["DEFAULT", "DatasetInfo", "names", "info", "load", "generating_parameters"]

#: The data set offered first (the dashboard's choice before the user picks one).
DEFAULT = "hlc-figure2"


@dataclass(frozen=True)
class DatasetInfo:
    """Provenance of a bundled data set."""

    name: str
    filename: str
    title: str
    description: str
    references: tuple[str, ...]
    #: Notation of the generating model (synthetic data only).
    model: str | None = None
    #: File of the generating parameters (synthetic data only).
    parameters_file: str | None = None
    #: Seed of ``benchmarks/engine/make_datasets.py`` (synthetic data only).
    seed: int | None = None
    #: Columns with many values (covariates such as an age), exempt from the limit on a column's states.
    any_values: tuple[str, ...] = ()
    #: The columns an LC model of the data is over when the others are covariates (real data with covariates).
    items: tuple[str, ...] = ()


_PAPER = (
    "Kocka, T. & Zhang, N. L. (2002). Dimension correction for hierarchical latent class models. "
    "Proceedings of UAI 2002."
)

_POLCA = (
    "Linzer, D. A. & Lewis, J. B. (2011). poLCA: An R package for polytomous variable latent class analysis. "
    "Journal of Statistical Software 42(10)."
)

_REGISTRY: dict[str, DatasetInfo] = {
    info.name: info
    for info in (
        DatasetInfo(
            name="stouffer-toby",
            filename="stouffer_toby.csv",
            title="Stouffer-Toby role conflict (216 respondents, 4 binary items)",
            description=(
                "Four items A-D on a dilemma between obligations to a friend and general obligations; "
                "answers '+' and '-'. The published table of response-pattern counts "
                "(column 'count'), as analysed by Goodman (1974) with latent class models and "
                "distributed as the data set 'values' of the R package poLCA."
            ),
            references=(
                "Stouffer, S. A. & Toby, J. (1951). Role conflict and personality. "
                "American Journal of Sociology 56(5), 395-406.",
                "Goodman, L. A. (1974). Exploratory latent structure analysis using both identifiable "
                "and unidentifiable models. Biometrika 61(2), 215-231.",
                _POLCA + " (data set 'values')",
            ),
        ),
        DatasetInfo(
            name="election",
            filename="election.csv",
            title="2000 American National Election Study: 12 ratings of Gore and Bush, 1,785 respondents",
            description=(
                "How well moral, caring, knowledgeable, a good leader, dishonest and intelligent describe "
                "Al Gore (columns ending G) and George W. Bush (ending B), four answers each, some missing; "
                "covariates VOTE3, AGE, EDUC, GENDER and PARTY (1 strong Democrat to 7 strong Republican). "
                "poLCA's data set 'election', one row per respondent."
            ),
            references=(
                "The American National Election Studies (www.electionstudies.org). The 2000 National "
                "Election Study. Ann Arbor, MI: University of Michigan, Center for Political Studies.",
                _POLCA + " (data set 'election')",
            ),
            any_values=("AGE",),
            items=tuple(f"{t}{who}" for who in "GB" for t in ("MORAL", "CARES", "KNOW", "LEAD", "DISHON", "INTEL")),
        ),
        DatasetInfo(
            name="cheating",
            filename="cheating.csv",
            title="Academic dishonesty of 319 undergraduates: 4 binary items and their GPA",
            description=(
                "Whether each of 319 students lied to avoid an exam (LIEEXAM) or a term paper (LIEPAPER), "
                "purchased a term paper (FRAUD) or copied answers in an exam (COPYEXAM): 1 no, 2 yes; and "
                "their grade point average GPA in five groups (1 lowest, 5 highest; 4 missing). poLCA's data "
                "set 'cheating', one row per student."
            ),
            references=(
                "Dayton, C. M. (1998). Latent Class Scaling Analysis. Thousand Oaks, CA: SAGE. Table 3.1.",
                _POLCA + " (data set 'cheating')",
            ),
            items=("LIEEXAM", "LIEPAPER", "FRAUD", "COPYEXAM"),
        ),
        DatasetInfo(
            name="carcinoma",
            filename="carcinoma.csv",
            title="Carcinoma diagnoses by seven pathologists (118 slides, 7 binary items)",
            description=(
                "Seven pathologists A-G rated 118 slides for carcinoma of the uterine cervix (1 no, 2 yes); the "
                "published table of the 20 response patterns (column 'count'). The latent tree BIC+ learns, "
                "H1:2(A:2,C:2,D:2,F:2,H2:2(G:2,H3:3(B:2,E:2))), has de = 19 below ds = 23: its parameters are "
                "not unique. poLCA's data set 'carcinoma'."
            ),
            references=(
                "Agresti, A. (2002). Categorical Data Analysis, 2nd ed. Hoboken, NJ: Wiley. Table 13.1.",
                _POLCA + " (data set 'carcinoma')",
            ),
        ),
        DatasetInfo(
            name="gss82",
            filename="gss82.csv",
            title="1982 General Social Survey: attitudes to surveys (1,202 respondents, 4 polytomous items)",
            description=(
                "Purpose of surveys (good, depends, waste of time), their accuracy (mostly true, not "
                "true), understanding of the questions (good, fair/poor), cooperation with the interviewer "
                "(interested, cooperative, impatient); the published table of 33 response-pattern counts "
                "(column 'count'). poLCA's data set 'gss82'."
            ),
            references=(
                "McCutcheon, A. L. (1987). Latent Class Analysis. Newbury Park, CA: SAGE. Table 3.1.",
                _POLCA + " (data set 'gss82')",
            ),
        ),
        DatasetInfo(
            name="lc-8-2222",
            filename="lc_8_2222.csv",
            title="10,000 cases sampled from the LC model 8:2,2,2,2",
            description=(
                "Synthetic: random parameters (each CPT row Dirichlet(1)) for the LC model 8:2,2,2,2, "
                "10,000 cases drawn by forward sampling and stored as pattern counts. Mirrors the data "
                "of the paper's Section 6 / Figure 4. Written by benchmarks/engine/make_datasets.py."
            ),
            references=(_PAPER,),
            model="8:2,2,2,2",
            parameters_file="lc_8_2222_parameters.csv",
            seed=8_2222,
        ),
        DatasetInfo(
            name="hlc-figure2",
            filename="hlc_figure2.csv",
            title="10,000 cases sampled from the HLC model 5(3(2,2),2,3(2,2)) (paper, Figure 2)",
            description=(
                "Synthetic: random parameters (each CPT row Dirichlet(1)) for the HLC model of the "
                "paper's Figure 2, 5,3,3:2,2,2,2,2 (ds = 41, de = 23), 10,000 cases drawn by forward "
                "sampling and stored as pattern counts. Mirrors the data of the paper's Section 6 / "
                "Table 2. Written by benchmarks/engine/make_datasets.py."
            ),
            references=(_PAPER,),
            model="5(3(2,2),2,3(2,2))",
            parameters_file="hlc_figure2_parameters.csv",
            seed=53_322222,
        ),
    )
}


def names() -> list[str]:
    """Names of the bundled data sets, sorted."""
    return sorted(_REGISTRY)


def info(name: str) -> DatasetInfo:
    """Provenance of data set ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise DataError(f"unknown data set {name!r}; bundled: {', '.join(names())}") from None


def _read(filename: str) -> bytes:
    return resources.files(__name__).joinpath(filename).read_bytes()


def load(name: str):
    """The bundled data set ``name`` as an :class:`effdim.data.Dataset`."""
    from ..read_limits import ReadLimits
    from ..reading import load_csv

    entry = info(name)
    return load_csv(_read(entry.filename), name=entry.name, limits=ReadLimits(unlimited=entry.any_values))


def generating_parameters(name: str):
    """The true :class:`effdim.distribution.Parameters` of a synthetic data set.

    Read from the bundled table (columns ``node, parent, parent_state, state,
    probability``; the root has an empty parent), so it does not depend on
    the random number generator of the installed numpy.
    """
    import numpy as np
    import pandas as pd

    from ..distribution import Parameters
    from ..model import HLCModel

    entry = info(name)
    if entry.model is None or entry.parameters_file is None:
        raise DataError(f"data set {name!r} is real data; it has no generating parameters")
    model = HLCModel.parse(entry.model)
    table = pd.read_csv(io.BytesIO(_read(entry.parameters_file)), dtype={"node": str, "parent": str})
    cpts = {}
    for node in model.nodes:
        rows = table[table["node"] == node]
        parent = model.parent(node)
        k = model.card(node)
        if parent is None:
            cpt = np.zeros(k)
            cpt[rows["state"].to_numpy(int)] = rows["probability"].to_numpy(float)
        else:
            cpt = np.zeros((model.card(parent), k))
            cpt[rows["parent_state"].to_numpy(int), rows["state"].to_numpy(int)] = rows["probability"].to_numpy(float)
        cpts[node] = cpt
    return Parameters(model, cpts)
