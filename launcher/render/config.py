"""Render the cluster's files from the Jinja2 templates in ``templates/``.

Templates see ``plan`` (:class:`launcher.plan.cluster_plan.ClusterPlan`), ``spec``
(:class:`launcher.config.spec.JobSpec`),
``runtime`` (:class:`launcher.runtime.hadoop.HadoopRuntime`), ``classpath_csv`` and ``daemon_flags``. In the
``*-site.xml`` templates, ``prop(name, value, why)`` writes one ``<property>`` (XML-escaped); a value in the
job file's ``hadoop.properties`` for that file wins, and ``remaining()`` writes the user's properties no
template line named. Undefined variables are errors (``StrictUndefined``).

``filesystem.mode`` decides where MapReduce and YARN keep their shared directories: the templates write the
staging, history and aggregated-log directories with ``fs_uri`` (:meth:`launcher.plan.cluster_plan.ClusterPlan.fs_uri`):
``file://`` (``rawfs``), ``pfs://`` (``shim``: MapReduce stages on the default filesystem, so staging,
history and aggregated logs must be on it too) or HDFS (``hdfs``: staging on HDFS); ``hdfs`` mode adds
``hdfs-site.xml``.

Timeouts after which Hadoop declares a task, a node or a shuffle connection dead (:data:`WALLTIME_TIMEOUTS`)
are clamped to half the walltime (:func:`timeout_limit_ms`), whoever set them (template, site preset, job file,
``-D``): a preset's 2 h task timeout or 20 h shuffle timeout would otherwise outlive most allocations, and a
dead node would never be declared lost in time to redo its work. Each clamp is reported (``render`` prints
it under ``notes``; the run report keeps it in ``notes``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import jinja2

from launcher.plan.cluster_plan import HISTORY_JOBNAME_LIMIT, ClusterPlan
from launcher.runtime.shuffle_plugin import LOCAL_DIRS_PROPERTY, PLUGIN_CLASS
from launcher.util.files import create_private
from launcher.util.resources import templates_dir

TEMPLATE_DIR = templates_dir()

#: Generated configuration files: output name → template (``hdfs`` mode adds
#: :data:`launcher.plan.hdfs.CONFIG_TEMPLATES`).
CONFIG_TEMPLATES = {
    "core-site.xml": "hadoop/core-site.xml.j2",
    "yarn-site.xml": "hadoop/yarn-site.xml.j2",
    "mapred-site.xml": "hadoop/mapred-site.xml.j2",
    "capacity-scheduler.xml": "hadoop/capacity-scheduler.xml.j2",
    "log4j.properties": "hadoop/log4j.properties.j2",
    "hadoop-env.sh": "hadoop/hadoop-env.sh.j2",
}

#: The ResourceManager's compiler directives (:func:`launcher.render.daemons.resourcemanager_jit_flags`), in ``conf/``.
RM_JIT_DIRECTIVES = "resourcemanager-jit.json"
#: Configuration files Kerberos (``security: per-cluster`` or ``site``) adds to ``conf/`` (file name -> template): the
#: service-level ACLs and the ResourceManager's compiler directives.
SECURE_TEMPLATES = {"hadoop-policy.xml": "hadoop/hadoop-policy.xml.j2",
                    RM_JIT_DIRECTIVES: "hadoop/resourcemanager-jit.json.j2"}

#: The shim's classes (hadoop-fs-shim).
PFS_FILESYSTEM = "org.hpchadoop.fs.PfsFileSystem"
PFS_ABSTRACT_FILESYSTEM = "org.hpchadoop.fs.PfsFs"
#: ``yarn.resourcemanager.nodes.exclude-path`` in ``conf/``: the addresses of nodes the launcher has found lost
#: (:meth:`launcher.cluster.cluster.Cluster.decommission`); ``yarn rmadmin -refreshNodes`` makes the ResourceManager
#: read it.
EXCLUDE_FILE = "nodes.exclude"
#: ``fs.file.impl`` unless ``filesystem.checksums``: a LocalFileSystem that writes and verifies no ``.crc`` files.
NO_CHECKSUM_FILESYSTEM = "org.hpchadoop.fs.NoChecksumLocalFileSystem"
#: ``fs.file.impl`` with ``filesystem.checksums: true``: Hadoop's ``LocalFileSystem`` whose explicit modes keep the
#: configured umask (``NoChecksumLocalFileSystem`` extends it; issue 36 item 5: the job client's 0644 staging files).
PRIVATE_FILESYSTEM = "org.hpchadoop.fs.PrivateLocalFileSystem"
#: ``yarn.log-aggregation.file-controller.TFile.class`` (not in ``hdfs`` mode): Hadoop's TFile controller without the
#: mode-1777 ``chmod`` of ``app-logs/`` or of a ``.permission_check`` file in it (``LogAggregationFileController.
#: verifyAndCreateRemoteLogDir``, once per NodeManager), which OrangeFS refuses (its client exits after 8 refusals);
#: :func:`launcher.lifecycle.runner.materialize` makes ``app-logs/`` (0700) before any daemon starts.
LOG_AGGREGATION_CONTROLLER = "org.hpchadoop.fs.PreparedDirTFileController"


#: Timeouts clamped to :func:`timeout_limit_ms`: key → (configuration file, Hadoop 3's default in ms).
WALLTIME_TIMEOUTS: dict[str, tuple[str, int]] = {
    "mapreduce.task.timeout": ("mapred-site", 600_000),
    "mapreduce.reduce.shuffle.connect.timeout": ("mapred-site", 180_000),
    "mapreduce.reduce.shuffle.read.timeout": ("mapred-site", 180_000),
    "yarn.nm.liveness-monitor.expiry-interval-ms": ("yarn-site", 600_000),
    "yarn.am.liveness-monitor.expiry-interval-ms": ("yarn-site", 600_000),
}
#: The smallest limit, ms: below a minute a busy node's missed heartbeats would look like a dead node.
MIN_TIMEOUT_MS = 60_000


def timeout_limit_ms(walltime_s: int) -> int:
    """The longest a :data:`WALLTIME_TIMEOUTS` timeout may be, in ms: half the walltime (seconds), at least
    :data:`MIN_TIMEOUT_MS`; a task or node found dead then still leaves half the walltime to redo its work."""
    return max(MIN_TIMEOUT_MS, walltime_s * 1000 // 2)


def _milliseconds(value: object) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def xml_value(value: object) -> str:
    """A Hadoop property value as XML text: booleans as ``true``/``false``, escaped."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    return escape(str(value))


