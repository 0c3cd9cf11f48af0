"""``hpc-hadoop stop``: the stop protocol of a cluster, and the leftover batch job of one that has ended.

A job still queued is cancelled; else the cluster's holder is asked to tear down through its cluster directory
(:data:`~launcher.lifecycle.clusters.status.STOP_FILE`, which any node of the shared filesystem can write), the
final ``run.json`` is waited for, then the allocation is made sure to be released. What each look on the way learned
is kept (:func:`launcher.lifecycle.clusters.index.record`), a job cancelled while queued recorded as ended
(:func:`launcher.lifecycle.clusters.index.record_end`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from launcher.lifecycle.clusters.index import IndexEntry, index_entries, record, record_end
from launcher.lifecycle.clusters.status import (
    STOP_FILE,
    Backends,
    BatchAnswer,
    ClusterStatus,
    ReadOnce,
    batch_state,
    holder_alive,
    status_of,
)
from launcher.schedulers.allocation import JobState
from launcher.util import polling
from launcher.util.states import ClusterState

if TYPE_CHECKING:
    from launcher.schedulers.base import NoAnswer

#: Batch job states of a released allocation (the terminal ones, and ``unknown``: the batch system no longer knows
#: the job).
RELEASED: frozenset[JobState] = frozenset(
    {JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT, JobState.UNKNOWN})


class _UntilSilent:
    """The batch system's answers for the teardown polls of one ``stop``: asked (through ``backends``) until it does
    not answer once; from then on that no-answer stands, not asked again. With ``slurmctld`` stopped each ask waits on
    Slurm's clients (``squeue`` 18 s on the test cluster, ``MessageTimeout=10``; ``scancel`` 9 s), so ``stop --timeout
    2`` took 45 s, three asks. The teardown's end is still seen (the final ``run.json``), and the cancel after the
    timeout asks afresh. ``silent``: the no-answer the look before the stop got (:attr:`ClusterStatus.batch`)."""

    def __init__(self, backends: Backends, run_dir: str, silent: BatchAnswer | None = None) -> None:
        self.backends, self.run_dir = backends, run_dir
        self.silent = silent if silent is not None and not silent.answered else None

    def __call__(self, scheduler: str, job_id: str) -> BatchAnswer:
        """A :data:`~launcher.lifecycle.clusters.status.JobStateOf`: the batch job's state, or the no-answer kept."""
        if self.silent is None:
            answer = batch_state(scheduler, job_id, self.run_dir, backends=self.backends)
            self.silent = None if answer.answered else answer
            return answer
        return self.silent


def _look(entry: IndexEntry, backends: Backends, asking: _UntilSilent | None = None) -> ClusterStatus:
    """:func:`status_of` ``entry``, the batch system asked through ``backends`` (or ``asking``), then what it learned
    kept (:func:`launcher.lifecycle.clusters.index.record`, into ``entry`` too: the next poll says the same "not
    answering since")."""
    status = status_of(entry, job_state=asking or (
        lambda scheduler, job_id: batch_state(scheduler, job_id, entry.run_dir, backends=backends)))
    record(status.observed, entry)
    return status


