"""The one process-ending helper (launcher/processes.py, issue 26 item 4): signal, grace, SIGKILL, on real child
processes."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest

from launcher.util.polling import poll
from launcher.util.processes import end

#: A Python child that says "ready" once its SIGTERM disposition is set, then sleeps.
SLEEPER = "import signal, sys, time\n{setup}\nprint('ready', flush=True)\ntime.sleep(120)\n"


def child(ignore_term: bool = False, **popen: object) -> subprocess.Popen[bytes]:
    """A sleeping Python child, returned once it is ready (its SIGTERM handler, if any, in place)."""
    setup = "signal.signal(signal.SIGTERM, signal.SIG_IGN)" if ignore_term else ""
    proc = subprocess.Popen([sys.executable, "-c", SLEEPER.format(setup=setup)], stdout=subprocess.PIPE,
                            **popen)  # type: ignore[call-overload]
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Children to kill at the end whatever the test did."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_child_that_ends_on_sigterm_is_not_killed(started: list[subprocess.Popen[bytes]]) -> None:
    proc = child()
    started.append(proc)
    ended = end([proc], grace=60.0)
    assert ended.exited == [proc.pid] and ended.killed == [] and ended.left == []
    assert proc.returncode == -signal.SIGTERM and ended.codes == {proc.pid: -signal.SIGTERM}


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(started: list[subprocess.Popen[bytes]]) -> None:
    stubborn, polite = child(ignore_term=True), child()
    started += [stubborn, polite]
    ended = end([stubborn, polite], grace=[0.5, 60.0])
    assert ended.killed == [stubborn.pid] and ended.exited == [polite.pid] and ended.left == []
    assert stubborn.returncode == -signal.SIGKILL and polite.returncode == -signal.SIGTERM


def test_hurry_and_the_deadline_cut_the_grace_short(started: list[subprocess.Popen[bytes]]) -> None:
    hurried, late = child(ignore_term=True), child(ignore_term=True)
    started += [hurried, late]
    assert end([hurried], grace=600.0, hurry=lambda: True).killed == [hurried.pid]
    assert end([late], grace=600.0, deadline=0.0).killed == [late.pid]
    assert hurried.returncode == late.returncode == -signal.SIGKILL


def test_no_signal_kills_at_once_and_an_ended_child_is_only_reaped(started: list[subprocess.Popen[bytes]]) -> None:
    proc, done = child(), subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    started += [proc, done]
    done.wait()
    ended = end([proc, done], signum=None)
    assert ended.killed == [proc.pid] and ended.gone == [done.pid] and ended.exited == []
    assert ended.codes == {proc.pid: -signal.SIGKILL, done.pid: 3}


def test_a_process_group_is_signalled_whole(started: list[subprocess.Popen[bytes]]) -> None:
    """A leader of its own process group with a child, both ignoring SIGTERM: the SIGKILL after the grace goes to
    the group (``os.killpg``) and so ends the child too."""
    ignoring = SLEEPER.format(setup="signal.signal(signal.SIGTERM, signal.SIG_IGN)")
    script = ("import signal, subprocess, sys\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              f"p = subprocess.Popen([sys.executable, '-c', {ignoring!r}])\nprint(p.pid, flush=True)\np.wait()\n")
    leader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    started.append(leader)
    assert leader.stdout is not None
    inner = psutil.Process(int(leader.stdout.readline()))
    assert leader.stdout.readline() == b"ready\n"  # the child's (it shares the pipe): its handler is in place
    ended = end([leader], grace=0.5, group=True, kill_wait=30.0)
    assert ended.killed == [leader.pid] and ended.left == [] and leader.returncode == -signal.SIGKILL


    def inner_ended() -> bool:  # gone, or a zombie its new parent has not reaped yet
        try:
            return inner.status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    assert poll(inner_ended, done=bool, interval=0.05, timeout=30).done  # the group's SIGKILL reached it


def test_a_psutil_process_that_is_not_our_child(started: list[subprocess.Popen[bytes]]) -> None:
    """A process seen through psutil only (the agent's descendants): SIGTERM, then SIGKILL, and waited for."""
    proc = child(ignore_term=True)
    started.append(proc)
    view = psutil.Process(proc.pid)
    ended = end([view], grace=0.2, kill_wait=30.0)
    assert ended.killed == [proc.pid] and ended.left == [] and ended.codes == {proc.pid: -signal.SIGKILL}
