"""Results: ``results.jsonl`` (one row per run), the summary (mean, std, 95% CI per point) on the terminal and
in CSV, and HiBench's ``hibench.report`` lines."""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.stats import log_interval, summarize

#: Parameters that identify a point of a sweep (a summary row groups the repeats of one point).
POINT_KEYS = ("workload", "profile", "nodes", "fs_mode", "local_dirs", "stripe_count", "files", "file_size", "rows",
              "shuffle")
#: Figures summarized over repeats, with their units.
METRICS = {
    "bringup_s": "s", "latency_s": "s", "wall_s": "s", "sort_mb_s": "MiB/s", "spark_jobs_s": "s",
    "write_mb_s": "MiB/s", "read_mb_s": "MiB/s", "dd_write_mb_s": "MiB/s", "dd_read_mb_s": "MiB/s",
    "write_throughput_mb_s": "MiB/s", "read_throughput_mb_s": "MiB/s", "dd_write_proc_mb_s": "MiB/s",
    "dd_read_proc_mb_s": "MiB/s", "write_exec_s": "s", "read_exec_s": "s", "dd_write_s": "s", "dd_read_s": "s",
    "write_ratio": "x", "read_ratio": "x", "io_ratio": "x", "pfs_io_ratio": "x",
    "shuffle_s": "s", "direct_bytes": "bytes", "http_bytes": "bytes",
    "am_launch_s": "s", "am_jvm_s": "s", "am_init_s": "s", "first_map_s": "s", "jobs_per_min": "jobs/min",
    "time_ratio": "x", "write_time_ratio": "x", "read_time_ratio": "x",
    "jobs_per_min_sequential": "jobs/min", "jobs_per_min_concurrent": "jobs/min",
    "cpu_s_per_job_sequential": "s", "cpu_s_per_job_concurrent": "s",
}
#: HiBench's report header (``bin/functions/workload_functions.sh``, ``gen_report``).
HIBENCH_FORMAT = "{:<12} {:<10} {:<8} {:<20} {:<20} {:<20} {:<20} {:<6} {}"
#: HiBench's seven columns (its ``report/hibench.report``), then two of ours that a sweep varies: ``Nodes`` and
#: ``Stripe_count``, the stripe count the run's work directory really had (``stripe_count`` of the row, from the
#: layout read back: issue 29), ``-`` when no layout was set (striping not applicable or not asked).
HIBENCH_HEADER = HIBENCH_FORMAT.format(
    "Type", "Date", "Time", "Input_data_size", "Duration(s)", "Throughput(bytes/s)", "Throughput/node", "Nodes",
    "Stripe_count")


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a ``results.jsonl`` file (or of ``<dir>/results.jsonl``)."""
    if path.is_dir():
        path = path / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_row(path: Path, row: dict[str, Any]) -> None:
    """Append one run's row to ``results.jsonl`` (one JSON object a line, flushed at once)."""
    with open(path, "a") as f:
        f.write(json.dumps(row, sort_keys=True, default=str) + "\n")


def point_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """The point a row belongs to (values of :data:`POINT_KEYS`)."""
    return tuple(row.get(k) for k in POINT_KEYS)


