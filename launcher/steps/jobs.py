"""The user's steps run: each job client started, followed and ended, its output read into a :class:`StepResult`.

:class:`StepRunner` runs a :class:`~launcher.steps.commands.ResolvedStep` (the command line and environment built by
:mod:`launcher.steps.commands`) against a running cluster: it claims the step's outputs (:func:`claim_outputs`), starts
the client, reads its progress, ids and error lines from its output, kills it (and its YARN application) at the
deadline or on an error, and publishes the class-data-sharing archives the client and its ApplicationMaster wrote.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from pydantic import BaseModel, Field

from launcher.config.spec import SPARK_KINDS
from launcher.fanout.processes import tied_child
from launcher.plan.cluster_plan import ClusterPlan
from launcher.runtime.cds import am_archive_option, client_archive_flags, publish_am_archives, publish_client_archive
from launcher.steps.commands import ResolvedStep, client_env, kill_command
from launcher.steps.shuffle import ShuffleRecord
from launcher.util.errors import UserError, WalltimeExpired
from launcher.util.polling import poll
from launcher.util.processes import end
from launcher.util.states import StepState

_PROGRESS = re.compile(r"map (\d+)% reduce (\d+)%")
_APP = re.compile(r"Submitted application (application_\d+_\d+)")
_JOB = re.compile(r"Running job: (job_\d+_\d+)")
_UBER = re.compile(r"running in uber mode : (true|false)")
#: The job's REDUCE_SHUFFLE_BYTES in the counters the MapReduce client prints as the job ends (a map-only job has none).
_SHUFFLE_BYTES = re.compile(r"^\s*Reduce shuffle bytes=(\d+)\s*$")
_FAILED = re.compile(r"Job (job_\d+_\d+) failed|Job failed as tasks failed")
#: The JVM's class-data-sharing warnings (``[10.5s][warning][cds] Skipping org/.../FileExistsException: Not
#: linked``), printed as the client exits: never a step's error line, though some name an exception class.
_CDS_WARNING = re.compile(r"^\[\d+\.\d+s\]\[\w+\]\[cds")
#: Spark's scheduler, once per finished task: ``Finished task 3.0 in stage 1.0 (TID 7) in 80 ms on HOST
#: (executor 1) (4/8)``: tasks done of the stage's tasks (the progress of a Spark step).
_SPARK_TASKS = re.compile(r"Finished task \S+ in stage (\d+)\.\d+ .*\((\d+)/(\d+)\)\s*$")
#: Spark's DAGScheduler as a stage starts: ``Submitting 8 missing tasks from ShuffleMapStage 0 (...)``.
_SPARK_STAGE = re.compile(r"Submitting (\d+) missing tasks? from (?:ResultStage|ShuffleMapStage) (\d+) ")
#: ... and as it ends: ``ResultStage 1 (collect at wordcount.py:30) finished in 1140 ms``.
_SPARK_STAGE_DONE = re.compile(r"(?:ResultStage|ShuffleMapStage) (\d+) \(.*\) finished in ")
#: The driver's scheduler backend as an executor registers with it (Spark 4.1.1, client mode: ``INFO
#: YarnSchedulerBackend$YarnDriverEndpoint: Registered executor NettyRpcEndpointRef(spark-client://Executor)
#: (10.0.0.2:60630) with ID 1, ResourceProfileId 0``).
_SPARK_EXECUTOR = re.compile(r"Registered executor .* with ID \S+")


#: :class:`StepResult`'s fields of a Spark step's progress (``None``/0 for any other step).
SPARK_STAGE_FIELDS = ("stage", "stage_tasks", "stage_done", "stages_done")


class StepResult(BaseModel):
    """What happened to a step (goes into ``run.json`` as :class:`launcher.lifecycle.report.StepRecord`, this model's
    fields but ``lines``, plus the last error lines).

    Attributes:
        returncode: the job client's exit code (``None`` if it never ran).
        wall_s: seconds from start to end of the client.
        application_id / job_id: YARN and MapReduce ids, once seen.
        uber: whether the job ran in uber mode.
        map_pct / reduce_pct: the last progress seen (0-100); for a Spark step, ``map_pct`` is the share of the
            current stage's tasks done.
        stage / stage_tasks / stage_done / stages_done: a Spark step's progress, from its driver's scheduler lines in
            the client's output (client mode: the driver is ``spark-submit``): the stage that last started or
            finished a task, its tasks, those done, and how many stages finished (``None``/0 before the first).
        state: :class:`~launcher.util.states.StepState` (``succeeded``, ``failed``, ``killed`` at the end).
        min_free_bytes: the fewest bytes free on the filesystem root while it ran, sampled each second by the
            cluster health check (``None`` when not sampled).
        reduce_shuffle_bytes: the bytes its reducers shuffled (the job's ``Reduce shuffle bytes`` counter, as the
            MapReduce client prints it at the job's end); ``None`` for a map-only job, or when it was not printed.
        executors / executors_wanted: a Spark step's executors registered with its driver so far (its scheduler's
            ``Registered executor`` lines) and those it asked for (``--num-executors`` of its command line,
            :func:`executors_asked`; ``None`` when it names none): what a step that started no stage waits for (issue
            40). Not written into ``run.json``.
        shuffle: for a MapReduce job with reducers that succeeded, which shuffle its reducers used and the bytes they
            read directly from the shared filesystem and over HTTP, in sum and per reducer
            (:func:`launcher.steps.shuffle.step_shuffle`), or ``None``.
        history_error: for a MapReduce job that succeeded but whose history was not kept (its ``.jhist`` never
            reached ``history/done``: :func:`launcher.steps.jobhistory.history_not_kept`), what happened, in one line;
            the step's ``state`` is then ``failed``.
        cause: for a failed step, the first cause line of its failed container's log
            (:class:`launcher.steps.diagnosis.Cause`: ``container``, ``file``, ``line``, ``command`` that shows the
            whole log, ``path`` of the copy under ``steps/`` that holds it), or ``None``.
    """

    name: str
    kind: str
    argv: list[str]
    log: str
    outputs: list[str]
    returncode: int | None = None
    wall_s: float | None = None
    application_id: str | None = None
    job_id: str | None = None
    uber: bool | None = None
    map_pct: int = 0
    reduce_pct: int = 0
    stage: int | None = None
    stage_tasks: int = 0
    stage_done: int = 0
    stages_done: int = 0
    state: StepState = StepState.PENDING
    min_free_bytes: int | None = None
    reduce_shuffle_bytes: int | None = None
    cause: dict[str, str] | None = None
    shuffle: ShuffleRecord | None = None
    history_error: str | None = None
    executors: int = Field(default=0, exclude=True)
    executors_wanted: int | None = Field(default=None, exclude=True)
    lines: list[str] = Field(default_factory=list, repr=False, exclude=True)


def executors_asked(argv: list[str]) -> int | None:
    """The executors a ``spark-submit`` command line asks for: its ``--num-executors N`` (what
    :func:`launcher.render.spark.submit_command` always writes), else a ``--conf spark.executor.instances=N``; ``None``
    when it names neither (or a value that is not a number)."""
    asked: str | None = None
    for i, word in enumerate(argv[:-1]):
        if word == "--num-executors":
            asked = argv[i + 1]
        elif word == "--conf" and argv[i + 1].startswith("spark.executor.instances="):
            asked = argv[i + 1].partition("=")[2]
    return int(asked) if asked is not None and asked.isdigit() else None


def claim_path(output: str) -> Path:
    """The claim of an output directory: ``.<name>.hpc-hadoop-claim`` beside it, naming the run writing it."""
    out = Path(output)
    return out.with_name(f".{out.name}.hpc-hadoop-claim")


def claim_outputs(step: ResolvedStep, cluster_id: str, *, overwrite: bool) -> list[Path]:
    """Claim the step's output directories for this run, atomically, just before it runs: two runs racing for
    one output directory (both passed the check of :func:`~launcher.steps.commands.resolve_steps` before either
    wrote it) must not mix their files. Each claim is a file created with ``O_EXCL`` beside the output
    (:func:`claim_path`); with it held, an output that exists is an error (or, with ``overwrite``, removed). The
    caller removes the claims when the step is over.

    Returns:
        The claim files made.

    Raises:
        UserError: another run holds a claim, or the output exists (without ``overwrite``); claims already made
            are released.
    """
    made: list[Path] = []
    try:
        for out in step.outputs:
            claim = claim_path(out)
            claim.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                holder = _claim_holder(claim)
                raise UserError(f"output {out} already exists: {holder} is writing it", field=f"steps.{step.index}",
                                fix=f"choose another output directory (or remove {claim} if that run is over)"
                                ) from None
            with os.fdopen(fd, "w") as handle:
                handle.write(f"cluster {cluster_id}\n")
            made.append(claim)
            if os.path.lexists(out) and not overwrite:
                raise UserError(f"output {out} already exists", field=f"steps.{step.index}",
                                fix="choose another output directory, or pass --overwrite to replace it")
            if os.path.lexists(out):
                shutil.rmtree(out) if os.path.isdir(out) and not os.path.islink(out) else os.unlink(out)
    except BaseException:
        for claim in made:
            claim.unlink(missing_ok=True)
        raise
    return made


def _claim_holder(claim: Path) -> str:
    """Who holds ``claim`` (its ``cluster <id>`` line), for the refusal; ``another run`` when it cannot say: the
    claim is not written yet (just made by ``O_EXCL``), or is gone already (that run's step ended), or cannot be
    read."""
    try:
        return claim.read_text(errors="replace").strip() or "another run"
    except OSError:
        return "another run"


def _unlink_all(paths: list[Path]) -> None:
    """Remove a step's output claims; one that cannot be removed (its filesystem is gone) stays, and names this run
    to the next one that wants the output (:func:`claim_outputs`)."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            continue


@contextlib.contextmanager
def _close_quietly(handle: IO[bytes]) -> Iterator[None]:
    """Close ``handle`` on the way out, ignoring an ``OSError`` of ``close()`` (the ``with open(...)`` that holds it
    then finds it closed and closes nothing)."""
    try:
        yield
    finally:
        try:
            handle.close()
        except OSError:
            pass


ProgressCallback = Callable[[StepResult], None]
#: Called with a step and one line its program printed on its standard output (a Spark driver's: issue 40).
OutputCallback = Callable[[StepResult, str], None]
#: Seconds between two checks that the cluster is whole while a step runs (reads ``agents/<node>.json``).
HEALTH_SECONDS = 1.0
#: Seconds a killed job client may take to end while the shared filesystem is stalled (a process blocked in a
#: request to a FUSE server that holds it cannot end, even on SIGKILL, until the request is answered).
CLIENT_KILL_WAIT_STALLED = 1.0


def _read_spark_line(result: StepResult, line: str) -> bool:
    """A Spark driver's scheduler line (a stage submitted, a task finished, a stage finished, an executor registered)
    recorded in ``result``'s ``stage`` fields (``executors``); whether it was one."""
    if m := _SPARK_TASKS.search(line):
        result.stage, result.stage_done, result.stage_tasks = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := _SPARK_STAGE.search(line):
        result.stage, result.stage_done, result.stage_tasks = int(m.group(2)), 0, int(m.group(1))
    elif m := _SPARK_STAGE_DONE.search(line):
        result.stages_done += 1
        if result.stage == int(m.group(1)):
            result.stage_done = result.stage_tasks
    elif _SPARK_EXECUTOR.search(line):
        result.executors += 1
        return True
    else:
        return False
    result.map_pct = 100 * result.stage_done // max(1, result.stage_tasks)
    return True


def _read_client_line(result: StepResult, line: str) -> bool:
    """What one line of a job client's output says, recorded in ``result``: progress (``map N% reduce M%``, a Spark
    stage's tasks), the application and job ids, uber mode, the shuffle's bytes, and error lines (the last 20 kept).
    Returns whether the progress shown changed."""
    changed = False
    if m := _PROGRESS.search(line):
        result.map_pct, result.reduce_pct = int(m.group(1)), int(m.group(2))
        changed = True
    elif result.kind in SPARK_KINDS and _read_spark_line(result, line):
        changed = True
    elif m := _APP.search(line):
        result.application_id, changed = m.group(1), True
    elif m := _JOB.search(line):
        result.job_id, changed = m.group(1), True
    elif m := _UBER.search(line):
        result.uber, changed = m.group(1) == "true", True
    elif m := _SHUFFLE_BYTES.search(line):
        result.reduce_shuffle_bytes = int(m.group(1))
    if ("ERROR" in line or "Exception" in line or _FAILED.search(line)) and not _CDS_WARNING.match(line):
        result.lines.append(line)
        del result.lines[:-20]
    return changed


class StepRunner:
    """Runs resolved steps against a running cluster and follows their progress.

    A Spark step's client (``spark-submit``, the driver in client mode) has its standard output and its standard error
    read apart (issue 40): what the program prints (a PySpark script's ``print``, SparkPi's ``Pi is roughly``; PySpark
    passes its Python driver's output on to the JVM's) is on its standard output, Spark's log4j records on its
    standard error (Spark's default log4j2 configuration, which ``spark-conf/`` keeps). Each line of the first goes to
    ``on_output`` as well; both go into the step log, and both are read for progress. Any other client's two streams
    are one (its log only).

    Args:
        plan: the cluster plan.
        on_progress: called (from a reader thread) whenever progress, ids or state change.
        on_output: called (from a reader thread) with each line a Spark step's program printed on its standard output.
        stalled: true while the shared filesystem is stalled (:meth:`launcher.lifecycle.health.Health.stalled`): a
        step
            killed then neither asks YARN to kill its application (the client reads ``conf/`` from the stalled
            filesystem; teardown stops the ResourceManager anyway) nor waits to remove its output claims.
        gone: true once the shared filesystem is gone (its mount answers ``ENOTCONN``): a step killed then does not
            ask YARN to kill its application either (that client, which reads ``conf/`` from the mount, waited out
            its 30 s; teardown stops the ResourceManager anyway).
    """

    def __init__(self, plan: ClusterPlan, on_progress: ProgressCallback | None = None,
                 stalled: Callable[[], object] | None = None, gone: Callable[[], object] | None = None,
                 on_output: OutputCallback | None = None) -> None:
        self.plan = plan
        self.on_progress = on_progress or (lambda result: None)
        self.on_output = on_output or (lambda result, line: None)
        self.log_lock = threading.Lock()  # a Spark client's two readers write into one step log
        self.stalled = stalled or (lambda: None)
        self.gone = gone or (lambda: None)
        self.proc: subprocess.Popen[bytes] | None = None
        self.group = False
        self.current: StepResult | None = None

    def _follow(self, result: StepResult, stream: object, log: object, *, echo: bool = False) -> None:
        """Read one output stream of the client to its end: each line into the step log (``log``; a write that fails
        stops the logging, not the reading), read for progress, and, when ``echo``, passed to ``on_output``."""
        logging = True
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            line = raw.decode(errors="replace").rstrip()
            if logging:
                try:
                    with self.log_lock:
                        log.write(raw)  # type: ignore[attr-defined]
                except OSError as err:  # a full filesystem: keep reading, or the client blocks on its pipe
                    logging = False
                    result.lines.append(f"(the step log {result.log} stopped here: {err.strerror})")
            if echo:
                self.on_output(result, line)
            if _read_client_line(result, line):
                self.on_progress(result)

    def run(self, step: ResolvedStep, *, overwrite: bool = False, deadline: float | None = None,
            health: Callable[[], None] | None = None) -> StepResult:
        """Run one step to its end (or to ``deadline``, epoch seconds, when it is killed).

        Args:
            health: called every :data:`HEALTH_SECONDS` while the client runs; raises when the cluster is no
                longer whole (:meth:`launcher.cluster.cluster.Cluster.raise_if_failed`: a daemon died), so that a step
                whose ResourceManager is gone fails in seconds instead of retrying for many minutes.

        A KeyboardInterrupt or other exception while it runs (the deadline: :class:`WalltimeExpired`; ``health``'s
        error) kills the client and the YARN application and is re-raised.
        """
        claims = claim_outputs(step, self.plan.cluster_id, overwrite=overwrite)
        try:
            return self._run(step, deadline, health)
        finally:
            release = threading.Thread(target=_unlink_all, args=(claims,), name="release-claims", daemon=True)
            release.start()
            if not self.stalled():  # on a stalled filesystem, teardown first: the claims go when it answers
                release.join()

    def _run(self, step: ResolvedStep, deadline: float | None, health: Callable[[], None] | None) -> StepResult:
        """:meth:`run` once the outputs are claimed."""
        result = StepResult(name=step.name, kind=step.kind, argv=step.argv, log=str(step.log),
                            outputs=list(step.outputs), state=StepState.RUNNING,
                            executors_wanted=executors_asked(step.argv) if step.kind in SPARK_KINDS else None)
        self.current = result
        step.log.parent.mkdir(parents=True, exist_ok=True)
        began = time.time()
        spark = step.kind in SPARK_KINDS
        env = client_env(self.plan, step.kind)
        argv = self.with_archive(step.argv)  # spark-submit's argv as it is
        # Unbuffered: a full filesystem fails a write, not close(); what close() says (ENOTCONN when the filesystem is
        # gone: the run finds that out itself) must not hide the step's end or the error that ended it.
        with open(step.log, "ab", buffering=0) as log, _close_quietly(log):
            log.write(f"$ {' '.join(step.argv)}\n".encode())
            # spark-submit in a process group of its own (in our session, which the batch system's kill reaches): a
            # PySpark driver is a Python child of its JVM, and both must end when the step is killed (:meth:`kill`
            # signals the group). Every client gets SIGTERM if this process dies, SIGKILL included (the thread that
            # starts it waits for it): a killed launcher leaves no job client behind on the local backend either.
            self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE if spark else subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.plan.run_dir,
                                         preexec_fn=tied_child(os.getpid(), True, own_group=spark))
            self.group = spark
            readers = [threading.Thread(target=self._follow, args=(result, self.proc.stdout, log),
                                        kwargs={"echo": spark}, daemon=True)]
            if spark:  # Spark's log4j records: the log only
                readers.append(threading.Thread(target=self._follow, args=(result, self.proc.stderr, log), daemon=True))
            for reader in readers:
                reader.start()
            try:
                self._wait(deadline, health)
            except BaseException:
                self.kill(result)
                result.wall_s = time.time() - began
                raise
            finally:
                for reader in readers:
                    reader.join(timeout=5)
        result.returncode = self.proc.returncode
        result.wall_s = time.time() - began
        publish_client_archive(argv, result.returncode)
        result.state = StepState.SUCCEEDED if result.returncode == 0 else StepState.FAILED
        self.on_progress(result)
        return result

    def with_archive(self, argv: list[str]) -> list[str]:
        """``argv`` with the class-data-sharing flags after ``java`` when ``hadoop.class_data_sharing`` is on and
        ``argv`` runs the runtime's ``java``: the job client's own (:func:`launcher.runtime.cds.client_archive_flags`)
        and its ApplicationMaster's (``-Dhpc.am.cds``, which ``mapred-site.xml`` puts into the AM's command:
        :func:`launcher.runtime.cds.am_archive_option`), after publishing an archive an earlier AM wrote
        (:func:`launcher.runtime.cds.publish_am_archives`). The step log and ``render`` show the command without
        them."""
        runtime = self.plan.runtime
        if not self.plan.spec.hadoop.class_data_sharing or not argv or argv[0] != runtime.java:
            return argv
        publish_am_archives(runtime)
        am_option = am_archive_option(runtime, self.plan.cluster_id)
        return [argv[0], *client_archive_flags(runtime, argv), f"-Dhpc.am.cds={am_option}", *argv[1:]]

    def _wait(self, deadline: float | None, health: Callable[[], None] | None) -> None:
        """Wait for the client to exit, checking the deadline every 0.1 s and ``health`` every
        :data:`HEALTH_SECONDS`.

        Raises:
            WalltimeExpired: ``deadline`` passed.
        """
        proc = self.proc
        assert proc is not None
        checked = [time.monotonic()]

        def probe() -> int | None:  # the client's exit code, None while it runs
            code = proc.poll()
            if code is not None:
                return code
            if deadline is not None and time.time() >= deadline:
                raise WalltimeExpired(deadline)
            if health is not None and time.monotonic() - checked[0] >= HEALTH_SECONDS:
                health()
                checked[0] = time.monotonic()
            return None

        poll(probe, done=lambda code: code is not None, interval=0.1, backoff=1.0)

    def kill(self, result: StepResult) -> None:
        """Kill the job client (SIGTERM, SIGKILL 5 s later) and, if it was submitted, its YARN application (``yarn
        application -kill``). While the shared filesystem is stalled (``stalled``): SIGKILL at once, waiting at most
        :data:`CLIENT_KILL_WAIT_STALLED` for it to end, and no ``yarn application -kill``; once it is gone (``gone``):
        no ``yarn application -kill``."""
        result.state = StepState.KILLED
        stalled = self.stalled()
        if self.proc is not None:
            # a process waiting on a stalled filesystem ends only when it answers: teardown first
            ended = end([self.proc], signum=None if stalled else signal.SIGTERM, grace=5.0, group=self.group,
                        kill_wait=CLIENT_KILL_WAIT_STALLED if stalled else None)
            if ended.left:
                result.lines.append(f"(the job client, pid {self.proc.pid}, waits on the stalled shared "
                                    "filesystem: it ends when the filesystem answers)")
        result.returncode = self.proc.returncode if self.proc else None
        unreachable = "stalled" if self.stalled() else "gone" if self.gone() else None
        if result.application_id and unreachable:
            result.lines.append(f"(YARN was not asked to kill {result.application_id}: the shared filesystem is "
                                f"{unreachable}; the ResourceManager's end at teardown ends it)")
        elif result.application_id:
            try:
                subprocess.run(kill_command(self.plan, result.application_id), env=client_env(self.plan),
                               capture_output=True, timeout=30, check=False)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.on_progress(result)