def request_stop(status: ClusterStatus, *, timeout: float = 120.0, poll: float = 0.5,
                 on_wait: Callable[[str], None] | None = None) -> ClusterStatus:
    """Stop a cluster: a job still queued is cancelled (the cluster is then ``cancelled``); else ask its holder to
    tear down (``stop-requested`` in the cluster directory: whatever the batch system says, or when it does not
    answer), wait for its final ``run.json``, then make sure the allocation is released (cancel the batch job, with
    the commands recorded at submission, if it is still there). Logs, history and ``run.json`` stay in the cluster
    directory. What the submission settled (the commands to run) is read once for all the polls (:class:`ReadOnce`).

    Args:
        timeout: seconds to wait for the teardown before cancelling the job / terminating the holder
            (which still tears down: the batch script passes SIGTERM on).
        poll: seconds between polls (:func:`launcher.util.polling.poll`).
        on_wait: called with a line to show while waiting (and with why a cancel did not go through).

    Returns:
        The cluster's state afterwards; when the batch system did not answer the cancel, the state of the look before
        it (still active, e.g. ``unknown``), not asked again: with ``slurmctld`` stopped each look waits on Slurm's
        clients (about 18 s on the test cluster, ``MessageTimeout=10``), and ``stop --timeout 2`` took 63 s. While
        the batch system does not answer (the look that found ``status``, or a poll), the teardown's polls do not ask
        it again (:class:`_UntilSilent`): they read the cluster directory alone.

    Raises:
        OSError: ``stop-requested`` cannot be written into the cluster directory.
    """
    run_dir = Path(status.run_dir)
    notify = on_wait or (lambda text: None)
    backends = ReadOnce()
    entry = next((e for e in index_entries() if e.cluster_id == status.cluster_id), None) or _entry_of(status)
    if status.state is ClusterState.PENDING and status.job_id:
        failure = _cancel(status, backends)
        if failure is None:
            after = _wait_released(status, entry, 30.0, poll, backends)
            if after.state in (ClusterState.LOST, ClusterState.PENDING) or not (run_dir / "run.json").exists():
                record_end(run_dir, ClusterState.CANCELLED, f"stopped while queued (`hpc-hadoop stop` at "
                                                            f"{time.strftime('%Y-%m-%dT%H:%M:%S')})")
            return _look(entry, backends)
        notify(f"cannot cancel the queued job: {failure}")
    (run_dir / STOP_FILE).write_text(f"stop requested at {time.strftime('%Y-%m-%dT%H:%M:%S')} "
                                     f"by pid {os.getpid()} on {os.uname().nodename}\n")
    notify("teardown requested")
    asking = _UntilSilent(backends, entry.run_dir, status.batch)
    teardown = polling.poll(lambda: _look(entry, backends, asking), done=lambda current: not current.active,
                            interval=poll, backoff=1.0, timeout=timeout)
    if teardown.timed_out:
        notify(f"no teardown within {timeout:.0f} s: cancelling")
        if status.job_id and status.scheduler != "local":
            failure = _cancel(status, backends)
            if failure is not None:  # the last look stands: asking again would wait as long for no answer
                notify(f"the batch system did not answer the cancel: {failure}")
                return teardown.value
        elif entry.holder_pid and holder_alive(entry):
            psutil.Process(int(entry.holder_pid)).terminate()
    return _wait_released(status, entry, 60.0, poll, backends)


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
    backends = ReadOnce()
    state = batch_state(status.scheduler, status.job_id, status.run_dir, backends=backends).state
    if state not in (JobState.PENDING, JobState.RUNNING, JobState.NO_ANSWER):
        return None, None
    failure = _cancel(status, backends)
    return state, (str(failure) if failure is not None else None)


def _cancel(status: ClusterStatus, backends: Backends) -> NoAnswer | None:
    """Cancel a cluster's batch job with the commands recorded at submission (``backends``:
    :func:`~launcher.lifecycle.clusters.status.submitted_backend`); returns ``None`` when it went through (or the job
    had ended, or there is no batch job), else the :class:`~launcher.schedulers.base.NoAnswer` of the cancel
    command."""
    from launcher.schedulers.base import BatchScheduler

    backend = backends(status.scheduler, status.run_dir)
    if isinstance(backend, BatchScheduler) and status.job_id:
        return backend.cancel(status.job_id)
    return None


def _entry_of(status: ClusterStatus) -> IndexEntry:
    """An index entry made from what ``status`` knows, for a cluster no longer in the index (in memory only)."""
    return IndexEntry(cluster_id=status.cluster_id, run_dir=status.run_dir, scheduler=status.scheduler,
                      job_id=status.job_id, created=status.created or 0.0, interactive=status.interactive)


def _wait_released(status: ClusterStatus, entry: IndexEntry | Mapping[str, Any], timeout: float,
                   poll: float, backends: Backends | None = None) -> ClusterStatus:
    """Wait up to ``timeout`` seconds until the batch job is over (or the holder process exited), polling every
    ``poll`` seconds; cancel a job still there after half of it. A batch system that does not answer ends the
    wait at once (nothing can be learnt by waiting). ``entry``: the cluster's index entry (empty: none, made from
    ``status``); ``backends``: where the batch system's backend comes from (default: a :class:`ReadOnce` of its
    own)."""
    if not isinstance(entry, IndexEntry):
        entry = IndexEntry.model_validate(entry) if entry else _entry_of(status)
    known = entry
    backends = backends or ReadOnce()

    def released() -> bool:
        if status.job_id and status.scheduler != "local":
            answer = batch_state(status.scheduler, status.job_id, status.run_dir, backends=backends)
            return answer.state in RELEASED or not answer.answered
        return not holder_alive(known)

    def wait(seconds: float) -> bool:
        return polling.poll(released, done=bool, interval=poll, backoff=1.0, timeout=seconds).done

    if not wait(timeout / 2):
        if status.job_id:
            _cancel(status, backends)
        wait(timeout / 2)
    return _look(known, backends)
