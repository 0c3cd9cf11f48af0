"""What a fan-out launcher is: pure functions only, no processes (:mod:`launcher.fanout.processes` runs them).

As in Parsl's launchers, the part that differs between batch systems is one function, :meth:`Launcher.wrap`:
``argv`` in, the command that runs ``argv`` on some nodes of the allocation out. Two facts go with it:
:attr:`Launcher.per_node` (whether one wrapped command covers every node or one is needed per node) and
:attr:`Launcher.stop_signal` (the signal that asks the wrapped command to stop, or ``None``: the launcher
passes no signal on, so each agent is signalled by its pid). The same ``wrap`` starts the agents
(:class:`launcher.fanout.processes.AgentGroup`), reaches an agent on another node to stop it, and runs the
``dd`` baseline of ``benchmarks/workloads/base.py`` on every batch system.
"""

from __future__ import annotations

import shlex
import signal
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class StepOptions:
    """Options of one job step that only some launchers have (today ``srun``: the agents' step); a launcher
    without such options ignores them. ``None`` leaves an option out (the launcher's default).

    Attributes:
        output: where each task's output goes (``srun --output``; ``%N`` is the node's name).
        cpus_per_task: cores each task may use (``srun --cpus-per-task``).
        job_name: the step's name in the batch system's listings (``srun --job-name``).
        kill_on_bad_exit: whether one task failing ends the others (``srun --kill-on-bad-exit=0|1``).
        cpu_bind: CPU binding of the tasks (``srun --cpu-bind``, e.g. ``none``).
    """

    output: str | None = None
    cpus_per_task: int | None = None
    job_name: str | None = None
    kill_on_bad_exit: bool | None = None
    cpu_bind: str | None = None


class Launcher(ABC):
    """Runs a command on nodes of the allocation, as a task the batch system tracks (no ssh).

    Subclasses set :attr:`name`, :attr:`per_node`, :attr:`stop_signal` (and :attr:`runs_here` for the local
    one) and implement :meth:`wrap`. Nothing here starts a process or reads a plan.

    Args:
        program: the launcher's command as an absolute path (``/opt/pbs/bin/pbs_tmrsh``: what the batch system's
            backend wrote into the submitted job file, because the job's ``PATH`` may not be the submitter's);
            ``None``: the command's name, looked up on ``PATH``.
    """

    #: The registry name (``srun``, ``pbsdsh``...); also names the log ``logs/fanout-<name>.log``.
    name: ClassVar[str] = ""
    #: True: :meth:`wrap` takes exactly one node, and running something on every node takes one wrapped
    #: command per node. False: one wrapped command runs ``argv`` once on each of the nodes it is given.
    per_node: ClassVar[bool] = False
    #: The signal that asks a wrapped command to stop what it runs and wait for it; ``None`` when the launcher
    #: passes no signal on to the remote task (the agents are then sent SIGTERM by their pid).
    stop_signal: ClassVar[signal.Signals | None] = signal.SIGTERM
    #: True when :meth:`wrap` runs ``argv`` on this machine as our own child (the ``local`` backend).
    runs_here: ClassVar[bool] = False
    #: True when the remote task gets the wrapped command's environment (``srun``'s ``--export=ALL`` default,
    #: ``qrsh -V``, the local one); False when it gets the job's instead (PBS's ``tm_spawn``): a variable set for
    #: the command (:data:`launcher.util.sealed.KEY_ENV`) then does not arrive.
    passes_environment: ClassVar[bool] = True

    #: The launcher's command as an absolute path, ``None``: its name (see the class's ``program`` argument).
    program: str | None = None

    def __init__(self, program: str | None = None) -> None:
        self.program = program

    @abstractmethod
    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """The command that runs ``argv`` on ``nodes`` (once on each), as a task of the running job.

        Args:
            argv: the command to run (a program and its arguments, unquoted).
            nodes: node names of the allocation; exactly one for a :attr:`per_node` launcher.
            options: step options (:class:`StepOptions`), for the launchers that have them.

        Raises:
            ValueError: no node, or more than one for a :attr:`per_node` launcher.
        """

    def one_node(self, nodes: Sequence[str]) -> str:
        """The one node of ``nodes``.

        Raises:
            ValueError: ``nodes`` does not hold exactly one node (a per-node launcher reaches one at a time).
        """
        if len(nodes) != 1:
            raise ValueError(f"{self.name} runs a command on one node at a time, not on {list(nodes)}")
        return nodes[0]


class TaskLauncher(Launcher):
    """A launcher that starts a task of the job on one node per command through the batch system's own task
    interface (``pbsdsh -h HOST``, ``pbs_tmrsh HOST``, ``qrsh -inherit HOST``): subclasses only say the words
    before the host and whether the remote side joins the words into a shell command line. None of them passes
    a signal on to the remote task, so :attr:`stop_signal` is ``None`` (the agents are stopped by pid)."""

    per_node = True
    stop_signal = None
    #: The words before the node's name (``("pbsdsh", "-h")``); the first, the command, is :attr:`program` when set.
    prefix: ClassVar[tuple[str, ...]] = ()
    #: True when the launcher joins the words with spaces for the remote shell: each word is then
    #: :func:`shlex.quote`-d, so that it arrives as it was.
    joins_words: ClassVar[bool] = False
    #: False when the batch system sends the task's output to the job's output file rather than to the launcher's
    #: own (OpenPBS's ``pbs_tmrsh`` and Torque's ``pbsdsh``: ``tm_spawn`` relays nothing; issue 37 item 5): then a
    #: step's ``output`` option is applied by the task itself, which sends its output to that file.
    relays_output: ClassVar[bool] = True

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``<prefix> HOST ARGV...`` (each word quoted when :attr:`joins_words`). Of ``options`` only ``output``
        applies, and only where the launcher does not relay the task's output (:attr:`relays_output`): the task then
        appends its output to that file itself (``%N``: the node).

        Raises:
            ValueError: ``nodes`` does not hold exactly one node.
        """
        host = self.one_node(nodes)
        if options is not None and options.output and not self.relays_output:
            argv = ["sh", "-c", 'exec >>"$0" 2>&1; exec "$@"', options.output.replace("%N", host), *argv]
        words = [shlex.quote(a) for a in argv] if self.joins_words else list(argv)
        return [self.program or self.prefix[0], *self.prefix[1:], host, *words]
