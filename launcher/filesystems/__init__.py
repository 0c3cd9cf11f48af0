"""Parallel filesystems: detection, striping, reporting (Lustre, OrangeFS, GPFS, generic).

A filesystem is one small class chosen by name (``filesystem.type``) or by detection (``auto``):
:func:`choose`. :func:`prepare_directories` stripes the cluster's directories before bring-up and
returns the run report's ``filesystem`` section, where every requested setting appears, applied or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launcher.filesystems.base import NOT_APPLICABLE, Filesystem, Layout, StripeOutcome
from launcher.filesystems.detect import Detection, detect
from launcher.filesystems.generic import GenericFilesystem
from launcher.filesystems.gpfs import GpfsFilesystem
from launcher.filesystems.lustre import LustreFilesystem
from launcher.filesystems.orangefs import OrangeFsFilesystem
from launcher.spec import FilesystemSpec, StripeSpec

#: ``filesystem.type`` → class.
FILESYSTEMS: dict[str, type[Filesystem]] = {"lustre": LustreFilesystem, "orangefs": OrangeFsFilesystem,
                                            "gpfs": GpfsFilesystem, "generic": GenericFilesystem}


def choose(name: str, detection: Detection) -> Filesystem:
    """The filesystem class for ``filesystem.type`` = ``name``; ``auto`` picks it from ``detection``."""
    if name == "auto":
        name = detection.type if detection.type in FILESYSTEMS else "generic"
    if name == "generic":
        return GenericFilesystem(detection.label)
    return FILESYSTEMS[name]()


def shim_layout(spec: FilesystemSpec) -> str:
    """``pfs.layout`` for the shim: ``lustre`` or ``orangefs`` when ``filesystem.type`` names (or ``auto``
    detects, from ``statfs`` under ``root``) one of them, else ``none``."""
    name = spec.type
    if name == "auto":
        from launcher.plan import expand_root

        name = detect(expand_root(spec.root), check_flock=False).type
    return name if name in ("lustre", "orangefs") else "none"


def current_layout(fs: Filesystem, directory: Path) -> dict[str, Any] | None:
    """The layout of ``directory`` as a dict, or ``None`` (no striping, or the command failed)."""
    if not fs.striping:
        return None
    try:
        layout = fs.layout(directory)
    except Exception as exc:  # noqa: BLE001 - informational (doctor): report the failure instead
        return {"error": str(exc)}
    return layout.to_dict() if layout else None


def prepare_directories(fs: Filesystem, directories: list[tuple[str, Path, StripeSpec, bool]]) -> list[StripeOutcome]:
    """Stripe each ``(role, directory, setting, keep_data)`` in order (directories are created).

    Raises:
        UserError: a setting the filesystem cannot honour.
        CommandError: a striping command failed.
    """
    return [fs.stripe(role, path, setting, keep_data=keep) for role, path, setting, keep in directories]


def report_section(detection: Detection, fs: Filesystem, mode: str, outcomes: list[StripeOutcome]) -> dict[str, Any]:
    """The run report's ``filesystem`` section."""
    return {"type": detection.label, "class": fs.name, "mount": detection.mount_point, "source": detection.source,
            "mode": mode, "free_bytes": detection.free_bytes, "flock": detection.flock,
            "striping": fs.striping, "directories": [o.to_dict() for o in outcomes]}


__all__ = ["FILESYSTEMS", "NOT_APPLICABLE", "Detection", "Filesystem", "GenericFilesystem", "GpfsFilesystem",
           "Layout", "LustreFilesystem", "OrangeFsFilesystem", "StripeOutcome", "choose", "current_layout", "detect",
           "prepare_directories", "report_section", "shim_layout"]
