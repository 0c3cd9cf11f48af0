"""Port blocks in tests: real sockets on chosen ports (:func:`listening`), the blocks of this host's range
(:func:`every_base`, :func:`eligible`, :func:`binds`), and a test's body run in a network namespace of its own
(:func:`in_own_network`), so that it can take every port block of the host's range.

A test that fills the range (a socket in each of the ~700 port blocks) in the host's namespace would, while it runs,
stop every cluster that starts on this machine (the Hadoop tests running beside the unit tests): in a namespace of
its own (``unshare(CLONE_NEWNET)``: only a loopback interface, down) its sockets block nobody, and no other process's
socket changes what it sees, so the test can say exactly which blocks are free. The sockets are real; the kernel's
``/proc/net/tcp*`` of that namespace lists them. Root only (``CAP_SYS_ADMIN``).
"""

from __future__ import annotations

import ctypes
import os
import pickle
import socket
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from launcher.plan.cluster_plan import HADOOP_DEFAULT_PORTS, PORT_BLOCK, port_range

#: ``CLONE_NEWNET`` of ``<sched.h>`` (Python 3.11's ``os`` has no ``unshare``).
CLONE_NEWNET = 0x40000000

T = TypeVar("T")


def in_own_network(body: Callable[[], T]) -> T:
    """``body()`` run in a forked child in a new network namespace; its result (or exception) pickled back.

    Only the child is in the namespace: processes it starts (``TestUser.popen``) are in it too, the test process is
    not. Skips the test when not root.

    Raises:
        whatever ``body`` raised (as a ``RuntimeError`` with its traceback when it cannot be pickled).
    """
    assert os.geteuid() == 0, "a network namespace of its own needs root (the suite runs as root, as CI does)"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            os.close(read)
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
            outcome: tuple[str, object] = ("value", body())
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the test
            told = traceback.format_exc()
            exc.add_note("in the child, in its own network namespace:\n" + told)
            outcome = ("error", exc)
        try:
            data = pickle.dumps(outcome)
        except Exception:  # noqa: BLE001 - pytest's own outcomes (Failed, Skipped) do not pickle
            data = pickle.dumps(("error", RuntimeError("in the child, in its own network namespace:\n" + told)))
        with os.fdopen(write, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        data = source.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]


def every_base() -> list[int]:
    """The base of every block of this host's range (:func:`launcher.plan.cluster_plan.port_range`)."""
    first, end = port_range()
    return [first + slot * PORT_BLOCK for slot in range((end - first) // PORT_BLOCK)]


def eligible(bases: list[int]) -> list[int]:
    """``bases`` without the blocks that hold one of Hadoop's default ports (never chosen)."""
    return [b for b in bases if not any(b <= p < b + PORT_BLOCK for p in HADOOP_DEFAULT_PORTS)]


def binds(port: int) -> bool:
    """Whether ``0.0.0.0:port`` binds now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


@contextmanager
def listening(ports: Iterable[int], *, listen: bool = True) -> Iterator[list[socket.socket]]:
    """Sockets of this process bound to ``0.0.0.0`` on each of ``ports`` (listening unless ``listen`` is false),
    closed on leaving; a port some other process holds already is left to it (busy either way)."""
    socks = []
    try:
        for port in ports:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
            if listen:
                sock.listen()
        yield socks
    finally:
        for sock in socks:
            sock.close()
