"""The experiment results that ship with effdim (read by the dashboard).

``effdim experiment lc|hlc --out DIR`` writes every output to ``DIR``; with
``--ship`` it also writes the study's summaries into this package's
``results/`` folder (:func:`ship`), so that an installed effdim shows them
without the repository: ``lc_summary.csv``/``.md`` (Section 5, Figures 4-5)
and ``hlc_table2.csv``/``.md`` (Section 6, Table 2), from the full design
(docs/experiments.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument

__all__ = ["RESULTS_DIR", "SUMMARY_FILES", "CommittedResults", "load_committed", "ship"]

#: Where the shipped summaries live.
RESULTS_DIR = Path(__file__).parent / "results"
#: The files :func:`load_committed` reads (written by :func:`effdim.experiments.write_outputs`).
SUMMARY_FILES = ("lc_summary.csv", "lc_summary.md", "hlc_table2.csv", "hlc_table2.md")


@dataclass(frozen=True)
class CommittedResults:
    """Summary tables (pandas DataFrames) and their markdown renderings."""

    lc_summary: Any
    lc_markdown: str
    hlc_table2: Any
    hlc_markdown: str
    directory: Path


def load_committed(directory: str | os.PathLike = RESULTS_DIR) -> CommittedResults:
    """Read the summaries from ``directory``; the error names a missing file."""
    import pandas as pd

    folder = Path(directory)
    missing = [name for name in SUMMARY_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"no experiment results in {folder}: missing {', '.join(missing)}")
    return CommittedResults(
        lc_summary=pd.read_csv(folder / "lc_summary.csv", dtype={"label": str, "generator": str}),
        lc_markdown=(folder / "lc_summary.md").read_text(encoding="utf-8"),
        hlc_table2=pd.read_csv(folder / "hlc_table2.csv", dtype={"mode_cards": str}),
        hlc_markdown=(folder / "hlc_table2.md").read_text(encoding="utf-8"),
        directory=folder,
    )


def ship(study: str, out_dir: str | os.PathLike, results_dir: str | os.PathLike = RESULTS_DIR) -> list[Path]:
    """Copy the summaries of ``study`` (``"lc"`` or ``"hlc"``), as :func:`effdim.experiments.write_outputs`
    wrote them into ``out_dir``, into ``results_dir``; returns the files written."""
    import shutil

    names = [name for name in SUMMARY_FILES if name.startswith(f"{study}_")]
    if not names:
        raise InvalidArgument(f"the {study} study has no summaries that ship with effdim (lc and hlc do)")
    written = []
    for name in names:
        written.append(Path(shutil.copyfile(Path(out_dir) / name, Path(results_dir) / name)))
    return written
