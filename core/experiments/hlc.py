"""Section 6 of Kocka & Zhang (2002): hill climbing the hidden cardinalities of an HLC model.

The paper's design, as implemented here:

* Generating model: the HLC model ``5,3,3:2,2,2,2,2`` of Figure 2
  (``5(3(2,2),2,3(2,2))`` in this package's tree notation; ``ds = 41``,
  ``de = 23``, Section 4), with ``replicates`` (fifty in the paper) random
  parametrizations (:func:`effdim.distribution.random_parameters`).
* From each parametrization one data set of each size 1k, 3k, 9k, 27k, 81k
  and 243k.
* Only the true structure is searched: start with every hidden node binary,
  at each step raise by one the cardinality whose increase raises the score
  most, stop when no increase raises it (the rule of
  :func:`effdim.search.hill_climb`), once for each of BIC, BIC+, CS and CS+;
  every model fitted by EM.
* Table 2: mean ± standard error over the replicates of the KL divergence
  (in 1e-3 bits) of the selected model from the generating distribution, the
  best score per size and those not significantly different from it (95%)
  marked, by a paired test (:mod:`effdim.experiments.stats`).

One job is one (replicate, sample size). The four climbs of a job share their
fits: a model reached by two climbs is fitted once (:func:`climb_all`). Each
fit's EM starts are seeded by the job and the model itself, so the result of
a climb does not depend on which other scores are climbed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..distribution import random_parameters, sample
from ..errors import InvalidArgument
from ..fitting import FitResult, fit
from ..model import HLCModel
from ..notation import format_model
from ..priors import DEFAULT_CS_PRIOR, DirichletPrior
from ..scores import PAPER_SCORES, SCORES
from ..search import climb, start_model
from .common import FIT_COLUMNS, FIT_ROW_SCHEMA, Study, check_config, fit_row, hidden_cards, rng_for
from .lc import _bold, _num
from .runner import JobRecord, RunStats
from .stats import mark_best, mean_se, pvalues_against_best

__all__ = ["HLCStudy", "HLCResult", "hlc_job", "climb_all", "PAPER_TABLE2", "PAPER_HLC_MODEL"]

#: Figure 2 with |H1|, |H2|, |H3| = 5, 3, 3 and five binary leaves.
PAPER_HLC_MODEL = "5(3(2,2),2,3(2,2))"

#: The paper's Table 2 (KL in 1e-3 bits): size -> score -> (mean, standard error, bold).
PAPER_TABLE2: dict[int, dict[str, tuple[float, float, bool]]] = {
    1000: {"bic": (6.1, 0.6, True), "bic+": (7.5, 0.8, False), "cs": (6.0, 0.6, True), "cs+": (6.4, 0.6, True)},
    3000: {"bic": (2.2, 0.3, True), "bic+": (2.5, 0.3, True), "cs": (2.4, 0.3, True), "cs+": (2.4, 0.3, True)},
    9000: {"bic": (0.78, 0.1, True), "bic+": (0.79, 0.09, True), "cs": (0.76, 0.1, True), "cs+": (0.69, 0.07, True)},
    27000: {
        "bic": (0.49, 0.08, False),
        "bic+": (0.33, 0.05, True),
        "cs": (0.5, 0.09, False),
        "cs+": (0.38, 0.06, True),
    },
    81000: {
        "bic": (0.22, 0.04, False),
        "bic+": (0.16, 0.03, True),
        "cs": (0.22, 0.03, False),
        "cs+": (0.17, 0.03, True),
    },
    243000: {
        "bic": (0.15, 0.04, False),
        "bic+": (0.1, 0.03, True),
        "cs": (0.15, 0.03, False),
        "cs+": (0.12, 0.03, True),
    },
}


def climb_all(
    model: HLCModel, scores: Sequence[str], fit_model: Callable[[HLCModel, FitResult | None], FitResult]
) -> tuple[dict[str, list[FitResult]], dict[str, FitResult], dict[str, int]]:
    """Hill climbing of Section 6 for several scores at once, sharing the fits.

    For each score: start from :func:`effdim.search.start_model`; at each step fit every
    model with one hidden cardinality raised by one (within
    :func:`effdim.regularity.largest_regular_card`, so every model is regular); move to
    the best one if it beats the current model on that score, else stop.
    Ties go to the first hidden node in pre-order, as in
    :func:`effdim.search.hill_climb`. ``fit_model(m, smaller)`` fits ``m``
    grown from the fit ``smaller`` (``None`` for the start; see ``smaller``
    of :func:`effdim.fit`); it is called once per distinct pair, so a
    climb's fits never depend on which other scores are climbed.

    Returns ``(paths, fits, used)``: per score the accepted models in order;
    per distinct model (by notation) its fit with the highest log-likelihood;
    per score the number of distinct models its climb needed.
    """
    made: dict[tuple[str | None, str], FitResult] = {}

    def get(m: HLCModel, smaller: FitResult | None, seen: set) -> FitResult:
        key = (None if smaller is None else format_model(smaller.model), format_model(m))
        seen.add(key[1])
        if key not in made:
            made[key] = fit_model(m, smaller)
        return made[key]

    paths: dict[str, list[FitResult]] = {}
    used: dict[str, int] = {}
    for s in scores:
        seen: set = set()
        path, _ = climb(start_model(model), s, lambda models, smaller: [get(m, smaller, seen) for m in models])
        paths[s] = path
        used[s] = len(seen)
    fits: dict[str, FitResult] = {}
    for (_, key), f in made.items():
        if key not in fits or f.loglik > fits[key].loglik:
            fits[key] = f
    return paths, fits, used


def hlc_job(config: dict) -> dict:
    """One job of the Section 6 study (see the module docstring); JSON in, JSON out.

    ``config`` keys: ``model`` (tree notation of the generating model),
    ``replicate``, ``n``, ``seed``, ``scores``, ``restarts``, ``tol``,
    ``max_iter``, ``cs_prior``, ``concentration`` (of the Dirichlet rows of
    the generating parameters; 1 is uniform on the simplex). Returns ``{"fits": [...], "climbs": {score: {"path",
    "selected", "kl_bits", "fits"}}}``.
    """
    model = HLCModel.parse(config["model"])
    rep, n, seed = config["replicate"], config["n"], config["seed"]
    truth = random_parameters(
        model, rng_for(seed, "hlc-params", config["model"], rep), concentration=config["concentration"]
    )
    data = sample(truth, int(n), rng_for(seed, "hlc-data", config["model"], rep, n))

    def fit_model(m: HLCModel, smaller: FitResult | None) -> FitResult:
        return fit(
            data,
            m,
            restarts=config["restarts"],
            tol=config["tol"],
            max_iter=config["max_iter"],
            seed=rng_for(seed, "hlc-fit", config["model"], rep, n, format_model(m)),
            init=smaller,
            cs_prior=config["cs_prior"],
            warn=False,
        )

    paths, fits, used = climb_all(model, config["scores"], fit_model)
    rows = {key: dict(fit_row(f, truth), cards=hidden_cards(f.model)) for key, f in fits.items()}
    climbs = {}
    for s, path in paths.items():
        best = format_model(path[-1].model)
        own = rows[best] if fits[best] is path[-1] else fit_row(path[-1], truth)
        climbs[s] = {
            "path": [format_model(f.model) for f in path],
            "selected": best,
            "cards": rows[best]["cards"],
            "kl_bits": own["kl_bits"],
            "fits": used[s],
        }
    return {"fits": list(rows.values()), "climbs": climbs}


@dataclass(frozen=True)
class HLCStudy(Study):
    """Configuration of the Section 6 study (the paper's values by default)."""

    model: str = PAPER_HLC_MODEL
    replicates: int = 50
    sizes: tuple[int, ...] = (1000, 3000, 9000, 27000, 81000, 243000)
    scores: tuple[str, ...] = PAPER_SCORES
    restarts: int = 5
    tol: float = 1e-8
    max_iter: int = 1000
    seed: int = 0
    cs_prior: str = str(DEFAULT_CS_PRIOR)
    #: Dirichlet concentration of every CPT row of the generating parameters (1: uniform on the
    #: simplex, the default; smaller: sharper rows). docs/experiments.md measures its effect on Table 2.
    concentration: float = 1.0

    name = "hlc"

    #: ``"full"``: the paper's design (50 replicates x 6 sizes = 300 jobs); ``"quick"``: 4
    #: replicates of 1k, 9k and 81k (12 jobs, a few minutes on 2 cores).
    presets = {"full": {}, "quick": {"replicates": 4, "sizes": (1000, 9000, 81000)}}

    def __post_init__(self) -> None:
        check_config(self.replicates, self.sizes, self.scores, self.restarts)
        object.__setattr__(self, "cs_prior", str(DirichletPrior.parse(self.cs_prior)))
        if not (float(self.concentration) > 0 and math.isfinite(float(self.concentration))):
            raise InvalidArgument(f"the concentration must be a positive number, got {self.concentration!r}")
        HLCModel.parse(self.model)

    def jobs(self) -> list[dict]:
        """One configuration per (replicate, size)."""
        common = {
            "model": self.model,
            "scores": list(self.scores),
            "restarts": self.restarts,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "seed": self.seed,
            "cs_prior": self.cs_prior,
            "concentration": float(self.concentration),
        }
        return self.replicate_jobs(common)

    job = staticmethod(hlc_job)
    prefix = "hlc"

    @property
    def schema(self) -> dict:
        """What :func:`hlc_job` returns: the distinct fits, and one climb per score of the study."""
        climb = {"path": [str], "selected": str, "cards": str, "kl_bits": (float, int, str), "fits": int}
        return {"fits": [{**FIT_ROW_SCHEMA, "cards": str}], "climbs": {s: climb for s in self.scores}}

    def result(self, records: list, stats: RunStats) -> HLCResult:
        """The finished study from its job records."""
        return HLCResult(self, records, stats)


@dataclass
class HLCResult:
    """The finished Section 6 study: configuration, job records, run statistics."""

    study: HLCStudy
    records: list[JobRecord]
    stats: RunStats
    test: str = "t"
    _frames: dict = field(default_factory=dict, repr=False)

    def fits(self):
        """Every distinct fit of every job: scores, ``ds``, ``de``, ``kl_bits``."""
        import pandas as pd

        rows = []
        for rec in self.records:
            for f in rec.result["fits"]:
                rows.append(
                    {
                        "replicate": rec.config["replicate"],
                        "n": rec.config["n"],
                        **{k: (math.inf if v == "inf" else v) for k, v in f.items()},
                    }
                )
        return pd.DataFrame(rows, columns=["replicate", "n", "cards", *FIT_COLUMNS])

    def runs(self):
        """One row per (replicate, n, score): the selected model, its cardinalities and ``kl_bits``."""
        import pandas as pd

        if "runs" not in self._frames:
            rows = []
            for rec in self.records:
                c = rec.config
                for s in self.study.scores:
                    climb = rec.result["climbs"][s]
                    kl = climb["kl_bits"]
                    rows.append(
                        {
                            "replicate": c["replicate"],
                            "n": c["n"],
                            "score": s,
                            "selected": climb["selected"],
                            "cards": climb["cards"],
                            "steps": len(climb["path"]) - 1,
                            "fits": climb["fits"],
                            "kl_bits": math.inf if kl == "inf" else kl,
                        }
                    )
            self._frames["runs"] = pd.DataFrame(rows)
        return self._frames["runs"]

    def table2(self):
        """Table 2: per (n, score) the mean and standard error of KL in 1e-3 bits, ``best``, ``marked``
        (best or not significantly different at 95%), the paired ``p_value`` and ``test``, the most
        frequent selection, and the paper's values where the size is one of the paper's."""
        import pandas as pd

        runs = self.runs()
        rows = []
        for n, group in runs.groupby("n", sort=True):
            kl = {s: g.sort_values("replicate")["kl_bits"].to_numpy() for s, g in group.groupby("score")}
            marks = mark_best(kl, self.test)
            both = pvalues_against_best(kl)
            best = min(kl, key=lambda s: float(np.mean(kl[s])))
            for s in self.study.scores:
                g = group[group["score"] == s]
                m, se = mean_se(g["kl_bits"] * 1e3)
                common = Counter(g["cards"]).most_common(1)[0]
                paper = PAPER_TABLE2.get(int(n), {}).get(s)
                rows.append(
                    {
                        "n": int(n),
                        "score": s,
                        "replicates": len(g),
                        "kl_mean_1e3": m,
                        "kl_se_1e3": se,
                        "best": s == best,
                        "marked": bool(marks[s][0]),
                        "p_value": marks[s][1],
                        "test": self.test,
                        "p_t": both[s]["t"],
                        "p_wilcoxon": both[s]["wilcoxon"],
                        "mode_cards": common[0],
                        "mode_count": int(common[1]),
                        "true_model_selected": int(
                            (g["cards"] == hidden_cards(HLCModel.parse(self.study.model))).sum()
                        ),
                        "paper_kl_mean_1e3": paper[0] if paper else math.nan,
                        "paper_kl_se_1e3": paper[1] if paper else math.nan,
                        "paper_marked": paper[2] if paper else None,
                    }
                )
        return pd.DataFrame(rows)

    def markdown(self) -> str:
        """Table 2 in the paper's layout, and the paper's own values beside it."""
        t = self.table2()
        scores = list(self.study.scores)
        reps = int(t["replicates"].min()) if len(t) else 0
        lines = ["| SS | " + " | ".join(SCORES[s].label for s in scores) + " |", "|---:|" + "---:|" * len(scores)]
        for n, g in t.groupby("n", sort=True):
            g = g.set_index("score")
            cells = [
                _bold(f"{_num(g.at[s, 'kl_mean_1e3'])} ± {_num(g.at[s, 'kl_se_1e3'], 1)}", g.at[s, "marked"])
                for s in scores
            ]
            lines.append(f"| {_size(n)} | " + " | ".join(cells) + " |")
        out = [
            f"KL divergence (1e-3 bits), mean ± standard error over {reps} replicates; bold: the lowest mean "
            f"and the scores not significantly different from it ({_test_name(self.test)}, 95%). CS and CS+ "
            f"with the Dirichlet prior {DirichletPrior.parse(self.study.cs_prior).label}; generating CPT rows "
            f"Dirichlet({self.study.concentration:g}).",
            "",
        ]
        out += lines
        other = "wilcoxon" if self.test == "t" else "t"
        column = "p_wilcoxon" if other == "wilcoxon" else "p_t"
        flips = [
            f"{SCORES[r['score']].label} at {_size(r['n'])} ({'marked' if r[column] >= 0.05 else 'not marked'}, "
            f"p = {r[column]:.3f})"
            for _, r in t.iterrows()
            if (r[column] >= 0.05) != bool(r["marked"])
        ]
        out += [
            "",
            f"With the {_test_name(other).split(' over')[0]} instead: "
            + ("the same marks." if not flips else "different marks for " + "; ".join(flips) + "."),
        ]
        if any(int(n) in PAPER_TABLE2 for n in t["n"]):
            out += [
                "",
                "The paper's Table 2 (50 replicates) at the same sizes:",
                "",
                "| SS | " + " | ".join(SCORES[s].label for s in scores) + " |",
                "|---:|" + "---:|" * len(scores),
            ]
            for n in sorted(set(int(x) for x in t["n"]) & set(PAPER_TABLE2)):
                cells = []
                for s in scores:
                    v = PAPER_TABLE2[n].get(s)
                    cells.append(_bold(f"{_num(v[0])} ± {_num(v[1], 1)}", v[2]) if v else "")
                lines_n = f"| {_size(n)} | " + " | ".join(cells) + " |"
                out.append(lines_n)
        return "\n".join(out)

    def selections_markdown(self, top: int = 3) -> str:
        """The most frequent selected cardinalities ``|H1|,|H2|,|H3|`` per size and score."""
        runs = self.runs()
        scores = list(self.study.scores)
        lines = ["| SS | " + " | ".join(SCORES[s].label for s in scores) + " |", "|---:|" + "---|" * len(scores)]
        for n, g in runs.groupby("n", sort=True):
            cells = []
            for s in scores:
                counts = Counter(g[g["score"] == s]["cards"]).most_common(top)
                cells.append(", ".join(f"{c} ({k})" for c, k in counts))
            lines.append(f"| {_size(n)} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _size(n: int) -> str:
    n = int(n)
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def _test_name(test: str) -> str:
    return {
        "t": "two-sided paired t-test over the same replicates",
        "wilcoxon": "two-sided Wilcoxon signed-rank test over the same replicates",
    }.get(test, test)
