"""launcher/security/checks.py: what ``security: per-cluster`` needs of the nodes (issue 27 item 5), with this
host's real resolver (names under ``.invalid`` never resolve, RFC 6761; 192.0.2.0/24 is TEST-NET-1, RFC 5737, with
no reverse), a real busy port and clock skews computed from given times."""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from launcher.security.checks import (
    MAX_CLOCK_SKEW_S,
    NodeProbe,
    Resolution,
    check_clock_skew,
    check_kdc_port,
    check_names,
    clock_skew,
    first_failure,
    probe,
    probed_addresses,
    resolve_bound,
)

LOCAL = [("localhost", "127.0.0.1")]


def test_a_node_whose_names_resolve_forward_and_back_passes() -> None:
    check = check_names([probe("localhost", LOCAL)])
    assert check.ok and check.fix is None
    assert check.detail == "forward and back on localhost: localhost → 127.0.0.1 → localhost"


def test_a_name_that_does_not_resolve_is_named_with_the_node_that_asked_and_the_fix() -> None:
    check = check_names([probe("localhost", [*LOCAL, ("nonexistent.invalid", "10.1.2.3")])])
    assert not check.ok
    assert check.detail == "on localhost, the node name nonexistent.invalid does not resolve"
    assert check.fix is not None and "security: simple" in check.fix and "/etc/hosts" in check.fix
    assert check.line() == f"security: per-cluster: {check.detail} (fix: {check.fix})"
    assert "\n" not in check.line()


def test_a_name_that_resolves_to_another_address_than_its_daemons_fails() -> None:
    check = check_names([probe("localhost", [("localhost", "127.0.0.2")])])
    assert not check.ok
    assert check.detail == "on localhost, localhost resolves to 127.0.0.1, not to 127.0.0.2 where its daemons listen"


def test_an_address_that_does_not_resolve_back_fails() -> None:
    check = check_names([probe("localhost", [("192.0.2.1", "192.0.2.1")])])
    assert not check.ok
    assert check.detail == "on localhost, 192.0.2.1 (192.0.2.1) does not resolve back to a name"


def _resolution(back: str) -> Resolution:
    return Resolution(name="n1", address="10.0.0.1", forward="10.0.0.1", back=back, back_forward="10.0.0.1")


def test_an_address_that_resolves_back_to_other_names_on_other_nodes_fails() -> None:
    """A client names the server's principal by its own reverse lookup: two nodes that disagree cannot both match
    the principals the KDC holds (those of the master's lookups)."""
    probes = [NodeProbe("n1", 0.0, (_resolution("n1.cluster"),)), NodeProbe("n2", 0.0, (_resolution("n1.cluster"),)),
              NodeProbe("n3", 0.0, (_resolution("n1-ib.cluster"),))]
    check = check_names(probes)
    assert not check.ok
    assert check.detail == "10.0.0.1 (n1) resolves back to n1.cluster on n1 but to n1-ib.cluster on n3"
    assert check_names(probes[:2]).ok


def test_a_name_that_resolves_back_to_a_name_without_that_address_fails() -> None:
    wrong = Resolution(name="n1", address="10.0.0.1", forward="10.0.0.1", back="old-n1", back_forward="10.0.0.9")
    check = check_names([NodeProbe("n1", 0.0, (wrong,))])
    assert check.detail == "on n1, 10.0.0.1 (n1) resolves back to old-n1, which resolves to 10.0.0.9, not to 10.0.0.1"
    assert check_names([]).detail == "no node answered"


# -- issue 37 item 9: under interface: (a second network) the addresses on it are what resolve back ------------------

IB = "ib0"


def _ib(node: str, address: str, back: str | None, back_forward: str | None) -> Resolution:
    return Resolution(name=node, address=address, forward=f"10.77.0.{address.rsplit('.', 1)[1]}", back=back,
                      back_forward=back_forward)


