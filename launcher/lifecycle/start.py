"""``hpc-hadoop start``: bring a cluster up for interactive use and return once it is ready.

Two ways, one held run (:func:`launcher.lifecycle.compose.run_here` with ``hold``):

* outside an allocation of the job's batch system: submit a batch job whose script runs
  ``hpc-hadoop run --hold`` (:func:`launcher.lifecycle.submit.submit_batch`);
* on the ``local`` backend, or inside an allocation (an ``salloc`` shell, a batch script): start
  ``hpc-hadoop run --hold`` here, detached from the terminal (its own session; output in ``start.out``).

Either way the cluster directory and the user's index (:mod:`launcher.lifecycle.clusters.index`) say where it is, and
``start`` follows it until bring-up is done (state ``ready``, or ``running`` while the job file's steps run).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rich.console import Console

from launcher.config.spec import JobSpec
from launcher.lifecycle.clusters.index import check_index, index_entries, record, register, state_dir
from launcher.lifecycle.clusters.status import STOP_FILE, ClusterStatus, status_of
from launcher.lifecycle.front import front_door
from launcher.lifecycle.submit import make_cluster_dir, submit_batch
from launcher.util import polling
from launcher.util.errors import UserError
from launcher.util.processes import end
from launcher.util.states import ClusterState

#: Seconds a held run just started may take to end after SIGTERM when its index entry cannot be written.
HOLDER_GRACE_SECONDS = 60.0


def start_detached(spec: JobSpec, job_file: Path, *, overwrite: bool) -> Path:
    """Make the cluster directory and start ``hpc-hadoop run --hold`` on it, detached (new session, stdin
    closed, output to ``<run_dir>/start.out``), on the allocation this process is in (or this machine).

    The front half is ``start``'s entrance here (:func:`launcher.lifecycle.front.front_door`): what the batch system
    decides is settled and written into ``job.yaml`` (PBS: ``pbs.flavor``), the plan made on this allocation.

    The user's index must be writable (:func:`launcher.lifecycle.clusters.index.check_index`, first of all): the held
    run is reachable only through its entry, written as soon as it is started; should that write fail all the same,
    the held run is stopped (SIGTERM: it tears down whatever it started) and the error raised.

    Returns:
        The cluster directory.

    Raises:
        UserError: bad input, not inside an allocation of ``spec.scheduler``, an index that cannot be written, or a
            directory above the cluster directory that is not the user's (nothing is started then).
    """
    check_index()
    front = front_door("start-here", spec, job_file, overwrite=overwrite)
    run_dir = make_cluster_dir(front, job_file, command="start")
    argv = [sys.executable, "-m", "launcher.cli", "run", "--run-dir", str(run_dir), "--hold",
            *(["--overwrite"] if overwrite else []), str(run_dir / "job.yaml")]
    with open(run_dir / "start.out", "ab") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=run_dir)
    try:
        register(run_dir.name, run_dir, spec.scheduler, front.allocation.job_id, holder_pid=proc.pid, interactive=True,
                 required=True)
    except UserError:
        end([proc], grace=HOLDER_GRACE_SECONDS)  # never a cluster left running that the index does not know
        raise
    return run_dir


def start_batch(spec: JobSpec, job_file: Path, *, overwrite: bool, console: Console) -> Path:
    """Submit the held run as a batch job (:func:`launcher.lifecycle.submit.submit_batch`); returns the cluster
    directory.

    Raises:
        UserError, CommandError: bad input, or the batch system's refusal.
    """
    _, run_dir, _ = submit_batch(spec, job_file, overwrite=overwrite, wait=False, console=console, hold=True)
    return run_dir


def wait_until_up(run_dir: Path, console: Console, *, timeout: float | None = None,
                  poll: float = 0.5) -> ClusterStatus:
    """Follow a starting cluster (its index entry) until bring-up is done or it ended
    (:func:`launcher.util.polling.poll`: every ``poll`` seconds, backing off while the job is queued).

    Prints each state change (pending → starting → ready). What each look learned is kept
    (:func:`launcher.lifecycle.clusters.index.record`: a job that ended, or was cancelled while queued, is not asked
    about again).

    Args:
        timeout: give up after this many seconds (``None``: wait as long as the job is queued).
        poll: seconds between polls.

    Returns:
        The cluster's status: ``ready``/``running`` (up), or a final state with ``detail``; ``starting`` or
        ``pending`` when ``timeout`` passed.

    Raises:
        UserError: the cluster has no entry in the index (one line naming its directory and how to stop it).
    """
    entry = next((e for e in index_entries() if e.cluster_id == run_dir.name), None)
    if entry is None:  # its entry was removed meanwhile (`hpc-hadoop clean`, another state directory)
        raise UserError(f"cluster {run_dir.name} is not in the index of your clusters ({state_dir()})",
                        field="XDG_STATE_HOME", fix=f"follow it in {run_dir}; stop it with `touch {run_dir}/"
                                                    f"{STOP_FILE}`")
    known = entry

    def look() -> ClusterStatus:
        status = status_of(known)
        record(status.observed, known)
        return status

    return polling.poll(look, done=lambda s: s.state.up or not s.active,
                        key=lambda s: s.state, on_change=lambda s: console.print(f"cluster {s.cluster_id}: {s.state}"),
                        interval=poll, backoff_while=lambda s: s.state is ClusterState.PENDING, timeout=timeout).value


def failure_tail(run_dir: Path, lines: int = 15) -> str:
    """The last lines of the held run's output (``start.out`` or ``batch-<jobid>.out``), for a failed start."""
    candidates = sorted(run_dir.glob("batch-*.out")) + [run_dir / "start.out"]
    for path in candidates:
        if path.exists():
            text = path.read_text(errors="replace").splitlines()
            return f"--- {path} (last {lines} lines) ---\n" + "\n".join(text[-lines:])
    return ""