def environment() -> jinja2.Environment:
    """The Jinja2 environment: ``templates/`` loader, ``StrictUndefined``, filter ``sh`` (shell quoting)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["sh"] = lambda value: shlex.quote(str(value))
    return env


def _property_functions(overrides: Mapping[str, object], limits: Mapping[str, tuple[int, int]] | None = None,
                        notes: list[str] | None = None) -> tuple[Callable[..., str], Callable[[], str]]:
    """``prop`` and ``remaining`` for one file; ``limits`` (key → (limit ms, Hadoop default ms)) clamps timeouts
    and appends a line per clamp to ``notes``."""
    seen: set[str] = set()
    limits = limits or {}
    notes = notes if notes is not None else []

    def prop(name: str, value: object, why: str | None = None) -> str:
        seen.add(name)
        source = ""
        if name in overrides:
            value, source = overrides[name], "<source>hadoop.properties (job file or site preset)</source>"
        current = _milliseconds(value)
        if name in limits and current is not None and current > limits[name][0]:
            notes.append(f"{name} clamped from {current} to {limits[name][0]} ms (half the walltime)")
            value, why, source = limits[name][0], f"clamped from {current} ms to half the walltime", ""
        comment = f"\n    <description>{escape(why)}</description>" if why and not source else ""
        return (f"  <property>\n    <name>{escape(name)}</name>\n    <value>{xml_value(value)}</value>"
                f"{comment}{source}\n  </property>")

    def remaining() -> str:
        extra = [prop(k, v) for k, v in overrides.items() if k not in seen]
        extra += [prop(k, default) for k, (limit, default) in limits.items() if k not in seen and default > limit]
        header = "  <!-- From hadoop.properties (job file, site preset, -D) or clamped to the walltime. -->"
        return "\n".join([header, *extra]) if extra else ""

    return prop, remaining


def stripe_roles(plan: ClusterPlan) -> dict[str, str]:
    """``shim`` mode: each role of ``filesystem.striping`` that asks for a layout → the directory holding its
    directories (``scratch``: the parent of every NodeManager's local dir), for ``pfs.stripe.<role>.dir``;
    empty in the other modes and where the filesystem has no striping.

    Raises:
        UserError: an unknown ``${...}`` in ``filesystem.input_dir``/``output_dir``.
    """
    if plan.spec.filesystem.mode != "shim" or plan.filesystem.shim_layout == "none":
        return {}
    striping = plan.spec.filesystem.striping
    return {role: os.path.commonpath([str(d) for d in dirs]) for role, dirs in plan.striped_dirs().items()
            if dirs and getattr(striping, role).requested}


def render_config(plan: ClusterPlan, notes: list[str] | None = None) -> dict[str, str]:
    """Render every configuration file of the cluster.

    Args:
        plan: the cluster plan.
        notes: if given, a line is appended for each timeout clamped to half the walltime (:data:`WALLTIME_TIMEOUTS`).

    Returns:
        ``{file name: text}`` for ``core-site.xml``, ``yarn-site.xml``, ``mapred-site.xml``,
        ``capacity-scheduler.xml``, ``log4j.properties``, ``hadoop-env.sh``, ``hdfs-site.xml`` in ``hdfs``
        mode, ``hadoop-policy.xml`` under ``security: per-cluster`` (:data:`SECURE_TEMPLATES`), and
        :data:`EXCLUDE_FILE` (empty: the nodes the launcher takes out of YARN when they are lost).

    Raises:
        jinja2.TemplateError: a template is broken (our bug).
    """
    env = environment()
    spec = plan.spec
    runtime = plan.runtime
    context: dict[str, Any] = {
        "plan": plan, "spec": spec, "runtime": runtime,
        "classpath_csv": ",".join(runtime.classpath), "daemon_flags": runtime.daemon_flags(spec.hadoop.fast_start),
        "fs_uri": plan.fs_uri, "hdfs": plan.hdfs,
        "pfs_filesystem": PFS_FILESYSTEM, "pfs_abstract_filesystem": PFS_ABSTRACT_FILESYSTEM,
        "no_checksum_filesystem": NO_CHECKSUM_FILESYSTEM, "private_filesystem": PRIVATE_FILESYSTEM,
        "log_aggregation_controller": LOG_AGGREGATION_CONTROLLER,
        "pfs_layout": plan.filesystem.shim_layout if spec.filesystem.mode == "shim" else "none",
        "stripe_roles": stripe_roles(plan),
        "shuffle_plugin": PLUGIN_CLASS, "shuffle_dirs_property": LOCAL_DIRS_PROPERTY,
        "history_jobname_limit": HISTORY_JOBNAME_LIMIT,
    }
    security = plan.security
    context["security"] = security
    templates = {**CONFIG_TEMPLATES, **plan.hdfs.config_templates, **(SECURE_TEMPLATES if security.kerberos else {})}
    limit = timeout_limit_ms(spec.walltime)
    files: dict[str, str] = {}
    for name, template in templates.items():
        key = name.removesuffix(".xml")
        limits = {k: (limit, default) for k, (file, default) in WALLTIME_TIMEOUTS.items() if file == key}
        prop, remaining = _property_functions(spec.hadoop.properties.get(key, {}), limits, notes)
        files[name] = env.get_template(template).render(context, prop=prop, remaining=remaining)
    files[EXCLUDE_FILE] = ""
    return files


def write_files(directory: Path, files: Mapping[str, str]) -> list[Path]:
    """Write rendered files into ``directory`` (created, mode 0700), each mode 0600 (``*.sh`` 0700) whatever the
    umask: the configuration names the cluster's ports and directories, for its owner only; never over an
    existing file.

    Raises:
        FileExistsError: a file is already there (a cluster directory is new for every run).
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    written = []
    for name, text in files.items():
        path = directory / name
        create_private(path, text, 0o700 if name.endswith(".sh") else 0o600)
        written.append(path)
    return written
