"""The Slurm backend on a REAL multi-node Slurm 22.05 cluster: slurmctld in the root network namespace and
one slurmd per node namespace (n1..n3, own hostname and 10.77.0.x address), started by
``tests/cluster/slurm-up.sh``; the shared "parallel filesystem" is a real GlusterFS disperse volume mounted
with FUSE at /mnt/hhpfs (``tests/cluster/gluster-up.sh``). Nothing here is simulated.

All node namespaces share this machine's PID namespace, so psutil sees every process of every node.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests import jobs

# The `slurm_cluster` fixture lives in tests/conftest.py (shared with test_bench.py); CLUSTER, PFS and
# slurm_cluster stay importable from here for modules that import them from this one.
from tests.conftest import CLUSTER, PFS, REPO, fresh_pfs_dir, hpc_hadoop, processes_of, run_report, slurm_cluster  # noqa: F401
from tests.integration.attacks import HANDOFF, SQUATTER
from tests.integration.test_spark import executor_hosts, expected_counts, leftovers, spark_events, tab_counts
from tests.jobs import SMALL
from tests.users import TestUser, make_user, user_dir

pytestmark = [pytest.mark.hadoop, pytest.mark.slurm]


@pytest.fixture
def shared_root(slurm_cluster: list[str], request: pytest.FixtureRequest) -> Path:  # noqa: F811 - the conftest fixture
    """A fresh directory on the GlusterFS mount for one test."""
    return fresh_pfs_dir(request.node.name)


@pytest.fixture(scope="module")
def dave() -> TestUser:
    """An ordinary user who submits the fault tests' jobs (issue 13 item 9: root hides permission bugs)."""
    return make_user("hhdave")


@pytest.fixture
def users_root(slurm_cluster: list[str], dave: TestUser, request: pytest.FixtureRequest) -> Path:  # noqa: F811
    """A fresh scratch root on the GlusterFS mount (0755) with ``hhdave``'s own directory in it (0700)."""
    root = fresh_pfs_dir(request.node.name)
    root.chmod(0o755)
    user_dir(root, dave)
    return root


#: What the Slurm jobs here ask unless they say otherwise.
SLURM_JOB = {"scheduler": "slurm", "hadoop": SMALL}


def users_job(user: TestUser, root: Path, job: dict) -> Path:
    """:func:`write_job` into ``user``'s directory under ``root``, owned by them."""
    return jobs.write_job(root / user.name, job, SLURM_JOB, owner=user)


def write_job(directory: Path, job: dict) -> Path:
    return jobs.write_job(directory, job, SLURM_JOB)


