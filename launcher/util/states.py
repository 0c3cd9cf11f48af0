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

How a run ends decides one state and one exit code (:data:`EXIT_CODES`, :data:`SIGNAL_STATES`; docs/user-guide.md,
"How a run ends"): ``run.json``, ``submit --wait`` (its last line ``job <id>: <state>`` and its exit code),
``hpc-hadoop list``/``status`` and ``stop`` all say the same.
"""

from __future__ import annotations

import enum
import signal
from collections.abc import Mapping


class State(str, enum.Enum):
    """A state: a ``str`` that prints as its value. Each kind below says by its ``terminal`` property when nothing
    changes the thing's state any more."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class RunState(State):
    """A run (``run.json`` ``state``): ``running``, then one terminal state.

    ``stopped``: an interactive cluster, up and held, ended by ``hpc-hadoop stop``; ``bringup_failed``: the cluster
    never came up; ``failed``: it came up, then a step or a daemon failed; ``interrupted``: Ctrl-C (SIGINT);
    ``cancelled``: ended from outside before its work was done: SIGTERM or SIGHUP (``qdel``, ``scancel``,
    ``kill``), or ``hpc-hadoop stop`` during bring-up or a step; ``timed_out``: the walltime was nearly over. Each
    has one exit code (:data:`EXIT_CODES`). A ``run.json`` of an older release says ``interrupted`` for a SIGTERM
    too: it reads as it is (exit code 130).
    """

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    STOPPED = "stopped"
    FAILED = "failed"
    BRINGUP_FAILED = "bringup_failed"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"

    @property
    def terminal(self) -> bool:
        """Every state but ``running``."""
        return self is not RunState.RUNNING


class ClusterState(State):
    """A cluster as ``hpc-hadoop list`` and ``status`` show it
    (:class:`launcher.lifecycle.clusters.status.ClusterStatus`).

    Active (the cluster holds or waits for its allocation): ``pending`` (queued), ``starting`` (bring-up),
    ``running`` (steps), ``ready`` (up, held for interactive use), ``stopping``, ``unknown`` (the batch system
    does not answer; the cluster may run on). ``unreachable``: its directory's filesystem does not answer, or its
    directory (or a level above it) is not the user's own, so nothing in it is read (not final: asked again next
    time). Terminal: ``lost`` (its batch job or holder process ended without a final
    ``run.json``), ``cancelled`` (stopped while queued), ``gone`` (directory removed), and the terminal
    :class:`RunState` of its final ``run.json``.

    A run's states are members here under the same names, their values taken from :class:`RunState`
    (``ClusterState.FAILED.value`` is ``RunState.FAILED.value``): one string each for both, on disk and in
    ``list --json``; :meth:`of_run` turns one into the other. That every terminal :class:`RunState` has its member
    here is checked by tests/unit/util/test_states.py (Python's functional ``Enum`` API could build this class from
    ``RunState``'s members, but ``mypy --strict`` would then know none of them).
    """

    PENDING = "pending"
    STARTING = "starting"
    RUNNING = RunState.RUNNING.value
    READY = "ready"
    STOPPING = "stopping"
    UNKNOWN = "unknown"
    UNREACHABLE = "unreachable"
    LOST = "lost"
    CANCELLED = RunState.CANCELLED.value  # the run's own, or stopped while queued
    GONE = "gone"
    SUCCEEDED = RunState.SUCCEEDED.value
    STOPPED = RunState.STOPPED.value
    FAILED = RunState.FAILED.value
    BRINGUP_FAILED = RunState.BRINGUP_FAILED.value
    INTERRUPTED = RunState.INTERRUPTED.value
    TIMED_OUT = RunState.TIMED_OUT.value

    @classmethod
    def of_run(cls, state: RunState) -> ClusterState:
        """What a cluster whose ``run.json`` says ``state`` shows as: the same word."""
        return cls(state.value)

    @property
    def active(self) -> bool:
        """True while the cluster holds (or waits for) its allocation."""
        return self in _ACTIVE

    @property
    def up(self) -> bool:
        """True while its daemons are up: ``ready`` and ``running``."""
        return self in (ClusterState.READY, ClusterState.RUNNING)

    @property
    def terminal(self) -> bool:
        """Neither active nor ``unreachable``."""
        return not self.active and self is not ClusterState.UNREACHABLE


#: The exit code of each way a run ends, by its state: what ``run.json`` records (``exit_code``), what ``run``,
#: ``submit --wait`` and ``start`` exit with, the same word in ``list``/``status``. ``None``: the code of what failed
#: (the error around the steps: 1 a daemon died, 2 bad input; else the failed step's own exit code; else 1).
#:
#: ========================================================================  ==================  =========
#: how the run ended                                                         state               exit code
#: ========================================================================  ==================  =========
#: every step succeeded                                                      ``succeeded``       0
#: an interactive cluster, up and held, ended by ``hpc-hadoop stop``         ``stopped``         0
#: a step or a daemon failed once the cluster was up                         ``failed``          the step's or 1
#: the cluster never came up (or the job file was refused)                   ``bringup_failed``  1 (2 bad input)
#: Ctrl-C (SIGINT)                                                           ``interrupted``     130 (128 + 2)
#: SIGTERM or SIGHUP (``qdel``, ``scancel``, ``kill``; PBS and Slurm send     ``cancelled``       143 (128 + 15)
#: SIGTERM), ``hpc-hadoop stop`` during bring-up or a step, or ``stop``
#: (``qdel``, ``scancel``) while the job was still queued
#: the walltime nearly over (SIGUSR1 warning, or the launcher's deadline)    ``timed_out``       124
#: ========================================================================  ==================  =========
EXIT_CODES: Mapping[RunState, int | None] = {
    RunState.SUCCEEDED: 0, RunState.STOPPED: 0, RunState.FAILED: None, RunState.BRINGUP_FAILED: None,
    RunState.INTERRUPTED: 128 + signal.SIGINT, RunState.CANCELLED: 128 + signal.SIGTERM, RunState.TIMED_OUT: 124,
}
#: ``cancelled``'s exit code (143), also of a batch job cancelled before its ``run.json`` said an end.
CANCELLED_EXIT: int = 128 + signal.SIGTERM
#: ``timed_out``'s exit code (124, as ``timeout(1)``'s), also of a batch job its walltime ended.
TIMED_OUT_EXIT: int = 124

#: The state a run ends in when a signal ends it (:data:`EXIT_CODES` gives its exit code): SIGUSR1 is the batch
#: system's walltime warning; SIGTERM (``qdel``, ``scancel``, ``kill``) and SIGHUP are an end asked from outside.
SIGNAL_STATES: Mapping[int, RunState] = {
    signal.SIGINT: RunState.INTERRUPTED, signal.SIGTERM: RunState.CANCELLED, signal.SIGHUP: RunState.CANCELLED,
    signal.SIGUSR1: RunState.TIMED_OUT,
}


def signal_state(signum: int) -> RunState:
    """The state of a run that the signal ``signum`` ended (:data:`SIGNAL_STATES`; any other: ``cancelled``)."""
    return SIGNAL_STATES.get(signum, RunState.CANCELLED)


def exit_code_of(state: State | str) -> int | None:
    """The exit code of a run that ended in ``state`` (:data:`EXIT_CODES`; ``None``: the code of what failed, or no
    end of a run: ``lost``, ``gone``...). ``cancelled`` is 143 for a cluster cancelled while queued as well."""
    try:
        return EXIT_CODES.get(RunState(str(state)))
    except ValueError:  # a cluster's own state (lost, gone...): no end of a run
        return None


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
