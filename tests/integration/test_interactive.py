"""Interactive clusters with real Hadoop 3.4.2 daemons: ``start`` → ``list`` → ``exec``/``env`` → ``logs`` →
``stop`` → ``list`` → ``clean``, on the local backend and on the real Slurm test cluster (tests/cluster/).

Each test has its own index (``XDG_STATE_HOME``) so it sees only its own clusters. The clusters run with the default
``security: per-cluster``; in the Slurm life cycle ``hhmallory``, on the test cluster's node that the cluster has not
got, tries issue 27's attacks (``tests/integration/attacks.py``) and is refused each.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import REPO, fresh_pfs_dir, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.integration.attacks import attacks_fail, mallory_on_node, sleep_job_argv
from tests.integration.test_slurm import queued_jobs, slurm_cluster  # noqa: F401 - fixture
from tests.users import make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop

SMALL = {"map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m", "daemon_heap": "512m"}


def clusters(env: dict[str, str]) -> list[dict]:
    result = hpc_hadoop("list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def in_cluster_shell(cluster_id: str, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` in bash after ``eval "$(hpc-hadoop env ID)"``: what a user types."""
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
            assert proc.environ()["HADOOP_CONF_DIR"] == str(work / "conf"), name
            assert f"-Djava.io.tmpdir={work / 'tmp'}" in proc.cmdline(), name
            assert Path(daemon["log"]).parent == Path(node["log_dir"]) and Path(daemon["log"]).stat().st_size > 0
        work_dirs.append(work)
    return work_dirs


def test_local_interactive_life_cycle(pfs_root: Path, tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    job = tmp_path / "inter.yaml"
    job.write_text(yaml.safe_dump({"name": "inter", "scheduler": "local", "walltime": "00:20:00",
                                   "filesystem": {"root": str(pfs_root)}, "hadoop": SMALL}))
    started = hpc_hadoop("start", str(job), env=env, timeout=300)
    print(started.stdout)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    run_dir = only_run_dir(pfs_root)
    cid = run_dir.name
    try:
        assert f"cluster {cid} is up" in started.stdout and "ResourceManager: http://127.0.0.1:" in started.stdout
        work_dirs = daemons_run_node_local(run_dir)
        (listed,) = clusters(env)
        assert listed["cluster_id"] == cid and listed["state"] == "ready" and listed["nodes"] == ["localhost"]
        assert listed["rm_web"].startswith("http://127.0.0.1:") and 0 < listed["walltime_left_s"] <= 1200
        # A MapReduce job through the wrapper commands, with nothing but what `env` printed.
        examples = next(Path(REPO, "hadoop-fs-shim/target/hadoop-runtime/lib").glob(
            "hadoop-mapreduce-examples-*.jar"))
        shell = in_cluster_shell(cid, f"yarn jar {examples} pi 2 100\nmapred job -list all\nhadoop fs -ls "
                                 f"{run_dir}/conf", env)
        assert shell.returncode == 0, shell.stdout[-2000:] + shell.stderr[-3000:]
        assert "Estimated value of Pi is" in shell.stdout and "SUCCEEDED" in shell.stdout
        assert "yarn-site.xml" in shell.stdout
        # Without an ID: the one running cluster.
        nodes = hpc_hadoop("exec", "--", "yarn", "node", "-list", env=env)
        assert nodes.returncode == 0 and "Total Nodes:1" in nodes.stdout, nodes.stderr[-2000:]
        logs = hpc_hadoop("logs", cid[:12], "--daemon", "nodemanager", env=env)
        assert logs.returncode == 0 and "nodemanager.log <==" in logs.stdout
        assert "Registered with ResourceManager" in logs.stdout or "NodeManager" in logs.stdout
        # clean never deletes a running cluster's directory.
        refused = hpc_hadoop("clean", cid, "--yes", env=env)
        assert refused.returncode == 2 and "stop it first" in refused.stderr and run_dir.is_dir()
    finally:
        stopped = hpc_hadoop("stop", cid, env=env, timeout=180)
    print(stopped.stdout)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert processes_of(run_dir) == []
    assert not any(work.exists() for work in work_dirs), "node-local working directories left after stop"
    report = run_report(run_dir)
    assert report["state"] == "stopped" and report["hold"] is True and report["exit_code"] == 0
    assert report["leftover_processes"] == 0 and report["teardown_s"] is not None
    assert [c["state"] for c in clusters(env)] == ["stopped"]
    assert (run_dir / "logs" / "localhost" / "nodemanager.log").stat().st_size > 0
    # The pi job's container logs, as YARN aggregated them, after the cluster is gone (yarn logs reads app-logs/).
    app = re.search(r"application_\d+_\d+", shell.stdout + shell.stderr)
    assert app, shell.stderr[-2000:]
    containers = hpc_hadoop("logs", cid, "--app", app.group(0), env=env, timeout=120)
    assert containers.returncode == 0, containers.stdout[-2000:] + containers.stderr[-2000:]
    assert "LogType:syslog" in containers.stdout and "container_" in containers.stdout
    assert "MRAppMaster" in containers.stdout  # the ApplicationMaster's own log
    # Asked, no answer (no stdin): nothing deleted; --yes deletes the finished cluster.
    kept = hpc_hadoop("clean", env=env)
    assert kept.returncode == 1 and run_dir.is_dir()
    cleaned = hpc_hadoop("clean", "--yes", env=env)
    assert cleaned.returncode == 0 and not run_dir.exists() and clusters(env) == []


def attacks_from_another_node(cluster_id: str, run_dir: Path, env: dict[str, str], node: str) -> None:
    """Issue 27's attacks that must fail, from another node: ``hhmallory`` on ``node`` of the Slurm test cluster (one
    the cluster has not got) runs every attack of ``tests/integration/attacks.py`` against this cluster, whose owner
    is the user running the test, while the owner's SleepJob runs (started here through ``hpc-hadoop exec``)."""
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
def test_slurm_interactive_life_cycle(slurm_cluster: list[str], tmp_path: Path) -> None:  # noqa: F811
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    root = fresh_pfs_dir("interactive")
    job = tmp_path / "sinter.yaml"
    job.write_text(yaml.safe_dump({"name": "sinter", "scheduler": "slurm", "nodes": 2, "walltime": "00:15:00",
                                   "filesystem": {"root": str(root)}, "hadoop": SMALL}))
    started = hpc_hadoop("start", str(job), env=env, timeout=600)
    print(started.stdout)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    run_dir = only_run_dir(root)
    cid = run_dir.name
    try:
        (listed,) = clusters(env)
        job_id = listed["job_id"]
        assert listed["state"] == "ready" and listed["scheduler"] == "slurm" and job_id in queued_jobs()
        assert len(listed["nodes"]) == 2 and listed["head"] == listed["nodes"][0]
        assert listed["rm_web"].startswith("http://10.77.0.")
        work_dirs = daemons_run_node_local(run_dir)
        assert len(work_dirs) == 2
        text = hpc_hadoop("list", env=env).stdout
        assert cid in text and f"slurm:{job_id}" in text and "ready" in text
        # The environment `env` prints is enough for Hadoop's own client commands.
        shell = in_cluster_shell(cid, "yarn node -list -states RUNNING", env)
        assert shell.returncode == 0, shell.stdout[-2000:] + shell.stderr[-3000:]
        assert "Total Nodes:2" in shell.stdout
        for node in listed["nodes"]:
            assert f"{node}:" in shell.stdout
        by_job_id = hpc_hadoop("exec", job_id, "--", "yarn", "node", "-list", env=env)
        assert by_job_id.returncode == 0 and "Total Nodes:2" in by_job_id.stdout
        logs = hpc_hadoop("logs", cid, "--node", listed["nodes"][1], "--daemon", "nodemanager", "-n", "0", env=env)
        assert logs.returncode == 0, logs.stderr
        assert f"logs/{listed['nodes'][1]}/nodemanager.log <==" in logs.stdout
        assert "Registered with ResourceManager" in logs.stdout
        # security: per-cluster (the default): mallory, on the node the cluster has not got, is refused everything.
        attacks_from_another_node(cid, run_dir, env, next(n for n in slurm_cluster if n not in listed["nodes"]))
        refused = hpc_hadoop("clean", cid, "--yes", env=env)
        assert refused.returncode == 2 and "stop it first" in refused.stderr and run_dir.is_dir()
    finally:
        stopped = hpc_hadoop("stop", cid, env=env, timeout=300)
    print(stopped.stdout)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert processes_of(run_dir) == [] and job_id not in queued_jobs()
    assert not any(work.exists() for work in work_dirs), "node-local working directories left after stop"
    report = run_report(run_dir)
    assert report["state"] == "stopped" and report["leftover_processes"] == 0
    (after,) = clusters(env)
    assert after["state"] == "stopped" and after["active"] is False
    assert "stopped" in hpc_hadoop("list", env=env).stdout
