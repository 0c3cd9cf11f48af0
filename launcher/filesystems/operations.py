"""The file operations a run makes in its cluster directory, tried in a scratch directory (``hpc-hadoop doctor``):
create, ``chmod`` to every mode a run sets, rename, a symbolic link (``flock`` is
:func:`launcher.filesystems.detect.flock_works`). A filesystem that refuses one of them fails a run at bring-up or
in its first step; the doctor names it beforehand.

The modes are those Hadoop 3.4.2 sets with an explicit ``chmod`` (read from its jars) and hpc-hadoop's own. No run
sets the sticky or the setgid bit (:func:`launcher.runner.made_for_hadoop`): they are tried too, but only to say
that a refusal does not matter.
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
#: Bits no run sets; a filesystem may refuse them (OrangeFS: EINVAL).
UNNEEDED_BITS = (("sticky bit", 0o1700), ("setgid bit", 0o2700))


@dataclass(frozen=True)
class Tried:
    """One operation and its outcome: ``error`` is ``None`` when it worked, else the system's message."""

    operation: str
    error: str | None
    needed: bool = True


def _try(operation: str, action: Callable[[], object], needed: bool = True) -> Tried:
    try:
        action()
    except OSError as exc:
        return Tried(operation, exc.strerror or str(exc), needed)
    return Tried(operation, None, needed)


def try_operations(directory: Path) -> list[Tried]:
    """Make a scratch directory in ``directory`` (removed afterwards) and try in it, in order: create a directory
    and a file, ``chmod`` the directory to each of :data:`DIRECTORY_MODES` and the file to each of
    :data:`FILE_MODES`, rename the file, make a symbolic link to it; then the :data:`UNNEEDED_BITS` on the
    directory (``needed`` false).

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
        tried += [_try(f"chmod {mode:04o} ({name})", partial(os.chmod, sub, mode), needed=False)
                  for name, mode in UNNEEDED_BITS]
        return tried
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
