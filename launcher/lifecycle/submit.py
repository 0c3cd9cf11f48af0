"""``hpc-hadoop submit`` on a batch system: write the batch script, submit it, follow it (``--wait``).

The cluster directory is made at submission, on the shared filesystem: it holds the fully resolved job
file (``job.yaml``: every layer and ``--set`` already applied, so the batch job sees exactly what was
submitted), the batch script (``batch.sh``), the scheduler's output (``batch-<jobid>.out``) and later
everything a run keeps. Inside the allocation the script calls ``hpc-hadoop run --run-dir`` on it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from pydantic import SerializeAsAny
from rich.console import Console

from launcher import __version__
from launcher.config.spec import JobSpec
from launcher.plan import cluster_plan
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.config import environment
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers import get_scheduler
from launcher.schedulers.allocation import JobState
from launcher.schedulers.base import BatchScheduler, JobAnswer, NoAnswer, Settled, state_of
from launcher.util.errors import HpcHadoopError
from launcher.util.files import create_private
from launcher.util.records import Record
from launcher.util.states import CANCELLED_EXIT, TIMED_OUT_EXIT, ClusterState
from launcher.util.yamlio import dump_yaml

if TYPE_CHECKING:  # the run's records are read only after a batch submission: imported there, not by `render`
    from launcher.lifecycle.front import Front
    from launcher.lifecycle.report import RunReport

#: Seconds ``submit --wait`` waits through a batch system that does not answer, beyond the job's walltime: the job
#: cannot outlive its walltime, so after that much silence nothing more can be learnt by waiting.
NO_ANSWER_MARGIN = 300.0


class Raw(str):
    """Text that goes into a batch script as it is (already shell)."""


def script_environment() -> jinja2.Environment:
    """Jinja2 environment for batch scripts: every ``{{ value }}`` is shell-quoted unless ``|raw``."""
    env = environment()
    env.filters["raw"] = Raw
    env.finalize = lambda value: value if isinstance(value, Raw) else shlex.quote(str(value))
    return env


def render_script(spec: JobSpec, scheduler: BatchScheduler, run_dir: Path, *, overwrite: bool = False,
                  hold: bool = False) -> str:
    """The batch script for ``spec`` whose cluster directory will be ``run_dir`` (``hold``: an interactive
    cluster, kept up until ``hpc-hadoop stop``)."""
    template = script_environment().get_template(scheduler.script_template)
    return template.render(directives=scheduler.filtered_directives(spec, run_dir), prologue=spec.batch.prologue,
                           run_dir=str(run_dir), job_file=str(run_dir / "job.yaml"), python=sys.executable,
                           overwrite=overwrite, hold=hold, cluster_id=run_dir.name, name=spec.name,
                           version=__version__)


def _scheduler(spec: JobSpec) -> BatchScheduler:
    scheduler = get_scheduler(spec.scheduler)
    assert isinstance(scheduler, BatchScheduler), f"{spec.scheduler} cannot submit"
    return scheduler


def preview_script(spec: JobSpec) -> str:
    """The batch script ``submit`` would write for ``spec`` (settled: ``render``'s
    :func:`launcher.lifecycle.front.front_door`), with a placeholder cluster id; runs nothing."""
    scheduler = _scheduler(spec)
    run_dir = clusters_dir(spec) / f"{spec.name}-PREVIEW"
    return render_script(spec, scheduler, run_dir)


def takes_whole_nodes(spec: JobSpec) -> bool:
    """Whether the batch script asks for whole nodes whose cores the allocation names only when the job runs (the
    backend's :meth:`launcher.schedulers.base.Scheduler.takes_whole_nodes`: Slurm's ``--exclusive``, PBS Pro's
    ``place=scatter:excl``)."""
    return get_scheduler(spec.scheduler).takes_whole_nodes(spec)


def preview_notes(plan: ClusterPlan) -> list[str]:
    """Lines for ``render``'s notes on the YARN sizes of ``plan`` that the allocation decides only when the job runs,
    the job file fixing none of them (the plan is made on the batch system's stand-in allocation:
    :meth:`launcher.schedulers.base.BatchScheduler.preview_allocation`, 8 GiB nodes with the cores asked for, 1 by
    default): the cores of whole nodes (:func:`takes_whole_nodes`), and the NodeManager's memory, which follows
    the nodes' cores and memory (:func:`launcher.plan.cluster_plan.size_memory`)."""
    spec, memory = plan.spec, plan.memory
    notes = []
    if takes_whole_nodes(spec) and not spec.hadoop.nodemanager_vcores:
        notes.append(f"yarn.nodemanager.resource.cpu-vcores {memory.nodemanager_vcores} is a stand-in: the job takes "
                     "whole nodes (batch.exclusive) and YARN gets each node's cores from the allocation when it runs; "
                     "set batch.cores_per_node or hadoop.nodemanager_vcores to fix it")
    if spec.hadoop.nodemanager_memory is None and (spec.batch.memory_per_node is None or takes_whole_nodes(spec)):
        notes.append(f"yarn.nodemanager.resource.memory-mb {memory.nodemanager_mb} is a stand-in: it follows the "
                     "cores and memory of each node, from the allocation when the job runs; set "
                     "hadoop.nodemanager_memory to fix it")
    return notes


