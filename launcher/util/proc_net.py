"""Listening TCP sockets of this network namespace as the kernel lists them: ``/proc/net/tcp`` and ``/proc/net/tcp6``.

Every user can read these files, and each line names the socket's owner (``uid``), which an unprivileged process
cannot choose: the kernel writes the effective uid of the process that made the socket (``sock_i_uid``;
``net/ipv4/tcp_ipv4.c`` ``get_tcp4_sock``, ``net/ipv6/tcp_ipv6.c`` ``get_tcp6_sock``). So "who holds port P here" is
answered for other users' sockets too, which psutil cannot do without root (it maps sockets to processes through
``/proc/<pid>/fd``, readable only for one's own processes).

Format of a line (after the header): ``sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid
timeout inode ...``; addresses are ``<hex address>:<hex port>``, the address in the kernel's byte order per 32-bit
word (an IPv4 ``0100007F`` is ``127.0.0.1`` on a little-endian host); ``st`` ``0A`` is ``TCP_LISTEN``.

Imports only the standard library.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from pathlib import Path

#: The kernel's ``TCP_LISTEN`` state in ``/proc/net/tcp*`` (``include/net/tcp_states.h``: 10).
LISTEN_STATE = "0A"
#: The two tables, IPv4 then IPv6 (a JVM's dual-stack socket is in the IPv6 one, ``::ffff:a.b.c.d`` or ``::``).
TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


@dataclass(frozen=True)
class ListenEntry:
    """One listening TCP socket: ``address`` (``0.0.0.0``/``::`` for every interface; an IPv4-mapped IPv6 address
    is given as IPv4), ``port``, ``uid`` of its owner, ``inode`` of the socket (``/proc/<pid>/fd/*`` links to
    ``socket:[<inode>]``)."""

    address: str
    port: int
    uid: int
    inode: int

    @property
    def wildcard(self) -> bool:
        """True if it listens on every address (``0.0.0.0`` or ``::``)."""
        return self.address in ("0.0.0.0", "::")

    def covers(self, address: str) -> bool:
        """True if a connection to ``address`` (IPv4 or IPv6 text) on :attr:`port` can reach this socket: its own
        address, or every address."""
        return self.wildcard or self.address == address


def _address(text: str) -> str:
    """The kernel's hex address (4 or 16 bytes, each 32-bit word in host byte order) as text; an IPv4-mapped IPv6
    address as IPv4."""
    words = [int(text[i:i + 8], 16) for i in range(0, len(text), 8)]
    packed = b"".join(struct.pack("=I", word) for word in words)
    if len(packed) == 4:
        return str(ipaddress.IPv4Address(packed))
    address = ipaddress.IPv6Address(packed)
    return str(address.ipv4_mapped) if address.ipv4_mapped is not None else str(address)


def parse(text: str) -> list[ListenEntry]:
    """The listening sockets of one table's text (lines of other states and malformed ones are left out)."""
    found = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != LISTEN_STATE:
            continue
        address, _, port = fields[1].partition(":")
        try:
            found.append(ListenEntry(_address(address), int(port, 16), int(fields[7]), int(fields[9])))
        except ValueError:
            continue
    return found


def listen_entries(port: int | None = None, tables: tuple[Path, ...] = TABLES) -> list[ListenEntry]:
    """The listening TCP sockets of this network namespace (all, or those on ``port``); a table that cannot be
    read (no IPv6) is left out. Reads a few KiB: cheap enough for every request of a 0.2 s poll."""
    found: list[ListenEntry] = []
    for table in tables:
        try:
            text = table.read_text()
        except OSError:
            continue
        found.extend(e for e in parse(text) if port is None or e.port == port)
    return found
