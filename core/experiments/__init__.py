"""The paper's experiments (Kocka & Zhang 2002, Sections 5 and 6) as runnable studies.

* :class:`LCStudy` - Section 5, Figures 4 and 5: LC models ``2:2,2,2,2`` ...
  ``8:2,2,2,2`` (and a deterministic variant), every regular LC model scored
  by BIC, BIC+, CS, CS+; KL of the selected model and its ``|X|``.
* :class:`HLCStudy` - Section 6, Table 2: HLC ``5,3,3:2,2,2,2,2``, hill
  climbing of the hidden cardinalities per score; KL of the selected model.
* :class:`StructureStudy` - beyond the paper: latent trees learned from data
  per score (:mod:`effdim.structure`); Robinson-Foulds distance, KL,
  cardinality errors (docs/structure.md).
* :class:`EnumerationStudy` - beyond the paper: how often BIC, BIC+, sBIC,
  sBIC+, CS+, the BLRT and the VLMR tests pick the true number of classes,
  and the tests' calibration under the null (docs/enumeration.md).

Both split into independent jobs run by :func:`run_jobs` (local processes, or
a Dask cluster), cached per job on disk so that interrupted runs resume.
:func:`write_outputs` writes CSV, markdown and HoloViews/Bokeh plots.
"""

from ..errors import InvalidArgument
from .enumeration import EnumerationResult, EnumerationStudy, enumeration_job
from .hlc import PAPER_TABLE2, HLCResult, HLCStudy, climb_all, hlc_job
from .lc import LCResult, LCStudy, deterministic_parameters, lc_job
from .output import write_outputs
from .runner import DEFAULT_CACHE_DIR, ExperimentError, JobRecord, Progress, RunStats, job_key, run_jobs
from .stats import TESTS, mark_best, mean_se, paired_pvalue
from .structure import StructureResult, StructureStudy, structure_job

__all__ = [
    "build_study",
    "write_outputs",
    "DEFAULT_CACHE_DIR",
    "EnumerationResult",
    "EnumerationStudy",
    "ExperimentError",
    "HLCResult",
    "HLCStudy",
    "JobRecord",
    "LCResult",
    "LCStudy",
    "PAPER_TABLE2",
    "Progress",
    "RunStats",
    "StructureResult",
    "StructureStudy",
    "TESTS",
    "climb_all",
    "deterministic_parameters",
    "enumeration_job",
    "hlc_job",
    "job_key",
    "lc_job",
    "mark_best",
    "mean_se",
    "paired_pvalue",
    "run_jobs",
    "structure_job",
]


def build_study(name: str, *, quick: bool = False, sizes: str | tuple | None = None, **changes):
    """The study ``name`` (``"lc"``: Section 5, ``"hlc"``: Section 6, ``"structure"``) from a preset and overrides.

    ``quick`` chooses the quick preset instead of the paper's (``full``);
    ``sizes`` may be a string such as ``"1k,3k,9k"``; other ``changes``
    (``replicates``, ``restarts``, ``seed``, ``generators``, ``deterministic``,
    ``model``, ...) replace fields when not ``None``. Raises
    :class:`effdim.errors.InvalidArgument` for an unknown study or a bad setting.
    """
    from .common import parse_sizes

    cls = {"lc": LCStudy, "hlc": HLCStudy, "structure": StructureStudy, "enumeration": EnumerationStudy}.get(name)
    if cls is None:
        raise InvalidArgument(f"unknown study {name!r}; choose lc, hlc, structure or enumeration")
    if isinstance(sizes, str):
        sizes = parse_sizes(sizes)
    for key in ("generators", "deterministic"):
        if changes.get(key) is not None:
            changes[key] = tuple(changes[key])
    return cls.preset("quick" if quick else "full", sizes=sizes, **changes)
