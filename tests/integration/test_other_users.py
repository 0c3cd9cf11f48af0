"""Two ordinary users on one node (issue 13, items 9-11), real Hadoop 3.4.2 daemons on the local backend.

``hhalice`` brings an interactive cluster up (``hpc-hadoop start``, as herself: not root) and runs a
streaming job that sleeps; ``hhbob``, on the same node, knows her ResourceManager's address (root hands
him a copy of her ``conf/``: what a port scan would find) and tries, under his own identity, what a
second user should not be able to do. Then alice kills her own job, stops the cluster, and nothing is left.
The cluster runs ``security: simple``: this is the ACL layer, which holds for a user under their own name even when
Hadoop believes names; ``security: per-cluster`` (the default) refuses bob before any ACL is asked
(``tests/integration/test_security.py``).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, RUNTIME, processes_of, run_report
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop



@pytest.fixture(scope="module")
def users() -> tuple[TestUser, TestUser]:
    return make_user("hhalice"), make_user("hhbob")


def java_cli(user: TestUser, conf: Path, main_class: str, *args: str) -> tuple[int, str]:
    """A Hadoop CLI class run by ``user`` with ``conf`` first on the classpath (exit code, stdout + stderr)."""
    java = shutil.which("java") or "java"
    proc = user.run([java, "-Xmx256m", "-cp", f"{conf}:{RUNTIME}/lib/*", main_class, *args], timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def running_app(alice: TestUser, cid: str, env: dict[str, str]) -> str:
    """The id of alice's RUNNING application (waits up to 120 s)."""
    deadline = time.monotonic() + 120
    listed = None
    while time.monotonic() < deadline:
        listed = alice.hpc_hadoop("exec", cid, "--", "yarn", "application", "-list", "-appStates", "RUNNING",
                                  env=env, timeout=120)
        found = re.search(r"(application_\d+_\d+)\s.*\sRUNNING\s", listed.stdout)
        if found:
            return found.group(1)
        time.sleep(1)
    raise AssertionError(f"alice's job never ran: {listed.stdout[-2000:] if listed else ''}"
                         f"{listed.stderr[-2000:] if listed else ''}")


@pytest.mark.own_cluster("alice's cluster, which bob attacks until she stops it")
def test_second_user_can_neither_read_nor_change_a_users_cluster(users: tuple[TestUser, TestUser],
                                                                  hadoop_runtime: Path) -> None:
    alice, bob = users
    base = shared_base("hh-users")
    try:
        home, bob_dir = user_dir(base, alice), user_dir(base, bob)
        env = {"XDG_STATE_HOME": str(home / "state")}
        words = home / "words.txt"
        words.write_text("a b\n")
        alice.own(words, 0o600)
        # security: simple: what the ACLs refuse a second user under their own name, the layer left when Hadoop
        # believes names (under per-cluster, the default, bob has no ticket at all: tests/integration/test_security.py)
        run_dir = alice.start_cluster(home, "inter", {
            "name": "alice", "scheduler": "local", "walltime": "00:20:00", "security": "simple",
            "filesystem": {"root": str(base)}, "hadoop": SMALL}, env)
        cid = run_dir.name
        try:
            check_private(run_dir, alice)
            streaming = next((RUNTIME / "lib").glob("hadoop-streaming-*.jar"))
            python = str(REPO / ".venv" / "bin" / "python")
            sleeper = alice.popen([python, "-m", "launcher.cli", "exec", cid, "--", "yarn", "jar", str(streaming),
                                   "-input", str(words), "-output", str(home / "out"), "-mapper", "sleep 300",
                                   "-numReduceTasks", "0"], env=env)
            app = running_app(alice, cid, env)
            bob_cannot_touch(bob, run_dir, bob_dir, app)
            killed = alice.hpc_hadoop("exec", cid, "--", "yarn", "application", "-kill", app, env=env)
            assert killed.returncode == 0, killed.stdout[-2000:] + killed.stderr[-2000:]
            sleeper.wait(timeout=120)
        finally:
            stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert processes_of(run_dir) == []
        report = run_report(run_dir)
        assert report["state"] == "stopped" and report["leftover_processes"] == 0
        check_ports(report, json.loads((run_dir / "plan.json").read_text()))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def check_private(run_dir: Path, owner: TestUser) -> None:
    """The cluster directory and everything in ``conf/`` belong to ``owner`` and no one else may read them."""
    assert run_dir.stat().st_uid == owner.uid
    assert run_dir.stat().st_mode & 0o777 == 0o700
    for path in [run_dir / "conf", *(run_dir / "conf").rglob("*"), run_dir / "plan.json", run_dir / "logs"]:
        assert path.stat().st_uid == owner.uid and path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))


def bob_cannot_touch(bob: TestUser, run_dir: Path, bob_dir: Path, app: str) -> None:
    """What a second user on the same node tries against the first user's cluster, and is refused."""
    listing = bob.run(["ls", str(run_dir)])
    assert listing.returncode != 0 and "Permission denied" in listing.stderr
    conf = bob_dir / "conf"
    shutil.copytree(run_dir / "conf", conf)
    for path in [conf, *conf.rglob("*")]:
        bob.own(path, 0o700 if path.is_dir() else 0o600)
    code, out = java_cli(bob, conf, "org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application",
                         "-kill", app)
    assert code != 0 and "AccessControlException" in out and "MODIFY_APP" in out, out[-3000:]
    code, out = java_cli(bob, conf, "org.apache.hadoop.yarn.client.cli.RMAdminCLI", "-refreshQueues")
    assert code != 0 and "AccessControlException" in out, out[-3000:]
    rm_web = run_report(run_dir)["rm_web"]
    put = httpx.put(f"{rm_web}/ws/v1/cluster/apps/{app}/state", json={"state": "KILLED"}, timeout=30)
    assert put.status_code in (401, 403), (put.status_code, put.text[:500])
    page = httpx.get(f"{rm_web}/cluster/app/{app}", timeout=30)
    assert page.status_code == 200 and app in page.text and "Kill Application" not in page.text
    state = httpx.get(f"{rm_web}/ws/v1/cluster/apps/{app}/state", timeout=30).json()
    assert state["state"] == "RUNNING", state


def check_ports(report: dict, plan: dict) -> None:
    """Every port the cluster listened on is in ``run.json``; the daemons' own ports are on the node's address
    and in the cluster's port block; only the ShuffleHandler and the ApplicationMaster's and tasks' ports listen on
    every interface (launcher/node/listeners.py)."""
    ports = report["ports"]
    print("\n".join(f"{p['node']} {p['process']} {p['address']}:{p['port']}" for p in ports))
    seen = {p["process"] for p in ports}
    assert {"ResourceManager", "NodeManager", "JobHistoryServer", "MRAppMaster"} <= seen, ports
    block = range(plan["ports"]["base"], plan["ports"]["base"] + 32)
    address = plan["nodes"][0]["address"]
    shuffle = plan["ports"]["base"] + 8
    for entry in ports:
        if entry["process"] in ("MRAppMaster", "YarnChild"):  # Hadoop binds these to every interface
            continue
        if (entry["process"], entry["port"]) == ("NodeManager", shuffle):  # the ShuffleHandler: no address key
            assert entry["address"] in ("0.0.0.0", "::"), entry
            continue
        assert entry["address"] == address and entry["port"] in block, entry
