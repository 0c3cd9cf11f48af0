"""Interactive clusters with real Hadoop 3.4.2 daemons: ``start`` → ``list`` → ``exec``/``env`` → ``logs`` →
``stop`` → ``list`` → ``clean``, on the local backend and on the real Slurm test cluster (tests/cluster/); on the
Slurm one (3 nodes, ``security: per-cluster``, the default), ``ui`` in a real browser (headless Chromium driven by
Selenium) while a job runs on the nodes.

Each test has its own index (``XDG_STATE_HOME``) so it sees only its own clusters. The local cluster is ``hhalice``'s
(not root), ``security: simple``, and ``hhbob`` on the same node is refused what a second user under his own name
must not do (issue 13, items 9-11: the ACL layer). The Slurm one runs the default ``security: per-cluster``;
``hhmallory``, on a node of the cluster that is not the ResourceManager's (n3), tries issue 27's attacks
(``tests/integration/attacks.py``) and is refused each.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import psutil
import pytest
import yaml

from tests.conftest import REPO, RUNTIME, fresh_pfs_dir, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.integration.attacks import attacks_fail, mallory_http, mallory_on_node, sleep_job_argv
from tests.integration.test_slurm import queued_jobs, slurm_cluster  # noqa: F401 - fixture
from tests.integration.test_spark import leftovers
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base, user_dir

if TYPE_CHECKING:
    from launcher.plan.cluster_plan import ClusterPlan

pytestmark = pytest.mark.hadoop

#: The browser test's job: Hadoop's SleepJob, 5 maps of 15 s, no reduce, not in uber mode (``fast_start`` turns it on
#: for tiny jobs, and in uber mode the maps run one after the other inside the ApplicationMaster's container: 5 x 15 s
#: and no container but the AM's). AM + 5 maps of 512 MB on NodeManagers that offer 2048 MB each (the least that holds
#: a Spark ApplicationMaster and one executor: the cluster has a notebook): at most 4 containers on the
#: ResourceManager's node, at least 2 on the others.
SLEEP_JOB = ("org.apache.hadoop.mapreduce.SleepJob", "-Dmapreduce.job.ubertask.enable=false", "-m", "5", "-r", "0",
             "-mt", "15000")


def hh_as(user: TestUser | None) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``hpc-hadoop`` as ``user``, or as the test's own user (root) for ``None``."""
    return user.hpc_hadoop if user is not None else hpc_hadoop


def clusters(env: dict[str, str], user: TestUser | None = None) -> list[dict]:
    result = hh_as(user)("list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def in_cluster_shell(cluster_id: str, script: str, env: dict[str, str],
                     user: TestUser | None = None) -> subprocess.CompletedProcess[str]:
    """``script`` in bash after ``eval "$(hpc-hadoop env ID)"``: what a user types (``user``, or root)."""
    if user is not None:
        hh = f"{REPO / '.venv' / 'bin' / 'python'} -m launcher.cli"
        return user.run(["bash", "-euo", "pipefail", "-c", f'eval "$({hh} env {cluster_id})"\n{script}'],
                        env={**env, "PATH": "/usr/bin:/bin"})
    hh = f"{sys.executable} -m launcher.cli"
    return subprocess.run(["bash", "-euo", "pipefail", "-c", f'eval "$({hh} env {cluster_id})"\n{script}'],
                          capture_output=True, text=True, timeout=300, env={**env, "PATH": "/usr/bin:/bin"},
                          cwd=REPO, check=False)


def daemons_run_node_local(run_dir: Path) -> list[Path]:
    """Check every running daemon of the cluster works from its node's node-local working directory (issue 18):
    current directory, ``HADOOP_CONF_DIR`` (a copy of the cluster's ``conf/``) and ``java.io.tmpdir`` there, none
    under the shared filesystem, while the logs stay in ``logs/<host>/``. Returns the working directories."""
    plan = json.loads((run_dir / "plan.json").read_text())
    work_dirs = []
    for node in plan["nodes"]:
        work = Path(node["work_dir"])
        assert not work.is_relative_to(run_dir) and work.name == node["name"]
        assert (work / "conf" / "yarn-site.xml").read_text() == (run_dir / "conf" / "yarn-site.xml").read_text()
        assert work.stat().st_mode & 0o077 == 0 and work.parent.parent.stat().st_mode & 0o077 == 0
        status = json.loads((run_dir / "agents" / f"{node['name']}.json").read_text())
        assert status["work_dir"] == str(work) and status["work_note"] is None
        for name, daemon in status["daemons"].items():
            proc = psutil.Process(daemon["pid"])
            assert proc.cwd() == str(work), name
            if name == "jupyterlab":  # not a JVM: a client of the cluster, with what `hpc-hadoop env` exports
                assert proc.environ()["HADOOP_CONF_DIR"] == str(run_dir / "conf")
                assert proc.environ()["JUPYTER_RUNTIME_DIR"] == str(work / "jupyter" / "runtime")
                continue
            assert proc.environ()["HADOOP_CONF_DIR"] == str(work / "conf"), name
            assert f"-Djava.io.tmpdir={work / 'tmp'}" in proc.cmdline(), name
            if plan["spec"]["security"] == "per-cluster":  # issue 27 item 1: its keytab is the node-local copy
                assert f"-Dhpc.node.krb={work / 'krb'}" in proc.cmdline(), name
            assert Path(daemon["log"]).parent == Path(node["log_dir"]) and Path(daemon["log"]).stat().st_size > 0
        if plan["spec"]["security"] == "per-cluster":
            copy = work / "krb" / "services.keytab"
            assert copy.stat().st_mode & 0o777 == 0o600 and copy.parent.stat().st_mode & 0o777 == 0o700
        work_dirs.append(work)
    return work_dirs


def nodemanager_logged_in_from_its_node_local_keytab(run_dir: Path, node: str) -> None:
    """Issue 27 item 1: ``node``'s NodeManager logged in from a keytab, the one its command line puts at the node-local
    copy (``-Dhpc.node.krb``, checked by :func:`daemons_run_node_local`; Hadoop's log line names only the file,
    ``File.getName``). Prints both."""
    login = [line for line in (run_dir / "logs" / node / "nodemanager.log").read_text().splitlines()
             if "Login successful for user nm/" in line]
    pid = json.loads((run_dir / "agents" / f"{node}.json").read_text())["daemons"]["nodemanager"]["pid"]
    print("\n".join(login), *(a for a in psutil.Process(pid).cmdline() if a.startswith("-Dhpc.node.krb=")))
    assert login and "using keytab file services.keytab" in login[0], login


