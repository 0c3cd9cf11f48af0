"""What ``security: per-cluster`` needs of the nodes, checked before any daemon starts (issue 27 item 5).

Three checks, each a pure function of what the nodes reported (:class:`NodeProbe`), each returning a
:class:`KerberosCheck`:

* :func:`check_names`: on every node, every node's name resolves forward to the address its daemons bind to, that
  address resolves back to a name, that name forward again to the same address, and the name it resolves back to is
  the same on every node. A Hadoop client names the server's principal by the reverse lookup of the server's
  address (Java's ``InetAddress.getCanonicalHostName``, which checks the forward lookup too), a server its own by
  the reverse lookup of its bind address, and the KDC holds the principals of the names the master sees
  (:func:`launcher.security.kerberos.principal_hosts`): a node that sees another name gets ``Server not found in
  Kerberos database``. Under ``interface:`` (a second network, e.g. ``ib0``) the node names are the scheduler's, on
  another network: they need only resolve; what must resolve back and forth is each node's address on that
  interface (which only the node itself knows: :attr:`NodeProbe.bound`), on the node and on the master (the
  launcher's host, beside the ResourceManager and the KDC: :func:`resolve_bound`), to the same name (``n2-ib``).
* :func:`check_kdc_port`: a TCP port can be bound on the master's address (the KDC listens there, ``kdc.port=0``).
* :func:`check_clock_skew`: every clock within :data:`MAX_CLOCK_SKEW_S` of the KDC's host's and of each other's.

A probe (:func:`probe`) is what one node reports: its clock and its resolver's answers; it runs on each node
through the fan-out (:func:`launcher.security.kdc.probe_nodes`) as ``python -m launcher.security.checks``,
which writes its answer into a directory every node shares (one JSON file per node; nothing answers through the
fan-out command's output, which a batch system's task launcher does not relay). Imports only the standard library
(and :func:`launcher.util.files.replace_private`, which does too; under ``interface:``,
:func:`launcher.util.network.interface_address`, the one the node agent binds with).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

#: The largest clock difference Kerberos accepts between a client, a server and the KDC, seconds: 300 s is the
#: default of MIT Kerberos (``clockskew`` in ``krb5.conf``, "Default value is 300 seconds, or five minutes"), of
#: Apache Kerby (``KdcConfigKey.ALLOWABLE_CLOCKSKEW`` and ``KrbConfigKey.CLOCKSKEW``, ``5 * 60L``) and of Java
#: (``sun.security.krb5.internal.Krb5.DEFAULT_ALLOWABLE_CLOCKSKEW``, 300); our ``krb5.conf`` does not change it.
MAX_CLOCK_SKEW_S = 300.0
#: The fix a site that cannot meet a check can always take.
SIMPLE_FIX = "or set security: simple (Hadoop then believes the user name a client claims)"


@dataclass(frozen=True)
class KerberosCheck:
    """One check's outcome.

    Attributes:
        name: ``krb host names``, ``krb KDC port`` or ``krb clock skew``.
        ok: True when what ``security: per-cluster`` needs is there.
        detail: what was found (on failure: what is wrong, naming the node).
        fix: what to do, ending with :data:`SIMPLE_FIX` (``None`` when ok).
    """

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    def line(self) -> str:
        """The one-line error of a failed check: ``security: per-cluster: <detail> (fix: <fix>)``."""
        return f"security: per-cluster: {self.detail}" + (f" (fix: {self.fix})" if self.fix else "")


@dataclass(frozen=True)
class Resolution:
    """What one node's resolver says of one node (``name``, its daemons' ``address``).

    Attributes:
        name: the node's name in the allocation.
        address: the IPv4 address its daemons bind to (as planned).
        forward: the address ``name`` resolves to on the probing node, ``None`` when it does not resolve.
        back: the name ``address`` resolves back to there (lower case), ``None`` when it does not.
        back_forward: the address ``back`` resolves to there, ``None`` when it does not.
    """

    name: str
    address: str
    forward: str | None
    back: str | None
    back_forward: str | None


@dataclass(frozen=True)
class NodeProbe:
    """What one node reported (:func:`probe`).

    Attributes:
        node: the node's name in the allocation.
        time: its clock when probed, epoch seconds (``time.time()``).
        resolutions: its resolver's answers for every node, in the allocation's order.
        bind_error: why a TCP port could not be bound on its own address (``None``: it could).
        interface: the job file's ``interface`` it was asked about (``None``: the daemons bind to the node names'
            addresses).
        bound: under ``interface``, its resolver's answer for its own address on that interface (the address its
            daemons bind to, as the node agent finds it); else ``None``.
        interface_error: under ``interface``, why the node has no IPv4 address on it (``None``: it has).
    """

    node: str
    time: float
    resolutions: tuple[Resolution, ...] = field(default_factory=tuple)
    bind_error: str | None = None
    interface: str | None = None
    bound: Resolution | None = None
    interface_error: str | None = None

    def to_json(self) -> str:
        """One JSON line (what ``python -m launcher.security.checks`` prints)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> NodeProbe:
        """The probe of :meth:`to_json`.

        Raises:
            ValueError: ``text`` is not such a line (``json.JSONDecodeError`` is a ``ValueError``).
        """
        try:
            data = json.loads(text)
            bound = data.get("bound")
            return cls(node=str(data["node"]), time=float(data["time"]),
                       resolutions=tuple(Resolution(**r) for r in data["resolutions"]),
                       bind_error=data.get("bind_error"), interface=data.get("interface"),
                       bound=Resolution(**bound) if bound else None, interface_error=data.get("interface_error"))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a node probe: {text[:200]!r} ({exc})") from None


