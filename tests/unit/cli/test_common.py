"""Tests of launcher/cli/common.py."""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.cli.common import reports_errors
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


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGTERM, 130, "stopped by SIGTERM;"),
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