def spark_through_exec(cluster_id: str, run_dir: Path, spark_home: Path, env: dict[str, str], user: TestUser) -> str:
    """``exec -- spark-submit`` (SparkPi) and ``exec -- pyspark`` (a shell reading its program on stdin) on the
    cluster, as ``user`` with nothing but what ``env`` sets; returns SparkPi's application id."""
    exported = user.hpc_hadoop("env", cluster_id, env=env)
    assert f"export SPARK_HOME={spark_home}\n" in exported.stdout
    assert f"export SPARK_CONF_DIR={run_dir}/spark-conf\n" in exported.stdout
    jar = spark_home.parent / "hpc-hadoop-spark-examples.jar"
    pi = user.hpc_hadoop("exec", cluster_id, "--", "spark-submit", "--class", "org.hpchadoop.spark.examples.SparkPi",
                         str(jar), "4", env=env, timeout=300)
    assert pi.returncode == 0 and "Pi is roughly 3.1" in pi.stdout, pi.stdout[-2000:] + pi.stderr[-3000:]
    app = re.search(r"Submitted application (application_\d+_\d+)", pi.stderr)
    assert app, pi.stderr[-3000:]
    shell = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "exec", cluster_id, "--",
                            "pyspark"],
                           input="print('total', sc.parallelize(range(100), 2).sum(), sc.master)\n",
                           capture_output=True, text=True, timeout=300, cwd=user.home,
                           env=user.env({**env, "PYSPARK_DRIVER_PYTHON_OPTS": "-i"}),  # a shell on a pipe
                           user=user.uid, group=user.gid, extra_groups=[])
    assert shell.returncode == 0 and "total 4950 yarn" in shell.stdout, shell.stdout[-2000:] + shell.stderr[-3000:]
    return app.group(1)


def container_logs_after_stop(cluster_id: str, mapreduce_app: str, spark_app: str, env: dict[str, str],
                              user: TestUser) -> None:
    """The container logs of a MapReduce and a Spark application, as YARN aggregated them, once the cluster is gone
    (``yarn logs`` reads ``app-logs/``): the ApplicationMaster's own log, an executor's own log; read by ``user``."""
    hpc_hadoop = user.hpc_hadoop
    containers = hpc_hadoop("logs", cluster_id, "--app", mapreduce_app, env=env, timeout=120)
    assert containers.returncode == 0, containers.stdout[-2000:] + containers.stderr[-2000:]
    assert "LogType:syslog" in containers.stdout and "container_" in containers.stdout
    assert "MRAppMaster" in containers.stdout
    executors = hpc_hadoop("logs", cluster_id, "--app", spark_app, env=env, timeout=120)
    assert executors.returncode == 0, executors.stdout[-2000:] + executors.stderr[-2000:]
    assert "CoarseGrainedExecutorBackend" in executors.stdout


@pytest.fixture(scope="module")
def users() -> tuple[TestUser, TestUser]:
    return make_user("hhalice"), make_user("hhbob")


@pytest.mark.own_cluster("an interactive life cycle: start to stop and clean, a second user refused throughout")
def test_local_interactive_life_cycle_of_a_user_whom_a_second_user_cannot_touch(
        users: tuple[TestUser, TestUser], spark_runtime: Path, hadoop_runtime: Path) -> None:  # noqa: F811
    """The life cycle of ``hhalice``'s cluster (not root), started with a ``spark:`` section: MapReduce through the
    wrapper commands ``env`` sets up, ``exec -- spark-submit`` and ``exec -- pyspark`` (its shell reading a program on
    stdin) on its YARN; after ``stop`` nothing is left (no executor nor Python worker either) and the container logs
    of both engines are readable (``hpc-hadoop logs --app``). (The Spark half was test_spark.py's cluster of its own
    until issue 38.)

    Meanwhile ``hhbob``, on the same node (issue 13, items 9-11; test_other_users.py's cluster of its own until issue
    38), knows her ResourceManager's address (root hands him a copy of her ``conf/``: what a port scan would find)
    and tries, under his own identity, what a second user should not be able to do while her streaming job sleeps;
    then she kills it herself. The cluster runs ``security: simple``: this is the ACL layer, which holds for a user
    under their own name even when Hadoop believes names; ``security: per-cluster`` (the default) refuses bob before
    any ACL is asked (test_security.py; its node-local keytabs are checked in the Slurm life cycle below)."""
    alice, bob = users
    base = shared_base("hh-users")
    try:
        home, bob_dir = user_dir(base, alice), user_dir(base, bob)
        alice_and_bob(alice, bob, home, bob_dir, base, spark_runtime)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def alice_and_bob(alice: TestUser, bob: TestUser, home: Path, bob_dir: Path, base: Path, spark_home: Path) -> None:
    """The body of :func:`test_local_interactive_life_cycle_of_a_user_whom_a_second_user_cannot_touch`."""
    env = {"XDG_STATE_HOME": str(home / "state")}
    job = home / "inter.yaml"
    job.write_text(yaml.safe_dump({"name": "inter", "scheduler": "local", "walltime": "00:20:00",
                                   "security": "simple", "filesystem": {"root": str(base)}, "spark": {},
                                   # room for a Spark ApplicationMaster (1024 MiB) and an executor beside it
                                   "hadoop": {**SMALL, "nodemanager_memory": "2048m"}}))
    alice.own(job, 0o600)
    started = alice.hpc_hadoop("start", str(job), env=env, timeout=300)
    print(started.stdout)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    (run_dir,) = (home / "hpc-hadoop").iterdir()
    cid = run_dir.name
    try:
        assert f"cluster {cid} is up" in started.stdout and "ResourceManager: http://127.0.0.1:" in started.stdout
        check_private(run_dir, alice)
        work_dirs = daemons_run_node_local(run_dir)
        (listed,) = clusters(env, alice)
        assert listed["cluster_id"] == cid and listed["state"] == "ready" and listed["nodes"] == ["localhost"]
        assert listed["rm_web"].startswith("http://127.0.0.1:") and 0 < listed["walltime_left_s"] <= 1200
        shell = mapreduce_through_the_wrappers(alice, cid, run_dir, env)
        spark_app = spark_through_exec(cid, run_dir, spark_home, env, alice)
        daemon_logs(alice, cid, env)
        bob_refused_while_alices_job_runs(alice, bob, cid, run_dir, home, bob_dir, env)
        # clean never deletes a running cluster's directory.
        refused = alice.hpc_hadoop("clean", cid, "--yes", env=env)
        assert refused.returncode == 2 and "stop it first" in refused.stderr and run_dir.is_dir()
    finally:
        stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
    print(stopped.stdout)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert processes_of(run_dir) == []
    assert not any(work.exists() for work in work_dirs), "node-local working directories left after stop"
    report = run_report(run_dir)
    assert report["state"] == "stopped" and report["hold"] is True and report["exit_code"] == 0
    assert report["leftover_processes"] == 0 and report["teardown_s"] is not None
    assert leftovers(run_dir) == []
    check_ports(report, json.loads((run_dir / "plan.json").read_text()))
    assert [c["state"] for c in clusters(env, alice)] == ["stopped"]
    assert (run_dir / "logs" / "localhost" / "nodemanager.log").stat().st_size > 0
    app = re.search(r"application_\d+_\d+", shell.stdout + shell.stderr)
    assert app, shell.stderr[-2000:]
    container_logs_after_stop(cid, app.group(0), spark_app, env, alice)
    # Asked, no answer (no stdin): nothing deleted; --yes deletes the finished cluster.
    kept = alice.hpc_hadoop("clean", env=env)
    assert kept.returncode == 1 and run_dir.is_dir()
    cleaned = alice.hpc_hadoop("clean", "--yes", env=env)
    assert cleaned.returncode == 0 and not run_dir.exists() and clusters(env, alice) == []


