"""Grid Engine launcher: ``qrsh -inherit HOST``, one node per command; no ssh.

``qrsh -inherit`` starts a task of the running parallel job on one of its hosts (the parallel environment
needs ``control_slaves TRUE``); Grid Engine tracks it and kills it with the job. ``qrsh`` joins its
arguments with spaces into a command line for the remote shell, so each word is shell-quoted. Killing a
``qrsh`` client makes Grid Engine count the task as failed and kill the whole job (observed on 8.1.9), so
the agents are stopped by their pid instead (``stop_signal = None``:
:meth:`launcher.fanout.processes.AgentGroup.stop`).
"""

from __future__ import annotations

from launcher.fanout.base import TaskLauncher


class QrshLauncher(TaskLauncher):
    """``qrsh -inherit -nostdin -V HOST 'word'...``, one per node (``-V``: the job's environment, ``PATH`` and
    ``JAVA_HOME`` included)."""

    name = "qrsh"
    prefix = ("qrsh", "-inherit", "-nostdin", "-V")
    joins_words = True
