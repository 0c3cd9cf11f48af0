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

from benchmarks.stats import summarize

#: Parameters that identify a point of a sweep (a summary row groups the repeats of one point).
POINT_KEYS = ("workload", "profile", "nodes", "fs_mode", "stripe_count", "files", "file_size", "rows", "shuffle")
#: Figures summarized over repeats, with their units.
METRICS = {
    "bringup_s": "s", "latency_s": "s", "wall_s": "s", "sort_mb_s": "MiB/s", "spark_jobs_s": "s",
    "write_mb_s": "MiB/s", "read_mb_s": "MiB/s", "dd_write_mb_s": "MiB/s", "dd_read_mb_s": "MiB/s",
    "write_ratio": "x", "read_ratio": "x", "io_ratio": "x", "pfs_io_ratio": "x",
    "shuffle_s": "s", "direct_bytes": "bytes", "http_bytes": "bytes",
    "am_launch_s": "s", "am_jvm_s": "s", "am_init_s": "s", "first_map_s": "s", "jobs_per_min": "jobs/min",
    "time_ratio": "x", "write_time_ratio": "x", "read_time_ratio": "x",
    "jobs_per_min_sequential": "jobs/min", "jobs_per_min_concurrent": "jobs/min",
    "cpu_s_per_job_sequential": "s", "cpu_s_per_job_concurrent": "s",
}
#: HiBench's report header (``bin/functions/workload_functions.sh``, ``gen_report``).
HIBENCH_HEADER = "{:<12} {:<10} {:<8} {:<20} {:<20} {:<20} {:<20}".format(
    "Type", "Date", "Time", "Input_data_size", "Duration(s)", "Throughput(bytes/s)", "Throughput/node")


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
    present ``<metric>_mean``, ``_std``, ``_ci95`` (half-width; NaN for one value), ``_n``.

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
        out.append(summary)
    return out


def write_csv(path: Path, summaries: Sequence[dict[str, Any]]) -> None:
    """The summary as CSV: point columns, ``runs``, then mean/std/ci95/n of each metric (empty when absent)."""
    columns = [*POINT_KEYS, "runs"]
    for metric in METRICS:
        if any(f"{metric}_mean" in s for s in summaries):
            columns += [f"{metric}_{stat}" for stat in ("mean", "std", "ci95", "n")]
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


def hibench_line(row: dict[str, Any]) -> str:
    """One ``hibench.report`` line: type, date, time, input bytes, duration (s), bytes/s, bytes/s per node."""
    size = int(row.get("input_bytes") or 0)
    duration = float(row.get("wall_s") or 0.0)
    throughput = int(size / duration) if duration > 0 else 0
    per_node = int(throughput / max(1, int(row.get("nodes") or 1)))
    stamp = time.localtime(float(row.get("started") or time.time()))
    return "{:<12} {:<10} {:<8} {:<20} {:<20} {:<20} {:<20}".format(
        hibench_type(str(row["workload"])), time.strftime("%Y-%m-%d", stamp), time.strftime("%H:%M:%S", stamp),
        size, f"{duration:.3f}", throughput, per_node)


