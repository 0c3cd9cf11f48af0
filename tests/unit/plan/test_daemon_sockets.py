"""Whether a web server's port is the owner's daemon's, before a credential goes there (issue 36, item 1).

Real sockets: the test binds them itself, and a second real user (``hhmallory``, :func:`tests.users.make_user`)
binds one of her own; the kernel's ``/proc/net/tcp*`` says whose each is. A remote node's answer comes from its
agent's record, written here as the agent writes it.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan, Ports
from launcher.plan.daemon_sockets import DaemonSockets, local_verdict, plain_address, reaches
from launcher.schedulers.allocation import Allocation, Node
from launcher.security.kdc import make_realm_dir
from launcher.security.webauth import AUTH_COOKIE, web_client, write_secrets
from launcher.util.records import AgentRecord, ListeningRecord
from launcher.util.sockets import ListenEntry
from launcher.util.states import AgentState
from tests.users import make_user


def free_block() -> int:
    """A base whose ``rm_web`` (+4) and ``jhs_web`` (+10) ports are free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1]) - 4


@pytest.fixture
def local_plan(make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan],
               make_allocation: Callable[..., Allocation]) -> ClusterPlan:
    """A 2-node ``per-cluster`` plan whose master is this host (127.0.0.1) and whose second node (10.0.0.2) is not,
    with a port block around a free port."""
    alloc = make_allocation(2)
    alloc = dataclasses.replace(alloc, nodes=(Node("n1", "127.0.0.1"), Node("n2", "10.0.0.2")))
    plan = make_test_plan(make_spec(nodes=2, security="per-cluster"), alloc)
    return plan.model_copy(update={"ports": Ports(base=free_block())})


