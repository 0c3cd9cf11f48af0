"""A cluster's state as ``hpc-hadoop list`` and ``status`` show it, derived from its cluster directory and the batch
system's answer (or its holder process): :func:`status_of`, :func:`statuses`, :func:`find`.

Nothing here writes a file or edits the index (tests/unit/lifecycle/clusters/test_writers.py holds it to that): what a
look learned that the next one need not ask again (an end the batch system told, since when it has not answered, a
final record kept on this node) comes back in :attr:`ClusterStatus.observed`, for the commands that may write to pass
to :func:`launcher.lifecycle.clusters.index.record`. Never an error for an answer: a batch command that fails is
``unknown``, a mount that does not answer ``unreachable``; neither is ``lost`` nor ``gone``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from launcher.lifecycle.clusters.index import ENDED_FILE, EndedRecord, IndexEntry, Observation, index_entries, state_dir
from launcher.lifecycle.report import RunReport, local_record_paths
from launcher.plan.cluster_plan import PlanSummary, check_cluster_directory
from launcher.schedulers.allocation import JobState
from launcher.util.errors import UserError
from launcher.util.states import ClusterState

if TYPE_CHECKING:  # the backends are imported where a batch system is asked
    from launcher.schedulers.base import BatchScheduler, Scheduler, Settled

#: Name of the file whose existence asks a held cluster to tear down (``stop`` writes it:
#: :func:`launcher.lifecycle.clusters.stop.request_stop`; the held run and :func:`status_of` read it).
STOP_FILE = "stop-requested"
#: States of a cluster that is (or may soon be) using its allocation; ``unknown``: the batch system does not answer,
#: so the cluster may well run on.
ACTIVE: tuple[ClusterState, ...] = tuple(state for state in ClusterState if state.active)


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
        observed: what the look learned that is worth keeping (an
            :class:`~launcher.lifecycle.clusters.index.Observation`, for
            :func:`launcher.lifecycle.clusters.index.record`), or ``None``; not shown.
        batch: what the batch system answered this look (a :class:`BatchAnswer`), ``None`` when it was not asked (a
            final record, the local backend); not shown.
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
    observed: Observation | None = field(default=None, repr=False, compare=False)
    batch: BatchAnswer | None = field(default=None, repr=False, compare=False)

    @property
    def active(self) -> bool:
        """True while the cluster holds (or waits for) its allocation."""
        return self.state.active

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``list --json``): the state as its plain string (:attr:`observed` and :attr:`batch` left
        out)."""
        shown = {key: value for key, value in self.__dict__.items() if key not in ("observed", "batch")}
        return {**shown, "state": self.state.value, "active": self.active}


def _learn(status: ClusterStatus, **what: Any) -> None:
    """Add ``what`` (:class:`~launcher.lifecycle.clusters.index.Observation`'s fields) to ``status.observed``."""
    known = status.observed or Observation(cluster_id=status.cluster_id, run_dir=status.run_dir)
    status.observed = replace(known, **what)


def holder_alive(entry: IndexEntry) -> bool:
    """Whether the process holding a cluster outside a batch job (``holder_pid``, started at ``holder_started``: not a
    later process with the same pid) still runs (a zombie does not)."""
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


def submitted_backend(scheduler: str, run_dir: str | Path | None) -> Scheduler:
    """The scheduler backend of a cluster, with what its submission settled recalled
    (:meth:`~launcher.schedulers.base.Scheduler.recall`: PBS's flavor and commands), so that its commands are the ones
    found at submission, never whatever ``qstat`` comes first on this shell's ``PATH``. What was settled is the
    record in the cluster directory's ``submit.json`` (:class:`launcher.lifecycle.submit.SubmitRecord`'s
    ``settled``); a cluster directory of the release before has none there, and its ``job.yaml`` is read instead
    (:meth:`~launcher.schedulers.base.Settled.from_job_file`: ``pbs.flavor``, ``pbs.commands``). Read only from a
    cluster directory that is the user's own, as is every level above it
    (:func:`launcher.plan.cluster_plan.check_cluster_directory`): another user's files would name commands of hers.
    An unreadable or invalid record recalls nothing. Reads the files at each call (``stop`` reads them once for all
    its polls: :class:`ReadOnce`).

    Raises:
        UserError: the cluster directory, or a level above it, is refused.
    """
    from launcher.schedulers import get_scheduler
    from launcher.schedulers.base import BatchScheduler

    backend = get_scheduler(scheduler)
    if not isinstance(backend, BatchScheduler) or run_dir is None:
        return backend
    check_cluster_directory(run_dir, field="ID", missing_ok=True)  # its records name the commands to run
    settled = _settled_at_submission(backend, Path(run_dir))
    if settled is not None:
        try:
            backend.recall(settled)
        except ValueError:  # pydantic's ValidationError: a record this release cannot read
            pass
    return backend


