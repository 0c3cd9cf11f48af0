"""Stand-in for an OrangeFS volume mounted with OrangeFS's FUSE client, ``pvfs2fuse`` (OrangeFS 2.10 with
several data servers), which cannot be installed on the test machine: a passthrough FUSE file system (mfusepy,
libfuse 3) over a local directory that behaves as that client does where hpc-hadoop can tell:

* the mount's type is plain ``fuse`` (statfs magic ``0x65735546``) and its source ``pvfs2fuse#tcp://HOST:PORT/ofs``
  (``/proc/self/mountinfo``), as ``pvfs2fuse`` mounts show;
* ``chmod`` with the sticky bit fails with ``EINVAL``: ``pvfs2fuse`` passes ``mode & 07777`` to
  ``PVFS_sys_setattr``, which refuses any bit outside ``PVFS_PERM_VALID`` (``include/pvfs2-types.h``: "no
  PVFS_U_VTX (sticky bit)"); setgid and setuid are valid bits and are kept (``PVFS_G_SGID``, ``PVFS_U_SUID``), and a
  new entry in a setgid directory takes the directory's group (and a new directory the setgid bit), as
  ``sys-mkdir.sm``/``sys-create.sm`` do;
* each refused ``chmod`` is logged with a backtrace (``gossip_lerr`` → ``gossip_backtrace``), and the client
  exits after :data:`MAX_BACKTRACES` of them (``GOSSIP_MAX_BT`` in ``src/common/gossip/gossip.c``: 8, then
  ``exit(-1)``): the 7th refused ``chmod`` still gives ``EINVAL``, the 8th ``ECONNABORTED`` (the client exits while
  the kernel waits for its answer), every later call ``ENOTCONN`` (``Transport endpoint is not connected``) until
  the mount point is unmounted, and this process exits 255. The log (standard error) has one line per refusal,
  ``... invalid or unsupported permission bits (refused chmod N of 8: PATH to MODE)``, which tests count;
* extended attributes, by ``--xattrs``:

  - ``none``: every xattr call fails with ``ENOTSUP`` (``Operation not supported``), as the stock ``pvfs2fuse``;
  - ``store``: a directory keeps the ``user.pvfs2.*`` attributes it is given (``num_dfiles``, ``dist_name``,
    ``dist_params``) and new directories inherit them (OrangeFS's directory hints). A file has no ``user.pvfs2.*``
    attribute: what it got is in ``system.pvfs2.dh`` (its data file handles, 8 bytes each) and
    ``system.pvfs2.md`` (its distribution, encoded as OrangeFS does: a u32 length, the name, zero padding to 8
    bytes, then the strip size as a little-endian int64), as ``pvfs2-viewdist`` reads them. Its data file count is
    its directory's ``num_dfiles`` clamped to ``--servers`` (a file never has more data files than the file system
    has data servers; OrangeFS clamps silently), ``--servers`` where the directory asks none; its distribution is
    the directory's, else ``simple_stripe`` with ``strip_size:65536`` (OrangeFS's defaults). That count is kept as
    ``system.pvfs2.nd`` (a little-endian u32). With ``--file-stuffing yes`` (the default, as ``pvfs2-genconfig``
    writes ``FileStuffing yes``; issue 37 item 1, seen on a real OrangeFS 2.10: an empty file in a directory asking 8
    on 4 servers had ``dh`` of 8 bytes and ``nd=0x04000000``) a new file has one data file until a write or a
    truncate takes it past its first strip, then all of them (``src/server/create.c``, ``src/server/unstuff.c``).
    ``system.pvfs2.*`` cannot be set or removed (``EINVAL``, as ``PINT_eattr_namespaces`` refuses).
* path lengths (``--path-max``, default 255): ``pvfs2fuse`` splits the path of an entry it makes (``mkdir``,
  ``create``, ``rename``'s target; the path FUSE hands it, from the mount point, with its leading ``/``) through a
  ``PVFS_NAME_MAX`` (256-byte) buffer (``PINT_get_path_element`` in ``src/common/misc/str-utils.c`` copies the whole
  path into ``char[PVFS_NAME_MAX]`` with ``strncpy(..., PVFS_NAME_MAX - 1)``; ``PINT_get_base_dir`` refuses a
  parent of 256 bytes or more). So a path of more than 255 bytes is cut to its first 255: when the cut falls inside
  the entry's own name, the entry is made **under the cut name** (the real client made a job history file whose
  name ended in ``.j``), and the call then fails as FUSE cannot find the entry under its full name; when the name
  is cut off entirely the call fails with ``ERANGE`` (``Numerical result out of range``, what the real client
  returned: the issue saw it from ~253 bytes below the mount). ``rename``'s source, ``unlink`` and ``rmdir`` go
  through the same split (a rename from a long name renames the entry made under the cut one). ``symlink`` and
  ``mknod`` (which ``pvfs2fuse`` does not split that way, or lacks) and ``link`` (OrangeFS has no hard links) get
  ``ERANGE`` beyond the limit.
* permissions, by ``--permission-cache SECONDS`` (default 0.5): one root-owned ``pvfs2fuse`` with ``allow_other``
  serves every user of the node, and the client caches permission results across users (issue 36 item 5, seen on
  a real OrangeFS 2.10): another user read the owner's 0600 files in a 0700 directory within a fraction of a second
  after the owner touched them (``stat key`` as the owner, then ``head -c 3 key`` as her printed ``TOP``; after a
  1 s gap, ``Permission denied``); during a real run, a loop of ``cat <cluster>/krb/services.keytab`` as her got
  the keytab 8 times out of 43. The reverse happened too: the owner's KDC failed with ``Failed to store keytab ...
  Permission denied`` (a refusal cached from her attempt applied to the owner). So the stand-in mounts without
  ``default_permissions`` and checks permissions itself (:class:`PermissionWindow`), as the kernel would: search on
  every directory of the path (a ``stat`` asks nothing of the entry itself), read/write/execute on the entry by the
  ``open`` flags (``access``, ``opendir``, ``readdir``, ``truncate`` too), write and search on the directory to make
  or remove an entry (``create``, ``mkdir``, ``mknod``, ``symlink``, ``link``, ``unlink``, ``rmdir``, ``rename``;
  the sticky rule, ``protected_hardlinks``), the owner for ``chmod``, ``chown`` and ``utimensat`` with times
  (``EPERM``), the kernel's rules for extended attributes; owner, group (the caller's groups from
  ``/proc/<pid>/status``) or other bits, root passes. A refusal is ``EACCES`` (``EPERM`` where the kernel says so).
  But the result of a check on a path (allowed or refused), keyed by the path and the kind of access and not by
  the caller, answers **any** caller for ``SECONDS`` after it was made: the owner's read lets another user read
  within the window, another user's refusal refuses the owner. After it the check is made afresh for the caller.
  The stand-in's model: what lets her read the file is the owner's *read* of it (the owner's ``stat`` alone lets her
  through the directories on the way, not into the file). Root's checks are neither kept nor answered from the
  cache (the issue saw the window between two ordinary users). The kernel's own caches of a FUSE mount (libfuse's
  1 s entry and attribute timeouts) also answer a ``stat`` within a second without asking the client, as on the
  real mount. ``--permission-cache 0``: mounted with ``default_permissions``, the kernel checks every caller (no
  window). ``--permission-cache-refusals no`` keeps only what was allowed (her reads still slip through, her refusals
  do not refuse the owner): for a test of what she reads during a run that the other face must not fail.

Everything else passes through to the backing directory; entries are owned by the calling user (mounted with
``allow_other``). Run as root, in the foreground, until the mount point is unmounted::

    python tests/standins/orangefs_fuse.py BACKING MOUNTPOINT [--servers 4] [--xattrs store|none]
        [--source pvfs2fuse#tcp://ofs-server:3334/ofs] [--path-max 255] [--file-stuffing yes|no]
        [--permission-cache 0.5] [--permission-cache-refusals yes|no]
"""

