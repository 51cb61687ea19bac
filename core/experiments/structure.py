"""Do de-corrected scores learn better latent trees? (docs/structure.md)

The design:

* Generating models: random latent trees (:func:`random_latent_tree`) with
  ``leaves`` observed variables (binary or ternary) and ``hidden`` hidden
  nodes (cardinality 2 or 3), every hidden node with at least three
  neighbours, regular (Section 4 of Kocka & Zhang 2002); CPT rows from
  Dirichlet(1), as the paper's Section 6. One tree and parametrization per
  replicate, shared by all sample sizes.
* From each, one data set per sample size; the structure is learned by
  :func:`effdim.structure.learn_structure` once per score (BIC, BIC+, CS,
  CS+), all from the same mutual-information start.
* Metrics per (replicate, size, score): the Robinson-Foulds distance between
  the leaf bipartitions of the learned and the true tree
  (:func:`effdim.structure.robinson_foulds`); the KL divergence from the
  truth to the learned model in bits (exact over the observed space up to
  2^16 states, else a Monte Carlo estimate from 20,000 draws of the truth);
  the number of hidden nodes; hidden-cardinality errors (true hidden nodes
  whose learned counterpart, the node that splits the leaves the same way,
  has another cardinality, plus true hidden nodes without a counterpart);
  ``exact`` (tree and cardinalities both right); the optimality gap ``gap``:
  the learned model's score minus that of the generating structure fitted
  by EM (:data:`TRUTH_RESTARTS` random starts) on the same data, under the
  score that drove the search (below 0: the search stopped short of a model
  it could have reached).

One job is one (replicate, size), cached and run like the Section 5-6 studies
(:mod:`effdim.experiments.runner`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ..distribution import Parameters, random_parameters, sample
from ..em import loglikelihood
from ..errors import InvalidArgument
from ..fitting import fit
from ..model import HLCModel
from ..notation import format_model, parse_model
from ..regularity import is_regular
from ..scores import PAPER_SCORES, SCORES
from ..structure import (
    MAX_ROUNDS,
    ROUNDS,
    SEARCH_VERSION,
    learn_structure,
    robinson_foulds,
    round_seeds,
    start_again,
)
from ..validation import check_int
from .common import Study, check_config, kl_bits, rng_for
from .runner import DEFAULT_CACHE_DIR, JobRecord, RunStats, run_jobs
from .stats import mean_se, paired_pvalue

__all__ = [
    "StructureStudy",
    "StructureResult",
    "structure_job",
    "rounds_job",
    "random_latent_tree",
    "hidden_signatures",
    "separated_parameters",
]

#: Exact KL up to this many observed states; a Monte Carlo estimate beyond.
EXACT_KL_STATES = 1 << 16
#: Draws of the Monte Carlo KL estimate.
KL_DRAWS = 20_000
#: Random EM starts of the generating structure's own fit (the optimality gap's reference).
TRUTH_RESTARTS = 10
#: A run whose score is more than this many nats below the generating structure's counts as stopped short.
GAP_TOLERANCE = 1.0
#: The largest generating trees a study draws (``--leaves``, ``--hidden``), refused before any tree is built:
#: a search over 100 variables already takes about 20 CPU minutes (README, "Structure learning").
MAX_LEAVES = 200
MAX_HIDDEN = 100


def random_latent_tree(rng: np.random.Generator, leaves: tuple[int, int], hidden: tuple[int, int]) -> HLCModel:
    """A random regular latent tree with ``leaves[0]..leaves[1]`` observed and ``hidden[0]..hidden[1]`` hidden nodes.

    Hidden nodes form a random tree (each joins a random earlier one); leaves
    are dealt so that every hidden node has at least three neighbours, the
    rest at random. Hidden cardinalities 2-3, leaves 2-3. Redrawn until regular.
    """
    while True:
        n_hidden = int(rng.integers(hidden[0], hidden[1] + 1))
        names = [f"H{i + 1}" for i in range(n_hidden)]
        edges = [(names[int(rng.integers(0, i))], names[i]) for i in range(1, n_hidden)]
        degree = {h: sum(h in e for e in edges) for h in names}
        need = {h: max(0, 3 - degree[h]) for h in names}
        n_leaves = max(int(rng.integers(leaves[0], leaves[1] + 1)), sum(need.values()))
        owners = [h for h in names for _ in range(need[h])]
        owners += [names[int(rng.integers(0, n_hidden))] for _ in range(n_leaves - len(owners))]
        cards = {h: int(rng.integers(2, 4)) for h in names}
        for i, h in enumerate(owners):
            cards[f"V{i + 1:02d}"] = int(rng.integers(2, 4))
            edges.append((h, f"V{i + 1:02d}"))
        model = HLCModel(cards, names, edges)
        if is_regular(model):
            return model


def separated_parameters(model: HLCModel, strength: float = 0.85) -> Parameters:
    """Well-separated parameters for any cardinalities: each child's row for parent state ``i`` puts
    ``strength`` on state ``i`` and spreads the rest evenly (a child with fewer states than its parent:
    on state 1 when ``i`` is the child's position among its siblings, so that the siblings together tell
    every parent state apart); the root uniform. Data from them make the generating tree the optimum at
    moderate sample sizes (the known-truth checks of the structure search)."""
    cpts = {}
    for node in model.nodes:
        parent = model.parent(node)
        k = model.card(node)
        if parent is None:
            cpts[node] = np.full(k, 1.0 / k)
            continue
        kp = model.card(parent)
        j = model.children(parent).index(node)
        table = np.full((kp, k), (1 - strength) / (k - 1))
        for i in range(kp):
            table[i, int(i == j % kp) if kp > k else i] = strength
        cpts[node] = table
    return Parameters(model, cpts)


def hidden_signatures(model: HLCModel) -> dict[frozenset, str]:
    """Each hidden node keyed by how it splits the leaves: the set of leaf sets of its branches."""
    graph = model.graph
    leaves = set(model.observed)
    out = {}
    for h in model.hidden:
        g = graph.copy()
        g.remove_node(h)
        out[frozenset(frozenset(leaves & c) for c in nx.connected_components(g))] = h
    return out


def kl_to_truth(truth, learned, rng: np.random.Generator) -> tuple[float, bool]:
    """``(KL(truth || learned) in bits, exact?)``: exact over small observed spaces, else Monte Carlo."""
    states = math.prod(truth.model.card(o) for o in truth.model.observed)
    if states <= EXACT_KL_STATES:
        return kl_bits(truth, learned), True
    draws = sample(truth, KL_DRAWS, rng)
    value = (loglikelihood(truth, draws) - loglikelihood(learned, draws)) / draws.n_rows / math.log(2)
    return max(value, 0.0), False


def replicate_data(config: dict) -> tuple[HLCModel, Parameters, np.ndarray]:
    """A job's generating tree, its parameters and its data set, from the job's configuration (its seed,
    replicate, size and tree ranges): the same for every run of the job, so a replicate can be studied alone."""
    rep, n, seed = config["replicate"], config["n"], config["seed"]
    tree_rng = rng_for(seed, "structure-tree", rep)
    truth_model = random_latent_tree(tree_rng, tuple(config["leaves"]), tuple(config["hidden"]))
    truth = random_parameters(truth_model, tree_rng)
    return truth_model, truth, sample(truth, int(n), rng_for(seed, "structure-data", rep, n))


def _run_row(score: str, result, truth_model: HLCModel, truth: Parameters, config: dict, score_truth: float) -> dict:
    """The metrics of one learned model (``result``: its ``model``, ``fit``, ``steps``, ``seconds`` and
    ``stopped``) against the generating tree and the generating structure's score ``score_truth``."""
    rep, n, seed = config["replicate"], config["n"], config["seed"]
    signatures = hidden_signatures(truth_model)
    learned = result.model
    found = hidden_signatures(learned)
    card_errors = sum(
        1 for sig, h in signatures.items() if sig not in found or learned.card(found[sig]) != truth_model.card(h)
    )
    kl, exact_kl = kl_to_truth(truth, result.fit.params, rng_for(seed, "structure-kl", rep, n, score))
    rf = robinson_foulds(learned, truth_model)
    return {
        "score": score,
        "learned": format_model(learned),
        "rf": rf,
        "kl_bits": kl,
        "kl_exact": exact_kl,
        "hidden_true": len(truth_model.hidden),
        "hidden_learned": len(learned.hidden),
        "card_errors": card_errors,
        "exact": rf == 0 and card_errors == 0 and len(found) == len(signatures),
        "steps": len(result.steps),
        "seconds": round(result.seconds, 3),
        "stopped": result.stopped,
        "ds": result.fit.ds,
        "de": result.fit.de,
        "score_learned": result.fit.score(score),
        "score_truth": score_truth,
        "gap": result.fit.score(score) - score_truth,
    }


