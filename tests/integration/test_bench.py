"""``hpc-hadoop bench`` with real Hadoop 3.4.2 daemons: on the local backend a ``tiny`` sweep of every workload
(dd, TestDFSIO, TeraSort, Mahout KMeans, the latency and throughput of one-map jobs, Spark's KMeans and sort) on one
cluster and a dd-only sweep with repeats; on the real Slurm
test cluster (tests/cluster, GlusterFS over FUSE) the same ``tiny`` sweep from a user's own sbatch script.

Benchmarks never assert on time (docs/architecture.md, Tests): the tests check that every run succeeded, that
every figure is there and plausible, that the outputs are complete, and that no process is left.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import yaml

from benchmarks.results import HIBENCH_HEADER
from tests.conftest import fresh_pfs_dir, hpc_hadoop, processes_of, run_dirs, run_report
from tests.integration.test_shuffle import records
from tests.integration.test_spark import leftovers, spark_events
from tests.jobs import SMALL

pytestmark = pytest.mark.hadoop

COMMON = ("bench_id", "workload", "profile", "repeat", "nodes", "fs_mode", "stripe_count", "files", "file_size",
          "params", "scheduler", "node_names", "fs_root", "fs_type", "stripe_applied", "versions", "started",
          "ended", "state", "wall_s", "notes", "input_bytes")


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def check_latency_row(latency: dict) -> None:
    """The latency workload's row of the ``tiny`` profile: three one-map jobs, every phase of each one's start
    measured, and they add up to its latency; the row's latency is their median."""
    assert latency["jobs"] == 3 and len(latency["jobs_detail"]) == 3 and latency["jobs_per_min"] > 0
    for job in latency["jobs_detail"]:
        phases = [job[p] for p in ("am_launch_s", "am_jvm_s", "am_init_s", "first_map_s")]
        assert all(p is not None and p >= 0 for p in phases), job
        assert sum(phases) == pytest.approx(job["latency_s"], abs=0.002), job
    assert latency["latency_s"] == sorted(j["latency_s"] for j in latency["jobs_detail"])[1]


def check_terasort_row(terasort: dict, *, shared_local: bool) -> None:
    """TeraSort's row: validated, its counters read, and the shared filesystem's bytes counted as the placement of
    the NodeManager local dirs says (node-local: the input read and the output written, about half the 2-IO bound;
    shared: every FILE byte and the shuffle, more than the input and output alone)."""
    assert terasort["valid"] is True and terasort["input_bytes"] == 32_000 * 100
    assert terasort["file_bytes_read"] > 0 and terasort["file_bytes_written"] > 0 and terasort["io_ratio"] > 0.25
    assert terasort["local_dirs_shared"] is shared_local and terasort["latency_s"] > 0
    assert terasort["shuffle_bytes"] > terasort["input_bytes"]  # every record, with its key/value framing
    if shared_local:
        assert terasort["pfs_bytes"] == (terasort["file_bytes_read"] + terasort["file_bytes_written"]
                                         + terasort["shuffle_bytes"])
    else:  # the input read once and the output written once: 2 of the bound's 4 × input
        assert terasort["pfs_io_ratio"] == pytest.approx(0.5, abs=0.05)


#: Every workload of ``hpc-hadoop bench``, in the order the tiny sweep runs them.
WORKLOADS = ["dd", "dfsio", "terasort", "kmeans", "latency", "throughput", "spark-kmeans", "spark-terasort"]


#: The steps the tiny profile's Spark workloads add to the cluster's run.json (spark-kmeans: the KMeans, on the
#: kmeans workload's points; spark-terasort: TeraGen, the sort, TeraValidate).
SPARK_STEPS = 4


