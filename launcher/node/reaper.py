"""The reaper: ends what a node's agent started when the agent itself is killed (issue 37 item 7).

A NodeManager starts each container in a session of its own (``setsid`` in the ``DefaultContainerExecutor``), so a
batch system that ends a job by killing its session and tasks (Torque's ``qdel``: SIGTERM, then SIGKILL 26 ms later;
no cgroups) kills the agent and its daemons but not the containers: a step's MRAppMaster and its ``bash -c`` parent
(PPID 1) ran on for minutes with their ResourceManager gone, ignoring SIGTERM. The agent normally kills every
descendant itself (it is their child subreaper); when it is killed first, nothing did.

So each agent starts one reaper, in a session of its own (it outlives the job's session), that looks every
:data:`POLL_SECONDS` whether the agent is still there (its pid and start time). Once it is not, the reaper ends every
process of this user whose command line names this node's log directory (``<run dir>/logs/<node>/``: the daemons'
``-Dhadoop.log.dir``, every container's ``-Dyarn.app.container.log.dir`` and its ``bash -c`` redirections), SIGTERM
then SIGKILL after :data:`GRACE_SECONDS`, and exits. Where the batch system kills the whole job's cgroup (Slurm),
the reaper goes with it, and there was nothing left to reap.

``python -m launcher.node.reaper AGENT_PID LOG_DIR``. Imports psutil and :mod:`launcher.util.processes`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import psutil

from launcher.util.processes import end

#: Seconds between two looks at the agent.
POLL_SECONDS = 0.5
#: Seconds a process has after SIGTERM before SIGKILL.
GRACE_SECONDS = 2.0
#: Seconds the reaper waits for the SIGKILLed to be gone before it exits (a zombie whose parent does not reap it
#: stays in the process table).
KILL_WAIT_SECONDS = 5.0


def left_behind(log_dir: str, uid: int | None = None) -> list[psutil.Process]:
    """Processes of ``uid`` (default: ours), other than this one, whose command line names ``log_dir`` (a node's
    ``<run dir>/logs/<node>``, followed by ``/`` or ending a word)."""
    uid = os.getuid() if uid is None else uid
    directory = log_dir.rstrip("/")
    found = []
    for proc in psutil.process_iter(["cmdline", "uids"]):
        try:
            if proc.pid == os.getpid() or proc.info["uids"] is None or proc.info["uids"].real != uid:
                continue
            words = proc.info["cmdline"] or []
            if any(directory + "/" in word or word == directory or word.endswith("=" + directory) for word in words):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def agent_alive(pid: int, started: float) -> bool:
    """True while the process ``pid`` that started at ``started`` (psutil's create time) runs."""
    try:
        proc = psutil.Process(pid)
        return bool(proc.create_time() == started and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def reap(agent_pid: int, log_dir: str, poll: float = POLL_SECONDS) -> int:
    """Wait until the agent ``agent_pid`` is gone, then end what it left behind (:func:`left_behind`); returns how
    many processes that was."""
    try:
        started = psutil.Process(agent_pid).create_time()
    except psutil.Error:
        started = -1.0
    while started >= 0 and agent_alive(agent_pid, started):
        time.sleep(poll)
    left = left_behind(log_dir)
    end(left, grace=GRACE_SECONDS, kill_wait=KILL_WAIT_SECONDS)  # never waits on a zombie that nobody reaps
    return len(left)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m launcher.node.reaper AGENT_PID LOG_DIR``."""
    parser = argparse.ArgumentParser(prog="python -m launcher.node.reaper", description=__doc__.splitlines()[0])
    parser.add_argument("agent_pid", type=int)
    parser.add_argument("log_dir")
    args = parser.parse_args(argv)
    left = reap(args.agent_pid, args.log_dir)
    if left:
        print(f"hpc-hadoop reaper: the agent {args.agent_pid} is gone; ended {left} process(es) it left "
              f"({args.log_dir})", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