def mapreduce_through_the_wrappers(user: TestUser, cid: str, run_dir: Path,
                                   env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A MapReduce job through the wrapper commands, with nothing but what `env` printed; then ``exec`` without an
    ID (the one running cluster). Returns the shell's run (its output names the application)."""
    examples = next(Path(REPO, "hadoop-fs-shim/target/hadoop-runtime/lib").glob("hadoop-mapreduce-examples-*.jar"))
    shell = in_cluster_shell(cid, f"yarn jar {examples} pi 2 100\nmapred job -list all\nhadoop fs -ls "
                             f"{run_dir}/conf", env, user)
    assert shell.returncode == 0, shell.stdout[-2000:] + shell.stderr[-3000:]
    assert "Estimated value of Pi is" in shell.stdout and "SUCCEEDED" in shell.stdout
    assert "yarn-site.xml" in shell.stdout
    nodes = user.hpc_hadoop("exec", "--", "yarn", "node", "-list", env=env)
    assert nodes.returncode == 0 and "Total Nodes:1" in nodes.stdout, nodes.stderr[-2000:]
    return shell


def daemon_logs(user: TestUser, cid: str, env: dict[str, str]) -> None:
    """``logs --daemon``: by default the last 40 lines (which ones depends on what the NodeManager has logged since:
    a job's containers push its registration out); -n 0: the whole log, with the registration."""
    tail = user.hpc_hadoop("logs", cid[:12], "--daemon", "nodemanager", env=env)
    assert tail.returncode == 0 and tail.stdout.startswith("==> ") and "nodemanager.log <==" in tail.stdout
    assert 1 < len(tail.stdout.splitlines()) <= 41, tail.stdout
    logs = user.hpc_hadoop("logs", cid[:12], "--daemon", "nodemanager", "-n", "0", env=env)
    assert logs.returncode == 0 and "Registered with ResourceManager as localhost:" in logs.stdout


def bob_refused_while_alices_job_runs(alice: TestUser, bob: TestUser, cid: str, run_dir: Path, home: Path,
                                      bob_dir: Path, env: dict[str, str]) -> None:
    """Alice's streaming job sleeps; bob tries (:func:`bob_cannot_touch`); she kills it herself."""
    words = home / "words.txt"
    words.write_text("a b\n")
    alice.own(words, 0o600)
    streaming = next((RUNTIME / "lib").glob("hadoop-streaming-*.jar"))
    python = str(REPO / ".venv" / "bin" / "python")
    sleeper = alice.popen([python, "-m", "launcher.cli", "exec", cid, "--", "yarn", "jar", str(streaming),
                           "-input", str(words), "-output", str(home / "out"), "-mapper", "sleep 300",
                           "-numReduceTasks", "0"], env=env)
    try:
        app = running_app(alice, cid, env)
        bob_cannot_touch(bob, run_dir, bob_dir, app)
        killed = alice.hpc_hadoop("exec", cid, "--", "yarn", "application", "-kill", app, env=env)
        assert killed.returncode == 0, killed.stdout[-2000:] + killed.stderr[-2000:]
        sleeper.wait(timeout=120)
    finally:
        if sleeper.poll() is None:
            sleeper.kill()


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
    and in the cluster's port block; only the ShuffleHandler listens on every interface among them
    (launcher/node/listeners.py). The applications' own ports (the MapReduce ApplicationMaster's and tasks', which
    Hadoop binds to every interface; Spark's driver, ApplicationMaster and executors, on ephemeral ports) are
    theirs, not the block's."""
    ports = report["ports"]
    print("\n".join(f"{p['node']} {p['process']} {p['address']}:{p['port']}" for p in ports))
    seen = {p["process"] for p in ports}
    assert {"ResourceManager", "NodeManager", "JobHistoryServer", "MRAppMaster"} <= seen, ports
    block = range(plan["ports"]["base"], plan["ports"]["base"] + 32)
    address = plan["nodes"][0]["address"]
    shuffle = plan["ports"]["base"] + 8
    applications = {"MRAppMaster", "YarnChild", "SparkApplicationMaster", "SparkExecutor", "PySparkWorker"}
    assert seen <= {"ResourceManager", "NodeManager", "JobHistoryServer", *applications}, ports
    for entry in ports:
        if entry["process"] in applications:
            continue
        if (entry["process"], entry["port"]) == ("NodeManager", shuffle):  # the ShuffleHandler: no address key
            assert entry["address"] in ("0.0.0.0", "::"), entry
            continue
        assert entry["address"] == address and entry["port"] in block, entry


def attacks_from_another_node(cluster_id: str, run_dir: Path, env: dict[str, str], node: str) -> None:
    """Issue 27's attacks that must fail, from another node: ``hhmallory`` on ``node`` of the Slurm test cluster (not
    the ResourceManager's node: the owner's NodeManager runs there, mallory is another user on it) runs every attack
    of ``tests/integration/attacks.py`` against this cluster, whose owner is the user running the test, while the
    owner's SleepJob runs (started here through ``hpc-hadoop exec``)."""
    mallory = make_user("hhmallory")
    base = shared_base("hh-attacks")  # her directory under /tmp, which every node of the test cluster shares
    try:
        attacker = mallory_on_node(mallory, user_dir(base, mallory), node)
        argv, extra = sleep_job_argv(cluster_id)
        client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                                  env={**os.environ, **env, **extra})
        attacks_fail(attacker, getpass.getuser(), run_dir, client)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slurm
