"""How often each criterion picks the true number of classes, and the tests' calibration under the null.

Beyond the paper: does the effective dimension help choose the number of
latent classes? Designs (:data:`DESIGNS`), each an LC model whose classes are
to be found:

* ``vignette``: the sBIC package's vignette "Latent Class Analysis", 8 binary
  items, 4 equal classes, each item high (0.85) in one class and low (0.1 or
  0.2) in the others (fixed parameters); on its 50 rows BIC picks 1 class and
  sBIC 4 (``tests/test_sbic.py``);
* ``3:2,2,2,2``: 4 binary items, 3 classes, ``de = 13 < ds = 14``;
* ``4:3,3,3``: 3 ternary items, 4 classes, ``de = 25 < ds = 27``;
* ``4:2,3,5``: unequal categories, 4 classes, ``de = 27 < ds = 31``;
* ``3:2,3,4,5,3,2``: unequal categories, 3 classes, ``de = ds = 41``.

The random designs draw each replicate's parameters from its own stream: the
class shares from a Dirichlet(``share_concentration``) (near-equal classes)
and every item's rows from a Dirichlet(``row_concentration``) (below 1:
items that tell classes apart). One job is one (design, replicate, sample
size): the data drawn, a sweep of ``1 .. k + 2`` classes (within the regular
maximum), then the bootstrap LRT of every ``k`` up to the true one plus one
against ``k - 1`` (:func:`effdim.bootstrap.blrt_sweep`; enough for its pick
to be right, below or above the truth, and for its test under the null) and
the class-enumeration table (:func:`effdim.enumeration.enumeration_table`:
the VLMR tests of every ``k``).

Reported per design and size: the share of replicates each of BIC, BIC+,
sBIC, sBIC+, CS+, the BLRT, the VLMR and the adjusted LMR picks the true
``k`` (a test picks the first ``k`` whose ``k + 1`` is not significant at
0.05), and its share below and above; and, since every replicate's test of
the true ``k`` against ``k + 1`` is a test under its null, how often each
test rejects it at 0.05 and 0.01, and the Kolmogorov-Smirnov distance of its
p-values from the uniform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..distribution import Parameters, sample
from ..errors import InvalidArgument
from ..model import HLCModel
from ..priors import DEFAULT_CS_PRIOR, DirichletPrior
from ..regularity import largest_regular_card
from ..settings import EMSettings
from .common import MAX_REPLICATES, Study, check_config, rng_for
from .runner import JobRecord, RunStats

__all__ = ["EnumerationStudy", "EnumerationResult", "enumeration_job", "vignette_parameters", "DESIGNS", "PICKERS"]

#: The designs by name: the generating LC model (the vignette's parameters are fixed, the others drawn).
DESIGNS: dict[str, str] = {
    "vignette": "4:2,2,2,2,2,2,2,2",
    "3:2,2,2,2": "3:2,2,2,2",
    "4:3,3,3": "4:3,3,3",
    "4:2,3,5": "4:2,3,5",
    "3:2,3,4,5,3,2": "3:2,3,4,5,3,2",
}
#: What picks a number of classes: the criteria (names of :data:`effdim.scores.SCORES`) and the tests.
PICKERS: dict[str, str] = {
    "bic": "BIC",
    "bic+": "BIC+",
    "sbic": "sBIC",
    "sbic+": "sBIC+",
    "cs+": "CS+",
    "blrt": "BLRT",
    "vlmr": "VLMR",
    "almr": "aLMR",
}
#: The criteria among the pickers (each picks its best k, ties to the smaller model).
CRITERIA = ("bic", "bic+", "sbic", "sbic+", "cs+")
#: The tests' p-value columns of a job's rows, by picker.
TESTS = {"blrt": "blrt_p", "vlmr": "vlmr_p", "almr": "lmr_adjusted_p"}
ALPHA = 0.05


def vignette_parameters(model: HLCModel) -> Parameters:
    """The sBIC vignette's parameters: 4 equal classes; item pair ``2c - 1, 2c`` is likely (0.85) in class
    ``c`` and unlikely (0.1 for the first, 0.2 for the second of the pair) in the others."""
    high = np.full((8, 4), np.nan)
    for item in range(8):
        low = 0.1 if item % 2 == 0 else 0.2
        high[item] = [0.85 if c == item // 2 else low for c in range(4)]
    cpts = {model.root: np.full(4, 0.25)}
    for item, leaf in enumerate(model.observed):
        cpts[leaf] = np.column_stack([high[item], 1 - high[item]])
    return Parameters(model, cpts)


def _truth(config: dict) -> Parameters:
    model = HLCModel.parse(DESIGNS[config["design"]])
    if config["design"] == "vignette":
        return vignette_parameters(model)
    rng = rng_for(config["seed"], "enumeration-params", config["design"], config["replicate"])
    k = model.card(model.root)
    cpts = {model.root: rng.dirichlet(np.full(k, config["share_concentration"]))}
    for leaf in model.observed:
        rows = rng.dirichlet(np.full(model.card(leaf), config["row_concentration"]), size=k)
        cpts[leaf] = np.maximum(rows, 1e-6) / np.maximum(rows, 1e-6).sum(axis=1, keepdims=True)
    return Parameters(model, cpts)


def enumeration_job(config: dict) -> dict:
    """One job of the study (module docstring); JSON in, JSON out.

    ``config``: ``design``, ``replicate``, ``n``, ``seed``, ``cards``,
    ``restarts``, ``tol``, ``max_iter``, ``cs_prior``, ``B``,
    ``share_concentration``, ``row_concentration``. Returns ``{"rows": [...], "picks": {picker: k}}``:
    per fitted ``k`` its log-likelihood, ``ds``, ``de``, criteria and the
    tests' p-values of ``k - 1`` against ``k``.
    """
    from ..bootstrap import blrt_sweep
    from ..enumeration import enumeration_table
    from ..executor import Execution
    from ..scores import best
    from ..search import sweep

    truth = _truth(config)
    design, rep, n, seed = config["design"], config["replicate"], config["n"], config["seed"]
    data = sample(truth, int(n), rng_for(seed, "enumeration-data", design, rep, n))
    settings = EMSettings(
        restarts=config["restarts"],
        tol=config["tol"],
        max_iter=config["max_iter"],
        cs_prior=config["cs_prior"],
        seed=rng_for(seed, "enumeration-fit", design, rep, n),
    )
    fits = sweep(data, truth.model, cards=config["cards"], settings=settings)
    # the BLRT of every k up to the true k + 1: the pick (the first k whose k + 1 is not significant; the true
    # k + 1 when every test rejects, a pick above the truth either way) and the test under the null
    true_k = truth.model.card(truth.model.root)
    boot = blrt_sweep(
        [f for f in fits if f.card <= true_k + 1],
        config["B"],
        settings.with_seed(rng_for(seed, "enumeration-blrt", design, rep, n)),
        execution=Execution("serial"),
    )
    table = enumeration_table(fits, boot)
    picks = {**table.picks(), "BLRT": replace(table, rows=table.rows[: true_k + 1]).picks()["BLRT"]}
    rows = []
    for fit, row in zip(fits, table.rows):
        s = fit.scores
        rows.append(
            {
                "k": row.k,
                "loglik": s.loglik,
                "ds": s.ds,
                "de": s.de,
                **{key: getattr(s, key) for key in ("bic", "bic_plus", "sbic", "sbic_plus", "cs_plus")},
                **{column: getattr(row, column) for column in TESTS.values()},
                "starts_at_best": row.starts_at_best,
            }
        )
    chosen = {name: best(fits, name).card for name in CRITERIA}
    chosen.update({test: picks[PICKERS[test]] for test in TESTS})
    return {"rows": rows, "picks": chosen}


@dataclass(frozen=True)
class EnumerationStudy(Study):
    """Configuration of the class-enumeration study (module docstring; docs/enumeration.md)."""

    designs: tuple[str, ...] = tuple(DESIGNS)
    replicates: int = 20
    sizes: tuple[int, ...] = (50, 500, 5000)
    B: int = 19
    restarts: int = 5
    tol: float = 1e-8
    max_iter: int = 500
    seed: int = 0
    share_concentration: float = 4.0
    row_concentration: float = 0.5
    cs_prior: str = str(DEFAULT_CS_PRIOR)

    name = "enumeration"

    #: ``"full"``: 5 designs x 20 replicates x 3 sizes (300 jobs), B = 19 (the least for a test at 0.05);
    #: ``"quick"``: one replicate of 50 rows per design, B = 3, 2 starts of at most 200 EM steps (seconds).
    presets = {"full": {}, "quick": {"replicates": 1, "sizes": (50,), "B": 3, "restarts": 2, "max_iter": 200}}

    def __post_init__(self) -> None:
        check_config(self.replicates, self.sizes, ("bic",), self.restarts)
        object.__setattr__(self, "cs_prior", str(DirichletPrior.parse(self.cs_prior)))
        unknown = [d for d in self.designs if d not in DESIGNS]
        if unknown or not self.designs:
            raise InvalidArgument(f"unknown design {unknown[0] if unknown else ''!r}; choose from {', '.join(DESIGNS)}")
        if not 1 <= int(self.B) <= MAX_REPLICATES:
            raise InvalidArgument(f"the bootstrap replicates B must be from 1 to {MAX_REPLICATES:,}, got {self.B}")
        for label in ("share_concentration", "row_concentration"):
            value = getattr(self, label)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InvalidArgument(f"{label} must be a positive number, got {value!r}")

    @staticmethod
    def fitted_cards(design: str) -> list[int]:
        """``1 .. k + 2`` for a design with ``k`` true classes, within the regular maximum (Lemma 3.2)."""
        model = HLCModel.parse(DESIGNS[design])
        k = model.card(model.root)
        return list(range(1, min(k + 2, largest_regular_card(model, model.root)) + 1))

    def jobs(self) -> list[dict]:
        """One configuration per (design, replicate, size)."""
        common = {
            "restarts": self.restarts,
            "tol": self.tol,
            "max_iter": self.max_iter,
            "seed": self.seed,
            "B": self.B,
            "share_concentration": self.share_concentration,
            "row_concentration": self.row_concentration,
            "cs_prior": self.cs_prior,
        }
        return [
            {"design": d, "cards": self.fitted_cards(d), **job}
            for d in self.designs
            for job in self.replicate_jobs(common)
        ]

    job = staticmethod(enumeration_job)
    prefix = "enumeration"
    schema = {"rows": [dict], "picks": dict}

    def result(self, records: list, stats: RunStats) -> EnumerationResult:
        return EnumerationResult(self, records, stats)


@dataclass
class EnumerationResult:
    """The finished study: configuration, job records, run statistics."""

    study: EnumerationStudy
    records: list[JobRecord]
    stats: RunStats
    test: str = "t"
    _frames: dict = field(default_factory=dict, repr=False)

    def fits(self):
        """Every fitted ``k`` of every replicate: criteria and the tests' p-values of ``k - 1`` against ``k``."""
        import pandas as pd

        rows = [
            {"design": r.config["design"], "replicate": r.config["replicate"], "n": r.config["n"], **row}
            for r in self.records
            for row in r.result["rows"]
        ]
        return pd.DataFrame(rows)

    def runs(self):
        """One row per (design, replicate, n, picker): the true ``k`` and the picked one."""
        import pandas as pd

        rows = []
        for r in self.records:
            truth = _true_k(r.config["design"])
            for picker, k in r.result["picks"].items():
                rows.append(
                    {
                        "design": r.config["design"],
                        "replicate": r.config["replicate"],
                        "n": r.config["n"],
                        "picker": picker,
                        "true_k": truth,
                        "picked_k": k,
                    }
                )
        return pd.DataFrame(rows)

    def summary(self):
        """Per (design, n, picker): replicates, and the shares picking the true ``k``, fewer and more."""
        import pandas as pd

        runs = self.runs()
        rows = []
        for (design, n, picker), g in runs.groupby(["design", "n", "picker"], sort=False):
            picked = g["picked_k"].astype(float)
            rows.append(
                {
                    "design": design,
                    "n": int(n),
                    "picker": picker,
                    "replicates": len(g),
                    "true_share": float((picked == g["true_k"]).mean()),
                    "under_share": float((picked < g["true_k"]).mean()),
                    "over_share": float((picked > g["true_k"]).mean()),
                    "mean_k": float(picked.mean()),
                }
            )
        frame = pd.DataFrame(rows)
        order = {p: i for i, p in enumerate(PICKERS)}
        designs = {d: i for i, d in enumerate(self.study.designs)}
        return frame.sort_values(
            ["design", "n", "picker"],
            key=lambda c: c.map(designs) if c.name == "design" else c.map(order) if c.name == "picker" else c,
        ).reset_index(drop=True)

    def calibration(self):
        """Per (design, n, test): the tests of the true ``k`` against ``k + 1`` (each under its null): how
        many, the shares rejected at 0.05 and 0.01, the mean p-value and the Kolmogorov-Smirnov distance of
        the p-values from the uniform."""
        import pandas as pd

        fits = self.fits()
        rows = []
        for (design, n), g in fits.groupby(["design", "n"], sort=False):
            null = g[g["k"] == _true_k(design) + 1]
            for test, column in TESTS.items():
                p = null[column].dropna().to_numpy(dtype=float)
                if not p.size:
                    continue
                rows.append(
                    {
                        "design": design,
                        "n": int(n),
                        "test": test,
                        "tests": int(p.size),
                        "reject_05": float(np.mean(p <= 0.05)),
                        "reject_01": float(np.mean(p <= 0.01)),
                        "mean_p": float(p.mean()),
                        "ks": _ks_uniform(p),
                    }
                )
        return pd.DataFrame(rows)

    def markdown(self) -> str:
        """The shares picking the true number of classes, then the tests' calibration, as Markdown."""
        t = self.summary()
        pickers = [p for p in PICKERS if p in set(t["picker"])]
        out = [
            "Share of replicates whose pick is the true number of classes (below it / above it), per design and "
            "sample size; a test picks the first k whose k + 1 is not significant at 0.05.",
        ]
        for design, g in t.groupby("design", sort=False):
            out += [
                "",
                f"**{design}** (true k = {_true_k(design)}; fitted k = "
                f"{', '.join(map(str, self.study.fitted_cards(design)))})",
                "",
                "| n | replicates | " + " | ".join(PICKERS[p] for p in pickers) + " |",
                "|---:|---:|" + "---:|" * len(pickers),
            ]
            for n, h in g.groupby("n", sort=True):
                h = h.set_index("picker")
                cells = [
                    f"{h.at[p, 'true_share']:.2f} ({h.at[p, 'under_share']:.2f}/{h.at[p, 'over_share']:.2f})"
                    for p in pickers
                ]
                out.append(f"| {int(n):,} | {int(h['replicates'].min())} | " + " | ".join(cells) + " |")
        cal = self.calibration()
        if len(cal):
            out += [
                "",
                f"**Under the null: the test of the true k against k + 1** (BLRT with B = {self.study.B}: its "
                "smallest p is 1 / (B + 1)); share rejected at 0.05 and 0.01, mean p, Kolmogorov-Smirnov "
                "distance from the uniform",
                "",
                "| design | n | tests | BLRT 0.05 / 0.01 | VLMR 0.05 / 0.01 | aLMR 0.05 / 0.01 "
                "| mean p (BLRT, VLMR, aLMR) | KS (BLRT, VLMR, aLMR) |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for (design, n), g in cal.groupby(["design", "n"], sort=False):
                g = g.set_index("test")
                rates = [f"{g.at[t, 'reject_05']:.2f} / {g.at[t, 'reject_01']:.2f}" for t in TESTS]
                means = ", ".join(f"{g.at[t, 'mean_p']:.2f}" for t in TESTS)
                ks = ", ".join(f"{g.at[t, 'ks']:.2f}" for t in TESTS)
                out.append(
                    f"| {design} | {int(n):,} | {int(g['tests'].min())} | " + " | ".join(rates) + f" | {means} | {ks} |"
                )
        return "\n".join(out)


def _true_k(design: str) -> int:
    model = HLCModel.parse(DESIGNS[design])
    return model.card(model.root)


def _ks_uniform(p: np.ndarray) -> float:
    """``sup |F_n(x) - x|`` of the p-values' empirical distribution against the uniform on [0, 1]."""
    p = np.sort(np.clip(np.asarray(p, dtype=float), 0.0, 1.0))
    i = np.arange(1, p.size + 1)
    return float(max(np.max(i / p.size - p), np.max(p - (i - 1) / p.size)))
