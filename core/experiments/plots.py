"""Plots of the Section 5 and 6 studies in the style of the paper's Figures 4 and 5.

HoloViews with the Bokeh backend, saved as standalone HTML; PNG copies are
rendered by headless Chromium when it is installed (:func:`render_png`).
HoloViews and Bokeh are imported inside the functions only, so the engine
(``effdim``) stays importable and usable without them.

Figure 4 of the paper shows, for data from ``8:2,2,2,2``, the fit of the
selected model (KL divergence from the generating distribution) and its
``|X|`` against the sample size, one curve per score; Figure 5 the same for
the deterministic variant. The HLC figure shows the Table 2 values the same
way, plus the mean selected cardinality of each hidden node.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..scores import SCORES
from .runner import ExperimentError

__all__ = ["lc_figure", "lc_overview", "hlc_figure", "structure_figure", "save_html", "render_png", "find_chromium"]

PANEL = {"width": 520, "height": 320}


def _hv():
    import holoviews as hv

    hv.extension("bokeh", logo=False)
    return hv


def _curves(
    hv,
    frame,
    y: str,
    err: str,
    ylabel: str,
    title: str,
    logy: bool,
    ylim: tuple | None = None,
    legend: str = "top_right",
):
    """One curve with error bars (one standard error) and markers per score, against ``n`` on a log axis.

    On a log axis the lower error bar is clipped at a tenth of the value
    (a bar reaching zero or below cannot be drawn there).
    """
    import numpy as np

    layers = []
    lows, highs = [], []
    for score in frame["score"].drop_duplicates():
        d = frame[frame["score"] == score].sort_values("n")
        style = SCORES[score]
        color, dash, name = style.color, style.dash, style.label
        value = d[y].to_numpy(dtype=float)
        error = np.nan_to_num(d[err].to_numpy(dtype=float))
        below = np.minimum(error, 0.9 * value) if logy else error
        data = {"n": d["n"].to_numpy(), "value": value, "below": below, "above": error}
        lows.append(np.min(value - below))
        highs.append(np.max(value + error))
        curve = hv.Curve(data, "n", "value", label=name).opts(color=color, line_dash=dash, line_width=2)
        dots = hv.Scatter(data, "n", "value", label=name).opts(color=color, size=6)
        bars = hv.ErrorBars(data, "n", ["value", "below", "above"]).opts(color=color, line_width=1)
        layers += [curve, dots, bars]
    if ylim is None:
        low, high = float(np.min(lows)), float(np.max(highs))
        ylim = (low / 1.5, high * 1.5) if logy else (min(0.0, low), high + 0.05 * (high - min(0.0, low)) + 0.5)
    overlay = hv.Overlay(layers).opts(
        hv.opts.Overlay(
            title=title,
            logx=True,
            logy=logy,
            xlabel="sample size",
            ylabel=ylabel,
            ylim=ylim,
            legend_position="right",
            show_grid=True,
            padding=(0.05, 0.02),
            **PANEL,
        )
    )
    return overlay


def lc_figure(result: Any, label: str):
    """Figure 4/5 style for one generating model: KL (1e-3 bits) and selected ``|X|`` against ``n``."""
    return lc_summary_figure(result.summary(), label)


def lc_summary_figure(summary: Any, label: str):
    """:func:`lc_figure` from a summary table (``LCResult.summary()`` or its CSV, ``lc_summary.csv``)."""
    hv = _hv()
    d = summary[summary["label"] == label]
    if d.empty:
        raise InvalidArgument(f"no results for generating model {label!r}")
    reps = int(d["replicates"].min())
    fit = _curves(
        hv,
        d,
        "kl_mean_1e3",
        "kl_se_1e3",
        "KL divergence (1e-3 bits)",
        f"KL: {label}, {reps} replicates",
        logy=True,
        legend="bottom_left",
    )
    card = _curves(
        hv, d, "card_mean", "card_se", "selected |X|", f"Selected |X|: {label}", logy=False, legend="bottom_right"
    )
    return (fit + card).cols(2).opts(shared_axes=False)


def lc_overview(result: Any):
    """:func:`lc_figure` for every generating model, one row each."""
    hv = _hv()
    labels = list(result.summary()["label"].drop_duplicates())
    panels = []
    for label in labels:
        panels += list(lc_figure(result, label))
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def hlc_figure(result: Any):
    """Table 2 as a plot (KL in 1e-3 bits against ``n``) and the mean selected cardinality per hidden node."""
    hv = _hv()
    import pandas as pd

    panels = [table2_figure(result.table2())]
    runs = result.runs()
    from ..model import HLCModel

    truth = HLCModel.parse(result.study.model)
    for i, h in enumerate(truth.hidden):
        cards = runs["cards"].str.split(",").str[i].astype(int)
        g = runs.assign(card=cards).groupby(["n", "score"], sort=False)["card"]
        d = pd.DataFrame({"mean": g.mean(), "se": g.sem().fillna(0.0)}).reset_index()
        panels.append(
            _curves(
                hv,
                d,
                "mean",
                "se",
                f"selected |{h}|",
                f"Cardinality of {h} (true {truth.card(h)})",
                logy=False,
                legend="bottom_right",
            )
        )
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def table2_figure(table: Any):
    """Table 2 as a plot: KL (1e-3 bits) of the selected model against ``n``, per score
    (from ``HLCResult.table2()`` or its CSV, ``hlc_table2.csv``)."""
    hv = _hv()
    reps = int(table["replicates"].min())
    return _curves(
        hv,
        table,
        "kl_mean_1e3",
        "kl_se_1e3",
        "KL divergence (1e-3 bits)",
        f"KL of the selected model, {reps} replicates",
        logy=True,
        legend="bottom_left",
    )


def structure_figure(summary: Any):
    """The structure study (``StructureResult.summary()`` or ``structure_summary.csv``): Robinson-Foulds
    distance, KL (1e-3 bits) and cardinality errors of the learned trees against ``n``, per score."""
    hv = _hv()
    low, high = int(summary["replicates"].min()), int(summary["replicates"].max())
    reps = f"{low}" if low == high else f"{low}-{high}"
    panels = [
        _curves(
            hv, summary, "rf_mean", "rf_se", "Robinson-Foulds distance", f"Tree errors, {reps} replicates", logy=False
        ),
        _curves(
            hv,
            summary,
            "kl_mean_1e3",
            "kl_se_1e3",
            "KL divergence (1e-3 bits)",
            "KL of the learned model",
            logy=True,
            legend="bottom_left",
        ),
        _curves(
            hv,
            summary,
            "card_errors_mean",
            "card_errors_se",
            "hidden-cardinality errors",
            "Cardinality errors",
            logy=False,
        ),
    ]
    return hv.Layout(panels).cols(2).opts(shared_axes=False)


def save_html(obj: Any, path: str | os.PathLike, title: str, *, inline: bool = False) -> Path:
    """Save a HoloViews object as standalone Bokeh HTML (BokehJS from the CDN, or ``inline``)."""
    hv = _hv()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    hv.save(obj, str(path), backend="bokeh", title=title, resources="inline" if inline else "cdn")
    return path


def find_chromium() -> str | None:
    """The Chromium executable: ``$EFFDIM_CHROMIUM``, or ``chromium`` / ``chromium-browser`` / ``google-chrome`` on PATH."""
    env = os.environ.get("EFFDIM_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def render_png(
    obj: Any, path: str | os.PathLike, title: str, *, size: tuple[int, int] | None = None, timeout: float = 120.0
) -> Path | None:
    """Render a HoloViews object to PNG with headless Chromium; ``None`` when no Chromium is found.

    The plot is saved as HTML with BokehJS inline (no network needed) and
    screenshot by ``chromium --headless --screenshot``; Bokeh's own
    ``export_png`` would need Selenium and ChromeDriver instead.
    """
    chromium = find_chromium()
    if chromium is None:
        return None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if size is None:
        size = _layout_size(obj)
    with tempfile.TemporaryDirectory() as tmp:
        html = save_html(obj, Path(tmp) / "plot.html", title, inline=True)
        cmd = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--window-size={size[0]},{size[1]}",
            "--virtual-time-budget=15000",
            f"--screenshot={path.resolve()}",
            html.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not path.exists():
        raise ExperimentError(
            f"chromium could not render {path.name}: {' '.join(proc.stderr.split())[-300:]}", inside=True
        )
    return path


def _layout_size(obj: Any) -> tuple[int, int]:
    n = len(obj) if hasattr(obj, "__len__") and type(obj).__name__ == "Layout" else 1
    cols = min(2, n)
    rows = -(-n // cols)
    return (cols * (PANEL["width"] + 10) + 20, rows * (PANEL["height"] + 20) + 30)
