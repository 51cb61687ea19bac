"""Writing the results of a study: CSV, markdown, run metadata, HTML/PNG plots.

File names are stable (a dashboard reads them); for the LC study (Section 5):

* ``lc_fits.csv`` - every fitted model of every data set;
* ``lc_runs.csv`` - the selected model per data set and score;
* ``lc_summary.csv`` / ``lc_summary.md`` - Figures 4 and 5 as numbers;
* ``lc_figure4.html|png`` (data from ``8:2,2,2,2``), ``lc_figure5.html|png``
  (its deterministic variant), ``lc_all.html|png`` (every generating model);
* ``lc_run.json`` - configuration, timing, versions.

For the HLC study (Section 6): ``hlc_fits.csv``, ``hlc_runs.csv``,
``hlc_table2.csv``, ``hlc_table2.md``, ``hlc_figure.html|png``,
``hlc_run.json``. For the structure study: ``structure_fits.csv``,
``structure_runs.csv``, ``structure_summary.csv|md``, ``structure_paired.csv``,
``structure_figure.html|png``, ``structure_run.json``. For the class-enumeration study:
``enumeration_fits.csv``, ``enumeration_runs.csv``, ``enumeration_summary.csv|md``,
``enumeration_calibration.csv``, ``enumeration_run.json`` (docs/enumeration.md). ``docs/experiments.md``
describes every column.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["write_outputs", "run_metadata"]


def run_metadata(result: Any, **extra: Any) -> dict[str, Any]:
    """Configuration, run statistics and environment of a finished study."""
    import numpy as np

    try:
        from importlib.metadata import version

        effdim_version = version("effdim")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        effdim_version = "unknown"

    seconds = [r.seconds for r in result.records]
    return {
        "study": result.study.name,
        "config": result.study.to_json(),
        "test": result.test,
        "jobs": len(result.records),
        "run": result.stats.to_json(),
        "job_seconds_mean": round(float(np.mean(seconds)), 3) if seconds else None,
        "job_seconds_max": round(float(np.max(seconds)), 3) if seconds else None,
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "effdim": effdim_version,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        **extra,
    }


def write_outputs(
    result: Any, out_dir: str | os.PathLike, *, plots: bool = True, png: bool = True, **extra: Any
) -> tuple[list[Path], list[str]]:
    """Write the files of an :class:`~effdim.experiments.LCResult` or
    :class:`~effdim.experiments.HLCResult` into ``out_dir``.

    Returns ``(paths written, notes)``; a note says why a PNG was skipped.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = result.study.name
    written: list[Path] = []
    notes: list[str] = []

    def csv(frame, filename):
        path = out / filename
        frame.to_csv(path, index=False, float_format="%.10g")
        written.append(path)

    def text(content, filename):
        path = out / filename
        path.write_text(content if content.endswith("\n") else content + "\n")
        written.append(path)

    csv(result.fits(), f"{name}_fits.csv")
    csv(result.runs(), f"{name}_runs.csv")
    figures: list[tuple[Any, str, str]] = []
    if name == "lc":
        summary = result.summary()
        csv(summary, "lc_summary.csv")
        text(result.markdown(), "lc_summary.md")
        if plots:
            from . import plots as P

            labels = list(summary["label"].drop_duplicates())
            random_labels = list(summary[summary["kind"] == "random"]["label"].drop_duplicates())
            det_labels = list(summary[summary["kind"] == "deterministic"]["label"].drop_duplicates())
            if random_labels:
                fig4 = "8:2,2,2,2" if "8:2,2,2,2" in random_labels else random_labels[-1]
                figures.append((P.lc_figure(result, fig4), "lc_figure4", f"Section 5, Figure 4: data from {fig4}"))
            if det_labels:
                figures.append(
                    (
                        P.lc_figure(result, det_labels[0]),
                        "lc_figure5",
                        f"Section 5, Figure 5: data from {det_labels[0]}",
                    )
                )
            if len(labels) > 1:
                figures.append((P.lc_overview(result), "lc_all", "Section 5: every generating model"))
    elif name == "enumeration":
        csv(result.summary(), "enumeration_summary.csv")
        csv(result.calibration(), "enumeration_calibration.csv")
        text(result.markdown(), "enumeration_summary.md")
    elif name == "structure":
        csv(result.summary(), "structure_summary.csv")
        csv(result.paired(), "structure_paired.csv")
        text(result.markdown(), "structure_summary.md")
        if plots:
            from . import plots as P

            figures.append((P.structure_figure(result.summary()), "structure_figure", "Latent trees learned per score"))
    else:
        table = result.table2()
        csv(table, "hlc_table2.csv")
        text(
            "### Table 2\n\n"
            + result.markdown()
            + "\n\n### Most frequent selections (|H1|,|H2|,|H3| (count))\n\n"
            + result.selections_markdown(),
            "hlc_table2.md",
        )
        if plots:
            from . import plots as P

            figures.append((P.hlc_figure(result), "hlc_figure", "Section 6, Table 2 as a plot"))
    for obj, stem, title in figures:
        written.append(P.save_html(obj, out / f"{stem}.html", title))
        if png:
            try:
                path = P.render_png(obj, out / f"{stem}.png", title)
            except (RuntimeError, OSError, ValueError) as err:
                notes.append(f"{stem}.png not rendered: {err}")
                continue
            if path is None:
                notes.append(f"{stem}.png not rendered: no Chromium found (set EFFDIM_CHROMIUM)")
            else:
                written.append(path)
    meta = run_metadata(result, **extra)
    path = out / f"{name}_run.json"
    path.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
    written.append(path)
    return written, notes
