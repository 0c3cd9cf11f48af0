"""Is the socket at ``host:port`` the owner's daemon's? Asked before any credential goes to a cluster's web server
(issue 36, item 1).

A second user on a node of the cluster can bind a daemon's port before the daemon does (the port block is in the
rendered configuration, and ports are free for whoever binds first), or after it died, and read what the launcher
sends there: a signed ``hadoop.auth`` cookie is the owner's identity on that web server. So every caller of the
signed web client (:mod:`launcher.security.webauth`: the bring-up polls, failure diagnosis, ``hpc-hadoop ui``, the
``hdfs`` mode's NameNode poll, the benchmarks' history reads) sends its cookie only where :meth:`DaemonSockets.check`
says the listening socket is ours:

- **On this node** (the address is one of this network namespace's: loopback or an interface's), from the kernel:
  every listening socket on the port that a connection to the address can reach (:mod:`launcher.util.sockets`:
  its own address or every address) must belong to our uid, which no other user can give a socket. Read at every
  request (a few KiB of ``/proc/net/tcp*``), so a daemon that died and a port taken since are seen at once.
- **On another node**, from what that node's agent saw (``agents/<node>.json``, written by our agent into our
  cluster directory): the agent is ``running``, the daemon has not exited, and the agent saw the daemon's own
  process listen on that port (:mod:`launcher.node.listeners`, sampled every second from the daemon's
  ``/proc/<pid>/net/tcp*``). What is left: the second between a remote daemon's death and its agent's next look,
  which the per-daemon cookie secret and the cookie's seconds of life (:mod:`launcher.security.webauth`) confine to
  that one dead daemon's page.

Why this and not HTTPS with a cluster CA: it costs nothing at bring-up (no keystore per daemon, no TLS in every
daemon, AM and browser hop), Hadoop's pages keep working through ``ui`` unchanged, and the kernel's socket owner is a
proof the attacker cannot forge on the node; ``docs/admin-guide.md`` gives the comparison.

Imports :mod:`launcher.util`, psutil (and :mod:`launcher.plan.cluster_plan` for types).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psutil

from launcher.util.records import AgentRecord
from launcher.util.sockets import ListenEntry, listeners, user_name
from launcher.util.states import AgentState

if TYPE_CHECKING:
    from launcher.plan.cluster_plan import ClusterPlan

#: Each daemon with a web server: the :class:`~launcher.plan.cluster_plan.Ports` attribute of its web port, and the
#: name :mod:`launcher.node.listeners` records its process under.
WEB_DAEMONS = {
    "resourcemanager": ("rm_web", "ResourceManager"),
    "historyserver": ("jhs_web", "JobHistoryServer"),
    "nodemanager": ("nm_web", "NodeManager"),
    "namenode": ("nn_web", "NameNode"),
    "datanode": ("dn_web", "DataNode"),
    "jupyterlab": ("notebook_web", "JupyterLab"),  # started on request by the master's agent (hpc-hadoop notebook)
}


@dataclass(frozen=True)
class WebEndpoint:
    """A web server of the cluster: ``daemon`` (``resourcemanager``, ...) on ``node`` (its scheduler name), at
    ``address:port`` (the node's address from the plan, the daemon's web port)."""

    daemon: str
    node: str
    address: str
    port: int

    def __str__(self) -> str:
        return f"the {WEB_DAEMONS[self.daemon][1]} of {self.node} ({self.address}:{self.port})"


@dataclass(frozen=True)
class Verdict:
    """What :meth:`DaemonSockets.check` found: ``ours`` (a credential may go there), else ``why`` (one clause) and,
    when another user's socket holds the port, her ``uid``."""

    ours: bool
    why: str = ""
    uid: int | None = None

    @property
    def foreign(self) -> bool:
        """True if another user's process holds the port (a daemon will not get it while she does)."""
        return self.uid is not None


def plain_address(address: str) -> str:
    """An IPv4-mapped IPv6 address (``::ffff:10.0.0.1``, a JVM's dual-stack socket) as IPv4; others as they are."""
    return address.removeprefix("::ffff:") if address.startswith("::ffff:") and "." in address else address


def reaches(entry: ListenEntry, address: str) -> bool:
    """True if a connection to ``address`` on ``entry``'s port can reach that listening socket: it listens on that
    address or on every address."""
    return plain_address(entry.address) in (address, "0.0.0.0", "::")


def local_verdict(address: str, port: int, uid: int | None = None) -> Verdict:
    """From this network namespace's ``/proc/net/tcp*``: ours when every listening socket a connection to
    ``address:port`` can reach belongs to ``uid`` (default: this process's effective uid), and there is one."""
    uid = os.geteuid() if uid is None else uid
    reached = [entry for entry in listeners(port) if reaches(entry, address)]
    others = sorted({entry.uid for entry in reached if entry.uid != uid})
    if others:
        return Verdict(False, f"{address}:{port} is held by another user's process ({user_name(others[0])})",
                       uid=others[0])
    if not reached:
        return Verdict(False, f"nothing listens on {address}:{port}")
    return Verdict(True)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def recorded_address(plan: ClusterPlan, node: str) -> str | None:
    """Under ``interface:``, the address node ``node``'s agent binds its daemons to, as it recorded it
    (``agents/<node>.json``, :attr:`~launcher.util.records.AgentRecord.address`); ``None`` before it has, or without
    ``interface:``."""
    record = AgentRecord.read_or_none(plan.path("agents", f"{node}.json"))
    return record.address if record is not None and record.address else None


