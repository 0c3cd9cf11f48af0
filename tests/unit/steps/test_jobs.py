"""A step's job client run and followed: its output read, its outputs claimed (launcher/steps/jobs.py)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.steps.commands import ResolvedStep
from launcher.steps.jobs import (
    StepResult,
    StepRunner,
    _read_client_line,
    claim_outputs,
    claim_path,
)
from launcher.util.errors import UserError

# The end of a real MapReduce client's output (Hadoop 3.4.2's TeraSort, two reducers; TeraGen, map-only), trimmed.
CLIENT_WITH_REDUCERS = """\
2026-11-25 19:07:03,114 INFO mapreduce.Job: Running job: job_1764097600000_0002
2026-11-25 19:07:07,402 INFO mapreduce.Job: Job job_1764097600000_0002 running in uber mode : false
2026-11-25 19:07:07,403 INFO mapreduce.Job:  map 0% reduce 0%
2026-11-25 19:07:15,621 INFO mapreduce.Job:  map 100% reduce 100%
2026-11-25 19:07:15,633 INFO mapreduce.Job: Job job_1764097600000_0002 completed successfully
2026-11-25 19:07:15,702 INFO mapreduce.Job: Counters: 54
\tMap-Reduce Framework
\t\tMap output materialized bytes=10400048
\t\tReduce shuffle bytes=10400048
\t\tReduce input records=100000
"""
CLIENT_MAP_ONLY = """\
2026-11-25 19:06:58,210 INFO mapreduce.Job: Running job: job_1764097600000_0001
2026-11-25 19:07:01,932 INFO mapreduce.Job:  map 100% reduce 0%
2026-11-25 19:07:01,944 INFO mapreduce.Job: Counters: 33
\tMap-Reduce Framework
\t\tMap input records=100000
\t\tMap output records=100000
"""


@pytest.mark.parametrize(("output", "shuffled"), [(CLIENT_WITH_REDUCERS, 10400048), (CLIENT_MAP_ONLY, None)])
def test_the_client_output_says_whether_reducers_shuffled(output: str, shuffled: int | None, tmp_path: Path) -> None:
    """The runner reads a step's .jhist for its shuffle figures only when the client printed a ``Reduce shuffle
    bytes`` counter: a map-only job (TeraGen, TestDFSIO's writes) never waits for its history file."""
    result = StepResult(name="s", kind="jar", argv=[], log=str(tmp_path / "log"), outputs=[])
    runner = StepRunner(None)  # type: ignore[arg-type]  # _follow reads only the stream
    with open(tmp_path / "log", "wb") as log:
        runner._follow(result, io.BytesIO(output.encode()), log)
    assert result.job_id and result.job_id.startswith("job_1764097600000_000")
    assert result.reduce_shuffle_bytes == shuffled


# -- issue 13 item 8, folded from tests/unit/test_claims.py: Two runs racing for one output directory (issue
# 13 item 8): the claim taken just before a step runs lets exactly one of them write it (the end-to-end race is
# in tests/integration/test_faults.py).


def step(tmp_path: Path, *outputs: Path) -> ResolvedStep:
    return ResolvedStep(index=2, name="wc", kind="example", argv=["true"], inputs=(),
                        outputs=tuple(str(o) for o in outputs), log=tmp_path / "steps" / "02-wc.log")


def test_a_second_claim_on_the_same_output_is_the_existing_output_error(tmp_path: Path) -> None:
    """Issue 13 item 8 (was ``tests/unit/test_claims.py``)."""
    out = tmp_path / "shared" / "out"
    first = claim_outputs(step(tmp_path, out), "run-a", overwrite=False)
    assert first == [claim_path(str(out))] and "run-a" in first[0].read_text()
    with pytest.raises(UserError, match="already exists: cluster run-a is writing it") as info:
        claim_outputs(step(tmp_path, out), "run-b", overwrite=True)  # not even --overwrite takes it
    assert info.value.field == "steps.2"
    assert first[0].read_text() == "cluster run-a\n"  # the holder's claim is untouched


def test_a_claim_not_yet_written_or_gone_on_the_way_still_refuses_naming_another_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs reach their step together: the holder's ``O_EXCL`` made the claim but has not written its line yet,
    or its step ended and removed it between our ``O_EXCL`` and our read. Either way the refusal (exit 2) names
    "another run"; never an empty name, never the ``FileNotFoundError`` of the read."""
    out = tmp_path / "out"
    claim = claim_path(str(out))
    claim.touch()  # made, not written yet
    with pytest.raises(UserError, match=f"output {out} already exists: another run is writing it"):
        claim_outputs(step(tmp_path, out), "run-b", overwrite=False)
    real_open = os.open

    def holder_ends_meanwhile(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        try:
            return real_open(path, flags, mode)
        except FileExistsError:
            claim.unlink()  # the holder's step ended just after our O_EXCL
            raise

    monkeypatch.setattr(os, "open", holder_ends_meanwhile)
    with pytest.raises(UserError, match=f"output {out} already exists: another run is writing it"):
        claim_outputs(step(tmp_path, out), "run-b", overwrite=False)


def test_an_output_written_meanwhile_is_refused_and_every_claim_released(tmp_path: Path) -> None:
    """Issue 13 item 8 (was ``tests/unit/test_claims.py``)."""
    free, written = tmp_path / "free", tmp_path / "written"
    written.mkdir()
    (written / "part-r-00000").write_text("kept\n")
    with pytest.raises(UserError, match=f"output {written} already exists"):
        claim_outputs(step(tmp_path, free, written), "run-b", overwrite=False)
    assert not claim_path(str(free)).exists() and not claim_path(str(written)).exists()
    assert (written / "part-r-00000").read_text() == "kept\n"


def test_overwrite_removes_the_old_output_once_claimed(tmp_path: Path) -> None:
    """Issue 13 item 8 (was ``tests/unit/test_claims.py``)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "old").write_text("x")
    claims = claim_outputs(step(tmp_path, out), "run-a", overwrite=True)
    assert not out.exists() and claims[0].exists()


