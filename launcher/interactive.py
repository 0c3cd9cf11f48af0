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

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from launcher import polling
from launcher.errors import UserError
from launcher.report import STATES

#: Name of the file whose existence asks a held cluster to tear down.
STOP_FILE = "stop-requested"
#: States of a cluster that is (or may soon be) using its allocation.
ACTIVE = ("pending", "starting", "running", "ready", "stopping")
#: Batch job states (``JobState`` values) of a released allocation.
RELEASED = ("completed", "failed", "cancelled", "timed_out", "unknown")


def state_dir() -> Path:
    """``$XDG_STATE_HOME/hpc-hadoop/clusters`` (default ``~/.local/state/hpc-hadoop/clusters``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base, "hpc-hadoop", "clusters")


def register(cluster_id: str, run_dir: str | Path, scheduler: str, job_id: str | None = None, *,
             holder_pid: int | None = None, interactive: bool = False) -> Path:
    """Add (or update) a cluster in the user's index; returns the index entry's path.

    Args:
        holder_pid: the process that holds the cluster (the detached ``run --hold`` on the local backend or
            inside an allocation); ``None`` for a batch job (the batch system's job id tells its state).
        interactive: made by ``hpc-hadoop start``.

    The index is a convenience: failing to write it (read-only home) never stops a run.
    """
    path = state_dir() / f"{cluster_id}.json"
    entry: dict[str, Any] = {}
    try:
        if path.exists():
            entry = json.loads(path.read_text())
    except (OSError, ValueError):
        entry = {}
    entry.update({"cluster_id": cluster_id, "run_dir": str(run_dir), "scheduler": scheduler})
    entry.setdefault("created", time.time())
    if job_id is not None:
        entry["job_id"] = job_id
    if holder_pid is not None:
        entry["holder_pid"] = holder_pid
        entry["holder_started"] = psutil.Process(holder_pid).create_time()
    entry["interactive"] = entry.get("interactive", False) or interactive
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(entry, indent=2))
        os.replace(tmp, path)
    except OSError:
        pass
    return path


def index_entries() -> list[dict[str, Any]]:
    """Every entry of the index, oldest first (unreadable entries are skipped)."""
    entries = []
    for path in sorted(state_dir().glob("*.json")):
        try:
            entries.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return sorted(entries, key=lambda e: e.get("created", 0))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


@dataclass
class ClusterStatus:
    """What ``hpc-hadoop list`` and ``status`` show of one cluster.

    Attributes:
        cluster_id: the cluster id (``<name>-<yyyymmdd-HHMMSS>-<hex4>``).
        run_dir: the cluster directory.
        scheduler: ``local``, ``slurm``...; ``job_id`` its job id (``None`` on the local backend).
        state: ``pending`` (queued), ``starting`` (bring-up), ``running`` (steps), ``ready`` (up, held for
            interactive use), ``stopping``, ``lost`` (its batch job or holder process ended without a final
            report: killed by the batch system, ``qdel``/``scancel``, a node failure; the logs stay readable),
            ``gone`` (directory removed), or a final state of ``run.json`` (``stopped``, ``succeeded``, ``failed``,
            ``bringup_failed``, ``interrupted``, ``timed_out``).
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
    state: str
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
        return self.state in ACTIVE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``list --json``)."""
        return {**self.__dict__, "active": self.active}


def _holder_alive(entry: dict[str, Any]) -> bool:
    pid = entry.get("holder_pid")
    if not pid:
        return False
    try:
        proc = psutil.Process(int(pid))
        return abs(proc.create_time() - float(entry.get("holder_started", 0))) < 1.0 and proc.is_running() \
            and proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.Error, ValueError):
        return False


def batch_state(scheduler: str, job_id: str) -> str:
    """The batch job's state (``JobState`` value: ``pending``, ``running``, ``completed``... ``unknown``), asked
    again while the batch system does not know the job (:meth:`BatchScheduler.confirmed_state`): one empty answer
    never makes a cluster lost."""
    from launcher.schedulers import get_scheduler
    from launcher.schedulers.base import BatchScheduler

    backend = get_scheduler(scheduler)
    if not isinstance(backend, BatchScheduler):
        return "unknown"
    try:
        return backend.confirmed_state(job_id).value
    except Exception:  # noqa: BLE001 - a broken scheduler command must not break `list`
        return "unknown"


def status_of(entry: dict[str, Any], *, job_state: Callable[[str, str], str] = batch_state) -> ClusterStatus:
    """The current state of an indexed cluster, from its directory and, while it is not final, from the
    batch system (or the holder process): a cluster whose batch job (or holder process) ended without a final
    ``run.json`` is ``lost``, on every scheduler.

    Args:
        entry: an index entry (``cluster_id``, ``run_dir``, ``scheduler``, ``job_id``, ``holder_pid``...).
        job_state: ``(scheduler, job_id) → state`` (the batch system; replaceable for tests).
    """
    run_dir = Path(entry["run_dir"])
    status = ClusterStatus(cluster_id=entry["cluster_id"], run_dir=str(run_dir), scheduler=entry["scheduler"],
                           job_id=entry.get("job_id"), state="pending", created=entry.get("created"),
                           interactive=bool(entry.get("interactive")))
    try:
        present = run_dir.is_dir()
    except OSError as err:  # e.g. ENOTCONN: the filesystem it is on is mounted but does not answer
        status.state, status.detail = "unreachable", f"its filesystem does not answer: {err.strerror}"
        return status
    if not present:
        status.state, status.detail = "gone", "cluster directory removed"
        return status
    plan = _read_json(run_dir / "plan.json")
    report = _read_json(run_dir / "run.json")
    if plan:
        status.nodes = [n["name"] for n in plan["nodes"]]
        status.head = plan["master"]["name"]
        status.job_id = status.job_id or plan.get("job_id")
        if plan.get("deadline"):
            status.walltime_left_s = float(plan["deadline"]) - time.time()
    if report:
        status.rm_web, status.jhs_web = report.get("rm_web"), report.get("jhs_web")
        status.nodes = report.get("nodes") or status.nodes
        if report.get("state") in STATES:
            status.state, status.detail = report["state"], report.get("error") or ""
            status.walltime_left_s = None
            return status
    # Not final: is the allocation (or the holder process) still there?
    if status.job_id and status.scheduler != "local":
        batch = job_state(status.scheduler, status.job_id)
        if batch == "pending":
            status.state = "pending"
            return status
        alive = batch == "running"
        gone_why = f"the batch job {status.job_id} is {batch}" if batch != "unknown" else \
            f"the batch system no longer knows job {status.job_id}"
    else:
        alive = _holder_alive(entry)
        gone_why = f"the process holding it (pid {entry.get('holder_pid')}) is gone"
    if not alive:
        status.state, status.detail = "lost", gone_why + ", with no final run.json"
        status.walltime_left_s = None
    elif report is None or report.get("bringup_s") is None:
        status.state = "starting"
    elif (run_dir / STOP_FILE).exists():
        status.state = "stopping"
    else:
        status.state = "ready" if report.get("hold") else "running"
    return status


def statuses() -> list[ClusterStatus]:
    """The state of every indexed cluster, oldest first."""
    return [status_of(entry) for entry in index_entries()]


def find(cluster: str | None, *, active_only: bool = True) -> ClusterStatus:
    """The cluster a command names: its id, a unique prefix of it, or its batch job id; with ``cluster``
    ``None``, the one active cluster.

    Raises:
        UserError: no match, several matches, or (``cluster`` ``None``) not exactly one active cluster.
    """
    entries = index_entries()
    if cluster is None:
        active = [s for s in (status_of(e) for e in entries) if s.active or not active_only]
        if len(active) == 1:
            return active[0]
        if not active:
            raise UserError("no running cluster", field="ID", fix="start one with `hpc-hadoop start JOB_FILE`")
        raise UserError(f"{len(active)} clusters are running: {', '.join(s.cluster_id for s in active)}",
                        field="ID", fix="name one (see `hpc-hadoop list`)")
    exact = [e for e in entries if cluster in (e["cluster_id"], str(e.get("job_id")))]
    matches = exact or [e for e in entries if e["cluster_id"].startswith(cluster)]
    if len(matches) == 1:
        return status_of(matches[0])
    if not matches:
        raise UserError(f"no cluster {cluster!r} in {state_dir()}", field="ID", fix="see `hpc-hadoop list`")
    raise UserError(f"{cluster!r} matches {len(matches)} clusters: "
                    f"{', '.join(e['cluster_id'] for e in matches)}", field="ID", fix="give more of the id")


def request_stop(status: ClusterStatus, *, timeout: float = 120.0, poll: float = 0.5,
                 on_wait: Callable[[str], None] | None = None) -> ClusterStatus:
    """Stop a cluster: ask its holder to tear down (``stop-requested``), wait for its final ``run.json``,
    then make sure the allocation is released (cancel the batch job if it is still there; a pending job is
    cancelled at once). Logs, history and ``run.json`` stay in the cluster directory.

    Args:
        timeout: seconds to wait for the teardown before cancelling the job / terminating the holder
            (which still tears down: the batch script passes SIGTERM on).
        poll: seconds between polls (:func:`launcher.polling.poll`).
        on_wait: called with a line to show while waiting.

    Returns:
        The cluster's state afterwards.
    """
    run_dir = Path(status.run_dir)
    notify = on_wait or (lambda text: None)
    entry = next((e for e in index_entries() if e["cluster_id"] == status.cluster_id), {})
    if status.state == "pending" and status.job_id:
        _cancel(status)
        return _wait_released(status, entry, 30.0, poll)
    (run_dir / STOP_FILE).write_text(f"stop requested at {time.strftime('%Y-%m-%dT%H:%M:%S')} "
                                     f"by pid {os.getpid()} on {os.uname().nodename}\n")
    notify("teardown requested")
    teardown = polling.poll(lambda: status_of(entry or status.__dict__), done=lambda current: not current.active,
                            interval=poll, backoff=1.0, timeout=timeout)
    if teardown.timed_out:
        notify(f"no teardown within {timeout:.0f} s: cancelling")
        if status.job_id and status.scheduler != "local":
            _cancel(status)
        elif entry.get("holder_pid") and _holder_alive(entry):
            psutil.Process(int(entry["holder_pid"])).terminate()
    return _wait_released(status, entry, 60.0, poll)


def cancel_leftover(status: ClusterStatus) -> str | None:
    """Cancel the batch job of a cluster that is no longer active (a final ``run.json``, or ``lost``) when the batch
    system still knows it as queued or running: ``stop`` never leaves a job behind.

    Returns:
        The state the job had when it was cancelled (``pending``, ``running``), ``None`` when there was none to
        cancel (the local backend, or a job the batch system no longer runs).
    """
    if not status.job_id or status.scheduler == "local":
        return None
    state = batch_state(status.scheduler, status.job_id)
    if state not in ("pending", "running"):
        return None
    _cancel(status)
    return state


def _cancel(status: ClusterStatus) -> None:
    from launcher.schedulers import get_scheduler

    backend = get_scheduler(status.scheduler)
    cancel = getattr(backend, "cancel", None)
    if cancel and status.job_id:
        cancel(status.job_id)


def _wait_released(status: ClusterStatus, entry: dict[str, Any], timeout: float, poll: float) -> ClusterStatus:
    """Wait up to ``timeout`` seconds until the batch job is over (or the holder process exited), polling every
    ``poll`` seconds; cancel a job still there after half of it."""
    def released() -> bool:
        if status.job_id and status.scheduler != "local":
            return batch_state(status.scheduler, status.job_id) in RELEASED
        return not _holder_alive(entry)

    def wait(seconds: float) -> bool:
        return polling.poll(released, done=bool, interval=poll, backoff=1.0, timeout=seconds).done

    if not wait(timeout / 2):
        if status.job_id:
            _cancel(status)
        wait(timeout / 2)
    return status_of(entry or status.__dict__)


def clean(targets: list[ClusterStatus]) -> list[str]:
    """Delete the cluster directories of finished clusters and their index entries.

    Raises:
        UserError: one of ``targets`` is still active (nothing is deleted then).

    Returns:
        The deleted directories.
    """
    running = [t for t in targets if t.active]
    if running:
        raise UserError(f"cluster {running[0].cluster_id} is {running[0].state}: its directory "
                        f"{running[0].run_dir} is in use", field="ID",
                        fix=f"stop it first: hpc-hadoop stop {running[0].cluster_id}")
    removed = []
    for target in targets:
        if Path(target.run_dir).is_dir():
            shutil.rmtree(target.run_dir)
            removed.append(target.run_dir)
        (state_dir() / f"{target.cluster_id}.json").unlink(missing_ok=True)
    return removed
