"""Statistics, parsers and output formats of the benchmark harness, against known values."""

from __future__ import annotations

import csv
import io
import json
import math
import struct
from pathlib import Path

import pytest

from benchmarks.harness import BenchSpec, load_bench, points
from benchmarks.history import client_counters, dfsio_results, file_bytes, submit_to_first_map_s
from benchmarks.profiles import PROFILES, profile
from benchmarks.results import (
    HIBENCH_HEADER,
    append_row,
    headline,
    hibench_line,
    read_rows,
    summarize_rows,
    write_csv,
    write_hibench_report,
)
from benchmarks.seqfile import hadoop_vint, unsigned_varint, vector_writable, write_vectors
from benchmarks.stats import summarize, t_quantile_95
from benchmarks.workloads import WORKLOADS
from launcher.util.errors import UserError


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (10, 2.228),
                                              (29, 2.045), (30, 2.042), (31, 1.96), (1000, 1.96)])
def test_t_quantiles_match_published_table(df: int, expected: float) -> None:
    assert t_quantile_95(df) == pytest.approx(expected)


def test_t_quantile_rejects_zero_degrees_of_freedom() -> None:
    with pytest.raises(ValueError):
        t_quantile_95(0)


def test_summary_of_known_sample() -> None:
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample std sqrt(32/7) = 2.138; CI = 2.365 * 2.138 / sqrt(8) = 1.788.
    s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert s.n == 8 and s.mean == pytest.approx(5.0)
    assert s.std == pytest.approx(math.sqrt(32 / 7))
    assert s.ci95 == pytest.approx(2.365 * math.sqrt(32 / 7) / math.sqrt(8))
    assert (s.low, s.high) == pytest.approx((5 - s.ci95, 5 + s.ci95))


def test_summary_of_three_repeats() -> None:
    # 10, 12, 14: mean 12, std 2, CI = 4.303 * 2 / sqrt(3) = 4.9687.
    s = summarize([10.0, 12.0, 14.0])
    assert (s.mean, s.std) == pytest.approx((12.0, 2.0))
    assert s.ci95 == pytest.approx(4.9687, abs=1e-4)


def test_one_value_has_no_interval_and_empty_is_an_error() -> None:
    s = summarize([3.5])
    assert s.mean == 3.5 and s.std == 0.0 and math.isnan(s.ci95)
    with pytest.raises(ValueError):
        summarize([])


def test_profiles_have_every_workload_and_grow() -> None:
    for name in PROFILES:
        assert set(PROFILES[name]) == set(WORKLOADS)  # every workload has its sizes at every scale
    sizes = [PROFILES[p]["terasort"]["rows"] for p in ("tiny", "small", "large", "huge")]
    assert sizes == sorted(sizes) and sizes[0] == 32_000
    assert [PROFILES[p]["latency"]["jobs"] for p in ("tiny", "small", "large", "huge")] == [3, 10, 10, 10]
    throughput = [PROFILES[p]["throughput"] for p in ("tiny", "small", "large", "huge")]
    assert [t["jobs"] for t in throughput] == sorted(t["jobs"] for t in throughput)
    assert all(1 < t["concurrency"] <= t["jobs"] for t in throughput)
    assert profile("tiny", "dfsio") == {"files": 2, "file_size": 8 << 20}
    with pytest.raises(KeyError, match="tiny, small"):
        profile("gigantic", "dd")


DFSIO_LOG = """----- TestDFSIO ----- : write
            Date & time: Sun Nov 22 04:47:01 UTC 2026
        Number of files: 2
 Total MBytes processed: 16
      Throughput mb/sec: 640
 Average IO rate mb/sec: 649.35
  IO rate std deviation: 9.35
     Test exec time sec: 19.73

----- TestDFSIO ----- : read
            Date & time: Sun Nov 22 04:47:15 UTC 2026
        Number of files: 2
 Total MBytes processed: 16
      Throughput mb/sec: 1,066.67
 Average IO rate mb/sec: 1200
  IO rate std deviation: 133.33
     Test exec time sec: 11.43
"""


