"""What the ``hpc-hadoop`` commands share: the terminal, one-line errors, the job-file options, loading."""

from __future__ import annotations

import errno
import functools
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from launcher.lifecycle.signals import Interrupted
from launcher.schedulers import SCHEDULERS
from launcher.util.errors import HpcHadoopError
from launcher.util.states import exit_code_of, signal_state

if TYPE_CHECKING:  # the job-file model (pydantic) is imported by the commands that load one, not by `--help`
    from launcher.config.spec import JobSpec

F = TypeVar("F", bound=Callable[..., Any])

#: Columns a console that is not a terminal lays tables out in: wide enough that no table is cropped.
BATCH_WIDTH = 1000


def make_console(**options: Any) -> Console:
    """A rich console (``options``: :class:`rich.console.Console`'s) that, when it does not write to a terminal (a
    batch job's output file, a pipe), neither wraps nor crops: rich's ``soft_wrap`` (one line per print, paths
    whole, greppable) and :data:`BATCH_WIDTH` columns (rich's 80 otherwise, which splits a path over lines). On a
    terminal it is rich's own."""
    made = Console(highlight=False, **options)
    if not made.is_terminal:
        made.soft_wrap = True
        made.width = BATCH_WIDTH
    return made


console = make_console()


def reports_errors(func: F) -> F:
    """Turn :class:`HpcHadoopError` into one line on stderr and its exit code (no traceback); so too an ``OSError``
    that says a filesystem is gone (``ENOTCONN``...: :func:`lost_mount`), e.g. ``status`` of a cluster whose
    directory was on it, any other ``OSError`` on a file of a cluster directory (:func:`in_our_directories`: the file
    and the errno, exit 1), and a signal that
    ended a cluster the command ran itself
    (:class:`~launcher.lifecycle.signals.Interrupted`: the exit code of the state it ended the run in, as ``run.json``:
    124 the walltime warning, 130 SIGINT, 143 SIGTERM or SIGHUP; :data:`launcher.util.states.EXIT_CODES`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except HpcHadoopError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except Interrupted as exc:  # a signal ended a cluster that a command (bench) ran itself: torn down by now
            warning = exc.signum == signal.SIGUSR1
            click.echo(f"error: stopped by {exc.args[0]}" + (" (walltime warning)" if warning else "")
                       + "; the cluster was torn down", err=True)
            sys.exit(exit_code_of(signal_state(exc.signum)))  # as run.json's exit_code
        except OSError as exc:
            lost = lost_mount(exc)
            if lost is not None:
                click.echo(f"error: {lost}", err=True)
                sys.exit(lost.exit_code)
            if not exc.filename or not in_our_directories(os.fsdecode(exc.filename)):
                raise  # our own bug: its traceback
            # The cluster directory's filesystem answers but refuses (EACCES, EIO, ESTALE, ENOSPC, EROFS...; issue 37
            # item 4): one line.
            code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
            click.echo(f"error: {os.fsdecode(exc.filename)}: {code} ({exc.strerror or exc})", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


def in_our_directories(path: str) -> bool:
    """True if ``path`` is in a cluster directory (``<root>/<user>/hpc-hadoop/...``) or a per-user directory of ours
    (``hpc-hadoop-<user>`` in ``/var/tmp``, ``$TMPDIR``, a local dir): where a refused write is the filesystem's
    answer, not our bug."""
    parts = Path(path).parts
    return "hpc-hadoop" in parts[:-1] or any(part.startswith("hpc-hadoop-") for part in parts[:-1])


def lost_mount(exc: OSError) -> HpcHadoopError | None:
    """The :class:`~launcher.util.errors.FilesystemLost` error of the mount holding ``exc.filename`` when ``exc`` came
    from it being gone (:func:`launcher.filesystems.gone`), else ``None``."""
    from launcher.filesystems import gone, gone_error
    from launcher.filesystems.detect import mount_entry

    told = gone_error(exc)
    if told is None or not told.filename:
        return None
    try:
        entry = mount_entry(Path(os.fsdecode(told.filename)))
    except OSError:
        return None
    return gone(entry.mount_point, told) if entry else None


#: ``-D key=value``: any Hadoop property, into the ``*-site.xml`` whose ``*-default.xml`` knows it.
define_option = click.option(
    "-D", "defines", multiple=True, metavar="KEY=VALUE",
    help="Set a Hadoop property, as Hadoop's -D: it goes into the *-site.xml that knows the key, e.g. "
         "-D mapreduce.job.reduces=8 (repeatable; wins over hadoop.properties).")


def warn_properties(spec: JobSpec, defines: tuple[str, ...] = ()) -> None:
    """Print a ``warning:`` line on stderr for each property name the runtime does not know (with the nearest and
    where it was given: ``defines`` are the ``-D`` options)."""
    from launcher.config.properties import property_warnings

    for line in property_warnings(spec, defines):
        click.echo(f"warning: {line}", err=True)


def job_options(func: F) -> F:
    """Options shared by commands that read a job file."""
    options = [
        click.argument("job_file", type=click.Path(dir_okay=False, path_type=Path)),
        click.option("--scheduler", type=click.Choice(list(SCHEDULERS)), help="Batch system."),
        click.option("--nodes", type=int, help="Number of nodes."),
        click.option("--walltime", help="Walltime: HH:MM:SS, D-HH:MM, 90m, 2h; a bare number is minutes."),
        click.option("--site", help="Site preset: the site's own or a shipped one (see `hpc-hadoop sites`)."),
        click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                     help="Override any job-file field, e.g. --set hadoop.map_memory=2g (repeatable)."),
        define_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def detect_scheduler() -> str | None:
    """The batch system whose allocation this process runs in, from its environment variables: the first registered
    backend whose :meth:`~launcher.schedulers.base.Scheduler.inside_allocation` holds (Slurm's ``SLURM_JOB_ID``, PBS's
    ``PBS_JOBID``, Grid Engine's ``JOB_ID`` and ``PE_HOSTFILE``)."""
    return next((name for name in SCHEDULERS if SCHEDULERS[name].inside_allocation()), None)


def load(job_file: Path, scheduler: str | None, nodes: int | None, walltime: str | None, site: str | None,
         sets: tuple[str, ...], *, require_steps: bool = True, defines: tuple[str, ...] = ()) -> JobSpec:
    """Resolve the job file with its layers, the CLI overrides, ``--set`` and ``-D``; warn about property names
    the runtime does not know (:func:`warn_properties`).

    Raises:
        UserError: see :func:`launcher.config.load.load_spec`.
    """
    from launcher.config.load import load_spec

    overrides = {"scheduler": scheduler, "nodes": nodes, "walltime": walltime, "site": site}
    spec, _ = load_spec(job_file, sets=list(sets), overrides=overrides, require_steps=require_steps,
                        defines=list(defines))
    warn_properties(spec, defines)
    return spec
