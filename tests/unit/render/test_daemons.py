"""Where the daemons work (issue 18): a node-local working directory that keeps their start-up off the shared
filesystem, and a ResourceManager retry policy that lets NodeManagers register as soon as it listens.

The agent's directory handling runs for real on this machine's filesystem; the daemons themselves run in the
integration tests (``tests/integration/test_interactive.py`` checks their current directory, environment and
``java.io.tmpdir`` while they run, and that nothing is left after ``stop``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.node.agent import Agent
from launcher.plan.cluster_plan import ClusterPlan, node_work_root
from launcher.render.config import RM_JIT_DIRECTIVES, render_config, write_files
from launcher.render.daemons import DaemonCommand, client_command, daemon_command, format_command, hadoop_env
from launcher.runtime.hadoop import QUICK_JIT_GC_FLAGS
from launcher.security.kdc import Kdc, make_realm_dir, publish_keys
from launcher.security.keytabs import open_node_keys
from launcher.security.webauth import write_secrets
from launcher.util.sealed import KEY_ENV, new_key
from tests.unit.render.test_config import single

PlanFactory = Callable[..., ClusterPlan]


@pytest.fixture
def plan(make_spec: Callable[..., JobSpec], make_test_plan: PlanFactory, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> ClusterPlan:
    """A 3-node plan whose node-local root is ``tmp_path/node-tmp`` (``$TMPDIR``), with ``conf/`` written."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "node-tmp"))
    plan = make_test_plan(make_spec())
    write_files(plan.conf_dir, render_config(plan))
    if plan.security.kerberos:  # what the KDC and the launcher wrote before the agents start (bring-up)
        make_realm_dir(plan)
        plan.security.services_keytab.write_bytes(b"\x05\x02 keys of the realm")
        plan.security.services_keytab.chmod(0o600)
        plan.security.kdc_krb5_conf.write_text("[libdefaults]\n")
        write_secrets(plan)
        key = new_key()
        publish_keys(plan, key)
        monkeypatch.setenv(KEY_ENV, key)  # what the fan-out's command carries to the agents
    return plan


def test_each_node_gets_its_own_work_dir_under_tmpdir(plan: ClusterPlan, tmp_path: Path) -> None:
    root = tmp_path / "node-tmp" / f"hpc-hadoop-{plan.user}"
    assert [n.work_dir for n in plan.nodes] == [str(root / plan.cluster_id / n.name) for n in plan.nodes]
    assert not any(Path(n.work_dir).is_relative_to(plan.run_dir) for n in plan.nodes)
    # A plan read back from plan.json keeps them; a plan.json written before them reads as "none".
    assert ClusterPlan.from_json(plan.to_json()).nodes == plan.nodes
    old = plan.to_json().replace(f'"work_dir": "{plan.nodes[0].work_dir}"', '"work_dir": ""')
    assert ClusterPlan.from_json(old).nodes[0].work_dir == ""