def _settled_at_submission(backend: BatchScheduler, run_dir: Path) -> Settled | None:
    """What the submission of the cluster in ``run_dir`` settled, for :func:`submitted_backend`: ``submit.json``'s
    record, else (a cluster directory of the release before) the one in its ``job.yaml``, read only when the
    backend settles anything; ``None`` when neither holds one."""
    import yaml

    from launcher.lifecycle.submit import SubmitRecord
    from launcher.util.yamlio import load_yaml

    submitted = SubmitRecord.read_or_none(run_dir / "submit.json")
    if submitted is not None and submitted.settled is not None:
        return submitted.settled
    if not backend.settled_type.decides():
        return None
    try:
        job = load_yaml((run_dir / "job.yaml").read_text())
    except (OSError, yaml.YAMLError):
        return None
    return backend.settled_type.from_job_file(job) if isinstance(job, Mapping) else None


#: Where a look gets a cluster's backend: ``(scheduler, run_dir) →`` the backend with what its submission settled
#: (:func:`submitted_backend`, or a :class:`ReadOnce` of it).
Backends = Callable[[str, "str | Path | None"], "Scheduler"]


class ReadOnce:
    """:func:`submitted_backend`, each cluster directory's records read at the first call only: for the polls of one
    ``stop`` (every half second for minutes; what the submission settled does not change meanwhile). Each command
    that polls makes its own; nothing is kept between commands."""

    def __init__(self) -> None:
        self._backends: dict[tuple[str, str | None], Scheduler] = {}

    def __call__(self, scheduler: str, run_dir: str | Path | None) -> Scheduler:
        """The backend of :func:`submitted_backend`, read at the first call for ``(scheduler, run_dir)``.

        Raises:
            UserError: as :func:`submitted_backend` (asked again at the next call).
        """
        key = (scheduler, None if run_dir is None else str(Path(run_dir)))
        if key not in self._backends:
            self._backends[key] = submitted_backend(scheduler, run_dir)
        return self._backends[key]


def batch_state(scheduler: str, job_id: str, run_dir: str | Path | None = None, *,
                backends: Backends = submitted_backend) -> BatchAnswer:
    """The batch job's state (a :class:`JobState`: ``pending``, ``running``, ``completed``... ``unknown``: the batch
    system answered that it does not know the job; ``no_answer``: it did not answer, ``why`` says how: the
    :class:`~launcher.schedulers.base.NoAnswer`), asked with the commands recorded at submission
    (``backends``: :func:`submitted_backend`) and again while the batch system does not know the job
    (:meth:`BatchScheduler.confirmed_state`): one empty answer never makes a cluster lost.

    Raises:
        UserError: the cluster directory (``run_dir``) is not the user's own (:func:`submitted_backend`).
    """
    from launcher.schedulers.base import BatchScheduler, NoAnswer, state_of

    backend = backends(scheduler, run_dir)
    if not isinstance(backend, BatchScheduler):
        return BatchAnswer(JobState.UNKNOWN)
    try:
        answer = backend.confirmed_state(job_id)
    except Exception as exc:  # noqa: BLE001 - a broken scheduler command must not break `list`
        return BatchAnswer(JobState.NO_ANSWER, str(exc))
    return BatchAnswer(state_of(answer), str(answer) if isinstance(answer, NoAnswer) else "")