from __future__ import annotations

import argparse
import errno
import functools
import os
import re
import secrets
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mfusepy as fuse

#: The layout attributes of OrangeFS (the names its kernel and FUSE interfaces expose).
NUM_DFILES = "user.pvfs2.num_dfiles"
DIST_NAME = "user.pvfs2.dist_name"
DIST_PARAMS = "user.pvfs2.dist_params"
LAYOUT_ATTRIBUTES = (NUM_DFILES, DIST_NAME, DIST_PARAMS)
#: OrangeFS's default distribution of a file whose directory names none.
DEFAULT_DIST = {DIST_NAME: b"simple_stripe\0", DIST_PARAMS: b"strip_size:65536\0"}
#: What ``chmod`` refuses with EINVAL: the sticky bit (not in OrangeFS's ``PVFS_PERM_VALID``).
REFUSED_MODE_BITS = stat.S_ISVTX
#: Backtraces after which the client exits (``GOSSIP_MAX_BT``).
MAX_BACKTRACES = 8
#: What the log says for each refused ``chmod`` (``PVFS_isys_setattr``'s message), counted by tests.
REFUSAL_MESSAGE = "PVFS_isys_setattr() failure: invalid or unsupported permission bits"
#: A file's layout attributes as OrangeFS's system interface shows them, and the backing attributes that hold them.
SYSTEM_NS = "system.pvfs2."
FILE_LAYOUT_KEYS = ("dh", "md", "nd")
BACKING_PREFIX = "user.orangefs-standin."
DEFAULT_STRIP_SIZE = 65536
#: The longest path from the mount point (with its leading ``/``, bytes) ``pvfs2fuse`` makes an entry at:
#: ``PVFS_NAME_MAX - 1`` (``include/pvfs2-types.h``: ``PVFS_NAME_MAX 256``).
PATH_MAX_BELOW_MOUNT = 255
#: ``--permission-cache``'s default: how long (seconds) ``pvfs2fuse`` reuses a permission result, for any caller.
PERMISSION_CACHE = 0.5
#: The open flag the kernel adds for ``execve`` (``__FMODE_EXEC``), which FUSE passes on to ``open``.
FMODE_EXEC = 0o40
#: ``utimensat``'s "now" and "leave alone", as libfuse 3 hands them over (the nanoseconds of second 0).
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
R, W, X = os.R_OK, os.W_OK, os.X_OK
STAT_FIELDS = ("st_mode", "st_ino", "st_dev", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks",
               "st_atime_ns", "st_mtime_ns", "st_ctime_ns")


