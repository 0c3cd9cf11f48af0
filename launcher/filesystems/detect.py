"""Which filesystem a directory lives on, from ``statfs(2)`` (DESIGN.md §5)."""

from __future__ import annotations

import ctypes
from pathlib import Path

#: statfs f_type magic numbers (linux/magic.h, Lustre, GPFS, OrangeFS, BeeGFS sources).
FS_MAGIC = {0x0BD00BD0: "lustre", 0x47504653: "gpfs", 0x20030528: "orangefs", 0x6969: "nfs",
             0x19830326: "beegfs", 0x65735546: "fuse", 0x01021994: "tmpfs", 0xEF53: "ext4", 0x58465342: "xfs",
             0x9123683E: "btrfs", 0x794C7630: "overlayfs"}


def filesystem_type(path: Path) -> str:
    """The filesystem type under ``path`` from ``statfs(2)`` ``f_type`` (e.g. ``lustre``, ``fuse``, ``ext4``)."""
    buf = ctypes.create_string_buffer(256)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.statfs(str(path).encode(), buf) != 0:
        return "unknown"
    magic = ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
    return FS_MAGIC.get(magic, hex(magic))
