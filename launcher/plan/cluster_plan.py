"""The cluster plan: roles, ports, directories and memory sizing, computed once from spec + allocation.

The plan is written as ``plan.json`` into the cluster directory on the shared filesystem; every
per-node agent reads it there, so all nodes agree on ports, directories and roles. :class:`ClusterPlan` is a
:class:`launcher.util.records.Record` (frozen), its parts (:class:`NodePlan`, :class:`Ports`, :class:`MemoryPlan`,
:class:`FilesystemPlan`) frozen sections (:class:`launcher.util.records.Section`): ``plan.json`` is written and read
through them only, with the keys and shapes it had before they were typed (``tests/data/plan-0.1.0.json``).
"""

from __future__ import annotations

import getpass
import json
import math
import os
import secrets
import socket
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from string import Template
from types import MappingProxyType
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from launcher.config.spec import HADOOP_SAFE_FIX, HADOOP_UNSAFE_WHY, JobSpec, hadoop_unsafe
from launcher.plan.hdfs import HdfsMode, hdfs_mode
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers.allocation import Allocation
from launcher.security.kerberos import SecurityPlan, security_plan
from launcher.util.errors import UserError
from launcher.util.records import Record, Section
from launcher.util.safedirs import check_private_tree, make_private_dir, private_umask
from launcher.util.sockets import listeners, user_name
from launcher.util.units import MiB, format_size
from launcher.util.userdirs import clusters_dir, per_user
from launcher.util.userdirs import node_work_root as node_work_root

#: Ports per cluster; a cluster uses ``base + offset`` for each (see :class:`Ports`).
PORT_BLOCK = 32
#: Blocks are taken below the kernel's ephemeral range (``net.ipv4.ip_local_port_range``, 32768-60999 on
#: Linux), where no outgoing connection can take a port between our check and the daemon's bind.
PORT_RANGE = (10240, 32768)
#: Hadoop's default ports: never inside our blocks (other Hadoop installs on a node may use them).
HADOOP_DEFAULT_PORTS = (8020, 8030, 8031, 8032, 8033, 8040, 8042, 8088, 9000, 9820, 9864, 9866, 9867, 9868,
                        9870, 10020, 10033, 13562, 19888, 50010, 50020, 50070, 50075, 50090)


def port_range() -> tuple[int, int]:
    """:data:`PORT_RANGE`, ending where this host's ephemeral port range begins if that is lower."""
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        low = PORT_RANGE[1]
    return PORT_RANGE[0], max(PORT_RANGE[0] + 64 * PORT_BLOCK, min(PORT_RANGE[1], low))

#: Memory left to the OS and page cache on each node before sizing containers (bytes).
OS_RESERVE = 1024 * MiB


#: Each daemon's ports as offsets from the base of the cluster's block, by the role that runs the daemon
#: (``NodePlan.roles``): the one list of what a cluster uses of its block. :class:`Ports` names them (the templates
#: read ``plan.ports.rm_web``, ...); :func:`used_offsets` gives those of a cluster's roles, the only ones
#: :func:`choose_ports` needs free. Spark's JVMs, the MapReduce ApplicationMaster, the KDC (``kdc.port=0``) and
#: ``ui``'s proxy take no port of the block.
DAEMON_PORTS: Mapping[str, Mapping[str, int]] = MappingProxyType({
    "resourcemanager": {"rm_scheduler": 0, "rm_tracker": 1, "rm": 2, "rm_admin": 3, "rm_web": 4},
    "nodemanager": {"nm": 5, "nm_localizer": 6, "nm_web": 7, "shuffle": 8},
    "historyserver": {"jhs": 9, "jhs_web": 10, "jhs_admin": 11},
    "namenode": {"nn": 12, "nn_web": 13},
    "datanode": {"dn": 14, "dn_web": 15, "dn_ipc": 16},
    # started on request by the master's agent (launcher.render.notebook), not a role of the plan's nodes
    "jupyterlab": {"notebook_web": 17},
})
#: Every port name of :data:`DAEMON_PORTS` with its offset.
PORT_OFFSETS: Mapping[str, int] = MappingProxyType({name: offset for ports in DAEMON_PORTS.values()
                                                   for name, offset in ports.items()})
assert len(set(PORT_OFFSETS.values())) == len(PORT_OFFSETS) and max(PORT_OFFSETS.values()) < PORT_BLOCK


class _Part(Section):
    """A part of ``plan.json`` (:class:`Section`, frozen like the plan)."""

    model_config = ConfigDict(frozen=True)


class Ports(_Part):
    """One cluster's ports: a block of :data:`PORT_BLOCK` consecutive ports from ``base``, each daemon's port at its
    offset of :data:`DAEMON_PORTS`: ResourceManager scheduler +0, resource tracker +1, client +2, admin +3, web +4;
    NodeManager +5, localizer +6, web +7, ShuffleHandler +8; JobHistoryServer +9, web +10, admin +11;
    NameNode +12, NameNode web +13, DataNode +14, DataNode web +15, DataNode IPC +16 (``hdfs`` mode); JupyterLab
    +17 (``hpc-hadoop notebook``). ``plan.json`` holds ``base`` only; ``ports.<name>`` (``ports.rm_web``...) is the
    port of that name.

    Raises:
        AttributeError: ``ports.<name>`` of a name that is no port (nor another attribute).
    """

    base: int

    def __getattr__(self, name: str) -> int:
        if name in PORT_OFFSETS:
            return self.base + PORT_OFFSETS[name]
        return super().__getattr__(name)  # type: ignore[misc,no-any-return]  # pydantic's: extra keys, or raises

    def all(self) -> range:
        """Every port of the block."""
        return range(self.base, self.base + PORT_BLOCK)


