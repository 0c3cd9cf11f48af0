"""The listening TCP sockets of this host as the kernel lists them in ``/proc/net/tcp`` and ``/proc/net/tcp6``: who
holds a port (its owner's uid) and which socket it is (its inode), for every user's sockets, without root.

psutil cannot say this: it finds a socket's owner through ``/proc/<pid>/fd``, which only root may read for another
user's processes. The ``uid`` column of ``/proc/net/tcp*`` is readable by everyone. Two uses:

* :func:`launcher.plan.cluster_plan.choose_ports`'s refusal names the user whose socket holds a busy port;
* before a credential goes to ``host:port`` on this node, the ``inode`` of the port's :func:`listeners` entry is
  looked for among the owner's daemon's own sockets (:func:`socket_inodes` of its pid): the socket is that daemon's,
  not one another user bound first (issue 36 item 1: she may bind any free port before our daemon does).

The format (``net/ipv4/tcp_ipv4.c`` ``get_tcp4_sock``, ``net/ipv6/tcp_ipv6.c`` ``get_tcp6_sock``), one socket a line
after a header line::

      sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
       0: 0100007F:3039 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 173108 1 ...

* ``local_address`` is ``ADDR:PORT``: ``ADDR`` the socket's bound address (``inet_rcv_saddr``) printed ``%08X`` as a
  32-bit word in the host's byte order (``127.0.0.1`` is ``0100007F`` on x86), in ``tcp6`` four such words
  (``s6_addr32[0..3]``, each in host byte order); ``PORT`` the port in hex (``%04X``, already in host order).
* ``st`` is the TCP state in hex: ``0A`` is ``TCP_LISTEN`` (``01`` established, ``06`` time-wait, ...).
* ``uid`` (the 8th field) is the socket's owner, ``sock_i_uid``: the fsuid of the process that created the socket,
  in the reader's user namespace (``from_kuid_munged``: 65534 when unmapped). It is not the process that holds it
  now, but another user cannot make it ours: changing it takes ``fchown`` of the socket, which needs ``CAP_CHOWN``.
* ``inode`` (the 10th field) is the socket's inode number, what ``/proc/<pid>/fd/N`` links to as ``socket:[INODE]``.

The files list the sockets of the reader's network namespace only (``/proc/net`` is ``/proc/self/net``); a process's
own namespace's are under ``/proc/<pid>/net`` (the ``net`` argument). ``tcp`` lists ``AF_INET`` sockets, ``tcp6``
``AF_INET6`` ones (a dual-stack listener on ``::`` takes the IPv4 port too, and is only in ``tcp6``).

Cheap enough to read at every readiness poll (every 0.2 s): only the listeners are read, which the kernel prints
first (:func:`_listening`). A call took 1.3 to 2.4 ms on a 2-core VM, with or without 3000 connections (a full read
of both files took 15 ms with them); what is left is the kernel's walk of its established hash table for a file
with no connection after its listeners. Standard library only.
"""

from __future__ import annotations

import os
import pwd
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

#: The files read, each with the address family its addresses are in.
TCP_FILES = (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6))

#: ``TCP_LISTEN`` and ``TCP_SYN_RECV`` (``include/net/tcp_states.h``) as ``/proc/net/tcp*``'s ``st`` column prints
#: them.
LISTEN_STATE = b"0A"
SYN_RECV_STATE = b"03"


@dataclass(frozen=True, order=True)
class ListenEntry:
    """One listening TCP socket of this host (its network namespace), from ``/proc/net/tcp`` or ``tcp6``.

    Attributes:
        address: the bound address as text: ``0.0.0.0`` or ``::`` for every interface, ``127.0.0.1``,
            ``::ffff:10.0.0.1`` (an IPv4-mapped address of an IPv6 socket), ...
        port: the port.
        uid: the socket's owner (the uid of the process that created it).
        inode: the socket's inode (``socket:[INODE]`` among the holder's ``/proc/<pid>/fd``).
    """

    address: str
    port: int
    uid: int
    inode: int

    @property
    def user(self) -> str:
        """The owner as ``name (uid N)``, or ``uid N`` when the uid has no name here."""
        return user_name(self.uid)


def user_name(uid: int) -> str:
    """``uid`` as ``name (uid N)``, or ``uid N`` when the password database has no entry for it."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _address(word: str, family: int) -> str:
    """``local_address``'s hex address (32-bit words in host byte order) as text."""
    raw = b"".join(int(word[i:i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(word), 8))
    return socket.inet_ntop(family, raw)


def listeners(port: int | None = None, *, net: str | Path = "/proc/net") -> list[ListenEntry]:
    """The listening TCP sockets (state ``0A``) on ``port`` (default: on every port), IPv4 and IPv6, of every user.

    Args:
        port: the local port; ``None``: all.
        net: the directory holding ``tcp`` and ``tcp6``: ``/proc/net`` (this process's network namespace) or
            ``/proc/<pid>/net`` (that process's).

    Returns:
        The entries, IPv4 ones first, in the kernel's order; a file that cannot be read (``tcp6`` on a host without
        IPv6) gives none.
    """
    wanted = None if port is None else f"{port:04X}".encode()
    found: list[ListenEntry] = []
    for name, family in TCP_FILES:
        try:
            found.extend(_listening(os.path.join(net, name), family, wanted))
        except OSError:
            continue
    return found


def _listening(path: str, family: int, port: bytes | None) -> list[ListenEntry]:
    """The LISTEN entries of one table (``port``: the local port as ``%04X``, or ``None`` for all).

    Reads only the listeners: the kernel prints the listening hash table before the established one
    (``tcp_get_idx``: ``TCP_SEQ_STATE_LISTENING``, then ``TCP_SEQ_STATE_ESTABLISHED``) and formats only as much as is
    read, so the reading stops at the first line of another state, and the connections of a busy master node (one
    per NodeManager, the filesystem's) cost nothing. Kernels before 4.4 print a listener's pending connections
    (``SYN_RECV``, ``03``) right after it: those are skipped, not an end.

    Raises:
        OSError: the file cannot be read.
    """
    found = []
    with open(path, "rb") as table:
        next(table, None)  # the header
        for line in table:
            fields = line.split(None, 10)
            if len(fields) < 10:
                continue
            state = fields[3]
            if state != LISTEN_STATE:
                if state == SYN_RECV_STATE:
                    continue
                break
            address, _, local_port = fields[1].partition(b":")
            if port is not None and local_port != port:
                continue
            found.append(ListenEntry(_address(address.decode(), family), int(local_port, 16), int(fields[7]),
                                     int(fields[9])))
    return found


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets process ``pid`` holds open (its ``/proc/<pid>/fd`` links ``socket:[INODE]``); empty
    when the process is gone or not readable (another user's, unless root)."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return set()
    inodes = set()
    for fd in fds:
        try:
            target = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes
