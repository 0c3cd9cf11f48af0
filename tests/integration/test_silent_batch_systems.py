"""Issue 25 item 7 on the REAL Slurm 22.05 test cluster and the REAL Grid Engine 8.1.9 (tests/cluster/): a controller
that does not answer (``slurmctld`` / ``sge_qmaster`` stopped, jobs kept in their state files) is never an answer
about the job. A job held in the queue (``--hold`` / ``-h``) stands for a cluster: it never runs, so no Hadoop starts.
``submit --wait`` follows it, ``list`` and ``stop`` are asked while the controller is down; the controller is started
again (``slurm-up.sh 3`` / ``sge-up.sh``) in a ``finally``, whatever happens, so the shared test cluster is left up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import CLUSTER, REPO, fresh_pfs_dir, hpc_hadoop, slurm_cluster  # noqa: F401
from tests.jobs import SMALL

pytestmark = [pytest.mark.hadoop]

SGE_ENV = {"SGE_ROOT": "/var/lib/gridengine", "SGE_CELL": "default"}
#: What each controller's clients print while it is stopped (recorded here, issue 25).
SILENT = {"slurm": "Unable to contact slurm controller (connect failure)",
          "sge": "error: commlib error: got select error (Connection refused)"}


def up(script: str, *args: str) -> None:
    done = subprocess.run(["bash", str(CLUSTER / script), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"


def stop_controller(scheduler: str) -> None:
    """Stop slurmctld / sge_qmaster (SIGTERM, wait until it is gone): its state files keep the jobs."""
    name = {"slurm": "slurmctld", "sge": "sge_qmaster"}[scheduler]
    pids = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()
    assert pids, f"{name} is not running"
    for pid in pids:
        os.kill(int(pid), 15)
    subprocess.run(["bash", "-c", f"while pgrep -x {name} >/dev/null; do sleep 0.1; done"], timeout=60, check=True)


def restart_controller(scheduler: str) -> None:
    """Start the controller again. sge_qmaster reading back its spooled jobs may take longer than ``sge-up.sh``
    waits for ``qconf`` (10 s): then ``sge-up.sh`` runs once more, on the qmaster it started."""
    if scheduler == "slurm":
        up("slurm-up.sh", "3")
        return
    first = subprocess.run(["bash", str(CLUSTER / "sge-up.sh")], capture_output=True, text=True, timeout=600)
    if first.returncode != 0:
        up("sge-up.sh")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield {**os.environ, **SGE_ENV, "XDG_STATE_HOME": str(tmp_path / "state")}


def held_job(root: Path, scheduler: str) -> Path:
    job = root / f"held-{scheduler}.yaml"
    hold = {"slurm": "--hold", "sge": "-h"}[scheduler]
    job.write_text(yaml.safe_dump({
        "name": "held", "scheduler": scheduler, "nodes": 1, "walltime": "00:10:00", "interface": "lo",
        "filesystem": {"root": str(root), "shared": True}, "batch": {"extra_directives": [hold]},
        "hadoop": SMALL,
        "steps": [{"example": "pi", "args": [1, 10]}]}))
    return job


def listed(env: dict[str, str]) -> list[dict]:
    return [json.loads(line) for line in hpc_hadoop("list", "--json", env=env).stdout.splitlines()]


def check_silence(scheduler: str, root: Path, env: dict[str, str]) -> None:
    """``submit --wait`` of a held job; the controller stopped: ``list`` says ``unknown`` (since when, what the client
    printed), ``stop`` requests the teardown and fails on the unanswered cancel (exit 1), ``--wait`` waits on; the
    controller back: ``stop`` cancels the queued job (``cancelled``) and ``--wait`` ends with 143."""
    waiting = subprocess.Popen([sys.executable, "-m", "launcher.cli", "submit", str(held_job(root, scheduler)),
                                "--wait"], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        first = waiting.stdout.readline() if waiting.stdout else ""
        assert first.startswith(f"submitted {scheduler} job "), first
        job_id = first.split()[-1]
        (cluster,) = listed(env)
        assert cluster["state"] == "pending", cluster
        stop_controller(scheduler)
        try:
            (cluster,) = listed(env)
            assert cluster["state"] == "unknown" and cluster["active"], cluster
            assert cluster["detail"].startswith("batch system not answering since ")
            assert SILENT[scheduler] in cluster["detail"], cluster
            stopped = hpc_hadoop("stop", cluster["cluster_id"], "--timeout", "2", env=env)
            said = " ".join(stopped.stdout.split())
            assert stopped.returncode == 1, stopped.stdout + stopped.stderr
            assert "teardown requested" in said and "the batch system did not answer the cancel" in said, said
            assert waiting.poll() is None  # --wait waits on
        finally:
            restart_controller(scheduler)
        stopped = hpc_hadoop("stop", cluster["cluster_id"], env=env)
        assert stopped.returncode == 0 and f"cluster {cluster['cluster_id']}: cancelled" in stopped.stdout, \
            stopped.stdout + stopped.stderr
        out, _ = waiting.communicate(timeout=120)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    said = " ".join((first + out).split())
    assert f"job {job_id}: unknown: batch system not answering since " in said and SILENT[scheduler] in said, said
    assert f"job {job_id}: cancelled" in said and waiting.returncode == 143, said
    (cluster,) = listed(env)
    assert cluster["state"] == "cancelled" and not cluster["active"], cluster


@pytest.mark.slurm
def test_slurmctld_stopped_is_never_an_answer_about_the_job(slurm_cluster: list[str],  # noqa: F811
                                                            env: dict[str, str], hadoop_runtime: Path) -> None:
    check_silence("slurm", fresh_pfs_dir("silent-slurm"), env)

