"""Parallel filesystems: detection, striping, reporting (Lustre, OrangeFS, GPFS, generic).

A filesystem is one small class chosen by name (``filesystem.type``) or by detection (``auto``). The choice is
made once, when the plan is made (:func:`decide` → :class:`launcher.plan.cluster_plan.FilesystemPlan`), and the
striping the job file asks for is checked then (:func:`check_striping`), before anything is made or queued;
striping and rendering read the decision from the plan (:func:`filesystem_of`), and the run report's
``filesystem`` section (:func:`report_section`) lists every requested setting, applied or not. May import
:mod:`launcher.plan` and everything below it; each filesystem's module is independent of its siblings.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.config.spec import FilesystemSpec, JobSpec, StripingSpec
from launcher.filesystems import detect as detection
from launcher.filesystems.base import (
    NOT_APPLICABLE,
    DirectoryRecord,
    Filesystem,
    FilesystemRecord,
    Layout,
    StripeOutcome,
)
from launcher.filesystems.detect import Detection, detect
from launcher.plan.cluster_plan import ClusterPlan, FilesystemPlan, expand_root
from launcher.plan.hdfs import hdfs_mode
from launcher.schedulers.allocation import Allocation
from launcher.util.errors import FilesystemLost, UserError
from launcher.util.registry import Registry

if TYPE_CHECKING:  # at run time imported on first use (__getattr__ below): a run imports the class it decided only
    from launcher.filesystems.generic import GenericFilesystem
    from launcher.filesystems.gpfs import GpfsFilesystem
    from launcher.filesystems.lustre import LustreFilesystem
    from launcher.filesystems.orangefs import OrangeFsFilesystem

#: The directories a job file may stripe (``filesystem.striping.<role>``).
ROLES = tuple(StripingSpec.model_fields)

#: ``filesystem.type`` → class (``"module:Class"``, imported on first use: a run imports the class it decided only).
FILESYSTEMS: Registry[Filesystem] = Registry("filesystem", field="filesystem.type", entries={
    "lustre": "launcher.filesystems.lustre:LustreFilesystem",
    "orangefs": "launcher.filesystems.orangefs:OrangeFsFilesystem",
    "gpfs": "launcher.filesystems.gpfs:GpfsFilesystem",
    "generic": "launcher.filesystems.generic:GenericFilesystem"})

#: The classes this package exports by name, imported when first asked for (:func:`__getattr__`).
_CLASSES = {"LustreFilesystem": "lustre", "OrangeFsFilesystem": "orangefs", "GpfsFilesystem": "gpfs",
            "GenericFilesystem": "generic"}


def __getattr__(name: str) -> type[Filesystem]:
    """``launcher.filesystems.LustreFilesystem`` and its siblings, imported on first access (PEP 562).

    Raises:
        AttributeError: ``name`` is none of them.
    """
    if name in _CLASSES:
        return FILESYSTEMS[_CLASSES[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def choose(name: str, detection: Detection) -> Filesystem:
    """The filesystem class for ``filesystem.type`` = ``name``; ``auto`` picks it from ``detection``."""
    return _instance(_class_name(name, detection.type), detection.label)


def _class_name(name: str, detected: str) -> str:
    """``filesystem.type`` ``name``, or under ``auto`` the detected type if a class stripes it, else ``generic``."""
    if name == "auto":
        return detected if detected in FILESYSTEMS else "generic"
    return name


def _instance(name: str, label: str) -> Filesystem:
    if name == "generic":
        from launcher.filesystems.generic import GenericFilesystem

        return GenericFilesystem(label)
    return FILESYSTEMS[name]()


def decide(spec: FilesystemSpec, *, check_flock: bool = False, check: bool = True) -> FilesystemPlan:
    """Detect the filesystem under ``spec.root`` (or its nearest existing parent) and choose its class, once,
    for the plan: ``statfs`` ``f_type`` and ``/proc/mounts`` (:func:`detect`), the class (``filesystem.type``,
    or detection under ``auto``), the shim's ``pfs.layout`` (``lustre`` or ``orangefs`` when that is the class,
    else ``none``), whether layouts can be set and read there (:meth:`Filesystem.unusable`: the class's layout
    command, read-only); then, with ``check``, the job file's striping (:func:`check_striping`).

    Args:
        check_flock: also try ``flock`` there (a run does; ``render``/``submit`` checks do not, they make no file).
        check: check ``spec.striping`` against the decision (``doctor`` checks it on its own line).

    Raises:
        UserError: ``filesystem.root`` is relative or uses an unset variable; a striping setting this filesystem
            cannot honour (:func:`check_striping`).
    """
    root = expand_root(spec.root)
    found = detect(root, check_flock=check_flock)
    name = _class_name(spec.type, found.type)
    decided = FilesystemPlan(name=name, label=found.label,
                             shim_layout=name if name in ("lustre", "orangefs") else "none", path=found.path,
                             magic=found.magic, mount_point=found.mount_point, source=found.source,
                             free_bytes=found.free_bytes, flock=found.flock, flock_error=found.flock_error,
                             total_bytes=found.total_bytes,
                             striping_error=_instance(name, found.label).unusable(Path(found.path)))
    if check:
        check_striping(spec, decided)
    return decided


def striped_roles(spec: FilesystemSpec) -> list[str]:
    """The roles of ``filesystem.striping`` that ask for a layout of a directory on the shared filesystem: not
    ``staging`` in ``hdfs`` mode (it is on HDFS), not ``scratch`` with ``filesystem.local_dirs`` (node-local)."""
    skip = {"staging"} if hdfs_mode(spec).staging_on_hdfs else set()
    skip |= {"scratch"} if spec.local_dirs else set()
    return [role for role in ROLES if role not in skip and getattr(spec.striping, role).requested]


def check_striping(spec: FilesystemSpec, decided: FilesystemPlan) -> None:
    """Refuse, when the plan is made (``render``, ``submit``, ``doctor``, ``run``: before anything is written or
    queued), a ``filesystem.striping`` setting the decided filesystem cannot honour: its class's rules
    (:meth:`Filesystem.check`: e.g. a count of -1 or an ``index`` on OrangeFS, a Lustre size not a multiple of
    64 KiB), or any setting where layouts can be neither set nor read (``decided.striping_error``). On a filesystem
    without striping every setting is reported "striping not applicable" instead.

    Raises:
        UserError: naming the field (``filesystem.striping.<role>[.count|.size|.index]``) and the fix.
    """
    fs = filesystem_of(decided)
    if not fs.striping:
        return
    for role in striped_roles(spec):
        field = f"filesystem.striping.{role}"
        fs.check(getattr(spec.striping, role), field)
        if decided.striping_error:
            raise UserError(f"striping asked, but layouts can be neither set nor read on {decided.label} at "
                            f"{decided.mount_point}: {decided.striping_error}", field=field,
                            fix=f"{fs.unusable_fix}; or remove {field}")


def check_shared_root(spec: JobSpec, allocation: Allocation) -> None:
    """Refuse a cluster directory the nodes would not share: ``filesystem.root`` on a node-local filesystem
    (:data:`launcher.filesystems.detect.NODE_LOCAL_TYPES`) for a batch job (a preview allocation: ``submit``,
    ``start``, ``render``) or a run on more than one node. The ``local`` backend, and ``run`` inside a one-node
    allocation (everything runs on that node), may use a local root; ``filesystem.shared: true`` skips the check.

    Raises:
        UserError: the root is on a node-local filesystem (field ``filesystem.root``), or ``filesystem.shared``
            is ``false`` for such a job.
    """
    if allocation.scheduler == "local" or spec.filesystem.shared is True:
        return
    if not allocation.preview and len(allocation.nodes) <= 1:
        return
    root = expand_root(spec.filesystem.root)
    local = detection.node_local_type(root)
    if spec.filesystem.shared is False or local is not None:
        what = f"on {local}, which the compute nodes do not share" if local else \
            "declared node-local (filesystem.shared: false)"
        raise UserError(f"{root} is {what}", field="filesystem.root",
                        fix="set filesystem.root to a directory on the parallel filesystem, e.g. "
                            "$SCRATCH/hpc-hadoop (or filesystem.shared: true if every node sees this one)")


def filesystem_of(plan: FilesystemPlan) -> Filesystem:
    """The filesystem class instance a plan's decision names."""
    return _instance(plan.name, plan.label)


