"""PBS launchers: ``pbsdsh -h HOST`` (Torque) or ``pbs_tmrsh HOST`` (PBS Pro), one node per command; no ssh.

Both run the command as a task of the job through the MOMs (the TM interface), so PBS tracks and kills it
with the job. Neither reliably passes a signal on to the remote task, so their :attr:`stop_signal` is
``None``: :meth:`launcher.fanout.processes.AgentGroup.stop` asks each agent to stop by its pid (from
``agents/<node>.json``): directly on this host, through the same launcher (``pbsdsh -h HOST kill -TERM PID``)
on another.
"""

from __future__ import annotations

from launcher.fanout.base import TaskLauncher


class PbsdshLauncher(TaskLauncher):
    """Torque: ``pbsdsh -h HOST CMD...``, one per node, each word passed as is (``-u`` would run one per node by
    itself, but from a single process whose tasks cannot be told apart)."""

    name = "pbsdsh"
    prefix = ("pbsdsh", "-h")
    relays_output = False
    #: ``pbsdsh.c`` hands ``tm_spawn`` only its own ``TM_STDOUT_PORT`` (``-o``): the task has the job's environment.
    passes_environment = False


class TmrshLauncher(TaskLauncher):
    """PBS Pro / OpenPBS: ``pbs_tmrsh HOST 'word' 'word'...``, one per node (it joins the remote shell's words with
    spaces, so each word is shell-quoted)."""

    name = "pbs_tmrsh"
    prefix = ("pbs_tmrsh",)
    joins_words = True
    relays_output = False
    #: ``pbs_tmrsh.c`` calls ``tm_spawn`` with no environment (``NULL``): the task has the job's.
    passes_environment = False
