"""Pieces shared by the LC (Section 5) and HLC (Section 6) studies."""

from __future__ import annotations

import math
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ..distribution import Parameters, kl_divergence
from ..errors import InvalidArgument
from ..executor import Execution
from ..model import HLCModel
from ..scores import PAPER_SCORES, SCORES
from .runner import DEFAULT_CACHE_DIR, run_jobs

__all__ = [
    "Study",
    "FIT_COLUMNS",
    "STUDY_SCORES",
    "MAX_REPLICATES",
    "MAX_SAMPLE_SIZE",
    "MAX_RESTARTS",
    "rng_for",
    "parse_sizes",
    "check_config",
    "kl_bits",
    "fit_row",
]

#: Criteria a study can compare (:data:`effdim.scores.SCORES` names); their keys are CSV columns.
STUDY_SCORES = (*PAPER_SCORES, "aic")
#: Columns of a fit row (:func:`fit_row`), in the order the CSV files use.
FIT_COLUMNS = ("model", "loglik", *(SCORES[s].key for s in STUDY_SCORES), "ds", "de", "kl_bits", "degenerate")
#: The largest settings a study takes, checked before any job is listed or any data drawn: a mistyped
#: number is refused at once instead of filling the memory or running for days. The paper's designs
#: (docs/experiments.md) stay far below them: 20 replicates, at most 100,000 rows, a few restarts.
MAX_REPLICATES = 10_000
MAX_SAMPLE_SIZE = 10_000_000
MAX_RESTARTS = 1_000


def rng_for(seed: int, *parts: Any) -> np.random.Generator:
    """A generator determined by ``seed`` and the labelled ``parts`` (strings or ints).

    Strings are mapped to integers by CRC-32, so the stream of, say,
    replicate 7 of ``8:2,2,2,2`` is the same whatever else the run contains
    (adding replicates or sizes never changes existing jobs).
    """
    key = tuple(int(p) if isinstance(p, (int, np.integer)) else zlib.crc32(str(p).encode()) for p in parts)
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


def parse_sizes(text: str) -> tuple[int, ...]:
    """``"1k,3k,9000"`` -> ``(1000, 3000, 9000)`` (suffixes ``k`` and ``m``)."""
    sizes = []
    for part in str(text).split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = 1
        if part[-1] in "km":
            mult = 1000 if part[-1] == "k" else 1_000_000
            part = part[:-1]
        try:
            value = float(part) * mult
        except ValueError:
            raise InvalidArgument(f"sample size {part!r} is not a number") from None
        if not math.isfinite(value) or value < 1 or value != int(value):
            raise InvalidArgument(f"sample sizes must be positive whole numbers, got {value:g}")
        sizes.append(int(value))
    if not sizes:
        raise InvalidArgument("no sample sizes given")
    return tuple(sizes)


def check_config(replicates: int, sizes: tuple[int, ...], scores: tuple[str, ...], restarts: int) -> None:
    """Raise :class:`effdim.errors.InvalidArgument` naming the first bad setting."""
    if not 1 <= int(replicates) <= MAX_REPLICATES:
        raise InvalidArgument(f"replicates must be from 1 to {MAX_REPLICATES:,}, got {replicates}")
    if not sizes or any(int(n) < 1 for n in sizes):
        raise InvalidArgument(f"sample sizes must be positive, got {sizes}")
    too_big = [int(n) for n in sizes if int(n) > MAX_SAMPLE_SIZE]
    if too_big:
        raise InvalidArgument(
            f"sample size {too_big[0]:,} is above the largest a study draws, {MAX_SAMPLE_SIZE:,} rows"
        )
    unknown = [s for s in scores if s not in STUDY_SCORES]
    if unknown or not scores:
        raise InvalidArgument(f"unknown score {unknown[0] if unknown else ''!r}; choose from {', '.join(STUDY_SCORES)}")
    if not 1 <= int(restarts) <= MAX_RESTARTS:
        raise InvalidArgument(f"restarts must be from 1 to {MAX_RESTARTS:,}, got {restarts}")


