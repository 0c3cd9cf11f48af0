"""Tests of launcher/filesystems/detect.py."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from launcher.filesystems.detect import node_local_type

# -- issue 11, folded from tests/unit/test_shared_root.py: Issue #11: a batch job's cluster directory must be
# on a filesystem every node shares (launcher/filesystems/__init__.py ``check_shared_root``,
# launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued.


detect_module = importlib.import_module("launcher.filesystems.detect")


GLUSTER_MOUNTS = "pfs:/hhpfs /mnt/hhpfs fuse.glusterfs rw,relatime,user_id=0 0 0\n/dev/vda / ext4 rw 0 0\n"


def test_tmp_path_is_node_local(tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
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
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    monkeypatch.setattr(detect_module, "statfs_magic", lambda path: magic)
    monkeypatch.setattr(detect_module, "existing_parent", lambda path: Path("/mnt/hhpfs/x"))
    assert node_local_type(Path("/mnt/hhpfs/x/y"), mounts_text=mounts) == expected