def check_spark_rows(kmeans: dict, sort: dict) -> None:
    """The rows of ``spark-kmeans`` and ``spark-terasort`` (``keep_data``): MLlib's KMeans does exactly the asked
    iterations on the kmeans workload's points; the Spark sort's output passed TeraValidate with TeraGen's checksum,
    and is checked here on its own: its records are the input's, sorted by key, in one file per partition."""
    assert kmeans["iterations"] == kmeans["params"]["iterations"] == 5 and kmeans["cost"] > 0
    assert kmeans["wall_s"] > 0 and kmeans["application_id"].startswith("application_") and kmeans["bringup_s"] > 0
    assert sort["cluster_id"] == kmeans["cluster_id"]
    rows = sort["params"]["rows"]
    assert rows <= 50_000 and sort["input_bytes"] == rows * 100 and sort["output_records"] == rows
    assert sort["valid"] is True and sort["checksum"] == f"{sort['input_checksum']:x}"
    assert sort["wall_s"] > sort["spark_jobs_s"] > 0 and sort["sort_mb_s"] > 0 and sort["spark_jobs"] >= 2
    # node-local shuffle: the shared filesystem saw the input (twice: Spark samples it for the range bounds) and
    # the output
    assert sort["local_dirs_shared"] is False and sort["pfs_bytes"] == 3 * sort["input_bytes"]
    assert sort["shuffle_bytes"] > 0 and sort["validate_s"] > 0
    work = Path(sort["work_dir"])
    generated, ordered = records(work / "gen", "part-m-*"), records(work / "sorted", "part-r-*")
    assert len(ordered) == rows and sorted(ordered) == sorted(generated)
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)
    assert len(list((work / "sorted").glob("part-r-*"))) == sort["params"]["reduces"]
    assert sum(zlib.crc32(r) for r in generated) == sort["input_checksum"]  # TeraGen's counter is the CRC-32 sum


