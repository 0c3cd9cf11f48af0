"""PBS fan-out: one ``pbsdsh -h HOST`` (Torque) or ``pbs_tmrsh HOST`` (PBS Pro) per node, all started at
once from one fan-out object; no ssh.

Both run the agent as a task of the job through the MOMs (the TM interface), so PBS tracks and kills it
with the job. Neither reliably passes a signal on to the remote task, so :meth:`PerNodeFanout.stop`
asks each agent to stop by its pid (from ``agents/<node>.json``): directly on this host, through the
same launcher (``pbsdsh -h HOST kill -TERM PID``) on another. :class:`PerNodeFanout` is shared with
:mod:`launcher.fanout.qrsh`.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from abc import abstractmethod

from launcher.fanout.base import Fanout, agent_argv
from launcher.plan import ClusterPlan


class PerNodeFanout(Fanout):
    """One launcher process per node, started in parallel; running while every one of them runs."""

    def __init__(self) -> None:
        super().__init__()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.plan: ClusterPlan | None = None

    @abstractmethod
    def remote(self, host: str, argv: list[str]) -> list[str]:
        """The command that runs ``argv`` on ``host`` as a task of the job."""

    def command(self, plan: ClusterPlan) -> list[str]:
        """The master node's command (each node gets :meth:`node_command`)."""
        return self.node_command(plan, plan.nodes[0].name)

    def node_command(self, plan: ClusterPlan, host: str) -> list[str]:
        """``<remote> HOST python -m launcher.agent RUN_DIR --node HOST``."""
        return self.remote(host, agent_argv(plan, "--node", host))

    def start(self, plan: ClusterPlan) -> None:
        """Start one launcher per node, all at once (returns at once)."""
        self.plan = plan
        log = self.log_file(plan)
        log.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        with open(log, "ab") as out:
            for node in plan.nodes:
                env["HPC_HADOOP_NODE"] = node.name
                self.procs[node.name] = subprocess.Popen(
                    self.node_command(plan, node.name), stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True, env=dict(env))
        self.proc = self.procs[plan.nodes[0].name]

    def running(self) -> bool:
        """True while the launcher of every node runs."""
        return bool(self.procs) and all(p.poll() is None for p in self.procs.values())

    def agent_pid(self, host: str) -> int | None:
        """The agent's pid on ``host`` from ``agents/<host>.json``, if it wrote one."""
        assert self.plan is not None
        try:
            return int(json.loads(self.plan.path("agents", f"{host}.json").read_text())["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def signal_agent(self, host: str, pid: int) -> subprocess.Popen[bytes] | None:
        """SIGTERM to the agent ``pid`` on ``host``: directly when it is this host, else through :meth:`remote`."""
        if host in (socket.gethostname(), socket.gethostname().split(".")[0], "localhost"):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            return None
        assert self.plan is not None
        with open(self.log_file(self.plan), "ab") as out:
            return subprocess.Popen(self.remote(host, ["kill", "-TERM", str(pid)]), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def stop(self, timeout: float = 45.0) -> int | None:
        """Ask every agent to stop (SIGTERM by pid), wait up to ``timeout`` s for the launchers, then SIGTERM
        and SIGKILL those left. Returns the master's launcher's exit code."""
        if not self.procs:
            return None
        killers = []
        for host, proc in self.procs.items():
            pid = self.agent_pid(host)
            if proc.poll() is None and pid is not None:
                killer = self.signal_agent(host, pid)
                if killer is not None:
                    killers.append(killer)
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for killer in killers:
            try:
                killer.wait(timeout=5)
            except subprocess.TimeoutExpired:
                killer.kill()
                killer.wait()
        return self.proc.returncode if self.proc is not None else None


class PbsdshFanout(PerNodeFanout):
    """Torque: ``pbsdsh -h HOST CMD...`` per node (``-u`` would run one per node by itself, but from a
    single process whose tasks cannot be told apart)."""

    name = "pbsdsh"

    def remote(self, host: str, argv: list[str]) -> list[str]:
        """``pbsdsh -h HOST ARGV...``."""
        return ["pbsdsh", "-h", host, *argv]


class TmrshFanout(PerNodeFanout):
    """PBS Pro / OpenPBS: ``pbs_tmrsh HOST CMD...`` per node (it joins the remote shell's words with
    spaces, so each word is shell-quoted)."""

    name = "pbs_tmrsh"

    def remote(self, host: str, argv: list[str]) -> list[str]:
        """``pbs_tmrsh HOST 'word' 'word'...``."""
        return ["pbs_tmrsh", host, *(shlex.quote(a) for a in argv)]