@pytest.mark.own_cluster("an interactive life cycle: start to stop")
def test_slurm_interactive_life_cycle(slurm_cluster: list[str], tmp_path: Path) -> None:  # noqa: F811
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    root = fresh_pfs_dir("interactive")
    job = tmp_path / "sinter.yaml"
    hadoop = {**SMALL, "nodemanager_memory": "2048m"}  # a Spark ApplicationMaster and an executor (the notebook's)
    # Issue 37 item 9: on the test cluster's second network (ib0, 10.78.0.0/24, host names nI-ib), the default
    # security: per-cluster.
    # Issue 40 item 1: notebook: true, JupyterLab with the cluster, its notebooks beside the job file (tmp_path).
    job.write_text(yaml.safe_dump({"name": "sinter", "scheduler": "slurm", "nodes": 3, "walltime": "00:15:00",
                                   "interface": "ib0", "filesystem": {"root": str(root)}, "hadoop": hadoop,
                                   "notebook": True}))
    started = hpc_hadoop("start", str(job), env=env, timeout=600)
    print(started.stdout)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    run_dir = only_run_dir(root)
    cid = run_dir.name
    try:
        (listed,) = clusters(env)
        job_id = listed["job_id"]
        assert listed["state"] == "ready" and listed["scheduler"] == "slurm" and job_id in queued_jobs()
        assert len(listed["nodes"]) == 3 and listed["head"] == listed["nodes"][0]
        assert listed["rm_web"].startswith(f"http://{IB_ADDRESS(listed['nodes'][0])}:")
        work_dirs = daemons_run_node_local(run_dir)
        assert len(work_dirs) == 3
        text = hpc_hadoop("list", env=env).stdout
        assert cid in text and f"slurm:{job_id}" in text and "ready" in text
        registered_on_the_second_network(cid, listed["nodes"], env)
        word_count_on_the_second_network(cid, root, listed["nodes"], env)
        by_job_id = hpc_hadoop("exec", job_id, "--", "yarn", "node", "-list", env=env)
        assert by_job_id.returncode == 0 and "Total Nodes:3" in by_job_id.stdout
        logs = hpc_hadoop("logs", cid, "--node", listed["nodes"][1], "--daemon", "nodemanager", "-n", "0", env=env)
        assert logs.returncode == 0, logs.stderr
        assert f"logs/{listed['nodes'][1]}/nodemanager.log <==" in logs.stdout
        assert "Registered with ResourceManager" in logs.stdout
        nodemanager_logged_in_from_its_node_local_keytab(run_dir, listed["nodes"][1])
        # security: per-cluster (the default): mallory, on a node that is not the ResourceManager's, is refused all.
        attacks_from_another_node(cid, run_dir, env, listed["nodes"][-1])
        refused = hpc_hadoop("clean", cid, "--yes", env=env)
        assert refused.returncode == 2 and "stop it first" in refused.stderr and run_dir.is_dir()
        browse_cluster_ui(cid, run_dir, env)
        notebooks_on_the_cluster(cid, run_dir, root / "words.txt", listed["nodes"][0], env, tmp_path)
    finally:
        stopped = hpc_hadoop("stop", cid, env=env, timeout=300)
    print(stopped.stdout)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert processes_of(run_dir) == [] and job_id not in queued_jobs()
    assert jupyter_processes(run_dir) == []  # JupyterLab, its kernels and the executions stopped with the cluster
    assert not any(work.exists() for work in work_dirs), "node-local working directories left after stop"
    report = run_report(run_dir)
    assert report["state"] == "stopped" and report["leftover_processes"] == 0
    assert any(note.startswith("security: per-cluster: realm ") for note in report["notes"]), report["notes"]
    daemons_listened_on_the_second_network(report)
    (after,) = clusters(env)
    assert after["state"] == "stopped" and after["active"] is False
    assert "stopped" in hpc_hadoop("list", env=env).stdout


def word_count_notebook(path: Path, words: Path) -> None:
    """A notebook (for the kernel ``hpc-hadoop``) whose cells count the words of ``words`` with PySpark on the
    cluster's YARN (the kernel's ``spark``) and print the counts, sorted, with the Spark master and the cluster the
    kernel's environment names (what ``hpc-hadoop env`` exports)."""
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": f"counts = dict(spark.sparkContext.textFile('file://{words}').flatMap(str.split)\n"
                   "    .map(lambda word: (word, 1)).reduceByKey(lambda a, b: a + b).collect())"},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": "import os\nprint(spark.sparkContext.master, os.environ['HPC_HADOOP_CLUSTER'])\n"
                   "print(sorted(counts.items()))"},
    ]
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "kernelspec": {"name": "hpc-hadoop", "display_name": "PySpark", "language": "python"}}}))


def python_count(words: Path) -> str:
    """What the notebook's output cell must print: the counts of ``words`` by Python, sorted, as a list of pairs."""
    from collections import Counter

    return str(sorted(Counter(words.read_text().split()).items()))


def notebook_executed_on_the_master(cluster_id: str, notebook: Path, words: Path, env: dict[str, str]) -> None:
    """``hpc-hadoop notebook ID --execute``: nbclient on the master node with the cluster's kernel; the executed
    notebook is written beside the user's (never over it), and its output cell holds Python's count of the same file.
    Prints both."""
    before = notebook.read_text()
    ran = hpc_hadoop("notebook", cluster_id, "--execute", str(notebook), env=env, timeout=600)
    print(ran.stdout)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    executed = notebook.with_name(notebook.name.removesuffix(".ipynb") + ".executed.ipynb")
    assert notebook.read_text() == before and f"written to {executed}" in ran.stdout
    cells = json.loads(executed.read_text())["cells"]
    printed = "".join("".join(out.get("text", ""))  # a list of lines as nbformat writes it, or one string
                      for out in cells[1]["outputs"]  # stderr holds what the JVM logs
                      if out.get("output_type") == "stream" and out.get("name") == "stdout")
    expected = python_count(words)
    print(f"nbclient output cell: {printed.splitlines()[-1][:300]}...\nPython's count:       {expected[:300]}...")
    assert printed.splitlines() == [f"yarn {cluster_id}", expected], printed[:3000]


