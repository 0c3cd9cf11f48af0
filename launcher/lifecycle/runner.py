"""One run from end to end: plan → files → daemons → steps → teardown → report.

:func:`prepare` checks and plans, :func:`materialize` writes the cluster directory, :class:`ClusterRun` is the
cluster's life cycle (up → steps → down) that ``submit``, ``run``, ``start`` (:func:`execute`) and ``bench``
(:mod:`benchmarks.harness`) share, composed once in :mod:`launcher.lifecycle.compose`. Teardown happens whatever
ends the run: success, a failed step, a failed bring-up, Ctrl-C (SIGINT), SIGTERM, SIGHUP, the walltime warning
(SIGUSR1) or our own walltime deadline.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from launcher.cluster.cluster import Cluster
from launcher.cluster.watch import Stall
from launcher.config.spec import uses_spark
from launcher.filesystems import (
    NOT_APPLICABLE,
    DirectoryRecord,
    StripeOutcome,
    filesystem_of,
    free_bytes,
    full_filesystem,
    report_section,
)
from launcher.lifecycle.archives import Archives
from launcher.lifecycle.bringup import BringUp
from launcher.lifecycle.clusters.index import register
from launcher.lifecycle.clusters.status import STOP_FILE
from launcher.lifecycle.health import Health
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport, release_room, reserve_room
from launcher.lifecycle.signals import Interrupted, SignalTrap
from launcher.lifecycle.step_runs import StepRuns
from launcher.lifecycle.teardown import Teardown
from launcher.lifecycle.validate import (
    prepare as prepare,  # re-exported: compose, the harness and tests use runner.prepare
)
from launcher.plan.cluster_plan import ClusterPlan, check_cluster_directory, make_cluster_directory
from launcher.plan.hdfs import STAGING_REASON
from launcher.render.clients import write_wrappers
from launcher.render.config import render_config, write_files
from launcher.schedulers.base import teardown_lead
from launcher.security.kdc import Kdc
from launcher.security.kerberos import SIMPLE_WARNING
from launcher.steps.commands import RUN_JAR, ResolvedStep, check_step_inputs, setup_commands
from launcher.steps.jobs import StepResult
from launcher.util.errors import (
    ClusterError,
    FilesystemLost,
    HpcHadoopError,
    StopRequested,
    UserError,
    WalltimeExpired,
)
from launcher.util.files import create_private
from launcher.util.polling import poll
from launcher.util.safedirs import private_umask, user_umask
from launcher.util.states import RunState, signal_state


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
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False,
                                  umask=user_umask()).returncode  # the user's files, the user's umask
        if code != 0:
            raise UserError(f"setup line failed with exit code {code}: {line}", file=job_file,
                            field=f"setup.{index}", fix=f"read {log}")
    check_step_inputs(steps, job_file)


def prepare_filesystem(plan: ClusterPlan, record: RunRecord) -> None:
    """Stripe the cluster's directories with the filesystem the plan chose (before bring-up).

    Input, output, staging and scratch (each node's NodeManager local dir) get ``filesystem.striping.<role>``;
    the outcome of every directory goes into the report's ``filesystem`` (``record.report``; ``run.json`` written
    through ``record``, :meth:`launcher.lifecycle.record.RunRecord.write`) as it happens: applied (with the layout
    read back and the one a new file really gets), "striping not applicable" (with why), "not restriped: holds
    data" (input), "not requested", or failed. Where layouts can be neither set nor read and nothing is asked
    (``plan.filesystem.striping_error``), a note says so and the run goes on.

    Raises:
        UserError: a setting the filesystem cannot honour.
        CommandError: a striping command failed (``lfs``, ``setfattr``...).
        FilesystemLost: ``run.json`` could not be written because the shared filesystem is gone.
        OSError: ``run.json`` could not be written otherwise.
    """
    report = record.report
    fs_spec = plan.spec.filesystem
    fs = filesystem_of(plan.filesystem)
    stripes = fs_spec.striping
    dirs = plan.striped_dirs()
    done: list[StripeOutcome] = []
    requested: Callable[[Any], dict[str, int | None]] = lambda s: {"count": s.count, "size": s.size,  # noqa: E731
                                                                    "index": s.index}
    if plan.hdfs.staging_on_hdfs:
        done.append(StripeOutcome("staging", plan.fs_uri(str(plan.path("staging"))), NOT_APPLICABLE,
                                  requested(stripes.staging), reason=STAGING_REASON))
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
                report.filesystem.directories.append(DirectoryRecord(role=role, path=str(path), status="failed",
                                                                     requested=requested(setting), reason=str(exc)))
                record.write()
                raise
            report.filesystem.directories.append(outcome.to_record())
    record.write()


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
    if not plan.hdfs.history_in_cluster_dir:
        return ()
    return ("history/done", "history/intermediate")


def materialize(plan: ClusterPlan, *, submitted: bool = False) -> list[str]:
    """Create the cluster directory (mode 0700; it and each level above it below ``filesystem.root`` made one at a
    time and refused unless the user's, not a link and not writable by others:
    :func:`launcher.plan.cluster_plan.make_cluster_directory`) with room kept for ``run.json``
    (:func:`launcher.lifecycle.report.reserve_room`),
    write ``plan.json``, ``conf/``, the client wrappers
    (``bin/hadoop``, ``bin/yarn``, ``bin/mapred``) and, in a job that uses Spark, ``spark-conf/`` (with
    ``spark-events/``), and add the cluster to the user's index
    (:func:`launcher.lifecycle.clusters.index.register`).

    Args:
        submitted: the directory was made by ``submit`` (it holds ``job.yaml`` and ``batch.sh``) and must
            exist, without a ``plan.json`` yet.

    Returns:
        The notes of the configuration's one rendering (:func:`launcher.render.config.render_config`: timeouts
        clamped to the walltime), for ``run.json`` (:class:`ClusterRun`'s ``notes``).

    Raises:
        UserError: a submitted directory is missing or was already used; it or a level above it is not the user's
            (:func:`launcher.plan.cluster_plan.check_cluster_directory`), or a level above a new one is not.
        FileExistsError: a new cluster directory already exists (ids are unique; never overwrite).
    """
    private_umask()  # every file of the cluster private itself, its children's too (issue 36 item 5)
    run_dir = plan.path()
    if submitted:
        check_cluster_directory(run_dir, field="--run-dir", missing_ok=True)
        if not run_dir.is_dir() or (run_dir / "plan.json").exists():
            raise UserError(f"{run_dir} is not a fresh cluster directory made by `hpc-hadoop submit`",
                            field="--run-dir", fix="submit again, or leave --run-dir out")
    else:
        make_cluster_directory(run_dir)
    reserve_room(run_dir)
    for sub in ("logs", "agents", "steps", "staging", "history", "app-logs", *made_for_hadoop(plan)):
        plan.path(sub).mkdir(mode=0o700)
    create_private(run_dir / "plan.json", plan.to_json())
    notes: list[str] = []
    write_files(plan.conf_dir, render_config(plan, notes))
    write_wrappers(plan)
    if uses_spark(plan.spec):
        from launcher.render.spark import write_spark_conf  # a run without Spark does not import it

        write_spark_conf(plan)
    if plan.spec.notebook is not None and plan.spec.notebook.dir is not None:  # JupyterLab with the cluster
        from launcher.render.notebook import request_server

        request_server(plan, Path(plan.spec.notebook.dir))
    register(plan.cluster_id, run_dir, plan.scheduler, plan.job_id)
    return notes


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

    A stop requested while the agents ended is a stop, not a failure: cancelling the batch job of an Open OnDemand
    session (``scancel``) signals its script, which asks for the stop, and the agents' job step at once, and the
    agents' end may be seen before the watch reads ``stop-requested`` again; so a failure is looked at again with
    the file read now.

    Raises:
        WalltimeExpired: ``deadline`` (epoch seconds: the walltime minus the teardown lead) has passed.
        ClusterError: a daemon died (names its log) and no stop was requested.
    """
    checked = [time.monotonic()]

    def held_until_stop() -> bool:
        if deadline is not None and time.time() >= deadline:
            raise WalltimeExpired(deadline)
        if stalled is not None:
            stalled()
        if time.monotonic() - checked[0] > 5.0:  # agents' state files: a dead daemon ends the hold
            try:
                cluster.raise_if_failed("while the cluster was held")
            except ClusterError:
                if plan.path(STOP_FILE).exists():
                    return True
                raise
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
    """``(state, error)`` of ``run.json`` for the exception that ended a run (its exit code:
    :data:`launcher.util.states.EXIT_CODES`)."""
    if isinstance(exc, Interrupted):  # SIGINT interrupted, SIGTERM/SIGHUP cancelled, SIGUSR1 timed_out
        warning = exc.signum == signal.SIGUSR1
        return signal_state(exc.signum), f"stopped by {exc.args[0]}" + (" (walltime warning)" if warning else "")
    if isinstance(exc, KeyboardInterrupt):
        return RunState.INTERRUPTED, "stopped by SIGINT"
    if isinstance(exc, WalltimeExpired):
        return RunState.TIMED_OUT, "walltime nearly over: stopped the running step and the cluster"
    if isinstance(exc, StopRequested):  # the user asked for an end before the run's work was done
        return RunState.CANCELLED, str(exc)
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

    A thin context manager that composes one part per job: the signals
    (:class:`~launcher.lifecycle.signals.SignalTrap`), striping (:func:`prepare_filesystem`), setup
    (:func:`run_setup`), bring-up (:class:`~launcher.lifecycle.bringup.BringUp`), health checks
    (:class:`~launcher.lifecycle.health.Health`), steps (:class:`~launcher.lifecycle.step_runs.StepRuns`, with the
    diagnosis and shuffle figures of :mod:`launcher.lifecycle.findings`), ``run.json``
    (:class:`~launcher.lifecycle.record.RunRecord`), AppCDS (:class:`~launcher.lifecycle.archives.Archives`) and
    teardown (:class:`~launcher.lifecycle.teardown.Teardown`).

    Args:
        plan: from :func:`prepare`, :func:`materialize`d.
        steps: the job file's resolved steps: their inputs are checked after the ``setup:`` lines ran.
        observer: terminal progress.
        allocation_start: epoch seconds when the allocation began (for ``since_allocation_s``).
        hold: an interactive cluster (``run.json`` says so; :meth:`hold` keeps it up).
        ready_timeout: the longest bring-up, seconds (never past the deadline).
        notes: the notes of the configuration's rendering (what :func:`materialize` returns), the first of
            ``run.json``'s notes.

    Attributes:
        report: the run report (``run.json``); ``report.exit_code`` is what the CLI exits with.
        deadline: epoch seconds when teardown must begin, or ``None``.
    """

    def __init__(self, plan: ClusterPlan, *, steps: Sequence[ResolvedStep] = (), observer: Observer | None = None,
                 allocation_start: float | None = None, hold: bool = False, ready_timeout: float = 180.0,
                 notes: Sequence[str] = ()) -> None:
        self.plan = plan
        self.steps = list(steps)
        self.observer = observer or Observer()
        self.allocation_start = allocation_start
        self.ready_timeout = ready_timeout
        self.report = new_report(plan, hold=hold)
        self.report.notes += notes
        if plan.spec.security == "simple":
            self.report.notes.append(SIMPLE_WARNING)
        self.kdc = Kdc(plan)
        self.deadline = plan.deadline - teardown_lead(plan.spec) if plan.deadline else None
        self.cluster = Cluster(plan)
        root = plan.filesystem.path
        self.cluster.watch.add("free", root, lambda: free_bytes(root))
        self.cluster.watch.add("stop", plan.path(STOP_FILE), plan.path(STOP_FILE).exists)
        self.signals = SignalTrap()
        self.health = Health(plan, self.cluster, self.observer, self.report)
        self.record = RunRecord(self.report, self.health)
        self.archives = Archives(plan, self.cluster, self.report)
        self.step_runs = StepRuns(plan, self.observer, self.health, self.record, check_stop=self.check_stop,
                                  deadline=self.deadline, count=len(self.steps))
        self.runner = self.step_runs.runner

    @property
    def bringup_s(self) -> float | None:
        """Seconds from starting the agents to every NodeManager RUNNING (``None`` before it is up)."""
        return self.report.bringup_s

    # -- up ----------------------------------------------------------------------------------------
    def __enter__(self) -> ClusterRun:
        self.signals.trap()
        try:
            self.record.write()
            self.observer.phase("filesystem")
            prepare_filesystem(self.plan, self.record)
            if self.plan.spec.setup:
                self.observer.phase("setup")
                run_setup(self.plan, self.steps)
            BringUp(self.plan, self.cluster, self.observer, self.record, self.archives, self.kdc).run(
                deadline=self.deadline, ready_timeout=self.ready_timeout, check_stop=self.check_stop,
                allocation_start=self.allocation_start)
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def check_stop(self, when: str) -> None:
        """Raise :class:`StopRequested` when ``hpc-hadoop stop`` wrote ``stop-requested`` in the cluster directory
        (``when``: what is running, for the report), so the run tears the cluster down itself. Read by the
        cluster's :class:`~launcher.cluster.watch.FilesystemWatch` once it runs (never waits on the filesystem); a stall
        it sees is shown on the terminal (:meth:`launcher.lifecycle.health.Health.stalled`).

        Raises:
            StopRequested: as above.
            FilesystemLost: the watch's reads found the shared filesystem gone
                (:meth:`launcher.lifecycle.health.Health.check_filesystem`).
        """
        self.health.check_filesystem(when)
        self.health.stalled()
        if stop_requested(self.plan, self.cluster):
            raise StopRequested(when)

    @property
    def mount(self) -> str:
        """The mount point of the cluster directory's filesystem (:attr:`launcher.lifecycle.health.Health.mount`)."""
        return self.health.mount

    def filesystem_gone(self) -> OSError | None:
        """:meth:`launcher.lifecycle.health.Health.filesystem_gone`."""
        return self.health.filesystem_gone()

    def lost(self, exc: BaseException | None = None, when: str = "") -> FilesystemLost | None:
        """:meth:`launcher.lifecycle.health.Health.lost`."""
        return self.health.lost(exc, when)

    # -- steps -------------------------------------------------------------------------------------
    def java_step(self, name: str, args: Sequence[str], *, main_class: str = RUN_JAR,
                  extra_classpath: Sequence[str | Path] = (), outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """:meth:`launcher.lifecycle.step_runs.StepRuns.java_step`."""
        return self.step_runs.java_step(name, args, main_class=main_class, extra_classpath=extra_classpath,
                                        outputs=outputs)

    def spark_step(self, name: str, application: Sequence[str], *, outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """:meth:`launcher.lifecycle.step_runs.StepRuns.spark_step`."""
        return self.step_runs.spark_step(name, application, outputs=outputs)

    def run_step(self, step: ResolvedStep, *, overwrite: bool = True, label: str | None = None) -> StepResult:
        """:meth:`launcher.lifecycle.step_runs.StepRuns.run_step`."""
        return self.step_runs.run_step(step, overwrite=overwrite, label=label)

    def run_steps_at_once(self, steps: Sequence[ResolvedStep], *, overwrite: bool = True,
                          label: str | None = None) -> list[StepResult]:
        """:meth:`launcher.lifecycle.step_runs.StepRuns.run_steps_at_once`."""
        return self.step_runs.run_steps_at_once(steps, overwrite=overwrite, label=label)

    def fail(self, error: str) -> None:
        """:meth:`launcher.lifecycle.record.RunRecord.fail`."""
        self.record.fail(error)

    def hold(self) -> None:
        """Keep the cluster up until ``hpc-hadoop stop`` (:func:`hold_cluster`); then the state is ``stopped``."""
        self.observer.phase("ready")

        def checked() -> Stall | None:
            self.health.check_filesystem("while the cluster was held")
            return self.health.stalled()

        hold_cluster(self.plan, self.cluster, self.deadline, stalled=checked)
        self.report.state = RunState.STOPPED

    # -- down --------------------------------------------------------------------------------------
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        late = self.signals.defer()
        lost = self._lost_by(exc)
        ending = lost or exc
        if ending is not None:
            self.report.state, self.report.error = _ending(ending, self.report.bringup_s is not None)
            if isinstance(ending, HpcHadoopError):
                self.report.error_exit_code = ending.exit_code
        elif self.report.state is RunState.RUNNING:
            self.report.state = RunState.SUCCEEDED
        try:
            Teardown(self.cluster, self.report, self.health, self.archives, self.observer, self.kdc).run()
        finally:
            self.report.notes += [f"{name} arrived during teardown, which went on to the end" for name in late]
            self.report.ended = time.time()
            self.report.total_s = self.report.ended - self.report.started
            try:
                self.record.write_final(lost)
            finally:
                release_room(self.plan.path())
                self.signals.restore()
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


#: The ends of a run that ``execute`` reports instead of raising (recorded in ``run.json`` by :class:`ClusterRun`).
EXPECTED_ENDS = (Interrupted, WalltimeExpired, StopRequested, HpcHadoopError)


def execute(plan: ClusterPlan, steps: list[ResolvedStep], *, overwrite: bool = False,
            observer: Observer | None = None, allocation_start: float | None = None,
            hold: bool = False, notes: Sequence[str] = ()) -> RunReport:
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
        notes: from :func:`materialize` (the configuration's one rendering).

    Returns:
        The report (also written to ``run.json``); ``report.exit_code`` is what the CLI exits with.
    """
    run = ClusterRun(plan, steps=steps, observer=observer, allocation_start=allocation_start, hold=hold, notes=notes)
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
    log and last error line, and the cause (``result.cause``, :class:`launcher.steps.diagnosis.Cause`): the first
    error of the process that failed first, the file that holds it and the command that shows every container's
    log."""
    if result.history_error:
        return f"step {step.index} ({step.name}) ran, but {result.history_error}; read {step.log}"
    full = full_filesystem(root, result.lines, result.min_free_bytes) if root is not None else None
    text = f"{full + '; ' if full else ''}step {step.index} ({step.name}) failed with exit code {result.returncode}; "
    text += f"read {step.log}"
    if result.lines:
        text += f": {result.lines[-1]}"
    if result.cause:
        cause = result.cause
        where = f"read {cause['path']}" if cause.get("path") else f"in {cause['container']} {cause['file']}"
        text += f"; cause: {cause['line']}; {where}; all container logs: {cause['command']}"
    return text
