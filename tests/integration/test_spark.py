"""Spark and Python on the cluster's YARN, on the local backend, with real Spark 4.1.1 (PyPI's pyspark, installed by
``install.sh``), real YARN daemons and the dict-gcide corpus; no mocks.

One cluster runs the three kinds of step a Python user has (issue 14): a PySpark word count, SparkPi from a jar, and
Hadoop streaming with Python mapper and reducer; each result is checked against an independent count. A second one
runs out of walltime in the middle of a PySpark step: the executors and the Python workers must go with it.

Elsewhere since issue 38: on Slurm nodes over GlusterFS, an ordinary user's PySpark word count and SparkPi (executors
on both nodes) are the first steps of test_slurm.py's launcher-killed cluster; the Spark workloads of ``bench``
(spark-kmeans, spark-terasort) run in test_bench.py's tiny sweep of every workload; spark-submit and the pyspark shell
through ``hpc-hadoop exec`` run on test_interactive.py's local cluster.
"""

from __future__ import annotations

import functools
import getpass
import json
import re
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import REPO, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.integration.test_local_end_to_end import python_wordcount

pytestmark = pytest.mark.hadoop

EXAMPLES = REPO / "examples"


def tab_counts(directory: Path, pattern: str) -> Counter[str]:
    """``word<TAB>count`` lines of the part files of an output directory."""
    counts: Counter[str] = Counter()
    for part in sorted(directory.glob(pattern)):
        for line in part.read_text(encoding="utf-8", errors="replace").split("\n"):
            if line:
                word, _, count = line.rpartition("\t")
                counts[word] += int(count)
    return counts


def spark_events(run_dir: Path) -> dict[str, list[dict]]:
    """The Spark event log of each application in ``spark-events/`` (rolling logs: one directory per application;
    an application killed mid-run leaves an ``.inprogress`` file): application id → events."""
    logs: dict[str, list[dict]] = {}
    for directory in sorted((run_dir / "spark-events").glob("eventlog_v2_*")):
        events = []
        for part in sorted(directory.glob("events_*")):
            events += [json.loads(line) for line in part.read_text().splitlines() if line.startswith("{")]
        logs[directory.name.removeprefix("eventlog_v2_")] = events
    return logs


def executor_hosts(events: list[dict]) -> set[str]:
    """Hosts of the executors an application had, from its ``SparkListenerExecutorAdded`` events."""
    return {e["Executor Info"]["Host"] for e in events if e.get("Event") == "SparkListenerExecutorAdded"}


def leftovers(run_dir: Path) -> list[str]:
    """Live processes of the cluster: by command line (daemons, agents), or by environment (a Spark executor's
    command line names neither the cluster directory nor the cluster id, and a PySpark worker's is only
    ``python3 -m pyspark.daemon``; their environment has the NodeManager's local dirs, named after the cluster)."""
    found = processes_of(run_dir)
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(run_dir.name in value for value in proc.environ().values()):
                found.append(" ".join(proc.info["cmdline"] or [])[:200])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@functools.cache
def expected_counts(corpus: Path) -> Counter[str]:
    """The independent Python count of ``corpus`` (:func:`python_wordcount`), computed once per test session (5 s)."""
    return python_wordcount(corpus)


def write_job(tmp_path: Path, root: Path, job: dict) -> Path:
    """A local-backend job file in ``examples/`` terms: the job file sits in ``tmp_path`` with copies of the Python
    files it names relative to itself."""
    job = {"scheduler": "local", "filesystem": {"root": str(root)}, **job}
    (tmp_path / "python").mkdir(exist_ok=True)
    for name in ("wordcount.py", "mapper.py", "reducer.py"):
        (tmp_path / "python" / name).write_text((EXAMPLES / "python" / name).read_text())
    path = tmp_path / f"{job['name']}.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