def kl_bits(truth: Parameters, learned: Parameters) -> float:
    """KL(P_truth || P_learned) of the observed distributions, in bits (Section 6)."""
    return float(kl_divergence(truth, learned, base=2))


def fit_row(fit: Any, truth: Parameters) -> dict[str, Any]:
    """The JSON row of one :class:`effdim.FitResult`: scores, dimensions, KL to the truth."""
    from ..notation import format_model

    row = {
        "model": format_model(fit.model),
        "loglik": float(fit.loglik),
        **{SCORES[s].key: float(fit.score(s)) for s in STUDY_SCORES},
        "ds": int(fit.ds),
        "de": int(fit.de),
        "kl_bits": kl_bits(truth, fit.params),
        "degenerate": len(fit.degenerate),
    }
    # JSON has no infinity: keep it as a string the loader turns back
    return {k: ("inf" if isinstance(v, float) and math.isinf(v) else v) for k, v in row.items()}


#: A score or KL value: a number, or "inf" (JSON has no infinity).
_SCORE = (float, int, str)
#: The schema of :func:`fit_row`.
FIT_ROW_SCHEMA = {
    "model": str,
    "loglik": (float, int),
    **{SCORES[s].key: _SCORE for s in STUDY_SCORES},
    "ds": int,
    "de": int,
    "kl_bits": _SCORE,
    "degenerate": int,
}


def hidden_cards(model: HLCModel) -> str:
    """The paper's short form of the hidden cardinalities, ``"5,3,3"`` (hidden nodes in pre-order)."""
    return ",".join(str(model.card(h)) for h in model.hidden)


class Study:
    """What the LC and HLC studies share: running their jobs through :func:`run_jobs`.

    A subclass defines ``jobs()``, the job function ``job`` (a staticmethod),
    the cache ``prefix``, ``result(records, stats)`` and ``presets`` (name ->
    field values; ``"full"`` is the paper's design).
    """

    prefix = ""
    presets: dict[str, dict[str, Any]] = {}
    #: What a job's result holds (:func:`effdim.experiments.runner.schema_problem`); a cached result
    #: that does not fit is recomputed. ``None``: only the cache file's checksum is checked.
    schema: Any = None

    @classmethod
    def preset(cls, name: str, **changes: Any):
        """The study of preset ``name``, with ``changes`` (not None) overriding its fields."""
        if name not in cls.presets:
            raise InvalidArgument(f"unknown preset {name!r}; choose {' or '.join(sorted(cls.presets))}")
        changes = {k: v for k, v in changes.items() if v is not None}
        unknown = sorted(set(changes) - set(cls.__dataclass_fields__))
        if unknown:
            raise InvalidArgument(f"{cls.__name__} has no setting {unknown[0]!r}")
        return cls(**{**cls.presets[name], **changes})

    def replicate_jobs(self, common: dict[str, Any]) -> list[dict]:
        """One configuration per (replicate, size), each with the settings in ``common``
        (a subclass has ``replicates`` and ``sizes``)."""
        return [{"replicate": rep, "n": int(n), **common} for rep in range(self.replicates) for n in self.sizes]

    def to_json(self) -> dict[str, Any]:
        """The study's settings as a JSON-ready dict (a subclass is a dataclass)."""
        return asdict(self)

    def run(
        self,
        *,
        cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
        execution: Execution | None = None,
        progress: bool = True,
        cached_only: bool = False,
    ):
        """Run (or read from the cache) every job; see :func:`effdim.experiments.runner.run_jobs`.

        ``cached_only``: run nothing; the result holds the cached jobs only (a partial run)."""
        records, stats = run_jobs(
            self.job,
            self.jobs(),
            cache_dir=cache_dir,
            prefix=self.prefix,
            execution=execution,
            progress=progress,
            label=self.prefix,
            cached_only=cached_only,
            schema=self.schema,
        )
        return self.result(records, stats)
