"""How each Hadoop daemon is started: main class, JVM flags, environment, log files.

Used by the per-node agent (:mod:`launcher.node.agent`), and for clients (:func:`client_command`: job steps, the
``bin/`` wrappers' flags); pure functions, no side effects.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from launcher.plan.cluster_plan import ClusterPlan, NodePlan
from launcher.render.config import RM_JIT_DIRECTIVES
from launcher.runtime.cds import CDS_FLAG_PREFIXES, cds_flags
from launcher.runtime.hadoop import FAST_START_FLAGS, NO_CONTAINER_SUPPORT, QUICK_JIT
from launcher.security.kerberos import HTTP_SECRET_PROPERTY, NODE_KRB_PROPERTY

#: Daemon name → main class (Hadoop 3.x).
MAIN_CLASSES = {
    "resourcemanager": "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
    "historyserver": "org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer",
    "nodemanager": "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
    "namenode": "org.apache.hadoop.hdfs.server.namenode.NameNode",
    "datanode": "org.apache.hadoop.hdfs.server.datanode.DataNode",
}


@dataclass(frozen=True)
class DaemonCommand:
    """A daemon ready to start.

    Attributes:
        name: ``resourcemanager``, ``nodemanager``...
        argv: the full ``java`` command line.
        env: the complete environment.
        log: file that receives the daemon's log4j output (``logs/<host>/<name>.log``).
        out: file that receives its stdout/stderr (``logs/<host>/<name>.out``).
        archive_tmp, archive: the class-data-sharing archive this run writes at exit and where it goes
            (:mod:`launcher.runtime.cds`); ``None`` when the archive exists already or sharing is off.
    """

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    out: Path
    archive_tmp: Path | None = None
    archive: Path | None = None


def hadoop_env(plan: ClusterPlan, base: dict[str, str] | None = None, conf_dir: Path | None = None) -> dict[str, str]:
    """Environment for daemons and clients: ``JAVA_HOME``, ``HADOOP_CONF_DIR``, ``HADOOP_*_HOME``; under
    ``security: per-cluster`` also ``KRB5CCNAME`` (the owner's ticket cache) and ``KRB5_CONFIG``
    (:meth:`launcher.security.kerberos.SecurityPlan.client_env`).

    The NodeManager passes ``JAVA_HOME`` (and the others in ``yarn.nodemanager.env-whitelist``) on
    to containers, which run ``$JAVA_HOME/bin/java``: one JDK for everything.

    Args:
        conf_dir: ``HADOOP_CONF_DIR``; default the cluster directory's ``conf/`` (a daemon gets its node-local
            copy, :func:`work_paths`).
    """
    runtime = plan.runtime
    env = dict(os.environ if base is None else base)
    home = str(runtime.home)
    env.update({
        "JAVA_HOME": str(runtime.java_home), "HADOOP_CONF_DIR": str(conf_dir or plan.conf_dir),
        "HADOOP_HOME": home, "HADOOP_COMMON_HOME": home, "HADOOP_HDFS_HOME": home,
        "HADOOP_YARN_HOME": home, "HADOOP_MAPRED_HOME": home,
        "PATH": f"{runtime.java_home / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
    })
    for noisy in ("CLASSPATH", "HADOOP_CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"):
        env.pop(noisy, None)
    env.update(plan.security.client_env())  # security: per-cluster: the owner's ticket cache, the realm's krb5.conf
    return env


def classpath(plan: ClusterPlan) -> str:
    """``conf/`` first, then the runtime's jars and directories (job clients and the wrapper commands)."""
    return ":".join([str(plan.conf_dir), *plan.runtime.classpath])


def client_jvm_flags(plan: ClusterPlan, *, fast_start: bool | None = None) -> list[str]:
    """JVM flags of a job client or a ``bin/`` wrapper command: container support off, with
    ``hadoop.fast_start`` (or ``fast_start``) the short-lived-JVM flags
    (:data:`launcher.runtime.hadoop.FAST_START_FLAGS`), under ``security: per-cluster`` the realm's ``krb5.conf``."""
    fast = plan.spec.hadoop.fast_start if fast_start is None else fast_start
    return [NO_CONTAINER_SUPPORT, *(FAST_START_FLAGS if fast else ()), *plan.security.jvm_flags()]


