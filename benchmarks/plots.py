"""PNG plots in the style of the Spider paper's figures (matplotlib, Agg backend; no display needed).

* throughput vs number of files: dd vs TestDFSIO, write and read (the paper's Figures 5-6);
* running time vs number of nodes, one line per workload (Figures 8-9);
* running time vs stripe count with 95% CI error bars (Figure 10).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from benchmarks.results import summarize_rows  # noqa: E402


def _series(summaries: Sequence[dict[str, Any]], workload: str | None, x_key: str,
            metric: str) -> tuple[list[float], list[float], list[float]]:
    points = sorted((s[x_key], s[f"{metric}_mean"], s.get(f"{metric}_ci95", math.nan)) for s in summaries
                    if (workload is None or s["workload"] == workload) and s.get(x_key) is not None
                    and f"{metric}_mean" in s)
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    errs = [0.0 if math.isnan(p[2]) else float(p[2]) for p in points]
    return xs, ys, errs


def throughput_vs_files(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Aggregate throughput (MiB/s) vs number of files: dd and TestDFSIO, write and read, with 95% CIs."""
    fig, ax = plt.subplots(figsize=(6, 4))
    lines = (("dd", "dd_write_mb_s", "dd write", "o-"), ("dfsio", "dd_write_mb_s", "dd write", "o-"),
             ("dd", "dd_read_mb_s", "dd read", "s-"), ("dfsio", "dd_read_mb_s", "dd read", "s-"),
             ("dfsio", "write_mb_s", "TestDFSIO write", "o--"), ("dfsio", "read_mb_s", "TestDFSIO read", "s--"))
    drawn: set[str] = set()
    values: list[float] = []
    for workload, metric, label, style in lines:
        xs, ys, errs = _series(summaries, workload, "files", metric)
        if xs and label not in drawn:
            ax.errorbar(xs, ys, yerr=errs, fmt=style, capsize=3, label=label)
            drawn.add(label)
            values += ys
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) > 100 * min(positive):
        ax.set_yscale("log")  # dd and a tiny TestDFSIO differ by orders of magnitude
    ax.set_xlabel("number of files")
    ax.set_ylabel("throughput (MiB/s)")
    ax.set_title("Throughput vs number of files: dd vs TestDFSIO")
    if drawn:
        ax.legend()
    fig.tight_layout()
    return fig


def time_vs(summaries: Sequence[dict[str, Any]], x_key: str, x_label: str, title: str) -> Figure:
    """Mean running time (s) of each workload vs ``x_key``, with 95% CI error bars."""
    fig, ax = plt.subplots(figsize=(6, 4))
    drawn = False
    for workload in sorted({s["workload"] for s in summaries}):
        xs, ys, errs = _series(summaries, workload, x_key, "wall_s")
        if xs:
            ax.errorbar(xs, ys, yerr=errs, fmt="o-", capsize=3, label=workload)
            drawn = True
    ax.set_xlabel(x_label)
    ax.set_ylabel("running time (s)")
    ax.set_title(title)
    if drawn:
        ax.legend()
    fig.tight_layout()
    return fig


def time_vs_nodes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs number of nodes."""
    return time_vs(summaries, "nodes", "number of nodes", "Running time vs nodes")


def time_vs_stripes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs stripe count, 95% CI error bars."""
    return time_vs(summaries, "stripe_count", "stripe count", "Running time vs stripe count (95% CI)")


def plot_all(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Write every plot the rows have data for into ``out_dir``; returns the PNG paths."""
    summaries = summarize_rows(rows)
    written = []
    figures = []
    if any(s["workload"] in ("dd", "dfsio") for s in summaries):
        figures.append(("throughput_vs_files.png", throughput_vs_files(summaries)))
    if summaries:
        figures.append(("time_vs_nodes.png", time_vs_nodes(summaries)))
        figures.append(("time_vs_stripes.png", time_vs_stripes(summaries)))
    for name, fig in figures:
        path = out_dir / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