def summarize_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One dict per point (successful runs only): the point's parameters, ``runs``, and for every metric
    present ``<metric>_mean``, ``_std``, ``_ci95`` (half-width; NaN for one value), ``_n``, and the 95% interval
    that respects the sign (every metric here is a positive quantity): ``_low``, ``_high`` and ``_gmean`` from
    :func:`benchmarks.stats.log_interval` (the t-interval of the log values, back-transformed: ``_interval`` =
    ``"log"``) when every value is positive, else the arithmetic one clipped at 0 (``_interval`` = ``"linear"``,
    ``_gmean`` the mean); ``_low``/``_high`` NaN for one value.

    ``bringup_s`` counts once per cluster (``cluster_id``): every run on a cluster carries its one bring-up
    time, and counting it once per run would report a spurious ±0 over ``repeats`` values."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("state") == "succeeded":
            groups.setdefault(point_of(row), []).append(row)
    out = []
    for point, members in groups.items():
        summary: dict[str, Any] = dict(zip(POINT_KEYS, point, strict=True))
        summary["runs"] = len(members)
        for metric in METRICS:
            source = members
            if metric == "bringup_s":
                source = list({r.get("cluster_id") or id(r): r for r in members}.values())
            values = [float(r[metric]) for r in source if isinstance(r.get(metric), (int, float))]
            if values:
                s = summarize(values)
                summary.update({f"{metric}_mean": s.mean, f"{metric}_std": s.std, f"{metric}_ci95": s.ci95,
                                f"{metric}_n": s.n})
                logs = log_interval(values)
                if logs is not None:
                    summary.update({f"{metric}_gmean": logs.gmean, f"{metric}_low": logs.low,
                                    f"{metric}_high": logs.high, f"{metric}_interval": "log"})
                else:
                    summary.update({f"{metric}_gmean": s.mean, f"{metric}_low": max(0.0, s.low),
                                    f"{metric}_high": s.high, f"{metric}_interval": "linear"})
        out.append(summary)
    return out


def write_csv(path: Path, summaries: Sequence[dict[str, Any]]) -> None:
    """The summary as CSV: point columns, ``runs``, then mean/std/ci95/n of each metric and the interval that
    respects the sign (low/high, :func:`summarize_rows`) (empty when absent)."""
    columns = [*POINT_KEYS, "runs"]
    for metric in METRICS:
        if any(f"{metric}_mean" in s for s in summaries):
            columns += [f"{metric}_{stat}" for stat in ("mean", "std", "ci95", "n", "low", "high")]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for s in summaries:
            writer.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in s.items()})


def hibench_type(workload: str) -> str:
    """HiBench's ``Type`` column for a workload: ``HadoopTerasort``, ``HadoopKmeans``, ``HadoopDfsio``...; a Spark
    workload (``spark-<name>``, our Java programs) as HiBench names its Java Spark ones: ``JavaSparkTerasort``."""
    if workload.startswith("spark-"):
        return "JavaSpark" + workload.removeprefix("spark-").capitalize()
    return "Hadoop" + workload.capitalize()


#: Workloads that measure a write then a read: ``hibench.report`` has one line per direction (``<Type>-write``,
#: ``<Type>-read``), each with the bytes moved (``input_bytes`` = files × file size) and that direction's time: dd's
#: ``dd_write_s``/``dd_read_s`` (the parallel dd processes' wall time), TestDFSIO's ``write_exec_s``/``read_exec_s``
#: (its "Test exec time", the time its aggregate MiB/s divides by).
DIRECTION_TIMES = {"dd": "dd_{}_s", "dfsio": "{}_exec_s"}


def hibench_line(row: dict[str, Any], kind: str | None = None, duration_key: str = "wall_s") -> str:
    """One ``hibench.report`` line: type (``kind``, else :func:`hibench_type`), date, time, input bytes, duration
    (s, the row's ``duration_key``), bytes/s, bytes/s per node, nodes, stripe count (``-`` when the run set no
    layout: its ``stripe_applied`` is not true)."""
    size = int(row.get("input_bytes") or 0)
    duration = float(row.get(duration_key) or 0.0)
    throughput = int(size / duration) if duration > 0 else 0
    nodes = max(1, int(row.get("nodes") or 1))
    per_node = int(throughput / nodes)
    stamp = time.localtime(float(row.get("started") or time.time()))
    stripes = row.get("stripe_count") if row.get("stripe_applied") and row.get("stripe_count") is not None else "-"
    return HIBENCH_FORMAT.format(
        kind or hibench_type(str(row["workload"])), time.strftime("%Y-%m-%d", stamp), time.strftime("%H:%M:%S", stamp),
        size, f"{duration:.3f}", throughput, per_node, nodes, stripes)


