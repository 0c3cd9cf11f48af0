"""Clusters that stay up for interactive use: the index of a user's clusters, their state, stop and clean.

``hpc-hadoop start`` makes a cluster directory, then either submits a batch job whose script runs
``hpc-hadoop run --hold`` or, on the local backend and inside an existing allocation, starts that same
command detached from the terminal. The held run brings the cluster up, runs the job file's steps (if any)
and then keeps the cluster up until a stop is requested (the file ``stop-requested`` in the cluster
directory, which ``hpc-hadoop stop`` writes: any node of the shared filesystem can write it), the walltime
is nearly over, or a signal arrives; then it tears down as every run does and ``run.json`` says ``stopped``.

The state lives in the cluster directory (``plan.json``, ``run.json``, ``submit.json``, on the shared
filesystem); a small index of the user's clusters lives in ``$XDG_STATE_HOME/hpc-hadoop/clusters/``
(default ``~/.local/state/hpc-hadoop/clusters/``): one ``<cluster id>.json`` per cluster with its cluster
directory, scheduler and job id.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport, local_record_paths
from launcher.plan.cluster_plan import PlanSummary, check_cluster_directory
from launcher.plan.security import HTTP_SECRETS_GLOB
from launcher.schedulers.allocation import JobState
from launcher.util import polling
from launcher.util.errors import UserError
from launcher.util.records import Record
from launcher.util.states import ClusterState
from launcher.util.userdirs import clusters_dir

#: Name of the file whose existence asks a held cluster to tear down.
STOP_FILE = "stop-requested"
#: States of a cluster that is (or may soon be) using its allocation; ``unknown``: the batch system does not answer,
#: so the cluster may well run on.
ACTIVE: tuple[ClusterState, ...] = tuple(state for state in ClusterState if state.active)
#: A cluster directory's record of an end the batch system told (``lost``) or ``stop`` made (``cancelled``), written
#: where no final ``run.json`` will come: final, so ``list`` never asks the batch system about it again.
ENDED_FILE = "ended.json"
#: Batch job states of a released allocation (the terminal ones, and ``unknown``: the batch system no longer knows
#: the job).
RELEASED: frozenset[JobState] = frozenset(
    {JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT, JobState.UNKNOWN})


class IndexEntry(Record):
    """One cluster in the user's index (``<state dir>/<cluster id>.json``): its ``cluster_id``, cluster directory
    (``run_dir``), ``scheduler`` and batch ``job_id``; ``created`` (epoch seconds); ``holder_pid`` and
    ``holder_started`` (the process holding a cluster outside a batch job, and its start time in epoch seconds, to
    tell it from a later process with the same pid); ``interactive`` (made by ``start``); ``no_answer_since``
    (epoch seconds since the batch system has not answered about the job). Keys that are ``None`` are left out
    of the file. Schema policy: :class:`launcher.util.records.Record`.
    """

    cluster_id: str
    run_dir: str
    scheduler: str
    created: float = 0.0
    job_id: str | None = None
    holder_pid: int | None = None
    holder_started: float | None = None
    interactive: bool = False
    no_answer_since: float | None = None

    def dump(self) -> dict[str, Any]:
        """The JSON-ready form, without the keys that are ``None``."""
        return {key: value for key, value in super().dump().items() if value is not None}


class EndedRecord(Record):
    """:data:`ENDED_FILE`: an end the batch system told (``lost``) or ``stop`` made (``cancelled``), with ``detail``
    (why) and ``at`` (epoch seconds). Schema policy: :class:`launcher.util.records.Record`."""

    state: ClusterState
    detail: str = ""
    at: float = 0.0


def state_dir() -> Path:
    """``$XDG_STATE_HOME/hpc-hadoop/clusters`` (default ``~/.local/state/hpc-hadoop/clusters``:
    :func:`launcher.util.userdirs.clusters_dir`)."""
    return clusters_dir()


def check_index() -> Path:
    """Make the index's directory (:func:`state_dir`, mode 0700) and write a file in it, before a command starts a
    cluster that only the index lets the user reach afterwards (``start``, ``submit`` to a batch system, ``run
    --hold``): a state directory the user cannot write is then one line before anything starts, never a cluster
    running on that ``list`` and ``stop`` do not know.

    Returns:
        The directory.

    Raises:
        UserError: it cannot be made or written (the system's reason), naming it.
    """
    directory = state_dir()
    probe = directory / f".probe-{os.getpid()}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as exc:
        raise _unwritable(directory, exc) from None
    return directory


def _unwritable(directory: Path, exc: OSError) -> UserError:
    """The line for an index directory that cannot be written."""
    return UserError(f"cannot write the index of your clusters in {directory}: {exc.strerror or exc}",
                     field="XDG_STATE_HOME",
                     fix="make it writable, or set XDG_STATE_HOME to a directory of yours that you can write")


def register(cluster_id: str, run_dir: str | Path, scheduler: str, job_id: str | None = None, *,
             holder_pid: int | None = None, interactive: bool = False, required: bool = False) -> Path:
    """Add (or update) a cluster in the user's index; returns the index entry's path. The entry is written mode
    0600 (:meth:`launcher.util.records.Record.write`), in a directory made 0700.

    Args:
        holder_pid: the process that holds the cluster (the detached ``run --hold`` on the local backend or
            inside an allocation); ``None`` for a batch job (the batch system's job id tells its state).
        interactive: made by ``hpc-hadoop start``.
        required: raise when the entry cannot be written (a cluster that only the index can reach: ``start``,
            ``submit`` to a batch system), instead of leaving the index as it is.

    Without ``required`` the index is a convenience: failing to write it (read-only home on a compute node, where the
    entry of ``start``/``submit`` is already written) never stops a run.

    Raises:
        UserError: ``required`` and the entry could not be written.
    """
    path = state_dir() / f"{cluster_id}.json"
    known = IndexEntry.read_or_none(path)  # None when missing or unreadable
    entry = IndexEntry(cluster_id=cluster_id, run_dir=str(run_dir), scheduler=scheduler, created=time.time())
    if known is not None:
        entry = known.model_copy(update={"cluster_id": cluster_id, "run_dir": str(run_dir), "scheduler": scheduler})
        if "created" not in known.model_fields_set:
            entry.created = time.time()
    if job_id is not None:
        entry.job_id = job_id
    if holder_pid is not None:
        entry.holder_pid = holder_pid
        entry.holder_started = psutil.Process(holder_pid).create_time()
    entry.interactive = entry.interactive or interactive
    _write_entry(path, entry, required=required)
    return path


def _write_entry(path: Path, entry: IndexEntry, *, required: bool = False) -> None:
    """Write an index entry atomically, mode 0600; an index that cannot be written is left as it is, unless
    ``required`` (then :class:`UserError`)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        entry.write(path)
    except OSError as exc:
        if required:
            raise _unwritable(path.parent, exc) from None


def index_entries() -> list[IndexEntry]:
    """Every entry of the index, oldest first (unreadable entries are skipped)."""
    entries = []
    for path in sorted(state_dir().glob("*.json")):
        entry = IndexEntry.read_or_none(path)
        if entry is not None:
            entries.append(entry)
    return sorted(entries, key=lambda e: e.created)


@dataclass
class ClusterStatus:
    """What ``hpc-hadoop list`` and ``status`` show of one cluster.

    Attributes:
        cluster_id: the cluster id (``<name>-<yyyymmdd-HHMMSS>-<hex4>``).
        run_dir: the cluster directory.
        scheduler: ``local``, ``slurm``...; ``job_id`` its job id (``None`` on the local backend).
        state: a :class:`~launcher.util.states.ClusterState`: ``pending`` (queued), ``starting`` (bring-up),
            ``running`` (steps), ``ready`` (up, held for interactive use), ``stopping``, ``lost`` (its batch job or
            holder process ended without a final report: killed by the batch system, ``qdel``/``scancel``, a node
            failure; the logs stay readable), ``cancelled`` (stopped while its job was still queued, or the run's own
            ``cancelled``), ``unknown`` (the batch system does not answer: ``detail`` says since when and what it
            printed; the cluster may run on), ``gone`` (directory removed), ``unreachable`` (nothing of its
            directory can be read), or a final state of ``run.json`` (``stopped``, ``succeeded``, ``failed``,
            ``bringup_failed``, ``interrupted``, ``cancelled``, ``timed_out``; one exit code each:
            :data:`launcher.util.states.EXIT_CODES`). ``list --json`` writes it as its plain string.
        detail: why, for ``lost`` and failures.
        nodes: node names; ``head`` the ResourceManager's node.
        created: epoch seconds; ``walltime_left_s`` seconds until the walltime ends (``None`` if unknown).
        rm_web, jhs_web: ResourceManager and JobHistoryServer web addresses.
        interactive: made by ``start``.
    """

    cluster_id: str
    run_dir: str
    scheduler: str
    job_id: str | None
    state: ClusterState
    detail: str = ""
    nodes: list[str] | None = None
    head: str | None = None
    created: float | None = None
    walltime_left_s: float | None = None
    rm_web: str | None = None
    jhs_web: str | None = None
    interactive: bool = False

    @property
    def active(self) -> bool:
        """True while the cluster holds (or waits for) its allocation."""
        return self.state.active

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``list --json``): the state as its plain string."""
        return {**self.__dict__, "state": self.state.value, "active": self.active}


def _holder_alive(entry: IndexEntry) -> bool:
    pid = entry.holder_pid
    if not pid:
        return False
    try:
        proc = psutil.Process(int(pid))
        return bool(abs(proc.create_time() - float(entry.holder_started or 0)) < 1.0 and proc.is_running()
                    and proc.status() != psutil.STATUS_ZOMBIE)
    except (psutil.Error, ValueError):
        return False


@dataclass(frozen=True)
class BatchAnswer:
    """A batch job's state as :func:`batch_state` tells it.

    Attributes:
        state: the job's state; ``JobState.NO_ANSWER`` when the batch system did not answer.
        why: for ``NO_ANSWER``, the command that gave no answer and what it printed (else empty).
    """

    state: JobState
    why: str = ""

    @property
    def answered(self) -> bool:
        """Whether the batch system answered (anything but ``NO_ANSWER``)."""
        return self.state is not JobState.NO_ANSWER


#: What tells a job's state, for :func:`status_of`: ``(scheduler, job_id) → BatchAnswer``.
JobStateOf = Callable[[str, str], BatchAnswer]


#: Backends already recalled from their ``job.yaml`` (by scheduler and cluster directory) while
#: :func:`_job_yaml_read_once` is in effect; ``None`` otherwise (each call reads the file).
_recalled: dict[tuple[str, str], Any] | None = None


@contextlib.contextmanager
def _job_yaml_read_once() -> Iterator[None]:
    """Within it, :func:`submitted_backend` reads a cluster's ``job.yaml`` once (``stop`` polls the batch system
    every half second for minutes: what the submission settled does not change meanwhile)."""
    global _recalled
    outer, _recalled = _recalled, ({} if _recalled is None else _recalled)
    try:
        yield
    finally:
        _recalled = outer


def submitted_backend(scheduler: str, run_dir: str | Path | None) -> Any:
    """The scheduler backend of a cluster, with what its submission settled (the cluster directory's ``job.yaml``:
    PBS's ``pbs.flavor`` and ``pbs.commands``, :meth:`BatchScheduler.recall`): its commands are the ones found at
    submission, never whatever ``qstat`` comes first on this shell's ``PATH``. Read once for all the polls of a
    ``stop`` (:func:`_job_yaml_read_once`), and only from a cluster directory that is the user's own, as is every
    level above it (:func:`launcher.plan.cluster_plan.check_cluster_directory`): another user's ``job.yaml`` would
    name commands of hers.

    Raises:
        UserError: the cluster directory, or a level above it, is refused.
    """
    import yaml

    from launcher.schedulers import get_scheduler
    from launcher.schedulers.base import BatchScheduler
    from launcher.util.yamlio import load_yaml

    key = (scheduler, str(run_dir))
    if _recalled is not None and key in _recalled:
        return _recalled[key]
    backend = get_scheduler(scheduler)
    if isinstance(backend, BatchScheduler) and run_dir is not None:
        check_cluster_directory(run_dir, field="ID", missing_ok=True)  # its job.yaml names the commands to run
    if _recalled is not None:
        _recalled[key] = backend
    if isinstance(backend, BatchScheduler) and run_dir is not None:
        try:
            submitted = load_yaml(Path(run_dir, "job.yaml").read_text())
        except (OSError, yaml.YAMLError):
            submitted = None
        if isinstance(submitted, dict):
            backend.recall(submitted)
    return backend


def batch_state(scheduler: str, job_id: str, run_dir: str | Path | None = None) -> BatchAnswer:
    """The batch job's state (a :class:`JobState`: ``pending``, ``running``, ``completed``... ``unknown``: the batch
    system answered that it does not know the job; ``no_answer``: it did not answer, ``why`` says how), asked with
    the commands recorded at submission (:func:`submitted_backend`) and again while the batch system does not know
    the job (:meth:`BatchScheduler.confirmed_state`): one empty answer never makes a cluster lost.

    Raises:
        UserError: the cluster directory (``run_dir``) is not the user's own (:func:`submitted_backend`).
    """
    from launcher.schedulers.base import BatchScheduler

    backend = submitted_backend(scheduler, run_dir)
    if not isinstance(backend, BatchScheduler):
        return BatchAnswer(JobState.UNKNOWN)
    try:
        state = backend.confirmed_state(job_id)
    except Exception as exc:  # noqa: BLE001 - a broken scheduler command must not break `list`
        return BatchAnswer(JobState.NO_ANSWER, str(exc))
    return BatchAnswer(state, str(backend.no_answer) if backend.no_answer else "")


def record_end(run_dir: str | Path, state: ClusterState, detail: str) -> None:
    """Write :data:`ENDED_FILE` (``state``: ``lost`` or ``cancelled``) into a cluster directory that has no final
    ``run.json``; a directory that cannot be written is left as it is (the batch system is asked again next time)."""
    try:
        EndedRecord(state=state, detail=detail, at=time.time()).write(Path(run_dir, ENDED_FILE))
    except OSError:
        pass


def _remember(cluster_id: str, **fields: Any) -> None:
    """Set (``None``: remove) ``fields`` of a cluster's index entry; an index that cannot be written is left."""
    path = state_dir() / f"{cluster_id}.json"
    entry = IndexEntry.read_or_none(path)
    if entry is None:
        return
    _write_entry(path, entry.model_copy(update=fields))


