"""Tests of launcher/cli/doctor.py."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli import doctor
from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import PORT_OFFSETS
from tests.ports import eligible, every_base, in_own_network, listening

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


# -- issue 36 item 4: doctor's free-port check is start's rule (launcher/plan/cluster_plan.py choose_ports)

def test_doctors_port_check_needs_free_only_the_ports_the_daemons_use() -> None:
    """In a network namespace of its own (tests/ports.py): with +20 of every block taken (no daemon's port) the check
    is ok, as ``start`` would find a block; with the ResourceManager's web port taken in every block it fails, with
    the blocks tried and who holds the busy ports (this test process: root)."""

    def ports_line() -> str:
        result = CliRunner().invoke(main, ["doctor"])
        [line] = [line for line in result.stdout.splitlines() if line.split()[1:2] == ["ports"]]
        return line

    def body() -> tuple[str, str]:
        with listening(base + 20 for base in every_base()):
            unused = ports_line()
        with listening(base + PORT_OFFSETS["rm_web"] for base in every_base()):
            used = ports_line()
        return unused, used

    unused, used = in_own_network(body)
    assert unused.split()[0] == "ok", unused
    assert used.split()[0] == "fail", used
    assert f"tried all {len(eligible(every_base()))} blocks" in used and "listened on by root (uid 0)" in used, used


def test_doctor_says_the_realms_keys_stay_off_every_shared_filesystem(
        tmp_path: Path, make_spec: Callable[..., JobSpec], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 item 5: ``doctor`` names the filesystems it treats as ones whose modes another user may slip past
    (every shared one) and where the keys are instead; nothing under ``security: simple``; a warning when the
    node-local root is not known to be node-local."""
    spec = make_spec(filesystem={"root": str(tmp_path)})
    check = doctor._realm_keys(spec)
    assert check is not None and check.status == "ok", check
    assert f"never on {tmp_path}" in check.detail and "hpc-hadoop-" in check.detail and "sealed" in check.detail
    assert doctor._realm_keys(make_spec(filesystem={"root": str(tmp_path)}, security="simple")) is None
    monkeypatch.setattr(importlib.import_module("launcher.filesystems.detect"), "node_local_type",
                        lambda path, **_: None)
    warned = doctor._realm_keys(spec)
    assert warned is not None and warned.status == "warn" and warned.fix and "TMPDIR" in warned.fix