def _search_seed(config: dict) -> np.random.Generator:
    """The stream of every search of a job: the same for every score (identical decisions give identical
    fits, so the scores differ only where their choices do: a paired comparison)."""
    return rng_for(config["seed"], "structure-fit", config["replicate"], config["n"])


def structure_job(config: dict) -> dict:
    """One job: a random tree and data set, the structure learned per score by one search from the
    mutual-information start (``rounds=0``; the rounds after it are :func:`rounds_job`). JSON in, JSON out."""
    rep, n, seed = config["replicate"], config["n"], config["seed"]
    truth_model, truth, data = replicate_data(config)
    # the generating structure fitted by EM: what the search should reach (or beat) under every score
    reference = fit(
        data, truth_model, restarts=TRUTH_RESTARTS, seed=rng_for(seed, "structure-truth", rep, n), warn=False
    )
    rows = []
    for score in config["scores"]:
        result = learn_structure(
            data,
            score=score,
            restarts=config["restarts"],
            max_time=config["max_time"],
            cpu_time=config.get("clock") == "cpu",
            seed=_search_seed(config),
            rounds=0,
        )
        rows.append(_run_row(score, result, truth_model, truth, config, reference.score(score)))
    return {"truth": format_model(truth_model), "leaves": len(truth_model.observed), "runs": rows}