def status_of(entry: IndexEntry | Mapping[str, Any], *,
              job_state: JobStateOf | None = None) -> ClusterStatus:
    """The current state of an indexed cluster, from its directory and, while it is not final, from the
    batch system (or the holder process): a cluster whose batch job (or holder process) ended without a final
    ``run.json`` is ``lost``, on every scheduler.

    Args:
        entry: an index entry (``cluster_id``, ``run_dir``, ``scheduler``, ``job_id``, ``holder_pid``...).
        job_state: ``(scheduler, job_id) →`` :class:`BatchAnswer` (default: :func:`batch_state` with the cluster's
            recorded commands; replaceable for tests).

    A batch system that does not answer makes the cluster ``unknown`` (never ``lost``); an end it told (``lost``)
    or that ``stop`` made (``cancelled``) is recorded (:func:`record_end`) and final: not asked again. A cluster
    directory that is not the user's own, or below a level that is not
    (:func:`launcher.plan.cluster_plan.check_cluster_directory`), makes it ``unreachable`` with the refusal's line as
    ``detail``: nothing in it is read.
    """
    if not isinstance(entry, IndexEntry):
        entry = IndexEntry.model_validate(entry)
    run_dir = Path(entry.run_dir)
    status = ClusterStatus(cluster_id=entry.cluster_id, run_dir=str(run_dir), scheduler=entry.scheduler,
                           job_id=entry.job_id, state=ClusterState.PENDING, created=entry.created,
                           interactive=entry.interactive)
    if _out_of_reach(status, run_dir):
        return status
    report = RunReport.read_or_none(run_dir / "run.json")
    if _final_from_records(status, run_dir, report):
        return status
    # Not final: is the allocation (or the holder process) still there?
    if status.job_id and status.scheduler != "local":
        answer = _from_the_batch_system(status, status.job_id, entry, run_dir, report, job_state)
        if answer is None:
            return status
        alive, gone_why = answer
    else:
        alive = _holder_alive(entry)
        gone_why = f"the process holding it (pid {entry.holder_pid}) is gone"
    if not alive:
        status.state, status.detail = ClusterState.LOST, gone_why + ", with no final run.json"
        status.walltime_left_s = None
        record_end(run_dir, status.state, status.detail)
    elif report is None or report.bringup_s is None:
        status.state = ClusterState.STARTING
    elif (run_dir / STOP_FILE).exists():
        status.state = ClusterState.STOPPING
    else:
        status.state = ClusterState.READY if report.hold else ClusterState.RUNNING
    return status