def _ib_probes(*bound: Resolution) -> list[NodeProbe]:
    """n1 (the master, at its ib0 address in the plan) and n2..: each node's answers for the plan's nodes (the others'
    names stand in for their addresses: ``resolve_node`` does not look those up back) and for its own ib0 address."""
    plan = (_ib("n1", "10.78.0.11", "n1-ib", "10.78.0.11"),
            *(Resolution(b.name, b.name, b.forward, None, None) for b in bound[1:]))
    return [NodeProbe(b.name, 0.0, plan, interface=IB, bound=b) for b in bound]


def test_under_an_interface_the_node_names_need_not_resolve_to_the_addresses_the_daemons_bind() -> None:
    """n1 resolves to its eth0 address, 10.77.0.11, while its daemons bind ib0's, 10.78.0.11: without ``interface:``
    that is a failure, with it the check is that 10.78.0.11 resolves back to n1-ib and n1-ib to 10.78.0.11, on every
    node, and each node's own ib0 address likewise, on the node and on the master."""
    probes = _ib_probes(_ib("n1", "10.78.0.11", "n1-ib", "10.78.0.11"), _ib("n2", "10.78.0.12", "n2-ib", "10.78.0.12"))
    check = check_names(probes, [p.bound for p in probes if p.bound], "n1")
    assert check.ok, check.detail
    assert check.detail == "forward and back on every node (ib0): n1 → 10.78.0.11 → n1-ib, n2 → 10.78.0.12 → n2-ib"
    plain = [dataclasses.replace(p, interface=None, bound=None) for p in probes]
    assert check_names(plain).detail == ("on n1, n1 resolves to 10.77.0.11, not to 10.78.0.11 where its daemons "
                                         "listen")


def test_under_an_interface_an_address_on_it_that_does_not_resolve_back_is_named() -> None:
    """n3's /etc/hosts lacks the ib0 names (Magpie's issues #277, #324): its own address has no name there."""
    probes = _ib_probes(_ib("n1", "10.78.0.11", "n1-ib", "10.78.0.11"), _ib("n3", "10.78.0.13", None, None))
    check = check_names(probes)
    assert not check.ok
    assert check.detail == "on n3, 10.78.0.13 (n3's ib0) does not resolve back to a name"
    wrong = _ib_probes(_ib("n1", "10.78.0.11", "n1-ib", "10.78.0.11"), _ib("n3", "10.78.0.13", "n3-ib", None))
    assert check_names(wrong).detail == ("on n3, 10.78.0.13 (n3's ib0) resolves back to n3-ib, which does not resolve, "
                                         "not to 10.78.0.13")


def test_under_an_interface_the_master_must_see_each_nodes_address_by_the_name_the_node_sees() -> None:
    """The ResourceManager and the KDC are on the master: a NodeManager's address it names otherwise than the node
    does (or not at all) gets principals the node's daemons do not log in with."""
    probes = _ib_probes(_ib("n1", "10.78.0.11", "n1-ib", "10.78.0.11"), _ib("n2", "10.78.0.12", "n2-ib", "10.78.0.12"))
    other = check_names(probes, [_ib("n2", "10.78.0.12", "n2-hsn", "10.78.0.12")], "n1")
    assert other.detail == "10.78.0.12 (n2's ib0) resolves back to n2-ib on n2 but to n2-hsn on n1"
    none = check_names(probes, [_ib("n2", "10.78.0.12", None, None)], "n1")
    assert none.detail == "on n1, 10.78.0.12 (n2's ib0) does not resolve back to a name"


def test_a_node_without_the_interface_is_named() -> None:
    check = check_names([probe("localhost", LOCAL, interface="nonexistent0")])
    assert check.detail == "on localhost, interface nonexistent0 has no IPv4 address"


