"""The fan-out: each launcher's ``wrap`` (launcher/fanout/{local,srun,pbsdsh,qrsh}.py) and the one process
manager (launcher/fanout/processes.py) that starts, polls and stops what they wrap.

How a process is stopped: the stop signal first, then SIGTERM, then SIGKILL; per-node launchers: SIGTERM to each
agent by its pid (``agents/<node>.json``), then SIGTERM and SIGKILL to the launcher processes left. Real processes
(bash) stand in for ``srun`` and the per-node launchers; the real ``srun`` forwarding SIGUSR1 to the agents is
tested on the Slurm test cluster (tests/integration/test_slurm.py: every agent reports ``stopped (SIGUSR1)`` and
the daemons' class-data-sharing archives are kept).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil
import pytest

from launcher.cluster.cluster import Cluster, agent_group
from launcher.config.spec import JobSpec
from launcher.fanout import AgentGroup, StepOptions, get_launcher, processes
from launcher.fanout.base import Launcher
from launcher.fanout.local import LocalLauncher
from launcher.fanout.pbsdsh import PbsdshLauncher, TmrshLauncher
from launcher.fanout.qrsh import QrshLauncher
from launcher.fanout.srun import SrunLauncher
from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.errors import ClusterError, UserError
from tests.conftest import REPO
from tests.unit.schedulers.test_pbs import STANDINS

#: Records each signal it gets in a file; exits 0 on the first one unless told to ignore it.
SCRIPT = """
for s in USR1 TERM; do trap "echo $s >> {log}; [ $s = {ignore} ] || exit 0" $s; done
echo started >> {log}
while true; do sleep 0.05; done
"""

#: A stand-in agent for per-node launchers: writes ``agents/<node>.json`` with its pid, logs ``<node> started
#: <args>`` and each SIGTERM as ``<node> TERM``; exits 0 on SIGTERM unless ``$IGNORE_TERM`` is set.
AGENT = """
node=$HPC_HADOOP_NODE
trap 'echo "$node TERM" >> "$LOG"; [ -n "$IGNORE_TERM" ] || exit 0' TERM
mkdir -p "$RUN_DIR/agents"
echo "{\\"node\\": \\"$node\\", \\"pid\\": $$}" > "$RUN_DIR/agents/$node.json"
echo "$node started $*" >> "$LOG"
while true; do sleep 0.05; done
"""


class BashLauncher(Launcher):
    """A launcher covering every node whose command is a bash loop that logs the signals it receives."""

    name = "bash"
    stop_signal = signal.SIGUSR1

    def __init__(self, log: Path, ignore: str = "none") -> None:
        self.log, self.ignore = log, ignore

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        return ["bash", "-c", SCRIPT.format(log=self.log, ignore=self.ignore)]


class TermBashLauncher(BashLauncher):
    """A launcher whose stop signal is SIGTERM (as ``local``): it goes straight to SIGKILL."""

    stop_signal = signal.SIGTERM


class RecordingLauncher(Launcher):
    """A per-node launcher passing no signal on (as ``pbsdsh``): runs ``argv`` here, recording ``HOST ARGV...``
    in ``calls``; the launcher process is the command itself (``exec``), as with the PBS stand-ins."""

    name = "recording"
    per_node = True
    stop_signal = None

    def __init__(self, calls: Path) -> None:
        self.calls = calls

    def wrap(self, argv: Sequence[str], nodes: Sequence[str], *, options: StepOptions | None = None) -> list[str]:
        host = self.one_node(nodes)
        return ["bash", "-c", f'echo "$0 $*" >> {shlex.quote(str(self.calls))}; exec "$@"', host, *argv]


def wait_for(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def start(launcher: BashLauncher, tmp_path: Path) -> AgentGroup:
    group = AgentGroup(launcher, tmp_path, ["n1"], [])
    group.start()
    wait_for(lambda: launcher.log.exists() and "started" in launcher.log.read_text())
    return group


# -- wrap ---------------------------------------------------------------------------------------
AGENT_ARGV = ["/py", "-m", "launcher.node.agent", "/pfs/run"]


def test_every_name_is_registered_and_unknown_names_are_refused() -> None:
    classes = {name: type(get_launcher(name)) for name in ("local", "srun", "pbsdsh", "pbs_tmrsh", "qrsh")}
    assert classes == {"local": LocalLauncher, "srun": SrunLauncher, "pbsdsh": PbsdshLauncher,
                       "pbs_tmrsh": TmrshLauncher, "qrsh": QrshLauncher}
    assert [get_launcher(n).name for n in classes] == list(classes)
    with pytest.raises(UserError, match="unknown fan-out launcher 'ssh'"):
        get_launcher("ssh")


def test_local_wrap_is_argv_as_is() -> None:
    assert LocalLauncher().wrap(["dd", "if=/dev/zero"], ["n1"]) == ["dd", "if=/dev/zero"]
    assert LocalLauncher.runs_here and not LocalLauncher.per_node and LocalLauncher.stop_signal == signal.SIGTERM


def test_srun_wrap_one_step_over_all_nodes() -> None:
    assert SrunLauncher().wrap(["hostname"], ["n1", "n2"]) == [
        "srun", "--overlap", "--export=ALL", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=n1,n2",
        "hostname"]
    options = StepOptions(output="/r/logs/agent-%N.out", cpus_per_task=8, job_name="j", kill_on_bad_exit=False,
                          cpu_bind="none")
    assert SrunLauncher().wrap(["a", "b c"], ["n3"], options=options) == [
        "srun", "--overlap", "--export=ALL", "--nodes=1", "--ntasks=1", "--ntasks-per-node=1", "--nodelist=n3",
        "--kill-on-bad-exit=0", "--cpu-bind=none", "--cpus-per-task=8", "--job-name=j",
        "--output=/r/logs/agent-%N.out", "a", "b c"]
    with pytest.raises(ValueError, match="at least one node"):
        SrunLauncher().wrap(["a"], [])


def test_srun_is_asked_with_sigusr1_which_it_forwards() -> None:
    assert SrunLauncher.stop_signal == signal.SIGUSR1 and Launcher.stop_signal == signal.SIGTERM
    assert not SrunLauncher.per_node


def test_pbsdsh_wrap_passes_words_as_they_are() -> None:
    assert PbsdshLauncher().wrap(["sh", "-c", "echo a b"], ["n2"]) == ["pbsdsh", "-h", "n2", "sh", "-c", "echo a b"]


@pytest.mark.parametrize("name,prefix", [("pbs_tmrsh", ["pbs_tmrsh", "n2"]),
                                         ("qrsh", ["qrsh", "-inherit", "-nostdin", "-V", "n2"])])
def test_space_joining_launchers_quote_each_word(name: str, prefix: list[str]) -> None:
    """pbs_tmrsh and qrsh join the words with spaces for the remote shell: the joined line, run by ``sh -c``,
    gives back exactly the words we passed."""
    words = ["printf", "%s|", "a b", "it's", "$HOME", "*", ""]
    wrapped = get_launcher(name).wrap(words, ["n2"])
    assert wrapped[:len(prefix)] == prefix and wrapped[len(prefix):] == [shlex.quote(w) for w in words]
    line = " ".join(wrapped[len(prefix):])
    assert subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True).stdout == "a b|it's|$HOME|*||"


@pytest.mark.parametrize("name", ["pbsdsh", "pbs_tmrsh", "qrsh"])
def test_per_node_launchers_take_exactly_one_node_and_stop_agents_by_pid(name: str) -> None:
    launcher = get_launcher(name)
    assert launcher.per_node and launcher.stop_signal is None and not launcher.runs_here
    for nodes in ([], ["n1", "n2"]):
        with pytest.raises(ValueError, match="one node at a time"):
            launcher.wrap(["true"], nodes)


# -- the agents' commands ------------------------------------------------------------------------
def test_srun_agent_step(tmp_path: Path) -> None:
    group = AgentGroup(SrunLauncher(), "/pfs/run", ["n1", "n2", "n3"], AGENT_ARGV, cores=8)
    assert [c.argv for c in group.commands()] == [[
        "srun", "--overlap", "--export=ALL", "--nodes=3", "--ntasks=3", "--ntasks-per-node=1", "--nodelist=n1,n2,n3",
        "--kill-on-bad-exit=0", "--cpu-bind=none", "--cpus-per-task=8", "--job-name=hpc-hadoop-agents",
        "--output=/pfs/run/logs/agent-%N.out", *AGENT_ARGV]]
    assert group.command("n2") == group.command("n1") and group.commands()[0].env == {}
    assert group.log_file == Path("/pfs/run/logs/fanout-srun.log")


def test_per_node_agents_get_their_node() -> None:
    group = AgentGroup(QrshLauncher(), "/pfs/run", ["n1", "n2"], AGENT_ARGV)
    commands = group.commands()
    assert [c.nodes for c in commands] == [("n1",), ("n2",)]
    assert [c.env for c in commands] == [{"HPC_HADOOP_NODE": "n1"}, {"HPC_HADOOP_NODE": "n2"}]
    assert group.command("n2") == ["qrsh", "-inherit", "-nostdin", "-V", "n2", *AGENT_ARGV, "--node", "n2"]
    with pytest.raises(KeyError):
        group.command("n9")


def test_local_agent_watches_the_launcher() -> None:
    group = AgentGroup(LocalLauncher(), "/pfs/run", ["vm"], AGENT_ARGV)
    assert group.command("vm") == [*AGENT_ARGV, "--node", "vm", "--watch-pid", str(os.getpid())]
    with pytest.raises(ValueError, match="at least one node"):
        AgentGroup(LocalLauncher(), "/pfs/run", [], AGENT_ARGV)


# -- one process for all nodes: stopped by a signal ------------------------------------------------
def test_stop_signal_first_and_the_process_ends_by_itself(tmp_path: Path) -> None:
    launcher = BashLauncher(tmp_path / "signals")
    group = start(launcher, tmp_path)
    assert group.running()
    assert group.stop(timeout=10) == 0 and not group.running()
    assert launcher.log.read_text().split() == ["started", "USR1"]
    assert group.log_file == tmp_path / "logs" / "fanout-bash.log" and group.log_file.exists()


def test_sigterm_when_the_stop_signal_is_not_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "FORCE_SECONDS", 5.0)
    launcher = BashLauncher(tmp_path / "signals", ignore="USR1")
    group = start(launcher, tmp_path)
    assert group.stop(timeout=0.5) == 0
    assert launcher.log.read_text().split() == ["started", "USR1", "TERM"]


def test_sigkill_when_nothing_else_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "FORCE_SECONDS", 0.5)
    launcher = TermBashLauncher(tmp_path / "signals", ignore="TERM")  # a SIGTERM stop signal: then SIGKILL
    group = start(launcher, tmp_path)
    began = time.monotonic()
    assert group.stop(timeout=0.5) == -signal.SIGKILL
    assert time.monotonic() - began < 5
    assert launcher.log.read_text().split() == ["started", "TERM"]


def test_not_started_is_not_running_and_stops_as_nothing(tmp_path: Path) -> None:
    group = AgentGroup(BashLauncher(tmp_path / "signals"), tmp_path, ["n1"], [])
    assert not group.running() and group.stop(timeout=1) is None


# -- one process per node: agents stopped by pid ----------------------------------------------------
def start_per_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nodes: list[str],
                   ignore_term: bool = False) -> tuple[AgentGroup, Path, Path]:
    log, calls = tmp_path / "agents.log", tmp_path / "calls"
    monkeypatch.setenv("LOG", str(log))
    monkeypatch.setenv("RUN_DIR", str(tmp_path))
    monkeypatch.setenv("IGNORE_TERM", "1" if ignore_term else "")
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    group = AgentGroup(RecordingLauncher(calls), tmp_path, nodes, ["bash", str(agent), "RUN"])
    group.start()
    wait_for(lambda: len(list((tmp_path / "agents").glob("*.json"))) == len(nodes))
    wait_for(lambda: log.exists() and log.read_text().count("started") == len(nodes))
    return group, log, calls


def test_per_node_starts_one_process_per_node_with_its_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group, log, calls = start_per_node(tmp_path, monkeypatch, ["n1", "n2", "n3"])
    assert group.running()
    assert sorted(log.read_text().splitlines()) == [f"{n} started RUN --node {n}" for n in ("n1", "n2", "n3")]
    agent = tmp_path / "agent.sh"
    assert sorted(calls.read_text().splitlines()) == [f"{n} bash {agent} RUN --node {n}" for n in ("n1", "n2", "n3")]
    pid = group.agent_pid("n2")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # one agent gone: the group no longer runs
    wait_for(lambda: not group.running())
    assert not group.running()
    group.stop(timeout=5)


def test_per_node_stops_each_agent_by_pid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other nodes through ``wrap(["kill", "-TERM", PID], [host])``; this host (``localhost``) directly."""
    group, log, calls = start_per_node(tmp_path, monkeypatch, ["localhost", "n2", "n3"])
    pids = {n: group.agent_pid(n) for n in ("localhost", "n2", "n3")}
    assert group.stop(timeout=20) == 0 and not group.running()
    assert sorted(line for line in log.read_text().splitlines() if "TERM" in line) == [
        "localhost TERM", "n2 TERM", "n3 TERM"]
    kills = sorted(line for line in calls.read_text().splitlines() if " kill " in line)
    assert kills == [f"n2 kill -TERM {pids['n2']}", f"n3 kill -TERM {pids['n3']}"]
    assert "localhost kill" not in calls.read_text()


