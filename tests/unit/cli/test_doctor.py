"""Tests of launcher/cli/doctor.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from launcher.cli.main import main

# -- issue 11, folded from tests/unit/test_shared_root.py: Issue #11: a batch job's cluster directory must be
# on a filesystem every node shares (launcher/filesystems/__init__.py ``check_shared_root``,
# launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued.


def test_doctor_reports_a_local_root_as_a_fail_line(tmp_path: Path, pfs_root: Path,
                                                    write_yaml: Callable[..., Path]) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    job = write_yaml(tmp_path / "job.yaml", {"name": "loc", "scheduler": "slurm", "filesystem": {"root": str(pfs_root)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, ["doctor", str(job)])
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "shared root" in line]
    assert line.split()[0] == "fail" and "which the compute nodes do not share" in line, line
    assert not any("job file" in line and "do not share" in line for line in result.stdout.splitlines())