# -- issue 28 item 2: a Spark step's progress in stages and tasks, not ``map 50%``.

#: The client output of a real Spark 4.1.1 step (spark-kmeans on the local backend, tests/integration/test_spark.py's
#: bench; client mode: the driver's scheduler lines are spark-submit's own output), lines kept in order.
SPARK_KMEANS_LINES = """\
26/11/27 10:23:54 INFO Client: Submitting application application_1795775030773_0001 to ResourceManager
26/11/27 10:23:54 INFO YarnClientImpl: Submitted application application_1795775030773_0001
26/11/27 10:24:02 INFO DAGScheduler: Final stage: ResultStage 0 (takeSample at KMeans.scala:383)
26/11/27 10:24:02 INFO DAGScheduler: Submitting ResultStage 0 (MapPartitionsRDD[7] at map at KMeans.scala:224), \
which has no missing parents
26/11/27 10:24:02 INFO DAGScheduler: Submitting 2 missing tasks from ResultStage 0 (MapPartitionsRDD[7] at map at \
KMeans.scala:224) (first 15 tasks are for partitions Vector(0, 1))
26/11/27 10:24:02 INFO TaskSetManager: Starting task 0.0 in stage 0.0 (TID 0) (localhost,executor 1, partition 0, \
PROCESS_LOCAL, 10495 bytes)
26/11/27 10:24:03 INFO TaskSetManager: Finished task 0.0 in stage 0.0 (TID 0) in 1046 ms on localhost (executor 1) (1/2)
26/11/27 10:24:03 INFO TaskSetManager: Finished task 1.0 in stage 0.0 (TID 1) in 1034 ms on localhost (executor 1) (2/2)
26/11/27 10:24:03 INFO DAGScheduler: ResultStage 0 (takeSample at KMeans.scala:383) finished in 1140 ms
26/11/27 10:24:03 INFO YarnScheduler: Killing all running tasks in stage 0: Stage finished
26/11/27 10:24:03 INFO DAGScheduler: Job 0 finished: takeSample at KMeans.scala:383, took 1189.391501 ms
26/11/27 10:24:03 INFO DAGScheduler: Submitting 2 missing tasks from ResultStage 1 (PartitionwiseSampledRDD[8] at \
takeSample at KMeans.scala:383) (first 15 tasks are for partitions Vector(0, 1))
26/11/27 10:24:03 INFO TaskSetManager: Finished task 0.0 in stage 1.0 (TID 2) in 124 ms on localhost (executor 1) (1/2)
""".splitlines()