def test_per_node_escalates_to_sigterm_then_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent that ignores SIGTERM: after ``timeout`` its launcher process gets SIGTERM (here the same
    process, which logs it again), and SIGKILL :data:`NODE_FORCE_SECONDS` later."""
    monkeypatch.setattr(processes, "NODE_FORCE_SECONDS", 0.5)
    group, log, _ = start_per_node(tmp_path, monkeypatch, ["localhost", "n2"], ignore_term=True)
    began = time.monotonic()
    assert group.stop(timeout=0.5) == -signal.SIGKILL and not group.running()
    assert time.monotonic() - began < 5
    terms = sorted(line for line in log.read_text().splitlines() if "TERM" in line)
    assert terms == ["localhost TERM", "localhost TERM", "n2 TERM", "n2 TERM"]


def test_agent_pid_from_the_state_file(tmp_path: Path) -> None:
    group = AgentGroup(PbsdshLauncher(), tmp_path, ["n1"], [])
    assert group.agent_pid("n1") is None
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "n1.json").write_text(json.dumps({"pid": 4321}))
    (tmp_path / "agents" / "n2.json").write_text("{not json")
    assert group.agent_pid("n1") == 4321 and group.agent_pid("n2") is None


# -- the cluster's agents ----------------------------------------------------------------------------
def test_cluster_runs_the_agents_through_the_plans_launcher(make_test_plan: Callable[..., ClusterPlan],
                                                            make_spec: Callable[..., JobSpec]) -> None:
    plan = make_test_plan(make_spec())
    cluster = Cluster(plan)
    try:
        assert isinstance(cluster.fanout.launcher, SrunLauncher) and plan.fanout == "srun"
        assert cluster.fanout.command("n1")[-4:] == [sys.executable, "-m", "launcher.node.agent", plan.run_dir]
        assert "--cpus-per-task=8" in cluster.fanout.command("n1")
        with pytest.raises(ClusterError, match="the agents stopped during bring-up; read .*/logs/fanout-srun.log"):
            cluster.raise_if_failed()
    finally:
        cluster.http.close()
    assert agent_group(plan, "local").command("n1")[-4:-2] == ["--node", "n1"]


def test_a_lost_nodemanager_is_tolerated_while_a_step_runs_the_masters_while_its_agent_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_test_plan: Callable[..., ClusterPlan],
        make_spec: Callable[..., JobSpec]) -> None:
    """Issue 13 item 1: n3's agent (a real process) exits after its NodeManager died; the cluster is still whole
    enough for a step (n1, the master, and n2 run), but not for bring-up. The master's NodeManager lost too (stop 51's
    CI: the ApplicationMaster's node was the master): tolerated while its agent runs on (the ResourceManager), not
    once that agent is gone or another daemon of the master failed; every NodeManager lost ends the step."""
    plan = make_test_plan(make_spec())
    group, _, _ = start_per_node(tmp_path, monkeypatch, ["n1", "n2", "n3"])
    cluster = Cluster(plan, fanout=group)
    agents = plan.path("agents")
    agents.mkdir(parents=True)
    try:
        for node in ("n1", "n2", "n3"):
            (agents / f"{node}.json").write_text(json.dumps({"pid": group.agent_pid(node), "failed": {}}))
        os.kill(group.agent_pid("n3") or 0, signal.SIGKILL)
        wait_for(lambda: not group.running())
        (agents / "n3.json").write_text(json.dumps({"failed": {"nodemanager": -9}, "failed_at": {"nodemanager": 5.0},
                                                    "daemons": {"nodemanager": {"log": "nm.log", "out": "nm.out"}}}))
        assert cluster.lost_nodes() == {"n3": {"daemon": "nodemanager", "exit": -9, "at": 5.0}}
        cluster.raise_if_failed("while step 1 ran", tolerate_lost=True)
        assert group.running(ignore={"n3"}) and not group.running(ignore={"n2"})
        with pytest.raises(ClusterError, match="nodemanager on n3 exited with code -9 during bring-up"):
            cluster.raise_if_failed()
        daemons = {d: {"log": f"{d}.log", "out": f"{d}.out"} for d in ("nodemanager", "resourcemanager")}
        (agents / "n1.json").write_text(json.dumps({"pid": group.agent_pid("n1"), "failed": {"nodemanager": 1},
                                                    "daemons": daemons}))
        assert sorted(cluster.raise_if_failed("while step 1 ran", tolerate_lost=True)) == ["n1", "n3"]
        (agents / "n1.json").write_text(json.dumps({"pid": group.agent_pid("n1"),
                                                    "failed": {"nodemanager": 1, "resourcemanager": -9},
                                                    "daemons": daemons}))
        with pytest.raises(ClusterError, match="nodemanager on n1 exited with code 1 while step 1 ran"):
            cluster.raise_if_failed("while step 1 ran", tolerate_lost=True)
        (agents / "n1.json").write_text(json.dumps({"pid": group.agent_pid("n1"), "failed": {"nodemanager": 1},
                                                    "daemons": daemons}))
        (agents / "n2.json").write_text(json.dumps({"failed": {"nodemanager": -9}, "daemons": daemons}))
        with pytest.raises(ClusterError, match=r"every NodeManager is lost while step 1 ran \(n1, n2, n3\)"):
            cluster.raise_if_failed("while step 1 ran", tolerate_lost=True)
        (agents / "n2.json").write_text(json.dumps({"pid": group.agent_pid("n2"), "failed": {}}))
        os.kill(group.agent_pid("n1") or 0, signal.SIGKILL)
        wait_for(lambda: not group.running(ignore={"n3"}))
        with pytest.raises(ClusterError, match="the agents stopped while step 1 ran"):
            cluster.raise_if_failed("while step 1 ran", tolerate_lost=True)
    finally:
        group.stop(timeout=5)
        cluster.http.close()


# -- nothing started here leaves the job's process tree (issue 17 item 11) --------------------------------------
#: A process that starts one agent through the launcher ``argv[1]`` (into ``argv[2]``), prints the launcher
#: process's pid and waits: it plays ``hpc-hadoop run``, which the batch system kills.
PARENT = """
import sys, time
from launcher.fanout import AgentGroup, get_launcher
group = AgentGroup(get_launcher(sys.argv[1]), sys.argv[2], ["localhost"],
                   [sys.executable, "-c", "import time; time.sleep(120)"])
