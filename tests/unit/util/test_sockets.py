"""The reader of ``/proc/net/tcp{,6}``'s listening sockets (launcher/util/sockets.py), on real sockets: the test
process's own and another user's (``hhmallory``, tests/users.py: the suite runs as root in CI)."""

from __future__ import annotations

import os
import pwd
import socket
from collections.abc import Iterator

import pytest

from launcher.util.sockets import ListenEntry, listeners, socket_inodes, user_name
from tests.users import make_user

#: Another user's listener: binds ``127.0.0.1`` on a port the kernel picks, prints it, waits.
HER_LISTENER = ("import socket, time\n"
                "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                "print(s.getsockname()[1], flush=True)\n"
                "time.sleep(120)\n")


def inode(sock: socket.socket) -> int:
    return os.fstat(sock.fileno()).st_ino


def test_a_listener_on_loopback_is_listed_with_our_uid_its_port_and_its_inode() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert listeners(port) == [ListenEntry("127.0.0.1", port, os.getuid(), inode(sock))]
        assert ListenEntry("127.0.0.1", port, os.getuid(), inode(sock)) in listeners()
        assert inode(sock) in socket_inodes(os.getpid())
        assert listeners(port, net=f"/proc/{os.getpid()}/net") == listeners(port)
    assert listeners(port) == []


def test_a_listener_on_every_ipv6_interface_is_listed_from_tcp6() -> None:
    assert socket.has_ipv6 and os.path.exists("/proc/net/tcp6"), "this machine (Debian 12) has IPv6"
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
        sock.bind(("::", 0))
        sock.listen()
        port = sock.getsockname()[1]
        [entry] = listeners(port)
        assert entry == ListenEntry("::", port, os.getuid(), inode(sock))
        assert entry.user == user_name(os.getuid())


@pytest.fixture
def connected() -> Iterator[tuple[socket.socket, socket.socket, socket.socket]]:
    """A listener on 127.0.0.1, a client connected to it and the accepted end."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            accepted, _ = server.accept()
            with accepted:
                yield server, client, accepted


def test_sockets_that_do_not_listen_are_not_listed(
        connected: tuple[socket.socket, socket.socket, socket.socket]) -> None:
    """A bound socket that does not listen, a connection's two ends: none is a listener (states 07, 01, not 0A),
    and the accepted connection on the listener's port does not hide or double it."""
    server, client, _ = connected
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        assert listeners(bound.getsockname()[1]) == []
    assert listeners(client.getsockname()[1]) == []
    assert [entry.inode for entry in listeners(server.getsockname()[1])] == [inode(server)]


def test_listeners_made_after_many_connections_are_found(
        connected: tuple[socket.socket, socket.socket, socket.socket]) -> None:
    """The reader stops at the first line after the listeners (the kernel prints them first): a listener made after
    200 connections, IPv4 and IPv6, is still found, and so is every listener of the test."""
    server, _, _ = connected
    clients, accepted = [], []
    try:
        for _ in range(200):
            clients.append(socket.create_connection(server.getsockname(), timeout=5))
            accepted.append(server.accept()[0])
        with socket.socket() as late4, socket.socket(socket.AF_INET6) as late6:
            late4.bind(("127.0.0.1", 0))
            late4.listen()
            late6.bind(("::1", 0))
            late6.listen()
            for sock in (server, late4, late6):
                assert [e.inode for e in listeners(sock.getsockname()[1])] == [inode(sock)]
            assert {inode(server), inode(late4), inode(late6)} <= {e.inode for e in listeners()}
    finally:
        for sock in clients + accepted:
            sock.close()


def test_another_users_listener_is_listed_with_her_uid() -> None:
    """What the refusal of a busy port and the credential check read: the uid of the socket's owner, also for a
    socket of another user, whose process only root could look into."""
    assert os.geteuid() == 0, "making the user hhmallory and running as her needs root (the suite runs as root)"
    mallory = make_user("hhmallory")
    her = mallory.popen(["/usr/bin/python3", "-c", HER_LISTENER])
    try:
        assert her.stdout is not None
        port = int(her.stdout.readline())
        [entry] = listeners(port)
        assert (entry.address, entry.port, entry.uid) == ("127.0.0.1", port, mallory.uid)
        assert entry.user == f"hhmallory (uid {mallory.uid})"
        assert entry.inode in socket_inodes(her.pid) and entry.inode not in socket_inodes(os.getpid())
        assert listeners(port, net=f"/proc/{her.pid}/net") == [entry]
    finally:
        her.kill()
        her.wait()


def test_a_uid_without_a_name_is_shown_as_a_number() -> None:
    unknown = next(uid for uid in range(4_000_000, 4_100_000) if not _named(uid))
    assert user_name(unknown) == f"uid {unknown}"
    assert user_name(0) == "root (uid 0)"


def _named(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True
