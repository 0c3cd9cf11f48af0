"""Error types of hpc-hadoop.

Every error a user can fix is a :class:`UserError`: the CLI prints it as one line and exits with code 2,
without a traceback. Failures of the cluster (a daemon that died, a bring-up timeout) are
:class:`ClusterError` (exit code 1) and name the log to read. Our own bugs keep their traceback.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence


class HpcHadoopError(Exception):
    """Base class of the errors the CLI reports as one line.

    Attributes:
        exit_code: process exit code the CLI uses for this error (int).
    """

    exit_code: int = 1


class UserError(HpcHadoopError):
    """Bad input: a job file, a flag, an environment the user controls.

    Args:
        message: what is wrong, e.g. ``"'lots' is not a size"``.
        file: the file the bad value came from (job file, preset, ``--set``), if any.
        field: the dotted field name, e.g. ``hadoop.map_memory``.
        fix: what to do about it, e.g. ``"use a number with a unit: 2g, 512m"``.
    """

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None,
                 fix: str | None = None) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class ClusterError(HpcHadoopError):
    """The Hadoop cluster could not be brought up or kept running.

    Args:
        message: what happened; should name the daemon log file to read.
    """

    exit_code = 1


class FilesystemLost(HpcHadoopError):
    """The shared filesystem under the cluster directory is gone: its mount answers every call with ``ENOTCONN``
    (``Transport endpoint is not connected``: a FUSE client such as OrangeFS's ``pvfs2fuse`` that died, the kernel
    then aborts the connection) or ``ECONNABORTED`` (``Software caused connection abort``). Nothing on it can be read
    or written again until it is mounted again (:func:`launcher.filesystems.gone`).

    Args:
        mount: the mount point.
        error: the ``OSError`` that told (its ``errno`` names the errno; its ``strerror`` the C library's words).
        when: what was running (``during step 1 (wordcount)``), or ``""``.
    """

    exit_code = 1

    def __init__(self, mount: str, error: OSError, when: str = "") -> None:
        self.mount = mount
        self.errno_name = errno.errorcode.get(error.errno or 0, str(error.errno))
        self.strerror = error.strerror or os.strerror(error.errno or 0)
        self.when = when
        super().__init__(f"the shared filesystem at {mount} is gone ({self.errno_name}: {self.strerror})"
                         + (f" {when}" if when else ""))

    def to_dict(self) -> dict[str, str]:
        """What ``run.json`` keeps (``lost_filesystem``): ``mount``, ``errno`` (its name) and ``strerror``."""
        return {"mount": self.mount, "errno": self.errno_name, "strerror": self.strerror}


class WalltimeExpired(Exception):
    """The allocation's walltime is nearly over: the deadline (walltime end minus
    :func:`launcher.schedulers.base.teardown_lead`, epoch seconds) has passed, so the run stops its step and
    tears the cluster down (report state ``timed_out``, exit code 124).

    Our own class, not the built-in ``TimeoutError``: ``OSError(errno.ETIMEDOUT)`` (a stalled mount, a
    socket) is a ``TimeoutError`` too and must not be reported as the end of the walltime.

    Args:
        deadline: the deadline that passed, epoch seconds (``None`` if unknown).
    """

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline
        super().__init__("walltime nearly over")


class StopRequested(Exception):
    """``hpc-hadoop stop`` asked the run to end (the file ``stop-requested`` appeared in its cluster directory)
    during bring-up or a step: the run stops the step and tears the cluster down itself, before anything asks the
    batch system to cancel the job (report state ``cancelled``, exit code 143; a held cluster stopped after its
    steps ends ``stopped``, exit code 0: :data:`launcher.util.states.EXIT_CODES`).

    Args:
        when: what was running (``during step 1 (wordcount)``).
    """

    def __init__(self, when: str) -> None:
        self.when = when
        super().__init__(f"stopped by `hpc-hadoop stop` {when}")


class CommandError(HpcHadoopError):
    """An external command (``sbatch``, ``lfs``, ``java``...) failed.

    Args:
        argv: the command line that ran.
        returncode: its exit code.
        stdout: its standard output (only the tail is shown).
        stderr: its standard error (only the tail is shown).
        hint: what the user can do about it, if we know.
    """

    exit_code = 1

    def __init__(self, argv: list[str], returncode: int, stdout: str = "", stderr: str = "",
                 hint: str | None = None) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = command_failure(self.argv, self.returncode, self.stdout, self.stderr)
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


def command_failure(argv: Sequence[str], returncode: int, stdout: str = "", stderr: str = "") -> str:
    """One line saying how a command failed: `` `ARGV` exited with CODE: TAIL`` (its output's last 3 lines, standard
    error else standard output, joined by ``|``), as :class:`CommandError` and
    :class:`launcher.schedulers.base.NoAnswer` say it."""
    tail = (stderr.strip() or stdout.strip()).splitlines()[-3:]
    text = f"`{' '.join(argv)}` exited with {returncode}"
    if tail:
        text += ": " + " | ".join(tail)
    return text