def jupyterlab_refuses_without_its_token(run_dir: Path, node: str) -> None:
    """Another user on the master node (``hhmallory`` on ``node``) reaches JupyterLab's port but, without its token,
    gets 403 from its API (and no page); prints what she got."""
    from launcher.plan.cluster_plan import ClusterPlan

    plan = ClusterPlan.load(run_dir)
    address, port = IB_ADDRESS(node), plan.ports.notebook_web
    mallory = make_user("hhmallory")
    base = shared_base("hh-notebook")
    try:
        attacker = mallory_on_node(mallory, user_dir(base, mallory), node)
        urls = [f"http://{address}:{port}/_/{address}:{port}/api/kernels",
                f"http://{address}:{port}/_/{address}:{port}/api/contents"]
        answers = mallory_http(attacker, [{"method": "GET", "url": url} for url in urls], 60)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("\n".join(f"mallory on {node}: GET {url} without the token: {a['status']} {a['reason']}"
                    for url, a in zip(urls, answers, strict=True)))
    assert [a["status"] for a in answers] == [403, 403], answers


def run_notebook_in_jupyterlab(browser: UiBrowser, url: str, name: str, expected: str, shot: Path) -> str:
    """In ``browser``: JupyterLab's URL as ``ui`` printed it (``url``, with the proxy's token) opened on the notebook
    ``name``, Run → Run All Cells, the outputs read once one shows ``expected`` (at most 300 s: the kernel makes its
    SparkSession first); a screenshot in ``shot`` whatever happens. Returns the outputs' text, one per line group."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def first(css: str) -> Any:
        return lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, css)), False)

    def output(driver: Any) -> str | bool:
        """The text of every output once one of them shows ``expected`` (the JVM's log lines, on stderr, are outputs
        of their own)."""
        texts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")]
        return "\n".join(texts) if any(expected in t for t in texts) else False

    def click(css: str, label: str) -> Any:
        """Click the element ``css`` showing ``label``, once no dialog is in the way (JupyterLab's kernel choice,
        should it ask: its default, our kernel, accepted)."""
        def attempt(driver: Any) -> bool:
            for button in driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept"):
                button.click()
            found = next((e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.text == label), None)
            if found is None or driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog"):
                return False
            found.click()
            return True
        return browser.until(attempt, label)

    try:
        browser.driver.get(url.replace("/lab?", f"/lab/tree/{name}?"))
        browser.until(first(".jp-Notebook .jp-CodeCell .cm-content"), f"{name} open in JupyterLab")
        assert browser.driver.current_url.startswith(f"http://127.0.0.1:{browser.port}/_/")
        try:  # the kernel makes its SparkSession as it starts: a Run All Cells sent before it is idle is lost
            WebDriverWait(browser.driver, 300, poll_frequency=1).until(
                lambda d: "| Idle" in d.find_element(By.CSS_SELECTOR, ".jp-StatusBar-Widget, #jp-main-statusbar").text)
        except TimeoutException:
            raise AssertionError(f"the kernel never became idle: {browser.text()}") from None
        click(".lm-MenuBar-itemLabel", "Run")
        click(".lm-Menu-itemLabel", "Run All Cells")
        try:
            found = WebDriverWait(browser.driver, 300, poll_frequency=1).until(output)
        except TimeoutException:
            raise AssertionError(f"no output cell with {expected[:80]!r}: {browser.text()}") from None
        return str(found)
    finally:
        browser.driver.save_screenshot(str(shot))
        print(f"JupyterLab screenshot: {shot}")


def browse_jupyterlab(cluster_id: str, run_dir: Path, notebook: Path, words: Path, env: dict[str, str],
                      shots: Path) -> None:
    """JupyterLab through ``hpc-hadoop ui`` in headless Chromium: ``ui`` prints its URL (under the proxy's token), the
    proxy refuses it without that token, and in the browser the notebook's cells run on the cluster's YARN and print
    Python's count of the words (a screenshot kept in ``shots``)."""
    from launcher.plan.cluster_plan import ClusterPlan

    plan = ClusterPlan.load(run_dir)
    printed_by_ui: list[str] = []
    ui, _, url = start_ui(cluster_id, env, printed_by_ui)
    browser: UiBrowser | None = None
    try:
        port = int(urlsplit(url).port or 0)
        lab = f"http://127.0.0.1:{port}/_/{plan.master.address}:{plan.ports.notebook_web}/lab"
        assert f"JupyterLab:           {lab}?token={url.split('?token=')[1]}" in printed_by_ui, printed_by_ui
        with httpx.Client(trust_env=False, follow_redirects=False) as stranger:
            refused = stranger.get(lab)
            assert refused.status_code == 403, (refused.status_code, refused.text[:500])
        print(f"JupyterLab through ui without the ui token: {refused.status_code}")
        browser = UiBrowser(port, shots)
        output = run_notebook_in_jupyterlab(browser, f"{lab}?token={url.split('?token=')[1]}", notebook.name,
                                            python_count(words), shots / "jupyterlab.png")
        shown = output.splitlines()
        print(f"JupyterLab's output cell in the browser: {shown[-1][:300]}...")
        assert python_count(words) in shown and f"yarn {cluster_id}" in shown, output[:3000]
    finally:
        if browser is not None:
            browser.quit()
        ui.send_signal(signal.SIGINT)
        ended, _ = ui.communicate(timeout=30)
    assert ui.returncode == 0 and "stopped" in ended, ended


def notebooks_on_the_cluster(cluster_id: str, run_dir: Path, words: Path, master: str, env: dict[str, str],
                             job_dir: Path) -> None:
    """Issue 40 item 1, on the cluster started with ``notebook: true``: JupyterLab runs (``hpc-hadoop notebook`` says
    so, its notebooks beside the job file), a word-count notebook executed by nbclient on the master
    (:func:`notebook_executed_on_the_master`), JupyterLab's port refused to another user on the master without its
    token (:func:`jupyterlab_refuses_without_its_token`), and the same notebook run in JupyterLab through ``ui``
    (:func:`browse_jupyterlab`)."""
    began = time.monotonic()
    notebook, batch = job_dir / "wordcount.ipynb", job_dir / "wordcount-batch.ipynb"
    word_count_notebook(notebook, words)  # JupyterLab's (which may save it)
    word_count_notebook(batch, words)  # nbclient's
    running = hpc_hadoop("notebook", cluster_id, env=env, timeout=180)
    print(running.stdout)
    assert running.returncode == 0 and "JupyterLab is running" in running.stdout, running.stdout + running.stderr
    assert f"notebooks in {job_dir}" in running.stdout
    # nbclient and the browser at once, as two users of one cluster would: each kernel makes a SparkSession of its
    # own (an ApplicationMaster and an executor each), most of the part's time, waited for side by side.
    with ThreadPoolExecutor(1) as pool:
        executed = pool.submit(notebook_executed_on_the_master, cluster_id, batch, words, env)
        jupyterlab_refuses_without_its_token(run_dir, master)
        browse_jupyterlab(cluster_id, run_dir, notebook, words, env, job_dir / "jupyterlab-screenshots")
        executed.result()
    print(f"the notebook part took {time.monotonic() - began:.1f} s")


def jupyter_processes(run_dir: Path) -> list[str]:
    """The command lines of the JupyterLab server, kernels and notebook executions of the cluster in ``run_dir`` that
    are alive on this machine (every node of the test cluster shares its process table): those whose environment
    names the cluster (``HPC_HADOOP_RUN_DIR``, as ``hpc-hadoop env`` exports it)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        line = " ".join(proc.info["cmdline"] or [])
        if proc.info["status"] == psutil.STATUS_ZOMBIE or not any(
                word in line for word in ("-m jupyterlab", "ipykernel_launcher", "notebook_exec.py")):
            continue
        try:
            if proc.environ().get("HPC_HADOOP_RUN_DIR") == str(run_dir):
                found.append(line[:300])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def IB_ADDRESS(node: str) -> str:  # noqa: N802 - reads as the table it is (tests/cluster/README.md)
    """Node ``nI``'s address on the test cluster's second network (``ib0``): 10.78.0.(10+I)."""
    return f"10.78.0.{10 + int(node[1:])}"


def link_bytes(nodes: list[str]) -> dict[str, tuple[int, int]]:
    """Bytes each node's links have carried, both ways: ``{node: (ib0, eth0)}``, from the kernel's counters of their
    root-namespace ends (``hhi-nI``, ``hhv-nI``: tests/cluster/common.sh)."""
    def carried(link: str) -> int:
        stats = Path("/sys/class/net", link, "statistics")
        return int((stats / "rx_bytes").read_text()) + int((stats / "tx_bytes").read_text())
    return {node: (carried(f"hhi-{node}"), carried(f"hhv-{node}")) for node in nodes}


def registered_on_the_second_network(cluster_id: str, nodes: list[str], env: dict[str, str]) -> None:
    """The ResourceManager's node list, through the environment ``env`` prints (enough for Hadoop's own client
    commands): every node registered by the name of its ib0 address (``n2-ib``), none by the scheduler's."""
    shell = in_cluster_shell(cluster_id, "yarn node -list -states RUNNING", env)
    assert shell.returncode == 0, shell.stdout[-2000:] + shell.stderr[-3000:]
    print(shell.stdout)
    assert "Total Nodes:3" in shell.stdout
    for node in nodes:
        assert f"{node}-ib:" in shell.stdout and f"{node}:" not in shell.stdout, shell.stdout