def _out_of_reach(status: ClusterStatus, run_dir: Path) -> bool:
    """Whether nothing of ``run_dir`` can be read, for :func:`status_of` (then ``status`` says why): ``gone``, or
    ``unreachable`` when its filesystem does not answer (``ENOTCONN``: mounted, its client dead) or when it or a level
    above it is not the user's own (:func:`launcher.plan.cluster_plan.check_cluster_directory`: the refusal's line in
    ``detail``)."""
    try:
        if not run_dir.is_dir():
            status.state, status.detail = ClusterState.GONE, "cluster directory removed"
            return True
        check_cluster_directory(run_dir, field="ID", missing_ok=True)  # nothing read unless every level is ours
    except UserError as refused:
        status.state, status.detail = ClusterState.UNREACHABLE, str(refused)
        return True
    except OSError as err:  # e.g. ENOTCONN: the filesystem it is on is mounted but does not answer
        status.state, status.detail = ClusterState.UNREACHABLE, f"its filesystem does not answer: {err.strerror}"
        return True
    return False


def _final_from_records(status: ClusterStatus, run_dir: Path, report: RunReport | None) -> bool:
    """Fill ``status`` from the cluster directory's ``plan.json``, ``run.json``, the final record kept on this node
    (:func:`_kept_on_this_node`) and ``ended.json``; returns whether they say the cluster's final state (then
    ``status`` holds it)."""
    plan = PlanSummary.read_or_none(run_dir / "plan.json")
    if plan:
        status.nodes = [n.name for n in plan.nodes]
        status.head = plan.master.name
        status.job_id = status.job_id or plan.job_id
        if plan.deadline:
            status.walltime_left_s = float(plan.deadline) - time.time()
    if report:
        status.rm_web, status.jhs_web = report.rm_web, report.jhs_web
        status.nodes = report.nodes or status.nodes
        if report.state.terminal:
            status.state, status.detail = ClusterState.of_run(report.state), report.error or ""
            status.walltime_left_s = None
            return True
    if _kept_on_this_node(status, run_dir):  # the run's own end outranks a "lost" that status concluded meanwhile
        return True
    ended = EndedRecord.read_or_none(run_dir / ENDED_FILE)
    if ended and ended.state in (ClusterState.LOST, ClusterState.CANCELLED):
        status.state, status.detail, status.walltime_left_s = ended.state, ended.detail, None
        return True
    return False