@pytest.mark.parametrize("tmpdir", ["", "relative/tmp"])
def test_work_root_is_tmp_without_an_absolute_tmpdir(tmpdir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", tmpdir)
    assert node_work_root("alice") == Path("/tmp/hpc-hadoop-alice")


def test_daemon_command_reads_conf_and_temp_files_from_the_work_dir(plan: ClusterPlan) -> None:
    node = plan.nodes[0]
    work = Path(node.work_dir)
    command = daemon_command(plan, node, "resourcemanager", work_dir=work)
    argv = command.argv
    assert command.env["HADOOP_CONF_DIR"] == str(work / "conf")
    assert argv[argv.index("-cp") + 1].split(":")[-1] == str(work / "conf")
    assert f"-Djava.io.tmpdir={work / 'tmp'}" in argv
    assert f"-Dlog4j.configuration=file:{work / 'conf'}/log4j.properties" in argv
    # Logs and crash reports stay in the cluster directory, readable after the node is gone.
    assert f"-Dhadoop.log.dir={node.log_dir}" in argv and f"-XX:ErrorFile={node.log_dir}/hs_err_pid%p.log" in argv
    assert command.log == Path(node.log_dir, "resourcemanager.log")
    # NameNode -format (hdfs mode) runs the same way.
    assert format_command(plan, node, work).env["HADOOP_CONF_DIR"] == str(work / "conf")
    # Without a work dir: the shared conf/ (what the agent falls back to).
    shared = daemon_command(plan, node, "resourcemanager")
    assert shared.env["HADOOP_CONF_DIR"] == str(plan.conf_dir)
    assert not any(a.startswith("-Djava.io.tmpdir=") for a in shared.argv)


def test_agent_prepares_a_private_copy_of_conf_and_removes_it(plan: ClusterPlan) -> None:
    agent = Agent(plan, plan.nodes[1])
    work = agent.prepare_work_dir()
    assert work == Path(plan.nodes[1].work_dir) and agent.work_note is None and agent.cwd == work
    assert sorted(p.name for p in (work / "conf").iterdir()) == sorted(p.name for p in plan.conf_dir.iterdir())
    assert (work / "conf" / "yarn-site.xml").read_text() == (plan.conf_dir / "yarn-site.xml").read_text()
    assert (work / "tmp").is_dir() and not any((work / "tmp").iterdir())
    for path in (work, work.parent.parent):
        assert path.stat().st_mode & 0o777 == 0o700, path
    agent.remove_work_dir()
    assert not work.exists() and [p.name for p in work.parent.iterdir()] == ["_realm"]  # the KDC's, below
    Kdc(plan).stop()
    assert not work.parent.exists()  # the cluster's level too, once empty
    assert work.parent.parent.is_dir()  # the per-user root stays for the user's other clusters


def test_agent_falls_back_to_the_cluster_directory_and_says_why(plan: ClusterPlan, tmp_path: Path) -> None:
    shutil.rmtree(tmp_path / "node-tmp" / f"hpc-hadoop-{plan.user}")  # the realm's directory the fixture made
    (tmp_path / "node-tmp" / f"hpc-hadoop-{plan.user}").write_text("a file where the directory should be")
    agent = Agent(plan, plan.nodes[0])
    assert agent.prepare_work_dir() is None
    assert agent.work_note and "not usable" in agent.work_note and plan.run_dir in agent.work_note
    assert agent.cwd == Path(plan.nodes[0].log_dir)
    agent.remove_work_dir()  # nothing to remove: no error


def test_nodemanagers_retry_the_resourcemanager_at_once(plan: ClusterPlan) -> None:
    """Hadoop's default: 10 IPC tries 1 s apart, then 30 s of sleep (yarn.resourcemanager.connect.retry-interval.ms)
    before the next 10: NodeManagers started with a ResourceManager that takes over 10 s to listen waited up to
    30 s more. Now both steps are 250 ms."""
    files = render_config(plan)
    yarn, core = single(files["yarn-site.xml"]), single(files["core-site.xml"])
    assert int(yarn["yarn.nodemanager.resourcemanager.connect.retry-interval.ms"]) == 250
    assert int(core["ipc.client.connect.retry.interval"]) == 250
    # The wait stays bounded by Hadoop's own maximum (15 min), far beyond the launcher's bring-up timeout.
    assert "yarn.nodemanager.resourcemanager.connect.max-wait.ms" not in yarn


def test_resourcemanager_stores_are_per_cluster(plan: ClusterPlan) -> None:
    """Issue 11 item 10: two clusters of one user on one node shared /tmp/hadoop-yarn-<user>/node-attribute and the
    second ResourceManager died on the first one's ``nodeattribute.mirror.writing``. Now each store is under
    ``hpc.node.tmp``, which every daemon gets as its cluster's node-local scratch."""
    yarn, core = single(render_config(plan)["yarn-site.xml"]), single(render_config(plan)["core-site.xml"])
    for key, leaf in (("yarn.node-attribute.fs-store.root-dir", "node-attribute"),
                      ("yarn.node-labels.fs-store.root-dir", "node-labels")):
        assert yarn[key] == f"file://${{hpc.node.tmp}}/{leaf}"
    assert core["hpc.node.tmp"].startswith(plan.run_dir)  # the default, for a process without -Dhpc.node.tmp
    node = plan.nodes[0]
    work = Path(node.work_dir)
    assert f"-Dhpc.node.tmp={work / 'tmp'}" in daemon_command(plan, node, "resourcemanager", work_dir=work).argv
    shared = daemon_command(plan, node, "resourcemanager").argv
    assert f"-Dhpc.node.tmp={Path(plan.run_dir, 'tmp', node.name)}" in shared
    other = plan.nodes[1]
    assert f"-Dhpc.node.tmp={Path(plan.run_dir, 'tmp', other.name)}" in daemon_command(plan, other, "nodemanager").argv


#: A stand-in daemon: logs when it gets SIGTERM (monotonic ns), exits 143 like a JVM.
DAEMON = 'trap "date +%s%N >> {log}; exit 143" TERM; while true; do sleep 0.05; done'


def _stand_in(agent: Agent, name: str, log: Path) -> None:
    agent.procs[name] = subprocess.Popen(["bash", "-c", DAEMON.format(log=log)])


def test_master_stops_the_resourcemanager_after_the_other_nodes(plan: ClusterPlan, tmp_path: Path) -> None:
    """Real processes stand in for the daemons. The NodeManagers elsewhere unregister from the ResourceManager
    as they stop: it must outlive them (they hung until SIGKILL when it went first)."""
    plan.path("agents").mkdir(parents=True)
    agent = Agent(plan, plan.nodes[0])
    _stand_in(agent, "nodemanager", tmp_path / "nm")
    _stand_in(agent, "resourcemanager", tmp_path / "rm")
    time.sleep(0.3)
    peers = [plan.path("agents", f"{n.name}.json") for n in plan.nodes[1:]]
    for peer in peers:
        peer.write_text(json.dumps({"state": "stopping"}))

    def peers_stop() -> None:
        time.sleep(1.0)
        for peer in peers:
            peer.write_text(json.dumps({"state": "stopped"}))

    threading.Thread(target=peers_stop).start()
    began = time.time_ns()
    agent.stop()
    nm, rm = (int((tmp_path / d).read_text()) for d in ("nm", "rm"))
    assert nm < began + 500_000_000 and rm - began >= 900_000_000, (nm - began, rm - began)
    assert {n: p.returncode for n, p in agent.procs.items()} == {"nodemanager": 143, "resourcemanager": 143}
    assert agent.status.flush(5.0)  # written by its own thread (the agent's main() waits for it too)
    assert json.loads(plan.path("agents", f"{plan.nodes[0].name}.json").read_text())["state"] == "stopped"


def test_master_does_not_wait_forever_for_a_stuck_peer(plan: ClusterPlan, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("launcher.node.agent.PEER_WAIT_SECONDS", 0.5)
    plan.path("agents").mkdir(parents=True)
    plan.path("agents", f"{plan.nodes[1].name}.json").write_text(json.dumps({"state": "running"}))
    agent = Agent(plan, plan.nodes[0])
    _stand_in(agent, "resourcemanager", tmp_path / "rm")
    began = time.monotonic()
    agent.stop()
    assert 0.5 <= time.monotonic() - began < 5 and agent.procs["resourcemanager"].returncode == 143


def test_nodemanager_dir_is_node_local_when_the_working_directory_has_room(plan: ClusterPlan) -> None:
    agent = Agent(plan, plan.nodes[1])
    assert agent.prepare_work_dir() is not None
    chosen = agent.choose_nm_local_dir()
    assert chosen == f"{agent.work_dir}/nm-local" and agent.nm_note is None
    command = daemon_command(plan, plan.nodes[1], "nodemanager", work_dir=agent.work_dir, nm_local_dir=chosen)
    assert f"-Dhpc.nm.local.dir={chosen}" in command.argv
    agent.remove_work_dir()
    assert not Path(chosen).exists()  # deleted with the working directory at teardown


def test_nodemanager_dir_falls_back_to_the_cluster_directory(plan: ClusterPlan,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A node whose working directory cannot be made, and one with too little room there. The second stands in a
    small RAM disk by the free-space figure (shutil.disk_usage); the directory itself is real."""
    node = plan.nodes[2]
    agent = Agent(plan, node)
    agent.work_note = "no space"
    assert agent.choose_nm_local_dir() == node.nm_shared_dir and "no node-local working directory" in str(agent.nm_note)
    agent = Agent(plan, node)
    assert agent.prepare_work_dir() is not None
    real = shutil.disk_usage

    def small(path: str | Path) -> shutil._ntuple_diskusage:  # type: ignore[name-defined]
        usage = real(path)
        return type(usage)(usage.total, usage.total - (100 << 20), 100 << 20)

    monkeypatch.setattr(shutil, "disk_usage", small)
    assert agent.choose_nm_local_dir() == node.nm_shared_dir == str(plan.path("nm-local", node.name))
    assert "has 100 MiB free, less than 2048 MiB" in str(agent.nm_note)
    agent.remove_work_dir()


def test_per_cluster_daemons_and_clients_read_the_realms_krb5_conf(make_spec: Callable[..., JobSpec],
                                                                  make_test_plan: Callable[..., ClusterPlan]) -> None:
    """Issue 27: every daemon JVM reads the cluster's krb5.conf; its environment names the owner's ticket cache."""
    secure = make_test_plan(make_spec(security="per-cluster"))
    krb5 = f"-Djava.security.krb5.conf={secure.security.krb5_conf}"
    command = daemon_command(secure, secure.master, "resourcemanager")
    assert krb5 in command.argv and command.env["KRB5CCNAME"] == f"FILE:{secure.security.ccache}"
    assert krb5 in client_command(secure, "org.example.Main", [])
    assert hadoop_env(secure, base={})["KRB5_CONFIG"] == str(secure.security.krb5_conf)
    simple = make_test_plan(make_spec(security="simple"))
    assert not any("krb5" in arg for arg in daemon_command(simple, simple.master, "resourcemanager").argv)
    assert "KRB5CCNAME" not in hadoop_env(simple, base={})


def test_daemons_log_in_from_a_node_local_copy_of_the_keytab(plan: ClusterPlan) -> None:
    """Issue 27 item 1: the keytab properties name ``${hpc.node.krb}``, which each daemon gets on its command line as
    its node's ``<work_dir>/krb`` (the agent's copy), or the realm's own node-local directory when it has no work dir
    (issue 36 item 5: never the shared filesystem)."""
    security = plan.security
    assert security.kerberos  # the default (per-cluster)
    node = plan.nodes[1]
    work = Path(node.work_dir)
    argv = daemon_command(plan, node, "nodemanager", work_dir=work).argv
    assert f"-Dhpc.node.krb={work / 'krb'}" in argv and argv.index(f"-Dhpc.node.krb={work / 'krb'}") < argv.index("-cp")
    assert f"-Dhpc.node.krb={security.realm_dir}" in daemon_command(plan, node, "nodemanager").argv
    assert not security.realm_dir.is_relative_to(plan.run_dir)
    assert f"-Dhpc.node.krb={work / 'krb'}" in format_command(plan, node, work).argv
    assert not any("hpc.node.krb" in arg for arg in client_command(plan, "org.example.Main", []))  # clients: none


def test_each_daemon_names_its_own_cookie_secret(plan: ClusterPlan) -> None:
    """Issue 36: ``hadoop.http.authentication.signature.secret.file`` is ``${hpc.http.secret}``, which each web server
    gets as its own secret (a cookie signed for one opens no other), node-local beside its keytab; clients get none."""
    node = plan.nodes[1]
    work = Path(node.work_dir)
    nm = daemon_command(plan, node, "nodemanager", work_dir=work).argv
    rm = daemon_command(plan, plan.master, "resourcemanager").argv
    assert f"-Dhpc.http.secret={work / 'krb' / f'http-nodemanager-{node.name}.secret'}" in nm
    assert f"-Dhpc.http.secret={plan.security.realm_dir / f'http-resourcemanager-{plan.master.name}.secret'}" in rm
    assert nm.index(next(a for a in nm if a.startswith("-Dhpc.http.secret="))) < nm.index("-cp")
    assert not any("hpc.http.secret" in arg for arg in client_command(plan, "org.example.Main", []))


def test_simple_daemons_get_no_keytab_directory(make_spec: Callable[..., JobSpec],
                                                make_test_plan: Callable[..., ClusterPlan]) -> None:
    simple = make_test_plan(make_spec(security="simple"))
    assert not any("hpc.node.krb" in arg for arg in daemon_command(simple, simple.master, "resourcemanager").argv)


def test_the_cluster_directory_holds_no_key_in_the_clear(plan: ClusterPlan) -> None:
    """Issue 36 item 5: on the shared filesystem only the realm's ``krb5.conf`` and one sealed file per node; none
    holds the keytab's or a secret's bytes."""
    krb = plan.security.krb_dir
    files = sorted(str(p.relative_to(krb)) for p in krb.rglob("*") if p.is_file())
    assert files == ["krb5.conf", *sorted(f"sealed/{n.name}.bin" for n in plan.nodes)]
    keys = [plan.security.services_keytab.read_bytes(), plan.security.http_secret.read_bytes()]
    for path in krb.rglob("*.bin"):
        assert not any(key in path.read_bytes() for key in keys) and path.stat().st_mode & 0o777 == 0o600


def test_agent_opens_its_sealed_keys_privately_before_it_starts_any_daemon(plan: ClusterPlan,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The keytab is 0600 in a 0700 ``<work_dir>/krb`` when the first daemon is spawned (the spawn is recorded, not
    run), beside the cookie secrets of this node's web servers only, the daemon is pointed at it, and it goes with
    the working directory at the end."""
    node = plan.nodes[1]
    agent = Agent(plan, node)
    copy = Path(node.work_dir, "krb", "services.keytab")
    seen: list[tuple[str, str, int, int]] = []

    def spawn(command: DaemonCommand) -> None:
        seen.append((command.name, next(a for a in command.argv if a.startswith("-Dhpc.node.krb=")),
                     copy.stat().st_mode & 0o777, copy.parent.stat().st_mode & 0o777))

    monkeypatch.setattr(agent, "spawn", spawn)
    umask = os.umask(0o022)
    try:
        agent.start()
    finally:
        os.umask(umask)
    assert seen and all(entry[1:] == (f"-Dhpc.node.krb={copy.parent}", 0o600, 0o700) for entry in seen), seen
    assert copy.read_bytes() == plan.security.services_keytab.read_bytes()
    names = sorted(p.name for p in copy.parent.iterdir())  # no temporary file left, no other node's secret
    assert names == sorted(["services.keytab", "http-signature.secret", f"http-nodemanager-{node.name}.secret"])
    assert all((copy.parent / n).stat().st_mode & 0o777 == 0o600 for n in names)
    assert agent.work_note is None
    agent.remove_work_dir()
    assert not copy.exists()


def test_opened_keys_are_never_readable_by_others_even_with_a_loose_umask(plan: ClusterPlan, tmp_path: Path) -> None:
    krb = tmp_path / "work" / "krb"
    krb.parent.mkdir()
    umask = os.umask(0)
    try:
        written = open_node_keys(plan, plan.master.name, krb)
        written[0].chmod(0o644)  # a file left by an earlier run with another mode is replaced, not rewritten in place
        again = open_node_keys(plan, plan.master.name, krb)
    finally:
        os.umask(umask)
    assert krb.stat().st_mode & 0o777 == 0o700 and all(p.stat().st_mode & 0o777 == 0o600 for p in again)


@pytest.mark.parametrize("key", ["", "wrong"])
def test_agent_without_the_clusters_key_starts_no_daemon_with_keys_and_says_so(
        plan: ClusterPlan, key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key in the environment (a launcher that did not pass it) or another cluster's: the sealed file does not
    open, nothing is written, and the note says why; the daemons are pointed at the realm's own directory, which
    only the master node has."""
    if key:
        monkeypatch.setenv(KEY_ENV, new_key())
    else:
        monkeypatch.delenv(KEY_ENV)
        monkeypatch.delenv("PBS_JOBCOOKIE", raising=False)
    agent = Agent(plan, plan.nodes[2])
    assert agent.prepare_work_dir() is None and not Path(plan.nodes[2].work_dir).exists()
    assert "the daemons have no keys to log in with" in str(agent.work_note)
    assert ("does not open with this cluster's key" if key else "no HPC_HADOOP_SEAL_KEY") in str(agent.work_note)
    argv = daemon_command(plan, plan.nodes[2], "nodemanager", work_dir=agent.work_dir).argv
    assert f"-Dhpc.node.krb={plan.security.realm_dir}" in argv


def test_kdc_stop_removes_the_node_local_copies_it_reaches(plan: ClusterPlan) -> None:
    agents = [Agent(plan, node) for node in plan.nodes]
    copies = [agent.prepare_work_dir() / "krb" / "services.keytab" for agent in agents]  # type: ignore[operator]
    assert all(copy.is_file() for copy in copies)
    Kdc(plan).stop()  # no KDC process here: only the key removal
    assert not any(copy.exists() for copy in copies) and not plan.security.realm_dir.exists()
    assert not (plan.security.krb_dir / "sealed").exists()
    assert all(copy.parent.parent.is_dir() for copy in copies)  # the agents remove their directories themselves
    for agent in agents:
        agent.remove_work_dir()


def test_fast_start_daemons_run_c1_code_and_the_serial_collector(make_spec: Callable[..., JobSpec],
                                                                  make_test_plan: PlanFactory) -> None:
    """The daemons start with ``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC`` under ``hadoop.fast_start`` (the default),
    and so does ``HADOOP_OPTS`` of the ``bin/`` commands; without it the JDK's own JIT and collector. The flags key the
    class-data-sharing archive, so the archive the daemon maps is the one built for the same flags. (Under Kerberos
    the ResourceManager trades C1-only for compiler directives: the next test.)"""
    for fast in (True, False):
        plan = make_test_plan(make_spec(security="simple", hadoop={"fast_start": fast}))
        for name in ("resourcemanager", "nodemanager", "historyserver"):
            argv = daemon_command(plan, plan.master, name).argv
            assert all((flag in argv) is fast for flag in QUICK_JIT_GC_FLAGS), (fast, name, argv)
            assert (argv.index("-XX:+UseSerialGC") < argv.index("-cp")) if fast else "-Xshare:auto" not in argv
            assert not any(a.startswith("-XX:CompilerDirectivesFile=") for a in argv)
        hadoop_env_sh = render_config(plan)["hadoop-env.sh"]
        assert ("-XX:TieredStopAtLevel=1" in hadoop_env_sh) is fast


def test_under_kerberos_the_resourcemanager_compiles_its_crypto_with_c2(plan: ClusterPlan) -> None:
    """``security: per-cluster`` (the default): the ResourceManager makes an RSA key pair for every ApplicationMaster
    (``application-https.policy: LENIENT``), which C1 code makes in 1.3-2.2 s on the CI machine. Its JVM gets the
    rendered compiler directives (C2 for ``java.math`` and the JDK's crypto, C1 for the rest) in place of
    ``-XX:TieredStopAtLevel=1``, from its node-local ``conf/``; the other daemons keep C1 only, and the archive key
    (the flags before the directives) is the same for all. The real JDK reads the directives file: it says it added
    both, and a ``-version`` with it exits 0."""
    assert plan.security.kerberos
    work = Path(plan.master.work_dir)
    rm = daemon_command(plan, plan.master, "resourcemanager", work_dir=work).argv
    directives = work / "conf" / RM_JIT_DIRECTIVES
    assert "-XX:TieredStopAtLevel=1" not in rm and "-XX:+UseSerialGC" in rm
    assert f"-XX:CompilerDirectivesFile={directives}" in rm and "-XX:+UnlockDiagnosticVMOptions" in rm
    assert rm.index("-XX:+UnlockDiagnosticVMOptions") < rm.index(f"-XX:CompilerDirectivesFile={directives}")
    for name in ("nodemanager", "historyserver"):
        other = daemon_command(plan, plan.master, name, work_dir=work).argv
        assert "-XX:TieredStopAtLevel=1" in other and not any("CompilerDirectives" in a for a in other)
    rendered = plan.conf_dir / RM_JIT_DIRECTIVES
    assert rendered.is_file()
    shared = daemon_command(plan, plan.master, "resourcemanager").argv  # no work dir: the cluster directory's conf/
    assert f"-XX:CompilerDirectivesFile={rendered}" in shared
    jit = [a for a in shared if a.startswith(("-XX:+Unlock", "-XX:CompilerDirectivesFile", "-XX:CompileCommand"))]
    java = shutil.which("java")  # the machine's JDK (the plan's is a stand-in directory)
    assert java is not None, "no java on PATH: ./install.sh installs OpenJDK 17"
    done = subprocess.run([java, *jit, "-version"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and "2 compiler directives added" in done.stdout, done.stdout + done.stderr


    assert QUICK_JIT_GC_FLAGS == ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
