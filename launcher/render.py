"""Render the cluster's files from the Jinja2 templates in ``templates/``.

Templates see ``plan`` (:class:`launcher.plan.ClusterPlan`), ``spec`` (:class:`launcher.spec.JobSpec`),
``runtime`` (:class:`launcher.runtime.HadoopRuntime`), ``classpath_csv`` and ``daemon_flags``. In the
``*-site.xml`` templates, ``prop(name, value, why)`` writes one ``<property>`` (XML-escaped); a value in the
job file's ``hadoop.properties`` for that file wins, and ``remaining()`` writes the user's properties no
template line named. Undefined variables are errors (``StrictUndefined``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import jinja2

from launcher.plan import ClusterPlan
from launcher.spec import SHARE_DIR

TEMPLATE_DIR = SHARE_DIR / "templates"

#: Generated configuration files: output name → template.
CONFIG_TEMPLATES = {
    "core-site.xml": "core-site.xml.j2",
    "yarn-site.xml": "yarn-site.xml.j2",
    "mapred-site.xml": "mapred-site.xml.j2",
    "capacity-scheduler.xml": "capacity-scheduler.xml.j2",
    "log4j.properties": "log4j.properties.j2",
    "hadoop-env.sh": "hadoop-env.sh.j2",
}


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


def _property_functions(overrides: Mapping[str, object]) -> tuple[Callable[..., str], Callable[[], str]]:
    seen: set[str] = set()

    def prop(name: str, value: object, why: str | None = None) -> str:
        seen.add(name)
        source = ""
        if name in overrides:
            value, source = overrides[name], "<source>hadoop.properties (job file or site preset)</source>"
        comment = f"\n    <description>{escape(why)}</description>" if why and not source else ""
        return (f"  <property>\n    <name>{escape(name)}</name>\n    <value>{xml_value(value)}</value>"
                f"{comment}{source}\n  </property>")

    def remaining() -> str:
        extra = [prop(k, v) for k, v in overrides.items() if k not in seen]
        return "\n".join(["  <!-- From the job file (hadoop.properties). -->", *extra]) if extra else ""

    return prop, remaining


def render_config(plan: ClusterPlan) -> dict[str, str]:
    """Render every configuration file of the cluster.

    Returns:
        ``{file name: text}`` for ``core-site.xml``, ``yarn-site.xml``, ``mapred-site.xml``,
        ``capacity-scheduler.xml``, ``log4j.properties``, ``hadoop-env.sh``.

    Raises:
        jinja2.TemplateError: a template is broken (our bug).
    """
    env = environment()
    spec = plan.job_spec()
    runtime = plan.hadoop_runtime()
    context: dict[str, Any] = {
        "plan": plan, "spec": spec, "runtime": runtime,
        "classpath_csv": ",".join(runtime.classpath), "daemon_flags": runtime.daemon_flags(),
    }
    files: dict[str, str] = {}
    for name, template in CONFIG_TEMPLATES.items():
        prop, remaining = _property_functions(spec.hadoop.properties.get(name.removesuffix(".xml"), {}))
        files[name] = env.get_template(template).render(context, prop=prop, remaining=remaining)
    return files


def write_files(directory: Path, files: Mapping[str, str]) -> list[Path]:
    """Write rendered files into ``directory`` (created, mode 0700); never over an existing file.

    Raises:
        FileExistsError: a file is already there (a cluster directory is new for every run).
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    written = []
    for name, text in files.items():
        path = directory / name
        with open(path, "x") as handle:
            handle.write(text)
        if name.endswith(".sh"):
            os.chmod(path, 0o700)
        written.append(path)
    return written
