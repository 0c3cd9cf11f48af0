"""The reads a live cluster makes of the shared filesystem, off the launcher's thread (launcher/cluster/watch.py), the
agent's state file written off its loop (launcher/node/agent.py StatusWriter) and progress lines written off the
run's thread (launcher/lifecycle/progress.py).

A stalled read is stood in for by a read that waits on an event: a real stall (GlusterFS bricks stopped with
SIGSTOP) is tested in tests/integration/test_faults.py.
"""

from __future__ import annotations

import errno
import io
import json
import threading
import time
from pathlib import Path

from rich.console import Console

from launcher import filesystems
from launcher.cluster.watch import FilesystemWatch
from launcher.lifecycle.progress import ConsoleObserver
from launcher.node.agent import StatusWriter


def wait_until(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_answers_are_kept_and_an_oserror_is_an_answer(tmp_path: Path) -> None:
    watch = FilesystemWatch(interval=0.01)
    (tmp_path / "x").write_text("one")
    watch.add("text", tmp_path / "x", (tmp_path / "x").read_text)
    watch.add("missing", tmp_path / "y", (tmp_path / "y").read_text)
    assert watch.get("text", "none yet") == "none yet" and not watch.running
    watch.start()
    try:
        assert wait_until(lambda: watch.get("text") == "one")
        (tmp_path / "x").write_text("two")
        assert wait_until(lambda: watch.get("text") == "two")
        assert isinstance(watch.get("missing"), FileNotFoundError)
        assert watch.stall() is None and watch.stalls == []
    finally:
        watch.close()
    assert not watch.running


def test_a_read_that_does_not_answer_is_a_stall_with_its_path_and_length() -> None:
    release = threading.Event()
    calls = []

    def stuck() -> int:
        calls.append(time.monotonic())
        if len(calls) == 2:
            release.wait()
        return len(calls)

    watch = FilesystemWatch(interval=0.01, stall_after=0.3)
    watch.add("count", "/mnt/pfs/run/agents", stuck)
    watch.start()
    try:
        assert wait_until(lambda: len(calls) == 2)
        assert watch.stall() is None  # not yet stall_after
        assert wait_until(lambda: watch.stall() is not None)
        stall = watch.stall()
        assert stall is not None and stall.path == "/mnt/pfs/run/agents" and stall.ongoing and stall.seconds >= 0.3
        assert watch.get("count") == 1  # the last answer, not a wait
        assert "not answering: a read of /mnt/pfs/run/agents" in stall.describe()
        assert watch.stall() is stall and len(watch.stalls) == 1  # one stall, however often asked
        time.sleep(0.2)
        release.set()
        assert wait_until(lambda: watch.get("count", 0) >= 3)
        assert watch.stall() is None
        assert not stall.ongoing and stall.seconds >= 0.5 and "stalled for" in stall.describe()
    finally:
        release.set()
        watch.close()
    assert [s.path for s in watch.stalls] == ["/mnt/pfs/run/agents"]


def test_close_during_a_stall_keeps_it_as_ongoing() -> None:
    release = threading.Event()
    watch = FilesystemWatch(interval=0.01, stall_after=0.1)
    watch.add("never", "/mnt/pfs/x", release.wait)
    watch.start()
    try:
        time.sleep(0.3)
        watch.close()  # returns at once although the read still waits
        assert [s.ongoing for s in watch.stalls] == [True] and watch.stalls[0].seconds >= 0.1
    finally:
        release.set()


def test_the_agent_state_file_gets_the_latest_text(tmp_path: Path) -> None:
    path = tmp_path / "n1.json"
    writer = StatusWriter(path, "n1")
    for number in range(50):
        writer.put(json.dumps({"n": number}))
    assert writer.flush(5.0)
    assert json.loads(path.read_text()) == {"n": 49}
    assert not list(tmp_path.glob("*.tmp*"))


def test_the_agent_state_file_write_that_fails_is_reported_not_raised(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    writer = StatusWriter(tmp_path / "gone" / "n1.json", "n1")
    writer.put("{}")
    assert writer.flush(5.0)
    assert "agent n1: cannot write" in capsys.readouterr().err


def test_progress_lines_are_written_by_their_own_thread_and_flushed_at_close() -> None:
    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, force_terminal=False, width=200))
    observer.phase("bring-up")
    observer.warn("the shared filesystem is not answering")
    observer.close()
    text = out.getvalue()
    assert "bring-up" in text and "warning: the shared filesystem is not answering" in text
    observer.phase("after close")
    assert "after close" in out.getvalue()


# -- issue 25 item 4, folded from tests/unit/test_lost_filesystem.py: The shared filesystem gone in the middle
# of a run (issue 25 item 4), the parts that need no daemons: what tells that a mount is gone (``ENOTCONN``,
# ``ECONNABORTED``), the one line that says so, and the run's final record kept on the node.
# tests/integration/test_lost_filesystem.py kills the OrangeFS stand-in's client under a running cluster.


def test_the_watch_tells_a_read_that_found_the_mount_gone(tmp_path: Path) -> None:
    """Issue 25 item 4 (was ``tests/unit/test_lost_filesystem.py``)."""
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
