"""``hpc-hadoop clean``: delete finished clusters' directories, but for each one's :data:`KEPT` directory, and their
index entries (:func:`launcher.lifecycle.clusters.index.unregister`)."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from launcher.lifecycle.clusters.index import unregister
from launcher.lifecycle.clusters.status import ClusterStatus
from launcher.util.errors import UserError

#: The subdirectory of a cluster directory that ``clean`` keeps unless told ``--all``: the default
#: ``filesystem.output_dir``, where a job that writes into its cluster directory puts its results.
KEPT = "output"


@dataclass
class Cleanup:
    """What ``clean`` deletes of one finished cluster (:func:`cleanup_of`).

    Attributes:
        status: the cluster.
        delete: the paths deleted (the whole cluster directory, or its entries but :data:`KEPT`); empty when the
            directory is gone (only the index entry goes).
        delete_bytes: their size in bytes (files' sizes, as ``du --apparent-size``).
        keep: the :data:`KEPT` directory that stays, or ``None``.
        keep_bytes: its size in bytes.
    """

    status: ClusterStatus
    delete: list[Path]
    delete_bytes: int
    keep: Path | None
    keep_bytes: int


def _bytes(path: Path) -> int:
    """Apparent size in bytes of a file or a directory tree (symlinks not followed; unreadable parts count 0)."""
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


def cleanup_of(target: ClusterStatus, *, everything: bool = False) -> Cleanup:
    """What ``clean`` would delete of ``target``'s directory: all of it with ``everything`` (``--all``) or when it
    has no :data:`KEPT` directory (or an empty one), else everything but :data:`KEPT`."""
    run_dir = Path(target.run_dir)
    if not run_dir.is_dir():
        return Cleanup(target, [], 0, None, 0)
    kept = run_dir / KEPT
    if everything or not kept.is_dir() or kept.is_symlink() or not any(kept.iterdir()):
        return Cleanup(target, [run_dir], _bytes(run_dir), None, 0)
    delete = sorted(p for p in run_dir.iterdir() if p.name != KEPT)
    return Cleanup(target, delete, sum(_bytes(p) for p in delete), kept, _bytes(kept))


def clean(targets: list[ClusterStatus], *, everything: bool = False) -> list[str]:
    """Delete the cluster directories of finished clusters, but for each one's :data:`KEPT` directory unless
    ``everything`` (:func:`cleanup_of`), and their index entries.

    Raises:
        UserError: one of ``targets`` is still active (nothing is deleted then).
        OSError: a path or an index entry cannot be deleted.

    Returns:
        The cluster directories cleaned (deleted, or emptied but for :data:`KEPT`).
    """
    running = [t for t in targets if t.active]
    if running:
        raise UserError(f"cluster {running[0].cluster_id} is {running[0].state}: its directory "
                        f"{running[0].run_dir} is in use", field="ID",
                        fix=f"stop it first: hpc-hadoop stop {running[0].cluster_id}")
    removed = []
    for target in targets:
        cleanup = cleanup_of(target, everything=everything)
        for path in cleanup.delete:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        if cleanup.delete:
            removed.append(target.run_dir)
        unregister(target.cluster_id)
    return removed