def client_command(plan: ClusterPlan, main_class: str, args: Sequence[str], *, heap_mb: int = 512,
                   extra_classpath: Sequence[str | Path] = (), fast_start: bool | None = None,
                   properties: Mapping[str, object] | None = None) -> list[str]:
    """The one builder of a client JVM's command line (job steps, benchmark steps, ``yarn application -kill``):
    ``java -Xmx<heap_mb>m <client_jvm_flags> -Dhadoop.log.dir=<run_dir>/logs/client -Dhadoop.root.logger=INFO,console
    -Dlog4j.configuration=file:<conf>/log4j.properties [-Dkey=value...]
    -cp <runtime jars>[:<extra_classpath>]:<runtime dirs>:<conf> <main_class> <args>``: jars first
    and directories last (the cluster's ``conf/``, another path for each cluster, after every jar), so that one
    class-data-sharing archive serves every cluster (:func:`launcher.runtime.cds.client_archive_flags`). log4j's
    configuration is named: the jobclient tests jar, now before ``conf/``, holds a ``log4j.properties`` of its own.

    Args:
        heap_mb: the client's ``-Xmx``, MiB (512: a job client's splits and staging; 256 for small CLIs).
        extra_classpath: jars after the runtime's (a user's jar, the jobclient tests jar).
        fast_start: override ``hadoop.fast_start``.
        properties: JVM system properties (``-Dkey=value`` before the class: ones the configuration substitutes,
            such as ``hpc.rm.connect.max-wait.ms``, for clients that take no ``-D`` option).
    """
    runtime = plan.runtime
    jars = [e for e in runtime.classpath if e.endswith("/*")]
    others = [e for e in runtime.classpath if not e.endswith("/*")]
    cp = ":".join([*jars, *(str(p) for p in extra_classpath), *others, str(plan.conf_dir)])
    system = [f"-D{key}={value}" for key, value in (properties or {}).items()]
    return [plan.runtime.java, f"-Xmx{heap_mb}m", *client_jvm_flags(plan, fast_start=fast_start),
            f"-Dhadoop.log.dir={plan.run_dir}/logs/client", "-Dhadoop.root.logger=INFO,console",
            f"-Dlog4j.configuration=file:{plan.conf_dir / 'log4j.properties'}", *system, "-cp", cp,
            main_class, *args]


def daemon_classpath(plan: ClusterPlan, conf_dir: Path | None = None) -> str:
    """The runtime's jars first, then its directories, ``conf/`` last: a class-data-sharing archive is used
    only when the classpath starts with the jars it was made from (:mod:`launcher.runtime.cds`). No jar of the
    runtime holds a ``*-site.xml``; the one ``log4j.properties`` in a jar (the jobclient tests jar) is
    overridden by ``-Dlog4j.configuration``."""
    runtime = plan.runtime
    jars = [e for e in runtime.classpath if e.endswith("/*")]
    others = [e for e in runtime.classpath if not e.endswith("/*")]
    return ":".join([*jars, *others, str(conf_dir or plan.conf_dir)])


def work_paths(work_dir: Path) -> tuple[Path, Path]:
    """``(conf, tmp)`` inside a node-local working directory (:attr:`launcher.plan.cluster_plan.NodePlan.work_dir`)."""
    return work_dir / "conf", work_dir / "tmp"


