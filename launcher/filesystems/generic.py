"""Any other POSIX filesystem (NFS, GlusterFS, BeeGFS, ext4, tmpfs...): nothing to stripe."""

from __future__ import annotations

from launcher.filesystems.base import Filesystem


class GenericFilesystem(Filesystem):
    """A filesystem without per-directory striping that we know how to set.

    Args:
        label: what was detected (``nfs``, ``fuse.glusterfs``, ``ext4``...), named in the report.
    """

    name = "generic"
    striping = False

    def __init__(self, label: str = "this filesystem") -> None:
        self.label = label
        self.why_not = f"no per-directory striping that hpc-hadoop can set on {label}"
