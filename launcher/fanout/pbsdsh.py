"""PBS launchers: ``pbsdsh -h HOST`` (Torque) or ``pbs_tmrsh HOST`` (PBS Pro), one node per command; no ssh.

Both run the command as a task of the job through the MOMs (the TM interface), so PBS tracks and kills it
with the job. Neither reliably passes a signal on to the remote task, so their :attr:`stop_signal` is
``None``: :meth:`launcher.fanout.processes.AgentGroup.stop` asks each agent to stop by its pid (from
``agents/<node>.json``): directly on this host, through the same launcher (``pbsdsh -h HOST kill -TERM PID``)
on another.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from launcher.fanout.base import Launcher, StepOptions


class PbsdshLauncher(Launcher):
    """Torque: ``pbsdsh -h HOST CMD...``, one per node (``-u`` would run one per node by itself, but from a
    single process whose tasks cannot be told apart)."""

    name = "pbsdsh"
    per_node = True
    stop_signal = None

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``pbsdsh -h HOST ARGV...`` (each word passed as is); ``options`` do not apply.

        Raises:
            ValueError: ``nodes`` does not hold exactly one node.
        """
        return ["pbsdsh", "-h", self.one_node(nodes), *argv]


class TmrshLauncher(Launcher):
    """PBS Pro / OpenPBS: ``pbs_tmrsh HOST CMD...``, one per node (it joins the remote shell's words with
    spaces, so each word is shell-quoted)."""

    name = "pbs_tmrsh"
    per_node = True
    stop_signal = None

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``pbs_tmrsh HOST 'word' 'word'...`` (:func:`shlex.quote` on each word); ``options`` do not apply.

        Raises:
            ValueError: ``nodes`` does not hold exactly one node.
        """
        return ["pbs_tmrsh", self.one_node(nodes), *(shlex.quote(a) for a in argv)]
