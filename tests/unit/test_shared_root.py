"""Issue #11: a batch job's cluster directory must be on a filesystem every node shares (launcher/plan/cluster_plan.py
``check_shared_root``, launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.filesystems import check_shared_root
from launcher.filesystems.detect import node_local_type
from launcher.schedulers.base import Allocation, Node
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError

#: The module (``launcher.filesystems.detect`` the attribute is the function ``detect``).
detect_module = importlib.import_module("launcher.filesystems.detect")
GLUSTER_MOUNTS = "pfs:/hhpfs /mnt/hhpfs fuse.glusterfs rw,relatime,user_id=0 0 0\n/dev/vda / ext4 rw 0 0\n"


def _allocation(scheduler: str = "slurm", nodes: int = 1, preview: bool = False) -> Allocation:
    return Allocation(scheduler=scheduler, job_id="1", nodes=tuple(Node(f"n{i}", "10.0.0.1") for i in range(nodes)),
                      cores_per_node=4, memory_per_node=8 << 30, walltime=600.0, preview=preview)


def test_tmp_path_is_node_local(tmp_path: Path) -> None:
    assert node_local_type(tmp_path / "not" / "made" / "yet") is not None


@pytest.mark.parametrize(("magic", "mounts", "expected"), [
    (0x65735546, GLUSTER_MOUNTS, None),            # fuse.glusterfs: the test cluster's shared mount
    (0x6969, "srv:/home /mnt/hhpfs nfs4 rw 0 0\n", None),
    (0x0BD00BD0, "10.0.0.1@tcp:/fs /mnt/hhpfs lustre rw 0 0\n", None),
    (0xEF53, "/dev/sda1 /mnt/hhpfs ext3 rw 0 0\n", "ext3"),
    (0x01021994, "tmpfs /mnt/hhpfs tmpfs rw 0 0\n", "tmpfs"),
    (0x58465342, "/dev/sdb /mnt/hhpfs xfs rw 0 0\n", "xfs"),
    (0x2FC12FC1, "pool/data /mnt/hhpfs zfs rw 0 0\n", "zfs"),
    (0x794C7630, "overlay /mnt/hhpfs overlay rw 0 0\n", "overlay"),
])
def test_node_local_type_by_statfs_and_mounts(monkeypatch: pytest.MonkeyPatch, magic: int, mounts: str,
                                              expected: str | None) -> None:
    monkeypatch.setattr(detect_module, "statfs_magic", lambda path: magic)
    monkeypatch.setattr(detect_module, "existing_parent", lambda path: Path("/mnt/hhpfs/x"))
    assert node_local_type(Path("/mnt/hhpfs/x/y"), mounts_text=mounts) == expected


def test_a_batch_job_with_a_local_root_is_refused(make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec()
    with pytest.raises(UserError, match="which the compute nodes do not share") as info:
        check_shared_root(spec, _allocation(preview=True))
    assert info.value.field == "filesystem.root" and "parallel filesystem" in info.value.fix
    with pytest.raises(UserError):
        check_shared_root(spec, _allocation(nodes=3))  # `run` inside a 3-node allocation


def test_local_backend_one_node_run_and_shared_true_may_use_a_local_root(make_spec: Callable[..., JobSpec]) -> None:
    check_shared_root(make_spec(scheduler="local", nodes=1), _allocation("local"))
    check_shared_root(make_spec(nodes=1), _allocation(nodes=1))  # `run` in a one-node allocation: all on that node
    check_shared_root(make_spec(filesystem={"root": "/tmp/x", "shared": True}), _allocation(preview=True))


def test_shared_false_refuses_even_a_shared_filesystem(make_spec: Callable[..., JobSpec],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detect_module, "node_local_type", lambda path: None)
    check_shared_root(make_spec(), _allocation(preview=True))
    with pytest.raises(UserError, match="declared node-local"):
        check_shared_root(make_spec(filesystem={"root": "/tmp/x", "shared": False}), _allocation(preview=True))


@pytest.mark.parametrize("command", ["submit", "start", "render"])
def test_cli_refuses_before_anything_is_queued(tmp_path: Path, pfs_root: Path, monkeypatch: pytest.MonkeyPatch,
                                               write_yaml: Callable[..., Path], command: str) -> None:
    def never(*args: object) -> str:
        raise AssertionError("submitted")

    monkeypatch.setattr(SlurmScheduler, "submit", never)
    monkeypatch.setattr(SlurmScheduler, "check", lambda self, spec: None)
    job = write_yaml(tmp_path / "job.yaml", {"name": "loc", "scheduler": "slurm", "nodes": 1,
                                             "filesystem": {"root": str(pfs_root)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, [command, str(job)])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {job}: filesystem.root: {pfs_root} is on "), line
    assert "(fix: set filesystem.root to a directory on the parallel filesystem" in line
    assert result.stdout == "" and list(pfs_root.iterdir()) == []


def test_doctor_reports_a_local_root_as_a_fail_line(tmp_path: Path, pfs_root: Path,
                                                    write_yaml: Callable[..., Path]) -> None:
    job = write_yaml(tmp_path / "job.yaml", {"name": "loc", "scheduler": "slurm", "filesystem": {"root": str(pfs_root)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, ["doctor", str(job)])
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "shared root" in line]
    assert line.split()[0] == "fail" and "which the compute nodes do not share" in line, line
    assert not any("job file" in line and "do not share" in line for line in result.stdout.splitlines())
