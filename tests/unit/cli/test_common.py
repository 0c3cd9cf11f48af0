"""Tests of launcher/cli/common.py."""

from __future__ import annotations

import errno
import io
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.cli.common import make_console, reports_errors
from launcher.lifecycle.signals import Interrupted

# -- issue 25 item 4, folded from tests/unit/test_lost_filesystem.py: The shared filesystem gone in the middle
# of a run (issue 25 item 4), the parts that need no daemons: what tells that a mount is gone (``ENOTCONN``,
# ``ECONNABORTED``), the one line that says so, and the run's final record kept on the node.
# tests/integration/test_lost_filesystem.py kills the OrangeFS stand-in's client under a running cluster.


def test_a_command_meeting_a_mount_that_is_gone_says_so_in_one_line(statvfs_gone: Callable[[str], None],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``status``, ``logs``... of a cluster whose directory was on the lost filesystem: one line, no traceback.
    Issue 25 item 4 (was ``tests/unit/test_lost_filesystem.py``)."""
    root = Path(os.getcwd()).anchor
    statvfs_gone(root)  # the mount of any absolute path

    @reports_errors
    def command() -> None:
        raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), f"{root}ofs/me/hpc-hadoop/c1/run.json")

    with pytest.raises(SystemExit) as exited:
        command()
    assert exited.value.code == 1
    assert capsys.readouterr().err == (f"error: the shared filesystem at {root} is gone (ENOTCONN: Transport "
                                       "endpoint is not connected)\n")

    @reports_errors
    def bug() -> None:
        raise OSError(errno.EACCES, "Permission denied", "/x")

    with pytest.raises(OSError, match="Permission denied"):  # our own bugs keep their traceback
        bug()

    @reports_errors
    def refused() -> None:  # issue 37 item 4: the cluster directory's filesystem answers, but refuses
        raise OSError(errno.EACCES, "Permission denied", "/ofs/me/hpc-hadoop/c1/krb/services.keytab")

    with pytest.raises(SystemExit) as exited:
        refused()
    assert exited.value.code == 1
    assert capsys.readouterr().err == "error: /ofs/me/hpc-hadoop/c1/krb/services.keytab: EACCES (Permission denied)\n"


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGTERM, 143, "stopped by SIGTERM;"),
                                                      (signal.SIGINT, 130, "stopped by SIGINT;"),
                                                      (signal.SIGUSR1, 124, "stopped by SIGUSR1 (walltime warning);")])
def test_a_signal_that_ended_a_commands_own_cluster_is_one_line(capsys: pytest.CaptureFixture[str], signum: int,
                                                                code: int, said: str) -> None:
    """Issue 28 item 8: ``hpc-hadoop bench run`` stopped by SIGTERM during bring-up tore down correctly but printed
    ``launcher.runner.Interrupted: SIGTERM`` with a traceback; now one line and run.json's exit code."""

    @reports_errors
    def bench() -> None:
        raise Interrupted(signum)  # what ClusterRun re-raises once its teardown is done

    with pytest.raises(SystemExit) as exit_info:
        bench()
    assert exit_info.value.code == code
    err = capsys.readouterr().err
    assert err == f"error: {said} the cluster was torn down\n"


# -- issue 28 item 2: a batch log (stdout not a terminal) is not wrapped at 80 columns: paths stay whole.


def test_a_console_that_is_not_a_terminal_neither_wraps_nor_crops() -> None:
    """Issue 28 item 2: rich wrapped at 80 columns when stdout was not a terminal, splitting the run directory line
    and any long path; a table is not cropped either. On a terminal, rich's own wrapping stays."""
    from rich.table import Table

    path = "/scratch/user/hpc-hadoop/" + "a-rather-long-directory-name/" * 8 + "wordcount-20261127-111000-abcd"
    out = io.StringIO()
    batch = make_console(file=out)
    assert not batch.is_terminal
    batch.print(f"run directory: {path}  (run.json, logs/, steps/, history/)")
    table = Table(title="wordcount: succeeded")
    table.add_column("step")
    table.add_column("application")
    table.add_row("a-step-with-a-long-name-" * 3, "application_1795775030773_0001")
    batch.print(table)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"run directory: {path}  (run.json, logs/, steps/, history/)", lines
    assert any("a-step-with-a-long-name-" * 3 in line and "application_1795775030773_0001" in line
               for line in lines), lines
    terminal_out = io.StringIO()
    terminal = make_console(file=terminal_out, force_terminal=True, width=80)
    terminal.print(f"run directory: {path}")
    assert len(terminal_out.getvalue().splitlines()) > 1  # a terminal wraps as before
