"""The node agent's directories (issue 36 item 3): a NodeManager local dir below ``filesystem.local_dirs`` that
another user made is refused, never reused: the agent starts no daemon, its state file says why in one line
(``nm_note``, ``failed``), and the launcher's check of the agents names that line. Real directories of a real second
account (``hhmallory``); no daemon starts (the runtime is the fake one of tests/unit/conftest.py: no ``java``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from launcher.cluster.cluster import Cluster
from launcher.config.spec import JobSpec
from launcher.node.agent import Agent
from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.errors import ClusterError
from launcher.util.records import AgentRecord
from launcher.util.states import AgentState
from tests.users import make_user, sticky_dir


@pytest.fixture
def local_root() -> Iterator[Path]:
    """``filesystem.local_dirs``: a node-local disk every user writes to (mode 1777), under ``/tmp`` so that mallory
    can reach it."""
    with sticky_dir("hh-agent", "local") as root:
        yield root


def test_a_local_dir_another_user_made_is_refused_and_no_daemon_starts(
        local_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
        make_test_plan: Callable[..., ClusterPlan]) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "node-tmp"))  # the agents' working directories
    mallory = make_user("hhmallory")
    hers = local_root / "hpc-hadoop-root"  # <local_dirs>/hpc-hadoop-<owner>, the owner being root here
    made = mallory.run(["sh", "-c", f"mkdir {hers} && chmod 777 {hers}"], cwd=Path("/"))
    assert made.returncode == 0, made.stderr
    spec = make_spec(security="simple", filesystem={"root": str(tmp_path / "pfs"), "local_dirs": str(local_root)})
    plan = make_test_plan(spec)
    node = plan.nodes[1]
    assert Path(node.nm_local_dir).is_relative_to(hers) and "nodemanager" in node.roles
    plan.path("agents").mkdir(parents=True)
    plan.conf_dir.mkdir()
    agent = Agent(plan, node)
    umask = os.umask(0o022)
    try:
        agent.start()
    finally:
        os.umask(umask)
    line = (f"filesystem.local_dirs: {hers} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses no directory "
            "another user made (fix: remove it or ask hhmallory to (it is not yours), then run again)")
    assert agent.nm_note == f"NodeManager local dir refused: {line}"
    assert (agent.state, agent.failed, agent.procs) == (AgentState.FAILED, {"nodemanager": 2}, {})
    assert list(hers.iterdir()) == []  # nothing of the owner's in her directory
    assert agent.status.flush(10)
    record = AgentRecord.read(plan.path("agents", f"{node.name}.json"))
    assert (record.state, record.failed, record.nm_note, record.daemons) == (AgentState.FAILED, {"nodemanager": 2},
                                                                             agent.nm_note, {})
    assert plan.path("agents", f"{node.name}.json").stat().st_mode & 0o777 == 0o600
    with pytest.raises(ClusterError) as failed:
        Cluster(plan).raise_if_failed()
    assert str(failed.value) == f"nodemanager on {node.name} was not started during bring-up: {agent.nm_note}"
    agent.remove_work_dir()


def test_a_work_dir_root_another_user_made_is_left_for_the_cluster_directory_with_the_line(
        local_root: Path, monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
        make_test_plan: Callable[..., ClusterPlan]) -> None:
    """``$TMPDIR/hpc-hadoop-<owner>`` made by mallory: the daemons' working directory is not made in it; they run from
    the cluster directory (as when there is no room), and ``work_note`` holds the refusal."""
    monkeypatch.setenv("TMPDIR", str(local_root))
    mallory = make_user("hhmallory")
    hers = local_root / "hpc-hadoop-root"
    made = mallory.run(["sh", "-c", f"mkdir {hers} && chmod 777 {hers}"], cwd=Path("/"))
    assert made.returncode == 0, made.stderr
    plan = make_test_plan(make_spec(security="simple"))
    node = plan.nodes[1]
    assert Path(node.work_dir).is_relative_to(hers)
    plan.conf_dir.mkdir(parents=True)
    agent = Agent(plan, node)
    assert agent.prepare_work_dir() is None
    assert agent.work_note == (
        f"node-local working directory {node.work_dir} not usable ({hers} is not yours (owner hhmallory, mode 0777): "
        "hpc-hadoop uses no directory another user made (fix: remove it or ask hhmallory to (it is not yours), then "
        f"run again)); using {plan.run_dir}")
    assert list(hers.iterdir()) == []
    assert agent.choose_nm_local_dir() == node.nm_shared_dir  # the NodeManager's local dir goes there too
    # The owner's own, but writable by others (made with umask 000): as unsafe, refused too.
    hers.rmdir()
    hers.mkdir()
    hers.chmod(0o777)
    agent = Agent(plan, node)
    assert agent.prepare_work_dir() is None
    assert f"({hers} is writable by its group and others (owner root, mode 0777)" in str(agent.work_note)
    assert list(hers.iterdir()) == []


#: Run by :func:`test_a_nodemanager_lost_on_the_master_ends_its_containers_and_the_resourcemanager_runs_on` in a
#: process of its own, which becomes a child subreaper as the agent does (the pytest worker must not: the lost
#: NodeManager's end kills every other descendant). Bash loops stand in for the daemons; the NodeManager's stand-in
#: starts a "container" in a session of its own (``setsid``), as the real one does, orphaned when it is killed.
LOST_NM = r"""
import json, os, signal, subprocess, sys, time
from pathlib import Path
from launcher.node.agent import Agent, become_subreaper, kill_descendants
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.daemons import DaemonCommand

