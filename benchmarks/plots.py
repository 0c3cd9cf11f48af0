"""PNG plots in the style of the Spider paper's figures (matplotlib, Agg backend; no display needed).

* throughput vs number of files: dd vs TestDFSIO, write and read (the paper's Figures 5-6);
* running time vs number of nodes, one line per workload (Figure 7);
* running time vs stripe count with 95% CI error bars (Figure 10);
* task flow over time from the job histories (Figures 8-9): :mod:`benchmarks.taskflow`.

Every figure is drawn only for what was swept (two values or more of its x variable), has integer ticks at the
swept values of a count (files, nodes, stripes), axis labels with units, and a note under it with the runs per
point (n), what the points and bars are, and a warning when n < 3. Points are geometric means and bars the 95%
t-interval of the mean of the log values, back-transformed (:func:`benchmarks.stats.log_interval`): never below zero
for a time or a throughput.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullLocator, StrMethodFormatter  # noqa: E402

from benchmarks.results import summarize_rows  # noqa: E402

#: What the points and bars are, said in every figure's note and in benchmarks/README.md.
INTERVAL_NOTE = "points: geometric mean; bars: 95% t-interval of log values, back-transformed"
#: Below this many runs per point a figure's note warns that its intervals mean little.
FEW_RUNS = 3


def _series(summaries: Sequence[dict[str, Any]], workload: str | None, x_key: str,
            metric: str) -> tuple[list[float], list[float], list[list[float]], list[int]]:
    """``(xs, ys, [lower errors, upper errors], ns)`` of ``metric`` vs ``x_key``: geometric means, and the distances
    to the ends of their 95% interval (``_low``/``_high`` of :func:`benchmarks.results.summarize_rows`; 0 for one
    value), so the bars never reach below zero; ``ns`` the runs of each point."""
    points = sorted((s[x_key], s.get(f"{metric}_gmean", s[f"{metric}_mean"]), s.get(f"{metric}_low", float("nan")),
                     s.get(f"{metric}_high", float("nan")), int(s.get(f"{metric}_n", s["runs"]))) for s in summaries
                    if (workload is None or s["workload"] == workload) and s.get(x_key) is not None
                    and f"{metric}_mean" in s)
    xs = [float(p[0]) for p in points]
    ys = [float(p[1]) for p in points]
    lower = [0.0 if p[2] != p[2] else max(0.0, float(p[1]) - float(p[2])) for p in points]
    upper = [0.0 if p[3] != p[3] else max(0.0, float(p[3]) - float(p[1])) for p in points]
    return xs, ys, [lower, upper], [p[4] for p in points]


def count_axis(ax: Axes, values: Sequence[float]) -> None:
    """Ticks of the x axis at the swept values of a count (files, nodes, stripes), labelled as integers, none
    between; a base-2 log scale when they span a factor of 8 or more (1, 4, 16, 64 stripes)."""
    ticks = sorted({int(round(v)) for v in values})
    if ticks and ticks[0] > 0 and ticks[-1] >= 8 * ticks[0]:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:.0f}"))
    ax.xaxis.set_minor_locator(NullLocator())


def add_note(fig: Figure, ns: Sequence[int], extra: str = "") -> None:
    """The note under a figure: runs per point (``n``), :data:`INTERVAL_NOTE` (and ``extra``), and a warning when a
    point has fewer than :data:`FEW_RUNS` runs. Its text is in ``fig.texts`` (gid ``note``)."""
    low, high = (min(ns), max(ns)) if ns else (0, 0)
    runs = f"n = {low}" if low == high else f"n = {low}-{high}"
    text = f"{runs} runs per point; {INTERVAL_NOTE}" + (f"; {extra}" if extra else "")
    if ns and low < FEW_RUNS:
        text += f"\nwarning: n < {FEW_RUNS} at some points: their intervals mean little (n = 1: none)"
    fig.text(0.01, 0.01, text, fontsize=7, ha="left", va="bottom", gid="note", wrap=True)
    fig.tight_layout(rect=(0, 0.06 if "\n" not in text else 0.09, 1, 1))


def throughput_vs_files(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Aggregate throughput (MiB/s) vs number of files: dd and TestDFSIO, write and read, with 95% intervals."""
    fig, ax = plt.subplots(figsize=(6, 4.4))
    lines = (("dd", "dd_write_mb_s", "dd write", "o-"), ("dfsio", "dd_write_mb_s", "dd write", "o-"),
             ("dd", "dd_read_mb_s", "dd read", "s-"), ("dfsio", "dd_read_mb_s", "dd read", "s-"),
             ("dfsio", "write_mb_s", "TestDFSIO write", "o--"), ("dfsio", "read_mb_s", "TestDFSIO read", "s--"))
    drawn: set[str] = set()
    values: list[float] = []
    xs_all: list[float] = []
    ns: list[int] = []
    for workload, metric, label, style in lines:
        xs, ys, errs, n = _series(summaries, workload, "files", metric)
        if xs and label not in drawn:
            ax.errorbar(xs, ys, yerr=errs, fmt=style, capsize=3, label=label)
            drawn.add(label)
            values += ys
            xs_all += xs
            ns += n
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) > 100 * min(positive):
        ax.set_yscale("log")  # dd and a tiny TestDFSIO differ by orders of magnitude
    count_axis(ax, xs_all)
    ax.set_xlabel("number of files")
    ax.set_ylabel("throughput (MiB/s)")
    ax.set_title("Throughput vs number of files: dd vs TestDFSIO")
    if drawn:
        ax.legend()
    sizes = sorted({int(s["file_size"]) >> 20 for s in summaries if s.get("file_size") and s.get("files")})
    add_note(fig, ns, "file size " + ", ".join(f"{m} MiB" for m in sizes) if sizes else "")
    return fig