@dataclass
class Caller:
    """Who asks: the ``uid``, ``gid`` and ``pid`` FUSE gives (``fuse_get_context``); the supplementary groups are
    read from ``/proc/<pid>/status`` (its ``Groups:`` line) when a check needs them."""

    uid: int
    gid: int
    pid: int

    @classmethod
    def current(cls) -> Caller:
        uid, gid, pid = fuse.fuse_get_context()
        return cls(uid, gid, pid)

    @functools.cached_property
    def groups(self) -> frozenset[int]:
        try:
            text = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:  # the caller is gone already
            return frozenset()
        return next((frozenset(int(g) for g in line.split()[1:]) for line in text.splitlines()
                     if line.startswith("Groups:")), frozenset())

    def in_group(self, gid: int) -> bool:
        return gid == self.gid or gid in self.groups


def allows(caller: Caller, st: os.stat_result, want: int) -> bool:
    """The kernel's ``generic_permission`` without ACLs: ``want`` (``R|W|X`` bits) against the owner's bits for the
    owner, the group's for a member of the entry's group, the others' for anyone else; root may do anything but
    execute a file that has no execute bit at all."""
    mode = st.st_mode
    if caller.uid == 0:
        return not want & X or stat.S_ISDIR(mode) or bool(mode & 0o111)
    if caller.uid == st.st_uid:
        bits = mode >> 6
    elif caller.in_group(st.st_gid):
        bits = mode >> 3
    else:
        bits = mode
    return not want & ~bits & 7


def open_access(flags: int) -> int:
    """What an ``open`` with ``flags`` needs (the kernel's ``may_open``): read and/or write by the access mode, write
    for ``O_TRUNC``, execute alone for ``execve``'s open."""
    if flags & FMODE_EXEC:
        return X
    want = {os.O_RDONLY: R, os.O_WRONLY: W}.get(flags & os.O_ACCMODE, R | W)
    return want | W if flags & os.O_TRUNC else want


def _ancestors(path: str) -> list[str]:
    """The directories a lookup of ``path`` (from the mount point, leading ``/``) searches: ``/`` down to its parent."""
    parts = [part for part in path.split("/") if part]
    return ["/" + "/".join(parts[:i]) for i in range(len(parts))]


def _parent(path: str) -> str:
    return os.path.dirname(path.rstrip("/")) or "/"