plan = ClusterPlan.load(sys.argv[1])
assert become_subreaper()
loop = "trap 'exit 143' TERM; while true; do sleep 0.05; done"
answer = {}


def daemon(agent, name, script):
    log = Path(plan.run_dir, f"{agent.node.name}-{name}.log")
    agent.commands[name] = DaemonCommand(name, ["bash", "-c", script], {}, log, log)
    agent.procs[name] = subprocess.Popen(["bash", "-c", script])
    return agent.procs[name]


try:
    for node in (plan.master, plan.nodes[1]):
        agent = Agent(plan, node)
        agent.requests = None
        flag = Path(plan.run_dir, f"container-{node.name}")
        if node is plan.master:
            daemon(agent, "resourcemanager", loop)
            agent.reaper = subprocess.Popen(["sleep", "300"], start_new_session=True)
        nm = daemon(agent, "nodemanager", f"setsid sleep 300 & echo $! > {flag}; {loop}")
        while not flag.exists() or not flag.read_text().strip():
            time.sleep(0.05)
        container = int(flag.read_text())
        assert agent.check() is None
        os.kill(nm.pid, signal.SIGKILL)
        nm.wait()
        reason = agent.check()
        assert agent.status.flush(10)
        written = Path(plan.run_dir, "agents", f"{node.name}.json")  # a worker writes it as it stops
        state = json.loads(written.read_text()) if written.exists() else {"state": None, "failed": None}
        time.sleep(0.2)
        try:
            alive = os.waitpid(container, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            alive = False
        answer[node.name] = {"reason": reason, "failed": agent.failed, "state": state["state"],
                             "state_failed": state["failed"], "container_alive": alive,
                             "others": {n: p.poll() for n, p in agent.procs.items() if n != "nodemanager"},
                             "reaper": agent.reaper.poll() if agent.reaper else "none"}
        for proc in [*agent.procs.values(), *([agent.reaper] if agent.reaper else [])]:
            proc.kill()
            proc.wait()
finally:
    kill_descendants()
print(json.dumps(answer))
"""


def test_a_nodemanager_lost_on_the_master_ends_its_containers_and_the_resourcemanager_runs_on(
        tmp_path: Path, make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan]) -> None:
    """Stop 51's CI: the ApplicationMaster ran on the master (``nodemanager_on_master``, the default) and its
    NodeManager was killed; the master's agent stopped the node, the ResourceManager with it, and the run failed where
    a worker's loss is survived. Now the master's agent ends the lost NodeManager's containers (the orphaned one
    here) and runs on with the ResourceManager and the reaper; its state file says the NodeManager failed, which the
    launcher tolerates while a step runs (tests/unit/fanout/test_fanout.py). A worker whose NodeManager was its only
    daemon stops, as before."""
    plan = make_test_plan(make_spec(security="simple"))
    assert "nodemanager" in plan.master.roles and plan.nodes[1].roles == ("nodemanager",)
    run_dir = Path(plan.run_dir)
    (run_dir / "agents").mkdir(parents=True)
    plan.conf_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "plan.json").write_text(plan.to_json())
    proc = subprocess.run([sys.executable, "-c", LOST_NM, str(run_dir)], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parents[3])
    assert proc.returncode == 0, proc.stderr
    master, worker = json.loads(proc.stdout)[plan.master.name], json.loads(proc.stdout)[plan.nodes[1].name]
    assert master == {"reason": None, "failed": {"nodemanager": -9}, "state": "starting",
                      "state_failed": {"nodemanager": -9}, "container_alive": False,
                      "others": {"resourcemanager": None}, "reaper": None}, master
    # the container, and the stand-in's own `sleep 0.05` when it was orphaned mid-sleep
    assert re.search(r"agent on n1: lost nodemanager \(-9\); [12] of its processes ended, the node's other "
                     "daemons run on", proc.stderr), proc.stderr
    assert worker["reason"] == "daemon exited: nodemanager (-9)" and worker["failed"] == {"nodemanager": -9}