def word_count_on_the_second_network(cluster_id: str, root: Path, nodes: list[str], env: dict[str, str]) -> None:
    """A word count (2 reduces, so map output crosses nodes) through ``env``; prints what each node's two links
    carried meanwhile and checks YARN's traffic took ib0: every node's ib0 carried more than its eth0 (which keeps
    Slurm's and srun's), and the head's (the ResourceManager's end of every heartbeat, of the submission and of the
    ApplicationMaster's calls) at least 64 KiB. Another node's share is the scheduler's choice: one that ran no
    container carries only its NodeManager's heartbeats (n2 once: 64,269 bytes), so no per-node floor. The GlusterFS
    client is in the root namespace: file data takes neither link."""
    examples = next(Path(REPO, "hadoop-fs-shim/target/hadoop-runtime/lib").glob("hadoop-mapreduce-examples-*.jar"))
    words = root / "words.txt"
    words.write_text("the quick brown fox jumps over the lazy dog\n" * 20000)
    before = link_bytes(nodes)
    count = in_cluster_shell(cluster_id, f"yarn jar {examples} wordcount -Dmapreduce.job.reduces=2 "
                             f"-Dmapreduce.job.ubertask.enable=false {words} {root}/wc", env)
    after = link_bytes(nodes)
    assert count.returncode == 0, count.stdout[-2000:] + count.stderr[-3000:]
    counted = dict(line.split("\t") for path in sorted(root.glob("wc/part-r-*")) for line in
                   path.read_text().splitlines())
    assert counted["the"] == "40000" and counted["dog"] == "20000", counted
    for node in nodes:
        ib, eth = (a - b for a, b in zip(after[node], before[node], strict=True))
        print(f"{node}: ib0 ({IB_ADDRESS(node)}) carried {ib} bytes, eth0 {eth} bytes during the word count")
        assert ib > eth and ib > 0, (node, ib, eth)
        assert node != nodes[0] or ib >= 64 * 1024, (node, ib, eth)


def daemons_listened_on_the_second_network(report: dict[str, Any]) -> None:
    """Every port of a ResourceManager, NodeManager or JobHistoryServer that is not on every interface (the
    ShuffleHandler's: Hadoop gives it no address) was on its node's ib0 address (the agents' samples, ``ports``)."""
    daemons = {"ResourceManager", "NodeManager", "JobHistoryServer"}
    seen = [p for p in report["ports"] if p["process"] in daemons and p["address"] not in ("0.0.0.0", "::")]
    assert len({p["process"] for p in seen}) == 3, report["ports"]
    assert all(p["address"] == IB_ADDRESS(p["node"]) for p in seen), seen


