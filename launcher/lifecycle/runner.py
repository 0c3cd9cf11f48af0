"""One run from end to end: plan → files → daemons → steps → teardown → report.

:func:`prepare` checks and plans, :func:`materialize` writes the cluster directory, :class:`ClusterRun` is the
cluster's life cycle (up → steps → down) that ``submit``, ``run``, ``start`` (:func:`execute`) and ``bench``
(:mod:`benchmarks.harness`) share. Teardown happens whatever ends the run: success, a failed step, a failed
bring-up, Ctrl-C (SIGINT), SIGTERM, SIGHUP, the walltime warning (SIGUSR1) or our own walltime deadline.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import httpx

from launcher.cluster.cluster import Cluster
from launcher.cluster.watch import Stall
from launcher.config.spec import JobSpec
from launcher.filesystems import (
    GONE_ERRNOS,
    NOT_APPLICABLE,
    StripeOutcome,
    check_shared_root,
    decide,
    filesystem_of,
    free_bytes,
    full_filesystem,
    gone,
    report_section,
)
from launcher.filesystems.pathlength import check_path_lengths
from launcher.lifecycle.interactive import STOP_FILE, register
from launcher.lifecycle.report import (
    LostNodeRecord,
    PortRecord,
    RunReport,
    StallRecord,
    StepRecord,
    release_room,
    reserve_room,
)
from launcher.plan.cluster_plan import ClusterPlan, make_plan, naming_job_file
from launcher.render.clients import write_wrappers
from launcher.render.config import render_config, write_files, write_private
from launcher.render.spark import conf_dir as spark_conf_dir
from launcher.render.spark import uses_spark, write_spark_conf
from launcher.runtime.cds import publish_am_archives
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.schedulers.allocation import Allocation
from launcher.schedulers.base import teardown_lead
from launcher.steps import shuffle
from launcher.steps.diagnosis import diagnose
from launcher.steps.jobhistory import history_not_kept
from launcher.steps.jobs import (
    RUN_JAR,
    ResolvedStep,
    StepResult,
    StepRunner,
    check_step_inputs,
    client_step,
    resolve_steps,
    setup_commands,
    spark_step,
)
from launcher.util.errors import (
    ClusterError,
    FilesystemLost,
    HpcHadoopError,
    StopRequested,
    UserError,
    WalltimeExpired,
)
from launcher.util.polling import poll
from launcher.util.processes import end
from launcher.util.states import RunState, StepState

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)


class Interrupted(BaseException):
    """A signal asked us to stop (SIGUSR1 is the batch system's walltime warning)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Observer:
    """What the runner tells the terminal; the CLI subclasses it with a rich progress display."""

    def phase(self, text: str) -> None:
        """A new phase began (``bring-up``, ``step 1/3 wordcount``, ``teardown``)."""

    def progress(self, result: StepResult) -> None:
        """A step's progress, ids or state changed (called from a reader thread)."""

    def warn(self, text: str) -> None:
        """Something the user should know now (the shared filesystem stalled)."""

    def close(self) -> None:
        """The run is over."""


def prepare(spec: JobSpec, allocation: Allocation, *, overwrite: bool = False, job_file: str = "job file",
            runtime: HadoopRuntime | None = None, run_dir: Path | None = None,
            probe: bool = True) -> tuple[ClusterPlan, list[ResolvedStep]]:
    """Validate everything that can be validated before anything starts, and make the plan: the Hadoop runtime
    (:func:`launcher.runtime.hadoop.discover` runs ``java -version``), the filesystem decision
    (:func:`launcher.filesystems.decide`; with ``probe`` it tries ``flock`` in the root), the plan (which checks
    that its port block binds) and the resolved steps. Writes nothing but ``flock``'s temporary file.

    Raises:
        UserError: missing Java/Hadoop, bad root (one the nodes do not share:
        :func:`launcher.filesystems.check_shared_root`;
            one too deep for the paths a run makes: :func:`launcher.filesystems.pathlength.check_path_lengths`),
            existing outputs, missing jars or inputs, memory too small.
    """
    runtime = runtime or discover(spec.hadoop.home, spec.hadoop.java_home)
    with naming_job_file(job_file):
        check_shared_root(spec, allocation)
        filesystem = decide(spec.filesystem, check_flock=probe and not allocation.preview)
    plan = make_plan(spec, allocation, runtime, filesystem=filesystem, cluster_id=run_dir.name if run_dir else None,
                     run_dir=run_dir, job_file=job_file)
    with naming_job_file(job_file):
        check_path_lengths(plan)
    steps = resolve_steps(spec, plan, overwrite=overwrite, job_file=job_file, check_inputs=not spec.setup)
    return plan, steps


def run_setup(plan: ClusterPlan, steps: list[ResolvedStep], job_file: str = "job file") -> None:
    """Run the job file's ``setup:`` lines (bash, in the cluster directory), then check the steps' inputs.

    Output goes to ``steps/00-setup.log``.

    Raises:
        UserError: a setup line failed (names the line and the log), or an input is still missing.
    """
    spec = plan.spec
    lines = setup_commands(spec, plan)
    log = plan.path("steps", "00-setup.log")
    for index, line in enumerate(lines, start=1):
        with open(log, "ab") as out:
            out.write(f"$ {line}\n".encode())
            out.flush()
            code = subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=plan.run_dir, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False).returncode
        if code != 0:
            raise UserError(f"setup line failed with exit code {code}: {line}", file=job_file,
                            field=f"setup.{index}", fix=f"read {log}")
    check_step_inputs(steps, job_file)


