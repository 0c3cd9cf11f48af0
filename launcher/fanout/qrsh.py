"""Grid Engine launcher: ``qrsh -inherit HOST``, one node per command; no ssh.

``qrsh -inherit`` starts a task of the running parallel job on one of its hosts (the parallel environment
needs ``control_slaves TRUE``); Grid Engine tracks it and kills it with the job. ``qrsh`` joins its
arguments with spaces into a command line for the remote shell, so each word is shell-quoted. Killing a
``qrsh`` client makes Grid Engine count the task as failed and kill the whole job (observed on 8.1.9), so
the agents are stopped by their pid instead (``stop_signal = None``:
:meth:`launcher.fanout.processes.AgentGroup.stop`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from launcher.fanout.base import Launcher, StepOptions


class QrshLauncher(Launcher):
    """``qrsh -inherit -nostdin -V HOST 'word'...``, one per node."""

    name = "qrsh"
    per_node = True
    stop_signal = None

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``qrsh -inherit -nostdin -V HOST ARGV...`` (``-V``: the job's environment, ``PATH`` and
        ``JAVA_HOME`` included; each word :func:`shlex.quote`-d); ``options`` do not apply.

        Raises:
            ValueError: ``nodes`` does not hold exactly one node.
        """
        return ["qrsh", "-inherit", "-nostdin", "-V", self.one_node(nodes), *(shlex.quote(a) for a in argv)]