def test_the_probe_of_an_interface_reports_its_address_as_the_agent_binds_it() -> None:
    """The loopback interface, ``lo``: 127.0.0.1, back to localhost and forward again; the probe survives its
    JSON line; ``resolve_bound`` and ``probed_addresses`` read it."""
    answer = probe("localhost", LOCAL, interface="lo")
    assert answer.bound == Resolution("localhost", "127.0.0.1", "127.0.0.1", "localhost", "127.0.0.1")
    assert NodeProbe.from_json(answer.to_json()) == answer
    assert check_names([answer], resolve_bound([answer]), "localhost").detail == \
        "forward and back on localhost (lo): localhost → 127.0.0.1 → localhost"
    assert probed_addresses([answer]) == {"localhost": "127.0.0.1"}


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A TCP port this test listens on, on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def test_a_busy_port_on_the_masters_address_fails_the_kdc_port_check(busy_port: int) -> None:
    busy = probe("localhost", LOCAL, kdc_port=busy_port)
    assert busy.bind_error == "Address already in use"
    check = check_kdc_port(busy, "127.0.0.1")
    assert not check.ok
    assert check.detail == "the KDC cannot listen on 127.0.0.1 on localhost: Address already in use"
    assert check.fix is not None and "security: simple" in check.fix
    free = check_kdc_port(probe("localhost", LOCAL), "127.0.0.1")
    assert free.ok and free.detail == "a TCP port can be bound on 127.0.0.1 on localhost"


def test_an_address_of_no_interface_here_fails_the_kdc_port_check() -> None:
    elsewhere = probe("here", [("here", "192.0.2.1")])
    assert elsewhere.bind_error == "Cannot assign requested address"
    assert not check_kdc_port(elsewhere, "192.0.2.1").ok


def test_clock_skew_counts_what_the_times_prove_not_a_slow_start() -> None:
    # Every node read its clock between 1000 and 1010 by ours: no skew proven, however the reads were spread.
    assert clock_skew([1000.0, 1004.0, 1010.0], 1000.0, 1010.0) == 0.0
    # A node 400 s behind ours, outside the window by 400 s.
    assert clock_skew([1000.0, 600.0], 1000.0, 1000.0) == 400.0
    # Within the window of ours, but 9 s apart with a window of 2 s: 7 s between them at least.
    assert clock_skew([1000.0, 1009.0], 999.0, 1001.0) == 8.0
    # Both ahead of ours by the same 500 s: the distance to ours shows it.
    assert clock_skew([1500.0, 1500.0], 1000.0, 1000.0) == 500.0
    assert clock_skew([], 1000.0, 1000.0) == 0.0


def test_a_skew_beyond_kerberos_default_fails_and_names_the_farthest_node() -> None:
    assert MAX_CLOCK_SKEW_S == 300.0
    probes = [NodeProbe("n1", 1000.0), NodeProbe("n2", 1000.0 + 301.0), NodeProbe("n3", 1000.0 - 20.0)]
    check = check_clock_skew(probes, 1000.0, 1000.0)
    assert not check.ok
    assert check.detail == "clocks differ by 321 s, more than Kerberos' 300 s (the farthest: n2, +301 s from this host)"
    assert check.fix is not None and "NTP" in check.fix and "security: simple" in check.fix
    within = check_clock_skew([NodeProbe("n1", 1000.0), NodeProbe("n2", 1299.0)], 1000.0, 1000.0)
    assert within.ok and within.detail == "2 clock(s) within 299.0 s of this host's (Kerberos allows 300 s)"
    assert first_failure([within, check]) is check and first_failure([within]) is None


def test_the_probe_runs_as_a_module_and_prints_one_json_line() -> None:
    """What the fan-out runs on each node: ``python -m launcher.security.checks``; the node is found from
    ``--node`` (else the environment or the host name, as the agent finds its node)."""
    out = subprocess.run([sys.executable, "-m", "launcher.security.checks", "--node", "localhost",
                          "localhost=127.0.0.1", "nonexistent.invalid=10.1.2.3"],
                         capture_output=True, text=True, check=True).stdout
    [line] = out.splitlines()
    node_probe = NodeProbe.from_json(line)
    assert node_probe.node == "localhost" and node_probe.bind_error is None
    assert [(r.name, r.forward) for r in node_probe.resolutions] == [("localhost", "127.0.0.1"),
                                                                     ("nonexistent.invalid", None)]
    assert NodeProbe.from_json(node_probe.to_json()) == node_probe
    assert json.loads(line)["time"] == node_probe.time
    with pytest.raises(ValueError, match="not a node probe"):
        NodeProbe.from_json('{"node": "x"}')