#: What a run's final record kept on its node leaves behind in the cluster directory's ``krb/`` when that could not be
#: written (the realm's keys and the cookie secrets), removed when the record is written back.
LEFT_KEYS = ("*.keytab", "*.ccache", HTTP_SECRETS_GLOB)


def _kept_on_this_node(status: ClusterStatus, run_dir: Path) -> bool:
    """A final record the run kept on this node because the cluster directory could not be written
    (:func:`launcher.lifecycle.report.local_record_paths`: ``/var/tmp/hpc-hadoop-<user>/<id>.run.json``...), for
    :func:`status_of` when ``run.json`` says no end (issue 37 item 3: after a remount, ``status`` said ``lost``
    though the kept record said ``failed (filesystem gone)``). Returns whether one was found (``status`` then holds its
    state and cause). Once the cluster directory answers, the record is written back into it as ``run.json``, the
    realm's keys it could not remove then are removed, and the node's copy goes; where the directory still refuses,
    the copy stays and is read again next time."""
    for path in local_record_paths(status.cluster_id):
        kept = RunReport.read_or_none(path)
        if kept is None or not kept.state.terminal or Path(kept.run_dir) != run_dir:
            continue
        status.state, status.walltime_left_s = ClusterState.of_run(kept.state), None
        said = kept.error or ""
        status.detail = said if str(path) in said else f"{said} (the final record kept on this node: {path})".lstrip()
        try:
            kept.kept_at = None
            kept.error = f"{kept.error or ''}; written back from {path} by hpc-hadoop status".lstrip("; ")
            RunRecord.write_back(kept, run_dir)
            for pattern in LEFT_KEYS:
                for key in (run_dir / "krb").glob(pattern):
                    key.unlink()
            path.unlink()
        except OSError:
            pass  # the cluster directory still refuses: the copy stays where it is
        return True
    return False