def prepare_filesystem(plan: ClusterPlan, report: RunReport) -> None:
    """Stripe the cluster's directories with the filesystem the plan chose (before bring-up).

    Input, output, staging and scratch (each node's NodeManager local dir) get ``filesystem.striping.<role>``;
    the outcome of every directory goes into ``report.filesystem`` as it happens: applied (with the layout
    read back and the one a new file really gets), "striping not applicable" (with why), "not restriped: holds
    data" (input), "not requested", or failed. Where layouts can be neither set nor read and nothing is asked
    (``plan.filesystem.striping_error``), a note says so and the run goes on.

    Raises:
        UserError: a setting the filesystem cannot honour.
        CommandError: a striping command failed (``lfs``, ``setfattr``...).
    """
    fs_spec = plan.spec.filesystem
    fs = filesystem_of(plan.filesystem)
    stripes = fs_spec.striping
    dirs = plan.striped_dirs()
    done: list[StripeOutcome] = []
    requested: Callable[[Any], dict[str, int | None]] = lambda s: {"count": s.count, "size": s.size,  # noqa: E731
                                                                    "index": s.index}
    if fs_spec.mode == "hdfs":
        done.append(StripeOutcome("staging", f"hdfs://{plan.master.address}:{plan.ports.nn}{plan.path('staging')}",
                                  NOT_APPLICABLE, requested(stripes.staging),
                                  reason="filesystem.mode hdfs: staging is on HDFS (blocks in hdfs/data/<host>)"))
    done += [StripeOutcome("scratch", node.nm_local_dir, NOT_APPLICABLE, requested(stripes.scratch),
                           reason="node-local storage (each node's working directory, or filesystem.local_dirs), "
                                  "not the shared filesystem")
             for node in plan.nodemanagers if not Path(node.nm_local_dir).is_relative_to(plan.run_dir)]
    report.filesystem = report_section(plan.filesystem, fs, fs_spec.mode, done)
    unusable = plan.filesystem.striping_error
    if unusable:
        report.notes.append(f"stripe layouts can be neither set nor read on {plan.filesystem.label} "
                            f"({unusable}); nothing was asked, so the run goes on without them")
    for role, paths in dirs.items():
        setting = getattr(stripes, role)
        for path in paths:
            try:
                outcome = fs.stripe(role, path, setting, keep_data=role == "input", unusable=unusable)
            except HpcHadoopError as exc:
                report.filesystem["directories"].append({"role": role, "path": str(path), "status": "failed",
                                                         "requested": requested(setting), "reason": str(exc)})
                report.write()
                raise
            report.filesystem["directories"].append(outcome.to_dict())
    report.write()


def wait_hdfs(plan: ClusterPlan, cluster: Cluster, timeout: float = 120.0) -> float:
    """Wait until every planned DataNode is live at the NameNode and it is out of safe mode (``hdfs`` mode).

    Polls the NameNode's ``/jmx`` (``FSNamesystemState.NumLiveDataNodes``, ``NameNodeInfo.Safemode``).

    Returns:
        Seconds waited.

    Raises:
        ClusterError: a daemon died or ``timeout`` passed; names the NameNode log.
    """
    expected = sum("datanode" in n.roles for n in plan.nodes)
    url = f"http://{plan.master.address}:{plan.ports.nn_web}/jmx"
    began = time.monotonic()
    with httpx.Client(timeout=2.0, trust_env=False) as http:
        def probe() -> tuple[int, str]:  # (live DataNodes, safe mode text: "" when off); raises if a daemon died
            cluster.raise_if_failed()
            try:
                state = http.get(url, params={"qry": "Hadoop:service=NameNode,name=FSNamesystemState"}).json()
                info = http.get(url, params={"qry": "Hadoop:service=NameNode,name=NameNodeInfo"}).json()
                return int(state["beans"][0]["NumLiveDataNodes"]), info["beans"][0].get("Safemode", "")
            except (httpx.HTTPError, ValueError, KeyError, IndexError):
                return 0, "unknown"

        polled = poll(probe, done=lambda v: v[0] >= expected and not v[1], interval=0.2, backoff=1.0,
                      timeout=timeout)
    if polled.done:
        return time.monotonic() - began
    live, safemode = polled.value
    log = Path(plan.master.log_dir) / "namenode.log"
    raise ClusterError(f"{live} of {expected} DataNodes live (safe mode: {safemode or 'off'}) after {timeout:.0f} s; "
                       f"read {log} and logs/<host>/datanode.log")


