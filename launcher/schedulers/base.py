"""The scheduler interface: get nodes (submit, poll, cancel) and read the allocation we run in.

A backend only builds argument lists and parses outputs; running commands and polling live here
(the shape of PSI/J's batch executors and Parsl's providers; docs/architecture.md, Data flow).
"""

from __future__ import annotations

import enum
import os
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from launcher.errors import CommandError, UserError
from launcher.spec import JobSpec


class JobState(str, enum.Enum):
    """State of a batch job, translated from each scheduler's own codes."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timed_out"
    UNKNOWN = "unknown"

    @property
    def terminal(self) -> bool:
        """True when the job will not change state any more."""
        return self in (JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT)


@dataclass(frozen=True)
class Node:
    """One node of an allocation.

    Attributes:
        name: the hostname as the scheduler knows it (``n17``).
        address: the IPv4 address daemons bind to on that node.
    """

    name: str
    address: str


@dataclass(frozen=True)
class Allocation:
    """The nodes we run on and what each offers.

    Attributes:
        scheduler: backend name.
        job_id: the batch job id, ``None`` on the local backend.
        nodes: the nodes, master first.
        cores_per_node: cores usable on each node (int).
        memory_per_node: memory usable on each node, bytes.
        walltime: seconds the allocation lasts, ``None`` when unlimited.
        start_time: when the allocation began (epoch seconds).
        fanout: the name of the launcher that starts our agent on every node.
        preview: a stand-in of the allocation a batch job will get (``render``, ``submit``'s checks), not one
            this process runs in.
    """

    scheduler: str
    job_id: str | None
    nodes: tuple[Node, ...]
    cores_per_node: int
    memory_per_node: int
    walltime: float | None
    start_time: float = field(default_factory=time.time)
    fanout: str = "local"
    preview: bool = False

    @property
    def deadline(self) -> float | None:
        """Epoch seconds when the walltime ends, or ``None``."""
        return None if self.walltime is None else self.start_time + self.walltime


#: The largest share of the walltime the teardown lead may take (10%): a short job keeps 90% of its time.
TEARDOWN_LEAD_FRACTION = 0.1


def teardown_lead(spec: JobSpec) -> int:
    """Seconds before the walltime ends when teardown starts, the same on every backend.

    ``min(batch.signal_lead, 10% of walltime)``, at least 1 s; used for Slurm's ``--signal=B:USR1@lead``,
    Grid Engine's soft limit ``s_rt = walltime - lead``, and the runner's own deadline (PBS sends no warning).
    For the default ``signal_lead`` (180 s): a 1-hour job gets 180 s, a 10-minute job 60 s (warning at 9:00).
    """
    return max(1, int(min(float(spec.batch.signal_lead), spec.walltime * TEARDOWN_LEAD_FRACTION)))


#: A cgroup v1 ``memory.limit_in_bytes`` at or above this means "no limit" (the kernel writes 2^63 rounded down
#: to the page size).
_CGROUP_V1_UNLIMITED = 1 << 60


def _read_limit(path: Path) -> int | None:
    """A cgroup memory limit file's value in bytes; ``None`` for ``max``, an unlimited v1 value, or no file."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= _CGROUP_V1_UNLIMITED:
        return None
    return int(text)


def cgroup_memory_limit(proc_cgroup: str | None = None, root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The smallest memory limit, bytes, of this process's cgroups and their ancestors (a batch system limits the
    job's cgroup, the process may sit in a step or task cgroup below it); ``None`` when there is none.

    Reads ``/proc/self/cgroup`` (or ``proc_cgroup``): a cgroup v2 line ``0::/path`` → ``root/path/memory.max``
    (``root/unified/...`` on hybrid hosts), a v1 line ``N:memory:/path`` → ``root/memory/path/
    memory.limit_in_bytes``.
    """
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    limits: list[int] = []
    for line in proc_cgroup.splitlines():
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            bases, name = [root, root / "unified"], "memory.max"
        elif "memory" in controllers.split(","):
            bases, name = [root / "memory", root / controllers], "memory.limit_in_bytes"
        else:
            continue
        relative = Path(path.strip().lstrip("/"))
        for base in bases:
            for directory in [base / relative, *(base / parent for parent in relative.parents)]:
                limit = _read_limit(directory / name)
                if limit is not None:
                    limits.append(limit)
    return min(limits) if limits else None


def granted_memory(*limits: int | None) -> int:
    """Memory a node grants this job, bytes: the smallest of the node's RAM (``psutil``), this process's cgroup
    limit (:func:`cgroup_memory_limit`) and ``limits`` (what the batch system says it granted; ``None``/0 =
    not said)."""
    import psutil

    known = [psutil.virtual_memory().total, cgroup_memory_limit(), *limits]
    return min(value for value in known if value)


def usable_cpus() -> int:
    """CPUs this process may run on: its CPU affinity (which a batch system's cpuset limits), else the CPU count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def whole_node_cores(granted: int, spec: JobSpec) -> int:
    """Cores YARN may use on a node of a whole-node allocation (issue 11).

    PBS Pro has no "all cores" in ``select``: without ``batch.cores_per_node`` the batch script asks
    ``ncpus=1`` with ``place=scatter:excl``, the node is the job's, and ``NCPUS`` says 1. Then YARN gets
    :func:`usable_cpus` instead (never fewer than ``granted``). Anything else keeps ``granted``: a node that is
    not exclusive may be shared with other jobs, and ``batch.cores_per_node`` is the user's own limit.
    """
    if spec.batch.exclusive and not spec.batch.cores_per_node:
        return max(granted, usable_cpus())
    return granted


def resolve(hostname: str) -> str:
    """Return the IPv4 address of ``hostname`` (via the resolver: ``/etc/hosts``, DNS)."""
    return socket.gethostbyname(hostname)


class Scheduler(ABC):
    """A batch system backend.

    Subclasses set :attr:`name` and :attr:`default_fanout` and implement :meth:`allocation`;
    batch systems add submission (:meth:`job_script`, :meth:`submit`, :meth:`state`, :meth:`cancel`).
    """

    name: ClassVar[str]
    default_fanout: ClassVar[str]

    @abstractmethod
    def allocation(self, spec: JobSpec) -> Allocation:
        """Read the allocation this process runs in (nodes, cores, memory, walltime).

        Raises:
            UserError: not inside an allocation of this scheduler, or it is unusable.
        """


def run_command(argv: list[str], *, timeout: float = 60.0, hint: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a scheduler command (never through a shell) and capture its output.

    Raises:
        UserError: the command is not installed (names it).
        CommandError: it exited non-zero (with ``check``), carrying its output's tail and ``hint``.
    """
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UserError(f"`{argv[0]}` is not installed or not on PATH", field="scheduler",
                        fix="load the batch system's module, or choose another scheduler") from None
    except subprocess.TimeoutExpired:
        raise CommandError(argv, -1, "", f"no answer within {timeout:.0f} s", hint) from None
    if check and proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stdout, proc.stderr, hint)
    return proc


class BatchScheduler(Scheduler):
    """A real batch system: renders a batch script, submits it, polls it, cancels it.

    Subclasses provide the directives, the argument lists and the output parsers; this class runs the
    commands (:func:`run_command`) and holds the polling loop's rules.
    """

    #: Template of the batch script, in ``templates/``.
    script_template: ClassVar[str]

    @abstractmethod
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """The scheduler directives for ``spec`` (without the ``#SBATCH``/``#PBS`` prefix)."""

    @abstractmethod
    def submit_argv(self, script: Path) -> list[str]:
        """The command that submits ``script``."""

    @abstractmethod
    def parse_job_id(self, stdout: str) -> str:
        """The job id from the submit command's output."""

    @abstractmethod
    def state(self, job_id: str) -> JobState:
        """The job's current state (``UNKNOWN`` once the batch system has forgotten it)."""

    @abstractmethod
    def cancel_argv(self, job_id: str) -> list[str]:
        """The command that cancels ``job_id``."""

    def preview_allocation(self, spec: JobSpec) -> Allocation:
        """A stand-in allocation of ``spec.nodes`` nodes (``node1``...) to preview the configuration."""
        cores = spec.batch.cores_per_node or 1
        memory = spec.batch.memory_per_node or 8 * (1 << 30)
        nodes = tuple(Node(f"node{i}", f"10.0.0.{i}") for i in range(1, spec.nodes + 1))
        return Allocation(scheduler=self.name, job_id="(preview)", nodes=nodes, cores_per_node=cores,
                          memory_per_node=memory, walltime=float(spec.walltime), fanout=self.default_fanout,
                          preview=True)

    def check(self, spec: JobSpec) -> None:
        """Refuse, before submission, what the batch system would accept but never run (default: nothing).

        Raises:
            UserError: the request can never be satisfied.
        """

    def filtered_directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """:meth:`directives` minus ``batch.skip_directives`` (by substring) plus ``batch.extra_directives``."""
        kept = [d for d in self.directives(spec, run_dir)
                if not any(skip in d for skip in spec.batch.skip_directives)]
        return kept + list(spec.batch.extra_directives)

    def submit(self, script: Path) -> str:
        """Submit ``script``; returns the job id.

        Raises:
            CommandError: the batch system refused it (its message is passed on).
        """
        proc = run_command(self.submit_argv(script), hint="the batch system refused the job; nothing is queued")
        return self.parse_job_id(proc.stdout)

    def cancel(self, job_id: str) -> None:
        """Cancel ``job_id`` (no error if it already ended)."""
        run_command(self.cancel_argv(job_id), check=False)


def node_address(name: str) -> str:
    """The IPv4 address daemons on node ``name`` bind to: its hostname's address.

    Raises:
        UserError: the name does not resolve, or resolves to a loopback address (127.x), which daemons on
            other nodes could not reach.
    """
    try:
        address = resolve(name)
    except OSError:
        raise UserError(f"node name {name} does not resolve", field="nodes",
                        fix="ask your admins to fix DNS or /etc/hosts, or set interface: (e.g. ib0)") from None
    if address.startswith("127."):
        raise UserError(f"node name {name} resolves to {address}, a loopback address other nodes cannot reach",
                        field="interface", fix=f"fix /etc/hosts on {name}, or set interface: (e.g. ib0, eth0)")
    return address
