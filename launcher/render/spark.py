"""Spark on the cluster's YARN: the Spark runtime, the cluster's ``spark-conf/spark-defaults.conf``, executor
sizing from the plan, and the ``spark-submit`` command line of ``spark:`` and ``pyspark:`` steps.

Spark over a ``file://`` default filesystem (docs/architecture.md, Spark) needs, and gets here:

* ``spark.yarn.stagingDir`` in the cluster directory: Spark's default is the default filesystem's home
  directory, ``file:$HOME/.sparkStaging``, which is not shared between nodes on every site;
* ``spark.yarn.jars=local:<SPARK_HOME>/jars/*``: with neither ``spark.yarn.jars`` nor ``spark.yarn.archive``
  Spark zips its 287 jars (462 MB) into ``__spark_libs__*.zip`` in the client's temporary directory at every
  submission and, since SPARK-21384 (before it, a ``file://`` default filesystem failed: the zip was neither copied
  nor kept), copies every ``file:`` resource into the staging directory: 462 MB written to the parallel
  filesystem and localized by every NodeManager, per job. ``local:`` means "already at this path on every node",
  as the Hadoop runtime is: nothing is zipped, uploaded or localized;
* ``PYSPARK_ARCHIVES_PATH=local:...``: likewise for ``pyspark.zip`` and py4j;
* ``spark.eventLog.dir`` in the cluster directory (``spark-events/``), which outlives the cluster: a Spark
  history server started later reads it; uncompressed (Spark 4 compresses with zstd by default), so that ``grep``
  and the tests read it too;
* the shim jar on the driver's and executors' class path when ``fs.file.impl`` names one of its classes
  (the ``pyspark`` build carries its own Hadoop client and does not add Hadoop's class path to containers);
* ``-XX:-UseContainerSupport`` for the driver, the executors and the ApplicationMaster, as for every JVM we start
  (:data:`launcher.runtime.hadoop.NO_CONTAINER_SUPPORT`): inside a Slurm job JDK 17's cgroup v1 detection throws a
  NullPointerException, which Spark's executor metrics (``ExecutorMetricType``) hit when a SparkContext starts
  (seen on the Slurm test cluster);
* ``spark.driver.host`` = the master's address (the driver runs in the launcher, on the master node; executors
  on other nodes must reach it there).

Under ``security: per-cluster`` (the cluster's Kerberos realm, :mod:`launcher.security.kerberos`) Spark also gets
(:func:`security_properties`; Spark's "Security" page, docs/security.md, sections "Kerberos" and "Spark RPC"):

* the realm's ``krb5.conf`` (``-Djava.security.krb5.conf``) in the driver's, the executors' and the
  ApplicationMaster's JVM options, and in ``SPARK_SUBMIT_OPTS`` (the driver is the ``spark-submit`` JVM in client
  mode: a ``--conf spark.driver.extraJavaOptions=...`` of the user's would otherwise drop it). Every one of them
  reads ``hadoop.security.authentication=kerberos`` from the cluster's ``core-site.xml``, and Hadoop's
  ``UserGroupInformation`` fails without the realm ("Cannot locate default realm", as the MapReduce AM did). The
  driver logs in from the owner's ticket cache (``KRB5CCNAME``, :meth:`SecurityPlan.client_env`), and YARN hands
  the AM and the executors tokens: no keytab is named anywhere, on a command line or in a file;
* ``spark.authenticate=true``: Spark's RPC (driver, executors, block managers) authenticated with a secret that
  Spark on YARN makes for each application and hands to its containers through YARN's credentials. Without it,
  anyone who reaches the driver's port could register an executor and be sent the owner's tasks;
* ``spark.security.credentials.hive.enabled=false`` and ``...hbase.enabled=false``: the cluster has neither a Hive
  metastore nor HBase (the ``pyspark`` build carries Hive's jars, so the Hive provider would load them to find
  that out). The Hadoop filesystem provider stays on: with a ``file://`` (or the shim's ``pfs://``) default
  filesystem it asks ``LocalFileSystem`` for tokens, whose service name is none (a URI without an authority), and
  gets none, so no ``spark.kerberos.access.hadoopFileSystems`` is needed.

* ``spark.ui.killEnabled=false`` (Spark's default: true): the Spark UI lets through any request from the
  ResourceManager's host (Spark's ``AmIpFilter``, which takes the user from an unsigned ``proxy-user`` cookie), so
  another user on the master node could kill the owner's jobs and stages with the UI's ``kill`` links. Reading the
  UI stays open to that node (docs/admin-guide.md, Security); the owner kills with ``yarn application -kill``.

The executors' scratch (``spark.local.dir``) is not set: on YARN an executor uses its container's
``LOCAL_DIRS``, the NodeManager's local dirs (Spark's ``Utils.getConfiguredLocalDirs``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# SPARK_KINDS and uses_spark are defined with the step kinds (a run without Spark does not import this module),
# re-exported here
from launcher.config.spec import SPARK_KINDS as SPARK_KINDS
from launcher.config.spec import JobSpec
from launcher.config.spec import uses_spark as uses_spark
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.daemons import hadoop_env
from launcher.runtime.hadoop import NO_CONTAINER_SUPPORT, shim_jar
from launcher.util.errors import UserError
from launcher.util.resources import SPARK_EXAMPLES_JAR, SPARK_SUBDIR, checkout_spark, prefixes

#: Where ``install.sh`` puts Spark: PyPI's ``pyspark`` (Spark built for Hadoop 3, its ``bin/``, ``jars/`` and
#: ``python/lib``) installed with ``pip install --target spark-runtime``; our examples jar beside it (``None``
#: in an install from a wheel).
BUILT_SPARK = checkout_spark()
#: Our examples jar (``org.hpchadoop.spark.examples.SparkPi``), built from ``spark-examples/`` by ``install.sh`` in a
#: checkout and by ``hpc-hadoop runtime install`` in a prefix, beside ``pyspark/``: Maven Central has no
#: ``spark-examples`` jar for Spark 4 (:data:`launcher.util.resources.SPARK_EXAMPLES_JAR`).
EXAMPLES_JAR_NAME = SPARK_EXAMPLES_JAR
#: The fix named when no examples jar is installed beside the Spark in use.
NO_EXAMPLES_JAR_FIX = "hpc-hadoop runtime install, or ./install.sh in a checkout"
#: YARN's memory overhead of a Spark container: ``max(384 MiB, 10% of the heap)`` (Spark's
#: ``spark.executor.memoryOverhead`` default, ``MEMORY_OVERHEAD_MIN`` and ``MEMORY_OVERHEAD_FACTOR``).
OVERHEAD_MIN_MB = 384
OVERHEAD_FACTOR = 0.10
#: Heap of the Spark ApplicationMaster in client mode (``spark.yarn.am.memory``, Spark's default 512m); its
#: container is this plus :data:`OVERHEAD_MIN_MB`, rounded up by YARN to its minimum allocation.
AM_MEMORY_MB = 512
#: The smallest executor heap Spark accepts, MiB: 1.5 × the 300 MiB its memory manager reserves
#: (``UnifiedMemoryManager``: "Executor memory ... must be at least 471859200").
MIN_EXECUTOR_MB = 450
#: Cores per executor at most, when sized from the plan (Spark's tuning advice: up to about 5 tasks per executor).
MAX_EXECUTOR_CORES = 5


@dataclass(frozen=True)
class SparkRuntime:
    """A located Spark install.

    Attributes:
        home: ``SPARK_HOME`` (``bin/spark-submit``, ``jars/``).
        version: Spark's version, from ``jars/spark-core_<scala>-<version>.jar``.
        python_archives: ``python/lib/pyspark.zip`` and ``py4j-*-src.zip`` (what PySpark needs on ``PYTHONPATH``).
        examples_jar: a jar with Spark's example programs (a site's ``examples/jars/spark-examples_*.jar``, or
            ours), or ``None``.
    """

    home: Path
    version: str
    python_archives: tuple[Path, ...]
    examples_jar: Path | None

    @property
    def spark_submit(self) -> str:
        """Path of ``bin/spark-submit``."""
        return str(self.home / "bin" / "spark-submit")


def discover_spark(spec: JobSpec) -> SparkRuntime:
    """Locate Spark: ``spark.home``, then ``$SPARK_HOME``, then :data:`BUILT_SPARK`, then ``<prefix>/spark/pyspark``
    in the user and the site prefix (:func:`launcher.util.resources.prefixes`, the places of the Hadoop runtime).

    Raises:
        UserError: the install named has no ``bin/spark-submit`` or no ``jars/spark-core_*.jar``, or none is found
            (the fix: ``hpc-hadoop runtime install``, ``./install.sh`` or ``spark.home``).
    """
    explicit = spec.spark.home if spec.spark else None
    for origin, value in (("spark.home", explicit), ("$SPARK_HOME", os.environ.get("SPARK_HOME"))):
        if value:
            return _spark_at(Path(os.path.expandvars(os.path.expanduser(value))), origin)
    for home in (BUILT_SPARK, *(prefix / SPARK_SUBDIR / "pyspark" for _, prefix in prefixes())):
        if home is not None and home.is_dir():
            return _spark_at(home, "spark.home")
    raise UserError("no Spark runtime found", field="spark.home",
                    fix="run `hpc-hadoop runtime install` (or ./install.sh in a checkout), or set spark.home to a "
                        "Spark 4 install built for Hadoop 3")


def _spark_at(home: Path, origin: str) -> SparkRuntime:
    """The :class:`SparkRuntime` at ``home``.

    Raises:
        UserError: ``home`` is not a Spark install (field ``origin``).
    """
    cores = sorted((home / "jars").glob("spark-core_*.jar"))
    if not (home / "bin" / "spark-submit").is_file() or not cores:
        raise UserError(f"{home} is not a Spark install (no bin/spark-submit or jars/spark-core_*.jar)", field=origin,
                        fix="point it at a Spark 4 install built for Hadoop 3 (or unset it to use ours)")
    version = cores[-1].name.removesuffix(".jar").split("-", 2)[-1]
    archives = tuple(sorted((home / "python" / "lib").glob("pyspark.zip")) +
                     sorted((home / "python" / "lib").glob("py4j-*-src.zip")))
    examples = [home.parent / EXAMPLES_JAR_NAME, *sorted((home / "examples" / "jars").glob("spark-examples_*.jar"))]
    return SparkRuntime(home=home, version=version, python_archives=archives,
                        examples_jar=next((p for p in examples if p.is_file()), None))


def spark_variables(runtime: SparkRuntime) -> dict[str, str]:
    """The ``${...}`` variables Spark steps may use besides :meth:`ClusterPlan.variables`: ``spark_home``,
    ``spark_examples_jar`` (empty when there is none)."""
    return {"spark_home": str(runtime.home), "spark_examples_jar": str(runtime.examples_jar or "")}


@dataclass(frozen=True)
class ExecutorPlan:
    """The executors of one Spark application.

    Attributes:
        instances: ``spark.executor.instances``.
        cores: ``spark.executor.cores``.
        memory_mb: ``spark.executor.memory`` (heap), MiB.
        overhead_mb: ``spark.executor.memoryOverhead``, MiB; heap + overhead is the YARN container.
        per_node: executors one NodeManager holds.
    """

    instances: int
    cores: int
    memory_mb: int
    overhead_mb: int
    per_node: int


def am_container_mb(plan: ClusterPlan) -> int:
    """The Spark ApplicationMaster's YARN container, MiB: :data:`AM_MEMORY_MB` + :data:`OVERHEAD_MIN_MB` rounded
    up to YARN's minimum allocation (``yarn.scheduler.minimum-allocation-mb``, the plan's)."""
    step = max(1, plan.memory.min_allocation_mb)
    return -(-(AM_MEMORY_MB + OVERHEAD_MIN_MB) // step) * step


def size_executors(plan: ClusterPlan, executors: int | str = "auto") -> ExecutorPlan:
    """Executors sized from the plan, so that they fill the NodeManagers without waiting for room.

    Rule: ``cores`` = ``spark.executor_cores`` or the largest divisor of a NodeManager's vcores up to
    :data:`MAX_EXECUTOR_CORES` (8 vcores: 4, two executors; 2: 2, one); ``per_node`` = vcores // cores; each
    executor's container = (NodeManager memory − the Spark AM's container, which may land on any node) //
    ``per_node``, rounded down to YARN's minimum allocation; heap = container −
    overhead (:data:`OVERHEAD_MIN_MB` or 10% of the heap, Spark's rule), unless ``spark.executor_memory`` sets it.
    ``auto`` runs ``per_node`` executors on every NodeManager; a number runs that many.

    On a preview plan (:attr:`ClusterPlan.preview`: ``render``, ``submit``'s checks, whose stand-in nodes have one
    core unless the job file says) nothing is checked and the heap is at least :data:`MIN_EXECUTOR_MB`.

    Raises:
        UserError: a NodeManager cannot hold the AM and one executor of ``spark.executor_memory``, or, sized from the
            plan, an executor would get less than :data:`MIN_EXECUTOR_MB` of heap.
    """
    spark = plan.spec.spark
    vcores = plan.memory.nodemanager_vcores
    cores = (spark.executor_cores if spark and spark.executor_cores else None) or \
        max(c for c in range(1, min(vcores, MAX_EXECUTOR_CORES) + 1) if vcores % c == 0)
    per_node = max(1, vcores // cores)
    step = max(1, plan.memory.min_allocation_mb)
    room = plan.memory.nodemanager_mb - am_container_mb(plan)
    container = (room // per_node) // step * step
    if spark and spark.executor_memory:
        heap = max(1, int(spark.executor_memory // (1 << 20)))
        overhead = max(OVERHEAD_MIN_MB, int(heap * OVERHEAD_FACTOR))
    else:
        heap = min(container - OVERHEAD_MIN_MB, int(container / (1 + OVERHEAD_FACTOR)))
        overhead = container - heap
    if plan.preview:  # a stand-in allocation's nodes are not the real ones: show a size Spark takes, check nothing
        heap = max(heap, MIN_EXECUTOR_MB)
    elif spark and spark.executor_memory and heap + overhead > room:
        raise UserError(f"a NodeManager offers {plan.memory.nodemanager_mb} MiB: after the Spark ApplicationMaster "
                        f"({am_container_mb(plan)} MiB) no executor of {heap} MiB + {overhead} MiB overhead fits",
                        field="spark.executor_memory", fix="lower spark.executor_memory, or raise "
                        "hadoop.nodemanager_memory")
    elif heap < MIN_EXECUTOR_MB:
        raise UserError(f"a NodeManager offers {plan.memory.nodemanager_mb} MiB: after the Spark ApplicationMaster "
                        f"({am_container_mb(plan)} MiB) an executor would get {max(heap, 0)} MiB of heap, less than "
                        f"Spark's minimum {MIN_EXECUTOR_MB} MiB", field="hadoop.nodemanager_memory",
                        fix=f"set it to at least {am_container_mb(plan) + MIN_EXECUTOR_MB + OVERHEAD_MIN_MB} (MiB), "
                            "or give the nodes more memory (batch.memory_per_node, hadoop.containers_per_node)")
    count = per_node * max(1, len(plan.nodemanagers)) if executors == "auto" else int(executors)
    return ExecutorPlan(instances=count, cores=cores, memory_mb=heap, overhead_mb=overhead, per_node=per_node)


def conf_dir(plan: ClusterPlan) -> Path:
    """``spark-conf/`` in the cluster directory (``SPARK_CONF_DIR``: ``spark-defaults.conf``):
    :attr:`ClusterPlan.spark_conf_dir`."""
    return plan.spark_conf_dir


def events_dir(plan: ClusterPlan) -> Path:
    """``spark-events/`` in the cluster directory: the Spark event logs (``spark.eventLog.dir``)."""
    return plan.path("spark-events")


def _shim_on_classpath(plan: ClusterPlan) -> Path | None:
    """The shim jar when ``core-site.xml`` names one of its classes (``fs.file.impl`` unless
    ``filesystem.checksums``; ``fs.pfs.impl`` in ``shim`` mode), else ``None``."""
    fs = plan.spec.filesystem
    return shim_jar() if fs.mode == "shim" or not fs.checksums else None


#: The JVM options properties of the driver, the executors and the ApplicationMaster (client mode: Spark's
#: ``ExecutorLauncher``).
JAVA_OPTIONS_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions",
                     "spark.yarn.am.extraJavaOptions")


def java_options(plan: ClusterPlan) -> str:
    """The JVM options every Spark JVM of the cluster needs: container support off
    (:data:`launcher.runtime.hadoop.NO_CONTAINER_SUPPORT`) and, under ``security: per-cluster``, the realm's
    ``krb5.conf`` (:meth:`SecurityPlan.jvm_flags`)."""
    return " ".join([NO_CONTAINER_SUPPORT, *plan.security.jvm_flags()])


def security_properties(plan: ClusterPlan) -> dict[str, str]:
    """The Spark properties of ``security:`` besides the JVM options (:func:`java_options`): under ``per-cluster``
    ``spark.authenticate``, the Hive and HBase token providers off and the UI's kill links off (why: the module
    docstring); none under ``simple``."""
    if not plan.security.kerberos:
        return {}
    return {"spark.authenticate": "true",
            "spark.security.credentials.hive.enabled": "false",
            "spark.security.credentials.hbase.enabled": "false",
            "spark.ui.killEnabled": "false"}


def with_java_options(plan: ClusterPlan, key: str, value: str) -> str:
    """``value`` of a JVM options property (:data:`JAVA_OPTIONS_KEYS`) given by the job file or a step, with the
    cluster's own flags (:func:`java_options`) put first unless it has them: a user's
    ``spark.executor.extraJavaOptions`` replaces Spark's whole value, and executors without the realm's
    ``krb5.conf`` fail under ``per-cluster``. Other keys are returned as they are."""
    if key not in JAVA_OPTIONS_KEYS:
        return value
    missing = [flag for flag in java_options(plan).split() if flag not in value.split()]
    return " ".join([*missing, value]) if value else " ".join(missing)


def spark_defaults(plan: ClusterPlan, runtime: SparkRuntime) -> dict[str, str]:
    """The cluster's Spark properties (``spark-defaults.conf``), ``spark.conf`` of the job file last (it wins; the
    JVM options keep the cluster's flags, :func:`with_java_options`).

    Each value and why: see the module docstring; the executors are :func:`size_executors` with ``auto``.
    """
    executors = size_executors(plan)
    spark = plan.spec.spark
    python = spark.python if spark else "/usr/bin/python3"
    options = java_options(plan)
    props = {
        "spark.master": "yarn",
        "spark.submit.deployMode": "client",
        "spark.driver.host": plan.master.address,
        "spark.driver.bindAddress": plan.master.address,
        "spark.yarn.stagingDir": plan.fs_uri(str(plan.path("staging"))),
        "spark.yarn.jars": f"local:{runtime.home / 'jars'}/*",
        "spark.yarn.am.memory": f"{AM_MEMORY_MB}m",
        "spark.yarn.maxAppAttempts": "1",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": "file://" + str(events_dir(plan)),
        "spark.eventLog.compress": "false",
        "spark.history.fs.logDirectory": "file://" + str(events_dir(plan)),
        "spark.dynamicAllocation.enabled": "false",
        "spark.executor.instances": str(executors.instances),
        "spark.executor.cores": str(executors.cores),
        "spark.executor.memory": f"{executors.memory_mb}m",
        "spark.executor.memoryOverhead": f"{executors.overhead_mb}m",
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": python,
        **{key: options for key in JAVA_OPTIONS_KEYS},
        "spark.ui.showConsoleProgress": "false",
        "spark.speculation": "false",
        **security_properties(plan),
    }
    shim = _shim_on_classpath(plan)
    if shim is not None:
        props["spark.driver.extraClassPath"] = str(shim)
        props["spark.executor.extraClassPath"] = str(shim)
    for key, value in (spark.conf if spark else {}).items():
        props[key] = with_java_options(plan, key, str(value).lower() if isinstance(value, bool) else str(value))
    return props


def render_spark_defaults(plan: ClusterPlan, runtime: SparkRuntime) -> str:
    """The text of ``spark-conf/spark-defaults.conf``."""
    lines = [f"# Spark {runtime.version} on the YARN of cluster {plan.cluster_id} (written by hpc-hadoop)"]
    lines += [f"{key} {value}" for key, value in spark_defaults(plan, runtime).items()]
    return "\n".join(lines) + "\n"


def write_spark_conf(plan: ClusterPlan) -> Path:
    """Write ``spark-conf/spark-defaults.conf`` and make ``spark-events/`` (Spark refuses an event log directory
    that does not exist). Returns ``spark-conf/``.

    Raises:
        UserError: no Spark runtime (:func:`discover_spark`).
    """
    runtime = discover_spark(plan.spec)
    directory = conf_dir(plan)
    directory.mkdir(mode=0o700, exist_ok=True)
    events_dir(plan).mkdir(mode=0o700, exist_ok=True)
    (directory / "spark-defaults.conf").write_text(render_spark_defaults(plan, runtime))
    return directory


def spark_environment(plan: ClusterPlan, runtime: SparkRuntime) -> dict[str, str]:
    """Variables ``spark-submit``, ``pyspark`` and ``spark-shell`` need against the cluster (besides Hadoop's):
    ``SPARK_HOME``, ``SPARK_CONF_DIR``, ``SPARK_LOCAL_IP`` (the master's address: where the driver runs),
    ``YARN_CONF_DIR``, ``PYSPARK_PYTHON``, ``PYSPARK_ARCHIVES_PATH`` (``local:`` paths: already on every node) and
    ``PYTHONPATH`` (``pyspark.zip`` and py4j: what the ``pyspark`` shell and a driver import); under
    ``security: per-cluster`` ``SPARK_SUBMIT_OPTS``, the realm's ``krb5.conf`` for the driver (the ``spark-submit``
    JVM in client mode; Spark's launcher adds it to that JVM whatever ``spark.driver.extraJavaOptions`` says). The
    owner's ticket cache (``KRB5CCNAME``) comes with Hadoop's variables
    (:func:`launcher.render.daemons.hadoop_env`, :func:`launcher.render.clients.client_environment`)."""
    spark = plan.spec.spark
    env = {"SPARK_HOME": str(runtime.home), "SPARK_CONF_DIR": str(conf_dir(plan)),
           "SPARK_LOCAL_IP": plan.master.address, "YARN_CONF_DIR": str(plan.conf_dir),
           "PYSPARK_PYTHON": spark.python if spark else "/usr/bin/python3"}
    if plan.security.kerberos:
        env["SPARK_SUBMIT_OPTS"] = " ".join(plan.security.jvm_flags())
    if runtime.python_archives:
        env["PYSPARK_ARCHIVES_PATH"] = ",".join(f"local:{p}" for p in runtime.python_archives)
        # bin/pyspark puts SPARK_HOME/python first on the path: in PyPI's layout that directory holds only
        # pyspark/shell.py, and the shell fails ("No module named 'pyspark.util'") unless the package is found too
        env["PYTHONPATH"] = ":".join(str(p) for p in runtime.python_archives)
    return env


def spark_env(plan: ClusterPlan, runtime: SparkRuntime | None = None) -> dict[str, str]:
    """The complete environment of a ``spark-submit`` step: :func:`launcher.render.daemons.hadoop_env` plus
    :func:`spark_environment`; ``SPARK_*`` variables of the caller's environment that would change Spark's
    configuration (``SPARK_CONF_DIR``, ``SPARK_DIST_CLASSPATH``, ``PYSPARK_DRIVER_PYTHON``...) are replaced or
    dropped."""
    runtime = runtime or discover_spark(plan.spec)
    env = hadoop_env(plan)
    for name in list(env):
        if name.startswith(("SPARK_", "PYSPARK_")):
            del env[name]
    env.update(spark_environment(plan, runtime))
    return env


def submit_command(plan: ClusterPlan, runtime: SparkRuntime, *, name: str, application: Sequence[str],
                   executors: int | str, properties: Mapping[str, object]) -> list[str]:
    """``spark-submit --master yarn --deploy-mode client --name NAME --num-executors N --executor-cores C
    --executor-memory M [--conf k=v...] APPLICATION`` where ``APPLICATION`` is ``--class CLASS JAR ARGS`` or
    ``SCRIPT ARGS``; the rest comes from ``spark-conf/spark-defaults.conf``. A JVM options property among
    ``properties`` keeps the cluster's flags (:func:`with_java_options`)."""
    size = size_executors(plan, executors)
    argv = [runtime.spark_submit, "--master", "yarn", "--deploy-mode", "client", "--name", name,
            "--num-executors", str(size.instances), "--executor-cores", str(size.cores),
            "--executor-memory", f"{size.memory_mb}m", "--conf", f"spark.executor.memoryOverhead={size.overhead_mb}m"]
    for key, value in properties.items():
        text = with_java_options(plan, key, str(value).lower() if isinstance(value, bool) else str(value))
        argv += ["--conf", f"{key}={text}"]
    return [*argv, *application]

