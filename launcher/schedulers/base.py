"""The scheduler interface: get nodes (submit, poll, cancel) and read the allocation we run in.

A backend only builds argument lists and parses outputs; running commands and polling live here
(the shape of PSI/J's batch executors and Parsl's providers, ../shared/STYLE.md).
"""

from __future__ import annotations

import enum
import socket
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

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
    """

    scheduler: str
    job_id: str | None
    nodes: tuple[Node, ...]
    cores_per_node: int
    memory_per_node: int
    walltime: float | None
    start_time: float = field(default_factory=time.time)
    fanout: str = "local"

    @property
    def deadline(self) -> float | None:
        """Epoch seconds when the walltime ends, or ``None``."""
        return None if self.walltime is None else self.start_time + self.walltime


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
