"""``hpc-hadoop bench`` on the local backend with real Hadoop 3.4.2 daemons: a ``tiny`` sweep of every workload
(dd, TestDFSIO, TeraSort, Mahout KMeans) on one cluster, and a dd-only sweep with repeats.

Benchmarks never assert on time (DESIGN.md §7): the tests check that every run succeeded, that every figure
is there and plausible, that the outputs are complete, and that no process is left.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from benchmarks.results import HIBENCH_HEADER
from tests.conftest import hpc_hadoop, processes_of, run_dirs

pytestmark = pytest.mark.hadoop

COMMON = ("bench_id", "workload", "profile", "repeat", "nodes", "fs_mode", "stripe_count", "files", "file_size",
          "params", "scheduler", "node_names", "fs_root", "fs_type", "stripe_applied", "versions", "started",
          "ended", "state", "wall_s", "notes", "input_bytes")


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_tiny_sweep_of_every_workload(hadoop_runtime: Path, pfs_root: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({
        "name": "ci-tiny", "workloads": ["dd", "dfsio", "terasort", "kmeans"], "profile": "tiny", "repeats": 1,
        "sweep": {"files": [2], "file_size": ["8M"], "stripe_count": [1]},
        "job": {"scheduler": "local", "filesystem": {"root": str(pfs_root)}},
    }))
    out = tmp_path / "out"
    result = hpc_hadoop("bench", "run", str(bench), "--out", str(out), timeout=900)
    print(result.stdout[-6000:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = _rows(out)
    assert [r["workload"] for r in rows] == ["dd", "dfsio", "terasort", "kmeans"]
    for row in rows:
        assert row["state"] == "succeeded", row.get("error")
        assert all(key in row for key in COMMON), [k for k in COMMON if k not in row]
        assert row["node_names"] == ["localhost"] and row["scheduler"] == "local"
        assert row["versions"]["hadoop"] == "3.4.2" and row["stripe_count"] == 1
        assert row["wall_s"] > 0
    dd, dfsio, terasort, kmeans = rows
    # Striping on a local directory is reported as not applicable, never silently dropped.
    assert dd["stripe_applied"] is False and any("not applicable" in n for n in dd["notes"])
    assert dd["dd_write_mb_s"] > 0 and dd["dd_read_mb_s"] > 0 and dd["bringup_s"] is None
    for mode in ("write", "read"):
        assert dfsio[f"{mode}_throughput_mb_s"] > 0 and dfsio[f"{mode}_mb_s"] > 0
        assert dfsio[f"{mode}_ratio"] == pytest.approx(dfsio[f"{mode}_mb_s"] / dfsio[f"dd_{mode}_mb_s"])
    assert dfsio["latency_s"] > 0 and dfsio["bringup_s"] > 0
    assert terasort["valid"] is True and terasort["input_bytes"] == 32_000 * 100
    assert terasort["file_bytes_read"] > 0 and terasort["file_bytes_written"] > 0 and terasort["io_ratio"] > 0.5
    assert terasort["latency_s"] > 0
    assert kmeans["iterations"] >= 1 and kmeans["clustered"] is True
    # One cluster for the whole sweep, and nothing left of it.
    assert len({r["cluster_id"] for r in rows[1:]}) == 1
    clusters = run_dirs(pfs_root)
    assert len(clusters) == 1 and processes_of(clusters[0]) == []
    report = json.loads((clusters[0] / "run.json").read_text())
    assert report["state"] == "succeeded" and report["bringup_s"] > 0 and len(report["steps"]) == 6
    # Outputs: CSV summary, hibench.report, plots, headline figures.
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert [s["workload"] for s in summary] == ["dd", "dfsio", "terasort", "kmeans"]
    report_lines = (out / "hibench.report").read_text().splitlines()
    assert report_lines[0] == HIBENCH_HEADER and len(report_lines) == 5
    for name in ("throughput_vs_files.png", "time_vs_nodes.png", "time_vs_stripes.png"):
        assert (out / name).stat().st_size > 1000
    for figure in ("bring-up time:", "job latency", "TestDFSIO aggregate ÷ dd", "TeraSort wall time",
                   "÷ (2 × input)"):
        assert figure in result.stdout


def test_dd_sweep_with_repeats_and_replot(pfs_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "dd"
    result = hpc_hadoop("bench", "run", "--workload", "dd", "--files", "1", "--files", "2", "--file-size", "4M",
                        "--repeats", "2", "--root", str(pfs_root), "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = _rows(out)
    assert [(r["files"], r["repeat"]) for r in rows] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert all(r["state"] == "succeeded" and r["file_size"] == 4 << 20 for r in rows)
    assert run_dirs(pfs_root) == [], "dd needs no cluster"
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert [s["files"] for s in summary] == ["1", "2"] and all(s["runs"] == "2" for s in summary)
    assert all(float(s["wall_s_ci95"]) >= 0 for s in summary)
    for png in out.glob("*.png"):
        png.unlink()
    replot = hpc_hadoop("bench", "plot", str(out))
    assert replot.returncode == 0, replot.stderr
    assert (out / "throughput_vs_files.png").stat().st_size > 1000