def test_dfsio_result_file_is_parsed() -> None:
    write, read = dfsio_results(DFSIO_LOG)
    assert write == {"mode": "write", "files": 2, "total_mb": 16, "throughput_mb_s": 640.0,
                     "avg_io_rate_mb_s": 649.35, "io_rate_std": 9.35, "exec_time_s": 19.73}
    assert read["mode"] == "read" and read["throughput_mb_s"] == pytest.approx(1066.67)
    assert read["exec_time_s"] == pytest.approx(11.43)


CLIENT_LOG = """2026-11-22 04:50:01,000 INFO mapreduce.Job: Counters: 36
	File System Counters
		FILE: Number of bytes read=3201234
		FILE: Number of bytes written=9876543
		FILE: Number of read operations=0
	Map-Reduce Framework
		Map input records=32000
		Spilled Records=64000
"""


def test_client_counters_and_file_bytes() -> None:
    counters = client_counters(CLIENT_LOG)
    assert counters["Map input records"] == 32000 and counters["Spilled Records"] == 64000
    assert file_bytes(CLIENT_LOG) == (3201234, 9876543)
    assert file_bytes("no counters here") == (None, None)


def test_latency_from_json_history(tmp_path: Path) -> None:
    path = tmp_path / "job_1_0001-x.jhist"
    events = [
        {"type": "JOB_SUBMITTED", "event": {"org.apache.hadoop.mapreduce.jobhistory.JobSubmitted":
                                            {"jobid": "job_1_0001", "submitTime": 1_000_000}}},
        {"type": "MAP_ATTEMPT_STARTED", "event": {"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":
                                                  {"startTime": 1_004_500}}},
        {"type": "MAP_ATTEMPT_STARTED", "event": {"org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStarted":
                                                  {"startTime": 1_002_400}}},
    ]
    path.write_text("Avro-Json\n{\"type\":\"record\",\"name\":\"Event\"}\n" + "\n".join(map(json.dumps, events)))
    assert submit_to_first_map_s(path) == pytest.approx(2.4)
    path.write_text("Avro-Json\n" + json.dumps(events[0]))
    assert submit_to_first_map_s(path) is None


def test_hadoop_and_mahout_varints() -> None:
    assert hadoop_vint(5) == b"\x05" and hadoop_vint(-112) == b"\x90"
    assert hadoop_vint(200) == b"\x8f\xc8" and hadoop_vint(1000) == b"\x8e\x03\xe8"
    assert unsigned_varint(1) == b"\x01" and unsigned_varint(300) == b"\xac\x02"
    assert vector_writable([1.0, 2.0]) == b"\x03\x02" + struct.pack(">2d", 1.0, 2.0)


def test_sequence_file_header_and_records() -> None:
    out = io.BytesIO()
    assert write_vectors(out, [(f"p{i}", [float(i)]) for i in range(70)]) == 70
    data = out.getvalue()
    assert data.startswith(b"SEQ\x06\x19org.apache.hadoop.io.Text")
    assert b"org.apache.mahout.math.VectorWritable\x00\x00\x00\x00\x00\x00" in data
    sync = data[data.index(b"VectorWritable") + 14 + 6:][:16]
    assert data.count(b"\xff\xff\xff\xff" + sync) == 1  # one sync marker after 64 records


def _row(workload: str, wall: float, repeat: int, **extra: object) -> dict:
    return {"workload": workload, "profile": "tiny", "nodes": 1, "fs_mode": "rawfs", "stripe_count": None,
            "files": 2, "file_size": 8 << 20, "repeat": repeat, "state": "succeeded", "wall_s": wall,
            "started": 1_795_322_821.0, "input_bytes": 16 << 20, **extra}