def _forward(name: str) -> str | None:
    try:
        return socket.gethostbyname(name)
    except (OSError, UnicodeError):
        return None


def _back(address: str) -> str | None:
    try:
        return socket.gethostbyaddr(address)[0].lower()
    except (OSError, UnicodeError):
        return None


def _is_address(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def resolve_node(name: str, address: str) -> Resolution:
    """This host's resolver's answers for the node ``name`` whose daemons bind to ``address``: an IPv4 address, or,
    under ``interface:`` for a node other than the master, its name (the node alone finds its address on the
    interface: :attr:`NodeProbe.bound`), which is then not looked up back (``back`` ``None``)."""
    forward = _forward(name)
    back = _back(address) if _is_address(address) else None
    return Resolution(name=name, address=address, forward=forward, back=back,
                      back_forward=_forward(back) if back else None)


def resolve_bound(probes: Sequence[NodeProbe]) -> tuple[Resolution, ...]:
    """This host's resolver's answers for every node's address on the interface (:attr:`NodeProbe.bound`), in the
    order of ``probes`` (those without one left out): what the master, where the ResourceManager and the KDC run,
    sees of the NodeManagers' addresses."""
    return tuple(resolve_node(p.node, p.bound.address) for p in probes if p.bound is not None)


def probed_addresses(probes: Sequence[NodeProbe]) -> dict[str, str]:
    """``{node: address}``: where each node's daemons bind, as the nodes reported it under ``interface:``
    (:attr:`NodeProbe.bound`); empty without it."""
    return {p.node: p.bound.address for p in probes if p.bound is not None}


def bind_error(address: str, port: int = 0) -> str | None:
    """Why a TCP listener cannot bind ``address:port`` on this host (``port`` 0: any free port, as the KDC asks), or
    ``None`` when it can (the socket is closed at once)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((address, port))
            sock.listen(1)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def probe(node: str, nodes: Sequence[tuple[str, str]], kdc_port: int = 0, interface: str | None = None) -> NodeProbe:
    """What this host, the node ``node``, reports: its clock, its resolver's answers for every one of ``nodes``
    (``(name, address)``), under ``interface`` its own address on that interface and the answers for it (the
    node agent's :func:`launcher.util.network.interface_address`), and whether a TCP port (``kdc_port``; 0: any)
    can be bound on its own address (the interface's, else its entry's in ``nodes``)."""
    began = time.time()
    own = dict(nodes).get(node, node)
    bound = interface_error = None
    if interface:
        from launcher.util.network import interface_address

        try:
            own = interface_address(interface)
        except KeyError:
            interface_error = f"interface {interface} has no IPv4 address"
        else:
            bound = resolve_node(node, own)
    if not _is_address(own):
        own = _forward(own) or own
    resolutions = tuple(resolve_node(name, address) for name, address in nodes)
    return NodeProbe(node=node, time=began, resolutions=resolutions,
                     bind_error=None if interface_error else bind_error(own, kdc_port), interface=interface,
                     bound=bound, interface_error=interface_error)


def _not_back(on: str, r: Resolution, what: str) -> str | None:
    """What is wrong with the reverse lookup of ``r.address`` (``what`` names it) seen ``on`` a node, or ``None``."""
    if r.back is None:
        return f"{on}, {r.address} ({what}) does not resolve back to a name"
    if r.back_forward != r.address:
        where = "does not resolve" if r.back_forward is None else f"resolves to {r.back_forward}"
        return f"{on}, {r.address} ({what}) resolves back to {r.back}, which {where}, not to {r.address}"
    return None


def _first_bad(probe_: NodeProbe) -> str | None:
    """What is wrong in one node's answers (the first thing), or ``None``."""
    on = f"on {probe_.node}"
    if probe_.interface_error:
        return f"{on}, {probe_.interface_error}"
    for r in probe_.resolutions:
        if r.forward is None:
            return f"{on}, the node name {r.name} does not resolve"
        if not _is_address(r.address):
            continue  # under interface: a node other than the master: its own probe's bound says where it listens
        if probe_.interface is None and r.forward != r.address:
            return f"{on}, {r.name} resolves to {r.forward}, not to {r.address} where its daemons listen"
        bad = _not_back(on, r, r.name if probe_.interface is None else f"{r.name}'s {probe_.interface}")
        if bad:
            return bad
    if probe_.bound is not None:
        return _not_back(on, probe_.bound, f"{probe_.node}'s {probe_.interface}")
    return None


def _disagreement(probes: Sequence[NodeProbe], bound_here: Sequence[Resolution], here: str) -> str | None:
    """Where two nodes' resolvers disagree on the name an address resolves back to (the first place), or ``None``:
    every node's on the addresses in the plan (the master's at least), and ``here``'s (``bound_here``) on each
    node's address on the interface."""
    first = probes[0]
    for node_probe in probes[1:]:
        for mine, theirs in zip(first.resolutions, node_probe.resolutions, strict=False):
            if _is_address(mine.address) and mine.back != theirs.back:
                return (f"{mine.address} ({mine.name}) resolves back to {mine.back} on {first.node} but to "
                        f"{theirs.back} on {node_probe.node}")
    seen: dict[str, Resolution] = {r.name: r for r in bound_here}
    for node_probe in probes:
        own, there = node_probe.bound, seen.get(node_probe.node)
        if own is None or there is None:
            continue
        what = f"{node_probe.node}'s {node_probe.interface}"
        bad = _not_back(f"on {here}", there, what)
        if bad:
            return bad
        if there.back != own.back:
            return (f"{own.address} ({what}) resolves back to {own.back} on {node_probe.node} but to {there.back} "
                    f"on {here}")
    return None


def check_names(probes: Sequence[NodeProbe], bound_here: Sequence[Resolution] = (),
                here: str = "this host") -> KerberosCheck:
    """Every node name resolves forward and back to the same address on every node, and back to the same name
    everywhere (module docstring: why). Under ``interface:``, every node's address on the interface resolves back
    to one name, and forward again, on the node and on ``here`` (the master: ``bound_here``, its answers for
    those addresses, :func:`resolve_bound`)."""
    name = "krb host names"
    fix = ("make every node's name resolve to its address and that address back to one name, the same on every "
           "node (DNS or /etc/hosts; ask your admins), " + SIMPLE_FIX)
    if not probes:
        return KerberosCheck(name, False, "no node answered", fix)
    bad = next((b for b in map(_first_bad, probes) if b), None) or _disagreement(probes, bound_here, here)
    if bad:
        return KerberosCheck(name, False, bad, fix)
    first = probes[0]
    if first.interface:
        pairs = ", ".join(f"{p.node} → {p.bound.address} → {p.bound.back}" for p in probes if p.bound is not None)
        via = f" ({first.interface})"
    else:
        pairs = ", ".join(f"{r.name} → {r.address} → {r.back}" for r in first.resolutions)
        via = ""
    nodes = "every node" if len(probes) > 1 else first.node
    return KerberosCheck(name, True, f"forward and back on {nodes}{via}: {pairs}")


def check_kdc_port(master: NodeProbe, address: str) -> KerberosCheck:
    """A TCP port could be bound on the master's ``address`` (``master``'s :attr:`NodeProbe.bind_error`)."""
    name = "krb KDC port"
    if master.bind_error:
        return KerberosCheck(name, False, f"the KDC cannot listen on {address} on {master.node}: "
                             f"{master.bind_error}",
                             "set interface: to a network interface of the nodes, or free a port there, " + SIMPLE_FIX)
    return KerberosCheck(name, True, f"a TCP port can be bound on {address} on {master.node}")


def clock_skew(times: Sequence[float], before: float, after: float) -> float:
    """The smallest clock skew, seconds, that the nodes' ``times`` prove, all read between ``before`` and ``after``
    by the reference clock (the KDC's host's): the farthest any time lies outside ``[before, after]``, or the
    spread of the times less the window's width, whichever is larger (0.0 when they prove none). A slow start of
    the probes never counts as skew; a clock off by more than the window always shows."""
    width = max(0.0, after - before)
    outside = max((max(before - t, t - after, 0.0) for t in times), default=0.0)
    spread = max(times) - min(times) - width if times else 0.0
    return max(outside, spread, 0.0)


def check_clock_skew(probes: Sequence[NodeProbe], before: float, after: float,
                     limit: float = MAX_CLOCK_SKEW_S) -> KerberosCheck:
    """Every node's clock within ``limit`` seconds (:data:`MAX_CLOCK_SKEW_S`) of the reference clock and of each
    other (:func:`clock_skew`; ``before`` and ``after`` bracket the probes on the reference clock)."""
    name = "krb clock skew"
    skew = clock_skew([p.time for p in probes], before, after)
    if skew > limit:
        middle = (before + after) / 2
        worst = max(probes, key=lambda p: abs(p.time - middle))
        return KerberosCheck(name, False, f"clocks differ by {skew:.0f} s, more than Kerberos' {limit:.0f} s "
                             f"(the farthest: {worst.node}, {worst.time - middle:+.0f} s from this host)",
                             "ask your admins to synchronise the nodes' clocks (NTP, chrony), " + SIMPLE_FIX)
    return KerberosCheck(name, True, f"{len(probes)} clock(s) within {max(skew, after - before):.1f} s of this host's "
                         f"(Kerberos allows {limit:.0f} s)")


def first_failure(checks: Sequence[KerberosCheck]) -> KerberosCheck | None:
    """The first failed check of ``checks``, or ``None``."""
    return next((c for c in checks if not c.ok), None)


def _this_node(nodes: Sequence[str], given: str | None) -> str:
    """The node this probe runs on: ``given`` (``--node``), ``$HPC_HADOOP_NODE``, ``$SLURMD_NODENAME``, this host's
    name or short name, whichever is one of ``nodes`` (as the node agent finds its node); else the host name."""
    host = socket.gethostname()
    candidates = [given, os.environ.get("HPC_HADOOP_NODE"), os.environ.get("SLURMD_NODENAME"), host,
                  host.split(".")[0]]
    return next((c for c in candidates if c and c in nodes), given or host)


def write_answer(directory: str, probe_: NodeProbe) -> None:
    """Write ``probe_`` to ``<directory>/<node>.json`` (mode 0600 from its creation, then renamed into place, so that
    a reader never sees half of it).

    Raises:
        OSError: the directory is missing or not writable.
    """
    from launcher.util.files import replace_private

    final = os.path.join(directory, f"{probe_.node}.json")
    replace_private(final, probe_.to_json() + "\n", tmp=f"{final}.{os.getpid()}.tmp")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m launcher.security.checks [--node NODE] [--kdc-port P] [--answer-dir DIR] [--interface IF]
    NAME=ADDRESS...``:
    this node's :class:`NodeProbe`, written to ``DIR/<node>.json`` (:func:`write_answer`), or printed as one JSON line
    without ``--answer-dir``. Through a batch system's task launcher the file is the answer: OpenPBS's ``pbs_tmrsh``
    and Torque's ``pbsdsh`` (without ``-o``) send a task's output to the job's output file, not to their own
    (``tm_spawn``; issue 37 item 5)."""
    parser = argparse.ArgumentParser(prog="python -m launcher.security.checks")
    parser.add_argument("--node")
    parser.add_argument("--kdc-port", type=int, default=0)
    parser.add_argument("--answer-dir")
    parser.add_argument("--interface")
    parser.add_argument("nodes", nargs="+", metavar="NAME=ADDRESS")
    args = parser.parse_args(argv)
    nodes = [tuple(item.split("=", 1)) for item in args.nodes]
    if any(len(pair) != 2 for pair in nodes):
        parser.error("each node is NAME=ADDRESS")
    pairs = [(name, address) for name, address in nodes]
    answer = probe(_this_node([n for n, _ in pairs], args.node), pairs, args.kdc_port, args.interface)
    if args.answer_dir:
        write_answer(args.answer_dir, answer)
    else:
        print(answer.to_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