def _from_the_batch_system(status: ClusterStatus, job_id: str, entry: IndexEntry, run_dir: Path,
                           report: RunReport | None,
                           job_state: JobStateOf | None) -> tuple[bool, str] | None:
    """What the batch system says of a cluster's job, for :func:`status_of`: ``None`` when that settles
    ``status`` (``unknown``: no answer, recorded in the index; ``pending``; ``cancelled`` while queued, recorded),
    else ``(alive, why it is gone)``."""
    answer = (job_state or (lambda name, job: batch_state(name, job, run_dir)))(status.scheduler, job_id)
    batch = answer.state
    if not answer.answered:
        since = float(entry.no_answer_since or time.time())
        if entry.no_answer_since is None:
            entry.no_answer_since = since
            _remember(status.cluster_id, no_answer_since=since)
        status.state = ClusterState.UNKNOWN
        status.detail = (f"batch system not answering since {time.strftime('%H:%M:%S', time.localtime(since))}"
                         + (f": {answer.why}" if answer.why else ""))
        return None
    if entry.no_answer_since is not None:
        entry.no_answer_since = None
        _remember(status.cluster_id, no_answer_since=None)
    if batch is JobState.PENDING:
        status.state = ClusterState.PENDING
        return None
    if batch is JobState.CANCELLED and report is None:  # cancelled before it ran: nothing was lost
        status.state, status.walltime_left_s = ClusterState.CANCELLED, None
        status.detail = f"the batch job {status.job_id} was cancelled while queued"
        record_end(run_dir, status.state, status.detail)
        return None
    gone_why = f"the batch job {status.job_id} is {batch.value}" if batch is not JobState.UNKNOWN else \
        f"the batch system no longer knows job {status.job_id}"
    return batch is JobState.RUNNING, gone_why