def test_summaries_group_repeats_of_a_point_and_skip_failures() -> None:
    rows = [_row("dfsio", 10.0, 1, write_ratio=0.5), _row("dfsio", 12.0, 2, write_ratio=0.7),
            _row("dfsio", 14.0, 3, write_ratio=0.6), {**_row("dfsio", 99.0, 4), "state": "failed"},
            _row("terasort", 30.0, 1, files=None, file_size=None, io_ratio=1.5)]
    summaries = summarize_rows(rows)
    dfsio = next(s for s in summaries if s["workload"] == "dfsio")
    assert dfsio["runs"] == 3 and dfsio["wall_s_mean"] == pytest.approx(12.0)
    assert dfsio["wall_s_ci95"] == pytest.approx(4.9687, abs=1e-4)
    assert dfsio["write_ratio_mean"] == pytest.approx(0.6)
    lines = headline(summaries)
    assert "TestDFSIO aggregate ÷ dd: write 0.60" in lines[2]
    assert lines[3] == "TeraSort wall time: 30.0 s" and lines[4].endswith(": 1.50")


def test_bringup_counts_once_per_cluster() -> None:
    rows = [_row("dfsio", 10.0 + r, r, bringup_s=60.0, cluster_id="a") for r in (1, 2, 3)]
    (one,) = summarize_rows(rows)
    assert one["bringup_s_n"] == 1 and one["bringup_s_mean"] == 60.0 and math.isnan(one["bringup_s_ci95"])
    assert one["wall_s_n"] == 3
    rows += [_row("dfsio", 12.0, 4, bringup_s=70.0, cluster_id="b")]
    (two,) = summarize_rows(rows)
    assert two["bringup_s_n"] == 2 and two["bringup_s_mean"] == pytest.approx(65.0)


def test_csv_and_jsonl_formats(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    rows = [_row("dd", 1.0, 1, write_mb_s=100.0), _row("dd", 3.0, 2, write_mb_s=300.0)]
    for row in rows:
        append_row(results, row)
    assert [json.loads(line) for line in results.read_text().splitlines()] == rows
    assert read_rows(tmp_path) == rows
    write_csv(tmp_path / "summary.csv", summarize_rows(rows))
    with open(tmp_path / "summary.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 1 and table[0]["workload"] == "dd" and table[0]["runs"] == "2"
    assert float(table[0]["write_mb_s_mean"]) == 200.0 and float(table[0]["wall_s_std"]) == pytest.approx(1.4142, 1e-4)
    assert float(table[0]["wall_s_ci95"]) == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2))
    assert "io_ratio_mean" not in table[0]


def test_hibench_report_format(tmp_path: Path) -> None:
    line = hibench_line(_row("terasort", 4.0, 1, input_bytes=3_200_000, nodes=2))
    fields = line.split()
    assert fields[0] == "HadoopTerasort" and fields[3:] == ["3200000", "4.000", "800000", "400000", "2", "-"]
    assert len(fields[1]) == 10 and len(fields[2]) == 8
    assert HIBENCH_HEADER.split() == ["Type", "Date", "Time", "Input_data_size", "Duration(s)",
                                      "Throughput(bytes/s)", "Throughput/node", "Nodes", "Stripe_count"]
    write_hibench_report(tmp_path / "hibench.report", [_row("dd", 2.0, 1), {**_row("dd", 1.0, 2), "state": "failed"}])
    lines = (tmp_path / "hibench.report").read_text().splitlines()
    assert lines[0] == HIBENCH_HEADER and len(lines) == 2 and lines[1].startswith("HadoopDd ")


def test_hibench_report_gives_the_stripe_count_the_run_really_had() -> None:
    """Issue 29: a stripe column in ``hibench.report``; the layout read back, never a count that did not apply."""
    applied = {**_row("dfsio", 4.0, 1, input_bytes=100, nodes=3), "stripe_applied": True, "stripe_count": 4}
    refused = {**applied, "stripe_applied": False, "stripe_count": 4}
    assert hibench_line(applied).split()[7:] == ["3", "4"]
    assert hibench_line(refused).split()[7:] == ["3", "-"]


