"""The fan-out interface: start the agent on every node at once, tell whether it runs, stop it."""

from __future__ import annotations

import signal
import subprocess
import sys
from abc import ABC, abstractmethod
from pathlib import Path

from launcher.plan import ClusterPlan

#: Seconds between the SIGTERM that forces a fan-out process to end and the SIGKILL.
FORCE_SECONDS = 10.0


def agent_argv(plan: ClusterPlan, *extra: str) -> list[str]:
    """``python -m launcher.agent RUN_DIR [extra...]`` with this interpreter."""
    return [sys.executable, "-m", "launcher.agent", plan.run_dir, *extra]


class Fanout(ABC):
    """Runs :mod:`launcher.agent` on every node of a plan as one process tree we control.

    Subclasses implement :meth:`command`; the base class starts it, polls it and stops it.
    """

    name: str = ""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    @abstractmethod
    def command(self, plan: ClusterPlan) -> list[str]:
        """The command that runs the agent on every node of ``plan`` (one process tree)."""

    def log_file(self, plan: ClusterPlan) -> Path:
        """Where the fan-out process's own output goes."""
        return plan.path("logs", f"fanout-{self.name}.log")

    def start(self, plan: ClusterPlan) -> None:
        """Start the agents (returns at once; readiness is checked by the caller)."""
        log = self.log_file(plan)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(self.command(plan), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def running(self) -> bool:
        """True while the fan-out process (and so the agents) runs."""
        return self.proc is not None and self.proc.poll() is None

    #: The signal that asks the fan-out process to stop every agent and wait for them.
    stop_signal: signal.Signals = signal.SIGTERM

    def stop(self, timeout: float = 45.0) -> int | None:
        """Ask every agent to stop (:attr:`stop_signal`), wait up to ``timeout`` s for them to finish, then
        SIGTERM (when that is not the stop signal) and, :data:`FORCE_SECONDS` later, SIGKILL. Returns the exit
        code. ``timeout`` covers an agent's own stop (daemon grace plus the first run's class-data-sharing
        archive: :data:`launcher.agent.GRACE_SECONDS` + :data:`launcher.agent.DUMP_GRACE_SECONDS`)."""
        if self.proc is None:
            return None
        escalation = [(self.stop_signal, timeout)]
        if self.stop_signal != signal.SIGTERM:
            escalation.append((signal.SIGTERM, FORCE_SECONDS))
        for signum, wait in escalation:
            if self.proc.poll() is not None:
                break
            self.proc.send_signal(signum)
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode
