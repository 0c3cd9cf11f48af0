"""Grid Engine fan-out: one ``qrsh -inherit HOST`` per node, all started at once; no ssh.

``qrsh -inherit`` starts a task of the running parallel job on one of its hosts (the parallel environment
needs ``control_slaves TRUE``); Grid Engine tracks it and kills it with the job. ``qrsh`` joins its
arguments with spaces into a command line for the remote shell, so each word is shell-quoted. Killing a
``qrsh`` client makes Grid Engine count the task as failed and kill the whole job (observed on 8.1.9), so
the agents are stopped by their pid instead (:class:`launcher.fanout.pbsdsh.PerNodeFanout`).
"""

from __future__ import annotations

import shlex

from launcher.fanout.pbsdsh import PerNodeFanout


class QrshFanout(PerNodeFanout):
    """``qrsh -inherit -nostdin -V HOST 'word'...`` per node."""

    name = "qrsh"

    def remote(self, host: str, argv: list[str]) -> list[str]:
        """``qrsh -inherit -nostdin -V HOST ARGV...`` (``-V``: the job's environment, ``PATH`` and
        ``JAVA_HOME`` included)."""
        return ["qrsh", "-inherit", "-nostdin", "-V", host, *(shlex.quote(a) for a in argv)]