def write_hibench_report(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """``hibench.report``: the header, then one line per successful run."""
    lines = [HIBENCH_HEADER, *(hibench_line(r) for r in rows if r.get("state") == "succeeded")]
    path.write_text("\n".join(lines) + "\n")


def _fmt(summary: dict[str, Any], metric: str, digits: int = 2) -> str:
    mean = summary.get(f"{metric}_mean")
    if mean is None:
        return "-"
    ci = summary.get(f"{metric}_ci95")
    if abs(mean) < 0.1:
        return f"{mean:.3g}" + ("" if ci is None or math.isnan(ci) else f" ±{ci:.2g}")
    return f"{mean:.{digits}f}" + ("" if ci is None or math.isnan(ci) else f" ±{ci:.{digits}f}")


def print_summary(console: Console, summaries: Sequence[dict[str, Any]]) -> None:
    """The summary table (mean ± 95% CI half-width per point) and the headline figures."""
    table = Table(title="benchmark summary (mean ±95% CI)", title_justify="left", show_edge=False)
    columns = ("workload", "nodes", "fs", "stripes", "files", "runs", "bring-up s", "latency s", "wall s",
               "write MiB/s", "read MiB/s", "dd w MiB/s", "dd r MiB/s", "w/dd", "r/dd", "t/dd", "IO/4×in", "pfs/4×in")
    for column in columns:
        table.add_column(column, justify="left" if column == "workload" else "right")
    for s in summaries:
        table.add_row(str(s["workload"]), str(s.get("nodes")), str(s.get("fs_mode") or "-"),
                      str(s.get("stripe_count") or "-"),
                      str(s.get("files") or "-"), str(s["runs"]), _fmt(s, "bringup_s", 1), _fmt(s, "latency_s"),
                      _fmt(s, "wall_s", 1), _fmt(s, "write_mb_s", 1), _fmt(s, "read_mb_s", 1),
                      _fmt(s, "dd_write_mb_s", 1), _fmt(s, "dd_read_mb_s", 1), _fmt(s, "write_ratio"),
                      _fmt(s, "read_ratio"), _fmt(s, "time_ratio"), _fmt(s, "io_ratio"), _fmt(s, "pfs_io_ratio"))
    if not console.is_terminal and console.width < 200:  # a log file: do not squeeze the columns to 80
        console = Console(file=console.file, width=200, highlight=False)
    console.print(table)
    for line in headline(summaries):
        console.print(line)


def headline(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """The figures the performance work follows, one line each (means over every point of a workload)."""

    def mean_of(workload: str | None, metric: str) -> float | None:
        values = [s[f"{metric}_mean"] for s in summaries
                  if (workload is None or s["workload"] == workload) and f"{metric}_mean" in s]
        return sum(values) / len(values) if values else None

    def show(value: float | None, unit: str, digits: int = 2) -> str:
        if value is None:
            return "n/a"
        return (f"{value:.3g}" if abs(value) < 0.1 else f"{value:.{digits}f}") + unit

    return [
        f"bring-up time: {show(mean_of(None, 'bringup_s'), ' s')}",
        f"job latency (submission → first map running): {show(mean_of(None, 'latency_s'), ' s')}",
        f"TestDFSIO aggregate ÷ dd: write {show(mean_of('dfsio', 'write_ratio'), '')}, "
        f"read {show(mean_of('dfsio', 'read_ratio'), '')}; TestDFSIO job time ÷ dd time: "
        f"{show(mean_of('dfsio', 'time_ratio'), '')}",
        f"TeraSort wall time: {show(mean_of('terasort', 'wall_s'), ' s', 1)}",
        *shuffle_lines(summaries),
        f"TeraSort FILE bytes read+written ÷ (4 × input): {show(mean_of('terasort', 'io_ratio'), '')}",
        "TeraSort shared-filesystem bytes ÷ (4 × input) (Themis's 2-IO bound = 1): "
        f"{show(mean_of('terasort', 'pfs_io_ratio'), '')}",
        f"one-map job latency (median): {show(mean_of('latency', 'latency_s'), ' s')} = AM launched "
        f"{show(mean_of('latency', 'am_launch_s'), ' s')} + AM JVM {show(mean_of('latency', 'am_jvm_s'), ' s')} + "
        f"AM init {show(mean_of('latency', 'am_init_s'), ' s')} + "
        f"first map {show(mean_of('latency', 'first_map_s'), ' s')}"
        f"; {show(mean_of('latency', 'jobs_per_min'), ' jobs/min', 1)} one after another",
        f"one-map jobs per minute: {show(mean_of('throughput', 'jobs_per_min_sequential'), '', 1)} one after "
        f"another, {show(mean_of('throughput', 'jobs_per_min_concurrent'), '', 1)} several at a time "
        f"({show(mean_of('throughput', 'cpu_s_per_job_sequential'), '', 1)} / "
        f"{show(mean_of('throughput', 'cpu_s_per_job_concurrent'), '', 1)} CPU-seconds per job)",
    ]


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