def statuses() -> list[ClusterStatus]:
    """The state of every indexed cluster, oldest first."""
    return [status_of(entry) for entry in index_entries()]


def find(cluster: str | None) -> ClusterStatus:
    """The cluster a command names: its id, a unique prefix of it, or its batch job id (any state); with ``cluster``
    ``None``, the one running cluster. One rule for every command that takes an ID (``status``, ``env``, ``exec``,
    ``logs``, ``stop``): without one, only running clusters count (:attr:`ClusterStatus.active`: queued, starting,
    up, stopping, or ``unknown``); finished ones are never picked, whatever their number.

    Raises:
        UserError: no match, several matches, or (``cluster`` ``None``) not exactly one running cluster (the line
            lists the running ids, or says there is none, and how to give an ID).
    """
    entries = index_entries()
    if cluster is None:
        known = [status_of(e) for e in entries]
        running = [s for s in known if s.active]
        if len(running) == 1:
            return running[0]
        if not running:
            finished = len(known)
            raise UserError("no running cluster" + (f" ({finished} finished)" if finished else ""), field="ID",
                            fix="give an ID: hpc-hadoop list" if finished else "start one: hpc-hadoop start JOB_FILE")
        raise UserError(f"{len(running)} clusters are running: {', '.join(s.cluster_id for s in running)}",
                        field="ID", fix="give an ID: hpc-hadoop list")
    exact = [e for e in entries if cluster in (e.cluster_id, str(e.job_id))]
    matches = exact or [e for e in entries if e.cluster_id.startswith(cluster)]
    if len(matches) == 1:
        return status_of(matches[0])
    if not matches:
        raise UserError(f"no cluster {cluster!r} in {state_dir()}", field="ID", fix="see `hpc-hadoop list`")
    raise UserError(f"{cluster!r} matches {len(matches)} clusters: "
                    f"{', '.join(e.cluster_id for e in matches)}", field="ID", fix="give more of the id")


