"""How long the paths a run makes under its ``filesystem.root`` get, and whether the filesystem takes them.

OrangeFS's FUSE client ``pvfs2fuse`` makes no entry whose path below the mount point is longer than
:data:`ORANGEFS_FUSE_PATH_MAX` bytes (issue 25: every job failed with the root 123 bytes below the mount; with it
70 bytes below, a job history file was made under a name cut short and never reached ``history/done``). The
longest path a run makes is known from the plan (:func:`run_paths`: container directories and logs, the
NodeManagers' local dirs, the ApplicationMaster's web temp dir, aggregated logs, job history and staging), so
``doctor``, ``render`` and ``submit`` refuse a root that is too deep before anything is queued or started
(:func:`check_path_lengths`): where the filesystem's limit is known, and where a path of that length cannot be made
under the root (:func:`try_path`).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from launcher.filesystems.detect import existing_parent
from launcher.plan.cluster_plan import HISTORY_JOBNAME_LIMIT, ClusterPlan, FilesystemPlan, expand_root
from launcher.util.errors import UserError

#: The longest path below the mount point (bytes, without the leading ``/``) at which ``pvfs2fuse`` makes an entry:
#: it splits the path FUSE hands it (``/`` + the path below the mount) through a ``PVFS_NAME_MAX`` (256-byte)
#: buffer, keeping 255 bytes (``PINT_get_path_element``, ``src/common/misc/str-utils.c``, OrangeFS 2.x); beyond, it
#: fails with ``ERANGE`` or makes the entry under a name cut short. The issue saw refusals from ~253 bytes.
ORANGEFS_FUSE_PATH_MAX = 254

#: The longest ids Hadoop gives (``ApplicationId``/``JobId``: the ResourceManager's start time in ms, 13 digits, and a
#: sequence number of at least 4 digits; ``ContainerId`` without an epoch: no ResourceManager restart recovery here).
APP_ID = "application_1799999999999_0001"
JOB_ID = "job_1799999999999_0001"
CONTAINER_ID = "container_1799999999999_0001_01_000001"
#: A time in a job history file's name: epoch milliseconds, 13 digits until 2286.
MILLIS = "1799999999999"
#: The most digits of a job's map and reduce counts in its history file's name (up to 999,999 tasks).
TASK_DIGITS = 6
#: What a NodeManager makes deepest in its local dir, for each container, measured with Hadoop 3.4.2 (strace of a
#: wordcount, issue 25): the container's exit code file in ``nmPrivate/`` and the launch script in its working
#: directory (the ApplicationMaster's web app directory, deeper still, is node-local: ``ClusterPlan.am_tmp_dir``).
NM_PRIVATE = f"nmPrivate/{APP_ID}/{CONTAINER_ID}/{CONTAINER_ID}.pid.exitcode.tmp"
CONTAINER_FILE = "default_container_executor_session.sh"
#: Where the ApplicationMaster's web app goes when ``java.io.tmpdir`` stays in its container (plans without
#: working directories): Jetty's directory, with the lock file it makes in it.
AM_WEB_TMP = "tmp/jetty-0_0_0_0-65535-hadoop-yarn-common-3_4_2_jar-_-any-18446744073709551615/.extract_lock"
#: A NodeManager's aggregated-log file name: ``<NodeManager host>_<port>.tmp`` while it is written.
AGGREGATED_SUFFIX = "_39999.tmp"


@dataclass(frozen=True)
class RunPath:
    """One path a run makes: ``what`` it is, the ``path`` (absolute, with the longest ids Hadoop gives) and its
    length below the root (``below_root``, bytes)."""

    what: str
    path: str
    below_root: int


def _encoded(text: str) -> str:
    """``text`` as a job history file's name holds it: ``-`` escaped as ``%2D``, the rest URL-encoded (Hadoop's
    ``FileNameIndexUtils``: ``URLEncoder`` keeps letters, digits and ``.-*_``, a space becomes ``+``)."""
    return "%2D".join(urllib.parse.quote_plus(part, safe="*") for part in text.split("-"))


def history_file_name(plan: ClusterPlan, job_name: str = "x" * 255) -> str:
    """The longest ``.jhist`` name a job of ``plan`` gets (Hadoop's ``FileNameIndexUtils.getDoneFileName``): job id,
    submit time, user, job name (cut to ``mapreduce.jobhistory.jobname.limit`` encoded bytes), finish time, maps,
    reduces, status, queue, start time, joined with ``-``."""
    mapred = plan.spec.hadoop.properties.get("mapred-site", {})
    limit = int(str(mapred.get("mapreduce.jobhistory.jobname.limit", HISTORY_JOBNAME_LIMIT)))
    queue = str(mapred.get("mapreduce.job.queuename", "default"))
    parts = [JOB_ID, MILLIS, _encoded(plan.user), _encoded(job_name)[:limit], MILLIS, "9" * TASK_DIGITS,
             "9" * TASK_DIGITS, "SUCCEEDED", _encoded(f"root.{queue}"), MILLIS]
    return "-".join(parts) + ".jhist"


def run_paths(plan: ClusterPlan) -> list[RunPath]:
    """The deepest paths a run of ``plan`` makes on the shared filesystem, one per kind, longest first.

    Per NodeManager whose local dir is in the cluster directory (``filesystem.local_dirs: shared``, or the
    ``nm-local/<host>`` an agent falls back to): what it makes for each container (:data:`NM_PRIVATE`,
    :data:`CONTAINER_FILE`; :data:`AM_WEB_TMP` where the plan keeps the ApplicationMaster's ``java.io.tmpdir`` in the
    container); per node: its container logs (``logs/<host>/userlogs/<app>/<container>/prelaunch.err``);
    aggregated logs (``app-logs/<user>/bucket-logs-tfile/<4 digits>/<app>/<host>_<port>.tmp``); the job history
    (``history/intermediate/<user>/<name>.jhist_tmp``, ``history/done/<yyyy>/<mm>/<dd>/<serial>/<name>.jhist``:
    :func:`history_file_name`); staging (``staging/<user>/.staging/<job>/<job>_1_conf.xml``).
    """
    run_dir, user = Path(plan.run_dir), plan.user
    root = expand_root(plan.spec.filesystem.root)
    found: list[tuple[str, Path]] = []
    for node in plan.nodemanagers:
        for local, how in ((node.nm_local_dir, ""), (node.nm_shared_dir, ", should it fall back to nm-local/")):
            if local and Path(local).is_relative_to(run_dir):
                on = f"a container on {node.name}{how}"
                container = Path(local, "usercache", user, "appcache", APP_ID, CONTAINER_ID)
                found.append((f"{on}: its exit code file", Path(local, NM_PRIVATE)))
                found.append((f"{on}: its launch script", container / CONTAINER_FILE))
                if not plan.am_tmp_dir:
                    found.append((f"{on}: the ApplicationMaster's web temp directory", container / AM_WEB_TMP))
        found.append((f"a container log of {node.name}",
                      Path(node.log_dir, "userlogs", APP_ID, CONTAINER_ID, "prelaunch.err")))
        found.append((f"the aggregated logs of {node.name}", run_dir / "app-logs" / user / "bucket-logs-tfile" /
                      "0001" / APP_ID / (node.address + AGGREGATED_SUFFIX)))
    name = history_file_name(plan)
    found.append(("a job history file", run_dir / "history" / "intermediate" / user / (name + "_tmp")))
    found.append(("a job history file", run_dir / "history" / "done" / "2026" / "11" / "27" / "000000" / name))
    found.append(("a job's staged configuration", run_dir / "staging" / user / ".staging" / JOB_ID /
                  f"{JOB_ID}_1_conf.xml"))
    depth = len(os.fsencode(root))
    paths = [RunPath(what, str(path), len(os.fsencode(path)) - depth - 1) for what, path in found]
    return sorted(paths, key=lambda p: -p.below_root)


def known_limit(found: FilesystemPlan) -> tuple[int, str] | None:
    """The longest path below the mount point (bytes) the filesystem under the root makes, and whose limit that is,
    where it is known: ``pvfs2fuse`` (:data:`ORANGEFS_FUSE_PATH_MAX`); ``None`` elsewhere."""
    if found.label == "orangefs (fuse)":
        return ORANGEFS_FUSE_PATH_MAX, "OrangeFS's FUSE client (pvfs2fuse)"
    return None


def try_path(directory: Path, length: int) -> str | None:
    """Make a path ``length`` bytes below ``directory`` (directories of up to 100 bytes, a file last), check that it is
    there under its full name, and remove it; ``None`` when that worked, else what went wrong (the error, or
    "made under another name": a name cut short; ``directory`` itself not one, issue 40: ``ENOTDIR``)."""
    try:
        top = Path(tempfile.mkdtemp(prefix=".hh-path-", dir=directory))
    except OSError as exc:
        return f"{errno.errorcode.get(exc.errno or 0, exc.errno)} ({exc.strerror})"
    try:
        left, path = length - len(os.fsencode(top.name)), top  # bytes still to go below ``path``
        while left > 102:
            path, left = path / ("d" * 100), left - 101
            path.mkdir()
        path = path / ("f" * max(1, left - 1))
        path.touch()
        if not path.exists():
            return "the file was made under another name (cut short)"
    except OSError as exc:
        return f"{errno.errorcode.get(exc.errno or 0, exc.errno)} ({exc.strerror})"
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return None


def real_root(root: Path) -> Path:
    """``root`` with every symlink of its existing part resolved (what the filesystem's client is handed: a
    ``$SCRATCH`` that is a symlink into the mount is as deep as its target), the part not made yet appended."""
    parent = existing_parent(root)
    return Path(os.path.realpath(parent)) / root.relative_to(parent)


def check_path_lengths(plan: ClusterPlan, *, probe: bool = True) -> RunPath:
    """Refuse a root under which the filesystem cannot make the longest path a run makes (:func:`run_paths`): where
    the filesystem's limit is known (:func:`known_limit`) and exceeded, or (``probe``) where a path of that length
    cannot be made under the root (:func:`try_path`, in its nearest existing parent). Returns the longest path.

    Raises:
        UserError: one line naming the root's depth below its mount point, the limit and the fix.
    """
    longest = run_paths(plan)[0]
    given = expand_root(plan.spec.filesystem.root)
    root = real_root(given)  # the path the filesystem's client sees: a $SCRATCH symlink resolved (issue 37 item 2)
    mount = plan.filesystem.mount_point
    depth = len(os.fsencode(root.relative_to(mount))) if mount and root.is_relative_to(mount) else None
    named = f"{given} (the symlinks resolved: {root})" if root != given else str(root)
    where = f"{named} is {depth} bytes below the mount point {mount}" if depth is not None else named
    need = f"a run makes paths {longest.below_root} bytes below it ({longest.what})"
    limit = known_limit(plan.filesystem)
    if limit is not None and depth is not None and depth + 1 + longest.below_root > limit[0]:
        room = limit[0] - 1 - longest.below_root
        raise UserError(f"{where} of {plan.filesystem.label}, and {need}: {depth + 1 + longest.below_root} bytes, "
                        f"more than the {limit[0]} {limit[1]} takes", field="filesystem.root",
                        fix=_fix(room, mount, longest))
    if probe:
        parent = existing_parent(root)
        below = len(os.fsencode(root)) - len(os.fsencode(parent)) + longest.below_root
        failed = try_path(parent, below) if os.access(parent, os.W_OK) else None
        if failed:
            raise UserError(f"{where}, and {need}; a path that long cannot be made there: {failed}",
                            field="filesystem.root", fix=_fix(None, mount, longest))
    return longest


def _fix(room: int | None, mount: str | None, longest: RunPath) -> str:
    """What to do about a root too deep: a shorter one (at most ``room`` bytes below ``mount`` when known); when a
    container's directory in the cluster directory is the longest path, node-local NodeManager dirs instead."""
    shorter = (f"a filesystem.root at most {room} bytes below {mount}" if room is not None and room > 0 else
               "a shorter filesystem.root")
    shared = "container on" in longest.what and "fall back" not in longest.what
    local = ", or leave filesystem.local_dirs to node-local storage (its default)" if shared else ""
    return f"choose {shorter}{local}"