group.start()
print(group._procs[0][1].pid, flush=True)
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("name", ["local", "pbsdsh"])
def test_launcher_processes_stay_in_the_job_and_end_with_their_parent(name: str, tmp_path: Path) -> None:
    """A Torque MoM's ``qdel`` kills the job's session, SIGKILL 26 ms after SIGTERM: a ``pbsdsh`` client started in
    a session of its own outlived the job by over 76 s. The launcher processes now stay in the session of the
    process that starts them (a process group of their own, out of reach of a terminal's Ctrl-C), and get SIGTERM
    when it dies, by SIGKILL too (``PR_SET_PDEATHSIG``); the stand-in ``pbsdsh`` passes it on to its task as the
    real one does."""
    standin = tmp_path / "standin"
    env = {**os.environ, "PATH": f"{STANDINS}{os.pathsep}{os.environ['PATH']}", "PBS_STANDIN_DIR": str(standin),
           "PBS_JOBID": "1.standin"}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, name, str(tmp_path / "run")], stdout=subprocess.PIPE,
                              text=True, env=env, cwd=REPO, start_new_session=True)
    started: list[int] = [parent.pid]
    try:
        assert parent.stdout is not None
        client = int(parent.stdout.readline())
        tasks = standin / "1.standin.tasks"
        if name == "pbsdsh":
            wait_for(lambda: tasks.exists() and tasks.read_text().strip())
        task = int(tasks.read_text().split()[0]) if name == "pbsdsh" else client
        started += [client, task]
        assert os.getsid(client) == parent.pid  # the parent's session: the batch system's kill reaches it
        assert os.getpgid(client) == client != os.getpgid(parent.pid)  # its own process group
        parent.kill()
        parent.wait()
        wait_for(lambda: not alive(client) and not alive(task))
        assert not alive(client) and not alive(task)
    finally:
        for pid in started:  # what a failed run of this test would leave
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
