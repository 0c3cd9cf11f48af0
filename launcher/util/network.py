"""Network helpers both the scheduler backends and the node agent use: the address of a node and of an interface,
the addresses that mean every interface, and the base path a web server is served under behind a portal
(:func:`base_path`: the ``ui`` proxy's and JupyterLab's).

Imports only the standard library, ``psutil`` and :mod:`launcher.util.errors`, so that any module may use it.
"""

from __future__ import annotations

import re
import socket

import psutil

from launcher.util.errors import UserError

#: Addresses meaning "every interface" as the kernel lists a listening socket (the node agent's listeners,
#: the run report's warning about ports open on every interface).
WILDCARD_ADDRESSES = frozenset({"0.0.0.0", "::", ""})


def interface_address(interface: str) -> str:
    """The IPv4 address of a network interface of this host (e.g. ``ib0``).

    Raises:
        KeyError: the interface does not exist or has no IPv4 address.
    """
    for addr in psutil.net_if_addrs().get(interface, []):
        if addr.family == socket.AF_INET:
            return str(addr.address)
    raise KeyError(f"interface {interface} has no IPv4 address on {socket.gethostname()}")


def bind_address(interface: str) -> str:
    """The address daemons bind to for the job file's ``interface:`` on this host (:func:`interface_address`).

    Raises:
        UserError: the interface does not exist here or has no IPv4 address (names the field ``interface`` and the
            interfaces that have one).
    """
    try:
        return interface_address(interface)
    except KeyError:
        have = sorted(name for name, addrs in psutil.net_if_addrs().items()
                      if any(a.family == socket.AF_INET for a in addrs))
        raise UserError(f"interface {interface} has no IPv4 address on {socket.gethostname()} (interfaces with one: "
                        f"{', '.join(have) or 'none'})", field="interface",
                        fix="set interface: to one of them, or leave it out") from None


def resolve(hostname: str) -> str:
    """The IPv4 address of ``hostname`` (via the resolver: ``/etc/hosts``, DNS).

    Raises:
        OSError: the name does not resolve (``socket.gaierror``).
    """
    return socket.gethostbyname(hostname)


def node_address(name: str) -> str:
    """The IPv4 address daemons on node ``name`` bind to: its hostname's address.

    Raises:
        UserError: the name does not resolve, or resolves to a loopback address (127.x), which daemons on
            other nodes could not reach.
    """
    try:
        address = resolve(name)
    except OSError:
        raise UserError(f"node name {name} does not resolve", field="nodes",
                        fix="ask your admins to fix DNS or /etc/hosts, or set interface: (e.g. ib0)") from None
    if address.startswith("127."):
        raise UserError(f"node name {name} resolves to {address}, a loopback address other nodes cannot reach",
                        field="interface", fix=f"fix /etc/hosts on {name}, or set interface: (e.g. ib0, eth0)")
    return address


#: A base path: segments of unreserved URL characters, each followed by ``/`` (``/rnode/n1/34567/``).
_BASE_PATH = re.compile(r"/(?:[A-Za-z0-9._~-]+/)*")


def base_path(value: str) -> str:
    """``value`` as the proxy's base path: one leading and one trailing ``/`` (``/rnode/n1/34567`` →
    ``/rnode/n1/34567/``); ``/`` for the root.

    Raises:
        ValueError: not an absolute path of letters, digits and ``._~-`` segments (no ``//``, ``..``, query or
            fragment: every link the proxy writes starts with it).
    """
    path = value if value.endswith("/") else value + "/"
    if not _BASE_PATH.fullmatch(path) or any(part in (".", "..") for part in path.split("/")):
        raise ValueError(f"{value!r} is not a base path: give an absolute path such as /rnode/<host>/<port>/")
    return path