@_job_yaml_read_once()
def request_stop(status: ClusterStatus, *, timeout: float = 120.0, poll: float = 0.5,
                 on_wait: Callable[[str], None] | None = None) -> ClusterStatus:
    """Stop a cluster: a job still queued is cancelled (the cluster is then ``cancelled``); else ask its holder to
    tear down (``stop-requested`` in the cluster directory: whatever the batch system says, or when it does not
    answer), wait for its final ``run.json``, then make sure the allocation is released (cancel the batch job, with
    the commands recorded at submission, if it is still there). Logs, history and ``run.json`` stay in the cluster
    directory.

    Args:
        timeout: seconds to wait for the teardown before cancelling the job / terminating the holder
            (which still tears down: the batch script passes SIGTERM on).
        poll: seconds between polls (:func:`launcher.util.polling.poll`).
        on_wait: called with a line to show while waiting (and with why a cancel did not go through).

    Returns:
        The cluster's state afterwards (still active, e.g. ``unknown``, when the batch system did not answer the
        cancel).
    """
    run_dir = Path(status.run_dir)
    notify = on_wait or (lambda text: None)
    entry = next((e for e in index_entries() if e.cluster_id == status.cluster_id), None) or _entry_of(status)
    if status.state is ClusterState.PENDING and status.job_id:
        failure = _cancel(status)
        if failure is None:
            after = _wait_released(status, entry, 30.0, poll)
            if after.state in (ClusterState.LOST, ClusterState.PENDING) or not (run_dir / "run.json").exists():
                record_end(run_dir, ClusterState.CANCELLED, f"stopped while queued (`hpc-hadoop stop` at "
                                                            f"{time.strftime('%Y-%m-%dT%H:%M:%S')})")
            return status_of(entry)
        notify(f"cannot cancel the queued job: {failure}")
    (run_dir / STOP_FILE).write_text(f"stop requested at {time.strftime('%Y-%m-%dT%H:%M:%S')} "
                                     f"by pid {os.getpid()} on {os.uname().nodename}\n")
    notify("teardown requested")
    teardown = polling.poll(lambda: status_of(entry), done=lambda current: not current.active,
                            interval=poll, backoff=1.0, timeout=timeout)
    if teardown.timed_out:
        notify(f"no teardown within {timeout:.0f} s: cancelling")
        if status.job_id and status.scheduler != "local":
            failure = _cancel(status)
            if failure is not None:
                notify(f"the batch system did not answer the cancel: {failure}")
                return status_of(entry)
        elif entry.holder_pid and _holder_alive(entry):
            psutil.Process(int(entry.holder_pid)).terminate()
    return _wait_released(status, entry, 60.0, poll)


def cancel_leftover(status: ClusterStatus) -> tuple[JobState | None, str | None]:
    """Cancel the batch job of a cluster that is no longer active (a final ``run.json``, ``lost``, ``cancelled``) when
    the batch system still knows it as queued or running, or does not answer: ``stop`` never leaves a job behind.
    The cancel runs the commands recorded at submission.

    Returns:
        ``(state, failure)``: the :class:`JobState` the job had when it was cancelled (``pending``, ``running``,
        ``no_answer``), ``None`` when there was none to cancel (the local backend, or a job the batch system no
        longer runs); and why the cancel did not go through (the batch system did not answer it), else ``None``.
    """
    if not status.job_id or status.scheduler == "local":
        return None, None
    state = batch_state(status.scheduler, status.job_id, status.run_dir).state
    if state not in (JobState.PENDING, JobState.RUNNING, JobState.NO_ANSWER):
        return None, None
    failure = _cancel(status)
    return state, (str(failure) if failure is not None else None)


def _cancel(status: ClusterStatus) -> Any:
    """Cancel a cluster's batch job with the commands recorded at submission (:func:`submitted_backend`); returns
    ``None`` when it went through (or the job had ended), else the :class:`NoAnswer` of the cancel command."""
    backend = submitted_backend(status.scheduler, status.run_dir)
    cancel = getattr(backend, "cancel", None)
    if cancel and status.job_id:
        return cancel(status.job_id)
    return None


