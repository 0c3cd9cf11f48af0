"""Client access to a running cluster: the ``hadoop``/``yarn``/``mapred`` wrapper commands in ``bin/`` and
the environment (``hpc-hadoop env``) a shell needs to use them.

Every cluster directory gets ``bin/hadoop``, ``bin/yarn`` and ``bin/mapred`` (from ``templates/clients/client.sh.j2``)
when it is materialized. The runtime assembled from Maven Central has Hadoop's jars but not its ``bin/``
scripts; the wrappers map the usual subcommands to the classes Hadoop 3.4's own scripts run. With a site's
Hadoop install (``hadoop.home`` holding ``bin/yarn`` ...) they run the site's script with this cluster's
``HADOOP_CONF_DIR`` instead.
"""

from __future__ import annotations

import os
import shlex
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path

from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.config import environment
from launcher.render.daemons import classpath, client_jvm_flags

#: Subcommand → (main class, whether the subcommand is passed on as the first argument), per command, as in
#: Hadoop 3.4's ``bin/hadoop``, ``bin/yarn`` and ``bin/mapred`` (``ApplicationCLI`` reads its title from argv[0]).
SUBCOMMANDS: dict[str, dict[str, tuple[str, bool]]] = {
    "hadoop": {
        "fs": ("org.apache.hadoop.fs.FsShell", False),
        "dfs": ("org.apache.hadoop.fs.FsShell", False),
        "jar": ("org.apache.hadoop.util.RunJar", False),
        "checknative": ("org.apache.hadoop.util.NativeLibraryChecker", False),
        "conftest": ("org.apache.hadoop.util.ConfTest", False),
        "key": ("org.apache.hadoop.crypto.key.KeyShell", False),
        "trace": ("org.apache.hadoop.tracing.TraceAdmin", False),
    },
    "yarn": {
        "application": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
        "app": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
        "applicationattempt": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
        "container": ("org.apache.hadoop.yarn.client.cli.ApplicationCLI", True),
        "cluster": ("org.apache.hadoop.yarn.client.cli.ClusterCLI", False),
        "jar": ("org.apache.hadoop.util.RunJar", False),
        "logs": ("org.apache.hadoop.yarn.client.cli.LogsCLI", False),
        "node": ("org.apache.hadoop.yarn.client.cli.NodeCLI", False),
        "queue": ("org.apache.hadoop.yarn.client.cli.QueueCLI", False),
        "rmadmin": ("org.apache.hadoop.yarn.client.cli.RMAdminCLI", False),
        "top": ("org.apache.hadoop.yarn.client.cli.TopCLI", False),
    },
    "mapred": {
        "job": ("org.apache.hadoop.mapred.JobClient", False),
        "queue": ("org.apache.hadoop.mapred.JobQueueClient", False),
        "pipes": ("org.apache.hadoop.mapred.pipes.Submitter", False),
        "hsadmin": ("org.apache.hadoop.mapreduce.v2.hs.client.HSAdmin", False),
        "frameworkuploader": ("org.apache.hadoop.mapred.uploader.FrameworkUploader", False),
    },
}


def bin_dir(plan: ClusterPlan) -> Path:
    """``bin/`` in the cluster directory: the wrapper commands."""
    return plan.path("bin")


def render_wrappers(plan: ClusterPlan) -> dict[str, str]:
    """The text of ``bin/hadoop``, ``bin/yarn`` and ``bin/mapred`` for this cluster."""
    runtime = plan.runtime
    template = environment().get_template("clients/client.sh.j2")
    flags = client_jvm_flags(plan)
    texts = {}
    for command, mapping in SUBCOMMANDS.items():
        site = Path(runtime.home, "bin", command)
        texts[command] = template.render(
            command=command, plan=plan, runtime=runtime, classpath=classpath(plan), mapping=mapping,
            subcommands=[*mapping, "classpath", "version"], jvm_flags=flags, krb_env=plan.security.client_env(),
            log_dir=plan.path("logs", "client"), site_script=site if os.access(site, os.X_OK) else None)
    return texts


