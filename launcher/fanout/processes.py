"""The one process manager of the fan-out: start our agent on every node through a launcher, tell whether it
runs, stop it. The launchers (:mod:`launcher.fanout.base`) only build commands; every process is started,
polled and stopped here, the same way for each of them.

Nothing started here leaves the job's process tree (issue 17 item 11: a Torque MoM's ``qdel`` killed the job's
session, SIGKILL 26 ms after SIGTERM, and a ``pbsdsh`` client started in a session of its own outlived the job):

* the launcher processes stay in our session, in a process group of their own (:func:`start_client`): the batch
  system's kill of the job's session or process tree reaches them, a terminal's Ctrl-C (sent to the foreground
  process group) does not, so that the run tears the cluster down in order;
* each is tied to us with ``PR_SET_PDEATHSIG`` (SIGTERM, through ``prctl`` by :mod:`ctypes`): if this process dies
  first, however it dies (SIGKILL included, which no handler of ours can see), the kernel sends the launcher
  SIGTERM, which ``srun`` and ``pbsdsh`` pass on to their tasks before they exit and which stops a local agent in
  order. A process-group kill alone would need us alive to send it; a new session would escape the batch system.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from launcher.fanout.base import Launcher, StepOptions
from launcher.util.processes import end
from launcher.util.records import AgentRecord

#: Seconds between the SIGTERM that forces a launcher covering every node (``srun``) to end and the SIGKILL.
FORCE_SECONDS = 10.0
#: Seconds between the SIGTERM that forces a per-node launcher process (``pbsdsh``, ``qrsh``...) to end and the
#: SIGKILL.
NODE_FORCE_SECONDS = 5.0
#: Seconds a ``kill -TERM PID`` sent to another node through the launcher may take before it is killed.
KILL_WAIT_SECONDS = 5.0
#: The agents' step's name in the batch system's listings (``srun --job-name``).
AGENT_STEP_NAME = "hpc-hadoop-agents"


@dataclass(frozen=True)
class Command:
    """One wrapped command of an :class:`AgentGroup`.

    Attributes:
        nodes: the nodes whose agents it runs (all of them, or one for a per-node launcher).
        argv: the command line.
        env: variables added to our environment for it (``HPC_HADOOP_NODE`` for a per-node launcher).
    """

    nodes: tuple[str, ...]
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


#: ``prctl`` option that asks the kernel for a signal when the parent dies (``<linux/prctl.h>``).
PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, or ``None`` where there is none (not Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def tied_child(parent: int, tie: bool, *, own_group: bool = True) -> Callable[[], None]:
    """The ``preexec_fn`` of a child that must not outlive us: with ``own_group``, a process group of its own
    (``setpgid(0, 0)``: a terminal's Ctrl-C does not reach it, :func:`os.killpg` reaches its children) and, with
    ``tie``, SIGTERM when ``parent`` (this process) dies (``PR_SET_PDEATHSIG``), ending at once if it already died
    between ``fork`` and ``prctl``. Used for the fan-out launcher processes (:func:`start_client`) and the job
    clients (:class:`launcher.steps.jobs.StepRunner`).

    The kernel sends the signal when the *thread* that forked the child exits, so children that must outlive a
    worker thread are not tied (:func:`start_client` ties on the main thread only). The function calls only
    ``setpgid``, ``prctl`` (bound before ``fork``), ``getppid`` and ``kill``: nothing that takes a lock.
    """
    prctl = _prctl() if tie else None

    def setup() -> None:
        if own_group:
            os.setpgid(0, 0)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    return setup


def start_client(argv: Sequence[str], out: IO[bytes] | int, env: dict[str, str] | None = None
                 ) -> subprocess.Popen[bytes]:
    """Start a fan-out launcher process (``srun``, ``pbsdsh``, ``pbs_tmrsh``, ``qrsh``, a local agent) so that it
    never leaves the job's process tree: in our session but a process group of its own, standard input closed,
    output to ``out``, and, started from the main thread, SIGTERM when this process dies (module docstring).

    Raises:
        OSError: the command cannot be started (not installed).
    """
    tie = threading.current_thread() is threading.main_thread()
    return subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=tied_child(os.getpid(), tie), env=env)


def _wait(procs: Sequence[subprocess.Popen[bytes]], seconds: float) -> list[subprocess.Popen[bytes]]:
    """Wait up to ``seconds`` (in all) for ``procs`` to end; returns those still running."""
    deadline = time.monotonic() + seconds
    left = []
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            left.append(proc)
    return left


def _is_this_host(host: str) -> bool:
    """Whether the node name ``host`` is this machine (its hostname, short hostname, or ``localhost``)."""
    return host in (socket.gethostname(), socket.gethostname().split(".")[0], "localhost")


class AgentGroup:
    """The agents of one cluster, run through one launcher as processes we control.

    Args:
        launcher: the launcher (:func:`launcher.fanout.get_launcher`).
        run_dir: the cluster directory (logs go to ``logs/``, agents' states are read from ``agents/``).
        nodes: the node names, the master's first.
        argv: the agent's command (``python -m launcher.node.agent RUN_DIR``); the group adds ``--node HOST`` for a
            per-node launcher, ``--node NODE --watch-pid <our pid>`` for one that runs here.
        cores: cores of each node, which each agent task may use (``srun --cpus-per-task``).

    Attributes:
        env: variables added to the environment of every command (the agents' key to their sealed keys,
            :data:`launcher.util.sealed.KEY_ENV`: never on a command line, which every user of a node reads).

    Raises:
        ValueError: no node.
    """

    def __init__(self, launcher: Launcher, run_dir: str | Path, nodes: Sequence[str], argv: Sequence[str], *,
                 cores: int = 1) -> None:
        if not nodes:
            raise ValueError("an agent group needs at least one node")
        self.launcher = launcher
        self.run_dir = Path(run_dir)
        self.nodes = list(nodes)
        self.argv = list(argv)
        self.cores = cores
        self.env: dict[str, str] = {}
        self._procs: list[tuple[Command, subprocess.Popen[bytes]]] = []
        self._pids: dict[str, int] = {}

    @property
    def log_file(self) -> Path:
        """Where the launcher processes' own output goes: ``logs/fanout-<launcher name>.log``."""
        return self.run_dir / "logs" / f"fanout-{self.launcher.name}.log"

    def step_options(self) -> StepOptions:
        """The agents' step: each task's output in ``logs/agent-<node>.out`` (``srun --output``; through a launcher
        that does not relay its task's output, the agent's own redirection), every core of its node, named
        :data:`AGENT_STEP_NAME`, no task ended because another failed, no CPU binding (the daemons are JVMs
        with many threads)."""
        return StepOptions(output=f"{self.run_dir}/logs/agent-%N.out", cpus_per_task=self.cores,
                           job_name=AGENT_STEP_NAME, kill_on_bad_exit=False, cpu_bind="none")

    def commands(self) -> list[Command]:
        """The wrapped commands that start the agents: one per node for a per-node launcher, else one for all."""
        launcher, options = self.launcher, self.step_options()
        if launcher.per_node:
            return [Command((host,), launcher.wrap([*self.argv, "--node", host], [host], options=options),
                            {"HPC_HADOOP_NODE": host}) for host in self.nodes]
        extra = ["--node", self.nodes[0], "--watch-pid", str(os.getpid())] if launcher.runs_here else []
        return [Command(tuple(self.nodes), launcher.wrap([*self.argv, *extra], self.nodes, options=options))]

    def command(self, node: str) -> list[str]:
        """The wrapped command that starts the agent of ``node`` (the one for all nodes, when it covers all).

        Raises:
            KeyError: ``node`` is not one of the group's nodes.
        """
        for command in self.commands():
            if node in command.nodes:
                return command.argv
        raise KeyError(node)

    def start(self) -> None:
        """Start every command of :meth:`commands` at once (:func:`start_client`: in the job's process tree, a
        process group of its own, SIGTERM if we die), output appended to :attr:`log_file` (returns at once;
        readiness is checked by the caller)."""
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as out:
            for command in self.commands():
                extra = {**self.env, **command.env}
                env = {**os.environ, **extra} if extra else None
                self._procs.append((command, start_client(command.argv, out, env)))

    def running(self, ignore: set[str] | frozenset[str] = frozenset()) -> bool:
        """True while every started process runs (and so every agent), leaving out a per-node process whose
        nodes are all in ``ignore`` (lost nodes); False before :meth:`start`."""
        return bool(self._procs) and all(proc.poll() is None for command, proc in self._procs
                                         if not set(command.nodes) <= ignore)

    def remember(self, pids: dict[str, int | None]) -> None:
        """Keep the agents' pids (``{node: pid}``, from their state files as already read) so that :meth:`agent_pid`
        need not read the shared filesystem at teardown, when it may be stalled."""
        self._pids.update({node: int(pid) for node, pid in pids.items() if pid})

    def agent_pid(self, host: str) -> int | None:
        """The agent's pid on ``host``: remembered (:meth:`remember`), else from ``agents/<host>.json``, if it
        wrote one."""
        if host in self._pids:
            return self._pids[host]
        record = AgentRecord.read_or_none(self.run_dir / "agents" / f"{host}.json")
        return None if record is None else record.pid

    def signal_agent(self, host: str, pid: int) -> subprocess.Popen[bytes] | None:
        """SIGTERM to the agent ``pid`` on ``host``: directly when ``host`` is this machine (returns ``None``),
        else by ``kill -TERM PID`` run there through the launcher (returns that process; output to the log)."""
        if _is_this_host(host):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            return None
        argv = self.launcher.wrap(["kill", "-TERM", str(pid)], [host])
        try:
            with open(self.log_file, "ab") as out:
                return start_client(argv, out)
        except OSError:  # the log is on the shared filesystem, which may be gone: the agent must stop all the same
            return start_client(argv, subprocess.DEVNULL)

    def _signal_agents(self) -> list[subprocess.Popen[bytes]]:
        """SIGTERM by pid to the agent of every node whose launcher process still runs; returns the ``kill``
        processes started on other nodes."""
        killers = []
        for command, proc in self._procs:
            for host in command.nodes:
                pid = self.agent_pid(host)
                if proc.poll() is None and pid is not None:
                    killer = self.signal_agent(host, pid)
                    if killer is not None:
                        killers.append(killer)
        return killers

    def stop(self, timeout: float = 45.0) -> int | None:
        """Ask every agent to stop, wait up to ``timeout`` seconds for the processes, then force those left.

        Asking: the launcher's :attr:`~launcher.fanout.base.Launcher.stop_signal` to each process (``srun``
        passes SIGUSR1 on to every agent), or, when it has none (``pbsdsh``, ``pbs_tmrsh``, ``qrsh`` pass no
        signal on), SIGTERM to each agent by its pid (:meth:`signal_agent`). Forcing: SIGTERM (unless that was
        the stop signal) and SIGKILL :data:`FORCE_SECONDS` later (:data:`NODE_FORCE_SECONDS` for per-node
        launchers); with SIGTERM as the stop signal (``local``), SIGKILL right after ``timeout``. ``timeout``
        covers an agent's own stop (daemon grace, the first run's class-data-sharing archives, the wait for the
        other nodes: at most :data:`launcher.node.agent.STOP_BUDGET_SECONDS`, 30 s, after which the agent kills what is
        left and removes its node-local directory itself).

        Returns:
            The exit code of the first process (the master node's), ``None`` if :meth:`start` was not called.
        """
        if not self._procs:
            return None
        procs = [proc for _, proc in self._procs]
        live = [proc for proc in procs if proc.poll() is None]
        stop_signal = self.launcher.stop_signal
        killers: list[subprocess.Popen[bytes]] = []
        if stop_signal is None:
            killers = self._signal_agents()
        else:
            for proc in live:
                proc.send_signal(stop_signal)
        left = _wait(live, timeout)
        force = NODE_FORCE_SECONDS if self.launcher.per_node else FORCE_SECONDS
        end(left, signum=None if stop_signal == signal.SIGTERM else signal.SIGTERM, grace=force)
        end(killers, signum=0, grace=KILL_WAIT_SECONDS)
        return procs[0].returncode
