"""Which filesystem a directory lives on (docs/architecture.md, Parallel filesystem decisions): ``statfs(2)``
``f_type``, the mount point, the FUSE subtype and the mount source from ``/proc/mounts``, free space, and whether
``flock`` works there. A parallel filesystem behind a FUSE client (``f_type`` says only ``fuse``) is recognised
from its FUSE subtype or its mount source (:func:`behind_fuse`).

Pure inspection: nothing here changes the filesystem except the ``flock`` probe's temporary file.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: statfs f_type magic numbers (linux/magic.h, Lustre, GPFS, OrangeFS, BeeGFS sources).
FS_MAGIC = {0x0BD00BD0: "lustre", 0x47504653: "gpfs", 0x20030528: "orangefs", 0x6969: "nfs",
            0x19830326: "beegfs", 0x65735546: "fuse", 0x01021994: "tmpfs", 0xEF53: "ext4", 0x58465342: "xfs",
            0x9123683E: "btrfs", 0x794C7630: "overlayfs", 0x2FC12FC1: "zfs", 0x4D44: "vfat", 0x858458F6: "ramfs",
            0xF2F52010: "f2fs", 0x2011BAB0: "exfat"}

#: Filesystem types that live on one node's own disk or memory: a directory there is not shared with the other
#: nodes of an allocation (``statfs`` names, plus the ``/proc/mounts`` names of the same filesystems).
NODE_LOCAL_TYPES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "overlayfs",
                              "zfs", "vfat", "msdos", "exfat", "f2fs", "squashfs"})

MOUNTS = Path("/proc/mounts")

#: Parallel filesystems recognised behind FUSE (statfs says only ``fuse``) from the mount's FUSE subtype
#: (``fuse.<subtype>`` in ``/proc/mounts``).
FUSE_SUBTYPES = {"pvfs2fuse": "orangefs", "orangefs": "orangefs", "pvfs2": "orangefs", "lustre": "lustre",
                 "beegfs": "beegfs", "gpfs": "gpfs"}
#: ... or from its source (the first field of ``/proc/mounts``, the client's ``fsname``), in this order:
#: OrangeFS's FUSE client ``pvfs2fuse#tcp://HOST:PORT/FS`` (the OrangeFS 2.10 mount of issue 17, and the BMI
#: address ``tcp://``, ``ib://`` or ``mx://HOST:PORT/FS`` of any OrangeFS client); a Lustre client's
#: ``NID@NET:/FSNAME`` (``10.1.1.1@tcp:/scratch``, ``@o2ib1``; LNet network types only, so
#: that ``user@host:/dir`` of sshfs is not one); BeeGFS's ``beegfs_nodev`` or ``beegfs...``;
#: GPFS's device ``gpfs0`` or ``/dev/gpfs0``.
MOUNT_SOURCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("orangefs", re.compile(r"^(pvfs2fuse|pvfs2|orangefs)#|^(tcp|ib|mx)://[^/\s]+:\d+/", re.IGNORECASE)),
    ("lustre", re.compile(r"^[^\s@:#]+@(tcp|o2ib|gni|ptl|kfi|efa)\d*(:[^\s@:]+@(tcp|o2ib|gni|ptl|kfi|efa)\d*)*:/\w",
                          re.IGNORECASE)),
    ("beegfs", re.compile(r"^beegfs", re.IGNORECASE)),
    ("gpfs", re.compile(r"^(/dev/)?gpfs", re.IGNORECASE)),
)


class _Statfs(ctypes.Structure):
    """``struct statfs`` of Linux on 64-bit platforms (``<bits/statfs.h>``)."""

    _fields_ = [("f_type", ctypes.c_long), ("f_bsize", ctypes.c_long), ("f_blocks", ctypes.c_ulong),
                ("f_bfree", ctypes.c_ulong), ("f_bavail", ctypes.c_ulong), ("f_files", ctypes.c_ulong),
                ("f_ffree", ctypes.c_ulong), ("f_fsid", ctypes.c_int * 2), ("f_namelen", ctypes.c_long),
                ("f_frsize", ctypes.c_long), ("f_flags", ctypes.c_long), ("f_spare", ctypes.c_long * 4)]


def statfs_magic(path: Path) -> int | None:
    """``f_type`` of ``statfs(path)`` as an unsigned 32-bit number, or ``None`` if the call fails."""
    buf = _Statfs()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.statfs(os.fsencode(str(path)), ctypes.byref(buf)) != 0:
        return None
    return int(buf.f_type) & 0xFFFFFFFF


def filesystem_type(path: Path) -> str:
    """The filesystem type under ``path`` from ``statfs(2)`` ``f_type`` (e.g. ``lustre``, ``fuse``, ``ext4``)."""
    magic = statfs_magic(path)
    if magic is None:
        return "unknown"
    return FS_MAGIC.get(magic, hex(magic))


@dataclass(frozen=True)
class MountEntry:
    """One line of ``/proc/mounts``."""

    source: str
    mount_point: str
    fstype: str
    options: str


def _unescape(field: str) -> str:
    # /proc/mounts writes space, tab, newline and backslash as octal escapes (\040 ...).
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit() and len(field[i + 1:i + 4]) == 3:
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mounts(text: str) -> list[MountEntry]:
    """Parse ``/proc/mounts`` text into entries, in file order (later entries shadow earlier ones)."""
    entries = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            entries.append(MountEntry(_unescape(parts[0]), _unescape(parts[1]), parts[2], parts[3]))
    return entries


def mount_entry(path: Path, mounts_text: str | None = None) -> MountEntry | None:
    """The mount that holds ``path``: the longest mount point that is a prefix of its real path; among
    equal mount points the last one (a mount stacked on another shadows it)."""
    real = os.path.realpath(path)
    text = mounts_text if mounts_text is not None else MOUNTS.read_text()
    best: MountEntry | None = None
    for entry in parse_mounts(text):
        mp = entry.mount_point
        inside = real == mp or real.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) >= len(best.mount_point)):
            best = entry
    return best


def flock_works(directory: Path) -> tuple[bool, str | None]:
    """Try an exclusive, non-blocking ``flock`` on a temporary file in ``directory``.

    Returns:
        ``(True, None)``, or ``(False, reason)``.
    """
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".hpc-hadoop-flock-") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError as exc:
        return False, exc.strerror or str(exc)
    return True, None


@dataclass(frozen=True)
class Detection:
    """What lives under a directory.

    Attributes:
        path: the directory inspected (the nearest existing parent of what was asked).
        type: ``lustre``, ``gpfs``, ``orangefs``, ``nfs``, ``beegfs``, ``fuse``, ``tmpfs``, ``ext4``... or the
            hex magic when unknown; from ``statfs`` ``f_type``, else from ``/proc/mounts``; a parallel filesystem
            behind FUSE from the mount's FUSE subtype or source (:func:`behind_fuse`).
        magic: ``f_type`` as a hex string (``0xbd00bd0``), or ``None``.
        subtype: for FUSE, the subtype from ``/proc/mounts`` (``glusterfs`` of ``fuse.glusterfs``).
        mount_point, source, mount_type: the mount from ``/proc/mounts``.
        free_bytes, total_bytes: space for unprivileged users / in total.
        flock: whether ``flock`` works; ``flock_error`` says why not.
        via: ``fuse`` when :attr:`type` was recognised behind a FUSE client, else ``None``.
    """

    path: str
    type: str
    magic: str | None
    subtype: str | None
    mount_point: str | None
    source: str | None
    mount_type: str | None
    free_bytes: int
    total_bytes: int
    flock: bool
    flock_error: str | None
    via: str | None = None

    @property
    def label(self) -> str:
        """``orangefs (fuse)`` for a filesystem recognised behind FUSE, ``fuse.glusterfs`` for other FUSE mounts with
        a subtype, else :attr:`type`."""
        if self.via:
            return f"{self.type} ({self.via})"
        return f"{self.type}.{self.subtype}" if self.subtype else self.type

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (with ``label``)."""
        return {**asdict(self), "label": self.label}


