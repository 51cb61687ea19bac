"""The committed experiment results that ship with effdim (read by the dashboard).

``effdim experiment lc|hlc --out DIR`` writes every output to ``DIR``; the
summaries of the largest runs done for this release (see docs/experiments.md)
are copied into this package's ``results/`` folder so that an installed
effdim can show them without the repository:
``lc_summary.csv``/``.md`` (Section 5, Figures 4-5) and
``hlc_table2.csv``/``.md`` (Section 6, Table 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RESULTS_DIR", "SUMMARY_FILES", "CommittedResults", "load_committed"]

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
