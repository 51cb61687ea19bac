"""Section 5 of Kocka & Zhang (2002): learning LC models with and without dimension correction.

The paper's design, as implemented here:

* Generating models: the seven regular LC models ``2:2,2,2,2`` ...
  ``8:2,2,2,2`` over four binary observed variables, each with ``replicates``
  (ten in the paper) random parametrizations: every CPT row drawn uniformly
  from its simplex (:func:`effdim.distribution.random_parameters`).
* The deterministic variant (Figure 5): ``8:2,2,2,2`` with ``P(O_1, O_2, O_3
  | X)`` deterministic, each of the eight hidden states mapped to one of the
  eight joint states of the three leaves, and ``P(X)``, ``P(O_4 | X)``
  random (:func:`deterministic_parameters`). Such a model can still encode
  any distribution over the observed variables.
* From each parametrization, one data set of each of five sizes; the paper's
  text does not give the sizes (they were in the lost plots of Figures 4 and
  5), so they are a setting; the default is 250, 1000, 4000, 16000, 64000.
* Every regular LC model over the four binary variables, ``1:2,2,2,2`` ...
  ``8:2,2,2,2`` (Lemma 3.2: ``|X| <= 2*2*2``), fitted by EM
  (:func:`effdim.search.sweep`) and scored by BIC, BIC+, CS and CS+
  (Section 2.3); per score the best model is selected.
* Reported per generating model, score and size: the average KL divergence
  of the selected model from the generating distribution over ``O`` (bits)
  and the average selected cardinality ``|X|`` (Figures 4 and 5), with
  standard errors and the paired comparison of :mod:`effdim.experiments.stats`.

One job is one (generating model, replicate, sample size): the replicate's
parameters are drawn from a stream that depends on the generating model and
replicate only, so all sizes share them, as in the paper.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..distribution import Parameters, random_parameters, sample
from ..errors import InvalidArgument
from ..model import HLCModel
from ..priors import DEFAULT_CS_PRIOR, DirichletPrior
from ..regularity import largest_regular_card
from ..scores import PAPER_SCORES, SCORES, best_index
from ..search import sweep
from .common import FIT_COLUMNS, FIT_ROW_SCHEMA, Study, check_config, fit_row, rng_for
from .runner import JobRecord, RunStats
from .stats import mark_best, mean_se, pvalues_against_best

__all__ = ["LCStudy", "LCResult", "deterministic_parameters", "lc_job", "PAPER_LC_GENERATORS"]

PAPER_LC_GENERATORS = tuple(f"{r}:2,2,2,2" for r in range(2, 9))


def deterministic_parameters(model: HLCModel, rng: Any = None, n_deterministic: int = 3) -> Parameters:
    """Parameters of an LC model whose first ``n_deterministic`` leaves are functions of ``X`` (Section 5, Figure 5).

    Hidden state ``x`` is written in the mixed radix of those leaves'
    cardinalities, and leaf ``i`` takes digit ``i`` with probability 1, so
    distinct hidden states give distinct joint states of those leaves (needs
    ``|X| <= prod |O_i|``; for ``8:2,2,2,2`` and three leaves the map is a
    bijection). ``P(X)`` and the other leaves' tables are random as in
    :func:`effdim.distribution.random_parameters`.
    """
    if not model.is_lc:
        raise InvalidArgument(f"deterministic parameters are defined for LC models, got {model}")
    leaves = model.observed[: int(n_deterministic)]
    if len(leaves) < int(n_deterministic) or int(n_deterministic) < 1:
        raise InvalidArgument(f"{model} has {len(model.observed)} leaves; cannot make {n_deterministic} deterministic")
    cards = [model.card(o) for o in leaves]
    r = model.card(model.root)
    if r > math.prod(cards):
        raise InvalidArgument(
            f"|X| = {r} exceeds the {math.prod(cards)} joint states of {', '.join(leaves)}: "
            "the hidden states cannot be mapped to distinct leaf states"
        )
    params = random_parameters(model, rng)
    cpts = dict(params.cpts)
    for i, leaf in enumerate(leaves):
        below = math.prod(cards[i + 1 :])
        digits = (np.arange(r) // below) % cards[i]
        cpts[leaf] = np.eye(cards[i])[digits]
    return Parameters(model, cpts)


def lc_job(config: dict) -> dict:
    """One job of the Section 5 study (see the module docstring); JSON in, JSON out.

    ``config`` keys: ``generator`` (LC notation), ``kind`` (``"random"`` or
    ``"deterministic"``), ``n_deterministic``, ``replicate``, ``n``, ``seed``,
    ``cards`` (the fitted ``|X|`` values), ``restarts``, ``tol``,
    ``max_iter``, ``cs_prior``. Returns ``{"fits": [row per |X|]}`` with every score, ``ds``,
    ``de`` and the KL (bits) of the fitted model from the generating one.
    """
    model = HLCModel.parse(config["generator"])
    gen, kind, rep, n, seed = config["generator"], config["kind"], config["replicate"], config["n"], config["seed"]
    param_rng = rng_for(seed, "lc-params", gen, kind, rep)
    if kind == "random":
        truth = random_parameters(model, param_rng)
    elif kind == "deterministic":
        truth = deterministic_parameters(model, param_rng, config["n_deterministic"])
    else:
        raise InvalidArgument(f"unknown generator kind {kind!r}")
    data = sample(truth, int(n), rng_for(seed, "lc-data", gen, kind, rep, n))
    fits = sweep(
        data,
        model,
        model.root,
        config["cards"],
        restarts=config["restarts"],
        seed=rng_for(seed, "lc-fit", gen, kind, rep, n),
        tol=config["tol"],
        max_iter=config["max_iter"],
        cs_prior=config["cs_prior"],
    )
    return {"fits": [dict(fit_row(f, truth), card=int(f.card)) for f in fits]}


@dataclass(frozen=True)
class LCStudy(Study):
    """Configuration of the Section 5 study (the paper's values by default, except the unstated sizes).

    ``generators``: LC models with random parameters; ``deterministic``: LC
    models with the first ``n_deterministic`` leaves deterministic (Figure
    5); ``cards``: the fitted ``|X|`` values (default: 1 up to the regular
    maximum of the first generator's leaves, Lemma 3.2).
    """

    generators: tuple[str, ...] = PAPER_LC_GENERATORS
    deterministic: tuple[str, ...] = ("8:2,2,2,2",)
    n_deterministic: int = 3
    replicates: int = 10
    sizes: tuple[int, ...] = (250, 1000, 4000, 16000, 64000)
    scores: tuple[str, ...] = PAPER_SCORES
    cards: tuple[int, ...] | None = None
    restarts: int = 5
    tol: float = 1e-8
    max_iter: int = 1000
    seed: int = 0
    cs_prior: str = str(DEFAULT_CS_PRIOR)

    name = "lc"

    #: ``"full"``: the paper's design (10 replicates, 5 sizes, 7 + 1 generators, 400 jobs);
    #: ``"quick"``: 3 replicates (120 jobs, about a minute on 2 cores).
    presets = {"full": {}, "quick": {"replicates": 3}}

    def __post_init__(self) -> None:
        check_config(self.replicates, self.sizes, self.scores, self.restarts)
        object.__setattr__(self, "cs_prior", str(DirichletPrior.parse(self.cs_prior)))
        models = [HLCModel.parse(g) for g in self.generators + self.deterministic]
        if not models:
            raise InvalidArgument("no generating models")
        leaves = {tuple(m.card(o) for o in m.observed) for m in models}
        if any(not m.is_lc for m in models) or len(leaves) != 1:
            raise InvalidArgument("the generating models must be LC models over the same observed variables")
        for g in self.deterministic:
            deterministic_parameters(HLCModel.parse(g), 0, self.n_deterministic)  # validates |X| vs leaves

    def fitted_cards(self) -> tuple[int, ...]:
        """The ``|X|`` values fitted to every data set."""
        if self.cards is not None:
            return tuple(int(c) for c in self.cards)
        m = HLCModel.parse(self.generators[0] if self.generators else self.deterministic[0])
        return tuple(range(1, largest_regular_card(m, m.root) + 1))

    def jobs(self) -> list[dict]:
        """One configuration per (generating model, replicate, size)."""
        common = {
            "cards": list(self.fitted_cards()),
            "restarts": self.restarts,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "seed": self.seed,
            "n_deterministic": self.n_deterministic,
            "cs_prior": self.cs_prior,
        }
        out = []
        for kind, gens in (("random", self.generators), ("deterministic", self.deterministic)):
            for g in gens:
                for rep in range(self.replicates):
                    for n in self.sizes:
                        cfg = {"generator": g, "kind": kind, "replicate": rep, "n": int(n), **common}
                        if kind == "random":
                            cfg["n_deterministic"] = 0  # not used: keep random jobs' keys independent of it
                        out.append(cfg)
        return out

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["cards"] = list(self.fitted_cards())
        return d

    job = staticmethod(lc_job)
    prefix = "lc"
    schema = {"fits": [{**FIT_ROW_SCHEMA, "card": int}]}  # lc_job's result

    def result(self, records: list, stats: RunStats) -> LCResult:
        """The finished study from its job records."""
        return LCResult(self, records, stats)


def generator_label(generator: str, kind: str) -> str:
    """``"8:2,2,2,2"`` or ``"8:2,2,2,2 deterministic"``."""
    return generator if kind == "random" else f"{generator} deterministic"


@dataclass
class LCResult:
    """The finished Section 5 study: its configuration, job records and run statistics."""

    study: LCStudy
    records: list[JobRecord]
    stats: RunStats
    test: str = "t"
    _frames: dict = field(default_factory=dict, repr=False)

    def fits(self):
        """Every fit: one row per (generator, kind, replicate, n, |X|) with all scores and ``kl_bits``."""
        import pandas as pd

        if "fits" not in self._frames:
            rows = []
            for rec in self.records:
                c = rec.config
                for f in rec.result["fits"]:
                    rows.append(
                        {
                            "generator": c["generator"],
                            "kind": c["kind"],
                            "label": generator_label(c["generator"], c["kind"]),
                            "replicate": c["replicate"],
                            "n": c["n"],
                            **{k: (math.inf if v == "inf" else v) for k, v in f.items()},
                        }
                    )
            columns = ["generator", "kind", "label", "replicate", "n", "card", *FIT_COLUMNS]
            self._frames["fits"] = pd.DataFrame(rows, columns=columns)
        return self._frames["fits"]

    def runs(self):
        """The selection per data set and score: ``card`` (selected ``|X|``) and ``kl_bits``."""
        import pandas as pd

        if "runs" not in self._frames:
            fits = self.fits()
            rows = []
            for (label, rep, n), group in fits.groupby(["label", "replicate", "n"], sort=False):
                group = group.sort_values("card")
                for s in self.study.scores:
                    col = SCORES[s].key
                    best = group.iloc[best_index(group[col].tolist(), group["ds"].tolist(), n)]
                    rows.append(
                        {
                            "generator": best["generator"],
                            "kind": best["kind"],
                            "label": label,
                            "replicate": int(rep),
                            "n": int(n),
                            "score": s,
                            "card": int(best["card"]),
                            "kl_bits": float(best["kl_bits"]),
                            "loglik": float(best["loglik"]),
                            "ds": int(best["ds"]),
                            "de": int(best["de"]),
                        }
                    )
            self._frames["runs"] = pd.DataFrame(rows)
        return self._frames["runs"]

    def summary(self):
        """Per (generator, n, score): mean and standard error of KL (bits and 1e-3 bits) and of ``|X|``,
        the paired p-value against the best score at that size and whether it is marked."""
        import pandas as pd

        runs = self.runs()
        rows = []
        for (label, n), group in runs.groupby(["label", "n"], sort=False):
            kl = {s: g.sort_values("replicate")["kl_bits"].to_numpy() for s, g in group.groupby("score")}
            marks = mark_best(kl, self.test)
            both = pvalues_against_best(kl)
            best = min(kl, key=lambda s: float(np.mean(kl[s])))
            for s in self.study.scores:
                g = group[group["score"] == s]
                m, se = mean_se(g["kl_bits"])
                cm, cse = mean_se(g["card"])
                rows.append(
                    {
                        "generator": g["generator"].iloc[0],
                        "kind": g["kind"].iloc[0],
                        "label": label,
                        "n": int(n),
                        "score": s,
                        "replicates": len(g),
                        "kl_mean": m,
                        "kl_se": se,
                        "kl_mean_1e3": m * 1e3,
                        "kl_se_1e3": se * 1e3,
                        "card_mean": cm,
                        "card_se": cse,
                        "best": s == best,
                        "marked": bool(marks[s][0]),
                        "p_value": marks[s][1],
                        "test": self.test,
                        "p_t": both[s]["t"],
                        "p_wilcoxon": both[s]["wilcoxon"],
                    }
                )
        return pd.DataFrame(rows)

    def penalty_gaps(self):
        """Mean ``CS - BIC`` (nats) per sample size and ``|X|`` over every data set.

        ``CS+ - BIC+ = CS - BIC`` exactly (both corrections add
        ``(ds - de)/2 log N``), so this gap decides whether CS+ prefers a
        larger ``|X|`` than BIC+ among models of equal likelihood.
        """
        fits = self.fits()
        gap = (fits["cs"] - fits["bic"]).rename("cs_minus_bic")
        table = fits.assign(cs_minus_bic=gap).pivot_table(
            index="n", columns="card", values="cs_minus_bic", aggfunc="mean"
        )
        return table

    def markdown(self) -> str:
        """One table per generating model: rows are sizes, cells ``KL ± se`` (1e-3 bits) and ``|X| ± se``."""
        summary = self.summary()
        scores = list(self.study.scores)
        parts = [
            f"CS and CS+ with the Dirichlet prior {DirichletPrior.parse(self.study.cs_prior).label} "
            f"(`--cs-prior {self.study.cs_prior}`).\n"
        ]
        for label, group in summary.groupby("label", sort=False):
            parts.append(f"#### Generated from {label}\n")
            parts.append(
                "| n | "
                + " | ".join(f"{SCORES[s].label} KL" for s in scores)
                + " | "
                + " | ".join(f"{SCORES[s].label} \\|X\\|" for s in scores)
                + " |"
            )
            parts.append("|---:|" + "---:|" * (2 * len(scores)))
            for n, g in group.groupby("n", sort=True):
                g = g.set_index("score")
                kl = [
                    _bold(f"{_num(g.at[s, 'kl_mean_1e3'])} ± {_num(g.at[s, 'kl_se_1e3'], 1)}", g.at[s, "marked"])
                    for s in scores
                ]
                card = [f"{g.at[s, 'card_mean']:.1f} ± {g.at[s, 'card_se']:.1f}" for s in scores]
                parts.append(f"| {n:,} | " + " | ".join(kl + card) + " |")
            parts.append("")
        gaps = self.penalty_gaps()
        parts.append("#### Mean CS - BIC (nats) by sample size and |X|, over all data sets\n")
        parts.append("| n | " + " | ".join(f"\\|X\\| = {c}" for c in gaps.columns) + " |")
        parts.append("|---:|" + "---:|" * len(gaps.columns))
        for n, row in gaps.iterrows():
            parts.append(f"| {int(n):,} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
        parts.append("")
        return "\n".join(parts)


def _num(x: float, sig: int = 2) -> str:
    """``sig`` significant digits (none dropped before the decimal point), like the paper's
    tables: means with two (``6.1``, ``0.78``), standard errors with one (``0.6``, ``0.08``)."""
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    digits = max(0, sig - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:.{digits}f}"


def _bold(text: str, on: bool) -> str:
    return f"**{text}**" if on else text