@pytest.mark.own_cluster("examples/spark.yaml as it is")
def test_pyspark_wordcount_sparkpi_and_python_streaming(spark_runtime: Path, hadoop_runtime: Path, pfs_root: Path,
                                                        gcide_corpus: Path) -> None:
    """examples/spark.yaml as it is: three steps on one cluster, each checked against an independent result."""
    result = hpc_hadoop("submit", "examples/spark.yaml", "--set", f"filesystem.root={pfs_root}")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    run_dir = only_run_dir(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "succeeded"
    steps = {s["name"]: s for s in report["steps"]}
    assert [s["kind"] for s in report["steps"]] == ["pyspark", "spark", "streaming"]
    for step in report["steps"]:
        assert step["state"] == "succeeded" and step["returncode"] == 0 and step["wall_s"] > 0
        assert step["application_id"].startswith("application_")
    walls = ", ".join(f"{s['name']} {s['wall_s']:.1f} s" for s in report["steps"])
    print(f"\nwall times on the local backend: {walls}")
    # Issue 28 item 2: a Spark step's progress in stages and tasks (was ``map 50% reduce 0%``), one line per change.
    spark_lines = [line for line in result.stdout.splitlines() if re.search(r"\] (wordcount|SparkPi): ", line)]
    print("\n".join(spark_lines))
    for name in ("wordcount", "SparkPi"):
        assert [line for line in spark_lines if re.search(rf"\] {name}: stage \d+: \d+/\d+ tasks", line)], \
            result.stdout
    assert not [line for line in spark_lines if " map " in line] and len(spark_lines) == len(set(spark_lines))
    # Issue 40: before its first stage a Spark step says what it waits for; what the programs print reaches the
    # terminal (PySpark's print, SparkPi's println), Spark's log4j records do not; the summary ends with the results.
    for name in ("wordcount", "SparkPi"):
        assert [line for line in spark_lines if re.search(rf"\] {name}: waiting for executors: 0/1  application_",
                                                          line)], "\n".join(spark_lines)
    printed = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if re.search(r"\] \w+> ", line)]
    print("\n".join(printed))
    assert [line for line in printed if line.startswith("SparkPi> Pi is roughly 3.1")], printed
    assert printed[0].startswith("wordcount> counted the words of "), printed
    assert not [line for line in result.stdout.splitlines() if re.search(r" (INFO|WARN) \w+: ", line)], \
        result.stdout[-3000:]
    expected = expected_counts(gcide_corpus)
    results = pfs_root / getpass.getuser() / "results" / run_dir.name  # outside the cluster directory (issue 28)
    spark_counts = tab_counts(results / "spark-wc", "part-*")
    assert len(spark_counts) == len(expected) and spark_counts == expected
    streaming_counts = tab_counts(results / "streaming", "part-*")
    assert len(streaming_counts) == len(expected) and streaming_counts == expected
    assert result.stdout.splitlines()[-5:-1] == [
        "results:", f"  1 wordcount: {results / 'spark-wc'}",
        f"  2 SparkPi: no output; what it printed: {steps['SparkPi']['log']}",
        f"  3 streaming: {results / 'streaming'}"], result.stdout[-2000:]
    pi_log = Path(steps["SparkPi"]["log"]).read_text()
    estimate = float(pi_log.split("Pi is roughly ", 1)[1].split()[0])
    assert abs(estimate - 3.14159) < 0.02, estimate
    # The render shows the exact command line: spark-submit with the cluster's spark-conf/.
    argv = steps["wordcount"]["argv"]
    assert argv[0] == str(spark_runtime / "bin" / "spark-submit") and argv[1:5] == ["--master", "yarn",
                                                                                  "--deploy-mode", "client"]
    defaults = (run_dir / "spark-conf" / "spark-defaults.conf").read_text()
    assert f"spark.yarn.stagingDir file://{run_dir}/staging\n" in defaults
    # file:// cases (docs/architecture.md, Spark): the per-application conf archive went into the cluster's staging
    # directory (not the default file:$HOME/.sparkStaging), the Spark jars were not uploaded (local:), and the
    # staging directory was cleaned up after each application.
    wc_log = Path(steps["wordcount"]["log"]).read_text()
    assert f"-> file:{run_dir}/staging/" in wc_log and "__spark_libs__" not in wc_log
    assert "Neither spark.yarn.jars nor spark.yarn.archive is set" not in wc_log
    uploads = [line for line in wc_log.splitlines() if "Uploading resource" in line]
    assert len(uploads) == 1 and "__spark_conf__" in uploads[0]  # not pyspark.zip nor py4j (local:) either
    assert not list((run_dir / "staging").glob("*/.sparkStaging/application_*"))
    # The event logs outlive the cluster, in its directory; each application had its executors.
    logs = spark_events(run_dir)
    assert set(logs) == {steps["wordcount"]["application_id"], steps["SparkPi"]["application_id"]}
    for app, events in logs.items():
        assert executor_hosts(events), f"{app}: no executor in its event log"
        assert any(e.get("Event") == "SparkListenerApplicationEnd" for e in events)
    assert leftovers(run_dir) == []


@pytest.mark.own_cluster("the walltime ends it")
def test_walltime_ends_a_pyspark_step(spark_runtime: Path, hadoop_runtime: Path, pfs_root: Path,
                                      tmp_path: Path) -> None:
    """Walltime 60 s (bring-up, the driver and the executors take 20-40 s on a loaded 2-core machine): teardown starts
    6 s before it (10% of it, whole seconds), while a PySpark step's tasks sleep for
    5 minutes; the step is killed, the run is ``timed_out`` with its logs, and no driver, executor or Python worker is
    left."""
    script = tmp_path / "sleepy.py"
    script.write_text("import time\nfrom pyspark import SparkContext\n"
                      "sc = SparkContext(appName='sleepy')\n"
                      "print(sc.parallelize(range(2), 2).map(lambda x: time.sleep(300) or x).sum())\n")
    job = write_job(tmp_path, pfs_root, {"name": "spark-walltime", "walltime": "60s",
                                          "steps": [{"pyspark": {"script": str(script)}}]})
    began = time.time()
    result = hpc_hadoop("submit", str(job), timeout=300)
    assert result.returncode == 124, result.stdout[-4000:] + result.stderr[-2000:]
    assert time.time() - began < 120
    run_dir = only_run_dir(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "timed_out" and report["teardown_s"] is not None
    (step,) = report["steps"]
    assert step["state"] == "killed" and step["application_id"].startswith("application_")
    events = spark_events(run_dir)[step["application_id"]]
    assert executor_hosts(events), "no executor started before the walltime"
    assert any(e.get("Event") == "SparkListenerTaskStart" for e in events), "no task was running"
    assert Path(step["log"]).stat().st_size > 0
    assert (run_dir / "logs" / "localhost" / "nodemanager.log").stat().st_size > 0
    assert leftovers(run_dir) == []
