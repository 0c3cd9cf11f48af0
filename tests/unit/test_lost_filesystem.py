"""The shared filesystem gone in the middle of a run (issue 25 item 4), the parts that need no daemons: what tells
that a mount is gone (``ENOTCONN``, ``ECONNABORTED``), the one line that says so, and the run's final record kept on
the node. tests/integration/test_lost_filesystem.py kills the OrangeFS stand-in's client under a running cluster.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from launcher import filesystems
from launcher.cli.common import reports_errors
from launcher.cluster.watch import FilesystemWatch
from launcher.filesystems import gone, gone_error
from launcher.lifecycle import report
from launcher.lifecycle.report import RunReport
from launcher.util.errors import FilesystemLost

ENOTCONN = OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), "/mnt/ofs/me/hpc-hadoop/c1/run.json")


def statvfs_gone(monkeypatch: pytest.MonkeyPatch, mount: str) -> None:
    """``statvfs`` of ``mount`` fails as on a FUSE mount whose client died; any other path answers."""
    real = os.statvfs

    def statvfs(path: str | Path) -> os.statvfs_result:
        if str(path) == mount:
            raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), str(path))
        return real(path)

    monkeypatch.setattr(filesystems.os, "statvfs", statvfs)


def test_a_mount_is_gone_when_its_error_and_the_mount_point_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        try:
            raise ENOTCONN
        except OSError:
            raise RuntimeError("while writing run.json") from None  # noqa: TRY301
    except RuntimeError as exc:
        wrapped: BaseException = exc
    assert gone_error(wrapped) is ENOTCONN  # the context kept by `from None` is searched too
    assert gone_error(OSError(errno.ENOSPC, "No space left on device")) is None
    assert gone("/mnt/ofs") is None  # not a mount here: statvfs fails with ENOENT, which is not "gone"
    statvfs_gone(monkeypatch, "/mnt/ofs")
    lost = gone("/mnt/ofs", ENOTCONN, "during step 1 (wordcount)")
    assert isinstance(lost, FilesystemLost)
    assert str(lost) == ("the shared filesystem at /mnt/ofs is gone (ENOTCONN: Transport endpoint is not connected) "
                         "during step 1 (wordcount)")
    assert lost.to_dict() == {"mount": "/mnt/ofs", "errno": "ENOTCONN",
                              "strerror": "Transport endpoint is not connected"}
    assert gone("/mnt/ofs", OSError(errno.ENOSPC, "full")) is None  # the error must say so too
    assert gone(os.getcwd(), ENOTCONN) is None  # ... and the mount point (a socket's ENOTCONN is not the mount's)


def test_the_watch_tells_a_read_that_found_the_mount_gone(tmp_path: Path) -> None:
    watch = FilesystemWatch(interval=0.01)

    def lost() -> None:
        raise OSError(errno.ENOTCONN, "Transport endpoint is not connected", str(tmp_path))

    watch.add("fine", tmp_path, lambda: 1)
    watch.add("missing", tmp_path / "x", (tmp_path / "x").read_text)
    assert watch.failed_with(filesystems.GONE_ERRNOS) is None
    watch.start()
    try:
        watch.add("lost", tmp_path, lost)
        for _ in range(500):
            if watch.failed_with(filesystems.GONE_ERRNOS) is not None:
                break
            watch._closed.wait(0.01)
        found = watch.failed_with(filesystems.GONE_ERRNOS)
        assert found is not None and found.errno == errno.ENOTCONN
        assert watch.failed_with(frozenset({errno.ENOSPC})) is None  # the missing file's ENOENT is not asked for
    finally:
        watch.close()


def test_the_record_is_kept_on_the_node_where_it_can_be(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first place that is this user's private directory takes it (not a symbolic link someone else made)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "var-tmp").mkdir()
    (tmp_path / "var-tmp" / "hpc-hadoop-me").symlink_to(elsewhere)
    places = [tmp_path / "var-tmp" / "hpc-hadoop-me" / "c1.run.json",
              tmp_path / "tmp" / "hpc-hadoop-me" / "c1.run.json"]
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(report, "local_record_paths", lambda cluster_id: places)
    record = RunReport(cluster_id="c1", name="wc", run_dir="/mnt/ofs/me/hpc-hadoop/c1", scheduler="local", job_id=None,
                       nodes=["n1"], state="failed", error="the shared filesystem at /mnt/ofs is gone (ENOTCONN: ...)")
    assert record.keep_locally() == places[1]
    assert record.error == (f"the shared filesystem at /mnt/ofs is gone (ENOTCONN: ...); final record kept at "
                            f"{places[1]} (the cluster directory cannot be written)")
    kept = json.loads(places[1].read_text())
    assert kept["kept_at"] == str(places[1]) and kept["error"] == record.error and kept["state"] == "failed"
    assert places[1].parent.stat().st_mode & 0o777 == 0o700 and list(elsewhere.iterdir()) == []
    monkeypatch.setattr(report, "local_record_paths", lambda cluster_id: [places[0]])
    record.error = "gone"
    assert record.keep_locally() is None and record.kept_at is None
    assert record.error == ("gone; no final record kept (the cluster directory cannot be written, nor "
                            f"{places[0].parent})")


def test_a_command_meeting_a_mount_that_is_gone_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``status``, ``logs``... of a cluster whose directory was on the lost filesystem: one line, no traceback."""
    root = Path(os.getcwd()).anchor
    statvfs_gone(monkeypatch, root)  # the mount of any absolute path

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