def made_for_hadoop(plan: ClusterPlan) -> tuple[str, ...]:
    """Directories of the cluster directory that Hadoop would create with the sticky bit (mode 1777), made by us
    beforehand with mode 0700, so that no run needs a sticky bit (OrangeFS has none: ``chmod`` fails with EINVAL).

    Hadoop 3.4.2 creates ``mapreduce.jobhistory.intermediate-done-dir`` with the fixed mode 1777
    (``JobHistoryUtils.HISTORY_INTERMEDIATE_DONE_DIR_PERMISSIONS``, no key changes it), in the JobHistoryServer
    (``HistoryFileManager.mkdir``) and in each ApplicationMaster (``JobHistoryEventHandler.mkdir``); both skip a
    directory that exists. (``yarn.nodemanager.remote-app-log-dir`` is ``app-logs/``, which :func:`materialize`
    makes anyway: Hadoop's ``LogAggregationFileController`` would make it 1777 or, where it exists, ``chmod`` a
    ``.permission_check`` file in it to 1777 in each NodeManager; the controller we configure,
    :data:`launcher.render.config.LOG_AGGREGATION_CONTROLLER`, does neither.)
    A cluster directory belongs to one user, so 0700 is all they need. In ``hdfs`` mode history is on HDFS.

    Returns:
        Paths relative to the cluster directory, parents first.
    """
    if plan.spec.filesystem.mode == "hdfs":
        return ()
    return ("history/done", "history/intermediate")


def materialize(plan: ClusterPlan, *, submitted: bool = False) -> None:
    """Create the cluster directory (mode 0700) with room kept for ``run.json``
    (:func:`launcher.lifecycle.report.reserve_room`),
    write ``plan.json``, ``conf/``, the client wrappers
    (``bin/hadoop``, ``bin/yarn``, ``bin/mapred``) and, in a job that uses Spark, ``spark-conf/`` (with
    ``spark-events/``), and add the cluster to the user's index
    (:mod:`launcher.lifecycle.interactive`).

    Args:
        submitted: the directory was made by ``submit`` (it holds ``job.yaml`` and ``batch.sh``) and must
            exist, without a ``plan.json`` yet.

    Raises:
        UserError: a submitted directory is missing or was already used.
        FileExistsError: a new cluster directory already exists (ids are unique; never overwrite).
    """
    run_dir = plan.path()
    if submitted:
        if not run_dir.is_dir() or (run_dir / "plan.json").exists():
            raise UserError(f"{run_dir} is not a fresh cluster directory made by `hpc-hadoop submit`",
                            field="--run-dir", fix="submit again, or leave --run-dir out")
    else:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        run_dir.mkdir(mode=0o700)
    reserve_room(run_dir)
    for sub in ("logs", "agents", "steps", "staging", "history", "app-logs", *made_for_hadoop(plan)):
        plan.path(sub).mkdir(mode=0o700)
    write_private(run_dir / "plan.json", plan.to_json())
    write_files(plan.conf_dir, render_config(plan))
    write_wrappers(plan)
    if uses_spark(plan.spec):
        write_spark_conf(plan)
    register(plan.cluster_id, run_dir, plan.scheduler, plan.job_id)


def stop_requested(plan: ClusterPlan, cluster: Cluster) -> bool:
    """True when ``hpc-hadoop stop`` wrote ``stop-requested`` in the cluster directory: as the cluster's
    :class:`~launcher.cluster.watch.FilesystemWatch` last read it while it runs (never waits on the filesystem), else
    read now."""
    watch = cluster.watch
    return watch.get("stop") is True if watch.running else plan.path(STOP_FILE).exists()


def hold_cluster(plan: ClusterPlan, cluster: Cluster, deadline: float | None, interval: float = 0.5,
                 stalled: Callable[[], object] | None = None) -> None:
    """Keep a cluster up for interactive use until ``stop-requested`` appears in its directory
    (``hpc-hadoop stop``), looking every ``interval`` seconds (:func:`launcher.util.polling.poll`). Once the cluster's
    :class:`~launcher.cluster.watch.FilesystemWatch` runs, its answers are used: the hold never waits on a stalled
    filesystem, and ``stalled`` (called each time) can show a stall.

    Raises:
        WalltimeExpired: ``deadline`` (epoch seconds: the walltime minus the teardown lead) has passed.
        ClusterError: a daemon died (names its log).
    """
    checked = [time.monotonic()]

    def held_until_stop() -> bool:
        if deadline is not None and time.time() >= deadline:
            raise WalltimeExpired(deadline)
        if stalled is not None:
            stalled()
        if time.monotonic() - checked[0] > 5.0:  # agents' state files: a dead daemon ends the hold
            cluster.raise_if_failed("while the cluster was held")
            checked[0] = time.monotonic()
        return stop_requested(plan, cluster)

    poll(held_until_stop, done=bool, interval=interval, backoff=1.0)


def new_report(plan: ClusterPlan, *, hold: bool = False) -> RunReport:
    """The run report of a new run of ``plan`` (state ``running``), with the versions and web addresses."""
    runtime = plan.runtime
    return RunReport(cluster_id=plan.cluster_id, name=plan.spec.name, run_dir=plan.run_dir, scheduler=plan.scheduler,
                     job_id=plan.job_id, nodes=[n.name for n in plan.nodes], rm_web=plan.rm_web, jhs_web=plan.jhs_web,
                     versions={"hadoop": runtime.version, "java": str(runtime.java_version)}, hold=hold)