class PermissionWindow:
    """The permission checks ``pvfs2fuse`` makes instead of the kernel (mounted without ``default_permissions``),
    the kernel's rules with the real client's cache: the result of a check (allowed or refused) on a path, keyed by
    the path and the kind of access and not by the caller, answers every caller for ``seconds`` after it was made
    (issue 36 item 5). ``seconds`` 0: no check here (the kernel makes them, ``default_permissions``). Root is let
    through (the kernel's rules for root: all but executing a file without an execute bit) and is not cached either
    way. ``refusals`` False keeps only what was allowed (``--permission-cache-refusals no``): the other user still
    reads what the owner touched, but her refusals do not refuse the owner (a test of what she reads, which must not
    fail the owner's run for the real client's other face)."""

    def __init__(self, backing: str, seconds: float, refusals: bool = True) -> None:
        self.backing = backing
        self.seconds = seconds
        self.refusals = refusals
        self.enabled = seconds > 0
        self.results: dict[tuple[str, str], tuple[float, int]] = {}
        self.lock = threading.Lock()

    def _check(self, caller: Caller, path: str, kind: str, decide: Callable[[], int]) -> None:
        """Raise the errno of the check ``kind`` on ``path`` (0: allowed): ``decide()`` for root, else the cached
        result when one was made less than ``seconds`` ago (by whoever), else ``decide()``, kept for everyone.
        An ``OSError`` of ``decide`` (the entry is gone) is raised and not kept."""
        if caller.uid == 0:
            error = decide()
        else:
            key, now = (path, kind), time.monotonic()
            with self.lock:
                made = self.results.get(key)
            if made is not None and now - made[0] < self.seconds:
                error = made[1]
            else:
                error = decide()
                with self.lock:
                    if len(self.results) > 4096:
                        self.results = {k: v for k, v in self.results.items() if now - v[0] < self.seconds}
                    if self.refusals or not error:
                        self.results[key] = (now, error)
        if error:
            raise fuse.FuseOSError(error)

    def _stat(self, path: str) -> os.stat_result:
        return os.lstat(self.backing + path)

    def _bits(self, caller: Caller, path: str, want: int) -> None:
        kind = "".join(letter for bit, letter in ((R, "r"), (W, "w"), (X, "x")) if want & bit)
        self._check(caller, path, kind, lambda: 0 if allows(caller, self._stat(path), want) else errno.EACCES)

    def _owner(self, caller: Caller, path: str, kind: str = "owner", refusal: int = errno.EPERM) -> None:
        self._check(caller, path, kind, lambda: 0 if caller.uid in (0, self._stat(path).st_uid) else refusal)

    def search(self, path: str, caller: Caller | None = None) -> None:
        """Search (``x``) on every directory of the way to ``path``: what a lookup needs (``stat`` of ``path``)."""
        if self.enabled:
            caller = caller or Caller.current()
            for directory in _ancestors(path):
                self._bits(caller, directory, X)

    def entry(self, path: str, want: int, caller: Caller | None = None) -> None:
        """The way to ``path``, then ``want`` (``R|W|X`` bits) on ``path`` itself (``open``, ``access``...)."""
        if self.enabled:
            caller = caller or Caller.current()
            self.search(path, caller)
            if want & 7:
                self._bits(caller, path, want & 7)

    def create(self, path: str, caller: Caller | None = None) -> None:
        """Making ``path``: write and search on its directory (the kernel's ``may_create``)."""
        if self.enabled:
            self.entry(_parent(path), W | X, caller)

    def delete(self, path: str, caller: Caller | None = None) -> None:
        """Removing ``path`` (``unlink``, ``rmdir``, a rename's source): write and search on its directory, and in a
        sticky directory the entry's or the directory's owner (``may_delete``, ``check_sticky``: ``EPERM``)."""
        if not self.enabled:
            return
        caller = caller or Caller.current()
        parent = _parent(path)
        self.entry(parent, W | X, caller)

        def sticky() -> int:
            st = self._stat(parent)
            mine = caller.uid in (0, st.st_uid, self._stat(path).st_uid)
            return 0 if mine or not st.st_mode & stat.S_ISVTX else errno.EPERM
        self._check(caller, path, "delete", sticky)

    def rename(self, old: str, new: str) -> None:
        """``old`` removed, ``new`` made or replaced, and a directory moved to another directory written (its
        ``..``), as ``vfs_rename`` checks."""
        if not self.enabled:
            return
        caller = Caller.current()
        self.delete(old, caller)
        if os.path.lexists(self.backing + new):
            self.delete(new, caller)
        else:
            self.create(new, caller)
        if _parent(old) != _parent(new) and stat.S_ISDIR(self._stat(old).st_mode):
            self._bits(caller, old, W)

    def link(self, source: str, target: str) -> None:
        """A hard link ``target`` to ``source``: ``target`` made, and with ``fs.protected_hardlinks`` (the sysctl)
        ``source`` the caller's, or a regular file without setuid (nor setgid with group execute) that the caller
        may read and write (``may_linkat``: ``EPERM``)."""
        if not self.enabled:
            return
        caller = Caller.current()
        self.search(source, caller)
        self.create(target, caller)

        def protected() -> int:
            st = self._stat(source)
            if caller.uid in (0, st.st_uid) or Path("/proc/sys/fs/protected_hardlinks").read_text().strip() == "0":
                return 0
            mode = st.st_mode
            safe = stat.S_ISREG(mode) and not mode & stat.S_ISUID and \
                (mode & (stat.S_ISGID | stat.S_IXGRP)) != (stat.S_ISGID | stat.S_IXGRP)
            return 0 if safe and allows(caller, st, R | W) else errno.EPERM
        self._check(caller, source, "link", protected)

    def owner(self, path: str) -> None:
        """Only the owner (or root): ``chmod``, ``utimensat`` with times (``EPERM``)."""
        if self.enabled:
            caller = Caller.current()
            self.search(path, caller)
            self._owner(caller, path)

    def chmod_mode(self, path: str, mode: int) -> int:
        """``mode`` without the setgid bit when the caller (not root) is not in the entry's group: the kernel drops
        it silently (``setattr_prepare``); under ``default_permissions`` the kernel did before asking."""
        if not self.enabled or not mode & stat.S_ISGID:
            return mode
        caller = Caller.current()
        return mode if caller.uid == 0 or caller.in_group(self._stat(path).st_gid) else mode & ~stat.S_ISGID

    def chown(self, path: str, uid: int, gid: int) -> None:
        """``chown``: a new owner only by root; a new group by the owner among their own groups, or root; ``-1``
        changes nothing and needs nothing (``chown_ok``, ``chgrp_ok``: ``EPERM``)."""
        if not self.enabled:
            return
        caller = Caller.current()
        self.search(path, caller)
        if uid != -1:
            self._check(caller, path, f"chown {uid}",
                        lambda: 0 if caller.uid == 0 or uid == caller.uid == self._stat(path).st_uid else errno.EPERM)
        if gid != -1:
            def chgrp_ok() -> int:
                st = self._stat(path)
                mine = caller.uid == st.st_uid and (gid == st.st_gid or caller.in_group(gid))
                return 0 if caller.uid == 0 or mine else errno.EPERM
            self._check(caller, path, f"chgrp {gid}", chgrp_ok)

    def utimes(self, path: str, times: tuple[int, int] | None) -> None:
        """``utimensat``: set to now (``touch``) by the owner or anyone who may write (``EACCES``), to given times
        by the owner only (``EPERM``). FUSE does not say which: the kernel sends its own clock for "now", so times
        that are both equal and within a second of this clock count as "now"."""
        if not self.enabled:
            return
        caller = Caller.current()
        self.search(path, caller)
        if _set_to_now(times):
            self._check(caller, path, "touch",
                        lambda: 0 if caller.uid == self._stat(path).st_uid or
                        allows(caller, self._stat(path), W) else errno.EACCES)
        else:
            self._owner(caller, path)

    def xattr(self, path: str, name: str, *, write: bool) -> None:
        """An extended attribute read or written (the kernel's ``xattr_permission``): ``security.*`` and
        ``system.*`` are left to the file system, ``trusted.*`` is root's (``ENODATA`` to read, ``EPERM`` to
        write), ``user.*`` only on regular files and directories (and in a sticky directory written by its owner);
        else read or write permission on the entry."""
        if not self.enabled:
            return
        caller = Caller.current()
        self.search(path, caller)
        if name.startswith(("security.", "system.")):
            return
        refused = errno.EPERM if write else errno.ENODATA
        if name.startswith("trusted."):
            if caller.uid != 0:
                raise fuse.FuseOSError(refused)
            return
        if name.startswith("user."):
            mode = self._stat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise fuse.FuseOSError(refused)
            if write and stat.S_ISDIR(mode) and mode & stat.S_ISVTX:
                self._owner(caller, path, "xattr owner")
        self._bits(caller, path, W if write else R)