def used_offsets(roles: Iterable[str]) -> frozenset[int]:
    """The offsets of the port block that daemons of ``roles`` (``NodePlan.roles``) listen on (:data:`DAEMON_PORTS`).

    Raises:
        KeyError: a role this module does not know (add it to :data:`DAEMON_PORTS`, with no ports if it has none).
    """
    return frozenset(offset for role in set(roles) for offset in DAEMON_PORTS[role].values())


def port_free(port: int, address: str = "0.0.0.0") -> bool:
    """True if a TCP listener can bind ``address:port`` on this host now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, port))
        except OSError:
            return False
    return True


def choose_ports(offsets: Collection[int]) -> Ports:
    """Pick a port block for a cluster whose daemons use ``offsets`` of it (:func:`used_offsets`), checked on this
    host (the master node): the first block whose ``base + offset`` ports all bind now. Daemons on other nodes bind
    the same ports and report a clash in their logs.

    Every block of :func:`port_range` that holds none of :data:`HADOOP_DEFAULT_PORTS` is tried, in an order drawn
    from the operating system's randomness (:mod:`secrets`) each time, and the ports of the block that no daemon
    uses need not be free. Why (issue 36 item 4: a second, unprivileged user on the same node):

    * Not from the cluster id, as before: the id is public early (the 0755 listing of ``<root>/<user>/hpc-hadoop``,
      the KDC's and agents' command lines), so another user computed the block and bound a daemon's port before the
      daemon did. Not from a secret kept in the cluster directory either: on a shared FUSE mount another user's
      process can read the owner's 0600 files (issue 36 item 5), and nothing needs to compute the block again. It is
      chosen once, when the plan is made, and every reader (agents on every node, ``status``, ``ui``, the
      configuration) takes it from ``plan.json``. A preview plan (``render``, ``submit``'s checks, ``doctor``) draws
      its own, which the run does not use.
    * Every block and only the used offsets: a few sockets no longer stop a start (64 sockets, one in each block a
      given id tried, did), and a socket on a port no daemon uses takes no block away. One socket on a used port of
      every block still can; then the refusal names the user who holds the sample busy port
      (:func:`launcher.util.sockets.listeners`), for the owner or the site's admins to act on.

    The random order only keeps another user from knowing the block before it is chosen. Once chosen it is in
    ``plan.json`` and ``conf/``, and in ``/proc/net/tcp`` when the daemons listen; that she may still bind one of its
    ports before its daemon does is why a credential goes only to a socket shown to be the owner's daemon's (issue 36
    item 1).

    Raises:
        UserError: no block has every used port free; it says how many blocks were tried and who holds a busy port.
    """
    first, end = port_range()
    used = sorted(offsets)
    bases = [first + slot * PORT_BLOCK for slot in range((end - first) // PORT_BLOCK)]
    bases = [base for base in bases if not any(base <= p < base + PORT_BLOCK for p in HADOOP_DEFAULT_PORTS)]
    busy: list[int] = []  # the first busy port of each block tried
    for base in secrets.SystemRandom().sample(bases, len(bases)):
        taken = next((base + offset for offset in used if not port_free(base + offset)), None)
        if taken is None:
            return Ports(base=base)
        busy.append(taken)
    raise UserError(f"no free port block on {socket.gethostname()}: tried all {len(bases)} blocks of {PORT_BLOCK} "
                    f"ports in {first}-{end - 1}, each has a port the cluster's daemons use (offsets "
                    f"{_spans(used)}) taken; {_holders(busy)}",
                    fix="ask that user or the site's admins to free the ports, or stop some clusters on this node")


def _spans(numbers: list[int]) -> str:
    """Sorted ``numbers`` as ``0-11, 14``."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)


def _holders(busy: list[int]) -> str:
    """Who holds the busy ports (one per block tried), from the listening sockets of ``/proc/net/tcp*``: a sample port
    and its owner, and how many of the busy ports that owner listens on; or that the sample is held by a socket that
    does not listen (bound, or a connection's)."""
    if not busy:
        return "no block to try"
    owners: dict[int, set[int]] = {}
    for entry in listeners():
        owners.setdefault(entry.port, set()).add(entry.uid)
    held = [port for port in busy if port in owners]
    if not held:
        return f"e.g. port {busy[0]}, held by a socket that does not listen (no LISTEN entry in /proc/net/tcp*)"
    sample = held[0]
    uid = min(owners[sample])
    count = sum(1 for port in busy if uid in owners.get(port, ()))
    return (f"e.g. port {sample}, listened on by {user_name(uid)}, who listens on {count} of the {len(busy)} ports "
            "found taken")


class MemoryPlan(_Part):
    """Memory and vcores, in MiB as Hadoop's ``*.mb`` keys take them.

    Attributes:
        nodemanager_mb: ``yarn.nodemanager.resource.memory-mb``.
        nodemanager_vcores: ``yarn.nodemanager.resource.cpu-vcores``.
        map_mb, reduce_mb, am_mb: container sizes.
        map_heap_mb, reduce_heap_mb, am_heap_mb: ``-Xmx`` of those JVMs (``heap_ratio`` × container).
        daemon_heap_mb: ``-Xmx`` of each daemon.
        min_allocation_mb: ``yarn.scheduler.minimum-allocation-mb``.
    """

    nodemanager_mb: int
    nodemanager_vcores: int
    map_mb: int
    reduce_mb: int
    am_mb: int
    map_heap_mb: int
    reduce_heap_mb: int
    am_heap_mb: int
    daemon_heap_mb: int
    min_allocation_mb: int


def _too_little_memory(spec: JobSpec, allocation: Allocation, nm_mb: int, containers: dict[str, int]) -> None:
    """Raise the error of a NodeManager too small for the largest container, blaming the field that decided it.

    Raises:
        UserError: always; the field is ``hadoop.nodemanager_memory`` when set, else ``batch.memory_per_node``
            when it set the node's memory, else the largest container's field.
    """
    largest = max(containers, key=lambda k: containers[k])
    need = containers[largest]
    if spec.hadoop.nodemanager_memory is not None:
        raise UserError(f"the NodeManager offers {nm_mb} MiB, less than one {need} MiB container "
                        f"(hadoop.{largest})", field="hadoop.nodemanager_memory",
                        fix=f"set it to at least {need} (MiB) or lower hadoop.{largest}")
    message = (f"a node has {format_size(allocation.memory_per_node)}: after daemon heaps and the OS, "
               f"{nm_mb} MiB is left, less than one {need} MiB container (hadoop.{largest})")
    if spec.batch.memory_per_node is not None and spec.batch.memory_per_node == allocation.memory_per_node:
        raise UserError(message, field="batch.memory_per_node",
                        fix=f"ask for more memory per node, or lower hadoop.{largest} / hadoop.daemon_heap")
    raise UserError(message, field=f"hadoop.{largest}", fix=f"lower hadoop.{largest} or hadoop.daemon_heap")


def size_memory(spec: JobSpec, allocation: Allocation) -> MemoryPlan:
    """Size containers from the node's cores and memory unless the job file fixes them.

    Rule: ``containers_per_node`` (default: cores) containers of max(map, reduce) plus one
    ApplicationMaster, capped by node memory − daemon heaps (up to 3 on the master, 5 in ``hdfs`` mode) − 1 GiB
    for the OS.

    Raises:
        UserError: the node cannot hold even one container next to the daemons.
    """
    h = spec.hadoop
    def to_mb(b: int) -> int:
        return max(1, int(b // MiB))

    map_mb, reduce_mb, am_mb, heap_mb = to_mb(h.map_memory), to_mb(h.reduce_memory), to_mb(h.am_memory), \
        to_mb(h.daemon_heap)
    containers = h.containers_per_node or allocation.cores_per_node
    master_daemons = hdfs_mode(spec.filesystem).master_daemons
    usable_mb = to_mb(allocation.memory_per_node - OS_RESERVE) - master_daemons * heap_mb
    if h.nodemanager_memory is not None:
        nm_mb = to_mb(h.nodemanager_memory)
    else:
        nm_mb = min(usable_mb, containers * max(map_mb, reduce_mb) + am_mb)
    if nm_mb < max(map_mb, reduce_mb, am_mb):
        _too_little_memory(spec, allocation, nm_mb, {"map_memory": map_mb, "reduce_memory": reduce_mb,
                                                     "am_memory": am_mb})
    ratio = h.heap_ratio
    return MemoryPlan(nodemanager_mb=nm_mb, nodemanager_vcores=h.nodemanager_vcores or allocation.cores_per_node,
                      map_mb=map_mb, reduce_mb=reduce_mb, am_mb=am_mb, map_heap_mb=int(map_mb * ratio),
                      reduce_heap_mb=int(reduce_mb * ratio), am_heap_mb=int(am_mb * ratio),
                      daemon_heap_mb=heap_mb, min_allocation_mb=min(256, map_mb, reduce_mb, am_mb))


class NodePlan(_Part):
    """What runs on one node.

    Attributes:
        name: hostname as the scheduler knows it.
        address: IPv4 address its daemons bind to.
        roles: daemons to start: ``resourcemanager``, ``historyserver``, ``nodemanager``; in ``hdfs`` mode
            ``namenode`` (first node) and ``datanode`` (every node), listed first.
        nm_local_dir: NodeManager local dir (localized files, container working directories, spills, map
            outputs), unique per node: by default ``nm-local`` in :attr:`work_dir` (node-local).
        nm_shared_dir: where the NodeManager's local dir goes instead when the node-local one cannot be used
            (:attr:`work_dir` not made, or less than :data:`LOCAL_DIR_MIN_FREE` free there): ``nm-local/<host>``
            in the cluster directory; ``""`` when ``nm_local_dir`` was chosen by the job file.
        log_dir: ``logs/<host>`` in the cluster directory.
        work_dir: the daemons' node-local working directory
            (``$TMPDIR/hpc-hadoop-<user>/<cluster id>/<host>``, default ``/tmp``): a copy of ``conf/``
            (``HADOOP_CONF_DIR`` and the classpath entry of the daemons and their containers), the JVMs'
            ``java.io.tmpdir`` (Jetty's web apps) and their current directory, so that nothing a daemon reads
            or writes while it starts crosses the shared filesystem (issue 18). ``""``: none, the daemons
            use the cluster directory (plans written before it existed).
    """

    name: str
    address: str
    roles: tuple[str, ...]
    nm_local_dir: str
    log_dir: str
    work_dir: str = ""
    nm_shared_dir: str = ""


class FilesystemPlan(_Part):
    """The filesystem under the cluster directory, decided once when the plan is made
    (:func:`launcher.filesystems.decide`); rendering and striping read it, nothing detects again.

    Attributes:
        name: the filesystem class that stripes and reports (``lustre``, ``orangefs``, ``gpfs``, ``generic``):
            ``filesystem.type``, or what detection found under ``auto``.
        label: what was detected (``lustre``, ``fuse.glusterfs``, ``ext4``...; statfs ``f_type`` and the mount).
        shim_layout: the shim's ``pfs.layout``: ``lustre``, ``orangefs`` or ``none``.
        path: the directory inspected (the root, or its nearest existing parent).
        magic: statfs ``f_type`` as hex, or ``None``.
        mount_point, source: the mount from ``/proc/mounts`` (``None`` if not found).
        free_bytes: space free for unprivileged users when the plan was made, bytes.
        flock: whether ``flock`` worked there (``False`` with ``flock_error`` saying why, or "not checked").
        total_bytes: the filesystem's size, bytes.
        striping_error: why stripe layouts can be neither set nor read there (the class's layout command fails:
            client tools missing, a client without extended attributes), or ``None``.
    """

    name: str
    label: str
    shim_layout: str
    path: str
    magic: str | None = None
    mount_point: str | None = None
    source: str | None = None
    free_bytes: int = 0
    flock: bool = False
    flock_error: str | None = "not checked"
    total_bytes: int = 0
    striping_error: str | None = None


def _runtime(value: Any) -> HadoopRuntime:
    """The plan's runtime: itself, or read from ``plan.json``'s form (:meth:`HadoopRuntime.from_dict`).

    Raises:
        ValueError: not such a form (a key missing, a value of the wrong type).
    """
    if isinstance(value, HadoopRuntime):
        return value
    try:
        return HadoopRuntime.from_dict(value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a Hadoop runtime ({type(exc).__name__}: {exc})") from None


#: :class:`HadoopRuntime` as a field of the plan: written as :meth:`HadoopRuntime.to_dict`, read by :func:`_runtime`.
RuntimeField = Annotated[HadoopRuntime, PlainValidator(_runtime),
                         PlainSerializer(lambda runtime: runtime.to_dict(), return_type=dict[str, object])]

#: The version of ``plan.json`` this release writes (:attr:`ClusterPlan.SCHEMA`).
PLAN_SCHEMA = 1


class ClusterPlan(Record):
    """Everything the daemons, the templates and the job steps need, decided once.

    Attributes:
        cluster_id: ``<name>-<yyyymmdd-HHMMSS>-<hex4>``, unique per run.
        user: the submitting user (YARN admin, owner of the directories).
        run_dir: the cluster directory ``<root>/<user>/hpc-hadoop/<cluster_id>``.
        scheduler, job_id, fanout, fanout_program: from the allocation (``fanout_program``: the launcher's command as
            an absolute path, ``None``: its name, looked up on ``PATH``).
        deadline: epoch seconds when the walltime ends, or ``None``.
        master: the node running ResourceManager and JobHistoryServer.
        nodes: every node, master first.
        ports: the port block.
        memory: container sizing.
        filesystem: the filesystem decision (class, detection, shim layout).
        runtime: the Hadoop runtime (``plan.json`` holds :meth:`HadoopRuntime.to_dict`).
        spec: the validated, frozen job spec (``plan.json`` holds ``JobSpec.model_dump(by_alias=True)``).
        cores_per_node: cores of the allocation on each node.
        created: epoch seconds.
        preview: made on a stand-in allocation (``render``, ``submit``'s checks: one core and 8 GiB per node unless
            the job file says): sizes that depend on the nodes are not checked against it.

    Frozen. Schema policy: :class:`launcher.util.records.Record`'s (:meth:`to_json`).

    Raises (readers):
        pydantic.ValidationError: ``plan.json`` holds a value of the wrong type, misses a field, or holds a spec
            this version does not accept.
    """

    model_config = ConfigDict(frozen=True)

    SCHEMA: ClassVar[int] = PLAN_SCHEMA

    cluster_id: str
    user: str
    run_dir: str
    scheduler: str
    job_id: str | None
    fanout: str
    deadline: float | None
    master: NodePlan
    nodes: tuple[NodePlan, ...]
    ports: Ports
    memory: MemoryPlan
    filesystem: FilesystemPlan
    runtime: RuntimeField
    spec: JobSpec
    cores_per_node: int = 1
    fanout_program: str | None = None
    created: float = Field(default_factory=time.time)
    preview: bool = False

    # -- directories -------------------------------------------------------------------------
    def path(self, *parts: str) -> Path:
        """A path inside the cluster directory."""
        return Path(self.run_dir, *parts)

    @property
    def conf_dir(self) -> Path:
        """``conf/``: the rendered Hadoop configuration (``HADOOP_CONF_DIR``)."""
        return self.path("conf")

    @property
    def spark_conf_dir(self) -> Path:
        """``spark-conf/`` (``SPARK_CONF_DIR``: ``spark-defaults.conf``), written for a job that uses Spark or
        before a benchmark's first Spark step (:func:`launcher.render.spark.write_spark_conf`)."""
        return self.path("spark-conf")

    @property
    def nodemanagers(self) -> tuple[NodePlan, ...]:
        """Nodes that run a NodeManager."""
        return tuple(n for n in self.nodes if "nodemanager" in n.roles)

    @property
    def am_tmp_dir(self) -> str:
        """The ApplicationMasters' ``java.io.tmpdir``: the node-local parent of the nodes' working directories
        (``$TMPDIR/hpc-hadoop-<user>/<cluster id>``, on every node that runs an agent), where Jetty unpacks the AM's
        web app into a directory named ``jetty-0_0_0_0-<port>-hadoop-yarn-common-<version>_jar-_-any-<20 digits>``
        and removes it when the AM ends. Hadoop's default, the container's ``./tmp``, put that name 250 bytes below
        the root with ``filesystem.local_dirs: shared``, beyond what OrangeFS's FUSE client makes (issue 25).
        ``""``: plans without working directories (the default stays)."""
        return str(Path(self.master.work_dir).parent) if self.master.work_dir else ""

    @property
    def am_resource_fraction(self) -> float:
        """``yarn.scheduler.capacity.maximum-am-resource-percent`` (a fraction, 0-1): the share of the cluster's
        memory that ApplicationMasters may hold. At least 0.5 (Hadoop's default is 0.1), and enough for two AMs,
        so that the next step's AM starts while the last one lingers (an AM stays up for seconds after its job has
        finished: with room for one AM only, each one-map job waited 3.5 s for the previous AM to go, measured on
        the local backend); at most what leaves room for one map container, so that AMs never fill the cluster.
        Rounded up to a hundredth."""
        total = self.memory.nodemanager_mb * max(1, len(self.nodemanagers))
        two_ams = math.ceil(200 * self.memory.am_mb / total) / 100
        room_for_a_task = math.floor(100 * (total - self.memory.map_mb) / total) / 100
        return max(0.1, min(max(0.5, two_ams), room_for_a_task, 1.0))

    def node(self, name: str) -> NodePlan:
        """The plan of node ``name``.

        Raises:
            KeyError: ``name`` is not in this cluster.
        """
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"{name} is not a node of cluster {self.cluster_id} "
                       f"({', '.join(n.name for n in self.nodes)})")

    @property
    def shuffle(self) -> str:
        """The shuffle of ``hadoop.shuffle`` (issue 15): ``shared-fs`` or ``http``; ``auto`` is ``shared-fs`` when the
        NodeManager local dirs are in the cluster directory (``filesystem.local_dirs: shared``), where every node
        sees every node's map outputs, and ``http`` when they are node-local (the default) or in a directory of
        the job file's, which need not be shared."""
        choice = self.spec.hadoop.shuffle
        if choice == "auto":
            return "shared-fs" if self.spec.filesystem.local_dirs == SHARED_LOCAL_DIRS else "http"
        return choice

    def shuffle_dirs(self) -> dict[str, str]:
        """For the shared-filesystem shuffle: each NodeManager's address and name → the local dir where its map
        outputs are when they are on the shared filesystem: its ``nm-local/<host>`` in the cluster directory (where
        ``filesystem.local_dirs: shared`` puts it, and where the agent falls back to from a node-local dir), or the
        job file's ``filesystem.local_dirs`` directory. Map-completion events name a node by its NodeManager
        hostname, which is its address (``yarn.nodemanager.hostname``); the name is listed too. A node-local dir is
        never listed: its map outputs are fetched over HTTP."""
        dirs: dict[str, str] = {}
        for node in self.nodemanagers:
            where = node.nm_shared_dir or node.nm_local_dir
            dirs[node.address] = dirs[node.name] = where
        return dirs

    def nm_local_root(self, node: NodePlan, nm_local_dir: str | None = None) -> Path:
        """The directory below which every level of ``node``'s NodeManager local dir (``nm_local_dir``: the one its
        agent chose, default ``node.nm_local_dir``) is made and checked to be the user's own
        (:func:`launcher.util.safedirs.make_private_dir`): the cluster directory for one in it (``nm-local/<host>``),
        the node's working directory for its ``nm-local``, else the job file's ``filesystem.local_dirs``, where the
        dir is ``<local_dirs>/hpc-hadoop-<user>/<cluster id>/<host>`` (:func:`_make_plan`)."""
        path = Path(nm_local_dir or node.nm_local_dir)
        if path.is_relative_to(self.run_dir):
            return Path(self.run_dir)
        if node.work_dir and path.is_relative_to(node.work_dir):
            return Path(node.work_dir)
        return path.parents[2]

    @property
    def rm_web(self) -> str:
        """ResourceManager web/REST address, ``http://host:port``."""
        return f"http://{self.master.address}:{self.ports.rm_web}"

    @property
    def jhs_web(self) -> str:
        """JobHistoryServer web/REST address."""
        return f"http://{self.master.address}:{self.ports.jhs_web}"

    @property
    def hdfs(self) -> HdfsMode:
        """What the job's ``filesystem.mode`` says about HDFS (:mod:`launcher.plan.hdfs`)."""
        return hdfs_mode(self.spec.filesystem)

    @property
    def security(self) -> SecurityPlan:
        """What the job's ``security:`` says: the realm and the Kerberos files (:mod:`launcher.security.kerberos`)."""
        return security_plan(self.spec.security, self.user, self.cluster_id, self.run_dir, self.spec.kerberos,
                             node_root=self.am_tmp_dir or None, client_root=clusters_dir())

    def fs_uri(self, path: str) -> str:
        """``path`` (absolute, in the cluster directory) as a URI of the mode's default filesystem: ``file://``
        (``rawfs``), ``pfs://`` (``shim``), ``hdfs://<master>:<NameNode port>`` (``hdfs``). The one place that
        says where staging, history and aggregated logs live in each mode."""
        on_hdfs = self.hdfs.uri(path, self.master.address, self.ports.nn)
        if on_hdfs is not None:
            return on_hdfs
        return ("pfs://" if self.spec.filesystem.mode == "shim" else "file://") + path

    def variables(self) -> dict[str, str]:
        """The ``${...}`` variables that steps, ``setup:`` lines and ``filesystem.input_dir``/``output_dir`` may use
        (environment variables come after these; :func:`expand`)."""
        runtime = self.runtime
        return {"run_dir": self.run_dir, "cluster_id": self.cluster_id, "name": self.spec.name, "user": self.user,
                "fs_root": str(expand_root(self.spec.filesystem.root)), "examples_jar": str(runtime.examples_jar),
                "tests_jar": str(runtime.tests_jar), "streaming_jar": str(runtime.streaming_jar),
                "hadoop_home": str(runtime.home)}

    def striped_dirs(self) -> dict[str, list[Path]]:
        """The directories of each ``filesystem.striping`` role that are on the shared filesystem: ``input`` and
        ``output`` (``filesystem.input_dir``/``output_dir``, expanded), ``staging`` (not in ``hdfs`` mode: it is on
        HDFS), ``scratch`` (each NodeManager's local dir, unless ``filesystem.local_dirs`` puts them on node-local
        storage).

        Raises:
            UserError: an unknown ``${...}`` in ``input_dir`` or ``output_dir``.
        """
        fs, values = self.spec.filesystem, self.variables()
        dirs = {"input": [Path(expand(fs.input_dir, values, "filesystem.input_dir"))],
                "output": [Path(expand(fs.output_dir, values, "filesystem.output_dir"))],
                "staging": [] if self.hdfs.staging_on_hdfs else [self.path("staging")],
                "scratch": [Path(n.nm_local_dir) for n in self.nodemanagers
                            if Path(n.nm_local_dir).is_relative_to(self.run_dir)]}
        return dirs

    # -- persistence -------------------------------------------------------------------------
    def to_json(self, indent: int | None = 2) -> str:
        """JSON text of the plan (``plan.json``): :meth:`launcher.util.records.Record.dump` (the spec as the job
        file's fields, the runtime as :meth:`HadoopRuntime.to_dict`, the rest as plain values, ``schema``:
        :data:`PLAN_SCHEMA`), its keys sorted as ``plan.json`` always had them.

        Compatibility policy (that of every record, :class:`launcher.util.records.Record`): a reader accepts an
        older or missing ``schema`` (0: written before plans had one) and keeps keys it does not know; a release
        that renames or drops a field raises :data:`PLAN_SCHEMA` and maps the old form in a ``mode="before"``
        validator. :class:`PlanSummary` reads the part ``list`` and ``status`` show without validating the spec."""
        return json.dumps(self.dump(), indent=indent, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> ClusterPlan:
        """Inverse of :meth:`to_json` (:meth:`launcher.util.records.Record.parse`; the spec is validated again).

        Raises:
            pydantic.ValidationError: ``plan.json`` is not JSON, or not a plan this version accepts (a spec it does
                not accept, a field missing or of the wrong type).
        """
        return cls.parse(text)

    @classmethod
    def load(cls, run_dir: str | Path) -> ClusterPlan:
        """Read ``plan.json`` from a cluster directory.

        Raises:
            OSError: it cannot be read. pydantic.ValidationError: as :meth:`from_json`.
        """
        return cls.read(Path(run_dir, "plan.json"))


class _NodeName(BaseModel):
    """A node of :class:`PlanSummary`: its name (the rest of the node's plan is kept, not checked)."""

    model_config = ConfigDict(extra="allow")

    name: str


class PlanSummary(Record):
    """The part of ``plan.json`` that ``list`` and ``status`` show, read without validating the job spec (a plan
    written by another release still shows): ``cluster_id``, ``scheduler``, ``job_id``, ``deadline`` (epoch
    seconds), the ``master`` node and every node (``nodes``, each with its ``name``). Schema policy:
    :class:`~launcher.util.records.Record`'s (:meth:`ClusterPlan.to_json`)."""

    cluster_id: str = ""
    scheduler: str = ""
    job_id: str | None = None
    deadline: float | None = None
    master: _NodeName
    nodes: list[_NodeName]


def expand(text: str, values: Mapping[str, str], where: str) -> str:
    """Expand ``${var}`` in ``text`` with ``values`` (:meth:`ClusterPlan.variables`), then the environment.

    Raises:
        UserError: unknown variable (field ``where``); lists the known ones.
    """
    try:
        return Template(text).substitute({**os.environ, **values})
    except KeyError as exc:
        raise UserError(f"unknown variable ${{{exc.args[0]}}} in {text!r}", field=where,
                        fix=f"use one of: {', '.join('${' + k + '}' for k in values)} "
                            "or an environment variable") from None
    except ValueError:
        raise UserError(f"bad '$' in {text!r}", field=where, fix="write $$ for a literal $") from None


def hadoop_safe_dir(path: str, field: str) -> str:
    """Check, once ``$VAR`` and ``~`` are expanded, that a directory that becomes Hadoop's (the cluster directory's
    root, the NodeManagers' local dirs) has no character of :data:`launcher.config.spec.HADOOP_UNSAFE`; returns
    ``path``.

    Raises:
        UserError: names the character, the field and the fix.
    """
    shown = hadoop_unsafe(path)
    if shown:
        raise UserError(f"{path!r} contains {shown}, {HADOOP_UNSAFE_WHY}", field=field, fix=HADOOP_SAFE_FIX)
    return path


def expand_root(root: str) -> Path:
    """Expand ``~`` and ``$VAR`` in ``filesystem.root``.

    Raises:
        UserError: a variable is unset (``$SCRATCH`` on a machine without it), the path is relative, or it has a
            character Hadoop cannot use (:func:`hadoop_safe_dir`).
    """
    expanded = os.path.expandvars(os.path.expanduser(root))
    if "$" in expanded:
        raise UserError(f"{root!r} uses an unset environment variable", field="filesystem.root",
                        fix="set the variable or write the directory out")
    path = Path(expanded)
    if not path.is_absolute():
        raise UserError(f"{root!r} is not an absolute path", field="filesystem.root",
                        fix="use an absolute directory on the shared filesystem")
    return Path(hadoop_safe_dir(expanded, "filesystem.root"))


#: ``filesystem.local_dirs`` value that puts the NodeManagers' local dirs in the cluster directory, on the shared
#: filesystem (``nm-local/<host>``), as the Spider paper ran.
SHARED_LOCAL_DIRS = "shared"
#: Bytes that must be free where a node's default, node-local NodeManager dir would go; with less, the node uses
#: the cluster directory instead (a diskless node's RAM disk must not fill up with spills).
LOCAL_DIR_MIN_FREE = 2 << 30


#: The most characters of the job's name in a cluster id: the id is in every container's path (issue 17: paths of
#: ~250 bytes under the cluster directory, where an OrangeFS FUSE client refused a 261-byte one).
CLUSTER_ID_NAME = 20


#: ``mapreduce.jobhistory.jobname.limit`` in ``mapred-site.xml``: the most bytes of the URL-encoded job name in a job
#: history file's name (Hadoop's default, 50, made names of ~150 bytes: issue 25, where a filesystem cut one short).
HISTORY_JOBNAME_LIMIT = 12


#: The directory of a user's cluster directories in ``<root>/<user>`` (:func:`clusters_root`).
CLUSTERS_DIR_NAME = "hpc-hadoop"


def clusters_root(root: str) -> Path:
    """Where the user's cluster directories go: ``<root>/<user>/hpc-hadoop`` (``root``: ``filesystem.root``, expanded
    by :func:`expand_root`); the one place that formula is written.

    Raises:
        UserError: ``root`` is relative or uses an unset variable (:func:`expand_root`).
    """
    return expand_root(root) / getpass.getuser() / CLUSTERS_DIR_NAME


def cluster_dir_root(run_dir: str | Path) -> Path:
    """The root a cluster directory is below, the one directory above it that is not checked to be the user's: for
    ``<root>/<user>/hpc-hadoop/<cluster id>`` (:func:`cluster_dir`), ``<root>`` (``filesystem.root``, often a 1777
    directory of the site's), so that ``<root>/<user>``, ``hpc-hadoop`` and the cluster directory are; for a cluster
    directory elsewhere (``run --run-dir`` of a directory of the user's choice), its parent. Read from the path alone,
    so that a command can check a cluster directory before it reads anything in it."""
    run_dir = Path(os.path.abspath(run_dir))
    if run_dir.parent.name == CLUSTERS_DIR_NAME and run_dir.parent.parent.name == getpass.getuser():
        return run_dir.parents[2]
    return run_dir.parent


def make_cluster_directory(run_dir: str | Path, *, file: str | None = None) -> list[Path]:
    """Make the new cluster directory ``run_dir`` and the levels above it up to its root (:func:`cluster_dir_root`)
    one at a time, mode 0700, each checked before use (:func:`launcher.util.safedirs.make_private_dir`: ours, not a
    link, not writable by others); this process's umask becomes 077 first (:func:`launcher.util.safedirs.
    private_umask`). ``<root>/<user>/hpc-hadoop`` made 0755 by an earlier release (it lists every
    cluster id) is narrowed to 0700.

    Args:
        file: the job file, for the error line.

    Returns:
        The directories made, parents first (the cluster directory last).

    Raises:
        UserError: a level is another user's, a symbolic link, not a directory, or writable by others (nothing is
            made below it).
        FileExistsError: the cluster directory exists (ids are unique; never reused).
        OSError: a level cannot be made.
    """
    private_umask()  # what this process writes into it from now on is private itself (issue 36 item 5)
    root = cluster_dir_root(run_dir)
    made = make_private_dir(root, run_dir, field="filesystem.root", file=file, exist_ok=False)
    clusters = Path(os.path.abspath(run_dir)).parent
    if clusters.name == CLUSTERS_DIR_NAME and clusters != root and os.lstat(clusters).st_mode & 0o077:
        os.chmod(clusters, 0o700)  # ours and not writable by others (checked): no other user can swap it meanwhile
    return made


def check_cluster_directory(run_dir: str | Path, *, field: str | None = None, file: str | None = None,
                            missing_ok: bool = False) -> None:
    """Check an existing cluster directory and every level above it up to its root (:func:`cluster_dir_root`),
    before anything in it is trusted (``bin/``, ``job.yaml``, ``plan.json``): each must be ours, not a symbolic link,
    and not writable by others (:func:`launcher.util.safedirs.check_private_tree`).

    Args:
        field, file: for the error line (``ID`` for a command that names the cluster by its id).
        missing_ok: a level that does not exist ends the check (nothing is in it to trust).

    Raises:
        UserError: a level is refused (the first one from the top).
        OSError: a level cannot be read (``FileNotFoundError`` without ``missing_ok``).
    """
    check_private_tree(cluster_dir_root(run_dir), run_dir, field=field, file=file, missing_ok=missing_ok)


def cluster_dir(root: str, cluster_id: str) -> Path:
    """The cluster directory of ``cluster_id``: ``<root>/<user>/hpc-hadoop/<cluster id>`` (:func:`clusters_root`).

    Raises:
        UserError: as :func:`clusters_root`.
    """
    return clusters_root(root) / cluster_id


def new_cluster_id(name: str, now: float | None = None) -> str:
    """``<name>-<yyyymmdd-HHMMSS>-<4 hex digits>``, the name cut to :data:`CLUSTER_ID_NAME` characters."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now or time.time()))
    return f"{name[:CLUSTER_ID_NAME]}-{stamp}-{secrets.token_hex(2)}"


def node_dir_names(names: list[str]) -> list[str]:
    """The names of the nodes' own directories under ``nm-local/`` (every container's path goes through one): each
    host name up to its first dot (``node0001`` of ``node0001.cluster.example.org``), unless two nodes would then
    share a name; then the full names."""
    short = [name.split(".", 1)[0] or name for name in names]
    return short if len(set(short)) == len(short) else list(names)


def make_plan(spec: JobSpec, allocation: Allocation, runtime: HadoopRuntime, *, filesystem: FilesystemPlan,
              cluster_id: str | None = None, run_dir: Path | None = None, job_file: str | None = None) -> ClusterPlan:
    """:func:`_make_plan`; a :class:`UserError` about a job-file field (``hadoop.*``, ``batch.*``,
    ``filesystem.*``: memory, root) also names ``job_file`` (:func:`naming_job_file`). ``filesystem`` is the
    decision :func:`launcher.filesystems.decide` made for ``spec.filesystem``."""
    with naming_job_file(job_file):
        return _make_plan(spec, allocation, runtime, filesystem, cluster_id=cluster_id, run_dir=run_dir)


@contextmanager
def naming_job_file(job_file: str | None) -> Iterator[None]:
    """Add ``job_file`` to a :class:`UserError` about a job-file field (``hadoop.*``, ``batch.*``, ``filesystem.*``)
    raised inside, unless it names a file already."""
    try:
        yield
    except UserError as exc:
        if job_file and exc.file is None and (exc.field or "").startswith(("hadoop.", "batch.", "filesystem.")):
            exc.file = job_file
        raise


def node_roles(spec: JobSpec, index: int, count: int) -> tuple[str, ...]:
    """The roles (daemons) of node ``index`` (0: the master) of a cluster of ``count`` nodes for ``spec``
    (``NodePlan.roles``): in ``hdfs`` mode a NameNode on the master and a DataNode on every node, first; the
    ResourceManager and the JobHistoryServer on the master; a NodeManager on every other node, and on the master too
    unless ``nodemanager_on_master: false`` leaves it out of a cluster of more than one node."""
    roles = [*hdfs_mode(spec.filesystem).roles(first=index == 0),
             *(["resourcemanager", "historyserver"] if index == 0 else [])]
    if index > 0 or spec.nodemanager_on_master or count == 1:
        roles.append("nodemanager")
    return tuple(roles)


def spec_offsets(spec: JobSpec, count: int) -> frozenset[int]:
    """The offsets of the port block a cluster of ``count`` nodes for ``spec`` uses (:func:`used_offsets` of the
    roles of its nodes, :func:`node_roles`; the second node stands for every node after the master; JupyterLab's with a
    ``notebook:``)."""
    return used_offsets([*(role for index in range(min(count, 2)) for role in node_roles(spec, index, count)),
                         *(["jupyterlab"] if spec.notebook else [])])


def _make_plan(spec: JobSpec, allocation: Allocation, runtime: HadoopRuntime, filesystem: FilesystemPlan, *,
               cluster_id: str | None = None, run_dir: Path | None = None) -> ClusterPlan:
    """Decide roles, ports, directories and memory for ``spec`` on ``allocation``.

    Role placement (docs/architecture.md, Data flow; issue 3): ResourceManager and JobHistoryServer on the first node,
    NodeManagers on every node (``nodemanager_on_master: false`` leaves the master out). In ``hdfs`` mode
    also a NameNode on the first node and a DataNode on every node (issue 4). NodeManager
    local dirs are per node: by default ``nm-local`` in the node's working directory (node-local; the agent falls
    back to ``nm-local/<host>`` in the cluster directory, ``NodePlan.nm_shared_dir``, when it cannot use it),
    under ``filesystem.local_dirs`` when that is a directory, in the cluster directory when it is ``shared``
    (``<host>`` short: :func:`node_dir_names`).

    Raises:
        UserError: bad root (relative, unset variable), memory too small, no free ports, fewer nodes than asked.
    """
    user = getpass.getuser()
    cluster_id = cluster_id or new_cluster_id(spec.name)
    run_dir = run_dir or cluster_dir(spec.filesystem.root, cluster_id)
    nodes = allocation.nodes
    if len(nodes) < spec.nodes and allocation.scheduler != "local":
        raise UserError(f"the allocation has {len(nodes)} node(s), the job file asks for {spec.nodes}",
                        field="nodes", fix="ask the scheduler for more nodes or lower nodes:")
    planned: list[NodePlan] = []
    dir_names = node_dir_names([n.name for n in nodes])
    for index, node in enumerate(nodes):
        roles = node_roles(spec, index, len(nodes))
        work_dir = node_work_root(user) / cluster_id / node.name
        shared = str(run_dir / "nm-local" / dir_names[index])
        fallback = ""
        if spec.filesystem.local_dirs == SHARED_LOCAL_DIRS:
            nm_local = shared
        elif spec.filesystem.local_dirs:
            local_root = hadoop_safe_dir(os.path.expandvars(os.path.expanduser(spec.filesystem.local_dirs)),
                                         "filesystem.local_dirs")
            nm_local = str(per_user(local_root, user) / cluster_id / dir_names[index])
        else:
            nm_local, fallback = str(work_dir / "nm-local"), shared
        planned.append(NodePlan(name=node.name, address=node.address, roles=roles,
                                nm_local_dir=nm_local, log_dir=str(run_dir / "logs" / node.name),
                                work_dir=str(work_dir), nm_shared_dir=fallback))
    return ClusterPlan(cluster_id=cluster_id, user=user, run_dir=str(run_dir), scheduler=allocation.scheduler,
                       job_id=allocation.job_id, fanout=allocation.fanout, deadline=allocation.deadline,
                       master=planned[0], nodes=tuple(planned),
                       ports=choose_ports(used_offsets([*(r for n in planned for r in n.roles),
                                                        *(["jupyterlab"] if spec.notebook else [])])),
                       memory=size_memory(spec, allocation), filesystem=filesystem, runtime=runtime, spec=spec,
                       cores_per_node=allocation.cores_per_node, fanout_program=allocation.fanout_program,
                       preview=allocation.preview)