def _ending(exc: BaseException, bringup_done: bool) -> tuple[RunState, str]:
    """``(state, error)`` of ``run.json`` for the exception that ended a run."""
    if isinstance(exc, Interrupted):
        warning = exc.signum == signal.SIGUSR1
        return (RunState.TIMED_OUT if warning else RunState.INTERRUPTED,
                f"stopped by {exc.args[0]}" + (" (walltime warning)" if warning else ""))
    if isinstance(exc, KeyboardInterrupt):
        return RunState.INTERRUPTED, "stopped by SIGINT"
    if isinstance(exc, WalltimeExpired):
        return RunState.TIMED_OUT, "walltime nearly over: stopped the running step and the cluster"
    if isinstance(exc, StopRequested):
        return RunState.INTERRUPTED, str(exc)
    return (RunState.FAILED if bringup_done else RunState.BRINGUP_FAILED), str(exc) or type(exc).__name__


class ClusterRun:
    """One cluster's life, for ``submit``, ``run``, ``start`` and ``bench`` alike: up → steps → down, whatever
    ends it (success, a failed step or bring-up, Ctrl-C, SIGTERM, SIGHUP, the walltime warning SIGUSR1 or our
    own deadline: the walltime minus :func:`launcher.schedulers.base.teardown_lead`, or ``hpc-hadoop stop`` during
    bring-up or a step: :meth:`check_stop`)::

        with ClusterRun(plan, observer=observer) as run:   # signals trapped, directories striped, setup, bring-up
            result = run.run_step(step)                    # recorded in run.json
        # daemons stopped, nothing left running, run.json final; the signal handlers restored

    Leaving the ``with`` block by an exception records it (state and error) and re-raises it; a failed step
    is recorded with :meth:`fail`. When the shared filesystem is gone (:func:`launcher.filesystems.gone`: its mount
    answers ``ENOTCONN``), the run ends with :class:`~launcher.util.errors.FilesystemLost` whatever was running (the
    ``OSError`` met on the way is replaced by it), the teardown reads and writes nothing of the cluster directory
    that it can do without, and the final record is kept on the node
    (:meth:`launcher.lifecycle.report.RunReport.keep_locally`).

    Args:
        plan: from :func:`prepare`, :func:`materialize`d.
        steps: the job file's resolved steps: their inputs are checked after the ``setup:`` lines ran.
        observer: terminal progress.
        allocation_start: epoch seconds when the allocation began (for ``since_allocation_s``).
        hold: an interactive cluster (``run.json`` says so; :meth:`hold` keeps it up).
        ready_timeout: the longest bring-up, seconds (never past the deadline).

    Attributes:
        report: the run report (``run.json``); ``report.exit_code`` is what the CLI exits with.
        deadline: epoch seconds when teardown must begin, or ``None``.
    """

    def __init__(self, plan: ClusterPlan, *, steps: Sequence[ResolvedStep] = (), observer: Observer | None = None,
                 allocation_start: float | None = None, hold: bool = False, ready_timeout: float = 180.0) -> None:
        self.plan = plan
        self.steps = list(steps)
        self.observer = observer or Observer()
        self.allocation_start = allocation_start
        self.ready_timeout = ready_timeout
        self.report = new_report(plan, hold=hold)
        self.deadline = plan.deadline - teardown_lead(plan.spec) if plan.deadline else None
        self.cluster = Cluster(plan)
        root = plan.filesystem.path
        self.cluster.watch.add("free", root, lambda: free_bytes(root))
        self.cluster.watch.add("stop", plan.path(STOP_FILE), plan.path(STOP_FILE).exists)
        self.runner = StepRunner(plan, self.observer.progress, stalled=self.stalled, gone=self.filesystem_gone)
        self._warned: Stall | None = None  # the stall already shown on the terminal
        self._refreshes: list[subprocess.Popen[bytes]] = []  # `yarn rmadmin -refreshNodes` of lost nodes
        self._decommissioned: set[str] = set()  # lost nodes already written to conf/nodes.exclude
        self._count = len(self.steps)
        self._record_lock = threading.Lock()  # steps run at once record themselves one at a time
        self._previous: dict[int, Any] = {}  # signal number -> the handler it had

    @property
    def bringup_s(self) -> float | None:
        """Seconds from starting the agents to every NodeManager RUNNING (``None`` before it is up)."""
        return self.report.bringup_s

    # -- up ----------------------------------------------------------------------------------------
    def __enter__(self) -> ClusterRun:
        for signum in HANDLED_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        try:
            render_config(self.plan, self.report.notes)  # only for the notes: materialize() wrote the files
            self.report.write()
            self.observer.phase("filesystem")
            prepare_filesystem(self.plan, self.report)
            if self.plan.spec.setup:
                self.observer.phase("setup")
                run_setup(self.plan, self.steps)
            self._bring_up()
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    @staticmethod
    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    def check_stop(self, when: str) -> None:
        """Raise :class:`StopRequested` when ``hpc-hadoop stop`` wrote ``stop-requested`` in the cluster directory
        (``when``: what is running, for the report), so the run tears the cluster down itself. Read by the
        cluster's :class:`~launcher.cluster.watch.FilesystemWatch` once it runs (never waits on the filesystem); a stall
        it sees is shown on the terminal (:meth:`stalled`).

        Raises:
            StopRequested: as above.
            FilesystemLost: the watch's reads found the shared filesystem gone (:meth:`check_filesystem`).
        """
        self.check_filesystem(when)
        self.stalled()
        if stop_requested(self.plan, self.cluster):
            raise StopRequested(when)

    @property
    def mount(self) -> str:
        """The mount point of the cluster directory's filesystem (the root itself when the plan found none)."""
        return self.plan.filesystem.mount_point or self.plan.filesystem.path

    def filesystem_gone(self) -> OSError | None:
        """The error with which a read of the cluster's :class:`~launcher.cluster.watch.FilesystemWatch` last found the
        shared filesystem gone (an errno of :data:`launcher.filesystems.GONE_ERRNOS`), or ``None``; never touches
        the filesystem."""
        return self.cluster.watch.failed_with(GONE_ERRNOS)

    def check_filesystem(self, when: str) -> None:
        """Raise :class:`~launcher.util.errors.FilesystemLost` when a read of the cluster's
        :class:`~launcher.cluster.watch.FilesystemWatch` last answered with an errno of
        :data:`launcher.filesystems.GONE_ERRNOS` (never touches the filesystem)."""
        error = self.filesystem_gone()
        if error is not None:
            raise FilesystemLost(self.mount, error, when)

    def lost(self, exc: BaseException | None = None, when: str = "") -> FilesystemLost | None:
        """The shared filesystem's :class:`~launcher.util.errors.FilesystemLost` error when it is gone
        (:func:`launcher.filesystems.gone`: ``exc`` came from ``ENOTCONN``..., and the mount point says so), else
        ``None``; ``exc`` itself when it is one."""
        if isinstance(exc, FilesystemLost):
            return exc
        return gone(self.mount, exc, when)

    def write_report(self) -> None:
        """Write ``run.json`` while the run goes on.

        Raises:
            FilesystemLost: it could not be written because the shared filesystem is gone (:meth:`lost`).
            OSError: it could not be written otherwise (:meth:`launcher.lifecycle.report.RunReport.write`).
        """
        with self.raising_lost():
            self.report.write()

    @contextlib.contextmanager
    def raising_lost(self, when: str = "") -> Iterator[None]:
        """Turn an ``OSError`` of the block into :class:`~launcher.util.errors.FilesystemLost` (raised from it) when the
        shared filesystem is gone (:meth:`lost`); any other ``OSError`` goes through as it is."""
        try:
            yield
        except OSError as err:
            lost = self.lost(err, when)
            if lost is None:
                raise
            raise lost from err

    def stalled(self) -> Stall | None:
        """The shared filesystem's stall in progress (:meth:`launcher.cluster.watch.FilesystemWatch.stall`), shown on
        the terminal once; ``None`` when it answers."""
        stall = self.cluster.watch.stall()
        if stall is not None and stall is not self._warned:
            self._warned = stall
            self.observer.warn(f"{stall.describe()}; the run goes on, and ends at the walltime if it must")
        return stall

    def _bring_up(self) -> None:
        """Start the agents and wait until every NodeManager (and, in ``hdfs`` mode, every DataNode) is up;
        ``hpc-hadoop stop`` ends the wait (:meth:`check_stop`)."""
        self.observer.phase("bring-up")
        self.cluster.start()
        remaining = None if self.deadline is None else max(1.0, self.deadline - time.time())
        limit = min(self.ready_timeout, remaining or self.ready_timeout)
        bringup_s = self.cluster.wait_ready(timeout=limit, check=lambda: self.check_stop("during bring-up"))
        if self.plan.spec.filesystem.mode == "hdfs":
            bringup_s += wait_hdfs(self.plan, self.cluster, timeout=min(120.0, remaining or 120.0))
        self.report.bringup_s = bringup_s
        self.report.notes += [f"{node}: {state.nm_note}" for node, state in sorted(self.cluster.states().items())
                              if state.nm_note]
        self._note_archives()
        if self.allocation_start:
            self.report.since_allocation_s = time.time() - self.allocation_start
        self.write_report()

    def _note_archives(self) -> None:
        """Add to the report's notes (``run.json``, one ``note:`` line each on the terminal) what the agents did with
        class-data-sharing archives (``archive_notes`` of ``agents/<node>.json``): one set aside after a daemon died
        mapping it, one dropped because the teardown's budget ran out (:mod:`launcher.node.agent`). Where ``agents/``
        cannot be read (the filesystem is gone), from the states the cluster's watch last read."""
        try:
            states = self.cluster.states()
        except OSError:
            states = self.cluster.watched_states()
        for _node, state in sorted(states.items()):
            for note in state.archive_notes:
                if note not in self.report.notes:
                    self.report.notes.append(note)

    # -- steps -------------------------------------------------------------------------------------
    def java_step(self, name: str, args: Sequence[str], *, main_class: str = RUN_JAR,
                  extra_classpath: Sequence[str | Path] = (), outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """A job client step numbered after the ones already made (:func:`launcher.steps.jobs.client_step`)."""
        self._count += 1
        return client_step(self.plan, self._count, name, args, main_class=main_class,
                           extra_classpath=extra_classpath, outputs=outputs)

    def spark_step(self, name: str, application: Sequence[str], *, outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """A ``spark-submit`` step numbered after the ones already made (:func:`launcher.steps.jobs.spark_step`); writes
        the cluster's ``spark-conf/`` first if its job did not use Spark (a benchmark's cluster)."""
        if not spark_conf_dir(self.plan).is_dir():
            write_spark_conf(self.plan)
        self._count += 1
        return spark_step(self.plan, self._count, name, application, outputs=outputs)

    def run_step(self, step: ResolvedStep, *, overwrite: bool = True, label: str | None = None) -> StepResult:
        """Run one step to its end on the running cluster (killed at the deadline); it is recorded in ``run.json``.

        Args:
            overwrite: remove the step's existing outputs first.
            label: the phase shown on the terminal (default ``step N name``).

        A step that failed after YARN accepted its application gets the first cause line of its failed container's
        log (``result.cause``, :func:`launcher.steps.diagnosis.diagnose`).

        Raises:
            WalltimeExpired: the deadline passed while it ran (the step was killed).
            ClusterError: a daemon died or the agents stopped while it ran (checked every second; the step was
                killed): names the daemon, its node and its log.
            StopRequested: ``hpc-hadoop stop`` asked the run to end (checked every second; the step was killed).
        """
        self.observer.phase(label or f"step {step.index} {step.name}")
        return self._run_with(self.runner, step, overwrite=overwrite)

    def run_steps_at_once(self, steps: Sequence[ResolvedStep], *, overwrite: bool = True,
                          label: str | None = None) -> list[StepResult]:
        """Run ``steps`` at the same time, each with its own job client (one thread and one
        :class:`~launcher.steps.jobs.StepRunner` each), until every one has ended; each is recorded in ``run.json``.

        Returns:
            The results, in the order of ``steps`` (a failed step is a result with a non-zero ``returncode``).

        Raises:
            WalltimeExpired, ClusterError, StopRequested: as :meth:`run_step`; the steps still running are killed
                first (each checks every second), and the first error is raised once every step has ended.
            Interrupted: a signal arrived while they ran (they are killed first, as above).
        """
        self.observer.phase(label or f"steps {', '.join(str(s.index) for s in steps)} at once")
        cancelled = threading.Event()
        runners = [StepRunner(self.plan, self.observer.progress, stalled=self.stalled, gone=self.filesystem_gone)
                   for _ in steps]
        with ThreadPoolExecutor(max_workers=max(1, len(steps)), thread_name_prefix="step") as pool:
            futures = [pool.submit(self._run_with, runner, step, overwrite=overwrite, cancelled=cancelled)
                       for runner, step in zip(runners, steps, strict=True)]
            try:
                wait(futures)
            except BaseException:  # a signal in this (the main) thread: kill the steps, then raise it
                cancelled.set()
                wait(futures)
                raise
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            raise errors[0]  # type: ignore[misc]
        return [f.result() for f in futures]

    def _run_with(self, runner: StepRunner, step: ResolvedStep, *, overwrite: bool,
                  cancelled: threading.Event | None = None) -> StepResult:
        """:meth:`run_step` with ``runner``; ``cancelled`` set makes the step's health check raise
        :class:`~launcher.util.errors.StopRequested` (the step is killed)."""
        when = f"while step {step.index} ({step.name}) ran"

        def health() -> None:
            if cancelled is not None and cancelled.is_set():
                raise StopRequested(f"during step {step.index} ({step.name}): another step ended the run")
            self._health(when, runner)
            self.check_stop(f"during step {step.index} ({step.name})")

        try:
            with self.raising_lost(f"during step {step.index} ({step.name})"):  # its log, its claims... on a lost mount
                result = runner.run(step, overwrite=overwrite, deadline=self.deadline, health=health)
            if result.returncode != 0:  # a job client that loses the filesystem fails: say why, read none of it
                lost = self.lost(when=f"during step {step.index} ({step.name})")
                if lost is not None:
                    raise lost
            if result.returncode != 0 and result.application_id:
                cause = diagnose(self.plan, result.application_id, step.log.read_text(errors="replace"))
                result.cause = asdict(cause) if cause else None
            elif result.returncode == 0 and result.job_id and history_in_cluster_dir(self.plan, step):
                # Never a success whose history was lost (issue 25: a .jhist whose name the filesystem cut short
                # never reached done/): wait for it there (a second or two: the JobHistoryServer's next scan).
                result.history_error = history_not_kept(self.plan.path("history"), result.job_id)
                if result.history_error:
                    result.state = StepState.FAILED
                elif result.reduce_shuffle_bytes is not None:  # only a job whose reducers shuffled
                    result.shuffle = shuffle.step_shuffle(shuffle.find_jhist(self.plan.path("history"),
                                                                             result.job_id))
            return result
        finally:
            with self._record_lock:
                self._note_lost_nodes(step)
                if runner.current is not None:
                    _record(self.report, runner.current)
                    runner.current = None
                    if self.cluster.watch.stall() is None and self.filesystem_gone() is None:
                        self.write_report()  # else teardown, which writes it at the end, comes first

    def _health(self, when: str, runner: StepRunner) -> None:
        """Each second while a step runs: raise if the cluster is no longer whole (a lost NodeManager off the
        master is tolerated, and its node decommissioned at once: :meth:`Cluster.decommission`); note the fewest
        bytes free on the filesystem root (``min_free_bytes``). What it reads of the shared filesystem comes from
        the cluster's :class:`~launcher.cluster.watch.FilesystemWatch`: it never waits on a stalled filesystem."""
        lost = self.cluster.raise_if_failed(when, tolerate_lost=True)
        if set(lost) - self._decommissioned:
            refresh = self.cluster.decommission(sorted(lost))
            self._decommissioned |= set(lost)
            if refresh is not None:
                self._refreshes.append(refresh)
        free, current = self.cluster.watch.get("free"), runner.current
        if isinstance(free, int) and current is not None:
            current.min_free_bytes = free if current.min_free_bytes is None else min(free, current.min_free_bytes)

    def _note_lost_nodes(self, step: ResolvedStep) -> None:
        """Record the nodes that lost their NodeManager during ``step`` (:meth:`Cluster.lost_nodes`) in
        ``run.json`` (``lost_nodes``) and as a note with how long the step ran on after the loss."""
        ended = time.time()
        for node, lost in self.cluster.lost_nodes().items():
            if any(entry.node == node for entry in self.report.lost_nodes):
                continue
            self.report.lost_nodes.append(LostNodeRecord(node=node, step=step.index, **lost))
            after = f"; the step ran on for {ended - lost['at']:.1f} s after it" if lost["at"] else ""
            self.report.notes.append(f"{lost['daemon']} on {node} lost during step {step.index} ({step.name}), exit "
                                     f"{lost['exit']}: YARN re-ran that node's work on the others{after}")

    def _note_stalls(self) -> None:
        """Record the shared filesystem's stalls seen while the cluster ran in ``run.json`` (``stalls``) and as
        notes; a run that ended during one says so in its error."""
        stalls = self.cluster.watch.stalls
        self.report.stalls = [StallRecord(**stall.to_dict()) for stall in stalls]
        self.report.notes += [stall.describe() for stall in stalls]
        ongoing = [stall for stall in stalls if stall.ongoing]
        if ongoing and self.report.error:
            self.report.error += f" (the shared filesystem was not answering: a read of {ongoing[-1].path})"

    def fail(self, error: str) -> None:
        """Record that the run failed (a step's non-zero exit): the state stays ``failed`` at teardown.

        Raises:
            FilesystemLost: ``run.json`` could not be written: the shared filesystem is gone.
        """
        self.report.state, self.report.error = RunState.FAILED, error
        self.write_report()

    def hold(self) -> None:
        """Keep the cluster up until ``hpc-hadoop stop`` (:func:`hold_cluster`); then the state is ``stopped``."""
        self.observer.phase("ready")

        def checked() -> Stall | None:
            self.check_filesystem("while the cluster was held")
            return self.stalled()

        hold_cluster(self.plan, self.cluster, self.deadline, stalled=checked)
        self.report.state = RunState.STOPPED

    # -- down --------------------------------------------------------------------------------------
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        late: list[str] = []
        for signum in HANDLED_SIGNALS:  # a signal now (a second walltime warning, Ctrl-C again) must not stop teardown
            signal.signal(signum, lambda number, _frame: late.append(signal.Signals(number).name))
        lost = self._lost_by(exc)
        ending = lost or exc
        if ending is not None:
            self.report.state, self.report.error = _ending(ending, self.report.bringup_s is not None)
            if isinstance(ending, HpcHadoopError):
                self.report.error_exit_code = ending.exit_code
        elif self.report.state == "running":
            self.report.state = RunState.SUCCEEDED
        try:
            self.observer.phase("teardown")
            end(self._refreshes, signum=None)  # JVMs that have had seconds to end; never left behind
            self.report.teardown_s = self.cluster.stop()
            self.report.leftover_processes = len(self.cluster.leftover_processes())
            self._note_archives()
            if self.plan.spec.hadoop.class_data_sharing and self.cluster.watch.stall() is None:
                publish_am_archives(self.plan.runtime, settle_s=0.0)  # no ApplicationMaster runs any more
            self._note_stalls()
            self.report.ports = [PortRecord(**port) for port in self.cluster.listening()]
        finally:
            self.report.notes += [f"{name} arrived during teardown, which went on to the end" for name in late]
            self.report.ended = time.time()
            self.report.total_s = self.report.ended - self.report.started
            try:
                self._write_final(lost)
            finally:
                release_room(self.plan.path())
                for number, handler in self._previous.items():
                    signal.signal(number, handler if handler is not None else signal.SIG_DFL)
                self._previous.clear()
                self.observer.close()
        if lost is not None and lost is not exc:
            raise lost from exc  # the OSError met on the way is not the news: the filesystem is gone

    def _lost_by(self, exc: BaseException | None) -> FilesystemLost | None:
        """The :class:`~launcher.util.errors.FilesystemLost` error behind ``exc``, the exception that ends the run:
        itself, an ``OSError`` it came from when the mount is gone (:meth:`lost`), or, for a failure of the cluster (a
        daemon or the agents that died, :class:`~launcher.util.errors.HpcHadoopError`), the watch's reads finding the
        mount gone (:meth:`check_filesystem`: no read of the mount on this thread, which a stall would hold)."""
        if exc is None:
            return None
        when = "during bring-up" if self.report.bringup_s is None else ""
        lost = self.lost(exc, when)
        if lost is None and isinstance(exc, HpcHadoopError):
            error = self.filesystem_gone()
            lost = FilesystemLost(self.mount, error, when) if error is not None else None
        return lost

    def _write_final(self, lost: FilesystemLost | None) -> None:
        """Write the final ``run.json``; where the shared filesystem is gone (``lost``, or found so now), keep the
        record on this node instead (:meth:`launcher.lifecycle.report.RunReport.keep_locally`), its place named in the
        error.

        Raises:
            OSError: ``run.json`` could not be written, the filesystem not gone (full, with no room kept).
        """
        if lost is None:
            try:
                self.report.write()
                return
            except OSError as err:
                lost = self.lost(err, "at teardown")
                if lost is None:
                    raise
            report = self.report
            if report.state in ("succeeded", "stopped"):
                report.state, report.error, report.error_exit_code = RunState.FAILED, str(lost), lost.exit_code
            else:
                report.error = f"{report.error}; {lost}"
        self.report.lost_filesystem = lost.to_dict()
        self.report.keep_locally()


#: The ends of a run that ``execute`` reports instead of raising (recorded in ``run.json`` by :class:`ClusterRun`).
EXPECTED_ENDS = (Interrupted, WalltimeExpired, StopRequested, HpcHadoopError)


def execute(plan: ClusterPlan, steps: list[ResolvedStep], *, overwrite: bool = False,
            observer: Observer | None = None, allocation_start: float | None = None,
            hold: bool = False) -> RunReport:
    """Bring the cluster up, run the job file's steps in order (a failing step stops the run), tear it down,
    write ``run.json`` (:class:`ClusterRun`).

    Args:
        plan: from :func:`prepare`; :func:`materialize` must have run.
        steps: from :func:`prepare`.
        overwrite: remove existing outputs just before their step.
        observer: terminal progress.
        allocation_start: epoch seconds when the allocation began (for ``since_allocation_s``).
        hold: after the steps, keep the cluster up until ``hpc-hadoop stop`` (:func:`hold_cluster`); the
            final state is then ``stopped``.

    Returns:
        The report (also written to ``run.json``); ``report.exit_code`` is what the CLI exits with.
    """
    run = ClusterRun(plan, steps=steps, observer=observer, allocation_start=allocation_start, hold=hold)
    try:
        with run:
            for step in steps:
                result = run.run_step(step, overwrite=overwrite, label=f"step {step.index}/{len(steps)} {step.name}")
                if result.returncode != 0 or result.history_error:
                    run.fail(step_error(step, result, plan.filesystem.path))
                    break
            else:
                if hold:
                    run.hold()
    except EXPECTED_ENDS:
        pass  # recorded in run.json by ClusterRun
    return run.report


def step_error(step: ResolvedStep, result: StepResult, root: str | Path | None = None) -> str:
    """The error line of a failed step: first, when a filesystem filled up while it ran, which one
    (:func:`launcher.filesystems.full_filesystem` on ``root``, the filesystem root); then its exit code, its client
    log and last error line, and the first cause line of its failed container's log with the command that shows
    the whole log (``result.cause``)."""
    if result.history_error:
        return f"step {step.index} ({step.name}) ran, but {result.history_error}; read {step.log}"
    full = full_filesystem(root, result.lines, result.min_free_bytes) if root is not None else None
    text = f"{full + '; ' if full else ''}step {step.index} ({step.name}) failed with exit code {result.returncode}; "
    text += f"read {step.log}"
    if result.lines:
        text += f": {result.lines[-1]}"
    if result.cause:
        cause = result.cause
        text += f"; cause ({cause['container']} {cause['file']}): {cause['line']}; whole log: {cause['command']}"
    return text


#: The job-history properties that move a job's history out of the cluster directory's ``history/``.
HISTORY_DIR_PROPERTIES = ("mapreduce.jobhistory.done-dir", "mapreduce.jobhistory.intermediate-done-dir")


def history_in_cluster_dir(plan: ClusterPlan, step: ResolvedStep) -> bool:
    """Whether a MapReduce job of ``step`` keeps its history in the cluster directory's ``history/`` (where
    :func:`launcher.steps.jobhistory.history_not_kept` looks): not in ``hdfs`` mode (it is on HDFS), not when the job
    file's ``hadoop.properties`` or the step's ``-D`` options move it (:data:`HISTORY_DIR_PROPERTIES`)."""
    if plan.spec.filesystem.mode == "hdfs":
        return False
    mapred = plan.spec.hadoop.properties.get("mapred-site", {})
    moved = [key for key in HISTORY_DIR_PROPERTIES if key in mapred]
    return not moved and not any(arg.removeprefix("-D").startswith(f"{key}=") for arg in step.argv
                                 for key in HISTORY_DIR_PROPERTIES)


def _record(report: RunReport, result: StepResult) -> None:
    """Add a step's result to ``report`` (the caller writes ``run.json``)."""
    data = {k: v for k, v in vars(result).items() if k != "lines"}
    data["errors"] = result.lines[-5:]
    report.steps.append(StepRecord(**data))