def _entry_of(status: ClusterStatus) -> IndexEntry:
    """An index entry made from what ``status`` knows, for a cluster no longer in the index."""
    return IndexEntry(cluster_id=status.cluster_id, run_dir=status.run_dir, scheduler=status.scheduler,
                      job_id=status.job_id, created=status.created or 0.0, interactive=status.interactive)


def _wait_released(status: ClusterStatus, entry: IndexEntry | Mapping[str, Any], timeout: float,
                   poll: float) -> ClusterStatus:
    """Wait up to ``timeout`` seconds until the batch job is over (or the holder process exited), polling every
    ``poll`` seconds; cancel a job still there after half of it. A batch system that does not answer ends the
    wait at once (nothing can be learnt by waiting). ``entry``: the cluster's index entry (empty: none, made from
    ``status``)."""
    if not isinstance(entry, IndexEntry):
        entry = IndexEntry.model_validate(entry) if entry else _entry_of(status)
    known = entry

    def released() -> bool:
        if status.job_id and status.scheduler != "local":
            answer = batch_state(status.scheduler, status.job_id, status.run_dir)
            return answer.state in RELEASED or not answer.answered
        return not _holder_alive(known)

    def wait(seconds: float) -> bool:
        return polling.poll(released, done=bool, interval=poll, backoff=1.0, timeout=seconds).done

    if not wait(timeout / 2):
        if status.job_id:
            _cancel(status)
        wait(timeout / 2)
    return status_of(known)


#: The subdirectory of a cluster directory that ``clean`` keeps unless told ``--all``: the default
#: ``filesystem.output_dir``, where a job that writes into its cluster directory puts its results.
KEPT = "output"


@dataclass
class Cleanup:
    """What ``clean`` deletes of one finished cluster (:func:`cleanup_of`).

    Attributes:
        status: the cluster.
        delete: the paths deleted (the whole cluster directory, or its entries but :data:`KEPT`); empty when the
            directory is gone (only the index entry goes).
        delete_bytes: their size in bytes (files' sizes, as ``du --apparent-size``).
        keep: the :data:`KEPT` directory that stays, or ``None``.
        keep_bytes: its size in bytes.
    """

    status: ClusterStatus
    delete: list[Path]
    delete_bytes: int
    keep: Path | None
    keep_bytes: int


def _bytes(path: Path) -> int:
    """Apparent size in bytes of a file or a directory tree (symlinks not followed; unreadable parts count 0)."""
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


def cleanup_of(target: ClusterStatus, *, everything: bool = False) -> Cleanup:
    """What ``clean`` would delete of ``target``'s directory: all of it with ``everything`` (``--all``) or when it
    has no :data:`KEPT` directory (or an empty one), else everything but :data:`KEPT`."""
    run_dir = Path(target.run_dir)
    if not run_dir.is_dir():
        return Cleanup(target, [], 0, None, 0)
    kept = run_dir / KEPT
    if everything or not kept.is_dir() or kept.is_symlink() or not any(kept.iterdir()):
        return Cleanup(target, [run_dir], _bytes(run_dir), None, 0)
    delete = sorted(p for p in run_dir.iterdir() if p.name != KEPT)
    return Cleanup(target, delete, sum(_bytes(p) for p in delete), kept, _bytes(kept))


def clean(targets: list[ClusterStatus], *, everything: bool = False) -> list[str]:
    """Delete the cluster directories of finished clusters, but for each one's :data:`KEPT` directory unless
    ``everything`` (:func:`cleanup_of`), and their index entries.

    Raises:
        UserError: one of ``targets`` is still active (nothing is deleted then).

    Returns:
        The cluster directories cleaned (deleted, or emptied but for :data:`KEPT`).
    """
    running = [t for t in targets if t.active]
    if running:
        raise UserError(f"cluster {running[0].cluster_id} is {running[0].state}: its directory "
                        f"{running[0].run_dir} is in use", field="ID",
                        fix=f"stop it first: hpc-hadoop stop {running[0].cluster_id}")
    removed = []
    for target in targets:
        cleanup = cleanup_of(target, everything=everything)
        for path in cleanup.delete:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        if cleanup.delete:
            removed.append(target.run_dir)
        (state_dir() / f"{target.cluster_id}.json").unlink(missing_ok=True)
    return removed