def current_layout(fs: Filesystem, directory: Path) -> dict[str, Any] | None:
    """The layout of ``directory`` as a dict, or ``None`` (no striping, or the command failed)."""
    if not fs.striping:
        return None
    try:
        layout = fs.layout(directory)
    except Exception as exc:  # noqa: BLE001 - informational (doctor): report the failure instead
        return {"error": str(exc)}
    return layout.to_dict() if layout else None


def striping_plan(plan: ClusterPlan) -> list[str]:
    """What a run of ``plan`` will do to each directory of ``filesystem.striping`` (``hpc-hadoop render``): the
    decided filesystem, then one line per role and directory with the requested layout and the commands that set
    it, or why nothing is set (not requested, striping not applicable, node-local, on HDFS).

    Raises:
        UserError: an unknown ``${...}`` in ``filesystem.input_dir``/``output_dir``.
    """
    decided, fs_spec = plan.filesystem, plan.spec.filesystem
    fs = filesystem_of(decided)
    lines = [f"{decided.label} at {decided.mount_point} from {decided.source}: class {fs.name}, mode {fs_spec.mode}"]
    if decided.striping_error:
        lines.append(f"layouts can be neither set nor read here: {decided.striping_error}")
    dirs = plan.striped_dirs()
    for role in ROLES:
        setting = getattr(fs_spec.striping, role)
        asked = ", ".join(f"{k} {v}" for k, v in (("count", setting.count), ("size", setting.size),
                                                  ("index", setting.index)) if v is not None)
        if not dirs[role]:
            where = "on HDFS" if role == "staging" else "node-local (filesystem.local_dirs)"
            lines.append(f"{role:<8} {where}: " + (f"{asked}: {NOT_APPLICABLE}" if asked else "not requested"))
        for path in dirs[role]:
            if not asked:
                lines.append(f"{role:<8} {path}: not requested")
            elif not fs.striping:
                lines.append(f"{role:<8} {path}: {asked}: {NOT_APPLICABLE} ({fs.why_not})")
            else:
                commands = "; ".join(" ".join(argv) for argv in fs.stripe_commands(path, setting))
                keep = " (only if it holds no data then)" if role == "input" else ""
                lines.append(f"{role:<8} {path}: {asked}{keep}: {commands}")
    if fs_spec.mode == "shim" and fs.striping:
        lines.append("shim: a directory Hadoop creates takes the layout of the role whose directory contains it "
                     "(pfs.stripe.<role>.*)")
    return lines