def test_bench_files_and_sweeps(tmp_path: Path) -> None:
    path = tmp_path / "bench.yaml"
    path.write_text("workloads: [dd, dfsio]\nsweep:\n  stripe_count: [1, 4]\n  nodes: [2, 1]\n  file_size: [8M]\n")
    bench = load_bench(path, repeats=2)
    assert bench.repeats == 2 and bench.sweep.file_size == [8 << 20]
    combos = points(bench)
    assert [p["nodes"] for p in combos] == [1, 1, 2, 2] and [p["stripe_count"] for p in combos] == [1, 4, 1, 4]
    assert load_bench(None, workloads=("kmeans",), files=(4, 8)).sweep.files == [4, 8]
    assert BenchSpec(workloads=["dd"]).repeats == 3
    with pytest.raises(UserError, match="unknown workload"):
        load_bench(None, workloads=("wordcount",))
    path.write_text("workloads: [dd]\nrepeat: 2\n")
    with pytest.raises(UserError, match="repeat"):
        load_bench(path)


def test_a_files_sweep_does_not_repeat_terasort() -> None:
    from benchmarks.harness import relevant

    one = {"nodes": 1, "fs_mode": "rawfs", "stripe_count": 4, "files": 2, "file_size": 8 << 20}
    two = {**one, "files": 4}
    assert relevant("terasort", "tiny", one) == relevant("terasort", "tiny", two)
    assert relevant("dfsio", "tiny", one) != relevant("dfsio", "tiny", two)
    assert relevant("terasort", "tiny", one) != relevant("terasort", "tiny", {**one, "stripe_count": 16})


# -- issue 29 item 4: intervals that respect the sign, tables worth printing, hibench.report per direction ----------

def test_log_interval_of_known_values() -> None:
    from benchmarks.stats import log_interval

    # logs 1 and 3: mean 2, std sqrt(2), half-width 12.706 * sqrt(2) / sqrt(2) = 12.706.
    got = log_interval([math.e, math.e ** 3])
    assert got is not None and got.gmean == pytest.approx(math.e ** 2)
    assert (got.low, got.high) == pytest.approx((math.exp(2 - 12.706), math.exp(2 + 12.706)))
    one = log_interval([4.0])
    assert one is not None and one.gmean == 4.0 and math.isnan(one.low) and math.isnan(one.high)
    assert log_interval([0.0, 3.0]) is None
    with pytest.raises(ValueError):
        log_interval([])


def test_summaries_carry_an_interval_that_never_goes_below_zero() -> None:
    """The issue's `261 ± 2402 MiB/s`: the arithmetic CI of two runs goes far below zero; `_low`/`_high` do not."""
    (s,) = summarize_rows([_row("dd", 10.0, 1, write_mb_s=20.0), _row("dd", 300.0, 2, write_mb_s=502.0)])
    assert s["write_mb_s_mean"] - s["write_mb_s_ci95"] < 0 < s["write_mb_s_low"] < s["write_mb_s_high"]
    assert s["write_mb_s_interval"] == "log" and s["write_mb_s_gmean"] == pytest.approx(math.sqrt(20.0 * 502.0))
    (z,) = summarize_rows([_row("terasort", 1.0, 1, direct_bytes=0), _row("terasort", 1.0, 2, direct_bytes=10)])
    assert z["direct_bytes_interval"] == "linear" and z["direct_bytes_low"] == 0.0


def _summary_text(rows: list[dict], terminal: bool) -> str:
    from rich.console import Console

    from benchmarks.results import print_summary

    out = io.StringIO()
    console = Console(file=out, width=240, force_terminal=terminal, color_system=None, highlight=False)
    print_summary(console, summarize_rows(rows))
    return out.getvalue()


def test_a_log_never_splits_a_headline_line() -> None:
    """Issue 28 item 2 in ``bench``'s log: the TeraSort shuffle line (about 150 columns) came out split at 100,
    ``... shared-filesystem bytes ÷`` / ``(4 × input) 0.51; ...``; in a log every line is whole."""
    rows = [_row("terasort", 38.2, r, input_bytes=320_000_000, nodes=1, shuffle="http", shuffle_s=10.1,
                 pfs_io_ratio=0.51, direct_bytes=0, http_bytes=332_800_384, io_ratio=0.77) for r in range(3)]
    text = _summary_text(rows, terminal=False)
    (line,) = [line for line in text.splitlines() if line.startswith("TeraSort 1 node(s)")]
    assert "shared-filesystem bytes ÷ (4 × input) 0.51" in line and len(line) > 100, text
    assert not [other for other in text.splitlines() if other.startswith("(4 × input)")], text