def time_vs(summaries: Sequence[dict[str, Any]], x_key: str, x_label: str, title: str) -> Figure:
    """Running time (s) of each workload vs ``x_key`` (a count), geometric means with 95% interval bars."""
    fig, ax = plt.subplots(figsize=(6, 4.4))
    drawn = False
    xs_all: list[float] = []
    ns: list[int] = []
    for workload in sorted({s["workload"] for s in summaries}):
        xs, ys, errs, n = _series(summaries, workload, x_key, "wall_s")
        if xs:
            ax.errorbar(xs, ys, yerr=errs, fmt="o-", capsize=3, label=workload)
            drawn = True
            xs_all += xs
            ns += n
    count_axis(ax, xs_all)
    ax.set_xlabel(x_label)
    ax.set_ylabel("running time (s)")
    ax.set_title(title)
    if drawn:
        ax.legend()
    add_note(fig, ns)
    return fig


def time_vs_nodes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs number of nodes."""
    return time_vs(summaries, "nodes", "number of nodes", "Running time vs nodes")


def time_vs_stripes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs stripe count, 95% CI error bars."""
    return time_vs(summaries, "stripe_count", "stripe count", "Running time vs stripe count (95% CI)")


def swept(summaries: Sequence[dict[str, Any]], x_key: str, workloads: Sequence[str] | None = None) -> bool:
    """Whether ``x_key`` took two values or more among the points (of ``workloads``) that have a running time or a
    throughput: a figure with one x value shows no trend and is not drawn."""
    values = {s[x_key] for s in summaries if s.get(x_key) is not None
              and (workloads is None or s["workload"] in workloads)}
    return len(values) >= 2


def plot_all(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Write a plot for each variable that was swept (:func:`swept`) into ``out_dir``, and the task flows of the
    rows' job histories (:func:`benchmarks.taskflow.plot_task_flows`); returns the PNG paths."""
    from benchmarks.taskflow import plot_task_flows

    summaries = summarize_rows(rows)
    written = []
    figures = []
    if swept(summaries, "files", ("dd", "dfsio")):
        figures.append(("throughput_vs_files.png", throughput_vs_files(summaries)))
    if swept(summaries, "nodes"):
        figures.append(("time_vs_nodes.png", time_vs_nodes(summaries)))
    if swept(summaries, "stripe_count"):
        figures.append(("time_vs_stripes.png", time_vs_stripes(summaries)))
    for name, fig in figures:
        path = out_dir / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written + plot_task_flows(rows, out_dir)