def listen(port: int, address: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
    sock.bind((address, port))
    sock.listen()
    return sock


@pytest.fixture
def mallory_listens() -> Iterator[Callable[[int], subprocess.Popen[str]]]:
    """``listen(port)``: a listener of the real user ``hhmallory`` on ``127.0.0.1:port``, up when it returns."""
    mallory = make_user("hhmallory")
    started: list[subprocess.Popen[str]] = []

    def start(port: int) -> subprocess.Popen[str]:
        code = (f"import socket,sys,time\ns=socket.socket();s.bind(('127.0.0.1',{port}));s.listen();"
                "print('up',flush=True)"
                "\nc,_=s.accept();sys.stdout.write(c.recv(65536).decode(errors='replace'));sys.stdout.flush()"
                "\nc.sendall(b'HTTP/1.1 503 x\\r\\ncontent-length: 0\\r\\n\\r\\n');time.sleep(5)")
        proc = mallory.popen(["/usr/bin/python3", "-c", code])
        assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def test_a_listener_reaches_its_own_address_and_every_address_only() -> None:
    mapped = ListenEntry("::ffff:10.77.0.12", 8042, 0, 1)  # a JVM's dual-stack socket bound to one address
    assert reaches(mapped, "10.77.0.12") and not reaches(mapped, "10.77.0.13")
    assert reaches(ListenEntry("::", 8042, 0, 1), "10.77.0.13") and reaches(ListenEntry("0.0.0.0", 8042, 0, 1), "x")
    assert plain_address("::1") == "::1"


def test_a_local_port_is_ours_only_while_our_socket_holds_it(local_plan: ClusterPlan) -> None:
    sockets = DaemonSockets(local_plan)
    rm = sockets.endpoint("n1", local_plan.ports.rm_web)
    assert rm is not None and rm == sockets.endpoint("127.0.0.1", local_plan.ports.rm_web)
    assert rm.daemon == "resourcemanager" and sockets.endpoint("127.0.0.1", local_plan.ports.rm) is None  # RPC: no
    verdict = sockets.check(rm)
    assert not verdict.ours and not verdict.foreign and "nothing listens" in verdict.why
    with listen(rm.port):
        assert sockets.check(rm).ours
    with listen(rm.port, "0.0.0.0"):  # every address reaches it too
        assert sockets.check(rm).ours
    assert not sockets.check(rm).ours


def test_another_users_listener_gets_no_cookie(local_plan: ClusterPlan,
                                               mallory_listens: Callable[[int], subprocess.Popen[str]]) -> None:
    """The attack of issue 36 item 1: mallory binds the ResourceManager's web port first; the launcher's request
    goes to her without the owner's cookie, and the refusal names her."""
    make_realm_dir(local_plan)
    write_secrets(local_plan)
    port = local_plan.ports.rm_web
    squatter = mallory_listens(port)
    with web_client(local_plan, timeout=5) as http:
        answer = http.get(f"http://127.0.0.1:{port}/ws/v1/cluster/nodes")
        refused = http.auth.foreign()  # type: ignore[union-attr]
    squatter.kill()
    assert squatter.stdout is not None
    request = squatter.stdout.read()
    print(f"mallory's listener on 127.0.0.1:{port} read:\n{request}")
    assert answer.status_code == 503 and request.startswith("GET /ws/v1/cluster/nodes")
    assert AUTH_COOKIE not in request and "cookie" not in request.lower()
    ((endpoint, verdict),) = refused
    assert endpoint.daemon == "resourcemanager" and verdict.uid == make_user("hhmallory").uid
    assert f"is held by another user's process (hhmallory (uid {verdict.uid}))" in verdict.why


def test_our_daemon_gets_a_cookie_signed_with_its_own_secret(local_plan: ClusterPlan) -> None:
    make_realm_dir(local_plan)
    write_secrets(local_plan)
    rm_secret = local_plan.security.http_secret_of("resourcemanager", "n1")
    jhs_secret = local_plan.security.http_secret_of("historyserver", "n1")
    assert rm_secret.read_bytes() != jhs_secret.read_bytes() != local_plan.security.http_secret.read_bytes()
    seen: list[str | None] = []
    with listen(local_plan.ports.rm_web):
        transport = httpx.MockTransport(lambda request: seen.append(request.headers.get("Cookie"))
                                        or httpx.Response(200))
        with web_client(local_plan, transport=transport) as http:
            http.get(f"http://127.0.0.1:{local_plan.ports.rm_web}/ws/v1/cluster/nodes")
            http.get(f"http://127.0.0.1:{local_plan.ports.jhs_web}/ws/v1/history/info")  # nothing listens there
            http.get("http://127.0.0.1:9/elsewhere")  # not a web server of the cluster
    assert seen[0] is not None and seen[0].startswith(f'{AUTH_COOKIE}="u=')
    assert seen[1:] == [None, None]


def test_a_remote_port_is_ours_when_its_agent_saw_the_daemon_listen(local_plan: ClusterPlan) -> None:
    sockets = DaemonSockets(local_plan)
    nm = sockets.endpoint("n2", local_plan.ports.nm_web)
    assert nm is not None and nm.address == "10.0.0.2" and not sockets.is_local(nm.address)
    assert "no record of n2's agent" in sockets.check(nm).why
    agents = Path(local_plan.path("agents"))
    agents.mkdir(parents=True)
    seen = ListeningRecord(process="NodeManager", address="10.0.0.2", port=nm.port)
    record = AgentRecord(node="n2", state=AgentState.RUNNING, updated=time.time(), listening=[seen])
    (agents / "n2.json").write_text(record.to_json())
    assert sockets.check(nm).ours
    (agents / "n2.json").write_text(record.model_copy(update={"failed": {"nodemanager": 1}}).to_json())
    assert "has exited" in sockets.check(nm).why
    (agents / "n2.json").write_text(record.model_copy(update={"state": AgentState.STOPPING}).to_json())
    assert "agent is stopping" in sockets.check(nm).why
    other = record.model_copy(update={"listening": [], "foreign_ports": {str(nm.port): 1234}})
    (agents / "n2.json").write_text(other.to_json())
    assert sockets.check(nm).uid == 1234


def test_under_an_interface_a_nodes_web_server_is_known_by_the_address_its_agent_binds(local_plan: ClusterPlan) -> None:
    """Issue 37 item 9: under ``interface:`` the plan has only n2's name (its address on ib0 is its own to find);
    the link its NodeManager gives (``n2-ib:port``, a name that resolves to that address) is one of the cluster's
    web servers once n2's agent has recorded where it binds, and not before (no cookie goes to an unknown host)."""
    nodes = (local_plan.nodes[0], local_plan.nodes[1].model_copy(update={"address": "n2"}))
    plan = local_plan.model_copy(update={"nodes": nodes})
    sockets = DaemonSockets(plan)
    port = plan.ports.nm_web
    assert sockets.endpoint("192.0.2.12", port) is None
    agents = Path(plan.path("agents"))
    agents.mkdir(parents=True)
    seen = ListeningRecord(process="NodeManager", address="192.0.2.12", port=port)
    record = AgentRecord(node="n2", state=AgentState.RUNNING, updated=time.time(), listening=[seen],
                         address="192.0.2.12")
    (agents / "n2.json").write_text(record.to_json())
    nm = sockets.endpoint("192.0.2.12", port)
    assert nm is not None and (nm.node, nm.address) == ("n2", "192.0.2.12") and sockets.check(nm).ours
    assert sockets.endpoint("n2", port) == nm
    assert AgentRecord.parse(record.to_json()).address == "192.0.2.12"
    assert "address" not in record.model_copy(update={"address": None}).dump()


def test_a_local_verdict_names_any_other_owner() -> None:
    with listen(0) as sock:
        port = sock.getsockname()[1]
        verdict = local_verdict("127.0.0.1", port, uid=os.geteuid() + 1)
    assert verdict.foreign and verdict.uid == os.geteuid() and "another user's process" in verdict.why
