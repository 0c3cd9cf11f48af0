"""The states of the things a run is made of, one vocabulary per kind of thing, each with its terminal states.

- :class:`RunState`: a run (``run.json`` ``state``): ``running`` until it ends in one of the others.
- :class:`ClusterState`: a cluster as ``hpc-hadoop list``/``status`` show it, from its directory and its batch
  job: the run's states plus ``pending``, ``starting``, ``ready``, ``stopping``, ``unknown``, ``unreachable``,
  ``lost``, ``cancelled`` and ``gone``.
- :class:`AgentState`: a node's agent (``agents/<node>.json`` ``state``).
- :class:`StepState`: a step of the job file (``run.json`` ``steps[].state``).
- A batch job's state is :class:`launcher.schedulers.allocation.JobState` (each scheduler's codes translated).

Each is a ``str`` enum: a member equals its value (``RunState.FAILED == "failed"``), prints as it
(``f"{RunState.FAILED}"`` is ``failed``) and is written to JSON as it, so the files keep the same strings.
The reference lists them all (docs/user-guide.md, "States").
"""

from __future__ import annotations

import enum


class State(str, enum.Enum):
    """A state: a ``str`` that prints as its value. Each kind below says by its ``terminal`` property when nothing
    changes the thing's state any more."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class RunState(State):
    """A run (``run.json`` ``state``): ``running``, then one terminal state.

    ``stopped``: an interactive cluster ended by ``hpc-hadoop stop``; ``bringup_failed``: the cluster never
    came up; ``failed``: it came up, then a step or a daemon failed; ``interrupted``: a signal (SIGINT, SIGTERM
    other than the walltime's); ``timed_out``: the walltime was nearly over.
    """

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    STOPPED = "stopped"
    FAILED = "failed"
    BRINGUP_FAILED = "bringup_failed"
    INTERRUPTED = "interrupted"
    TIMED_OUT = "timed_out"

    @property
    def terminal(self) -> bool:
        """Every state but ``running``."""
        return self is not RunState.RUNNING


class ClusterState(State):
    """A cluster as ``hpc-hadoop list`` and ``status`` show it (:class:`launcher.lifecycle.interactive.ClusterStatus`).

    Active (the cluster holds or waits for its allocation): ``pending`` (queued), ``starting`` (bring-up),
    ``running`` (steps), ``ready`` (up, held for interactive use), ``stopping``, ``unknown`` (the batch system
    does not answer; the cluster may run on). ``unreachable``: its directory's filesystem does not answer, or its
    directory (or a level above it) is not the user's own, so nothing in it is read (not final: asked again next
    time). Terminal: ``lost`` (its batch job or holder process ended without a final
    ``run.json``), ``cancelled`` (stopped while queued), ``gone`` (directory removed), and the terminal
    :class:`RunState` of its final ``run.json``.
    """

    PENDING = "pending"
    STARTING = "starting"
    RUNNING = "running"
    READY = "ready"
    STOPPING = "stopping"
    UNKNOWN = "unknown"
    UNREACHABLE = "unreachable"
    LOST = "lost"
    CANCELLED = "cancelled"
    GONE = "gone"
    SUCCEEDED = "succeeded"
    STOPPED = "stopped"
    FAILED = "failed"
    BRINGUP_FAILED = "bringup_failed"
    INTERRUPTED = "interrupted"
    TIMED_OUT = "timed_out"

    @property
    def active(self) -> bool:
        """True while the cluster holds (or waits for) its allocation."""
        return self in _ACTIVE

    @property
    def terminal(self) -> bool:
        """Neither active nor ``unreachable``."""
        return not self.active and self is not ClusterState.UNREACHABLE


_ACTIVE = frozenset({ClusterState.PENDING, ClusterState.STARTING, ClusterState.RUNNING, ClusterState.READY,
                     ClusterState.STOPPING, ClusterState.UNKNOWN})


class AgentState(State):
    """A node's agent (``agents/<node>.json`` ``state``): ``starting`` (directories, daemons being started),
    ``running`` (its daemons watched), ``stopping``, then ``stopped``, or ``failed`` (a daemon exited on its own,
    or the NameNode could not be formatted)."""

    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        """``stopped`` and ``failed``."""
        return self in (AgentState.STOPPED, AgentState.FAILED)


class StepState(State):
    """A step of the job file (``run.json`` ``steps[].state``): ``pending``, ``running``, then ``succeeded``,
    ``failed`` or ``killed`` (stopped by the launcher: its timeout, a signal, the walltime)."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    KILLED = "killed"

    @property
    def terminal(self) -> bool:
        """``succeeded``, ``failed`` and ``killed``."""
        return self in (StepState.SUCCEEDED, StepState.FAILED, StepState.KILLED)