def _dfsio_rows(n: int) -> list[dict]:
    return [_row("dfsio", 20.0 + r, r, write_mb_s=5.0 + r, read_mb_s=9.0, dd_write_mb_s=100.0, dd_read_mb_s=300.0,
                 write_ratio=0.05, read_ratio=0.03, time_ratio=4.0 + r) for r in range(1, n + 1)]


@pytest.mark.parametrize("terminal", [False, True])
def test_summary_fits_100_columns_and_lists_only_what_ran(terminal: bool) -> None:
    """The issue's 200-column table and `n/a` rows for workloads not run: every line fits 100 columns (a table on a
    terminal, the long format in a log), only dfsio rows, no TeraSort or KMeans line."""
    text = _summary_text(_dfsio_rows(3), terminal)
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert "TeraSort" not in text and "terasort" not in text and "one-map" not in text and "KMeans" not in text
    assert lines[-1] == "TestDFSIO aggregate ÷ dd: write 0.05, read 0.03; TestDFSIO job time ÷ dd time: 6.00"
    if not terminal:  # one record a line: the point, one figure, its mean, 95% CI and n
        records = [line for line in lines if line.startswith("dfsio  ")]
        assert len(records) == 8 and all(line.endswith("  3") for line in records)
        assert "dfsio  1  rawfs  -  2  8M  w/dd (x)  0.05  " in text
        header = next(line for line in lines if line.startswith("workload"))
        assert header.split("  ") == ["workload", "nodes", "fs", "stripes", "files", "size", "figure", "mean",
                                      "95% CI", "n"]


def test_every_abbreviation_of_the_summary_is_explained() -> None:
    from benchmarks.results import ABBREVIATIONS, LABELS

    rows = [{**r, "io_ratio": 1.0, "pfs_io_ratio": 0.5} for r in _dfsio_rows(2)]
    text = _summary_text(rows, terminal=False)
    legend = {line.split(": ", 1)[0] for line in text.splitlines() if ": " in line}
    shown = {label for label in LABELS.values() if f"  {label} (" in text}
    abbreviations = {label for label in shown if label in ABBREVIATIONS}
    assert {"w/dd", "r/dd", "t/dd", "IO/4×in", "pfs/4×in"} <= abbreviations
    assert abbreviations | {"fs", "n", "95% CI"} <= legend
    assert "warning: a point with n < 3 runs has a 95% CI that means little" in text
    assert "warning" not in _summary_text(_dfsio_rows(3), terminal=False)


def test_hibench_report_has_one_line_per_direction(tmp_path: Path) -> None:
    """The issue's dd row mixing write and read time: dd and TestDFSIO each give a `-write` and a `-read` line with
    that direction's time and the bytes moved."""
    dd = _row("dd", 3.0, 1, dd_write_s=1.0, dd_read_s=2.0, input_bytes=16 << 20, nodes=2)
    dfsio = _row("dfsio", 40.0, 1, write_exec_s=16.0, read_exec_s=8.0, input_bytes=16 << 20)
    write_hibench_report(tmp_path / "hibench.report", [dd, dfsio, _row("terasort", 4.0, 1, input_bytes=100)])
    lines = [line.split() for line in (tmp_path / "hibench.report").read_text().splitlines()[1:]]
    assert [(f[0], f[3], f[4], f[5], f[6]) for f in lines] == [
        ("HadoopDd-write", str(16 << 20), "1.000", str(16 << 20), str(8 << 20)),
        ("HadoopDd-read", str(16 << 20), "2.000", str(8 << 20), str(4 << 20)),
        ("HadoopDfsio-write", str(16 << 20), "16.000", str(1 << 20), str(1 << 20)),
        ("HadoopDfsio-read", str(16 << 20), "8.000", str(2 << 20), str(2 << 20)),
        ("HadoopTerasort", "100", "4.000", "25", "25")]