def test_a_spark_steps_progress_is_read_in_stages_and_tasks() -> None:
    """Issue 28 item 2: a Spark step showed ``map 50% reduce 0%``; its stage and tasks are read from the driver's
    scheduler lines (recorded from a real run), each stage change and finished task a change."""
    result = StepResult(name="kmeans", kind="spark", argv=[], log="1.log", outputs=[])
    seen = []
    for line in SPARK_KMEANS_LINES:
        if _read_client_line(result, line):
            seen.append((result.stage, result.stage_done, result.stage_tasks, result.stages_done))
    assert result.application_id == "application_1795775030773_0001"
    assert seen == [(None, 0, 0, 0), (0, 0, 2, 0), (0, 1, 2, 0), (0, 2, 2, 0), (0, 2, 2, 1), (1, 0, 2, 1),
                    (1, 1, 2, 1)]
    assert result.map_pct == 50 and result.reduce_pct == 0
    mapreduce = StepResult(name="wc", kind="example", argv=[], log="2.log", outputs=[])
    assert not _read_client_line(mapreduce, SPARK_KMEANS_LINES[6]) and mapreduce.stage is None


def test_the_jvms_cds_warnings_are_never_a_steps_error_line(tmp_path: Path) -> None:
    """Issue 28 item 1: a failed streaming step's error line quoted `[10.486s][warning][cds] Skipping
    org/apache/commons/io/FileExistsException: Not linked` (printed as the client JVM exits) as its last error."""
    result = StepResult(name="s", kind="streaming", argv=[], log=str(tmp_path / "log"), outputs=[])
    for line in ("26/11/27 11:38:05 ERROR streaming.StreamJob: Job not successful!",
                 "[10.486s][warning][cds] Skipping org/apache/commons/io/FileExistsException: Not linked"):
        _read_client_line(result, line)
    assert result.lines == ["26/11/27 11:38:05 ERROR streaming.StreamJob: Job not successful!"]


#: The driver's lines of a real Spark 4.1.1 step (spark-kmeans of test_bench.py's tiny sweep on the local backend,
#: ``--num-executors 1``; spark-submit's output, client mode), from its submission to its first stage, trimmed.
SPARK_EXECUTOR_LINES = """\
26/12/02 13:16:17 INFO YarnClientImpl: Submitted application application_1796217276586_0023
26/12/02 13:16:21 INFO ServerInfo: Adding filter to /executors: org.apache.spark.deploy.yarn.AmIpFilter
26/12/02 13:16:23 INFO YarnSchedulerBackend$YarnDriverEndpoint: Registered executor \
NettyRpcEndpointRef(spark-client://Executor) (127.0.0.1:60630) with ID 1, ResourceProfileId 0
26/12/02 13:16:23 INFO YarnClientSchedulerBackend: SchedulerBackend is ready for scheduling beginning after reached \
minRegisteredResourcesRatio: 0.8
26/12/02 13:16:24 INFO DAGScheduler: Submitting 2 missing tasks from ResultStage 0 (MapPartitionsRDD[7] at map at \
KMeans.scala:224) (first 15 tasks are for partitions Vector(0, 1))
""".splitlines()


def _details(result: StepResult, lines: list[str]) -> list[str]:
    from launcher.lifecycle.progress import step_detail

    return [step_detail(result)[0] for line in lines if _read_client_line(result, line)]