def status_of(entry: IndexEntry | Mapping[str, Any], *,
              job_state: JobStateOf | None = None) -> ClusterStatus:
    """The current state of an indexed cluster, from its directory and, while it is not final, from the
    batch system (or the holder process): a cluster whose batch job (or holder process) ended without a final
    ``run.json`` is ``lost``, on every scheduler. Writes nothing: what is worth keeping is in the result's
    :attr:`~ClusterStatus.observed` (for :func:`launcher.lifecycle.clusters.index.record`).

    Args:
        entry: an index entry (``cluster_id``, ``run_dir``, ``scheduler``, ``job_id``, ``holder_pid``...).
        job_state: ``(scheduler, job_id) →`` :class:`BatchAnswer` (default: :func:`batch_state` with the cluster's
            recorded commands; replaceable for tests).

    A batch system that does not answer makes the cluster ``unknown`` (never ``lost``); an end it told (``lost``)
    or that ``stop`` made (``cancelled``), once recorded (:data:`~launcher.lifecycle.clusters.index.ENDED_FILE`), is
    final: not asked again. A cluster directory that is not the user's own, or below a level that is not
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
        alive = holder_alive(entry)
        gone_why = f"the process holding it (pid {entry.holder_pid}) is gone"
    if not alive:
        status.state, status.detail = ClusterState.LOST, gone_why + ", with no final run.json"
        status.walltime_left_s = None
        _learn(status, ended=_ended(status))
    elif report is None or report.bringup_s is None:
        status.state = ClusterState.STARTING
    elif (run_dir / STOP_FILE).exists():
        status.state = ClusterState.STOPPING
    else:
        status.state = ClusterState.READY if report.hold else ClusterState.RUNNING
    return status


def _ended(status: ClusterStatus) -> EndedRecord:
    """The :data:`~launcher.lifecycle.clusters.index.ENDED_FILE` record of the end ``status`` says (now)."""
    return EndedRecord(state=status.state, detail=status.detail, at=time.time())


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


def _kept_on_this_node(status: ClusterStatus, run_dir: Path) -> bool:
    """A final record the run kept on this node because the cluster directory could not be written
    (:func:`launcher.lifecycle.report.local_record_paths`: ``/var/tmp/hpc-hadoop-<user>/<id>.run.json``...), for
    :func:`status_of` when ``run.json`` says no end (issue 37 item 3: after a remount, ``status`` said ``lost``
    though the kept record said ``failed (filesystem gone)``). Returns whether one was found (``status`` then holds its
    state and cause, and :attr:`ClusterStatus.observed` the record's path: once the cluster directory answers,
    :func:`launcher.lifecycle.clusters.index.record` writes it back into it as ``run.json``)."""
    for path in local_record_paths(status.cluster_id):
        kept = RunReport.read_or_none(path)
        if kept is None or not kept.state.terminal or Path(kept.run_dir) != run_dir:
            continue
        status.state, status.walltime_left_s = ClusterState.of_run(kept.state), None
        said = kept.error or ""
        status.detail = said if str(path) in said else f"{said} (the final record kept on this node: {path})".lstrip()
        _learn(status, kept=path)
        return True
    return False


def _from_the_batch_system(status: ClusterStatus, job_id: str, entry: IndexEntry, run_dir: Path,
                           report: RunReport | None,
                           job_state: JobStateOf | None) -> tuple[bool, str] | None:
    """What the batch system says of a cluster's job, for :func:`status_of`: ``None`` when that settles
    ``status`` (``unknown``: no answer, since when kept in :attr:`ClusterStatus.observed`; ``pending``; ``cancelled``
    while queued, to record), else ``(alive, why it is gone)``."""
    answer = (job_state or (lambda name, job: batch_state(name, job, run_dir)))(status.scheduler, job_id)
    status.batch, batch = answer, answer.state
    if not answer.answered:
        since = float(entry.no_answer_since or time.time())
        _learn(status, asked=True, no_answer_since=since)
        status.state = ClusterState.UNKNOWN
        status.detail = (f"batch system not answering since {time.strftime('%H:%M:%S', time.localtime(since))}"
                         + (f": {answer.why}" if answer.why else ""))
        return None
    _learn(status, asked=True, no_answer_since=None)
    if batch is JobState.PENDING:
        status.state = ClusterState.PENDING
        return None
    if batch is JobState.CANCELLED and report is None:  # cancelled before it ran: nothing was lost
        status.state, status.walltime_left_s = ClusterState.CANCELLED, None
        status.detail = f"the batch job {status.job_id} was cancelled while queued"
        _learn(status, ended=_ended(status))
        return None
    gone_why = f"the batch job {status.job_id} is {batch.value}" if batch is not JobState.UNKNOWN else \
        f"the batch system no longer knows job {status.job_id}"
    return batch is JobState.RUNNING, gone_why


#: What a command does with each status a look derived (:func:`statuses`, :func:`find`): e.g. keep what it learned
#: (:func:`launcher.lifecycle.clusters.index.record` of :attr:`ClusterStatus.observed`).
Seen = Callable[[ClusterStatus], object]


def _look(entry: IndexEntry, seen: Seen | None) -> ClusterStatus:
    """:func:`status_of` ``entry``, then ``seen`` with it (if given)."""
    status = status_of(entry)
    if seen is not None:
        seen(status)
    return status


def statuses(*, seen: Seen | None = None) -> list[ClusterStatus]:
    """The state of every indexed cluster, oldest first; ``seen`` is called with each as it is derived."""
    return [_look(entry, seen) for entry in index_entries()]


def find(cluster: str | None, *, seen: Seen | None = None) -> ClusterStatus:
    """The cluster a command names: its id, a unique prefix of it, or its batch job id (any state); with ``cluster``
    ``None``, the one running cluster. One rule for every command that takes an ID (``status``, ``env``, ``exec``,
    ``logs``, ``stop``): without one, only running clusters count (:attr:`ClusterStatus.active`: queued, starting,
    up, stopping, or ``unknown``); finished ones are never picked, whatever their number. ``seen`` is called with
    each status derived on the way (every cluster's without ``cluster``), before anything raises.

    Raises:
        UserError: no match, several matches, or (``cluster`` ``None``) not exactly one running cluster (the line
            lists the running ids, or says there is none, and how to give an ID).
    """
    entries = index_entries()
    if cluster is None:
        known = [_look(e, seen) for e in entries]
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
        return _look(matches[0], seen)
    if not matches:
        raise UserError(f"no cluster {cluster!r} in {state_dir()}", field="ID", fix="see `hpc-hadoop list`")
    raise UserError(f"{cluster!r} matches {len(matches)} clusters: "
                    f"{', '.join(e.cluster_id for e in matches)}", field="ID", fix="give more of the id")
