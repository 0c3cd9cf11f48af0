"""Bringing a planned cluster up: agents started, every NodeManager (and, in ``hdfs`` mode, every DataNode) ready.

Owns: :class:`BringUp` and :func:`wait_hdfs`. Imports the cluster, the record (``run.json`` once up) and the AppCDS
notes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from launcher.cluster.cluster import Cluster
from launcher.lifecycle.archives import Archives
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.hdfs import READY_TIMEOUT
from launcher.security.kdc import Kdc, require_secure_mode
from launcher.security.kerberos import SecurityPlan, ccache_principal
from launcher.security.webauth import web_auth


class BringUp:
    """The bring-up of one cluster (:meth:`run`).

    Args:
        plan: the run's plan.
        cluster: its cluster.
        observer: terminal progress.
        record: ``run.json`` (``bringup_s``, ``since_allocation_s``, the NodeManagers' notes).
        archives: the AppCDS notes of the agents.
        kdc: the cluster's KDC (``security: per-cluster``), started before the agents, after the nodes were asked
            what secure mode needs (:func:`launcher.security.kdc.require_secure_mode`); both count in ``bringup_s``.
    """

    def __init__(self, plan: ClusterPlan, cluster: Cluster, observer: Observer, record: RunRecord,
                 archives: Archives, kdc: Kdc | None = None) -> None:
        self.plan = plan
        self.kdc = kdc
        self.cluster = cluster
        self.observer = observer
        self.record = record
        self.archives = archives

    def run(self, *, deadline: float | None, ready_timeout: float, check_stop: Callable[[str], None],
            allocation_start: float | None) -> None:
        """Check what secure mode needs on every node and start the KDC (``security: per-cluster``), then the agents,
        and wait until every NodeManager (and, in ``hdfs`` mode, every DataNode) is up; ``check_stop`` (``hpc-hadoop
        stop``, a lost filesystem) ends the wait by raising; then write ``run.json``.

        Args:
            deadline: epoch seconds when teardown must begin, or ``None``: the wait never passes it.
            ready_timeout: the longest bring-up, seconds.
            check_stop: called while waiting with ``"during bring-up"``.
            allocation_start: epoch seconds when the allocation began (for ``since_allocation_s``).

        Raises:
            UserError: ``security: per-cluster`` and a node does not have what it needs (one line: what, where, the
                fix); no daemon was started.
            ClusterError: a daemon died, or the cluster was not up in time.
        """
        report = self.record.report
        self.observer.phase("bring-up")
        began = time.monotonic()
        addresses = require_secure_mode(self.plan) if self.kdc is not None else {}
        checks_s = time.monotonic() - began
        kdc_s = self.kdc.start(addresses=addresses) if self.kdc is not None else 0.0
        if self.kdc is not None:
            self.cluster.fanout.env.update(self.kdc.agent_env)  # the agents' key to their sealed keys
            if self.kdc.client_note:
                report.notes.append(self.kdc.client_note)
        self.cluster.start()
        remaining = None if deadline is None else max(1.0, deadline - time.time())
        limit = min(ready_timeout, remaining or ready_timeout)
        bringup_s = self.cluster.wait_ready(timeout=limit, check=lambda: check_stop("during bring-up"),
                                            tell=self.observer.event)
        bringup_s += wait_hdfs(self.plan, self.cluster, timeout=min(READY_TIMEOUT, remaining or READY_TIMEOUT))
        if self.plan.hdfs.enabled:
            datanodes = sum("datanode" in n.roles for n in self.plan.nodes)
            self.observer.event(f"HDFS ready: {datanodes} DataNode{'s' if datanodes != 1 else ''} live, "
                                "out of safe mode")
        report.bringup_s = bringup_s + kdc_s + (checks_s if kdc_s else 0.0)
        if kdc_s and self.plan.security.is_site:
            security = self.plan.security
            report.notes.append(f"security: site: realm {security.realm}, no KDC started; daemons log in as "
                                f"{security.principal('rm')} (keytab copied to krb/), clients as "
                                f"{security.user_principal} (ticket cache {security.ccache}"
                                f"{site_ccache_warning(security)}), krb5.conf {security.krb5_conf}; clocks checked "
                                f"on {len(self.plan.nodes)} node(s), {checks_s:.2f} s")
        elif kdc_s:
            until = self.kdc.tickets_until if self.kdc is not None else None
            tickets = f", tickets until {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(until))}" if until else ""
            report.notes.append(f"security: per-cluster: realm {self.plan.security.realm}, KDC ready in {kdc_s:.2f} s "
                                f"(host names, KDC port and clocks checked on {len(self.plan.nodes)} node(s) first, "
                                f"{checks_s:.2f} s){tickets}")
        report.notes += [f"{node}: {state.nm_note}" for node, state in sorted(self.cluster.states().items())
                         if state.nm_note]
        self.archives.note()
        if allocation_start:
            report.since_allocation_s = time.time() - allocation_start
        self.record.write()



def site_ccache_warning(security: SecurityPlan) -> str:
    """What is wrong with the user's ticket cache under ``security: site``, as a clause of the bring-up note
    (``""``: it holds the user's principal): missing or not a ``FILE:`` cache (Java reads no other), or holding a
    principal that does not map to the owner. Not an error: an interactive cluster's user may ``kinit`` later."""
    held = ccache_principal(f"FILE:{security.ccache}")
    if held is None:
        return ": none there, or not a FILE: cache Java reads; kinit before running clients"
    if held != security.user_principal:
        return f": it holds {held}, which does not map to you; kinit {security.user_principal}"
    return ""


def wait_hdfs(plan: ClusterPlan, cluster: Cluster, timeout: float = READY_TIMEOUT) -> float:
    """Wait until HDFS is ready (:meth:`launcher.plan.hdfs.HdfsMode.wait_ready`: every planned DataNode live at the
    NameNode, out of safe mode; at once outside ``hdfs`` mode), ending early if a daemon died.

    Returns:
        Seconds waited.

    Raises:
        ClusterError: a daemon died or ``timeout`` passed; names the NameNode log.
    """
    return plan.hdfs.wait_ready(f"http://{plan.master.address}:{plan.ports.nn_web}",
                                sum("datanode" in n.roles for n in plan.nodes), check=cluster.raise_if_failed,
                                namenode_log=Path(plan.master.log_dir) / "namenode.log", timeout=timeout,
                                auth=web_auth(plan))