def rounds_job(config: dict) -> dict:
    """The rounds after each search of a :func:`structure_job` (``config["first"]``, its result):
    :func:`effdim.structure.start_again` from the search's end, with the round streams that
    :func:`learn_structure` spawns from the same seed, within what the search left of the time limit. So a
    run is the one ``learn_structure(..., rounds=config["rounds"])`` makes, but the first search is read
    from its cached job instead of run again. Each run gains ``rounds``: the rounds that ended higher."""
    truth_model, truth, data = replicate_data(config)
    rows = []
    for run in config["first"]["runs"]:
        if run["stopped"] != "converged":
            rows.append({**run, "rounds": 0})
            continue
        score = run["score"]
        after = start_again(
            data,
            parse_model(run["learned"]),
            run["score_learned"],
            seeds=round_seeds(_search_seed(config), config["rounds"]),
            score=score,
            max_time=config["max_time"] - run["seconds"],
            cpu_time=config.get("clock") == "cpu",
            restarts=config["restarts"],
        )
        row = dict(run)
        if after.gained:
            last = after.gained[-1]
            row = _run_row(score, last, truth_model, truth, config, run["score_truth"])
            row["steps"] = run["steps"] + sum(len(r.steps) for r in after.gained)
        row["seconds"] = round(run["seconds"] + after.seconds, 3)
        row["stopped"] = "max_time" if after.cut else "converged"
        row["rounds"] = len(after.gained)
        rows.append(row)
    return {**config["first"], "runs": rows}