@pytest.mark.own_cluster("a bench brings up the cluster of its sweep")
def test_tiny_sweep_of_every_workload(hadoop_runtime: Path, spark_runtime: Path, pfs_root: Path,  # noqa: F811
                                      tmp_path: Path) -> None:
    """The ``tiny`` profile of every workload, MapReduce's and Spark's, on one cluster (the Spark workloads had a
    bench and a cluster of their own in test_spark.py until issue 38). ``keep_data``: the Spark sort's output, kept in
    its work directory, is checked record by record."""
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({
        "name": "ci-tiny", "workloads": WORKLOADS, "profile": "tiny", "keep_data": True,
        "repeats": 1, "sweep": {"files": [2], "file_size": ["8M"]},
        "job": {"scheduler": "local", "filesystem": {"root": str(pfs_root)}},
    }))
    out = tmp_path / "out"
    result = hpc_hadoop("bench", "run", str(bench), "--out", str(out), timeout=900)
    print(result.stdout[-6000:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = _rows(out)
    assert [r["workload"] for r in rows] == WORKLOADS
    for row in rows:
        assert row["state"] == "succeeded", row.get("error")
        assert all(key in row for key in COMMON), [k for k in COMMON if k not in row]
        assert row["node_names"] == ["localhost"] and row["scheduler"] == "local"
        assert row["versions"]["hadoop"] == "3.4.2" and row["stripe_count"] is None
        assert row["wall_s"] > 0
    dd, dfsio, terasort, kmeans, latency, throughput, spark_kmeans, spark_sort = rows
    # No layout asked (a stripe_count sweep on a local directory is refused before anything runs: issue 29 item 5,
    # tests/unit/benchmarks/test_sweeps.py); the row still says the filesystem has none.
    assert dd["stripe_applied"] is False and dd["stripe"]["status"] == "striping not applicable"
    assert dd["dd_write_mb_s"] > 0 and dd["dd_read_mb_s"] > 0 and dd["bringup_s"] is None
    for mode in ("write", "read"):
        assert dfsio[f"{mode}_throughput_mb_s"] > 0 and dfsio[f"{mode}_mb_s"] > 0
        assert dfsio[f"{mode}_ratio"] == pytest.approx(dfsio[f"{mode}_mb_s"] / dfsio[f"dd_{mode}_mb_s"])
        assert dfsio[f"{mode}_time_ratio"] == pytest.approx(dfsio[f"{mode}_exec_s"] / dfsio[f"dd_{mode}_s"])
    assert dfsio["time_ratio"] > 0
    assert dfsio["latency_s"] > 0 and dfsio["bringup_s"] > 0
    check_terasort_row(terasort, shared_local=False)
    assert terasort["latency_s"] > 0
    assert kmeans["iterations"] >= 1 and kmeans["clustered"] is True
    check_latency_row(latency)
    # Two sequential one-map jobs, then two at once: both figures, each from four jobs that succeeded.
    assert throughput["jobs"] == 4 and throughput["concurrency"] == 2
    assert throughput["jobs_per_min_sequential"] > 0 and throughput["jobs_per_min_concurrent"] > 0
    assert throughput["cpu_s_per_job_sequential"] > 0 and throughput["cpu_s_per_job_concurrent"] > 0
    check_spark_rows(spark_kmeans, spark_sort)
    # One cluster for the whole sweep, and nothing left of it.
    assert len({r["cluster_id"] for r in rows[1:]}) == 1
    clusters = run_dirs(pfs_root)
    assert len(clusters) == 1 and processes_of(clusters[0]) == [] and leftovers(clusters[0]) == []
    assert (clusters[0] / "spark-conf" / "spark-defaults.conf").is_file()
    assert {spark_kmeans["application_id"], spark_sort["application_id"]} <= set(spark_events(clusters[0]))
    report = json.loads((clusters[0] / "run.json").read_text())
    print("steps:", [s["name"] for s in report["steps"]])
    assert report["state"] == "succeeded" and report["bringup_s"] > 0 and len(report["steps"]) == 17 + SPARK_STEPS
    concurrent = [s for s in report["steps"] if s["name"].startswith("concurrent-")]
    assert len(concurrent) == 4 and all(s["state"] == "succeeded" for s in concurrent)
    # Outputs: CSV summary, hibench.report, plots, headline figures.
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert [s["workload"] for s in summary] == WORKLOADS
    report_lines = (out / "hibench.report").read_text().splitlines()
    # dd and TestDFSIO: a write and a read line each; one line for every other workload
    assert report_lines[0] == HIBENCH_HEADER and len(report_lines) == 11
    assert [line.split()[0] for line in report_lines[1:5]] == ["HadoopDd-write", "HadoopDd-read",
                                                               "HadoopDfsio-write", "HadoopDfsio-read"]
    # Nothing was swept (one point): no sweep plot (issue 29 item 4); a task flow per job of dfsio, terasort, kmeans,
    # drawn from its history kept in the output directory (item 2).
    assert not list(out.glob("time_vs_*.png")) and not (out / "throughput_vs_files.png").exists()
    for row in (dfsio, terasort, kmeans):
        assert row["jhists"] and all((out / name).is_file() for name in row["jhists"])
        for name in row["jhists"]:
            assert (out / f"taskflow_{row['workload']}_{Path(name).stem}.png").stat().st_size > 1000
    for figure in ("bring-up time:", "job latency", "TestDFSIO aggregate ÷ dd", "TeraSort wall time",
                   "÷ (4 × input)", "one-map job latency (median):", "one-map jobs per minute:"):
        assert figure in result.stdout


@pytest.mark.own_cluster("a bench brings up the cluster of its sweep, in filesystem.mode hdfs")
def test_dfsio_in_hdfs_mode_reports_latency_and_keeps_hdfs_in_the_cluster_directory(
        hadoop_runtime: Path, pfs_root: Path, tmp_path: Path) -> None:
    """``fs_mode: hdfs`` keeps the job history on HDFS, not as a file on the shared filesystem: the job latency
    still comes out (from the JobHistoryServer's REST API), and the summary table names the mode of each row.

    The HDFS cluster itself (test_filesystems.py's TestDFSIO job on HDFS until issue 38, one bring-up less): the
    NameNode formatted, its metadata and the DataNode's blocks (2 × 8 MB) in the cluster directory, the daemons'
    logs kept, the job history copied out as files at teardown (the write and the read job), TestDFSIO's own
    results as it wrote them."""
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({
        "name": "ci-hdfs", "workloads": ["dfsio"], "profile": "tiny", "repeats": 1, "keep_data": True,
        "sweep": {"files": [2], "file_size": ["8M"], "fs_mode": ["hdfs"]},
        "job": {"scheduler": "local", "filesystem": {"root": str(pfs_root)}, "hadoop": SMALL},
    }))
    out = tmp_path / "out"
    result = hpc_hadoop("bench", "run", str(bench), "--out", str(out), timeout=900)
    print(result.stdout[-4000:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (row,) = _rows(out)
    assert row["state"] == "succeeded" and row["fs_mode"] == "hdfs", row.get("error")
    (cluster,) = run_dirs(pfs_root)
    for mode in ("write", "read"):
        assert row[f"{mode}_throughput_mb_s"] > 0 and row[f"{mode}_latency_s"] > 0
    assert row["latency_s"] > 0
    header = next(line for line in result.stdout.splitlines() if "workload" in line and "stripes" in line)
    assert " fs " in header
    assert any(line.split()[:1] == ["dfsio"] and " hdfs " in line for line in result.stdout.splitlines())
    assert processes_of(cluster) == []
    # TestDFSIO's own results, as it wrote them (-resFile)
    for mode in ("write", "read"):
        text = (Path(row["work_dir"]) / f"TestDFSIO-{mode}.log").read_text()
        assert f"TestDFSIO ----- : {mode}" in text and "Number of files: 2" in text
        assert "Total MBytes processed: 16" in text and float(text.split("Throughput mb/sec:")[1].split()[0]) > 0
    # the HDFS of the cluster, in its directory
    assert "hdfs://127.0.0.1:" in (cluster / "conf" / "core-site.xml").read_text()
    logs = cluster / "logs" / "localhost"
    assert "has been successfully formatted" in (logs / "namenode-format.out").read_text() + \
        (logs / "namenode-format.log").read_text()
    assert (cluster / "hdfs" / "name" / "current" / "VERSION").is_file()
    blocks = [p for p in (cluster / "hdfs" / "data" / "localhost").rglob("blk_*") if not p.name.endswith(".meta")]
    assert sum(p.stat().st_size for p in blocks) >= 16 << 20
    assert {(logs / f"{d}.log").stat().st_size > 0 for d in ("namenode", "datanode")} == {True}
    assert run_report(cluster)["filesystem"]["mode"] == "hdfs"
    # The job history lives on HDFS while the cluster runs; teardown copies it out as files (two jobs).
    assert len(list((cluster / "history").rglob("job_*.jhist"))) == 2, (logs.parent / "history-copy.out")


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


@pytest.mark.slurm
@pytest.mark.own_cluster("a bench in the user's own sbatch job brings up the cluster of its sweep")
def test_tiny_sweep_on_slurm(hadoop_runtime: Path, slurm_cluster: list[str]) -> None:
    """One sbatch job on 2 nodes runs the ``tiny`` sweep of dd, TestDFSIO and TeraSort (`hpc-hadoop bench run` in
    the user's own script): the harness reads the allocation, brings one cluster up on both nodes, spreads dd with
    srun. (KMeans and the latency workload, which need nothing of a batch system, run in the local sweep only since
    issue 38.)"""
    root = fresh_pfs_dir("bench-slurm")
    bench, out, log = root / "bench.yaml", root / "out", root / "bench.out"
    bench.write_text(yaml.safe_dump({
        "name": "ci-slurm-tiny", "workloads": ["dd", "dfsio", "terasort"], "profile": "tiny",
        "repeats": 1, "sweep": {"nodes": [2]},
        "job": {"scheduler": "slurm", "walltime": "00:40:00", "filesystem": {"root": str(root)},
                "hadoop": SMALL},
    }))
    name = f"hh-bench-{root.name}"
    script = root / "bench.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH -N 2 -t 00:40:00 -J {name} -o {log}\n"
                      "echo ALLOCATED $(scontrol show hostnames $SLURM_JOB_NODELIST)\n"
                      f"{Path(sys.executable).with_name('hpc-hadoop')} bench run {bench} --out {out}\n")
    try:
        proc = subprocess.run(["sbatch", "--parsable", "--wait", str(script)], capture_output=True, text=True,
                              timeout=2400)
    except subprocess.TimeoutExpired:
        subprocess.run(["scancel", "--name", name], check=False)  # only this test's job
        raise
    text = log.read_text() if log.exists() else ""
    print(text[-6000:])
    assert proc.returncode == 0, proc.stdout + proc.stderr + text[-4000:]
    job_id = proc.stdout.strip().split(";")[0]
    allocated = next(line.split()[1:] for line in text.splitlines() if line.startswith("ALLOCATED"))
    assert len(allocated) == 2 and set(allocated) <= set(slurm_cluster)

    rows = _rows(out)
    assert [r["workload"] for r in rows] == ["dd", "dfsio", "terasort"]
    for row in rows:
        assert row["state"] == "succeeded", row.get("error")
        assert all(key in row for key in COMMON), [k for k in COMMON if k not in row]
        assert row["scheduler"] == "slurm" and row["node_names"] == allocated and row["nodes"] == 2
        assert row["fs_type"] == "fuse.glusterfs" and row["versions"]["hadoop"] == "3.4.2"
        assert row["wall_s"] > 0
    dd, dfsio, terasort = rows
    # dd really ran on both nodes (each process reports its `uname -n`), for the baseline and inside dfsio.
    assert dd["dd_hosts"] == sorted(allocated) and dfsio["dd_hosts"] == sorted(allocated)
    assert dd["dd_write_mb_s"] > 0 and dd["dd_read_mb_s"] > 0 and dd["bringup_s"] is None
    for mode in ("write", "read"):
        assert dfsio[f"{mode}_mb_s"] > 0 and dfsio[f"{mode}_ratio"] > 0
    assert dfsio["latency_s"] > 0 and dfsio["bringup_s"] > 0
    check_terasort_row(terasort, shared_local=False)
    # One cluster for the whole sweep, on the allocated nodes, in this job; nothing left of it on any node
    # (the nodes share this machine's PID namespace, so psutil sees every node's processes).
    assert len({r["cluster_id"] for r in rows}) == 1
    (cluster,) = run_dirs(root)
    report = run_report(cluster)
    assert report["state"] == "succeeded" and report["nodes"] == allocated and report["job_id"] == job_id
    assert report["leftover_processes"] == 0 and len(report["steps"]) == 5  # TestDFSIO 2, TeraGen/Sort/Validate
    assert processes_of(root) == []
    squeue = subprocess.run(["squeue", "-h", "-o", "%i", "-j", job_id], capture_output=True, text=True)
    assert job_id not in squeue.stdout.split()
    with open(out / "summary.csv") as f:
        assert [s["workload"] for s in csv.DictReader(f)] == ["dd", "dfsio", "terasort"]
    report_lines = (out / "hibench.report").read_text().splitlines()
    assert report_lines[0] == HIBENCH_HEADER and len(report_lines) == 6  # dd and TestDFSIO: a write and a read line
    # One point, nothing swept: no sweep plot (issue 29 item 4); TeraSort's task flow from its kept history (item 2).
    assert not list(out.glob("time_vs_*.png")) and not (out / "throughput_vs_files.png").exists()
    assert (out / f"taskflow_terasort_{terasort['job_id']}.png").stat().st_size > 1000
    for figure in ("bring-up time:", "job latency", "TestDFSIO aggregate ÷ dd", "TeraSort wall time"):
        assert figure in text


@pytest.mark.slurm
def test_sweep_larger_than_the_allocation_is_refused_on_slurm(slurm_cluster: list[str]) -> None:
    """A 1-node allocation and `nodes: [1, 2]`: one line, exit 2, before any cluster or dd starts."""
    root = fresh_pfs_dir("bench-refused")
    bench, out, log = root / "bench.yaml", root / "out", root / "bench.out"
    bench.write_text(yaml.safe_dump({
        "name": "too-big", "workloads": ["dd", "terasort"], "profile": "tiny", "repeats": 1,
        "sweep": {"nodes": [1, 2]}, "job": {"scheduler": "slurm", "filesystem": {"root": str(root)}}}))
    script = root / "bench.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH -N 1 -t 00:10:00 -J hh-refused-{root.name} -o {log}\n"
                      f"{Path(sys.executable).with_name('hpc-hadoop')} bench run {bench} --out {out}\n")
    proc = subprocess.run(["sbatch", "--parsable", "--wait", str(script)], capture_output=True, text=True,
                          timeout=600)
    text = log.read_text()
    assert proc.returncode == 2, proc.stdout + proc.stderr + text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "sweep.nodes" in errors[0] and "has 1 node(s)" in errors[0], text
    assert "Traceback" not in text and run_dirs(root) == []
    assert not (out / "results.jsonl").exists()
