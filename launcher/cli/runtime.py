"""The ``runtime`` commands: ``hpc-hadoop runtime install|status [--prefix DIR | --site]``
(:mod:`launcher.runtime.install`): every part of a runtime prefix (the Hadoop runtime, Spark, our Spark examples jar,
the class-data-sharing archives), one line each.

A thin wrapper, as :mod:`launcher.cli.clusters` is for the interactive commands; imported only when the ``runtime``
command is asked for (:class:`launcher.cli.main.LazyGroup`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from launcher.cli.common import console, reports_errors

F = TypeVar("F", bound=Callable[..., Any])


@click.group()
def runtime() -> None:
    """The runtimes of an install from a wheel: Hadoop, Spark, the Spark examples jar, the class-data-sharing
    archives (a checkout's ./install.sh builds its own)."""


def _where(func: F) -> F:
    """The options naming the prefix and the parts: ``--prefix``, ``--site``, ``--no-spark``, ``--no-archives``."""
    for option in reversed((
        click.option("--prefix", type=click.Path(file_okay=False, path_type=Path),
                     help="Runtime prefix (PREFIX/hadoop, PREFIX/spark); default: the user prefix, "
                          "~/.local/share/hpc-hadoop/runtime. The launcher looks only in the user and the site prefix "
                          "(and hadoop.home, $HPC_HADOOP_HOME, spark.home, $SPARK_HOME): with another prefix, point "
                          "them at PREFIX/hadoop and PREFIX/spark/pyspark."),
        click.option("--site", is_flag=True, help="The site prefix, <venv>/share/hpc-hadoop/runtime: for every user "
                     "of this install (install it as the account that owns the install)."),
        click.option("--no-spark", is_flag=True, help="Leave out Spark and the Spark examples jar."),
        click.option("--no-archives", is_flag=True, help="Leave out the class-data-sharing archives."),
    )):
        func = option(func)
    return func


def _target(prefix: Path | None, site: bool, no_spark: bool, no_archives: bool) -> tuple[Path, str]:
    """The prefix, and the ``runtime install`` command that completes it (for the fixes).

    Raises:
        UserError: both ``--prefix`` and ``--site``.
    """
    from launcher.util.errors import UserError
    from launcher.util.resources import site_prefix, user_prefix

    if prefix is not None and site:
        raise UserError("--prefix and --site name two places", fix="give one of them")
    target = prefix.absolute() if prefix is not None else site_prefix() if site else user_prefix()
    where = f" --prefix {target}" if prefix is not None else " --site" if site else ""
    skips = (" --no-spark" if no_spark else "") + (" --no-archives" if no_archives else "")
    return target, f"hpc-hadoop runtime install{where}{skips}"


def _say(line: str) -> None:
    console.print(line, soft_wrap=True, markup=False)


@runtime.command("install")
@_where
@reports_errors
def runtime_install(prefix: Path | None, site: bool, no_spark: bool, no_archives: bool) -> None:
    """Put every part into a prefix: the pinned Hadoop runtime (mvn package, from Maven Central), Spark (pip, from
    PyPI), the Spark examples jar (javac), the class-data-sharing archives (a training run); a complete part is left
    as it is ("up to date"). Exit 1 when a part is missing at the end."""
    from launcher.runtime.install import incomplete, prefix_parts
    from launcher.runtime.staging import install_lock
    from launcher.util.resources import HADOOP_SUBDIR, site_prefix

    target, command = _target(prefix, site, no_spark, no_archives)
    if prefix is None and not site and (site_prefix() / HADOOP_SUBDIR).is_dir():
        click.echo(f"warning: the site prefix {site_prefix()} has a runtime; yours in {target} will be used instead of "
                   "it and its class-data-sharing archives (`hpc-hadoop runtime status --site` shows it)", err=True)
    with install_lock(target, say=_say):
        parts = prefix_parts(target, build=True, spark=not no_spark, archives=not no_archives, command=command,
                             say=_say)
    error = incomplete(target, parts)
    if error is not None:
        raise error


@runtime.command("status")
@_where
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the prefix, complete, and each part.")
@reports_errors
def runtime_status(prefix: Path | None, site: bool, no_spark: bool, no_archives: bool, as_json: bool) -> None:
    """Show every part of a prefix as `runtime install` would leave it, installing nothing. Exit 1 when a part is
    missing."""
    from launcher.runtime.install import incomplete, prefix_parts

    target, command = _target(prefix, site, no_spark, no_archives)
    parts = prefix_parts(target, build=False, spark=not no_spark, archives=not no_archives, command=command,
                         say=(lambda line: None) if as_json else _say)
    error = incomplete(target, parts)
    if as_json:
        click.echo(json.dumps({"prefix": str(target), "complete": error is None,
                               "parts": [part.to_dict() for part in parts]}, indent=2))
    if error is not None:
        raise error


@runtime.command("module")
@click.option("--site-dir", type=click.Path(file_okay=False, path_type=Path),
              help="The site layer the module names in HPC_HADOOP_SITE_DIR (default: none, /etc/hpc-hadoop is read).")
@click.option("--java-home", type=click.Path(file_okay=False, path_type=Path),
              help="A JDK for JAVA_HOME, where the site has no Java module.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write it here (mode 0644).")
@click.option("--force", is_flag=True, help="Replace the --output file if it exists.")
@reports_errors
def runtime_module(site_dir: Path | None, java_home: Path | None, output: Path | None, force: bool) -> None:
    """An Lmod module file (Lua) for this install, on stdout or into --output (launcher/runtime/modulefile.py)."""
    from launcher.runtime.modulefile import render, write

    text = render(site_dir=site_dir, java_home=java_home)
    if output is None:
        click.echo(text, nl=False)
    else:
        write(text, output, force=force)
        console.print(f"module file written: {output}", soft_wrap=True)
