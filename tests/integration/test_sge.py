"""The Grid Engine backend on a REAL Grid Engine 8.1.9 (Debian's gridengine-master, -exec, -client) on this
machine, started by ``tests/cluster/sge-up.sh``: qmaster, execd, queue ``hh.q``, parallel environment
``mpi``. Nothing here is simulated: ``qsub`` submits, the execd runs the batch script, the agent starts
through ``qrsh -inherit``.

The one host's name resolves to 127.0.0.1 here, so the job binds its daemons to ``interface: lo``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, hpc_hadoop, only_run_dir, processes_of, run_report
from tests.jobs import SMALL

pytestmark = [pytest.mark.hadoop, pytest.mark.sge]

SGE_ENV = {"SGE_ROOT": "/var/lib/gridengine", "SGE_CELL": "default"}


@pytest.fixture(scope="session")
def grid_engine() -> None:
    """Start (or re-verify) the one-node Grid Engine."""
    proc = subprocess.run(["bash", str(REPO / "tests" / "cluster" / "sge-up.sh")], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"sge-up.sh failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def sge_jobs() -> list[str]:
    """Job ids Grid Engine still lists."""
    out = subprocess.run(["qstat", "-u", "*"], capture_output=True, text=True, env={**SGE_ENV, "PATH": "/usr/bin:/bin"})
    return [line.split()[0] for line in out.stdout.splitlines()[2:] if line.strip()]


@pytest.mark.own_cluster("a Grid Engine job of its own")
def test_wordcount_through_qsub_and_qrsh(grid_engine: None, pfs_root: Path, tmp_path: Path,
                                         hadoop_runtime: Path) -> None:
    """``submit --scheduler sge --wait`` runs wordcount on a small text; run.json says succeeded, no process is left."""
    text = pfs_root / "words.txt"
    text.write_text("the quick brown fox\njumps over the lazy dog\nthe end\n")
    job = tmp_path / "sgewc.yaml"
    job.write_text(yaml.safe_dump({
        "name": "sgewc", "nodes": 1, "walltime": "00:15:00", "interface": "lo",
        # The stand-in runs its one node on this machine: the root under /tmp is "shared" (issue #11 refuses a
        # batch job's node-local root unless filesystem.shared asserts it).
        "filesystem": {"root": str(pfs_root), "shared": True},
        "hadoop": SMALL,
        "steps": [{"example": "wordcount", "args": [str(text), "${run_dir}/output/wordcount"]}]}))
    # PBS's commands (the PBS stand-ins: qsub, qstat, qdel) first on PATH: every command of a Grid Engine job is Grid
    # Engine's, found beside its qconf (issue 37 item 6: the code before ran PBS's `qsub -terse`).
    env = {**SGE_ENV, "PATH": f"{REPO / 'tests' / 'standins' / 'pbs'}:{os.environ['PATH']}",
           "PBS_STANDIN_DIR": str(tmp_path / "pbs-standin")}
    result = hpc_hadoop("submit", str(job), "--scheduler", "sge", "--wait", env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert not (tmp_path / "pbs-standin" / "qsub.args").exists() and not (tmp_path / "pbs-standin").exists()
    run_dir = only_run_dir(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "succeeded" and report["scheduler"] == "sge" and report["job_id"]
    counts = dict(line.split("\t") for p in (run_dir / "output" / "wordcount").glob("part-r-*")
                  for line in p.read_text().splitlines())
    assert counts["the"] == "3" and counts["fox"] == "1"
    script = (run_dir / "batch.sh").read_text()
    assert "#$ -pe mpi 1" in script and "#$ -l h_rt=00:15:00" in script
    assert json.loads((run_dir / "plan.json").read_text())["fanout"] == "qrsh"
    assert "stopped (SIGTERM)" in (run_dir / "logs" / "fanout-qrsh.log").read_text()
    assert (run_dir / f"batch-{report['job_id']}.out").stat().st_size > 0
    assert processes_of(run_dir) == []
    assert report["job_id"] not in sge_jobs()


def test_the_example_qsub_script_is_read_by_grid_engines_own_qsub() -> None:
    """Issue 28 item 3: ``examples/batch/sge.qsub`` through the real ``qsub -verify`` (Grid Engine 8.1.9 parses every
    ``#$`` line and submits nothing; no qmaster needed): 3 slots of PE ``mpi``, the hard and soft run-time limits
    (the soft one sends the walltime warning, SIGUSR1, 180 s early), no ``-notify`` (its SIGUSR2 would end
    ``hpc-hadoop run``, to which the script hands its shell with ``exec``)."""
    script = REPO / "examples" / "batch" / "sge.qsub"
    proc = subprocess.run(["qsub", "-verify", str(script), "job.yaml"], capture_output=True, text=True, timeout=60,
                          env={**SGE_ENV, "PATH": "/usr/bin:/bin"}, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fields = {key.strip(): value.strip() for key, _, value in
              (line.partition(":") for line in proc.stdout.splitlines() if not line.startswith(("#", " ")))}
    assert fields["job_number"] == "unassigned" and fields["job_name"] == "hh-wordcount", fields
    assert fields["hard resource_list"] == "h_rt=00:30:00,s_rt=00:27:00", fields
    assert fields["parallel environment"] == "mpi range: 3" and fields["notify"] == "FALSE", fields
    assert fields["job_args"] == "job.yaml", fields
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