def cluster_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/hpc-hadoop/*") if p.is_dir())


def queued_jobs() -> list[str]:
    return subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()


@pytest.mark.own_cluster("two clusters share nodes; the walltime ends one")
def test_two_clusters_share_nodes_and_the_walltime_runs_out_mid_step_of_one(shared_root: Path,
                                                                             tmp_path: Path) -> None:
    """Two clusters of 2 nodes at once, each asking for a core of a shared node (whole nodes are the default since
    issue #11): different port bases, a node in common. The first runs Hadoop's ``pi`` example to its end; the second
    runs out of its walltime mid-step (one test since issue 38: the walltime cluster is the second of the pair).

    Its 2-minute walltime: the teardown lead is min(batch.signal_lead, 10% of the walltime) = 12 s on every backend
    (launcher.schedulers.base.teardown_lead; before issue #11 Slurm alone asked for max(120, signal_lead)). Slurm
    checks on a timer ("the signal may be sent up to 60 seconds earlier than specified", sbatch(1) on --signal), and
    was seen here to send it up to ~70 s before the lead, so it lands 38-108 s in, after bring-up (about 10 s here)
    and the step's start, and the launcher's own deadline is at 108 s; a 20-minute sleep job is running. (It was 5
    minutes, 242 s of the suite, then 3, 158 s; 2 keep the same order of events.)"""
    shared = {"cores_per_node": 1, "exclusive": False}
    pair = write_job(tmp_path, {"name": "pair", "nodes": 2, "walltime": "00:15:00",
                                "filesystem": {"root": str(shared_root)}, "batch": shared,
                                "steps": [{"example": "pi", "args": ["2", "1000"]}]})
    wall = write_job(tmp_path, {
        "name": "wall", "nodes": 2, "walltime": "00:02:00", "filesystem": {"root": str(shared_root)},
        "batch": {**shared, "signal_lead": 120},  # capped to 12 s (10% of the walltime)
        "steps": [{"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                   "args": ["-m", "2", "-r", "0", "-mt", "1200000"]}]})
    procs = [subprocess.Popen([sys.executable, "-m", "launcher.cli", "submit", str(j), "--wait"], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for j in (pair, wall)]
    outputs = [p.communicate(timeout=900)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 124], [out[-4000:] for out in outputs]
    dirs = {run_report(d)["name"]: d for d in cluster_dirs(shared_root)}
    assert sorted(dirs) == ["pair", "wall"], dirs
    plans = [json.loads((d / "plan.json").read_text()) for d in dirs.values()]
    assert plans[0]["ports"]["base"] != plans[1]["ports"]["base"]
    nodes = [set(run_report(d)["nodes"]) for d in dirs.values()]
    assert nodes[0] & nodes[1], f"the two clusters did not share a node: {nodes}"
    report = run_report(dirs["wall"])
    assert report["state"] == "timed_out" and report["teardown_s"] is not None
    assert report["bringup_s"] is not None and report["steps"][0]["state"] == "killed"
    assert (dirs["wall"] / "logs" / report["nodes"][0] / "resourcemanager.log").stat().st_size > 0
    assert all(processes_of(d) == [] for d in dirs.values()) and queued_jobs() == []


@pytest.mark.parametrize(("flags", "message"), [
    (["--set", "batch.partition=nosuchpartition"], "partition"),
    (["--nodes", "7"], "node"),
])
def test_bad_submission_is_refused_and_nothing_is_queued(shared_root: Path, tmp_path: Path, flags: list[str],
                                                         message: str) -> None:
    job = write_job(tmp_path, {"name": "bad", "nodes": 1, "filesystem": {"root": str(shared_root)},
                               "steps": [{"example": "pi", "args": ["1", "10"]}]})
    result = hpc_hadoop("submit", str(job), *flags, timeout=120)
    assert result.returncode != 0
    assert message in result.stderr.lower() and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert queued_jobs() == [] and cluster_dirs(shared_root) == []


@pytest.mark.own_cluster("the user's own sbatch script, a user's first cluster without class-data-sharing archives")
def test_the_example_sbatch_script_runs_the_word_count_on_its_allocation(users_root: Path, dave: TestUser) -> None:
    """Issue 28 item 3: ``examples/batch/slurm.sbatch``, as shipped, submitted with the real ``sbatch`` by ``hhdave``
    (not root) with ``examples/wordcount.yaml``, which asks for 1 node for 20 minutes on the local backend: ``run``
    detects Slurm, uses the allocation's 3 nodes and 30 minutes, and its first line says so.

    It is also a user's first cluster (issue 18): a cache of dave's own and no site archives, so the daemons write
    their class-data-sharing archives at teardown, which srun's SIGUSR1 lets every agent finish (the 3-node TeraSort
    of its own that checked this until issue 38: TeraSort and TeraValidate on Slurm nodes are test_bench.py's Slurm
    sweep, maps on several nodes test_shuffle.py's)."""
    mine = users_root / dave.name
    out = mine / "example-%j.out"
    cache = dave.home / f".cache-example-{os.getpid()}"  # a user's first cluster: no class-data-sharing archive yet
    # No site archives (install.sh's, launcher.runtime.cds_build): a first run as it is without them.
    env = {"PATH": f"{REPO / '.venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin",  # as after `module load hpc-hadoop`
           "XDG_STATE_HOME": str(dave.home / ".local" / "state" / f"example-{os.getpid()}"),
           "XDG_CACHE_HOME": str(cache), "HPC_HADOOP_CDS_SITE": ""}
    memory = [f"--set=hadoop.{name}=512m" for name in ("map_memory", "reduce_memory", "am_memory", "daemon_heap")]
    proc = dave.run(["sbatch", "--wait", f"--output={out}", str(REPO / "examples" / "batch" / "slurm.sbatch"),
                     str(REPO / "examples" / "wordcount.yaml"), f"--set=filesystem.root={mine}", *memory],
                    env=env, cwd=mine, timeout=900)
    (log,) = mine.glob("example-*.out")
    text = log.read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr + text
    job_id = re.search(r"Submitted batch job (\d+)", proc.stdout).group(1)  # type: ignore[union-attr]
    line = next(line for line in text.splitlines() if line.startswith("allocation: "))
    assert re.fullmatch(rf"allocation: Slurm job {job_id}, 3 nodes \(n1,n2,n3\) from SLURM_JOB_NODELIST, walltime "
                        r"00:30:00 \(00:[23]\d:\d\d left\) from `scontrol show job` TimeLimit; job file asked "
                        r"nodes: 1 → using 3, walltime: 00:20:00 → using 00:30:00", line), line
    (run_dir,) = cluster_dirs(mine)
    report = run_report(run_dir)
    assert report["state"] == "succeeded" and report["nodes"] == ["n1", "n2", "n3"] and report["job_id"] == job_id
    plan = json.loads((run_dir / "plan.json").read_text())
    assert (plan["spec"]["nodes"], plan["spec"]["walltime"]) == (3, "00:30:00"), plan["spec"]
    counts = dict(line.split("\t") for part in mine.rglob("part-r-*") for line in part.read_text().splitlines())
    assert int(counts["the"]) > 10000, len(counts)  # the GNU dictionary's 40 MB of text, counted
    assert report["bringup_s"] > 0 and report["since_allocation_s"] >= report["bringup_s"]
    first_cluster_kept_its_archives(run_dir, report, cache)
    assert processes_of(run_dir) == [] and job_id not in queued_jobs()
    shutil.rmtree(cache, ignore_errors=True)


def first_cluster_kept_its_archives(run_dir: Path, report: dict, cache: Path) -> None:
    """A user's first cluster on Slurm nodes, torn down: every agent stopped its daemons on srun's forwarded SIGUSR1
    (no step cancelled, nothing SIGKILLed), so the daemons kept their class-data-sharing archives for the next cluster
    (issue 18) in the user's ``cache``; every node's NodeManager logged."""
    for node in report["nodes"]:
        agent = json.loads((run_dir / "agents" / f"{node}.json").read_text())
        assert agent["state"] == "stopped" and agent["stop_reason"] == "SIGUSR1", agent
        # Every daemon stopped on its SIGTERM (JVM exit 143): the NodeManagers unregistered before the
        # ResourceManager went, none waited for SIGKILL.
        assert {d["returncode"] for d in agent["daemons"].values()} == {143}, agent
        assert f"on {node}: stopped (SIGUSR1)" in (run_dir / "logs" / f"agent-{node}.out").read_text()
        assert (run_dir / "logs" / node / "nodemanager.log").stat().st_size > 0
    assert "forcing job termination" not in (run_dir / "logs" / "fanout-srun.log").read_text()
    archives = {p.name for p in cache.glob("hpc-hadoop/cds/*/*.jsa")}
    clients = {name for name in archives if name.startswith("client-")}
    # The daemons' archives and the job client's. The ApplicationMaster's is published by the next job clients, or at
    # teardown once complete (launcher.runtime.cds.AM_SETTLE_S after the AM wrote it): one word count, and the
    # teardown right after it, leave it unpublished as a rule (a TeraGen, TeraSort and TeraValidate published it).
    daemons = {"resourcemanager.jsa", "historyserver.jsa", "nodemanager.jsa"}
    assert daemons <= archives - clients <= {*daemons, "mrappmaster.jsa"}, archives
    assert len(clients) == 1, archives
    assert not list(cache.glob("hpc-hadoop/cds/*/*.tmp")), "an archive left unpublished"