def _set_to_now(times: tuple[int, int] | None) -> bool:
    """Whether ``utimens`` got "now" for both times (see :meth:`PermissionWindow.utimes`)."""
    if times is None or times == (UTIME_NOW, UTIME_NOW):
        return True
    atime, mtime = times
    return UTIME_OMIT not in times and atime == mtime and abs(time.time_ns() - atime) < 1_000_000_000


class OrangeFsClient(fuse.Operations):
    """The file system operations; ``backing`` holds the data, ``servers`` is the number of data servers,
    ``xattrs`` is ``store`` or ``none``, ``permission_cache`` the seconds a permission result answers every caller
    (:class:`PermissionWindow`; 0: the kernel checks)."""

    use_ns = True

    def __init__(self, backing: Path, servers: int, xattrs: str, path_max: int = PATH_MAX_BELOW_MOUNT,
                 stuffing: bool = True, permission_cache: float = 0, cache_refusals: bool = True) -> None:
        self.backing = str(backing)
        self.permissions = PermissionWindow(self.backing, permission_cache, cache_refusals)
        self.servers = servers
        self.xattrs = xattrs
        self.stuffing = stuffing
        self.refused = 0
        self.lock = threading.Lock()
        self.path_max = path_max

    def _real(self, path: str) -> str:
        return self.backing + path

    def _own(self, real: str) -> None:
        """The caller owns a new entry; in a setgid directory it takes the directory's group, and a new directory
        the setgid bit too (``sys-mkdir.sm``, ``sys-create.sm``)."""
        uid, gid, _ = fuse.fuse_get_context()
        parent = os.stat(os.path.dirname(real))
        if parent.st_mode & stat.S_ISGID:
            gid = parent.st_gid
        os.lchown(real, uid, gid)
        if parent.st_mode & stat.S_ISGID and os.path.isdir(real) and not os.path.islink(real):
            os.chmod(real, stat.S_IMODE(os.stat(real).st_mode) | stat.S_ISGID)

    # -- metadata ------------------------------------------------------------------------------
    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        if fh is None:  # stat: search on the way, nothing asked of the entry itself (fstat: nothing at all)
            self.permissions.search(path)
        st = os.fstat(fh) if fh is not None else os.lstat(self._real(path))
        attrs = {key: getattr(st, key) for key in STAT_FIELDS}
        for key in ("st_atime", "st_mtime", "st_ctime"):
            attrs[key] = attrs.pop(key + "_ns")
        return attrs

    def access(self, path: str, amode: int) -> int:
        self.permissions.search(path)
        if not os.path.lexists(self._real(path)):
            raise fuse.FuseOSError(errno.ENOENT)
        self.permissions.entry(path, amode)
        return 0

    def chmod(self, path: str, mode: int) -> int:
        real = self._real(path)
        self.permissions.search(path)
        os.lstat(real)  # pvfs2fuse looks the path up first (ENOENT before EINVAL)
        self.permissions.owner(path)  # the kernel's EPERM comes before the client's EINVAL
        mode = self.permissions.chmod_mode(path, mode)
        if mode & REFUSED_MODE_BITS:
            self._backtrace(f"{path} to {stat.S_IMODE(mode):04o}")
            raise fuse.FuseOSError(errno.EINVAL)
        os.chmod(real, stat.S_IMODE(mode))
        return 0

    def _backtrace(self, what: str) -> None:
        """Log a refused ``chmod`` with a backtrace, as ``gossip_lerr`` does; the :data:`MAX_BACKTRACES`-th makes the
        client exit 255 at once (``exit(-1)``), the request unanswered (the kernel gives it ``ECONNABORTED``)."""
        with self.lock:
            self.refused += 1
            stamp = time.strftime("%H:%M:%S")
            sys.stderr.write(f"[E {stamp}] src/client/sysint/sys-setattr.sm line 122: {REFUSAL_MESSAGE} "
                             f"(refused chmod {self.refused} of {MAX_BACKTRACES}: {what})\n"
                             "\t[bt] pvfs2fuse(PVFS_isys_setattr+0x1f4) [0x4a3c54]\n"
                             "\t[bt] pvfs2fuse(PVFS_sys_setattr+0x5e) [0x4a3e8e]\n"
                             "\t[bt] pvfs2fuse(pvfs_fuse_chmod+0x8c) [0x40b7cc]\n")
            sys.stderr.flush()
            if self.refused >= MAX_BACKTRACES:
                sys.stderr.write(f"[E {stamp}] pvfs2fuse: {MAX_BACKTRACES} backtraces, exiting (GOSSIP_MAX_BT)\n")
                sys.stderr.flush()
                os._exit(255)

    def chown(self, path: str, uid: int, gid: int) -> int:
        self.permissions.chown(path, uid, gid)
        os.lchown(self._real(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        self.permissions.utimes(path, times)
        os.utime(self._real(path), ns=times, follow_symlinks=False) if times else \
            os.utime(self._real(path), follow_symlinks=False)
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        self.permissions.search(path)
        sv = os.statvfs(self._real(path))
        return {key: getattr(sv, key) for key in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                                                   "f_files", "f_ffree", "f_favail", "f_flag", "f_namemax")}

    # -- the namespace ---------------------------------------------------------------------------
    def opendir(self, path: str) -> int:
        self.permissions.entry(path, R)
        return 0

    def readdir(self, path: str, fh: int) -> list[str]:
        self.permissions.entry(path, R)
        return [".", "..", *os.listdir(self._real(path))]

    def readlink(self, path: str) -> str:
        self.permissions.search(path)
        return os.readlink(self._real(path))

    def mkdir(self, path: str, mode: int) -> int:
        self.permissions.create(path)
        real = self._real(_entry_path(path, self.path_max))
        os.mkdir(real, stat.S_IMODE(mode) & ~REFUSED_MODE_BITS)
        self._own(real)
        if self.xattrs == "store":
            parent = os.path.dirname(real)
            for name in LAYOUT_ATTRIBUTES:
                value = _attribute(parent, name)
                if value is not None:
                    os.setxattr(real, name, value)
        return 0

    def rmdir(self, path: str) -> int:
        self.permissions.delete(path)
        os.rmdir(self._real(_entry_path(path, self.path_max)))
        return 0

    def mknod(self, path: str, mode: int, dev: int) -> int:
        self.permissions.create(path)
        real = self._real(_entry_path(path, self.path_max, cut=False))
        os.mknod(real, mode & ~REFUSED_MODE_BITS, dev)
        self._own(real)
        if self.xattrs == "store" and stat.S_ISREG(mode):
            self._file_layout(real)
        return 0

    def unlink(self, path: str) -> int:
        self.permissions.delete(path)
        os.unlink(self._real(_entry_path(path, self.path_max)))
        return 0

    def symlink(self, target: str, source: str) -> int:
        self.permissions.create(target)
        real = self._real(_entry_path(target, self.path_max, cut=False))
        os.symlink(source, real)
        self._own(real)
        return 0

    def link(self, target: str, source: str) -> int:
        self.permissions.link(source, target)
        os.link(self._real(source), self._real(_entry_path(target, self.path_max, cut=False)))
        return 0

    def rename(self, old: str, new: str) -> int:
        self.permissions.rename(old, new)
        os.rename(self._real(_entry_path(old, self.path_max)), self._real(_entry_path(new, self.path_max)))
        return 0

    # -- data ------------------------------------------------------------------------------------
    def create(self, path: str, mode: int, flags: int) -> int:
        self.permissions.create(path)
        real = self._real(_entry_path(path, self.path_max))
        fd = os.open(real, flags | os.O_CREAT, stat.S_IMODE(mode) & ~REFUSED_MODE_BITS)
        self._own(real)
        if self.xattrs == "store":
            self._file_layout(real)
        return fd

    def _file_layout(self, real: str) -> None:
        """A new file's data files: its directory's ``num_dfiles`` clamped to the server count (the servers when the
        directory asks for none), its directory's distribution or OrangeFS's default; kept as the bytes of
        ``system.pvfs2.dh`` and ``system.pvfs2.md`` (:func:`encode_distribution`), and the count it asked for,
        clamped, as ``system.pvfs2.nd`` (a little-endian u32: ``NUM_DFILES_REQ_KEYSTR "nd"``,
        ``src/common/misc/pvfs2-internal.h``). With file stuffing (``FileStuffing yes``, what ``pvfs2-genconfig``
        writes by default) a file is made with one data file whatever it asked (``src/server/create.c``:
        ``dfile_count = 1``, ``stuffed = 1``) and gets the rest once it grows past its first strip
        (:meth:`_unstuff`)."""
        parent = os.path.dirname(real)
        asked = (_attribute(parent, NUM_DFILES) or b"").rstrip(b"\0")
        count = min(int(asked), self.servers) if asked.isdigit() and int(asked) > 0 else self.servers
        name = (_attribute(parent, DIST_NAME) or DEFAULT_DIST[DIST_NAME]).rstrip(b"\0").decode()
        params = (_attribute(parent, DIST_PARAMS) or DEFAULT_DIST[DIST_PARAMS]).decode(errors="replace")
        match = re.search(r"strip_size:(\d+)", params)
        os.setxattr(real, BACKING_PREFIX + "dh", _handles(1 if self.stuffing else count))
        os.setxattr(real, BACKING_PREFIX + "nd", struct.pack("<I", count))
        os.setxattr(real, BACKING_PREFIX + "md",
                    encode_distribution(name, int(match.group(1)) if match else DEFAULT_STRIP_SIZE))

    def _unstuff(self, real: str, end: int) -> None:
        """A stuffed file written (or truncated) to ``end`` bytes, past its first strip, gets the data files it asked
        for (``src/server/unstuff.c``: allocated on the first I/O beyond the strip)."""
        handles, asked, dist = (_attribute(real, BACKING_PREFIX + key) for key in ("dh", "nd", "md"))
        if handles is None or asked is None or dist is None:
            return
        (count,) = struct.unpack("<I", asked)
        if len(handles) // 8 < count and end > strip_size_of(dist):
            os.setxattr(real, BACKING_PREFIX + "dh", _handles(count))

    def open(self, path: str, flags: int) -> int:
        self.permissions.entry(path, open_access(flags))
        return os.open(self._real(path), flags)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        written = os.pwrite(fh, data, offset)
        if self.xattrs == "store":
            self._unstuff(self._real(path), offset + written)
        return written

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is None:  # truncate(2) of a path; ftruncate(2) was checked when the file was opened
            self.permissions.entry(path, W)
        os.truncate(self._real(path), length)
        if self.xattrs == "store":
            self._unstuff(self._real(path), length)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        os.fdatasync(fh) if datasync else os.fsync(fh)
        return 0

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    # -- extended attributes ---------------------------------------------------------------------
    def _xattrs_supported(self) -> None:
        if self.xattrs == "none":
            raise fuse.FuseOSError(errno.ENOTSUP)

    def getxattr(self, path: str, name: str, position: int = 0) -> bytes:
        self.permissions.xattr(path, name, write=False)
        self._xattrs_supported()
        backing = _backing_name(name)
        value = _attribute(self._real(path), backing) if backing else None
        if value is None:
            raise fuse.FuseOSError(errno.ENODATA)
        return value

    def setxattr(self, path: str, name: str, value: bytes, options: int, position: int = 0) -> int:
        self.permissions.xattr(path, name, write=True)
        self._xattrs_supported()
        if _backing_name(name) != name:
            raise fuse.FuseOSError(errno.EINVAL)
        os.setxattr(self._real(path), name, value, options, follow_symlinks=False)
        return 0

    def listxattr(self, path: str) -> list[str]:
        self.permissions.search(path)
        self._xattrs_supported()
        return [SYSTEM_NS + n[len(BACKING_PREFIX):] if n.startswith(BACKING_PREFIX) else n
                for n in os.listxattr(self._real(path), follow_symlinks=False)]

    def removexattr(self, path: str, name: str) -> int:
        self.permissions.xattr(path, name, write=True)
        self._xattrs_supported()
        if _backing_name(name) != name:
            raise fuse.FuseOSError(errno.EINVAL)
        os.removexattr(self._real(path), name, follow_symlinks=False)
        return 0


def _backing_name(name: str) -> str | None:
    """The backing attribute that holds the attribute ``name``: itself, the stand-in's own for a file's
    ``system.pvfs2.dh``/``md``, ``None`` for a name no client may use (the stand-in's own names)."""
    if name.startswith(BACKING_PREFIX):
        return None
    if name.startswith(SYSTEM_NS):
        key = name[len(SYSTEM_NS):]
        return BACKING_PREFIX + key if key in FILE_LAYOUT_KEYS else None
    return name


def _handles(count: int) -> bytes:
    """``count`` random data file handles, 8 bytes each (``system.pvfs2.dh``)."""
    return b"".join(struct.pack("<Q", secrets.randbits(63)) for _ in range(count))


def strip_size_of(dist: bytes) -> int:
    """The strip size of an encoded ``simple_stripe`` distribution (:func:`encode_distribution`): its last 8 bytes."""
    return int(struct.unpack("<q", dist[-8:])[0]) if len(dist) >= 8 else DEFAULT_STRIP_SIZE


def encode_distribution(name: str, strip_size: int) -> bytes:
    """A distribution as OrangeFS encodes it (``encode_PINT_dist``: ``encode_string`` then the parameters): the
    name's length as a little-endian u32, the name and its NUL, zero padding to a multiple of 8 bytes, then the
    strip size as a little-endian int64 (``simple_stripe``'s one parameter)."""
    raw = struct.pack("<I", len(name)) + name.encode() + b"\0"
    return raw + b"\0" * (-len(raw) % 8) + struct.pack("<q", strip_size)


def _entry_path(path: str, path_max: int, *, cut: bool = True) -> str:
    """Where ``pvfs2fuse`` makes the entry FUSE asks for at ``path`` (from the mount point, leading ``/``):
    ``path`` itself up to ``path_max`` bytes; beyond, with ``cut``, the path cut to ``path_max`` bytes when the cut
    leaves part of the entry's own name (the entry is made under that cut name, in the right directory).

    Raises:
        fuse.FuseOSError: ``ERANGE`` when the path is longer and nothing of the name is left (or not ``cut``).
    """
    raw = os.fsencode(path)
    if len(raw) <= path_max:
        return path
    kept = raw[:path_max]
    if not cut or kept.rfind(b"/") != raw.rfind(b"/") or kept.endswith(b"/"):
        raise fuse.FuseOSError(errno.ERANGE)
    return os.fsdecode(kept)


def _attribute(real: str, name: str) -> bytes | None:
    """The extended attribute ``name`` of the backing entry ``real``, or ``None`` when it has none."""
    try:
        return os.getxattr(real, name, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.ENODATA, errno.ENOTSUP):
            return None
        raise


def _seconds(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text}: not a number of seconds (0 or more)")
    return value


class Fuse(fuse.FUSE):
    """mfusepy's ``FUSE``, whose ``ftruncate`` tells the operations its file handle: libfuse 3 passes the open file
    of an ``ftruncate`` to ``truncate``, which mfusepy 3.1 drops; with it a truncate through an open file is not
    checked against the path's permissions (the kernel checked the file's mode when it was opened)."""

    def truncate_fuse_3(self, path: bytes | None, length: int, fip: Any) -> int:
        if fip:
            return int(self.ftruncate(path, length, fip))
        return int(super().truncate_fuse_3(path, length, fip))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backing", type=Path)
    parser.add_argument("mountpoint")
    parser.add_argument("--servers", type=int, default=4, help="data servers (the most data files of a file)")
    parser.add_argument("--xattrs", choices=("store", "none"), default="store")
    parser.add_argument("--source", default="pvfs2fuse#tcp://ofs-server:3334/ofs", help="the mount's source")
    parser.add_argument("--path-max", type=int, default=PATH_MAX_BELOW_MOUNT,
                        help="longest path below the mount (bytes, with its leading /) an entry is made at")
    parser.add_argument("--file-stuffing", choices=("yes", "no"), default="yes",
                        help="FileStuffing of the servers' configuration (pvfs2-genconfig's default: yes)")
    parser.add_argument("--permission-cache", type=_seconds, default=PERMISSION_CACHE, metavar="SECONDS",
                        help="how long a permission result answers every user (0: the kernel checks, "
                             "default_permissions)")
    parser.add_argument("--permission-cache-refusals", choices=("yes", "no"), default="yes",
                        help="whether a refusal is cached for every user too (yes, as the real client)")
    args = parser.parse_args()
    client = OrangeFsClient(args.backing.resolve(), args.servers, args.xattrs, args.path_max,
                            stuffing=args.file_stuffing == "yes", permission_cache=args.permission_cache,
                            cache_refusals=args.permission_cache_refusals == "yes")
    kernel_checks = {"default_permissions": True} if args.permission_cache == 0 else {}
    Fuse(client, args.mountpoint, foreground=True, fsname=args.source, allow_other=True, **kernel_checks)


if __name__ == "__main__":
    main()