def resourcemanager_jit_flags(plan: ClusterPlan, flags: Sequence[str], conf_dir: Path) -> list[str]:
    """The ResourceManager's JIT flags: ``flags`` (:meth:`launcher.runtime.hadoop.HadoopRuntime.daemon_flags`) with,
    under Kerberos and ``hadoop.fast_start``, C2 back for ``java.math`` and the JDK's crypto only (the compiler
    directives ``conf/resourcemanager-jit.json``, :data:`launcher.render.config.RM_JIT_DIRECTIVES`) instead of
    :data:`launcher.runtime.hadoop.QUICK_JIT` for every method.

    Why: under Kerberos ``yarn.resourcemanager.application-https.policy`` is ``LENIENT`` (yarn-site.xml.j2), and the
    ResourceManager makes an RSA 2048 key pair for each ApplicationMaster before it launches it (Hadoop 3.4's
    ``AMLauncher`` → ``ProxyCA.createChildKeyStore``). With C1 code only, ``BigInteger`` has none of C2's intrinsics:
    on the 2-core CI machine the key pair took 1.3-2.2 s (JDK 17, a loop of ``KeyPairGenerator.generateKeyPair``) and
    the launch of an AM 0.8-3.5 s; with these directives the first key pairs 0.7-2.1 s (while C2 compiles), then
    0.24-0.5 s, and an AM launch 0.09-0.68 s in the ResourceManager's log (``AMLauncher: Setting up`` to ``Done
    launching``). The rest stays at C1, so the bring-up keeps what :data:`~launcher.runtime.hadoop.QUICK_JIT` gave it.
    Not part of the archive key (:func:`launcher.runtime.cds.archive_key`): a class-data-sharing archive does not
    depend on the JIT."""
    if not (plan.security.kerberos and plan.spec.hadoop.fast_start):
        return list(flags)
    return [*(flag for flag in flags if flag != QUICK_JIT), "-XX:+UnlockDiagnosticVMOptions",
            f"-XX:CompilerDirectivesFile={conf_dir / RM_JIT_DIRECTIVES}", "-XX:CompileCommand=quiet"]


