"""What a scheduler backend hands the rest: the allocation's nodes and what each offers (the second arrow of the
data flow, docs/architecture.md), and the state of a batch job with each batch system's translation table.
Plain, frozen data; :mod:`launcher.schedulers` produces it, :mod:`launcher.plan.cluster_plan`,
:mod:`launcher.filesystems`,
``submit`` and ``stop`` read it.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field


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
        fanout_program: the absolute path of that launcher's command when the batch system knows it (written into
            the submitted job file: PBS), else ``None`` (the launcher's own name, looked up on ``PATH``).
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
    fanout_program: str | None = None
    preview: bool = False

    @property
    def deadline(self) -> float | None:
        """Epoch seconds when the walltime ends, or ``None``."""
        return None if self.walltime is None else self.start_time + self.walltime


class JobState(str, enum.Enum):
    """State of a batch job, translated from each scheduler's own codes.

    ``UNKNOWN``: the batch system ANSWERED that it does not know the job (Slurm ``Invalid job id specified``, PBS
    ``Unknown Job Id``, an empty listing): after a final ``run.json`` or a known end, an end. ``NO_ANSWER``: it did
    not answer at all (cannot connect, a timeout, an error exit, another batch system's ``qstat``): nothing is known
    about the job, which may well run on; never an end.
    """

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timed_out"
    UNKNOWN = "unknown"
    NO_ANSWER = "no_answer"

    @property
    def terminal(self) -> bool:
        """True when the job will not change state any more."""
        return self in (JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT)


def state_table(**codes: str) -> dict[str, JobState]:
    """A batch system's state codes → :class:`JobState`, written per state: ``state_table(pending="Q H",
    running="R")`` (each value: the codes, space-separated; each key: a :class:`JobState` name, lower case)."""
    return {code: JobState[state.upper()] for state, text in codes.items() for code in text.split()}