def report_section(decided: FilesystemPlan, fs: Filesystem, mode: str,
                   outcomes: list[StripeOutcome]) -> FilesystemRecord:
    """The run report's ``filesystem`` section: the plan's decision, the mode and each directory's outcome."""
    return FilesystemRecord(type=decided.label, class_=fs.name, mount=decided.mount_point, source=decided.source,
                            mode=mode, free_bytes=decided.free_bytes, flock=decided.flock, striping=fs.striping,
                            striping_error=decided.striping_error, directories=[o.to_record() for o in outcomes])


__all__ = ["FILESYSTEMS", "NOT_APPLICABLE", "ROLES", "Detection", "DirectoryRecord", "Filesystem", "FilesystemRecord",
           "GenericFilesystem", "GpfsFilesystem",
           "Layout", "LustreFilesystem", "OrangeFsFilesystem", "StripeOutcome", "check_shared_root", "check_striping",
           "choose", "current_layout", "decide", "detect", "filesystem_of", "free_bytes", "full_filesystem",
           "gone", "gone_error", "GONE_ERRNOS", "report_section", "striped_roles",
           "striping_plan"]


#: What Java and the C library print on ``ENOSPC``.
NO_SPACE = "No space left on device"
#: Below this many free bytes a filesystem counts as full when a step failed (a run reserves 1 MiB for
#: ``run.json``; Lustre and GPFS refuse writes some MiB before zero, by their per-OST/-NSD grants).
FULL_FREE_BYTES = 16 << 20


