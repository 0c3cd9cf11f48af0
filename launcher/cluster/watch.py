"""Reads of the shared filesystem that a live cluster needs every second, made on a thread of their own.

On a parallel filesystem that stalls (a Lustre OSS failing over, GlusterFS bricks that stop answering), every
read and write of the mount blocks in the kernel, and no signal ends it: a FUSE request that its server has
taken waits uninterruptibly until it is answered (Linux ``fs/fuse/dev.c``, ``request_wait_answer``), and a
Lustre client waits for recovery (``obd_timeout``, 100 s by default, and more). A launcher whose own thread
read ``agents/<node>.json`` once a second would stop in the middle of a read: no walltime deadline, no
walltime warning and no ``hpc-hadoop stop`` would reach it until the filesystem answered again.

:class:`FilesystemWatch` makes those reads (the free space, the agents' state files, the stop request) one
after another on a daemon thread and keeps the last answer of each; the launcher's thread reads the answers,
never the mount. A read that has not answered after :data:`STALL_SECONDS` is a stall, reported with the path it
reads (:meth:`FilesystemWatch.stall`) and kept, with its length, once the filesystem answers again
(:attr:`FilesystemWatch.stalls`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: Seconds one read (a ``statfs``, a directory listing, a file of a few KiB) may go unanswered before it is
#: reported as a stall: far beyond a busy parallel filesystem's slow metadata operation (a second or two), and
#: well within the 42 s after which a GlusterFS client gives up on a server (``network.ping-timeout``) and the
#: 100 s of Lustre's ``obd_timeout``, so that the report comes while the stall lasts.
STALL_SECONDS = 15.0
#: Seconds between two rounds of reads (the launcher's health check runs once a second).
INTERVAL_SECONDS = 1.0


@dataclass
class Stall:
    """A read of the shared filesystem that went unanswered for at least :data:`STALL_SECONDS`.

    Attributes:
        path: what the read touched (a directory or file of the cluster directory, or the filesystem root).
        began: epoch seconds when the read began.
        seconds: how long it has gone unanswered (while ``ongoing``), or went unanswered in all.
        ongoing: the read has not answered yet.
    """

    path: str
    began: float
    seconds: float
    ongoing: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The form kept in ``run.json`` (``stalls``)."""
        return asdict(self)

    def describe(self) -> str:
        """One line for the terminal and the run report."""
        when = time.strftime("%H:%M:%S", time.localtime(self.began))
        if self.ongoing:
            return (f"the shared filesystem is not answering: a read of {self.path} has waited {self.seconds:.0f} s "
                    f"(since {when}); the cluster's processes that use it wait too")
        return f"the shared filesystem stalled for {self.seconds:.0f} s from {when} (a read of {self.path})"


@dataclass
class _Read:
    path: Path
    read: Callable[[], Any]
    value: Any = None
    answered: float | None = None  # monotonic seconds of the last answer


class FilesystemWatch:
    """The last answers of a few reads of the shared filesystem, refreshed every ``interval`` seconds on a daemon
    thread (see the module docstring).

    Args:
        interval: seconds between rounds of reads.
        stall_after: seconds after which an unanswered read is a stall (:data:`STALL_SECONDS`).

    Usage::

        watch = FilesystemWatch()
        watch.add("free", root, lambda: free_bytes(root))
        watch.start()
        watch.get("free")        # the last answer (None before the first); never touches the filesystem
        watch.stall()            # a Stall while a read has waited stall_after seconds or more, else None
        watch.close()
        watch.stalls             # every stall seen, with its length
    """

    def __init__(self, *, interval: float = INTERVAL_SECONDS, stall_after: float = STALL_SECONDS) -> None:
        self.interval = interval
        self.stall_after = stall_after
        self.stalls: list[Stall] = []
        self._reads: dict[str, _Read] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._doing: tuple[str, float, float] | None = None  # (path, epoch began, monotonic began)
        self._stall: Stall | None = None  # the stall of the read in progress, once it is one
        self._thread: threading.Thread | None = None

    def add(self, name: str, path: Path | str, read: Callable[[], Any]) -> None:
        """Make ``read`` (which touches ``path``) each round from now on; an ``OSError`` it raises is its answer."""
        with self._lock:
            self._reads[name] = _Read(Path(path), read)

    def start(self) -> None:
        """Start the thread (once); the first round begins at once."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="filesystem-watch", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop after the read in progress (returns at once: a stalled read keeps its daemon thread until it
        answers); an ongoing stall is kept in :attr:`stalls` with its length so far."""
        self._closed.set()
        self.stall()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`close`."""
        return self._thread is not None and not self._closed.is_set()

    def get(self, name: str, default: Any = None) -> Any:
        """The last answer of the read ``name`` (an ``OSError`` it raised is returned, not raised), or
        ``default`` before its first answer. Never touches the filesystem."""
        with self._lock:
            entry = self._reads.get(name)
            return default if entry is None or entry.answered is None else entry.value

    def failed_with(self, errnos: frozenset[int]) -> OSError | None:
        """The ``OSError`` a read last answered whose ``errno`` is one of ``errnos`` (e.g. the mount is gone:
        :data:`launcher.filesystems.GONE_ERRNOS`), or ``None``. Never touches the filesystem."""
        with self._lock:
            for entry in self._reads.values():
                if entry.answered is not None and isinstance(entry.value, OSError) and entry.value.errno in errnos:
                    return entry.value
        return None

    def stall(self) -> Stall | None:
        """The stall in progress (a read unanswered for :attr:`stall_after` seconds or more), or ``None``.
        A new one is added to :attr:`stalls`; its ``seconds`` grow until it answers."""
        with self._lock:
            if self._doing is None:
                return None
            path, began, started = self._doing
            waited = time.monotonic() - started
            if waited < self.stall_after:
                return None
            if self._stall is None:
                self._stall = Stall(path, began, waited)
                self.stalls.append(self._stall)
            self._stall.seconds = waited
            return self._stall

    def _loop(self) -> None:
        while not self._closed.is_set():
            with self._lock:
                reads = list(self._reads.values())
            for entry in reads:
                with self._lock:
                    self._doing = (str(entry.path), time.time(), time.monotonic())
                try:
                    value = entry.read()
                except OSError as err:
                    value = err
                with self._lock:
                    if self._stall is not None:
                        self._stall.seconds = time.monotonic() - self._doing[2]
                        self._stall.ongoing = False
                        self._stall = None
                    self._doing = None
                    entry.value, entry.answered = value, time.monotonic()
            self._closed.wait(self.interval)
