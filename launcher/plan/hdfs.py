"""What ``filesystem.mode: hdfs`` means, in one place (issue 26 item 4).

The ``hdfs`` mode exists only to compare with the paper's raw access (issue 4): a NameNode on the master and a
DataNode on every node, whose directories sit in the cluster directory (replication 1). It changes a few answers of
the generic code, each asked here and nowhere tests the mode itself: the daemons on the master (memory sizing), the
extra roles of a node, the default filesystem's URI of a path, whether staging, job history and aggregated logs are on
HDFS (so not striped, not made by the launcher, copied out at teardown), the extra configuration files
(``hdfs-site.xml``), and the wait until HDFS is ready after bring-up.

The NameNode/DataNode command lines stay in :mod:`launcher.render.daemons` as two entries of its daemon table (with
their directories and the one-time ``-format``), and the node agent starts them by role like every other daemon.

Imports only :mod:`launcher.config` (the ``filesystem`` section) and :mod:`launcher.util`, so that plan, render,
filesystems, cluster, lifecycle and benchmarks may all ask it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from launcher.config.spec import FilesystemSpec
from launcher.util.errors import ClusterError
from launcher.util.polling import poll

#: The daemons every master runs (ResourceManager, JobHistoryServer, NodeManager: heaps kept from its memory).
BASE_MASTER_DAEMONS = 3
#: The roles ``hdfs`` mode adds on the first node and on the others, first in the node's start order.
FIRST_NODE_ROLES = ("namenode", "datanode")
OTHER_NODE_ROLES = ("datanode",)
#: Configuration files ``hdfs`` mode adds to ``conf/`` (file name -> template).
CONFIG_TEMPLATES = {"hdfs-site.xml": "hadoop/hdfs-site.xml.j2"}
#: Why staging is not striped in ``hdfs`` mode (``run.json``'s ``filesystem.directories``).
STAGING_REASON = "filesystem.mode hdfs: staging is on HDFS (blocks in hdfs/data/<host>)"
#: Longest wait for HDFS after the NodeManagers are up, seconds.
READY_TIMEOUT = 120.0
#: Seconds between two questions to the NameNode while waiting.
READY_INTERVAL = 0.2
#: Seconds one question to the NameNode's ``/jmx`` may take.
JMX_TIMEOUT = 2.0


@dataclass(frozen=True)
class HdfsMode:
    """The answers of one job's ``filesystem.mode`` about HDFS (:func:`hdfs_mode`).

    Attributes:
        enabled: ``filesystem.mode`` is ``hdfs``: HDFS is the cluster's default filesystem.
    """

    enabled: bool

    @property
    def master_daemons(self) -> int:
        """How many daemon heaps the master's memory holds besides containers: 3, plus the NameNode and a
        DataNode (5) in ``hdfs`` mode."""
        return BASE_MASTER_DAEMONS + (len(FIRST_NODE_ROLES) if self.enabled else 0)

    def roles(self, first: bool) -> tuple[str, ...]:
        """The HDFS roles of a node (``first``: the master), placed before its other roles; none outside
        ``hdfs`` mode."""
        if not self.enabled:
            return ()
        return FIRST_NODE_ROLES if first else OTHER_NODE_ROLES

    def uri(self, path: str, master_address: str, nn_port: int) -> str | None:
        """``path`` (absolute) as an ``hdfs://<master>:<NameNode port>`` URI, or ``None`` outside ``hdfs`` mode
        (the caller then uses its mode's scheme)."""
        return f"hdfs://{master_address}:{nn_port}{path}" if self.enabled else None

    @property
    def default_fs(self) -> bool:
        """Whether ``fs.defaultFS`` is HDFS (``core-site.xml``)."""
        return self.enabled

    @property
    def staging_on_hdfs(self) -> bool:
        """Whether ``staging/`` is on HDFS: then it is neither striped nor listed among the shared filesystem's
        directories; the run report says why (:data:`STAGING_REASON`)."""
        return self.enabled

    @property
    def history_in_cluster_dir(self) -> bool:
        """Whether the job history (``history/``) and aggregated logs (``app-logs/``) are files of the cluster
        directory: not in ``hdfs`` mode, where they are on HDFS, the launcher makes no ``history/done``, a step's
        history is read from the JobHistoryServer, and teardown copies the history out first."""
        return not self.enabled

    @property
    def config_templates(self) -> dict[str, str]:
        """Configuration files this mode adds (:data:`CONFIG_TEMPLATES`; none outside ``hdfs`` mode)."""
        return dict(CONFIG_TEMPLATES) if self.enabled else {}

    def wait_ready(self, nn_web: str, expected: int, *, check: Callable[[], object], namenode_log: Path,
                   timeout: float = READY_TIMEOUT, auth: httpx.Auth | None = None) -> float:
        """Wait until ``expected`` DataNodes are live at the NameNode and it is out of safe mode; at once outside
        ``hdfs`` mode.

        Polls the NameNode's ``/jmx`` (``FSNamesystemState.NumLiveDataNodes``, ``NameNodeInfo.Safemode``) every
        :data:`READY_INTERVAL` seconds.

        Args:
            nn_web: the NameNode's web address, ``http://host:port``.
            expected: DataNodes planned.
            check: the caller's probe, called before each question; raises to end the wait (a daemon died).
            namenode_log: named in the error.
            timeout: seconds.
            auth: the launcher's signed ``hadoop.auth`` cookie under ``security: per-cluster``
                (:func:`launcher.security.webauth.web_auth`); ``None``: anonymous.

        Returns:
            Seconds waited (0.0 outside ``hdfs`` mode).

        Raises:
            ClusterError: ``timeout`` passed; whatever ``check`` raises.
        """
        if not self.enabled:
            return 0.0
        url = f"{nn_web}/jmx"
        began = time.monotonic()
        with httpx.Client(timeout=JMX_TIMEOUT, trust_env=False, auth=auth) as http:
            def probe() -> tuple[int, str]:  # (live DataNodes, safe mode text: "" when off)
                check()
                try:
                    state = http.get(url, params={"qry": "Hadoop:service=NameNode,name=FSNamesystemState"}).json()
                    info = http.get(url, params={"qry": "Hadoop:service=NameNode,name=NameNodeInfo"}).json()
                    return int(state["beans"][0]["NumLiveDataNodes"]), info["beans"][0].get("Safemode", "")
                except (httpx.HTTPError, ValueError, KeyError, IndexError):
                    return 0, "unknown"

            polled = poll(probe, done=lambda v: v[0] >= expected and not v[1], interval=READY_INTERVAL,
                          backoff=1.0, timeout=timeout)
        if polled.done:
            return time.monotonic() - began
        live, safemode = polled.value
        raise ClusterError(f"{live} of {expected} DataNodes live (safe mode: {safemode or 'off'}) after "
                           f"{timeout:.0f} s; read {namenode_log} and logs/<host>/datanode.log")


def hdfs_mode(spec: FilesystemSpec) -> HdfsMode:
    """The HDFS answers of a job's ``filesystem`` section."""
    return HdfsMode(enabled=spec.mode == "hdfs")