def free_bytes(path: str | Path) -> int | None:
    """Bytes free to this user on the filesystem of ``path`` (``statvfs``); ``None`` if it cannot be read."""
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def full_filesystem(path: str | Path, lines: list[str], min_free: int | None = None) -> str | None:
    """Why a step failed, when a filesystem filled up, or ``None``.

    ``"the filesystem of MOUNT filled up (N MiB free at the lowest, of M MiB)"`` when fewer than
    :data:`FULL_FREE_BYTES` were free on the filesystem of ``path`` while the step ran (``min_free``) or are
    free now; when a line of the step says ``No space left on device`` but that filesystem always had room,
    that some filesystem was full, naming the node-local directories as the likely one.

    Args:
        path: the filesystem root (the run's ``filesystem.root``).
        lines: the step's error lines.
        min_free: the fewest free bytes seen while the step ran (a failed task's partial output is deleted
            when the task fails, so the filesystem has room again when the step ends).
    """
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return None
    lowest = min(usage.free, min_free if min_free is not None else usage.free)
    entry = detection.mount_entry(Path(path))
    mount = entry.mount_point if entry else str(path)
    if lowest < FULL_FREE_BYTES:
        return (f"the filesystem of {mount} filled up ({lowest >> 20} MiB free at the lowest, "
                f"of {usage.total >> 20} MiB)")
    if any(NO_SPACE in line for line in lines):
        return (f"a filesystem was full ({NO_SPACE}); the one of {mount} kept {lowest >> 20} MiB free or more "
                "(checked each second): check the nodes' local directories (filesystem.local_dirs, $TMPDIR)")
    return None


#: What every call on a mount answers once its filesystem is gone: ``ENOTCONN`` ("Transport endpoint is not
#: connected": a FUSE client that died, e.g. OrangeFS's ``pvfs2fuse`` after ``GOSSIP_MAX_BT`` backtraces; the
#: kernel aborts the connection, ``fs/fuse/dev.c``) and ``ECONNABORTED`` ("Software caused connection abort",
#: the call in flight when it died). A stalled filesystem answers nothing; a full one ``ENOSPC``; neither is gone.
GONE_ERRNOS = frozenset({errno.ENOTCONN, errno.ECONNABORTED})


def gone_error(exc: BaseException | None) -> OSError | None:
    """The first ``OSError`` with an errno of :data:`GONE_ERRNOS` in ``exc`` or the exceptions it was raised from or
    during (``__cause__``, ``__context__``), or ``None``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in GONE_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def gone(mount: str | Path, exc: BaseException | None = None, when: str = "") -> FilesystemLost | None:
    """The :class:`~launcher.util.errors.FilesystemLost` error of ``mount`` when it is gone, else ``None``.

    With ``exc`` (an error a run met): only when it is, or came from, an ``OSError`` of :data:`GONE_ERRNOS`
    (:func:`gone_error`) and ``statvfs`` of the mount point fails so too (a socket's ``ENOTCONN`` is not the
    mount's). Without: when ``statvfs`` of the mount point fails with one of :data:`GONE_ERRNOS`. ``statvfs`` of a
    mount that is gone answers at once; call it only then, or off the run's thread: on a stalled mount it waits.
    """
    if exc is not None and gone_error(exc) is None:
        return None
    try:
        os.statvfs(mount)
    except OSError as err:
        if err.errno in GONE_ERRNOS:
            return FilesystemLost(str(mount), err, when)
    return None