@dataclass(frozen=True)
class StructureStudy(Study):
    """Configuration of the structure study (docs/structure.md)."""

    replicates: int = 20
    sizes: tuple[int, ...] = (1000, 3000, 10000, 30000, 100000)
    scores: tuple[str, ...] = PAPER_SCORES
    leaves: tuple[int, int] = (8, 20)
    hidden: tuple[int, int] = (2, 6)
    restarts: int = 5
    max_time: float = 600.0
    seed: int = 0
    rounds: int = ROUNDS

    name = "structure"

    #: ``"full"``: 20 replicates x 5 sizes (1k-100k), 8-20 leaves, 2-6 hidden nodes;
    #: ``"quick"``: 6 replicates of 1k and 10k with 8-12 leaves and 2-4 hidden nodes.
    presets = {
        "full": {},
        "quick": {"replicates": 6, "sizes": (1000, 10000), "leaves": (8, 12), "hidden": (2, 4), "max_time": 120.0},
    }

    def __post_init__(self) -> None:
        check_config(self.replicates, self.sizes, self.scores, self.restarts)
        for label, (low, high), least, most in (
            ("leaves", self.leaves, 3, MAX_LEAVES),
            ("hidden", self.hidden, 1, MAX_HIDDEN),
        ):
            if not least <= low <= high <= most:
                raise InvalidArgument(f"{label} must be a range low..high from {least} to {most}, got {low}..{high}")
        check_int("rounds", self.rounds, low=0, high=MAX_ROUNDS)

    def jobs(self) -> list[dict]:
        """One configuration per (replicate, size)."""
        common = {
            "scores": list(self.scores),
            "leaves": list(self.leaves),
            "hidden": list(self.hidden),
            "restarts": self.restarts,
            "max_time": self.max_time,
            "clock": "cpu",  # the limit in CPU seconds: where a search stops does not depend on the load
            "seed": self.seed,
            "search": SEARCH_VERSION,
        }  # a new search never reuses an old search's cached jobs
        return self.replicate_jobs(common)

    job = staticmethod(structure_job)
    prefix = "structure"

    def run(self, *, cache_dir=DEFAULT_CACHE_DIR, cached_only: bool = False, **options) -> StructureResult:
        """Two stages, each cached (:meth:`Study.run` for the options): the first search of every job
        (:func:`structure_job`), then the rounds after each (:func:`rounds_job`, configured with the first
        stage's result), so that a study with more rounds reuses its first searches."""
        first = super().run(cache_dir=cache_dir, cached_only=cached_only, **options)
        if not self.rounds:
            return first
        configs = [{**r.config, "rounds": self.rounds, "first": r.result} for r in first.records]
        records, stats = run_jobs(
            rounds_job,
            configs,
            cache_dir=cache_dir,
            prefix=f"{self.prefix}-rounds",
            label=f"{self.prefix} rounds",
            cached_only=cached_only,
            **options,
        )
        # a job of the design is its first search and its rounds: cached when both are, missing when either is
        stats.total = first.stats.total
        stats.missing += first.stats.missing
        stats.damaged[:0] = first.stats.damaged
        stats.job_seconds += first.stats.job_seconds
        stats.wall_seconds += first.stats.wall_seconds
        return self.result(records, stats)

    def result(self, records: list, stats: RunStats) -> StructureResult:
        return StructureResult(self, records, stats)


