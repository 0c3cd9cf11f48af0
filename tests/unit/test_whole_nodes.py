"""Issue #11: sizing reads what the allocation grants, down to the cgroup limit of the process
(launcher/schedulers/base.py ``cgroup_memory_limit``, ``granted_memory``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from launcher.schedulers import base
from launcher.schedulers.base import cgroup_memory_limit, granted_memory


def _limit(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n")


def test_cgroup_v2_takes_the_smallest_limit_up_the_tree(tmp_path: Path) -> None:
    """Slurm limits the job's cgroup; the process sits in a step/task cgroup below it with `max`."""
    job = tmp_path / "system.slice" / "slurmstepd.scope" / "job_42"
    _limit(job / "memory.max", str(6000 << 20))
    _limit(job / "step_batch" / "user" / "task_0" / "memory.max", "max")
    text = "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0\n"
    assert cgroup_memory_limit(text, tmp_path) == 6000 << 20
    assert cgroup_memory_limit("0::/\n", tmp_path) is None


def test_cgroup_v1_memory_controller(tmp_path: Path) -> None:
    _limit(tmp_path / "memory" / "slurm" / "uid_0" / "job_7" / "memory.limit_in_bytes", str(2 << 30))
    _limit(tmp_path / "memory" / "memory.limit_in_bytes", str(9223372036854771712))  # unlimited root
    text = "5:cpu,cpuacct:/slurm/uid_0/job_7\n4:memory:/slurm/uid_0/job_7/step_0\n0::/\n"
    assert cgroup_memory_limit(text, tmp_path) == 2 << 30


def test_granted_memory_is_the_smallest_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=64 << 30))
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: 16 << 30)
    assert granted_memory() == 16 << 30
    assert granted_memory(None, 0, 8 << 30) == 8 << 30
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: None)
    assert granted_memory(None) == 64 << 30