def test_a_spark_step_before_its_first_stage_says_it_waits_for_executors() -> None:
    """Issue 40: a Spark step showed ``no stage started yet`` for a minute while its executors started: the executors
    it asked for (``--num-executors`` of its command line) and those registered with the driver so far."""
    from launcher.lifecycle.progress import step_detail
    from launcher.steps.jobs import executors_asked

    argv = ["spark-submit", "--master", "yarn", "--num-executors", "1", "--executor-cores", "2", "x.py"]
    assert executors_asked(argv) == 1
    assert executors_asked(["spark-submit", "--conf", "spark.executor.instances=3", "x.py"]) == 3
    assert executors_asked(["spark-submit", "x.py"]) is None
    result = StepResult(name="kmeans", kind="spark", argv=argv, log="1.log", outputs=[], state="running",
                        executors_wanted=executors_asked(argv))
    assert step_detail(result)[0] == "no stage started yet"  # not at YARN yet: no executor asked for
    app = "application_1796217276586_0023"
    assert _details(result, SPARK_EXECUTOR_LINES) == [f"waiting for executors: 0/1  {app}",
                                                      f"no stage started yet  {app}", f"stage 0: 0/2 tasks  {app}"]
    assert "executors" not in result.model_dump()  # progress only: run.json keeps its keys
    # Two asked for (the 3-node Slurm cluster's Spark steps): the same recorded line, registered once, is 1/2.
    two = StepResult(name="wc", kind="pyspark", argv=[], log="2.log", outputs=[], state="running", executors_wanted=2)
    assert _details(two, SPARK_EXECUTOR_LINES[:3]) == [f"waiting for executors: 0/2  {app}",
                                                       f"waiting for executors: 1/2  {app}"]


# -- issue 40: a PySpark script's own print reaches the terminal, Spark's log4j records only the step log.


def test_a_spark_clients_printed_lines_reach_the_terminal_and_its_log_records_only_its_log(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan], spark_home: Path,
        tmp_path: Path) -> None:
    """A Spark step's client writes what its program prints on its standard output, Spark's log4j records on its
    standard error (here a shell script in spark-submit's place, writing both as Spark 4.1.1 does): the printed lines
    go to ``on_output``, everything into the step log, and the log4j records are still read for progress."""
    from launcher.lifecycle.progress import ConsoleObserver

    (tmp_path / "wc.py").write_text("print('hi')\n")
    plan = make_test_plan(make_spec(spark={"home": str(spark_home)},
                                    steps=[{"pyspark": {"script": str(tmp_path / "wc.py")}}]))
    Path(plan.run_dir).mkdir(parents=True)
    client = ("echo '26/12/02 15:00:01 INFO YarnClientImpl: Submitted application application_1_0001' >&2; "
              "echo 'the 3 most common words: the, of, a'; "
              "echo '26/12/02 15:00:09 INFO DAGScheduler: Job 1 finished: collect at wc.py:9, took 80 ms' >&2; "
              "echo 'wrote 42 words'")
    step = ResolvedStep(index=1, name="wc", kind="pyspark", argv=["sh", "-c", client], inputs=(), outputs=(),
                        log=tmp_path / "steps" / "01-wc.log")
    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, width=200))
    result = StepRunner(plan, observer.progress, on_output=observer.output).run(step)
    observer.close()
    assert result.returncode == 0 and result.application_id == "application_1_0001"
    terminal = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert [line for line in terminal if line.startswith("wc> ")] == ["wc> the 3 most common words: the, of, a",
                                                                     "wc> wrote 42 words"], terminal
    assert not [line for line in terminal if " INFO " in line], terminal
    log = step.log.read_text()
    assert "INFO DAGScheduler: Job 1 finished" in log and "wrote 42 words" in log


def test_a_steps_printed_lines_on_the_terminal_stop_after_a_few_hundred() -> None:
    """The terminal shows at most ``OUTPUT_LINES`` lines of a step's own output, then one line naming its log."""
    from launcher.lifecycle.progress import ConsoleObserver

    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, width=200))
    result = StepResult(name="wc", kind="pyspark", argv=[], log="/r/steps/01-wc.log", outputs=[])
    for n in range(ConsoleObserver.OUTPUT_LINES + 50):
        observer.output(result, f"line {n}")
    observer.close()
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert len(lines) == ConsoleObserver.OUTPUT_LINES + 1 and lines[0] == "wc> line 0"
    assert lines[-1] == "wc> ... (the rest of what it prints: /r/steps/01-wc.log)"