@dataclass
class StructureResult:
    """The finished structure study: configuration, job records, run statistics."""

    study: StructureStudy
    records: list[JobRecord]
    stats: RunStats
    test: str = "t"
    _frames: dict = field(default_factory=dict, repr=False)

    def runs(self):
        """One row per (replicate, n, score): the true and learned trees and every metric."""
        import pandas as pd

        rows = []
        for rec in self.records:
            for r in rec.result["runs"]:
                rows.append(
                    {
                        "replicate": rec.config["replicate"],
                        "n": rec.config["n"],
                        "truth": rec.result["truth"],
                        "leaves": rec.result["leaves"],
                        **r,
                    }
                )
        return pd.DataFrame(rows)

    def fits(self):
        """The learned models (one per run), for the common ``<study>_fits.csv`` file."""
        return self.runs()[["replicate", "n", "score", "learned", "ds", "de", "kl_bits", "seconds"]]

    def summary(self):
        """Per (n, score): mean ± standard error of RF distance, KL (1e-3 bits) and cardinality
        errors; the share of exact recoveries; mean hidden nodes learned and true; the optimality gap's
        median and minimum and the runs more than :data:`GAP_TOLERANCE` below the truth: ``below_truth`` those
        whose search converged (it stopped in a local optimum), ``timed_out_below`` those stopped by the time
        limit (a search cut short, not one that failed); ``rounds_gained`` the runs whose rounds (started again
        from the first search's end) ended higher."""
        import pandas as pd

        runs = self.runs()
        rows = []
        for (n, score), g in runs.groupby(["n", "score"], sort=True):
            rf, rf_se = mean_se(g["rf"])
            kl, kl_se = mean_se(g["kl_bits"] * 1e3)
            ce, ce_se = mean_se(g["card_errors"])
            rows.append(
                {
                    "n": int(n),
                    "score": score,
                    "replicates": len(g),
                    "rf_mean": rf,
                    "rf_se": rf_se,
                    "kl_mean_1e3": kl,
                    "kl_se_1e3": kl_se,
                    "card_errors_mean": ce,
                    "card_errors_se": ce_se,
                    "exact_share": float(g["exact"].mean()),
                    "hidden_learned_mean": float(g["hidden_learned"].mean()),
                    "hidden_true_mean": float(g["hidden_true"].mean()),
                    "seconds_mean": float(g["seconds"].mean()),
                    "timed_out": int((g["stopped"] == "max_time").sum()),
                    "gap_median": float(g["gap"].median()),
                    "gap_min": float(g["gap"].min()),
                    "below_truth": int(((g["gap"] < -GAP_TOLERANCE) & (g["stopped"] != "max_time")).sum()),
                    "timed_out_below": int(((g["gap"] < -GAP_TOLERANCE) & (g["stopped"] == "max_time")).sum()),
                    # runs whose rounds ended higher than their first search (none in a study without rounds)
                    "rounds_gained": int((g["rounds"] > 0).sum()) if "rounds" in g else 0,
                }
            )
        order = {s: i for i, s in enumerate(self.study.scores)}
        return (
            pd.DataFrame(rows)
            .sort_values(["n", "score"], key=lambda c: c.map(order) if c.name == "score" else c)
            .reset_index(drop=True)
        )

    def paired(self):
        """Each de-corrected score against its ds twin (BIC+ against BIC, CS+ against CS), per ``n``, paired
        by replicate (the same data and EM stream): how often they learn the same tree; how often the de
        version's Robinson-Foulds distance is lower (``rf_better``) or higher (``rf_worse``); the mean
        differences (de version minus ds version) of RF, KL (1e-3 bits) and cardinality errors with the
        two-sided paired t-test p-values of RF and KL (:func:`effdim.experiments.stats.paired_pvalue`)."""
        import pandas as pd

        runs = self.runs()
        rows = []
        for plain, corrected in (("bic", "bic+"), ("cs", "cs+")):
            if plain not in self.study.scores or corrected not in self.study.scores:
                continue
            for n, g in runs.groupby("n", sort=True):
                a = g[g["score"] == corrected].set_index("replicate").sort_index()
                b = g[g["score"] == plain].set_index("replicate").sort_index()
                rf = a["rf"] - b["rf"]
                rows.append(
                    {
                        "n": int(n),
                        "pair": f"{SCORES[corrected].label} - {SCORES[plain].label}",
                        "replicates": len(a),
                        "same_tree": int((a["learned"] == b["learned"]).sum()),
                        "rf_better": int((rf < 0).sum()),
                        "rf_worse": int((rf > 0).sum()),
                        "rf_diff": float(rf.mean()),
                        "rf_p": paired_pvalue(a["rf"], b["rf"]),
                        "kl_diff_1e3": float((a["kl_bits"] - b["kl_bits"]).mean() * 1e3),
                        "kl_p": paired_pvalue(a["kl_bits"], b["kl_bits"]),
                        "card_errors_diff": float((a["card_errors"] - b["card_errors"]).mean()),
                        "hidden_diff": float((a["hidden_learned"] - b["hidden_learned"]).mean()),
                        "deficit_diff": float(((a["ds"] - a["de"]) - (b["ds"] - b["de"])).mean()),
                    }
                )
        return pd.DataFrame(rows)

    def markdown(self) -> str:
        """The summary as markdown tables, one block per metric, then the paired comparisons."""
        t = self.summary()
        scores = list(self.study.scores)
        out = [
            "Mean ± standard error over the replicates (random trees) of each size; lower is better except "
            "exact recoveries."
        ]
        for title, mean, se in (
            ("Robinson-Foulds distance to the true tree", "rf_mean", "rf_se"),
            ("KL divergence from the truth (1e-3 bits)", "kl_mean_1e3", "kl_se_1e3"),
            ("Hidden-cardinality errors", "card_errors_mean", "card_errors_se"),
            ("Exact recoveries (tree and cardinalities), share", "exact_share", None),
        ):
            out += [
                "",
                f"**{title}**",
                "",
                "| n | replicates | " + " | ".join(SCORES[s].label for s in scores) + " |",
                "|---:|---:|" + "---:|" * len(scores),
            ]
            for n, g in t.groupby("n", sort=True):
                g = g.set_index("score")
                cells = [f"{g.at[s, mean]:.3g}" + (f" ± {g.at[s, se]:.2g}" if se else "") for s in scores]
                out.append(f"| {int(n):,} | {int(g['replicates'].min())} | " + " | ".join(cells) + " |")
        out += [
            "",
            f"**Optimality gap: the learned score minus the generating structure's (fitted by EM), nats; "
            f"median [lowest], and converged runs more than {GAP_TOLERANCE:g} nat below it (runs stopped by the "
            f"{self.study.max_time:g} s CPU-time limit counted apart)**",
            "",
            "| n | replicates | " + " | ".join(SCORES[s].label for s in scores) + " |",
            "|---:|---:|" + "---:|" * len(scores),
        ]
        for n, g in t.groupby("n", sort=True):
            g = g.set_index("score")
            cells = [
                f"{g.at[s, 'gap_median']:+.1f} [{g.at[s, 'gap_min']:+.1f}], {int(g.at[s, 'below_truth'])} below"
                + (f" (+{int(g.at[s, 'timed_out_below'])} stopped by time)" if g.at[s, "timed_out_below"] else "")
                for s in scores
            ]
            out.append(f"| {int(n):,} | {int(g['replicates'].min())} | " + " | ".join(cells) + " |")
        pairs = self.paired()
        if len(pairs):
            out += [
                "",
                "**Paired: the de-corrected score minus its ds twin, same data sets**",
                "",
                "| n | pair | same tree | RF lower / higher | RF diff (p) | KL diff, 1e-3 bits (p) "
                "| card. errors diff | hidden nodes diff | ds - de diff |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for r in pairs.itertuples():
                out.append(
                    f"| {r.n:,} | {r.pair} | {r.same_tree}/{r.replicates} | {r.rf_better} / {r.rf_worse} "
                    f"| {r.rf_diff:+.2f} ({r.rf_p:.2g}) | {r.kl_diff_1e3:+.3g} ({r.kl_p:.2g}) "
                    f"| {r.card_errors_diff:+.2f} | {r.hidden_diff:+.2f} | {r.deficit_diff:+.2f} |"
                )
        return "\n".join(out)
