"""The PBS backend end to end through STAND-INS: no PBS server (Torque, PBS Pro or OpenPBS) installs from this
machine's package registries, so ``tests/standins/pbs/`` (first on ``PATH``) plays ``qsub``, ``qstat``,
``qdel`` and ``pbs_tmrsh``: it records their arguments, prints what the real commands print, and runs the
batch script here with a ``PBS_NODEFILE``. Everything else is real: the rendered script, the launcher inside
it, the Hadoop daemons and the wordcount job.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, hpc_hadoop, only_run_dir, processes_of, run_dirs, run_report

pytestmark = [pytest.mark.hadoop]

STANDINS = REPO / "tests" / "standins" / "pbs"


def standin_env(state: Path, flavor: str) -> dict[str, str]:
    return {"PATH": f"{STANDINS}{os.pathsep}{os.environ['PATH']}", "PBS_STANDIN_DIR": str(state),
            "PBS_STANDIN_FLAVOR": flavor}


def write_job(tmp_path: Path, pfs_root: Path, **fields: object) -> Path:
    text = pfs_root / "words.txt"
    text.write_text("the quick brown fox\njumps over the lazy dog\nthe end\n")
    job = tmp_path / "pbswc.yaml"
    job.write_text(yaml.safe_dump({
        "name": "pbswc", "scheduler": "pbs", "nodes": 1, "walltime": "00:15:00", "interface": "lo",
        # The stand-in runs its one node on this machine: the root under /tmp is "shared" (issue #11 refuses a
        # batch job's node-local root unless filesystem.shared asserts it).
        "filesystem": {"root": str(pfs_root), "shared": True},
        "hadoop": {"map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m", "daemon_heap": "512m"},
        "steps": [{"example": "wordcount", "args": [str(text), "${run_dir}/output/wordcount"]}], **fields}))
    return job


def test_wordcount_through_standin_pbs_pro(pfs_root: Path, tmp_path: Path, hadoop_runtime: Path) -> None:
    """``submit --wait`` on stand-in OpenPBS (flavor detected from ``qstat --version``), agent via ``pbs_tmrsh``."""
    state = tmp_path / "standin"
    job = write_job(tmp_path, pfs_root)
    result = hpc_hadoop("submit", str(job), "--wait", env=standin_env(state, "pbspro"), timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    run_dir = only_run_dir(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "succeeded" and report["scheduler"] == "pbs" and report["job_id"] == "1.standin"
    counts = dict(line.split("\t") for p in (run_dir / "output" / "wordcount").glob("part-r-*")
                  for line in p.read_text().splitlines())
    assert counts["the"] == "3"
    assert (state / "qsub.args").read_text().split() == [str(run_dir / "batch.sh")]
    assert (state / "pbs_tmrsh.args").read_text().startswith("localhost ")
    assert "-x -f 1.standin" in (state / "qstat.args").read_text()
    assert "#PBS -l select=1:ncpus=1" in (run_dir / "batch.sh").read_text()
    assert "job 1.standin: completed" in result.stdout
    assert processes_of(run_dir) == []


def test_torque_as_root_is_refused_in_one_line(pfs_root: Path, tmp_path: Path, hadoop_runtime: Path) -> None:
    state = tmp_path / "standin"
    job = write_job(tmp_path, pfs_root, pbs={"flavor": "torque"})
    result = hpc_hadoop("submit", str(job), env=standin_env(state, "torque"), timeout=120)
    if os.geteuid() == 0:
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.strip() == ("error: scheduler: Torque refuses jobs submitted by root "
                                         "(fix: submit as a regular user (Torque's qsub runs no job as root))")
        assert not (state / "qsub.args").exists() and run_dirs(pfs_root) == []
    else:
        assert result.returncode == 0 and (state / "qsub.args").exists()