def daemon_command(plan: ClusterPlan, node: NodePlan, name: str, address: str | None = None,
                   work_dir: Path | None = None, nm_local_dir: str | None = None) -> DaemonCommand:
    """The command line of daemon ``name`` on ``node``.

    Per-node values reach the shared configuration as JVM system properties, which Hadoop's
    ``Configuration`` substitutes into ``${...}``: ``hpc.node.address`` (bind address),
    ``hpc.nm.local.dir``, ``hpc.nm.log.dir``, ``hpc.node.name`` (the DataNode's directory in ``hdfs`` mode) and
    ``hpc.node.tmp`` (this cluster's scratch on this node: the ResourceManager's node-label and node-attribute
    stores, which Hadoop keeps in ``/tmp/hadoop-yarn-<user>`` for every cluster of a user on a host); under Kerberos
    ``hpc.node.krb``, the directory of the keys the daemon logs in with (``<work_dir>/krb``, opened by the agent from
    the node's sealed file, else the realm's own directory:
    :meth:`launcher.security.kerberos.SecurityPlan.node_krb_dir`); and ``hpc.http.secret``, the daemon's own cookie
    secret there (:meth:`~launcher.security.kerberos.SecurityPlan.node_secret`).

    Args:
        address: overrides ``node.address`` (e.g. the node's ``ib0`` address found by the agent).
        work_dir: the node-local working directory the agent prepared (its ``conf/`` copy becomes
            ``HADOOP_CONF_DIR`` and the classpath's conf entry, its ``tmp/`` the JVM's ``java.io.tmpdir``);
            ``None``: the cluster directory's ``conf/`` and the system's temporary directory. On a shared
            filesystem every class or resource the JVM does not find in a jar is looked up in the conf
            directory of the classpath: thousands of metadata round trips while a daemon starts (issue 18).
        nm_local_dir: the NodeManager's local dir the agent chose
        (:meth:`launcher.node.agent.Agent.choose_nm_local_dir`);
            default ``node.nm_local_dir``.
    """
    runtime = plan.runtime
    conf_dir, tmp_dir = work_paths(work_dir) if work_dir else (plan.conf_dir, None)
    node_tmp = tmp_dir or plan.path("tmp", node.name)
    log_dir = Path(node.log_dir)
    flags = runtime.daemon_flags(plan.spec.hadoop.fast_start)
    sharing: list[str] = []
    archive_tmp: Path | None = None
    archive: Path | None = None
    if plan.spec.hadoop.class_data_sharing:
        sharing, archive_tmp, archive = cds_flags(runtime, name, node.name, plan.cluster_id, flags)
    security = plan.security
    krb = [f"-D{NODE_KRB_PROPERTY}={security.node_krb_dir(work_dir)}",
           f"-D{HTTP_SECRET_PROPERTY}={security.node_secret(work_dir, name, node.name)}"] if security.kerberos else []
    jit = resourcemanager_jit_flags(plan, flags, conf_dir) if name == "resourcemanager" else flags
    argv = [runtime.java, f"-Xmx{plan.memory.daemon_heap_mb}m", *jit, *sharing, *security.jvm_flags(), *krb,
            *([f"-Djava.io.tmpdir={tmp_dir}"] if tmp_dir else []), f"-XX:ErrorFile={log_dir}/hs_err_pid%p.log",
            f"-Dlog4j.configuration=file:{conf_dir / 'log4j.properties'}",
            f"-Dproc_{name}", f"-Dhadoop.log.dir={log_dir}", f"-Dhadoop.log.file={name}.log",
            f"-Dyarn.log.dir={log_dir}", f"-Dyarn.log.file={name}.log", "-Dhadoop.root.logger=INFO,RFA",
            f"-Dhadoop.home.dir={runtime.home}", f"-Dhpc.node.address={address or node.address}",
            f"-Dhpc.nm.local.dir={nm_local_dir or node.nm_local_dir}", f"-Dhpc.nm.log.dir={log_dir / 'userlogs'}",
            f"-Dhpc.node.name={node.name}", f"-Dhpc.cluster.id={plan.cluster_id}", f"-Dhpc.node.tmp={node_tmp}", "-cp",
            daemon_classpath(plan, conf_dir), MAIN_CLASSES[name]]
    return DaemonCommand(name=name, argv=argv, env=hadoop_env(plan, conf_dir=conf_dir), log=log_dir / f"{name}.log",
                         out=log_dir / f"{name}.out", archive_tmp=archive_tmp, archive=archive)


def namenode_dir(plan: ClusterPlan) -> Path:
    """The NameNode's metadata directory (``dfs.namenode.name.dir``): ``hdfs/name`` in the cluster directory."""
    return plan.path("hdfs", "name")


def datanode_dir(plan: ClusterPlan, node: NodePlan) -> Path:
    """A DataNode's block directory (``dfs.datanode.data.dir``): ``hdfs/data/<host>`` in the cluster directory."""
    return plan.path("hdfs", "data", node.name)


def needs_format(plan: ClusterPlan) -> bool:
    """True until the NameNode's directory holds a formatted namespace (``current/VERSION``)."""
    return not (namenode_dir(plan) / "current" / "VERSION").is_file()


def format_command(plan: ClusterPlan, node: NodePlan, work_dir: Path | None = None) -> DaemonCommand:
    """``NameNode -format -nonInteractive``: formats ``hdfs/name`` once, before the NameNode first starts.

    Same JVM, classpath and environment as the NameNode; its output goes to ``logs/<host>/namenode-format.out``.
    """
    command = daemon_command(plan, node, "namenode", work_dir=work_dir)
    log_dir = Path(node.log_dir)
    argv = [a for a in command.argv if not a.startswith(CDS_FLAG_PREFIXES)]  # no archive from a format run
    argv = [*argv, "-format", "-nonInteractive", "-clusterid", plan.cluster_id]
    argv = [a.replace("-Dhadoop.log.file=namenode.log", "-Dhadoop.log.file=namenode-format.log") for a in argv]
    return DaemonCommand(name="namenode-format", argv=argv, env=command.env, log=log_dir / "namenode-format.log",
                         out=log_dir / "namenode-format.out")