def write_wrappers(plan: ClusterPlan) -> Path:
    """Write the wrappers (mode 0700: for the cluster's owner) into ``bin/``; returns the directory."""
    directory = bin_dir(plan)
    directory.mkdir(mode=0o700, exist_ok=True)
    for name, text in render_wrappers(plan).items():
        path = directory / name
        path.write_text(text)
        path.chmod(0o700)
    return directory


#: The job files' jar variables that ``hpc-hadoop env`` exports too, by the name it exports each as (issue 40): the
#: same files ``${examples_jar}``, ``${tests_jar}``, ``${streaming_jar}`` and ``${spark_examples_jar}`` name in a
#: job file (:meth:`launcher.plan.cluster_plan.ClusterPlan.variables`, :func:`launcher.render.spark.spark_variables`).
JAR_EXPORTS = {"EXAMPLES_JAR": "examples_jar", "TESTS_JAR": "tests_jar", "STREAMING_JAR": "streaming_jar",
               "SPARK_EXAMPLES_JAR": "spark_examples_jar"}


def client_environment(plan: ClusterPlan) -> dict[str, str]:
    """Variables a shell needs to use the cluster: ``HADOOP_CONF_DIR``, ``JAVA_HOME``, ``HADOOP_HOME``,
    ``HPC_HADOOP_CLASSPATH`` (conf dir + runtime jars, for ``java -cp``), ``HPC_HADOOP_CLUSTER`` (the id),
    ``HPC_HADOOP_RUN_DIR``, and ``PATH`` with ``bin/`` (the wrappers) and the JDK first; under
    ``security: per-cluster`` ``KRB5CCNAME`` (the owner's ticket cache), ``KRB5_CONFIG`` and ``HADOOP_OPTS`` (the
    realm's ``krb5.conf``); for a cluster with
    ``spark-conf/`` also Spark's (:func:`launcher.render.spark.spark_environment`) and its ``bin/`` on ``PATH``;
    ``EXAMPLES_JAR``, ``TESTS_JAR``, ``STREAMING_JAR`` and, for a cluster with Spark that has an examples jar,
    ``SPARK_EXAMPLES_JAR`` (:data:`JAR_EXPORTS`: the files of the job files' ``${...}`` of the same names).

    ``PATH`` is given as a prefix ending in ``:$PATH`` (unexpanded) so the lines can be ``eval``'d.
    """
    runtime = plan.runtime
    jars = plan.variables()
    variables = {
        "HPC_HADOOP_CLUSTER": plan.cluster_id,
        "HPC_HADOOP_RUN_DIR": plan.run_dir,
        "JAVA_HOME": str(runtime.java_home),
        "HADOOP_HOME": str(runtime.home),
        "HADOOP_CONF_DIR": str(plan.conf_dir),
        "HPC_HADOOP_CLASSPATH": classpath(plan),
        "PATH": f"{bin_dir(plan)}:{runtime.java_home / 'bin'}:$PATH",
        **plan.security.client_env(),
    }
    if plan.security.kerberos:  # Hadoop's own scripts and the user's java read the realm's krb5.conf from it
        variables["HADOOP_OPTS"] = " ".join(plan.security.jvm_flags())
    if plan.spark_conf_dir.is_dir():  # a cluster whose job uses Spark: spark-submit, pyspark, spark-shell
        from launcher.render.spark import discover_spark, spark_environment, spark_variables

        spark = discover_spark(plan.spec)
        variables.update(spark_environment(plan, spark))
        variables["PATH"] = f"{bin_dir(plan)}:{runtime.java_home / 'bin'}:{spark.home / 'bin'}:$PATH"
        jars.update(spark_variables(spark))
    variables.update({name: jars[key] for name, key in JAR_EXPORTS.items() if jars.get(key)})
    return variables


def export_lines(variables: dict[str, str]) -> list[str]:
    """``export NAME=value`` lines (POSIX shell: bash, zsh, sh), values quoted; ``$PATH`` is left to the shell."""
    lines = []
    for name, value in variables.items():
        if name == "PATH":
            prefix = value.removesuffix(":$PATH")
            lines.append(f'export PATH={shlex.quote(prefix)}:"$PATH"')
        else:
            lines.append(f"export {name}={shlex.quote(value)}")
    return lines


