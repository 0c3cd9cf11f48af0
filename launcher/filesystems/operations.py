"""The file operations a run makes in its cluster directory, tried in a scratch directory (``hpc-hadoop doctor``):
create, ``chmod`` to every mode a run sets, rename, a symbolic link (``flock`` is
:func:`launcher.filesystems.detect.flock_works`). A filesystem that refuses one of them fails a run at bring-up or
in its first step; the doctor names it beforehand.

The modes are those Hadoop 3.4.2 sets with an explicit ``chmod`` (read from its jars) and hpc-hadoop's own. No run
sets the sticky bit (:data:`NEVER_TRIED`): hpc-hadoop makes beforehand the directories Hadoop would make with mode
1777 (:func:`launcher.lifecycle.runner.made_for_hadoop`), and the NodeManagers aggregate logs without the 1777 check of
``app-logs/`` (:data:`launcher.render.config.LOG_AGGREGATION_CONTROLLER`). A bit no run sets is never tried either:
OrangeFS refuses the sticky bit with EINVAL and logs a backtrace, and its client exits after 8 of them
(``GOSSIP_MAX_BT``), unmounting the file system for every user of the node; a probe must never be one of them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

#: Directory modes a run sets: 0700 the cluster directory and its parts (hpc-hadoop), ``.staging`` (MapReduce's
#: ``JobSubmissionFiles``) and ``nmPrivate`` (``ResourceLocalizationService``); 0710 and 0750 a NodeManager's
#: application, container and user directories (``DefaultContainerExecutor``); 0755 its file caches; 0770 the job
#: history's done and user directories (``JobHistoryUtils``) and aggregated-log directories
#: (``LogAggregationFileController``).
DIRECTORY_MODES = (0o700, 0o710, 0o750, 0o755, 0o770)
#: File modes a run sets: 0404 container tokens (``DefaultContainerExecutor``); 0640 aggregated logs
#: (``AggregatedLogFormat``); 0644 job files in staging (``JobSubmissionFiles``); 0700 launch scripts
#: (``ContainerExecutor``) and hpc-hadoop's scripts; 0770 job history files (``JobHistoryEventHandler``).
FILE_MODES = (0o404, 0o640, 0o644, 0o700, 0o770)
#: What is never tried, and why (said by ``doctor``).
NEVER_TRIED = ("the sticky bit (no run sets it; OrangeFS refuses it, and its client exits after 8 refusals, unmounting "
               "the file system for every user of the node)")


@dataclass(frozen=True)
class Tried:
    """One operation and its outcome: ``error`` is ``None`` when it worked, else the system's message."""

    operation: str
    error: str | None


def _try(operation: str, action: Callable[[], object]) -> Tried:
    try:
        action()
    except OSError as exc:
        return Tried(operation, exc.strerror or str(exc))
    return Tried(operation, None)


def try_operations(directory: Path) -> list[Tried]:
    """Make a scratch directory in ``directory`` (removed afterwards) and try in it, in order: create a directory
    and a file, ``chmod`` the directory to each of :data:`DIRECTORY_MODES` and the file to each of
    :data:`FILE_MODES`, rename the file, make a symbolic link to it. Nothing else (:data:`NEVER_TRIED`).

    Returns:
        One :class:`Tried` per operation; when the scratch directory cannot be made, only that one.
    """
    try:
        scratch = Path(tempfile.mkdtemp(prefix=".hpc-hadoop-doctor-", dir=directory))
    except OSError as exc:
        return [Tried("create a directory", exc.strerror or str(exc))]
    try:
        sub, file = scratch / "d", scratch / "f"
        tried = [_try("create a directory", lambda: sub.mkdir()),
                 _try("create a file", lambda: file.write_bytes(b"x"))]
        tried += [_try(f"chmod {mode:04o} a directory", partial(os.chmod, sub, mode)) for mode in DIRECTORY_MODES]
        tried += [_try(f"chmod {mode:04o} a file", partial(os.chmod, file, mode)) for mode in FILE_MODES]
        tried.append(_try("rename", lambda: os.rename(file, scratch / "g")))
        tried.append(_try("symlink", lambda: os.symlink("g", scratch / "link")))
        return tried
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