def container_hosts(run_dir: Path, main_class: str) -> set[str]:
    """The nodes where a container of ``main_class`` runs now (its log directory is ``logs/<node>/userlogs/``)."""
    hosts = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if main_class in cmdline:
            found = re.search(re.escape(str(run_dir)) + r"/logs/([^/]+)/userlogs/", " ".join(cmdline))
            if found:
                hosts.add(found.group(1))
    return hosts


@pytest.mark.own_cluster("Spark steps, then the batch system kills its launcher")
def test_spark_steps_then_the_launcher_killed_by_the_batch_system_leaves_nothing_and_shows_lost(
        users_root: Path, dave: TestUser, spark_runtime: Path, gcide_corpus: Path) -> None:
    """Issue 14 on Slurm nodes, then issue 13 item 5, on one cluster of ``hhdave``'s (not root) on 2 nodes (the Spark
    steps had a 3-node cluster of their own until issue 38).

    The Spark steps: /usr/bin/python3 on every node imports pyspark from the shared Spark install (a PySpark word
    count of the GNU dictionary, checked against an independent count), SparkPi from a jar; the executors spread over
    the nodes (one 1536 MiB executor fits a 2560 MiB NodeManager), and the event log in the cluster directory says
    where they ran. Prints the steps' wall times.

    Then, while a SleepJob's tasks run: SIGKILL to the batch script, the launcher and every agent (no teardown) and
    then the job's end (``scancel``). No process of the cluster survives on any node (the node namespaces share
    this PID namespace: psutil sees them all), no Spark executor nor Python worker either; ``list`` and ``status``
    show the cluster as ``lost``, and its logs stay readable. Root cancels it, as an admin would."""
    shared_root = users_root
    env = {"XDG_STATE_HOME": str(dave.home / ".local" / "state" / f"killed-{os.getpid()}")}
    corpus = users_root / dave.name / "gcide.txt"
    with open(corpus, "wb") as out:
        subprocess.run(["gzip", "-dc", str(gcide_corpus)], stdout=out, check=True)
    dave.own(corpus, 0o600)
    job = users_job(dave, users_root, {
        "name": "killed", "nodes": 2, "walltime": "00:20:00", "filesystem": {"root": str(users_root)},
        "hadoop": {**SMALL,
                   "properties": {"mapred-site": {"mapreduce.job.ubertask.enable": False}}},  # tasks in containers
        "steps": [{"pyspark": {"script": str(REPO / "examples" / "python" / "wordcount.py"),
                               "args": [str(corpus), "${run_dir}/output/spark-wc"]}},
                  {"spark": {"jar": "${spark_examples_jar}", "class": "org.hpchadoop.spark.examples.SparkPi",
                             "args": ["6"]}},
                  {"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                   "args": ["-m", "2", "-r", "0", "-mt", "600000"]}]})
    submitted = dave.hpc_hadoop("submit", str(job), env=env)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = re.search(r"submitted slurm job (\d+)", submitted.stdout).group(1)  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 420
        run_dir = None
        while time.monotonic() < deadline:
            dirs = cluster_dirs(shared_root)
            run_dir = dirs[0] if dirs else None
            if run_dir and container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild"):
                break
            time.sleep(0.5)
        assert run_dir is not None and container_hosts(run_dir, "org.apache.hadoop.mapred.YarnChild"), "no task ran"
        spark_steps_ran_on_both_nodes(run_dir, gcide_corpus)
        # SIGKILL to the batch shell, the launcher and every agent, as `scancel --signal=KILL --full` means to: that
        # command is a cancellation for Slurm, whose SIGTERM reached the batch shell first in one CI run (the
        # launcher then tore down: state cancelled, 143). The nodes share this PID namespace: root kills them here.
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if (str(run_dir) in cmdline and ("launcher.cli" in cmdline or "launcher.node.agent" in cmdline)) or \
                    (cmdline.startswith("/bin/bash") and "slurm_script" in cmdline and proc.username() == dave.name):
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any("launcher.cli" in p for p in processes_of(run_dir)):
            time.sleep(0.2)
        assert not any("launcher.cli" in p for p in processes_of(run_dir)), processes_of(run_dir)
    finally:  # the job's end (and, when the test failed before, no job left for the next test)
        subprocess.run(["scancel", job_id], check=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (job_id in queued_jobs() or processes_of(run_dir)):
        time.sleep(0.5)
    assert processes_of(run_dir) == [] and leftovers(run_dir) == [], "processes survived the job's end"
    assert job_id not in queued_jobs()
    listed = dave.hpc_hadoop("list", "--json", env=env)
    (entry,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert entry["state"] == "lost" and entry["job_id"] == job_id, entry
    status = dave.hpc_hadoop("status", entry["cluster_id"], env=env)
    assert status.returncode == 0 and "lost" in status.stdout, status.stdout + status.stderr
    logs = dave.hpc_hadoop("logs", entry["cluster_id"], "--daemon", "resourcemanager", env=env)
    assert logs.returncode == 0 and "resourcemanager.log <==" in logs.stdout, logs.stderr
    assert json.loads((run_dir / "run.json").read_text())["state"] == "running"  # never reached teardown


def spark_steps_ran_on_both_nodes(run_dir: Path, gcide_corpus: Path) -> None:
    """The two Spark steps of the launcher-killed test's cluster succeeded (run.json is written after each step), each
    with executors on both nodes; the word count is the independent one."""
    steps = run_report(run_dir)["steps"]
    assert [(s["kind"], s["state"]) for s in steps[:2]] == [("pyspark", "succeeded"), ("spark", "succeeded")], steps
    walls = ", ".join(f"{s['kind']} {s['name']} {s['wall_s']:.1f} s" for s in steps[:2])
    print(f"\nwall times on 2 Slurm nodes over GlusterFS: {walls}")
    assert tab_counts(run_dir / "output" / "spark-wc", "part-*") == expected_counts(gcide_corpus)
    pi_log = Path(steps[1]["log"]).read_text()
    assert abs(float(pi_log.split("Pi is roughly ", 1)[1].split()[0]) - 3.14159) < 0.05
    logs = spark_events(run_dir)
    for step in steps[:2]:
        hosts = executor_hosts(logs[step["application_id"]])
        assert len(hosts) == 2, f"{step['name']}: executors on {hosts}"


def doctor_in_allocation(job: Path) -> tuple[dict[str, str], str]:
    """``doctor JOB`` inside a 3-node allocation (``salloc``): its ``krb`` lines by check name (``krb host names``...)
    and all it printed."""
    done = subprocess.run(["salloc", "--nodes=3", "--time=5", "--job-name=krbcheck", sys.executable, "-m",
                           "launcher.cli", "doctor", str(job)], capture_output=True, text=True, timeout=300,
                          cwd=REPO, check=False)
    lines = {" ".join(line.split()[1:4]): line for line in done.stdout.splitlines() if line.split()[1:2] == ["krb"]}
    return lines, done.stdout + done.stderr


@contextlib.contextmanager
def hosts_line_missing_on(node: str, line: str) -> Iterator[None]:
    """The test cluster's node ``node`` without ``line`` in its /etc/hosts (its namespace's hosts file, edited in
    place: the bind mount keeps the inode), as a site whose nodes lack the second network's names; put back after."""
    hosts = Path("/run/hh-cluster") / f"hosts.{node}"
    kept = hosts.read_text()
    assert line in kept.splitlines(), kept
    with hosts.open("r+") as out:
        out.write("".join(f"{entry}\n" for entry in kept.splitlines() if entry != line))
        out.truncate()
    try:
        yield
    finally:
        with hosts.open("r+") as out:
            out.write(kept)
            out.truncate()


def test_doctor_inside_an_allocation_asks_every_node_what_secure_mode_needs(shared_root: Path) -> None:
    """Issue 27 item 5: inside a 3-node allocation, ``doctor`` of a ``security: per-cluster`` job asks n1..n3 through
    ``srun`` (one step, each task finding its node) for their resolvers' answers and clocks, and checks that the KDC
    can listen on n1's address: every name forward and back on every node, every clock within 300 s. Issue 37
    item 9: with ``interface: ib0`` (the second network) the names checked are those of each node's ib0 address,
    and a node whose /etc/hosts lacks its own is named."""
    job = write_job(shared_root, {"name": "krbcheck", "nodes": 3, "security": "per-cluster",
                                  "filesystem": {"root": str(shared_root)},
                                  "steps": [{"example": "pi", "args": [1, 10]}]})
    lines, printed = doctor_in_allocation(job)
    keys = next((lines.pop(name) for name in list(lines) if name.startswith("krb keys")), "")
    assert list(lines) == ["krb host names", "krb KDC port", "krb clock skew"], printed
    assert keys.split()[:1] == ["ok"] and f"never on {shared_root} (fuse (glusterfs))" in keys, keys  # issue 36
    assert all(line.split()[0] == "ok" for line in lines.values()), printed
    assert "forward and back on every node: n1 → 10.77.0.11 → n1, n2 → 10.77.0.12 → n2, n3 → 10.77.0.13 → n3" \
        in lines["krb host names"], lines
    assert "a TCP port can be bound on 10.77.0.11 on n1" in lines["krb KDC port"]
    assert "3 clock(s) within" in lines["krb clock skew"]
    root = {"root": str(shared_root)}
    ib = write_job(shared_root, {"name": "krbib", "nodes": 3, "interface": "ib0", "filesystem": root,
                                 "steps": [{"example": "pi", "args": [1, 10]}]})
    lines, printed = doctor_in_allocation(ib)
    print(lines["krb host names"])
    assert lines["krb host names"].split()[0] == "ok", printed
    assert ("forward and back on every node (ib0): n1 → 10.78.0.11 → n1-ib, n2 → 10.78.0.12 → n2-ib, "
            "n3 → 10.78.0.13 → n3-ib") in lines["krb host names"], lines
    assert "a TCP port can be bound on 10.78.0.11 on n1" in lines["krb KDC port"], lines
    with hosts_line_missing_on("n3", "10.78.0.13 n3-ib"):
        lines, printed = doctor_in_allocation(ib)
    print(lines["krb host names"])
    assert lines["krb host names"].split()[0] == "fail", printed
    assert "on n3, 10.78.0.13 (n3's ib0) does not resolve back to a name" in lines["krb host names"], lines


@pytest.mark.own_cluster("a squatter ends its bring-up")
def test_a_squatter_on_a_nodemanagers_web_port_on_another_node(users_root: Path, dave: TestUser) -> None:
    """Issue 36 item 1, on another node: mallory, on the cluster's second node, binds its NodeManager's web port
    (read from the rendered configuration) before the NodeManager starts. The NodeManager cannot bind and exits; that
    node's agent reads the kernel's table there and names her, so the owner's bring-up ends in one line naming the
    port, the node and mallory, and nothing of the cluster is left running; nothing that authenticates reached her."""
    mallory = make_user("hhmallory")
    mallory_home = user_dir(users_root, mallory)
    home = users_root / dave.name
    (home / "handoff").mkdir()
    handoff = dave.own(home / "handoff")
    (home / "handoff.py").write_text(HANDOFF)
    script = dave.own(home / "handoff.py", 0o600)
    job = users_job(dave, users_root, {
        "name": "nmsquat", "nodes": 2, "walltime": "00:10:00", "filesystem": {"root": str(users_root)},
        "setup": [f"/usr/bin/python3 {script} {handoff} yarn.nodemanager.webapp.address"],
        "steps": [{"example": "pi", "args": [1, 10]}]})
    submit = dave.popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job), "--wait"])
    squatter_pid = None
    try:
        deadline = time.monotonic() + 300
        while not (handoff / "address").exists():
            assert submit.poll() is None and time.monotonic() < deadline, submit.communicate()
            time.sleep(0.1)
        port = (handoff / "address").read_text().rpartition(":")[2]
        node = json.loads((handoff / "nodes").read_text())[-1]
        log = mallory_home / "squatter.json"
        login = [f"{key}={value}" for key, value in mallory.env().items()]
        squatter = subprocess.Popen([str(CLUSTER / "on-node.sh"), node, "setpriv", f"--reuid={mallory.uid}",
                                     f"--regid={mallory.gid}", "--clear-groups", "--", "env", "-i", *login,
                                     "/usr/bin/python3", "-c", SQUATTER, "0.0.0.0", port, str(log)],
                                    stdout=subprocess.PIPE, text=True, cwd=mallory_home)
        assert squatter.stdout is not None
        up = squatter.stdout.readline().split()
        assert up[:1] == ["up"], (up, squatter.poll())
        squatter_pid = int(up[1])
        (handoff / "bound").touch()
        out, err = submit.communicate(timeout=600)
    finally:
        if squatter_pid is not None:
            os.kill(squatter_pid, signal.SIGKILL)
    (run_dir,) = cluster_dirs(users_root)
    report = run_report(run_dir)
    errors = [line for line in (out + err).splitlines() if line.startswith("error:")]
    cause = errors[0] if len(errors) == 1 else str(errors)
    print(f"mallory listens on {node}:{port} (its NodeManager's web port) first; dave's submit --wait: exit "
          f"{submit.returncode}\n  {cause}")
    seen = json.loads(log.read_text()) if log.exists() else []
    print(f"mallory's squatter read {len(seen)} request(s)")
    assert submit.returncode != 0 and report["state"] == "bringup_failed", out[-3000:] + err[-3000:]
    assert f"port {port} on {node} is held by another user's process ({mallory.name} (uid {mallory.uid}))" in cause, \
        (cause, out[-2000:])
    assert not any("hadoop.auth" in request or "cookie:" in request.lower() for request in seen), seen
    assert processes_of(run_dir) == [] and queued_jobs() == []