def hibench_lines(row: dict[str, Any]) -> list[str]:
    """The ``hibench.report`` lines of one run: one per direction for :data:`DIRECTION_TIMES` workloads (write
    and read never mixed in one duration), else one (its ``wall_s``). A dd or TestDFSIO row without its
    per-direction times (an older ``results.jsonl``) keeps its one line."""
    workload = str(row["workload"])
    template = DIRECTION_TIMES.get(workload)
    keys = [(mode, template.format(mode)) for mode in ("write", "read")] if template else []
    if not keys or not all(isinstance(row.get(key), (int, float)) for _, key in keys):
        return [hibench_line(row)]
    return [hibench_line(row, f"{hibench_type(workload)}-{mode}", key) for mode, key in keys]


def write_hibench_report(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """``hibench.report``: the header, then the lines of each successful run (:func:`hibench_lines`)."""
    lines = [HIBENCH_HEADER, *(line for r in rows if r.get("state") == "succeeded" for line in hibench_lines(r))]
    path.write_text("\n".join(lines) + "\n")


def _fmt(summary: dict[str, Any], metric: str, digits: int = 2) -> str:
    mean = summary.get(f"{metric}_mean")
    if mean is None:
        return "-"
    ci = summary.get(f"{metric}_ci95")
    if abs(mean) < 0.1:
        return f"{mean:.3g}" + ("" if ci is None or math.isnan(ci) else f" ±{ci:.2g}")
    return f"{mean:.{digits}f}" + ("" if ci is None or math.isnan(ci) else f" ±{ci:.{digits}f}")


#: Console width of the summary (the table, and the long format of a log file).
SUMMARY_WIDTH = 100
#: The figures of the summary, in order: metric → its label there (units in :data:`METRICS`).
LABELS = {
    "wall_s": "wall time", "bringup_s": "bring-up", "latency_s": "job latency", "write_mb_s": "write",
    "read_mb_s": "read", "dd_write_mb_s": "dd write", "dd_read_mb_s": "dd read",
    "write_throughput_mb_s": "write per map", "read_throughput_mb_s": "read per map",
    "dd_write_proc_mb_s": "dd write per process", "dd_read_proc_mb_s": "dd read per process", "write_ratio": "w/dd",
    "read_ratio": "r/dd", "time_ratio": "t/dd", "write_time_ratio": "t/dd write", "read_time_ratio": "t/dd read",
    "sort_mb_s": "sort rate", "io_ratio": "IO/4×in", "pfs_io_ratio": "pfs/4×in", "shuffle_s": "shuffle phase",
    "direct_bytes": "direct B", "http_bytes": "HTTP B", "spark_jobs_s": "Spark jobs",
    "am_launch_s": "AM launch", "am_jvm_s": "AM JVM", "am_init_s": "AM init", "first_map_s": "first map",
    "jobs_per_min": "jobs/min", "jobs_per_min_sequential": "jobs/min seq", "jobs_per_min_concurrent": "jobs/min conc",
    "cpu_s_per_job_sequential": "CPU/job seq", "cpu_s_per_job_concurrent": "CPU/job conc",
}
#: Every abbreviation of the summary (labels, columns) → what it means; printed under it for those it shows.
ABBREVIATIONS = {
    "w/dd": "TestDFSIO aggregate write MiB/s ÷ dd's (same files, same nodes)",
    "r/dd": "TestDFSIO aggregate read MiB/s ÷ dd's",
    "t/dd": "TestDFSIO job time (write + read) ÷ dd time (write + read)",
    "t/dd write": "TestDFSIO write job time ÷ dd write time",
    "t/dd read": "TestDFSIO read job time ÷ dd read time",
    "IO/4×in": "TeraSort FILE bytes read + written ÷ (4 × input); Themis's 2-IO bound = 1",
    "pfs/4×in": "TeraSort shared-filesystem bytes ÷ (4 × input); Themis's 2-IO bound = 1",
    "direct B": "map-output bytes reducers read straight from the shared filesystem",
    "HTTP B": "map-output bytes reducers fetched over HTTP",
    "AM launch": "job submission → ApplicationMaster container launched",
    "AM JVM": "→ the AM's JVM at MRAppMaster", "AM init": "→ the job initialised",
    "first map": "→ the first map attempt running",
    "seq": "one-map jobs one after another", "conc": "one-map jobs several at a time",
    "fs": "filesystem.mode (rawfs, shim, hdfs)", "n": "successful runs of the point",
    "95% CI": "t-interval of the mean of the logs, back-transformed: never < 0 (a 0 value: linear, clipped)",
}
#: The point columns of the summary: (key in a summary, column); the last four only when set.
POINT_COLUMNS = (("nodes", "nodes"), ("fs_mode", "fs"), ("stripe_count", "stripes"), ("files", "files"),
                 ("file_size", "size"), ("rows", "rows"), ("shuffle", "shuffle"), ("local_dirs", "local dirs"))


def _number(value: float) -> str:
    """A figure with 3 significant digits (no exponent below 1e6)."""
    if math.isnan(value):
        return "-"
    if value == 0 or 0.01 <= abs(value) < 1e6:
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return f"{value:.2e}"


def summary_records(summaries: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[str]]:
    """The summary in its long form: one record per (point, figure).

    Returns:
        ``(header, records, legend)``: the column names; each record's cells (workload, the point columns, figure
        with its unit, mean, 95% CI ``[low, high]``, n); one ``abbreviation: meaning`` line for every abbreviation
        shown (:data:`ABBREVIATIONS`), and a warning when a point has n < 3.
    """
    shown_points = [(key, column) for key, column in POINT_COLUMNS
                    if key in ("nodes", "fs_mode", "stripe_count", "files") or any(s.get(key) for s in summaries)]
    header = ["workload", *(column for _, column in shown_points), "figure", "mean", "95% CI", "n"]
    records: list[list[str]] = []
    few = False
    for s in summaries:
        point = [str(s["workload"])]
        for key, _ in shown_points:
            value = s.get(key)
            size = key == "file_size" and value is not None and int(value) % (1 << 20) == 0
            point.append("-" if value is None else f"{int(value) >> 20}M" if size else str(value))
        for metric, label in LABELS.items():
            if f"{metric}_mean" not in s:
                continue
            n = int(s[f"{metric}_n"])
            few |= n < 3
            low, high = s.get(f"{metric}_low", math.nan), s.get(f"{metric}_high", math.nan)
            interval = "-" if math.isnan(low) else f"[{_number(low)}, {_number(high)}]"
            records.append([*point, f"{label} ({METRICS[metric]})", _number(s[f"{metric}_mean"]), interval, str(n)])
    words = {w for record in records for w in record[-4].rsplit(" (", 1)[0].split(" ")} | set(header)
    labels = {record[-4].rsplit(" (", 1)[0] for record in records}
    legend = [f"{abbr}: {meaning}" for abbr, meaning in ABBREVIATIONS.items() if abbr in labels or abbr in words]
    if few:
        legend.append("warning: a point with n < 3 runs has a 95% CI that means little (n = 1: none)")
    return header, records, legend


def print_summary(console: Console, summaries: Sequence[dict[str, Any]]) -> None:
    """The summary (mean and 95% CI of every figure of every point) and the headline figures, in at most
    :data:`SUMMARY_WIDTH` columns: a table on a terminal; in a log file (not a terminal: a batch job's output) the
    long format, one record a line, fields separated by two spaces. Only points that ran are listed; every
    abbreviation is explained under it."""
    header, records, legend = summary_records(summaries)
    width = min(console.width, SUMMARY_WIDTH) if console.is_terminal else SUMMARY_WIDTH
    if not console.is_terminal:  # a line longer than the width stays one line: a path or a figure is never split
        console = Console(file=console.file, width=width, highlight=False, no_color=True, soft_wrap=True)
    title = "benchmark summary (mean, 95% CI, n runs)"
    if console.is_terminal:
        table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False, padding=(0, 1))
        for column in header:
            table.add_column(column, justify="left" if column in ("workload", "figure", "fs") else "right")
        for record in records:
            table.add_row(*record)
        console.print(table, width=width)
    else:
        console.print(f"{title}, one point and figure a line:", markup=False)
        for record in (header, *records):
            console.print("  ".join(record), markup=False, highlight=False)
    for text in (*legend, *headline(summaries)):
        console.print(text, markup=False, highlight=False, width=None if console.soft_wrap else width)