def with_java(spec: JobSpec, runtime: HadoopRuntime) -> JobSpec:
    """``spec`` with the JDK found at submission (``runtime.java_home``) written into ``hadoop.java_home`` when the job
    file leaves it out, so the job runs the Java checked here and not the first one on its own ``PATH`` (PBS starts
    the job through a login shell, which resets ``PATH``). The Python is the batch script's: this interpreter's
    absolute path (:func:`render_script`)."""
    if spec.hadoop.java_home:
        return spec
    return spec.model_copy(update={"hadoop": spec.hadoop.model_copy(update={"java_home": str(runtime.java_home)})})


def clusters_dir(spec: JobSpec) -> Path:
    """Where the user's cluster directories go: ``<root>/<user>/hpc-hadoop``
    (:func:`launcher.plan.cluster_plan.clusters_root`)."""
    return cluster_plan.clusters_root(spec.filesystem.root)


def missing_dirs(path: Path) -> list[Path]:
    """``path`` and its parents that do not exist yet, deepest first: what ``mkdir -p path`` would make."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def remove_cluster_dir(run_dir: Path, made: list[Path]) -> None:
    """Remove a cluster directory the batch system refused, and the parents made for it (``made``, deepest first:
    :func:`missing_dirs` before it was made) that are empty: a refused submission leaves nothing behind."""
    shutil.rmtree(run_dir, ignore_errors=True)
    for directory in made:
        try:
            directory.rmdir()
        except OSError:  # not empty (another cluster of the user's since), or not ours to remove
            break


#: The first line of a cluster directory's ``job.yaml``: the job file it was resolved from (absolute) and the command.
RESOLVED_FROM = re.compile(r"^# Resolved from (?P<job_file>/.*) \(every layer applied\) by hpc-hadoop \S+\.$")


def job_file_of(run_dir: Path) -> Path | None:
    """The job file a cluster directory's ``job.yaml`` was resolved from (:data:`RESOLVED_FROM`), or ``None`` (a
    directory of an older release, whose line may name it relative to where the command ran)."""
    try:
        with open(run_dir / "job.yaml") as file:
            found = RESOLVED_FROM.match(file.readline().rstrip("\n"))
    except OSError:
        return None
    return Path(found.group("job_file")) if found else None


def make_cluster_dir(front: Front, job_file: Path, *, command: str = "submit") -> Path:
    """Make the cluster directory ``front`` planned (``submit``'s or ``start``'s front half: everything checkable
    checked, with the plan on the batch system's stand-in nodes or the allocation this process is in; the
    directories already there that the run would use are the user's: :func:`launcher.lifecycle.validate.
    check_own_dirs`), holding ``job.yaml`` (mode 0600), the fully resolved job file with the JDK found here
    (:func:`with_java`), its first line naming the job file by its absolute path (:data:`RESOLVED_FROM`: where
    ``hpc-hadoop notebook`` keeps notebooks by default). The cluster directory and each level above it below
    ``filesystem.root`` are made one at a time, mode 0700, and refused unless ours, not a link and not writable by
    others (:func:`launcher.plan.cluster_plan.make_cluster_directory`).
    ``hpc-hadoop run --run-dir`` takes it from there.

    Returns:
        The new cluster directory ``<root>/<user>/hpc-hadoop/<cluster id>``.

    Raises:
        UserError: a directory above the cluster directory that is not the user's (nothing is made then).
    """
    run_dir = Path(front.plan.run_dir)
    spec = with_java(front.spec, front.plan.runtime)
    cluster_plan.make_cluster_directory(run_dir, file=str(job_file))
    create_private(run_dir / "job.yaml",
                  f"# Resolved from {job_file.absolute()} (every layer applied) by hpc-hadoop {command}.\n"
                  + dump_yaml(spec.model_dump(mode="json", by_alias=True)))
    return run_dir


class SubmitRecord(Record):
    """``submit.json`` in the cluster directory: what was submitted (``scheduler``, ``job_id``, ``job_file``,
    ``hold``: by ``start``), when (``submitted``, epoch seconds) and what the batch system decided then
    (``settled``: the backend's record, :attr:`launcher.schedulers.base.Scheduler.settled_type`, PBS's flavor and
    commands: :class:`launcher.schedulers.pbs.PbsSettled`; read back as a plain
    :class:`~launcher.schedulers.base.Settled` holding its fields, for the backend's
    :meth:`~launcher.schedulers.base.Scheduler.recall`). ``settled`` is ``None`` in a ``submit.json`` of the
    release before, whose ``job.yaml`` holds what was settled
    (:meth:`launcher.schedulers.base.Settled.from_job_file`). Schema policy: :class:`launcher.util.records.Record`."""

    scheduler: str
    job_id: str
    submitted: float
    job_file: str
    hold: bool = False
    settled: SerializeAsAny[Settled] | None = None

    def dump(self) -> dict[str, Any]:
        """:meth:`Record.dump`, without ``settled`` when it is ``None`` (a ``submit.json`` of the release before is
        written back as it was)."""
        data = super().dump()
        if data.get("settled") is None:
            data.pop("settled", None)
        return data


def submit_batch(spec: JobSpec, job_file: Path, *, overwrite: bool, wait: bool, console: Console,
                 hold: bool = False) -> tuple[int, Path, str]:
    """Submit ``spec`` to its batch system; with ``wait``, follow it to its end.

    The front half is ``submit``'s (or ``start``'s) entrance of :func:`launcher.lifecycle.front.front_door`: what
    the batch system decides is settled and written into ``job.yaml`` (PBS: ``pbs.flavor``, ``pbs.commands``) and
    ``submit.json`` (:class:`SubmitRecord`'s ``settled``), and everything
    checkable is checked before submission (Java, Hadoop, jars, outputs), with a preview plan.
    If the batch system refuses the job, the just-made cluster directory is removed, with the parents made for it
    (:func:`remove_cluster_dir`), and its message passed on: nothing is left queued, nothing is left on the
    filesystem. The cluster goes into the user's index (``hpc-hadoop list``), which must be writable before anything
    is made (:func:`launcher.lifecycle.clusters.index.check_index`); should its entry not be written all the same, the
    job is cancelled and its directory removed.

    Args:
        hold: an interactive cluster (``hpc-hadoop start``): the batch script runs ``run --hold``.

    Returns:
        ``(exit code, cluster directory, job id)``: the run's exit code with ``wait``, else 0.

    Raises:
        UserError, CommandError: bad input, an index that cannot be written, a directory that is not the user's, or
            the batch system's refusal.
    """
    from launcher.lifecycle.clusters.index import check_index, register
    from launcher.lifecycle.front import front_door

    check_index()
    front = front_door("start" if hold else "submit", spec, job_file, overwrite=overwrite)
    command, spec, scheduler = front.command, front.spec, front.scheduler
    assert isinstance(scheduler, BatchScheduler), f"{spec.scheduler} cannot submit"
    made = missing_dirs(clusters_dir(spec))
    run_dir = make_cluster_dir(front, job_file, command=command)
    try:
        script = run_dir / "batch.sh"
        create_private(script, render_script(spec, scheduler, run_dir, overwrite=overwrite, hold=hold), 0o700)
        job_id = scheduler.submit(script)
    except HpcHadoopError:
        remove_cluster_dir(run_dir, made)
        raise
    SubmitRecord(scheduler=spec.scheduler, job_id=job_id, submitted=time.time(), job_file=str(job_file),
                 hold=hold, settled=front.settled).write(run_dir / "submit.json", indent=None)
    try:
        register(run_dir.name, run_dir, spec.scheduler, job_id, interactive=hold, required=True)
    except HpcHadoopError:  # never a job queued that `list` and `stop` do not know
        scheduler.cancel(job_id)
        remove_cluster_dir(run_dir, made)
        raise
    log = run_dir / f"batch-{job_id}.out"
    console.print(f"submitted {spec.scheduler} job {job_id}\nrun directory: {run_dir}\nlog: {log}", soft_wrap=True)
    if not wait:
        return 0, run_dir, job_id
    return follow(scheduler, job_id, run_dir, log, console, patience=spec.walltime + NO_ANSWER_MARGIN), run_dir, job_id


def follow(scheduler: BatchScheduler, job_id: str, run_dir: Path, log: Path, console: Console, *,
           patience: float | None = None, clock: Callable[[], float] = time.monotonic) -> int:
    """Follow a submitted job: its state changes, then its output as it grows, until it ends
    (:meth:`BatchScheduler.wait`). More than 5 polls in a row that find the job unknown end it too: a batch system
    that forgets a finished job at once, PBS Pro without job history, is then read from ``run.json``, and a line says
    so. A batch system that does not answer (``NO_ANSWER``) is waited through, with a line saying since when and
    what it printed, for ``patience`` seconds (the walltime plus :data:`NO_ANSWER_MARGIN`) or until ``run.json`` is
    final. The job's end is printed as the run's state when ``run.json`` is final (``job 10.pbshost: cancelled``
    for a ``qdel``: what ``list`` and ``status`` show, whatever word the batch system has for the job: a run that
    exited 143 is ``failed`` to PBS), else as the batch system's.

    Returns:
        The run's exit code from ``run.json`` (:data:`launcher.util.states.EXIT_CODES`); else 124 for a timed-out
        job, 143 cancelled (``qdel``, ``scancel``: 128 + SIGTERM), 0 completed, 1 failed or no answer.

    Raises:
        UserError: a command of the batch system is not installed.
    """
    from launcher.lifecycle.report import RunReport

    shown: list[JobState] = []  # the states printed: every change, except to UNKNOWN and NO_ANSWER
    offset = 0
    silent_since: list[float] = []  # when the batch system stopped answering (monotonic), while it does not
    report = run_dir / "run.json"

    def final_report() -> RunReport | None:
        data = RunReport.read_or_none(report)
        return data if data is not None and data.state.terminal else None

    def show(state: JobAnswer) -> None:
        nonlocal offset
        if isinstance(state, NoAnswer):
            if not silent_since:
                silent_since.append(clock())
                console.print(f"job {job_id}: unknown: batch system not answering since {time.strftime('%H:%M:%S')} "
                              f"({state}); waiting", soft_wrap=True)
        elif silent_since:
            silent_since.clear()
            console.print(f"job {job_id}: the batch system answers again")
        if isinstance(state, JobState) and state is not JobState.UNKNOWN and (not shown or state != shown[-1]):
            final = final_report() if state.terminal else None  # the run's own word for its end, as `list`'s
            console.print(f"job {job_id}: {final.state if final is not None else state.value}")
            shown.append(state)
        offset = copy_new_output(log, offset)

    def ended(state: JobAnswer) -> bool:
        if not isinstance(state, NoAnswer):
            return state.terminal
        return bool(final_report()) or (patience is not None and clock() - silent_since[0] > patience)

    polled = state_of(scheduler.wait(job_id, until=ended, each=show, tolerate=5).value)
    silent_s = clock() - silent_since[0] if silent_since else 0.0
    return _exit_code(job_id, polled, shown[-1] if shown else polled, run_dir, silent_s, console)


def _exit_code(job_id: str, polled: JobState, last: JobState, run_dir: Path, silent_s: float,
               console: Console) -> int:
    """The exit code :func:`follow` returns once the wait ended on ``polled`` (``last``: the last state shown):
    ``run.json``'s when final, else 143 (``cancelled``) for a job ``stop`` cancelled while queued (``ended.json``),
    else from the batch system's last state. ``silent_s``: how long it had not answered (``NO_ANSWER``)."""
    from launcher.lifecycle.clusters.index import ENDED_FILE, EndedRecord
    from launcher.lifecycle.report import RunReport

    report = run_dir / "run.json"
    data = RunReport.read(report) if report.exists() else None
    if polled is JobState.UNKNOWN:  # forgotten at once (PBS Pro without job history): run.json tells
        console.print(f"job {job_id}: no longer known to the batch system; run.json: "
                      + (f"{data.state}, exit code {data.exit_code}" if data else "none"), soft_wrap=True)
    if polled is JobState.NO_ANSWER:
        console.print(f"job {job_id}: the batch system did not answer for {silent_s:.0f} s; run.json: "
                      + (f"{data.state}, exit code {data.exit_code}" if data else "none"), soft_wrap=True)
    if data and data.state.terminal:
        return data.exit_code
    # `hpc-hadoop stop` cancelled it while queued (ENDED_FILE): the batch system may not keep such a job
    recorded = EndedRecord.read_or_none(run_dir / ENDED_FILE)
    if recorded is not None and recorded.state is ClusterState.CANCELLED and polled is JobState.UNKNOWN:
        console.print(f"job {job_id}: cancelled ({recorded.detail})", soft_wrap=True)
        return CANCELLED_EXIT
    if data is not None and last is JobState.COMPLETED:  # the run began and recorded no end: `list` says lost
        return 1
    return {JobState.COMPLETED: 0, JobState.TIMEOUT: TIMED_OUT_EXIT, JobState.CANCELLED: CANCELLED_EXIT}.get(last, 1)


def copy_new_output(log: Path, offset: int) -> int:
    """Write what ``log`` gained after its first ``offset`` bytes to standard output; returns the new offset (bytes).

    A log that does not exist (yet) is skipped.
    """
    if not log.exists():
        return offset
    with open(log, "rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    if chunk:
        sys.stdout.write(chunk.decode(errors="replace"))
        sys.stdout.flush()
    return offset + len(chunk)
