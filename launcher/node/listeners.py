"""The TCP ports a node's cluster processes listen on, as the kernel sees them (issue 13, item 11).

Each node's agent samples its daemons and their descendants (the containers: ApplicationMaster, tasks)
while it runs and once more before it stops them, and keeps the union in ``agents/<node>.json``; the run
report lists every one (``run.json`` ``ports``). A port is a listening TCP socket of one of these processes,
read with psutil from ``/proc/<pid>/net/tcp*``: what was really opened, not what the configuration asked for.

Hadoop 3.4.2 gives three listeners no bind address, so they are on every interface (``0.0.0.0``/``::``):
the MapReduce ShuffleHandler inside each NodeManager (``mapreduce.shuffle.port``: it reads no address key),
and the ApplicationMaster's client and task-umbilical RPC servers (and its web UI), on ephemeral ports.
Every other daemon port is bound to the node's address and lies in the cluster's port block.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import psutil

from launcher.util.network import WILDCARD_ADDRESSES

#: Java main classes (and the Python module of PySpark's workers) of the processes a cluster starts, by the name the
#: report shows.
_MAIN_CLASSES = {
    "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager": "ResourceManager",
    "org.apache.hadoop.yarn.server.nodemanager.NodeManager": "NodeManager",
    "org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer": "JobHistoryServer",
    "org.apache.hadoop.hdfs.server.namenode.NameNode": "NameNode",
    "org.apache.hadoop.hdfs.server.datanode.DataNode": "DataNode",
    "org.apache.hadoop.mapreduce.v2.app.MRAppMaster": "MRAppMaster",
    "org.apache.hadoop.mapred.YarnChild": "YarnChild",
    # Spark on YARN's containers (spark-submit in client mode: the ApplicationMaster is ExecutorLauncher)
    "org.apache.spark.deploy.yarn.ExecutorLauncher": "SparkApplicationMaster",
    "org.apache.spark.deploy.yarn.ApplicationMaster": "SparkApplicationMaster",
    "org.apache.spark.executor.YarnCoarseGrainedExecutorBackend": "SparkExecutor",
    "pyspark.daemon": "PySparkWorker",  # python3 -m pyspark.daemon, an executor's Python workers
    # hpc-hadoop notebook (launcher.render.notebook): python3 -m jupyterlab, its kernels (python3 -m ipykernel_launcher)
    "jupyterlab": "JupyterLab",
    "ipykernel_launcher": "NotebookKernel",
}



@dataclass(frozen=True, order=True)
class Listener:
    """One listening TCP socket: ``process`` (``ResourceManager``, ``MRAppMaster``, ... or the executable's
    name), ``address`` (``0.0.0.0`` or ``::`` for every interface) and ``port``."""

    process: str
    address: str
    port: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"process", "address", "port"}``."""
        return asdict(self)

    @property
    def wildcard(self) -> bool:
        """True if it listens on every interface."""
        return self.address in WILDCARD_ADDRESSES


def process_name(proc: psutil.Process) -> str:
    """The report name of a process: the Hadoop daemon or container its Java main class names (a PySpark worker: its
    module), else the executable's name.

    Raises:
        psutil.Error: the process is gone or not ours.
    """
    for word in proc.cmdline():
        if word in _MAIN_CLASSES:
            return _MAIN_CLASSES[word]
    return str(proc.name())


def listening(processes: list[psutil.Process]) -> set[Listener]:
    """The listening TCP sockets of ``processes`` (those gone meanwhile are left out)."""
    found: set[Listener] = set()
    for proc in processes:
        try:
            name = process_name(proc)
            connections = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue
        found.update(Listener(name, _ipv4(c.laddr.ip), c.laddr.port) for c in connections
                     if c.status == psutil.CONN_LISTEN and c.laddr)
    return found


def _ipv4(address: str) -> str:
    """An IPv4-mapped IPv6 address (``::ffff:10.0.0.1``, what a JVM's dual-stack socket shows) as IPv4."""
    return address.removeprefix("::ffff:") if address.startswith("::ffff:") and "." in address else address


def of_descendants(pid: int | None = None) -> set[Listener]:
    """The listening TCP sockets of every descendant of ``pid`` (default: this process)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return set()
    return listening(children)
