"""Local launcher: the command as a child process of ours on this machine (the ``local`` backend's one node)."""

from __future__ import annotations

from collections.abc import Sequence

from launcher.fanout.base import Launcher, StepOptions


class LocalLauncher(Launcher):
    """``argv`` as is, on this machine. Stopped with SIGTERM to the process itself (the agent stops its daemons).

    The agent it starts is also given ``--watch-pid <our pid>``
    (:class:`launcher.fanout.processes.AgentGroup`), so it stops by itself if the launcher process disappears.
    """

    name = "local"
    runs_here = True

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        """``argv`` unchanged: every node of the local backend is this machine; ``options`` do not apply."""
        return list(argv)