def bound_addresses(plan: ClusterPlan) -> dict[str, str]:
    """``{node: address}``: where each node's daemons listen: the plan's address, or, for a node that has only its
    name there (``interface:``, a node other than the master), the one its agent recorded
    (:func:`recorded_address`; its name while the agent has not)."""
    return {node.name: node.address if _is_ip(node.address) else recorded_address(plan, node.name) or node.address
            for node in plan.nodes}


class DaemonSockets:
    """The web servers of one plan's cluster and whether each is held by the owner's daemon now.

    Args:
        plan: the cluster's plan (its nodes, ports and ``agents/`` directory).
        uid: the owner's uid, whose sockets are the daemons' (default: this process's effective uid; the launcher
            runs as the owner, a test acting for the owner passes hers).
    """

    def __init__(self, plan: ClusterPlan, uid: int | None = None) -> None:
        self.plan = plan
        self.uid = os.geteuid() if uid is None else uid
        self.endpoints: dict[tuple[str, int], WebEndpoint] = {}
        self._addresses: dict[str, str] = {}
        #: Nodes whose address on the job file's ``interface:`` only their agent knows (the plan has their name).
        self._unbound = {node.name for node in plan.nodes if not _is_ip(node.address)}
        for node in plan.nodes:
            self._add(node.name, node.address)
        self._local: set[str] | None = None

    def _add(self, name: str, address: str) -> None:
        """The web servers of node ``name`` at ``address``, in :attr:`endpoints` (replacing those at another one)."""
        node = next(n for n in self.plan.nodes if n.name == name)
        for daemon in node.roles:
            if daemon in WEB_DAEMONS:
                port = getattr(self.plan.ports, WEB_DAEMONS[daemon][0])
                self.endpoints.pop((self._addresses.get(name.lower(), address), port), None)
                self.endpoints[(address, port)] = WebEndpoint(daemon, name, address, port)
        self._addresses[name.lower()] = address

    def learn_addresses(self) -> None:
        """Under ``interface:``, the address each node other than the master binds its daemons to, from its agent's
        record (``agents/<node>.json``, :attr:`~launcher.util.records.AgentRecord.address`), for those not known yet:
        a link a daemon gives (``n2-ib:8042``) is then one of the cluster's web servers."""
        for name in sorted(self._unbound):
            address = recorded_address(self.plan, name)
            if address is not None:
                self._add(name, address)
                self._unbound.discard(name)

    def address_of(self, host: str) -> str:
        """The address of ``host``: a node's own (its scheduler name or address), else what the resolver gives
        (``localhost``, the name a daemon calls itself in its links), else ``host`` itself; remembered."""
        key = host.lower().strip("[]")
        if key not in self._addresses:
            try:
                ipaddress.ip_address(key)
                self._addresses[key] = key
            except ValueError:
                try:
                    self._addresses[key] = str(socket.getaddrinfo(key, None, socket.AF_INET)[0][4][0])
                except (OSError, IndexError):
                    self._addresses[key] = key
        return self._addresses[key]

    def endpoint(self, host: str, port: int) -> WebEndpoint | None:
        """The cluster's web server at ``host:port`` (``host``: a node's address or scheduler name, or a name that
        resolves to a node's address), else ``None`` (not one of the cluster's: no credential goes there at all)."""
        if self._unbound:
            self.learn_addresses()
        found = self.endpoints.get((self.address_of(host), port))
        if found is None and self.is_local(self.address_of(host)):  # a loopback name for a daemon of this node
            found = next((e for e in self.endpoints.values() if e.port == port and self.is_local(e.address)), None)
        return found

    def local_addresses(self) -> set[str]:
        """The addresses of this network namespace's interfaces (read once)."""
        if self._local is None:
            self._local = {entry.address.split("%")[0] for entries in psutil.net_if_addrs().values()
                           for entry in entries if entry.family in (socket.AF_INET, socket.AF_INET6)}
        return self._local

    def is_local(self, address: str) -> bool:
        """True if ``address`` is this network namespace's (loopback, or an interface's)."""
        try:
            if ipaddress.ip_address(address).is_loopback:
                return True
        except ValueError:
            return False
        return address in self.local_addresses()

    def check(self, endpoint: WebEndpoint) -> Verdict:
        """Whether ``endpoint``'s port is held by the owner's daemon now (this module's docstring: from the kernel on
        this node, from the node's agent elsewhere)."""
        if self.is_local(endpoint.address):
            return local_verdict(endpoint.address, endpoint.port, self.uid)
        return self.agent_verdict(endpoint)

    def agent_verdict(self, endpoint: WebEndpoint) -> Verdict:
        """From ``agents/<node>.json``: ours when the node's agent runs, its daemon has not exited and the agent saw
        that daemon's process listen on the port (on the node's address or every address)."""
        record = AgentRecord.read_or_none(self.plan.path("agents", f"{endpoint.node}.json"))
        if record is None:
            return Verdict(False, f"no record of {endpoint.node}'s agent yet")
        daemon = record.daemons.get(endpoint.daemon)
        if endpoint.daemon in record.failed or (daemon is not None and daemon.returncode is not None):
            return Verdict(False, f"the {endpoint.daemon} of {endpoint.node} has exited")
        if record.state != AgentState.RUNNING:
            return Verdict(False, f"{endpoint.node}'s agent is {record.state}")
        process = WEB_DAEMONS[endpoint.daemon][1]
        for seen in record.listening:
            if (seen.process == process and seen.port == endpoint.port
                    and seen.address in (endpoint.address, "0.0.0.0", "::")):
                return Verdict(True)
        note = record.foreign_ports.get(str(endpoint.port))
        if note is not None:
            return Verdict(False, f"{endpoint.address}:{endpoint.port} is held by another user's process "
                                  f"({user_name(note)})", uid=note)
        return Verdict(False, f"{endpoint.node}'s agent has not seen its {process} listen on port {endpoint.port}")