def existing_parent(path: Path) -> Path:
    """``path`` or its nearest existing ancestor."""
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def behind_fuse(entry: MountEntry) -> str | None:
    """The parallel filesystem a FUSE mount gives access to, from its FUSE subtype (:data:`FUSE_SUBTYPES`) or its
    source (:data:`MOUNT_SOURCES`): ``orangefs`` for ``pvfs2fuse#tcp://ofs1:3334/ofs``; ``None`` when neither
    names one (GlusterFS, sshfs...)."""
    fstype, _, subtype = entry.fstype.partition(".")
    if fstype == "fuse" and subtype.lower() in FUSE_SUBTYPES:
        return FUSE_SUBTYPES[subtype.lower()]
    for name, pattern in MOUNT_SOURCES:
        if pattern.search(entry.source):
            return name
    return None


def detect(path: Path, *, mounts_text: str | None = None, check_flock: bool = True) -> Detection:
    """Inspect the filesystem under ``path`` (or its nearest existing parent)."""
    probe = existing_parent(Path(path))
    magic = statfs_magic(probe)
    entry = mount_entry(probe, mounts_text)
    fs_type = FS_MAGIC.get(magic) if magic is not None else None
    if fs_type is None:
        fs_type = (entry.fstype.split(".", 1)[0] if entry else None) or (hex(magic) if magic is not None else "unknown")
    subtype, via = None, None
    if fs_type == "fuse" and entry is not None:
        if entry.fstype.startswith("fuse."):
            subtype = entry.fstype.split(".", 1)[1]
        recognised = behind_fuse(entry)
        if recognised:
            fs_type, subtype, via = recognised, None, "fuse"
    vfs = os.statvfs(probe)
    ok, error = flock_works(probe) if check_flock and os.access(probe, os.W_OK) else (False, "not checked")
    return Detection(path=str(probe), type=fs_type, magic=hex(magic) if magic is not None else None, subtype=subtype,
                     mount_point=entry.mount_point if entry else None, source=entry.source if entry else None,
                     mount_type=entry.fstype if entry else None, free_bytes=vfs.f_bavail * vfs.f_frsize,
                     total_bytes=vfs.f_blocks * vfs.f_frsize, flock=ok, flock_error=error, via=via)


def node_local_type(path: Path, *, mounts_text: str | None = None) -> str | None:
    """The type of the node-local filesystem under ``path`` (or its nearest existing parent), e.g. ``ext4``,
    or ``None`` when it may be shared (NFS, Lustre, GPFS, BeeGFS, any FUSE mount such as ``fuse.glusterfs``,
    or a type not known here).

    The type comes from ``statfs`` ``f_type`` and, for the name shown, from ``/proc/mounts`` (``ext3`` and
    ``ext2`` share ``ext4``'s magic number).
    """
    probe = existing_parent(Path(path))
    magic = statfs_magic(probe)
    entry = mount_entry(probe, mounts_text) if MOUNTS.exists() or mounts_text is not None else None
    by_magic = FS_MAGIC.get(magic) if magic is not None else None
    by_mount = entry.fstype if entry else None
    if by_magic is not None and by_magic not in NODE_LOCAL_TYPES:
        return None
    for name in (by_mount, by_magic):
        if name in NODE_LOCAL_TYPES:
            return name
    return None
