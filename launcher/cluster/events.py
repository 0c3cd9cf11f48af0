"""What a bring-up has done so far, one line per event, each said once (issue 28: a batch log showed nothing during
a 20-60 s bring-up).

Owns: :class:`BringUpEvents`. Reads what :meth:`launcher.cluster.cluster.Cluster.wait_ready` already polls: the agents'
state files (``agents/<node>.json``: a daemon's ``pid`` once its agent started it) and the ResourceManager's REST API
(the NodeManagers it lists RUNNING, ``host:port`` ids whose host is the node's address), and whether the
JobHistoryServer answers.
"""

from __future__ import annotations

import socket

from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.daemon_sockets import bound_addresses
from launcher.util.records import AgentRecord

#: The daemons' names as Hadoop spells them, by the agents' role names (:class:`launcher.plan.cluster_plan.NodePlan`).
DAEMON_NAMES = {"resourcemanager": "ResourceManager", "nodemanager": "NodeManager", "historyserver": "JobHistoryServer",
                "namenode": "NameNode", "datanode": "DataNode"}


class BringUpEvents:
    """The lines of one bring-up: ``n1: NodeManager started (pid 4242)``, ``ResourceManager up at http://...``,
    ``n1: NodeManager registered (1/3)``, ``JobHistoryServer up at http://...``; each event once, in the order seen.

    Args:
        plan: the cluster's plan (its nodes' names and addresses, the web addresses, the NodeManagers planned).
    """

    def __init__(self, plan: ClusterPlan) -> None:
        self.plan = plan
        self.said: set[tuple[str, str]] = set()
        self.registered: list[str] = []

    def _once(self, key: tuple[str, str], line: str) -> list[str]:
        if key in self.said:
            return []
        self.said.add(key)
        return [line]

    def started(self, states: dict[str, AgentRecord]) -> list[str]:
        """A line for each daemon whose agent has started it (a ``pid`` in ``agents/<node>.json``) since the last
        call: ``<node>: <Daemon> started (pid <pid>)``; nodes in name order."""
        lines = []
        for node, state in sorted(states.items()):
            for daemon, record in state.daemons.items():
                if record.pid is not None:
                    lines += self._once((node, daemon), f"{node}: {DAEMON_NAMES.get(daemon, daemon)} started "
                                                        f"(pid {record.pid})")
        return lines

    def _node_name(self, node_id: str) -> str:
        """The planned node whose address is the host of ``node_id`` (``host:port``); the host itself when no single
        planned node has that address (several local nodes share ``127.0.0.1``)."""
        host = node_id.rsplit(":", 1)[0]
        names = [n.name for n in self.plan.nodes if host in (n.address, n.name)]
        if not names and self.plan.spec.interface:  # registered by the name of its address there (n2-ib)
            try:
                address = socket.gethostbyname(host)
            except OSError:
                address = host
            names = [name for name, bound in bound_addresses(self.plan).items() if bound == address]
        return names[0] if len(names) == 1 else node_id

    def answered(self, nodemanagers: list[str] | None, history_up: bool = False) -> list[str]:
        """Lines for what the REST APIs tell since the last call.

        Args:
            nodemanagers: the NodeManager ids (``host:port``) the ResourceManager lists RUNNING, or ``None`` when it
                does not answer yet.
            history_up: the JobHistoryServer answers.
        """
        lines: list[str] = []
        if nodemanagers is None:
            return lines
        lines += self._once(("", "resourcemanager"), f"ResourceManager up at {self.plan.rm_web}")
        expected = len(self.plan.nodemanagers)
        for node_id in sorted(set(nodemanagers) - set(self.registered)):
            self.registered.append(node_id)
            lines.append(f"{self._node_name(node_id)}: NodeManager registered ({len(self.registered)}/{expected})")
        if history_up:
            lines += self._once(("", "historyserver"), f"JobHistoryServer up at {self.plan.jhs_web}")
        return lines