def ctrl_c_as_in_a_terminal() -> None:
    """In the child, before ``exec``: SIGINT back to its default, as a command typed in a terminal gets it. A test
    run started in the background by a shell without job control (``pytest ... &``) inherits SIGINT ignored, Python
    keeps an ignored SIGINT ignored, and ``hpc-hadoop ui`` would not see the test's Ctrl-C (a run of 13:00,
    2026-11-28, waited 30 s for it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_ui(cluster_id: str, env: dict[str, str],
             lines: list[str] | None = None) -> tuple[subprocess.Popen[str], str, str]:
    """``hpc-hadoop ui ID`` in the background; returns it, the ssh command and the URL it printed (every line it
    printed up to the URL added to ``lines``)."""
    ui = subprocess.Popen([sys.executable, "-m", "launcher.cli", "ui", cluster_id], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env={**os.environ, **env}, cwd=REPO,
                          preexec_fn=ctrl_c_as_in_a_terminal)
    assert ui.stdout is not None
    printed = []
    for line in ui.stdout:
        printed.append(line.rstrip("\n"))
        if line.startswith("then open:"):
            break
    print("\n".join(printed))
    if lines is not None:
        lines += printed
    ssh = next((line.split(":", 1)[1].strip() for line in printed if line.startswith("on your laptop, run:")), "")
    url = printed[-1].split(None, 2)[-1] if printed and printed[-1].startswith("then open:") else ""
    assert ssh and url, "\n".join(printed)
    return ui, ssh, url


class UiBrowser:
    """Headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium) on one ``hpc-hadoop ui``
    proxy: each :meth:`step` keeps a screenshot in ``shots`` and one line in :attr:`clicks`."""

    def __init__(self, port: int, shots: Path) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait

        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-proxy-server", "--window-size=1400,1000"):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        self.wait = WebDriverWait(self.driver, 90, poll_frequency=0.5)
        self.port, self.shots, self.clicks = port, shots, list[str]()
        shots.mkdir()

    def step(self, what: str) -> None:
        """Screenshot of the page now, and the click's line (every page is the proxy's: 127.0.0.1:<port>)."""
        number = len(self.clicks) + 1
        shot = self.shots / f"{number:02d}-{re.sub(r'[^a-z0-9]+', '-', what.lower()).strip('-')[:60]}.png"
        self.driver.save_screenshot(str(shot))
        self.clicks.append(f"{number}. {what}: {self.driver.current_url.split('?')[0]} ({shot})")
        assert self.driver.current_url.startswith(f"http://127.0.0.1:{self.port}/"), self.driver.current_url

    def until(self, condition: Callable[[Any], Any], what: str) -> Any:
        """What ``condition`` returns once it is true; fails naming ``what`` and the page the browser is on."""
        from selenium.common.exceptions import TimeoutException

        try:
            return self.wait.until(condition)
        except TimeoutException:
            raise AssertionError(f"{what}: still on {self.driver.current_url} ({self.driver.title!r}): "
                                 f"{self.text()}") from None

    def text(self, limit: int = 3000) -> str:
        """The page's visible text, its first ``limit`` characters (3000: what a failure shows)."""
        return str(self.driver.find_element("tag name", "body").text)[:limit]

    def click(self, link: Any, lands_on: str) -> None:
        """Click ``link``; wait until the address holds ``lands_on``."""
        self.driver.execute_script("arguments[0].scrollIntoView(); arguments[0].click();", link)
        self.until(lambda d: lands_on in d.current_url, f"a page whose address holds {lands_on}")

    def find(self, how: str, what: str, keep: Callable[[Any], bool] = lambda _: True, *,
             refresh: bool = False) -> Any:
        """The first element ``how``/``what`` that ``keep`` accepts, waited for (reloading the page between looks
        when ``refresh``: a table YARN fills as the job runs)."""
        def look(driver: Any) -> Any:
            found = [e for e in driver.find_elements(how, what) if keep(e)]
            if not found and refresh:
                driver.refresh()
            return found[0] if found else False
        return self.until(look, f"a link {what!r}")

    def quit(self) -> None:
        self.driver.quit()


def sleep_job(cluster_id: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """:data:`SLEEP_JOB` submitted in the background with the cluster's ``hadoop`` (after ``env``)."""
    tests_jar = next(Path(REPO, "hadoop-fs-shim/target/hadoop-runtime/lib").glob(
        "hadoop-mapreduce-client-jobclient-*-tests.jar"))
    hh = f"{sys.executable} -m launcher.cli"
    return subprocess.Popen(["bash", "-euo", "pipefail", "-c", f'eval "$({hh} env {cluster_id})"\n'
                             f'HADOOP_CLASSPATH={tests_jar} hadoop {" ".join(SLEEP_JOB)}'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **env, "PATH": "/usr/bin:/bin"}, cwd=REPO)


def check_refusals(ssh: str, url: str, host: str, rm_web: int, rm_rpc: int) -> None:
    """What ``ui`` printed (one tunnel, the same port on both ends; the URL with its token); 403 without the token
    (a page of the ResourceManager too); with it, 404 for ``host:<RM RPC port>``."""
    port = urlsplit(url).port
    assert ssh == f"ssh -N -L {port}:127.0.0.1:{port} {ssh.split()[-1]}"
    assert url.startswith(f"http://127.0.0.1:{port}/?token=")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False, follow_redirects=True) as http:
        assert http.get("/").status_code == 403
        assert http.get(f"/_/{host}:{rm_web}/cluster").status_code == 403
        assert http.get(url).status_code == 200  # the token, then its cookie (redirects followed)
        rpc = http.get(f"/_/{host}:{rm_rpc}/")
        assert rpc.status_code == 404 and "not a web server of this cluster" in rpc.text
    print(f"without the token: 403; /_/{host}:{rm_rpc} (the ResourceManager's RPC port) with it: 404")


#: The apps table's link to an application the ResourceManager shows as RUNNING (its ApplicationMaster registered, so
#: the AM's container runs; from submission until then the application is ACCEPTED and its container may still be
#: localizing on its NodeManager).
RUNNING_APP = ("//table[@id='apps']//tr[td[normalize-space()='RUNNING']]"
               "//a[starts-with(normalize-space(), 'application_')]")
#: What a NodeManager's container-log page says instead of the container's log files while the container has not
#: started on it (Hadoop 3.4.2 ``ContainerLogsUtils``: the container still NEW/LOCALIZING/SCHEDULED, or no container of
#: the application started on that node yet; ``ContainerLogsPage``: its log directory not made yet). The 10:44 run of
#: 2026-11-28 clicked the AM container's Logs at 10:41:27 while n2's NodeManager was localizing it (LOCALIZING from
#: 10:41:26.859, RUNNING at 10:41:28.189, its nodemanager.log) and never reloaded the page.
NOT_STARTED_YET = ("Container is not yet running", "Unknown container. Container either has not started",
                   "No logs available for container")


def container_logs(browser: UiBrowser, what: str) -> list[Any]:
    """The log files a NodeManager's container-log page lists (links to ``.../<file>/?start=-4096``), once the page
    lists them: reloaded, as a person would, while it says the container has not started there yet
    (:data:`NOT_STARTED_YET`), or while it lists the launch script's ``prelaunch.out`` but not yet ``stderr``: a
    RUNNING container's ``launch_container.sh`` sets up its environment and links first and makes ``stdout`` and
    ``stderr`` only with the ``exec`` of its JVM (the CI run of 2026-11-28 14:10 read such a page: directory.info,
    launch_container.sh, prelaunch.err, prelaunch.out, nothing more); an empty list if it says anything else."""
    from selenium.webdriver.common.by import By

    def started(driver: Any) -> bool:
        text = browser.text(limit=100_000)
        if any(words in text for words in NOT_STARTED_YET) or ("prelaunch.out" in text and "stderr" not in text):
            driver.refresh()
            return False
        return True

    browser.until(started, f"{what}: the container started")
    return browser.driver.find_elements(By.XPATH, "//a[contains(@href, '/?start=-4096')]")


