"""PNG plots in the style of the Spider paper's figures (matplotlib, Agg backend; no display needed).

* throughput vs number of files, one panel per node count: dd vs TestDFSIO, write and read, per process (the
  paper's Figure 5) and aggregate (ours: what the job delivers, its start-up included), and their running times
  (Figure 5);
* running time vs number of nodes, one line per workload and data size (Figures 6b, 6d, 7);
* running time vs stripe count with 95% CI error bars (Figure 10);
* TeraSort's shared-filesystem bytes ÷ (4 × input) against Themis's 2-IO bound; one-map jobs per minute (Clustera's
  job throughput); running time by filesystem mode, shuffle and NodeManager local dirs (Clemson's intermediates);
* task flow over time from the job histories (Figures 8-9): :mod:`benchmarks.taskflow`.

Every figure is drawn only for what was swept or measured (a line plot for a variable with two values or more, a
bar chart for the points that have its figure), has integer ticks at the swept values of a count (files, nodes,
stripes), axis labels with units, and a note under it with the runs per point (n), what the points and bars are,
and a warning when n < 3. Points (and bar heights) are geometric means and error bars the 95% t-interval of the mean
of the log values, back-transformed (:func:`benchmarks.stats.log_interval`): never below zero for a time or a
throughput. Where a parameter other than the x variable varies too (a second data size, filesystem mode...), each
of its values has a line of its own, never one line zigzagging through both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullLocator, StrMethodFormatter  # noqa: E402

from benchmarks.results import summarize_rows  # noqa: E402

#: What the points and bars are, said in every line figure's note and in benchmarks/README.md.
INTERVAL_NOTE = "points: geometric mean; bars: 95% t-interval of log values, back-transformed"
#: The same for a bar chart.
BAR_NOTE = "bar heights: geometric mean; error bars: 95% t-interval of log values, back-transformed"
#: Below this many runs per point a figure's note warns that its intervals mean little.
FEW_RUNS = 3
#: Workloads whose rows have a ``files`` × ``file_size`` data size; TeraSort's is ``rows`` of 100 bytes.
FILE_WORKLOADS = ("dd", "dfsio")
ROW_WORKLOADS = ("terasort", "spark-terasort")
#: Point parameters that may vary beside a figure's x variable: each value gets its own line (or bar group).
OTHER_KEYS = ("profile", "nodes", "fs_mode", "stripe_count", "shuffle", "local_dirs")
#: The keys of :data:`OTHER_KEYS` and ``size`` as axis labels.
KEY_NAMES = {"profile": "profile", "nodes": "nodes", "fs_mode": "filesystem mode", "stripe_count": "stripes",
             "shuffle": "shuffle", "local_dirs": "NodeManager local dirs", "size": "data size",
             "file_size": "file size"}
#: Lines of the figures by number of files: (workloads the metric is read from, first found; metric; label; style).
AGGREGATE_LINES = ((("dd", "dfsio"), "dd_write_mb_s", "dd write", "o-"),
                   (("dd", "dfsio"), "dd_read_mb_s", "dd read", "s-"),
                   (("dfsio",), "write_mb_s", "TestDFSIO write", "o--"),
                   (("dfsio",), "read_mb_s", "TestDFSIO read", "s--"))
PER_PROCESS_LINES = ((("dd", "dfsio"), "dd_write_proc_mb_s", "dd write", "o-"),
                     (("dd", "dfsio"), "dd_read_proc_mb_s", "dd read", "s-"),
                     (("dfsio",), "write_throughput_mb_s", "TestDFSIO write", "o--"),
                     (("dfsio",), "read_throughput_mb_s", "TestDFSIO read", "s--"))
TIME_LINES = ((("dd", "dfsio"), "dd_write_s", "dd write", "o-"), (("dd", "dfsio"), "dd_read_s", "dd read", "s-"),
              (("dfsio",), "write_exec_s", "TestDFSIO write", "o--"),
              (("dfsio",), "read_exec_s", "TestDFSIO read", "s--"))
#: Keys of the ``time_by_<key>.png`` bar charts, with their titles.
BAR_KEYS = {"fs_mode": "filesystem mode", "shuffle": "shuffle", "local_dirs": "NodeManager local dirs"}

Line = tuple[tuple[str, ...], str, str, str]


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


def _errors(summaries: Sequence[dict[str, Any]], metric: str) -> tuple[list[float], list[list[float]], list[int]]:
    """``(heights, [lower errors, upper errors], ns)`` of ``metric`` at each summary (in their order), as
    :func:`_series` gives them."""
    heights, lower, upper, ns = [], [], [], []
    for s in summaries:
        y = float(s.get(f"{metric}_gmean", s[f"{metric}_mean"]))
        low, high = float(s.get(f"{metric}_low", float("nan"))), float(s.get(f"{metric}_high", float("nan")))
        heights.append(y)
        lower.append(0.0 if low != low else max(0.0, y - low))
        upper.append(0.0 if high != high else max(0.0, high - y))
        ns.append(int(s.get(f"{metric}_n", s["runs"])))
    return heights, [lower, upper], ns


def count_axis(ax: Axes, values: Sequence[float]) -> None:
    """Ticks of the x axis at the swept values of a count (files, nodes, stripes), labelled as integers, none
    between; a base-2 log scale when they span a factor of 8 or more (1, 4, 16, 64 stripes)."""
    ticks = sorted({int(round(v)) for v in values})
    if ticks and ticks[0] > 0 and ticks[-1] >= 8 * ticks[0]:
        ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:.0f}"))
    ax.xaxis.set_minor_locator(NullLocator())


def add_note(fig: Figure, ns: Sequence[int], extra: str = "", what: str = INTERVAL_NOTE) -> None:
    """The note under a figure: runs per point (``n``), ``what`` the points and bars are (:data:`INTERVAL_NOTE`,
    :data:`BAR_NOTE`) (and ``extra``), and a warning when a point has fewer than :data:`FEW_RUNS` runs. Its text is
    in ``fig.texts`` (gid ``note``)."""
    low, high = (min(ns), max(ns)) if ns else (0, 0)
    runs = f"n = {low}" if low == high else f"n = {low}-{high}"
    text = f"{runs} runs per point; {what}" + (f"; {extra}" if extra else "")
    if ns and low < FEW_RUNS:
        text += f"\nwarning: n < {FEW_RUNS} at some points: their intervals mean little (n = 1: none)"
    fig.text(0.01, 0.01, text, fontsize=7, ha="left", va="bottom", gid="note", wrap=True)
    fig.tight_layout(rect=(0, 0.06 if "\n" not in text else 0.09, 1, 1))


def _mib(size: int) -> str:
    """A byte count as ``64 MiB`` (whole MiB) or ``1000 B``."""
    return f"{size >> 20} MiB" if size and size % (1 << 20) == 0 else f"{size} B"


def data_size(summary: dict[str, Any]) -> tuple[int, str] | None:
    """The data size of a point, ``(bytes, label)``: ``files`` × ``file_size`` for :data:`FILE_WORKLOADS`
    (``"4 × 64 MiB"``), ``rows`` of 100 bytes for :data:`ROW_WORKLOADS` (``"200 MB"``, decimal as TeraGen's); for
    another workload with ``files`` (KMeans' input files: a ``files`` sweep changes them) ``(files, "4 files")``;
    else None."""
    workload = summary["workload"]
    if workload in FILE_WORKLOADS and summary.get("files") is not None and summary.get("file_size") is not None:
        files, size = int(summary["files"]), int(summary["file_size"])
        return files * size, f"{files} × {_mib(size)}"
    if workload in ROW_WORKLOADS and summary.get("rows") is not None:
        size = int(summary["rows"]) * 100
        return size, f"{size / 1e6:g} MB"
    if workload not in FILE_WORKLOADS and summary.get("files") is not None:
        return int(summary["files"]), f"{summary['files']} files"
    return None


def _value(summary: dict[str, Any], key: str) -> Any:
    """The value of ``key`` at a point (``size``: :func:`data_size`)."""
    return data_size(summary) if key == "size" else summary.get(key)


def describe(key: str, value: Any) -> str:
    """A point parameter's value as a label: ``3 nodes``, ``4 stripes``, ``hdfs``, ``shuffle http``,
    ``local dirs default`` (``None``: the cluster's default), ``4 × 64 MiB``..."""
    if key == "size":
        return "size ?" if value is None else str(value[1])
    if key in ("nodes", "stripe_count", "files"):
        noun = {"nodes": "node", "stripe_count": "stripe", "files": "file"}[key]
        return f"{key} ?" if value is None else f"{value} {noun}" + ("" if int(value) == 1 else "s")
    if key == "file_size":
        return "file size ?" if value is None else f"{_mib(int(value))} files"
    shown = "default" if value is None else str(value)
    return {"shuffle": f"shuffle {shown}", "local_dirs": f"local dirs {shown}", "profile": f"{shown} profile"}.get(
        key, shown)


def _order(value: Any) -> tuple[int, str, float]:
    """A sort key for parameter values that may be ``None`` (first: the default), numbers or strings."""
    if value is None:
        return (0, "", 0.0)
    if isinstance(value, tuple):
        return (1, "", float(value[0]))  # a data size: by bytes
    if isinstance(value, (int, float)):
        return (1, "", float(value))
    return (2, str(value), 0.0)


def varying(summaries: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[str]:
    """The ``keys`` (point parameters, or ``size``: :func:`data_size`) that take two values or more among
    ``summaries`` (``None`` is a value: a default beside a set one)."""
    return [k for k in keys if len({repr(_value(s, k)) for s in summaries}) >= 2]


def split(summaries: Sequence[dict[str, Any]], keys: Sequence[str],
          sep: str = ", ") -> list[tuple[str, list[dict[str, Any]]]]:
    """``summaries`` in groups by the values of those ``keys`` that vary among them (:func:`varying`), in the order
    of those values: ``[(label, members)]``, the label describing the group's values (:func:`describe`, joined by
    ``sep``), ``""`` for one group."""
    keys = varying(summaries, keys)
    groups: dict[str, tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
    for s in summaries:
        values = tuple(_value(s, k) for k in keys)
        label = sep.join(describe(k, v) for k, v in zip(keys, values, strict=True))
        groups.setdefault(label, (values, []))[1].append(s)
    ordered = sorted(groups.items(), key=lambda item: [_order(v) for v in item[1][0]])
    return [(label, members) for label, (_, members) in ordered]


def _with(summaries: Sequence[dict[str, Any]], metric: str, workloads: Sequence[str] | None = None,
          x_key: str | None = None) -> list[dict[str, Any]]:
    """The summaries (of ``workloads``) that have ``metric`` (and a value of ``x_key``)."""
    return [s for s in summaries if f"{metric}_mean" in s and (workloads is None or s["workload"] in workloads)
            and (x_key is None or s.get(x_key) is not None)]


def _line_source(summaries: Sequence[dict[str, Any]], line: Line, x_key: str) -> list[dict[str, Any]]:
    """The summaries a line of :data:`AGGREGATE_LINES` (...) draws: those of its first workload that has the
    metric (dd's figures from the ``dd`` workload when it ran, else from ``dfsio``'s dd pair)."""
    workloads, metric, _, _ = line
    for workload in workloads:
        found = _with(summaries, metric, (workload,), x_key)
        if found:
            return found
    return []


def _colors(labels: Sequence[str]) -> dict[str, str]:
    """One colour per line label, the same in every panel (matplotlib's tab10 cycle, in order)."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {label: cycle[i % len(cycle)] for i, label in enumerate(dict.fromkeys(labels))}


def _nodes_title(nodes: Any) -> str:
    """A panel's title: ``1 node``, ``3 nodes``."""
    return describe("nodes", nodes)


def by_files(summaries: Sequence[dict[str, Any]], lines: Sequence[Line], ylabel: str, title: str,
             log_y: bool = True) -> Figure:
    """A figure of ``lines`` (:data:`AGGREGATE_LINES`...) vs number of files, one panel per node count (titled
    ``1 node``, ``3 nodes``; y axis shared), one line per metric and per value of any other parameter that varies
    (file size, filesystem mode...); a log y axis when ``log_y`` and the values span more than a factor of 100
    (dd and a tiny TestDFSIO)."""
    drawn: list[tuple[Any, str, str, list[float], list[float], list[list[float]]]] = []
    ns: list[int] = []
    for line in lines:
        _, metric, label, style = line
        source = _line_source(summaries, line, "files")
        for _, per_node in split(source, ("nodes",)) if source else []:
            node_count = per_node[0].get("nodes")
            for suffix, members in split(per_node, [k for k in (*OTHER_KEYS, "file_size") if k != "nodes"]):
                xs, ys, errs, n = _series(members, None, "files", metric)
                drawn.append((node_count, f"{label}, {suffix}" if suffix else label, style, xs, ys, errs))
                ns += n
    panels = sorted({d[0] for d in drawn}, key=_order) or [None]
    fig, axes = plt.subplots(1, len(panels), sharey=True, squeeze=False,
                             figsize=(min(3.6 * len(panels) + 1.4, 14.0), 4.4))
    colors = _colors([d[1] for d in drawn])
    handles: dict[str, Any] = {}
    values = [y for d in drawn for y in d[4]]
    for ax, nodes in zip(axes[0], panels, strict=True):
        xs_all: list[float] = []
        for node_count, label, style, xs, ys, errs in drawn:
            if node_count == nodes:
                handles.setdefault(label, ax.errorbar(xs, ys, yerr=errs, fmt=style, capsize=3, label=label,
                                                      color=colors[label]))
                xs_all += xs
        count_axis(ax, xs_all)
        ax.set_xlabel("number of files")
        ax.set_title("" if nodes is None else _nodes_title(nodes), fontsize=9)
    axes[0, 0].set_ylabel(ylabel)
    positive = [v for v in values if v > 0]
    if log_y and positive and len(positive) == len(values) and max(positive) > 100 * min(positive):
        axes[0, 0].set_yscale("log")  # dd and a tiny TestDFSIO differ by orders of magnitude
    elif values:
        axes[0, 0].set_ylim(bottom=0)
    if handles:
        axes[0, 0].legend(list(handles.values()), list(handles), fontsize=7)
    fig.suptitle(title, fontsize=10)
    sizes = sorted({int(s["file_size"]) for s in summaries if s.get("file_size") and s.get("files")})
    add_note(fig, ns, "file size " + ", ".join(_mib(m) for m in sizes) if sizes else "")
    return fig


def throughput_vs_files(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Aggregate throughput (MiB/s: total MiB ÷ the parallel dd processes' or the TestDFSIO job's time) vs number of
    files, one panel per node count: dd and TestDFSIO, write and read (:data:`AGGREGATE_LINES`), with 95%
    intervals. The paper draws per-process throughput (:func:`per_process_vs_files`); this is what the jobs
    deliver, their start-up included."""
    return by_files(summaries, AGGREGATE_LINES, "aggregate throughput (MiB/s)",
                    "Aggregate throughput vs number of files: dd vs TestDFSIO")


def per_process_vs_files(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Per-process throughput (MiB/s) vs number of files, one panel per node count (the paper's Figure 5): dd's
    ``dd_*_proc_mb_s`` (total MiB ÷ the sum of each dd process's own seconds) and TestDFSIO's
    ``*_throughput_mb_s`` (Hadoop's per-map "Throughput mb/sec", computed the same way), write and read
    (:data:`PER_PROCESS_LINES`); a line only for the metrics the rows have."""
    return by_files(summaries, PER_PROCESS_LINES, "per-process throughput (MiB/s)",
                    "Per-process throughput vs number of files: dd vs TestDFSIO")


def time_vs_files(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs number of files, one panel per node count (the paper's Figure 5): the parallel dd
    processes' ``dd_write_s``/``dd_read_s`` and TestDFSIO's ``write_exec_s``/``read_exec_s`` (its "Test exec
    time") (:data:`TIME_LINES`)."""
    return by_files(summaries, TIME_LINES, "running time (s)", "Running time vs number of files: dd vs TestDFSIO",
                    log_y=False)


def time_vs(summaries: Sequence[dict[str, Any]], x_key: str, x_label: str, title: str) -> Figure:
    """Running time (s) vs ``x_key`` (a count), geometric means with 95% interval bars: one line per workload, and
    per data size (:func:`data_size`, labelled ``dfsio, 4 × 64 MiB``, ``terasort, 200 MB``) and per value of any
    other parameter (:data:`OTHER_KEYS`) that took two values or more for that workload; labelled by the workload
    alone when none did."""
    fig, ax = plt.subplots(figsize=(6, 4.4))
    drawn = False
    xs_all: list[float] = []
    ns: list[int] = []
    for workload in sorted({s["workload"] for s in summaries}):
        source = _with(summaries, "wall_s", (workload,), x_key)
        for suffix, members in split(source, ["size", *(k for k in OTHER_KEYS if k != x_key)]) if source else []:
            xs, ys, errs, n = _series(members, None, x_key, "wall_s")
            ax.errorbar(xs, ys, yerr=errs, fmt="o-", capsize=3, label=f"{workload}, {suffix}" if suffix else workload)
            drawn = True
            xs_all += xs
            ns += n
    count_axis(ax, xs_all)
    ax.set_xlabel(x_label)
    ax.set_ylabel("running time (s)")
    ax.set_title(title)
    if drawn:
        ax.legend(fontsize=7)
    add_note(fig, ns)
    return fig


def time_vs_nodes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs number of nodes."""
    return time_vs(summaries, "nodes", "number of nodes", "Running time vs nodes")


def time_vs_stripes(summaries: Sequence[dict[str, Any]]) -> Figure:
    """Running time (s) vs stripe count, 95% CI error bars."""
    return time_vs(summaries, "stripe_count", "stripe count", "Running time vs stripe count (95% CI)")


def _point_labels(summaries: Sequence[dict[str, Any]], keys: Sequence[str]) -> tuple[list[str], str]:
    """Labels of the points (``summaries``, in their order) by the ``keys`` that vary among them (``nodes`` when
    none does), one line per key, and the axis label naming those keys."""
    shown = varying(summaries, keys) or ["nodes"]
    labels = ["\n".join(describe(k, _value(s, k)) for k in shown) for s in summaries]
    return labels, ", ".join(KEY_NAMES.get(k, k) for k in shown)


def _sorted_points(summaries: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    return sorted(summaries, key=lambda s: [_order(_value(s, k)) for k in keys])


def io_ratio(summaries: Sequence[dict[str, Any]]) -> Figure:
    """TeraSort's shared-filesystem bytes ÷ (4 × input) (``pfs_io_ratio``) per point, as bars with 95% interval
    bars, beside Themis's 2-IO bound (every record read twice and written twice: 1.0, a dashed line); each bar
    labelled by what varies among the points (nodes, shuffle, local dirs, filesystem mode, data size...)."""
    keys = ("workload", "nodes", "size", "fs_mode", "stripe_count", "shuffle", "local_dirs", "profile")
    points = _sorted_points(_with(summaries, "pfs_io_ratio", ROW_WORKLOADS), keys)
    heights, errs, ns = _errors(points, "pfs_io_ratio") if points else ([], [[], []], [])
    labels, xlabel = _point_labels(points, keys)
    fig, ax = plt.subplots(figsize=(min(max(5.5, 2.0 + 1.1 * len(points)), 12.0), 4.4))
    xs = list(range(len(points)))
    ax.bar(xs, heights, width=0.6, color="tab:blue", label="shared-filesystem bytes ÷ (4 × input)")
    ax.errorbar(xs, heights, yerr=errs, fmt="none", ecolor="black", capsize=4)
    ax.axhline(1.0, color="tab:red", linestyle="--", label="Themis bound (4 × input)")
    ax.set_xticks(xs, labels, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("shared-filesystem bytes ÷ (4 × input bytes)")
    ax.set_ylim(0, 1.3 * max([1.0, *(h + e for h, e in zip(heights, errs[1], strict=True))]))  # room for the legend
    ax.set_title("TeraSort's shared-filesystem I/O vs Themis's 2-IO bound")
    ax.legend(fontsize=7)
    add_note(fig, ns, "1.0 = every record read twice and written twice", what=BAR_NOTE)
    return fig


def _grouped_bars(ax: Axes, groups: Sequence[str], series: Sequence[tuple[str, list[dict[str, Any] | None]]],
                  metric: str | Callable[[str], str]) -> list[int]:
    """Bars of ``series`` (label, one summary or None per group) side by side in each group, with their 95%
    interval bars; ``metric`` the figure (or a function of the series' label giving it). Returns the runs of
    each bar."""
    ns: list[int] = []
    tops = [0.0]
    width = 0.8 / max(len(series), 1)
    for i, (label, members) in enumerate(series):
        figure = metric(label) if callable(metric) else metric
        at = [(g + (i - (len(series) - 1) / 2) * width, s) for g, s in enumerate(members) if s is not None]
        heights, errs, n = _errors([s for _, s in at], figure)
        xs = [x for x, _ in at]
        ax.bar(xs, heights, width=width * 0.95, label=label)
        ax.errorbar(xs, heights, yerr=errs, fmt="none", ecolor="black", capsize=3)
        ns += n
        tops += [h + e for h, e in zip(heights, errs[1], strict=True)]
    ax.set_xticks(list(range(len(groups))), list(groups), fontsize=8)
    ax.set_ylim(0, 1.25 * max(tops) or 1.0)  # room for the legend above the bars
    return ns


def jobs_per_minute(summaries: Sequence[dict[str, Any]]) -> Figure:
    """One-map jobs per minute of the ``throughput`` workload per point (Clustera's job throughput): one after
    another (``jobs_per_min_sequential``) and several at a time (``jobs_per_min_concurrent``), grouped bars with
    95% interval bars."""
    keys = ("nodes", "fs_mode", "stripe_count", "local_dirs", "profile")
    points = _sorted_points([s for s in summaries if s["workload"] == "throughput"
                             and ("jobs_per_min_sequential_mean" in s or "jobs_per_min_concurrent_mean" in s)], keys)
    labels, xlabel = _point_labels(points, keys)
    fig, ax = plt.subplots(figsize=(min(max(5.5, 2.5 + 1.3 * len(points)), 12.0), 4.4))
    series = [(name, [s if f"{metric}_mean" in s else None for s in points])
              for name, metric in (("one after another", "jobs_per_min_sequential"),
                                   ("several at a time", "jobs_per_min_concurrent"))
              if any(f"{metric}_mean" in s for s in points)]
    metrics = {"one after another": "jobs_per_min_sequential", "several at a time": "jobs_per_min_concurrent"}
    ns = _grouped_bars(ax, labels, series, lambda label: metrics[label])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("jobs per minute (one-map jobs)")
    ax.set_title("Job throughput: one-map jobs per minute")
    ax.legend(fontsize=7)
    add_note(fig, ns, what=BAR_NOTE)
    return fig


def _bar_workloads(summaries: Sequence[dict[str, Any]], key: str) -> list[str]:
    """The workloads whose points with a running time took two values or more of ``key`` (``None`` one of them)."""
    source = _with(summaries, "wall_s")
    return [w for w in sorted({s["workload"] for s in source})
            if len({repr(s.get(key)) for s in source if s["workload"] == w}) >= 2]


def time_by(summaries: Sequence[dict[str, Any]], key: str) -> Figure:
    """Running time (s, ``wall_s``) by the values of ``key`` (:data:`BAR_KEYS`; ``None``: ``default``): a group of
    bars per workload (and per value of any other parameter that varies), a bar per value of ``key``, with 95%
    interval bars; only workloads for which ``key`` took two values or more."""
    source = _with(summaries, "wall_s")
    workloads = _bar_workloads(summaries, key)
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    for workload in workloads:
        mine = [s for s in source if s["workload"] == workload]
        others = ["size", *(k for k in OTHER_KEYS if k != key)]
        groups += [(f"{workload}\n{label}" if label else workload, members)
                   for label, members in split(mine, others, sep="\n")]
    values = sorted({s.get(key) for _, members in groups for s in members}, key=_order)
    series = [("default" if v is None else str(v),
               [next((s for s in members if s.get(key) == v), None) for _, members in groups]) for v in values]
    fig, ax = plt.subplots(figsize=(min(max(5.5, 2.5 + 0.6 * len(groups) * len(values)), 12.0), 4.4))
    ns = _grouped_bars(ax, [g for g, _ in groups], series, "wall_s")
    ax.set_xlabel("workload")
    ax.set_ylabel("running time (s)")
    ax.set_title(f"Running time by {BAR_KEYS.get(key, key)}")
    ax.legend(title=BAR_KEYS.get(key, key), fontsize=7, title_fontsize=7)
    add_note(fig, ns, what=BAR_NOTE)
    return fig


def swept(summaries: Sequence[dict[str, Any]], x_key: str, workloads: Sequence[str] | None = None,
          metrics: Sequence[str] = ("wall_s",)) -> bool:
    """Whether ``x_key`` took two values or more among the points (of ``workloads``) that have one of ``metrics``
    (a running time by default): a figure with one x value shows no trend and is not drawn."""
    values = {s[x_key] for s in summaries if s.get(x_key) is not None
              and (workloads is None or s["workload"] in workloads)
              and any(f"{metric}_mean" in s for metric in metrics)}
    return len(values) >= 2


def figures_for(summaries: Sequence[dict[str, Any]]) -> list[tuple[str, Callable[[], Figure]]]:
    """The figures the points call for, ``[(file name, maker)]``: each only for what was swept or measured, so
    none is empty (the table in benchmarks/README.md says when each is drawn)."""
    out: list[tuple[str, Callable[[], Figure]]] = []

    def metrics(lines: Sequence[Line]) -> list[str]:
        return [metric for _, metric, _, _ in lines]

    for name, lines, maker in (("throughput_vs_files.png", AGGREGATE_LINES, throughput_vs_files),
                               ("per_process_vs_files.png", PER_PROCESS_LINES, per_process_vs_files),
                               ("time_vs_files.png", TIME_LINES, time_vs_files)):
        if swept(summaries, "files", FILE_WORKLOADS, metrics(lines)):
            out.append((name, partial(maker, summaries)))
    if swept(summaries, "nodes"):
        out.append(("time_vs_nodes.png", partial(time_vs_nodes, summaries)))
    if swept(summaries, "stripe_count"):
        out.append(("time_vs_stripes.png", partial(time_vs_stripes, summaries)))
    if _with(summaries, "pfs_io_ratio", ROW_WORKLOADS):
        out.append(("io_ratio.png", partial(io_ratio, summaries)))
    if any(s["workload"] == "throughput" and ("jobs_per_min_sequential_mean" in s or "jobs_per_min_concurrent_mean"
                                              in s) for s in summaries):
        out.append(("jobs_per_minute.png", partial(jobs_per_minute, summaries)))
    for key in BAR_KEYS:
        if _bar_workloads(summaries, key):
            out.append((f"time_by_{key}.png", partial(time_by, summaries, key)))
    return out


def plot_all(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Write the figures the rows call for (:func:`figures_for`) into ``out_dir``, and the task flows of the rows'
    job histories (:func:`benchmarks.taskflow.plot_task_flows`); returns the PNG paths."""
    from benchmarks.taskflow import plot_task_flows

    summaries = summarize_rows(rows)
    written = []
    for name, make in figures_for(summaries):
        fig = make()
        path = out_dir / name
        try:
            fig.savefig(path, dpi=100)
        finally:
            plt.close(fig)
        written.append(path)
    return written + plot_task_flows(rows, out_dir)
