"""The one way to end processes: a signal, a grace period, then SIGKILL (with :mod:`psutil`).

Every place that ends a process goes through :func:`end`: the agent's daemons and the descendants left at its
end (:mod:`launcher.node.agent`), the processes of a cluster left after teardown (:mod:`launcher.cluster`), a step's
job client and its process group (:mod:`launcher.steps.jobs`), the fan-out launcher's processes
(:mod:`launcher.fanout.processes`) and the ``yarn rmadmin -refreshNodes`` clients of a run
(:mod:`launcher.lifecycle.runner`). Each caller keeps its own grace period and records what the :class:`Ended` result
says. Imports only the standard library, :mod:`psutil` and :mod:`launcher.util.polling` (the grace period is waited
with :func:`~launcher.util.polling.poll`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Union

import psutil

from launcher.util.polling import poll

#: What :func:`end` accepts: a child started with :mod:`subprocess` (its ``returncode`` is set when it ends) or any
#: process as :class:`psutil.Process`.
Target = Union["subprocess.Popen[bytes]", psutil.Process]

#: Seconds between two looks at the targets, the clock and ``hurry`` while the grace period runs (the agent's old loop:
#: 0.05 s).
CHECK_SECONDS = 0.05


@dataclass
class Ended:
    """What :func:`end` did, by pid.

    Attributes:
        gone: pids that had ended before the signal was sent.
        exited: pids that ended after the signal, within their grace period.
        killed: pids sent SIGKILL (their grace period passed, ``hurry`` held, or no signal was asked for).
        left: pids still running after SIGKILL and ``kill_wait`` seconds (a process in uninterruptible sleep, e.g.
            waiting on a stalled filesystem); always a subset of ``killed``.
        codes: exit code of each pid that ended and was reaped here or before (``-N``: ended by signal N), as
            :attr:`subprocess.Popen.returncode`; unknown for a process that is not our child.
    """

    gone: list[int] = field(default_factory=list)
    exited: list[int] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    codes: dict[int, int] = field(default_factory=dict)


def end(targets: Sequence[Target], *, grace: float | Sequence[float] = 0.0, signum: int | None = signal.SIGTERM,
        group: bool = False, deadline: float | None = None, hurry: Callable[[], bool] | None = None,
        kill_wait: float | None = None) -> Ended:
    """Send ``signum`` to every target still running, wait up to its grace period, SIGKILL those left, reap them.

    Args:
        targets: the processes; :class:`subprocess.Popen` children get their ``returncode`` set when they end here.
        grace: seconds each target may take to end after ``signum`` (one number for all, or one per target, in
            order); ignored when ``signum`` is ``None``.
        signum: the polite signal (default SIGTERM); ``0``: none is sent, the targets were asked to end some other way
            (a signal passed on by ``srun``, a ``kill`` run on another node) and get their grace period all the same;
            ``None``: SIGKILL at once to every target still running.
        group: signal each target's process group (``os.killpg``: the target leads a group of its own, e.g. a
            Spark client with its PySpark driver), SIGKILL included; the wait is for the leader only.
        deadline: ``time.monotonic()`` seconds past which no grace period runs (``None``: none).
        hurry: checked every :data:`CHECK_SECONDS` during the grace period; ``True`` ends it at once (SIGKILL now).
        kill_wait: seconds to wait for the killed targets to end (``None``: until they do).

    Returns:
        What happened to each pid (:class:`Ended`).
    """
    graces = [float(grace)] * len(targets) if isinstance(grace, (int, float)) else [float(g) for g in grace]
    result = Ended()
    began = time.monotonic()
    waiting: dict[int, tuple[Target, psutil.Process, float]] = {}  # pid -> (target, psutil view, limit)
    for target, seconds in zip(targets, graces, strict=True):
        view = _view(target, result)
        if view is None:
            continue
        limit = began + seconds if signum is not None else began
        waiting[target.pid] = (target, view, limit if deadline is None else min(limit, deadline))
    if signum:
        for target, view, _ in waiting.values():
            _send(target, view, signum, group)

    def step() -> int:  # reap those that ended, kill those whose grace has passed; returns how many are left
        _reap(waiting, result, result.exited if signum is not None else result.gone, timeout=0)
        now = time.monotonic()
        hurried = hurry is not None and hurry()
        due = {pid: entry for pid, entry in waiting.items() if hurried or entry[2] <= now}
        for pid in due:
            del waiting[pid]
        _kill_and_reap(due, result, kill_wait, group)
        return len(waiting)

    # each target is killed when its own grace period has passed; the others' go on meanwhile
    poll(step, done=lambda left: left == 0, interval=CHECK_SECONDS, backoff=1.0)
    return result


def _view(target: Target, result: Ended) -> psutil.Process | None:
    """``target`` as a :class:`psutil.Process`, or ``None`` (recorded in ``result.gone``) when it has ended."""
    if isinstance(target, subprocess.Popen):
        if target.returncode is not None:
            result.gone.append(target.pid)
            result.codes[target.pid] = target.returncode
            return None
        try:
            return psutil.Process(target.pid)
        except psutil.NoSuchProcess:
            target.poll()
            result.gone.append(target.pid)
            if target.returncode is not None:
                result.codes[target.pid] = target.returncode
            return None
    if not target.is_running():
        result.gone.append(target.pid)
        return None
    return target


def _send(target: Target, view: psutil.Process, signum: int, group: bool) -> None:
    """``signum`` to ``target`` or its process group; a process that has just ended is no error."""
    try:
        if group:
            os.killpg(target.pid, signum)
        else:
            view.send_signal(signum)
    except (ProcessLookupError, psutil.NoSuchProcess):
        pass


def _reap(waiting: dict[int, tuple[Target, psutil.Process, float]], result: Ended, into: list[int],
          timeout: float | None) -> None:
    """Remove from ``waiting`` the targets that end within ``timeout`` seconds (``psutil.wait_procs``), adding
    their pids to ``into`` and their exit codes to ``result.codes`` (and to a ``Popen``'s ``returncode``)."""
    views = {view.pid: view for _, view, _ in waiting.values()}
    ended, _ = psutil.wait_procs(list(views.values()), timeout=timeout)
    for view in ended:
        target = waiting.pop(view.pid)[0]
        into.append(view.pid)
        code = getattr(view, "returncode", None)
        if isinstance(target, subprocess.Popen):
            if target.returncode is None and code is not None:
                target.returncode = int(code)
            code = target.returncode
        if code is not None:
            result.codes[view.pid] = int(code)


def _kill_and_reap(killing: dict[int, tuple[Target, psutil.Process, float]], result: Ended,
                   kill_wait: float | None, group: bool) -> None:
    """SIGKILL every target of ``killing`` (its group with ``group``), then wait ``kill_wait`` seconds (``None``:
    until they end) and reap them; those still running go to ``result.left``."""
    for target, view, _ in killing.values():
        result.killed.append(target.pid)
        try:
            if group:
                os.killpg(target.pid, signal.SIGKILL)
            else:
                view.kill()
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    _reap(killing, result, [], timeout=kill_wait)
    result.left += list(killing)
