"""Local fan-out: the agent as a child process of the launcher (the ``local`` backend's one node)."""

from __future__ import annotations

import os

from launcher.fanout.base import Fanout, agent_argv
from launcher.plan import ClusterPlan


class LocalFanout(Fanout):
    """One agent on this machine; it stops by itself if the launcher process disappears."""

    name = "local"

    def command(self, plan: ClusterPlan) -> list[str]:
        """``python -m launcher.agent RUN_DIR --node <the one node> --watch-pid <launcher pid>``."""
        return agent_argv(plan, "--node", plan.nodes[0].name, "--watch-pid", str(os.getpid()))