def click_to_a_containers_stderr(browser: UiBrowser, plan: ClusterPlan, owner: str) -> str:
    """From the ResourceManager's applications (the proxy's root URL, open in ``browser``) to the running
    application, its attempt, the Logs of one of its containers on a node that is not the ResourceManager's, and that
    container's stderr, each page seen as ``owner``; returns the application's id."""
    from selenium.webdriver.common.by import By

    master, ports = plan.nodes[0], plan.ports
    ib = plan.spec.interface is not None  # on the second network, the NodeManagers' links name their address there
    others = {f"/_/{host}:{ports.nm_web}/": node.name for node in plan.nodes[1:]
              for host in (node.address, node.name, *((IB_ADDRESS(node.name), f"{node.name}-ib") if ib else ()))}
    app = browser.find(By.XPATH, RUNNING_APP, refresh=True)
    assert f"Logged in as: {owner}" in browser.driver.page_source  # the proxy's hadoop.auth cookie names the owner
    browser.step("ResourceManager: applications")
    app_id = str(app.text).strip()
    browser.click(app, f"/cluster/app/{app_id}")
    browser.step(f"application {app_id}")
    browser.click(browser.find(By.PARTIAL_LINK_TEXT, "appattempt_"), "/cluster/appattempt/")
    browser.step("its attempt")
    logs = browser.find(By.LINK_TEXT, "Logs", lambda a: any(w in (a.get_attribute("href") or "") for w in others),
                        refresh=True)
    browser.click(logs, "/node/containerlogs/container_")
    node = next(name for where, name in others.items() if where in browser.driver.current_url)
    files = container_logs(browser, f"a container's Logs on {node}")
    browser.step(f"a container's Logs on {node} (the ResourceManager is on {master.name})")
    stderr = [a for a in files if "/stderr/" in (a.get_attribute("href") or "")]
    assert stderr, f"no stderr among the container's log files: {browser.text()}"
    browser.click(stderr[0], "/stderr")
    assert f"Logged in as: {owner}" in browser.driver.page_source
    assert "not authorized" not in browser.driver.page_source.lower()
    # The file's text in a <pre> (empty for an empty stderr); an error page has an <h1> instead.
    assert browser.driver.find_elements(By.TAG_NAME, "pre"), browser.text()
    browser.step("its stderr")
    return app_id


def click_to_the_jobs_history(browser: UiBrowser, plan: ClusterPlan, app_id: str) -> None:
    """RM Home, then (the job over) the application again and its History link, to the job's page on the
    JobHistoryServer (the ResourceManager's ``/proxy/<application>/`` redirects a finished application there)."""
    from selenium.webdriver.common.by import By

    ports = plan.ports
    browser.click(browser.find(By.LINK_TEXT, "RM Home"), f":{ports.rm_web}/cluster")
    browser.step("RM Home")
    browser.driver.refresh()
    browser.click(browser.find(By.LINK_TEXT, app_id), f"/cluster/app/{app_id}")
    job_id = app_id.replace("application_", "job_", 1)
    browser.click(browser.find(By.LINK_TEXT, "History", refresh=True), "/")
    browser.until(lambda d: f"/jobhistory/job/{job_id}" in d.current_url and job_id in d.page_source,
                  f"the JobHistoryServer's page of {job_id}")
    assert f":{ports.jhs_web}/jobhistory/job/{job_id}" in browser.driver.current_url
    browser.step(f"History: job {job_id} on the JobHistoryServer")


def the_am_ui_answers(url: str, rm: str, app_id: str) -> None:
    """The running ApplicationMaster's own UI (the application's Tracking URL, the ResourceManager's
    ``/proxy/<application>/``) through ``ui``: HTTP 200, "MapReduce Application <id>". Under ``per-cluster`` the
    AM serves HTTPS to the ResourceManager's proxy alone (its client certificate: ``application-https.policy``),
    so this is the proxy's HTTPS reaching it (mallory's direct requests: ``attacks.am_web_port_refused``).

    Raises:
        AssertionError: another answer.
    """
    with httpx.Client(trust_env=False, follow_redirects=True, timeout=60) as http:
        http.get(url)  # the token, then its cookie
        page = http.get(f"http://127.0.0.1:{urlsplit(url).port}/_/{rm}/proxy/{app_id}/")
    title = re.search(r"<title>\s*(.*?)\s*</title>", page.text, re.S)
    print(f"the ApplicationMaster's UI (/proxy/{app_id}/) through ui: HTTP {page.status_code} "
          f"{title.group(1) if title else page.text[:200]!r}")
    assert page.status_code == 200 and title and title.group(1).startswith("MapReduce Application"), \
        (page.status_code, page.text[:2000])


def browse_cluster_ui(cluster_id: str, run_dir: Path, env: dict[str, str]) -> None:
    """``hpc-hadoop ui`` in headless Chromium while a SleepJob runs on the cluster's nodes: the refusals
    (:func:`check_refusals`), then from the ResourceManager's page to a container's stderr on a node that is not the
    ResourceManager's (:func:`click_to_a_containers_stderr`), RM Home and, once the job is over, the job's history page
    on the JobHistoryServer (:func:`click_to_the_jobs_history`); every click through the one port of the proxy, every
    page seen as the owner (the proxy signs each request under ``security: per-cluster``). Screenshots in
    ``<run dir>/ui-screenshots/``; the clicks and their screenshots are printed."""
    from launcher.plan.cluster_plan import ClusterPlan

    plan = ClusterPlan.load(run_dir)
    began = time.monotonic()
    job = sleep_job(cluster_id, env)
    ui, ssh, url = start_ui(cluster_id, env)
    browser: UiBrowser | None = None
    try:
        browser = UiBrowser(int(urlsplit(url).port or 0), run_dir / "ui-screenshots")
        check_refusals(ssh, url, plan.nodes[0].name, plan.ports.rm_web, plan.ports.rm)
        browser.driver.get(url)
        app_id = click_to_a_containers_stderr(browser, plan, getpass.getuser())
        the_am_ui_answers(url, f"{plan.nodes[0].address}:{plan.ports.rm_web}", app_id)
        out, _ = job.communicate(timeout=300)
        assert job.returncode == 0, out[-3000:]
        click_to_the_jobs_history(browser, plan, app_id)
    finally:
        if browser is not None:
            print("\n".join(browser.clicks))
            browser.quit()
        print(f"the browser part took {time.monotonic() - began:.1f} s")
        ui.send_signal(signal.SIGINT)  # Ctrl-C
        ended, _ = ui.communicate(timeout=30)
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert ui.returncode == 0 and "stopped" in ended, ended
