"""Bringing a planned cluster up: agents started, every NodeManager (and, in ``hdfs`` mode, every DataNode) ready.

Owns: :class:`BringUp` and :func:`wait_hdfs`. Imports the cluster, the record (``run.json`` once up) and the AppCDS
notes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx

from launcher.cluster.cluster import Cluster
from launcher.lifecycle.archives import Archives
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.errors import ClusterError
from launcher.util.polling import poll


class BringUp:
    """The bring-up of one cluster (:meth:`run`).

    Args:
        plan: the run's plan.
        cluster: its cluster.
        observer: terminal progress.
        record: ``run.json`` (``bringup_s``, ``since_allocation_s``, the NodeManagers' notes).
        archives: the AppCDS notes of the agents.
    """

    def __init__(self, plan: ClusterPlan, cluster: Cluster, observer: Observer, record: RunRecord,
                 archives: Archives) -> None:
        self.plan = plan
        self.cluster = cluster
        self.observer = observer
        self.record = record
        self.archives = archives

    def run(self, *, deadline: float | None, ready_timeout: float, check_stop: Callable[[str], None],
            allocation_start: float | None) -> None:
        """Start the agents and wait until every NodeManager (and, in ``hdfs`` mode, every DataNode) is up;
        ``check_stop`` (``hpc-hadoop stop``, a lost filesystem) ends the wait by raising; then write ``run.json``.

        Args:
            deadline: epoch seconds when teardown must begin, or ``None``: the wait never passes it.
            ready_timeout: the longest bring-up, seconds.
            check_stop: called while waiting with ``"during bring-up"``.
            allocation_start: epoch seconds when the allocation began (for ``since_allocation_s``).

        Raises:
            ClusterError: a daemon died, or the cluster was not up in time.
        """
        report = self.record.report
        self.observer.phase("bring-up")
        self.cluster.start()
        remaining = None if deadline is None else max(1.0, deadline - time.time())
        limit = min(ready_timeout, remaining or ready_timeout)
        bringup_s = self.cluster.wait_ready(timeout=limit, check=lambda: check_stop("during bring-up"))
        if self.plan.spec.filesystem.mode == "hdfs":
            bringup_s += wait_hdfs(self.plan, self.cluster, timeout=min(120.0, remaining or 120.0))
        report.bringup_s = bringup_s
        report.notes += [f"{node}: {state.nm_note}" for node, state in sorted(self.cluster.states().items())
                         if state.nm_note]
        self.archives.note()
        if allocation_start:
            report.since_allocation_s = time.time() - allocation_start
        self.record.write()


def wait_hdfs(plan: ClusterPlan, cluster: Cluster, timeout: float = 120.0) -> float:
    """Wait until every planned DataNode is live at the NameNode and it is out of safe mode (``hdfs`` mode).

    Polls the NameNode's ``/jmx`` (``FSNamesystemState.NumLiveDataNodes``, ``NameNodeInfo.Safemode``).

    Returns:
        Seconds waited.

    Raises:
        ClusterError: a daemon died or ``timeout`` passed; names the NameNode log.
    """
    expected = sum("datanode" in n.roles for n in plan.nodes)
    url = f"http://{plan.master.address}:{plan.ports.nn_web}/jmx"
    began = time.monotonic()
    with httpx.Client(timeout=2.0, trust_env=False) as http:
        def probe() -> tuple[int, str]:  # (live DataNodes, safe mode text: "" when off); raises if a daemon died
            cluster.raise_if_failed()
            try:
                state = http.get(url, params={"qry": "Hadoop:service=NameNode,name=FSNamesystemState"}).json()
                info = http.get(url, params={"qry": "Hadoop:service=NameNode,name=NameNodeInfo"}).json()
                return int(state["beans"][0]["NumLiveDataNodes"]), info["beans"][0].get("Safemode", "")
            except (httpx.HTTPError, ValueError, KeyError, IndexError):
                return 0, "unknown"

        polled = poll(probe, done=lambda v: v[0] >= expected and not v[1], interval=0.2, backoff=1.0,
                      timeout=timeout)
    if polled.done:
        return time.monotonic() - began
    live, safemode = polled.value
    log = Path(plan.master.log_dir) / "namenode.log"
    raise ClusterError(f"{live} of {expected} DataNodes live (safe mode: {safemode or 'off'}) after {timeout:.0f} s; "
                       f"read {log} and logs/<host>/datanode.log")

