"""The ``runtime`` commands: ``hpc-hadoop runtime install [--prefix DIR | --site]`` (:mod:`launcher.runtime.install`).

A thin wrapper, as :mod:`launcher.cli.clusters` is for the interactive commands; imported only when the ``runtime``
command is asked for (:class:`launcher.cli.main.LazyGroup`).
"""

from __future__ import annotations

from pathlib import Path

import click

from launcher.cli.common import console, reports_errors


@click.group()
def runtime() -> None:
    """The Hadoop runtime of an install from a wheel (a checkout's ./install.sh builds its own)."""


@runtime.command("install")
@click.option("--prefix", type=click.Path(file_okay=False, path_type=Path),
              help="Runtime prefix (the runtime goes to PREFIX/hadoop); default: the user prefix, "
                   "~/.local/share/hpc-hadoop/runtime. The launcher looks only in the user and the site prefix "
                   "(and hadoop.home, $HPC_HADOOP_HOME): with another prefix, point one of them at PREFIX/hadoop.")
@click.option("--site", is_flag=True, help="Into the site prefix, <venv>/share/hpc-hadoop/runtime: for every user "
              "of this install (run it as the account that owns the install).")
@reports_errors
def runtime_install(prefix: Path | None, site: bool) -> None:
    """Build the pinned Hadoop runtime with Maven (from Maven Central) into a prefix; a complete one is left
    as it is ("up to date")."""
    from launcher.runtime.install import install
    from launcher.util.errors import UserError
    from launcher.util.resources import site_prefix, user_prefix

    if prefix is not None and site:
        raise UserError("--prefix and --site name two places", fix="give one of them")
    target = prefix.absolute() if prefix is not None else site_prefix() if site else user_prefix()
    if prefix is None:
        console.print(f"building the Hadoop runtime into {target} (mvn package; the first run downloads ~100 MB)"
                      if not (target / "hadoop").is_dir() else f"checking the Hadoop runtime in {target}",
                      soft_wrap=True)
    result = install(target)
    state = "installed" if result.changed else "up to date"
    console.print(f"Hadoop {result.version} runtime in {result.home}: {state}", soft_wrap=True)


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