def headline(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """The figures the performance work follows, one line each (means over every point of a workload); a
    workload's lines only if it ran (the bring-up and job latency lines always)."""

    def mean_of(workload: str | None, metric: str) -> float | None:
        values = [s[f"{metric}_mean"] for s in summaries
                  if (workload is None or s["workload"] == workload) and f"{metric}_mean" in s]
        return sum(values) / len(values) if values else None

    def show(value: float | None, unit: str, digits: int = 2) -> str:
        if value is None:
            return "n/a"
        return (f"{value:.3g}" if abs(value) < 0.1 else f"{value:.{digits}f}") + unit

    ran = {s["workload"] for s in summaries}
    lines = [
        ("", f"bring-up time: {show(mean_of(None, 'bringup_s'), ' s')}"),
        ("", f"job latency (submission → first map running): {show(mean_of(None, 'latency_s'), ' s')}"),
        ("dfsio", f"TestDFSIO aggregate ÷ dd: write {show(mean_of('dfsio', 'write_ratio'), '')}, "
        f"read {show(mean_of('dfsio', 'read_ratio'), '')}; TestDFSIO job time ÷ dd time: "
        f"{show(mean_of('dfsio', 'time_ratio'), '')}"),
        ("terasort", f"TeraSort wall time: {show(mean_of('terasort', 'wall_s'), ' s', 1)}"),
        *(("terasort", line) for line in shuffle_lines(summaries)),
        ("terasort", f"TeraSort FILE bytes read+written ÷ (4 × input): {show(mean_of('terasort', 'io_ratio'), '')}"),
        ("terasort", "TeraSort shared-filesystem bytes ÷ (4 × input) (Themis's 2-IO bound = 1): "
         f"{show(mean_of('terasort', 'pfs_io_ratio'), '')}"),
        ("latency", f"one-map job latency (median): {show(mean_of('latency', 'latency_s'), ' s')} = AM launched "
        f"{show(mean_of('latency', 'am_launch_s'), ' s')} + AM JVM {show(mean_of('latency', 'am_jvm_s'), ' s')} + "
        f"AM init {show(mean_of('latency', 'am_init_s'), ' s')} + "
        f"first map {show(mean_of('latency', 'first_map_s'), ' s')}"
        f"; {show(mean_of('latency', 'jobs_per_min'), ' jobs/min', 1)} one after another"),
        ("throughput", "one-map jobs per minute: "
         f"{show(mean_of('throughput', 'jobs_per_min_sequential'), '', 1)} one after "
        f"another, {show(mean_of('throughput', 'jobs_per_min_concurrent'), '', 1)} several at a time "
        f"({show(mean_of('throughput', 'cpu_s_per_job_sequential'), '', 1)} / "
        f"{show(mean_of('throughput', 'cpu_s_per_job_concurrent'), '', 1)} CPU-seconds per job)"),
    ]
    return [line for workload, line in lines if not workload or workload in ran]


def shuffle_lines(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """One line per TeraSort point that names its shuffle (the ``shuffle`` sweep): wall time, the longest
    reducer's shuffle phase and the shared-filesystem bytes ÷ (4 × input), mean ±95% CI, and the map-output
    bytes read directly and over HTTP."""
    lines = []
    for s in summaries:
        if s["workload"] != "terasort" or not s.get("shuffle"):
            continue
        lines.append(f"TeraSort {s['nodes']} node(s) {s.get('fs_mode')} shuffle {s['shuffle']}: wall "
                     f"{_fmt(s, 'wall_s', 1)} s, shuffle phase {_fmt(s, 'shuffle_s', 1)} s, shared-filesystem "
                     f"bytes ÷ (4 × input) {_fmt(s, 'pfs_io_ratio')}; map outputs read directly "
                     f"{_fmt(s, 'direct_bytes', 0)} B, over HTTP {_fmt(s, 'http_bytes', 0)} B (n={s['runs']})")
    return lines