def apply_environment(variables: dict[str, str], base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) with ``variables`` applied, ``$PATH`` expanded: for ``hpc-hadoop exec``."""
    env = dict(os.environ if base is None else base)
    for noisy in ("CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"):
        env.pop(noisy, None)
    for name, value in variables.items():
        env[name] = value.replace("$PATH", env.get("PATH", "/usr/bin:/bin")) if name == "PATH" else value
    return env


def yarn_logs_command(plan: ClusterPlan, application: str, *, running: bool = True) -> tuple[list[str], dict[str, str]]:
    """``bin/yarn logs -applicationId APP`` of the cluster and its environment: YARN's own reader of the aggregated
    container logs (``app-logs/``). LogsCLI takes no ``-D`` options: JVM system properties that the configuration
    substitutes set how long it waits for the ResourceManager.

    Args:
        running: whether the cluster is running. When it is, one quick try (``-Dhpc.rm.connect.max-wait.ms=1000``,
            which ``yarn-site.xml`` substitutes into ``yarn.resourcemanager.connect.max-wait.ms``, 1 s instead of
            15 min) in case the ResourceManager has just gone. When it is not, no retry at all: the RM wait at 0
            and the IPC client's connection retries at 0 (``-Dhpc.ipc.connect.max.retries=0``, substituted into
            ``ipc.client.connect.max.retries`` by ``core-site.xml``; Hadoop's 10 tries printed ten ``Retrying
            connect to server`` lines), and only ERROR records (``HADOOP_ROOT_LOGGER``): LogsCLI then reads
            ``app-logs/`` directly after one refused connection.

    Returns:
        ``(argv, env)``.
    """
    argv = [str(bin_dir(plan) / "yarn"), "logs", "-applicationId", application]
    env = apply_environment(client_environment(plan))
    opts = env.get("HADOOP_CLIENT_OPTS", "-Xmx512m")
    if running:
        env["HADOOP_CLIENT_OPTS"] = f"{opts} -Dhpc.rm.connect.max-wait.ms=1000"
    else:
        env["HADOOP_CLIENT_OPTS"] = f"{opts} -Dhpc.rm.connect.max-wait.ms=0 -Dhpc.ipc.connect.max.retries=0"
        env["HADOOP_ROOT_LOGGER"] = "ERROR,console"
    return argv, env


def fs_text_command(plan: ClusterPlan, path: str | Path) -> tuple[list[str], dict[str, str]]:
    """``bin/hadoop fs -text file://PATH`` of the cluster and its environment: Hadoop's own reader of a SequenceFile
    (each record as ``key<TAB>value``, the classes' ``toString``) or a compressed file (its codec found by name), for
    ``hpc-hadoop results`` (issue 40). It needs no daemon (the path is on the shared filesystem, ``file://``), so it
    reads the outputs of a cluster that has stopped too; only ERROR records (``HADOOP_ROOT_LOGGER``), so that what
    it prints is the file's text.

    Returns:
        ``(argv, env)``.
    """
    argv = [str(bin_dir(plan) / "hadoop"), "fs", "-text", f"file://{path}"]
    env = apply_environment(client_environment(plan))
    env["HADOOP_ROOT_LOGGER"] = "ERROR,console"
    return argv, env


def tail_logs(lines: Iterable[str], keep: int) -> Iterator[str]:
    """``yarn logs`` output (lines without their newline) with each log file's contents, between its
    ``LogContents:`` and ``End of LogType:`` lines, cut to its last ``keep`` lines (``0``: all); a log's trailing
    blank lines do not count. Holds at most ``keep`` lines at a time."""
    body: deque[str] | None = None
    blank = 0  # blank lines held back until a line follows them
    for line in lines:
        if body is None:
            yield line
            if line == "LogContents:" and keep > 0:
                body, blank = deque(maxlen=keep), 0
        elif line.startswith("End of LogType:"):
            yield from body
            yield ""
            yield line
            body = None
        elif not line.strip():
            blank += 1
        else:
            body.extend([""] * blank if body else [])
            body.append(line)
            blank = 0
    if body:
        yield from body
