"""The index of the user's clusters, and the one writer of it and of what a look at a cluster learned.

The index lives in ``$XDG_STATE_HOME/hpc-hadoop/clusters/`` (default ``~/.local/state/hpc-hadoop/clusters/``:
:func:`launcher.util.userdirs.clusters_dir`): one ``<cluster id>.json`` per cluster (:class:`IndexEntry`) with its
cluster directory, scheduler and job id. Every write of an entry is here: :func:`register` (``start``, ``submit``
and the held run's own :func:`launcher.lifecycle.runner.materialize` add or update one), :func:`record` (what a
look learned, below) and :func:`unregister` (``clean``). So is every write of :data:`ENDED_FILE`: :func:`record` and
:func:`record_end` (``stop`` of a queued job).

A look at a cluster (:func:`launcher.lifecycle.clusters.status.status_of`) writes nothing: what it learned that the
next look need not learn again comes back as an :class:`Observation` (an end the batch system told, since when the
batch system has not answered, a final record kept on this node), and the commands that may write pass it to
:func:`record`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport
from launcher.security.kerberos import HTTP_SECRETS_GLOB
from launcher.util.errors import UserError
from launcher.util.records import Record
from launcher.util.states import ClusterState
from launcher.util.userdirs import clusters_dir

#: A cluster directory's record of an end the batch system told (``lost``) or ``stop`` made (``cancelled``), written
#: where no final ``run.json`` will come: final, so ``list`` never asks the batch system about it again.
ENDED_FILE = "ended.json"
#: What a run's final record kept on its node leaves behind in the cluster directory's ``krb/`` when that could not be
#: written (the realm's keys and the cookie secrets), removed when the record is written back (:func:`record`).
LEFT_KEYS = ("*.keytab", "*.ccache", HTTP_SECRETS_GLOB)


class IndexEntry(Record):
    """One cluster in the user's index (``<state dir>/<cluster id>.json``): its ``cluster_id``, cluster directory
    (``run_dir``), ``scheduler`` and batch ``job_id``; ``created`` (epoch seconds); ``holder_pid`` and
    ``holder_started`` (the process holding a cluster outside a batch job, and its start time in epoch seconds, to
    tell it from a later process with the same pid); ``interactive`` (made by ``start``); ``no_answer_since``
    (epoch seconds since the batch system has not answered about the job). Keys that are ``None`` are left out
    of the file. Schema policy: :class:`launcher.util.records.Record`.
    """

    cluster_id: str
    run_dir: str
    scheduler: str
    created: float = 0.0
    job_id: str | None = None
    holder_pid: int | None = None
    holder_started: float | None = None
    interactive: bool = False
    no_answer_since: float | None = None

    def dump(self) -> dict[str, Any]:
        """The JSON-ready form, without the keys that are ``None``."""
        return {key: value for key, value in super().dump().items() if value is not None}


class EndedRecord(Record):
    """:data:`ENDED_FILE`: an end the batch system told (``lost``) or ``stop`` made (``cancelled``), with ``detail``
    (why) and ``at`` (epoch seconds). Schema policy: :class:`launcher.util.records.Record`."""

    state: ClusterState
    detail: str = ""
    at: float = 0.0


@dataclass(frozen=True)
class Observation:
    """What one look at a cluster (:func:`launcher.lifecycle.clusters.status.status_of`) learned that is worth
    keeping, for :func:`record` to write: the look itself writes nothing.

    Attributes:
        cluster_id: the cluster's id (its index entry).
        run_dir: its cluster directory.
        asked: the batch system was asked about the job (then ``no_answer_since`` is what the entry's
            ``no_answer_since`` becomes); ``False``: the entry is left as it is.
        no_answer_since: epoch seconds since the batch system has not answered; ``None``: it answered.
        ended: the end to record as :data:`ENDED_FILE` (``lost``, or ``cancelled`` while queued), or ``None``.
        kept: a final record the run kept on this node (:func:`launcher.lifecycle.report.local_record_paths`), to write
            back into the cluster directory as ``run.json``, or ``None``.
    """

    cluster_id: str
    run_dir: str
    asked: bool = False
    no_answer_since: float | None = None
    ended: EndedRecord | None = None
    kept: Path | None = None


def state_dir() -> Path:
    """``$XDG_STATE_HOME/hpc-hadoop/clusters`` (default ``~/.local/state/hpc-hadoop/clusters``:
    :func:`launcher.util.userdirs.clusters_dir`)."""
    return clusters_dir()


def _entry_path(cluster_id: str) -> Path:
    """The index entry of ``cluster_id``: ``<state dir>/<cluster id>.json``."""
    return state_dir() / f"{cluster_id}.json"


def check_index() -> Path:
    """Make the index's directory (:func:`state_dir`, mode 0700) and write a file in it, before a command starts a
    cluster that only the index lets the user reach afterwards (``start``, ``submit`` to a batch system, ``run
    --hold``): a state directory the user cannot write is then one line before anything starts, never a cluster
    running on that ``list`` and ``stop`` do not know.

    Returns:
        The directory.

    Raises:
        UserError: it cannot be made or written (the system's reason), naming it.
    """
    directory = state_dir()
    probe = directory / f".probe-{os.getpid()}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as exc:
        raise _unwritable(directory, exc) from None
    return directory


def _unwritable(directory: Path, exc: OSError) -> UserError:
    """The line for an index directory that cannot be written."""
    return UserError(f"cannot write the index of your clusters in {directory}: {exc.strerror or exc}",
                     field="XDG_STATE_HOME",
                     fix="make it writable, or set XDG_STATE_HOME to a directory of yours that you can write")


def register(cluster_id: str, run_dir: str | Path, scheduler: str, job_id: str | None = None, *,
             holder_pid: int | None = None, interactive: bool = False, required: bool = False) -> Path:
    """Add (or update) a cluster in the user's index; returns the index entry's path. The entry is written mode
    0600 (:meth:`launcher.util.records.Record.write`), in a directory made 0700.

    Args:
        holder_pid: the process that holds the cluster (the detached ``run --hold`` on the local backend or
            inside an allocation); ``None`` for a batch job (the batch system's job id tells its state).
        interactive: made by ``hpc-hadoop start``.
        required: raise when the entry cannot be written (a cluster that only the index can reach: ``start``,
            ``submit`` to a batch system), instead of leaving the index as it is.

    Without ``required`` the index is a convenience: failing to write it (read-only home on a compute node, where the
    entry of ``start``/``submit`` is already written) never stops a run.

    Raises:
        UserError: ``required`` and the entry could not be written.
    """
    path = _entry_path(cluster_id)
    known = IndexEntry.read_or_none(path)  # None when missing or unreadable
    entry = IndexEntry(cluster_id=cluster_id, run_dir=str(run_dir), scheduler=scheduler, created=time.time())
    if known is not None:
        entry = known.model_copy(update={"cluster_id": cluster_id, "run_dir": str(run_dir), "scheduler": scheduler})
        if "created" not in known.model_fields_set:
            entry.created = time.time()
    if job_id is not None:
        entry.job_id = job_id
    if holder_pid is not None:
        entry.holder_pid = holder_pid
        entry.holder_started = psutil.Process(holder_pid).create_time()
    entry.interactive = entry.interactive or interactive
    _write_entry(path, entry, required=required)
    return path


def _write_entry(path: Path, entry: IndexEntry, *, required: bool = False) -> None:
    """Write an index entry atomically, mode 0600; an index that cannot be written is left as it is, unless
    ``required`` (then :class:`UserError`)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        entry.write(path)
    except OSError as exc:
        if required:
            raise _unwritable(path.parent, exc) from None


def unregister(cluster_id: str) -> None:
    """Remove a cluster's entry from the index (``clean``); a missing one is no error.

    Raises:
        OSError: the entry exists and cannot be removed.
    """
    _entry_path(cluster_id).unlink(missing_ok=True)


def index_entries() -> list[IndexEntry]:
    """Every entry of the index, oldest first (unreadable entries are skipped)."""
    entries = []
    for path in sorted(state_dir().glob("*.json")):
        entry = IndexEntry.read_or_none(path)
        if entry is not None:
            entries.append(entry)
    return sorted(entries, key=lambda e: e.created)


def record(observed: Observation | None, entry: IndexEntry | None = None) -> None:
    """Keep what a look at a cluster learned (``observed``; ``None``: nothing), for the commands that look (``list``,
    ``status``, ``stop``, ``start`` following a cluster up...): the next look need not ask again.

    * since when the batch system has not answered (``no_answer_since``; removed once it answers) goes into the
      cluster's index entry, if it has one, and into ``entry`` (the caller's copy: the next poll of the same command
      says the same time even where the index cannot be written);
    * an end the batch system told, or a job cancelled while queued, goes into :data:`ENDED_FILE`
      (:func:`record_end`);
    * a final record the run kept on this node is written back into the cluster directory as ``run.json``, the realm's
      keys it could not remove then are removed (:data:`LEFT_KEYS`), and the node's copy goes.

    Nothing raises: an index or a cluster directory that cannot be written is left as it is (the look learns the same
    again next time; the node's copy stays where it is).
    """
    if observed is None:
        return
    if observed.asked:
        if entry is not None:
            entry.no_answer_since = observed.no_answer_since
        _remember(observed.cluster_id, no_answer_since=observed.no_answer_since)
    if observed.ended is not None:
        _write_ended(observed.run_dir, observed.ended)
    if observed.kept is not None:
        _write_back(observed.kept, Path(observed.run_dir))


def record_end(run_dir: str | Path, state: ClusterState, detail: str) -> None:
    """Write :data:`ENDED_FILE` (``state``: ``lost`` or ``cancelled``) into a cluster directory that has no final
    ``run.json``; a directory that cannot be written is left as it is (the batch system is asked again next time)."""
    _write_ended(run_dir, EndedRecord(state=state, detail=detail, at=time.time()))


def _write_ended(run_dir: str | Path, ended: EndedRecord) -> None:
    """Write ``ended`` as the cluster directory's :data:`ENDED_FILE`; one that cannot be written is left as it is."""
    try:
        ended.write(Path(run_dir, ENDED_FILE))
    except OSError:
        pass


def _remember(cluster_id: str, **fields: Any) -> None:
    """Set (``None``: remove) ``fields`` of a cluster's index entry where they differ; an index that cannot be
    written, or a cluster without an entry, is left as it is."""
    path = _entry_path(cluster_id)
    entry = IndexEntry.read_or_none(path)
    if entry is None or all(getattr(entry, name) == value for name, value in fields.items()):
        return
    _write_entry(path, entry.model_copy(update=fields))


def _write_back(path: Path, run_dir: Path) -> None:
    """Write the final record kept on this node at ``path`` back into ``run_dir`` as ``run.json`` (issue 37 item 3),
    remove the realm's keys the run could not remove then (:data:`LEFT_KEYS`) and the node's copy; where the
    directory still refuses, the copy stays and is read again next time."""
    kept = RunReport.read_or_none(path)
    if kept is None:
        return
    try:
        kept.kept_at = None
        kept.error = f"{kept.error or ''}; written back from {path} by hpc-hadoop status".lstrip("; ")
        RunRecord.write_back(kept, run_dir)
        for pattern in LEFT_KEYS:
            for key in (run_dir / "krb").glob(pattern):
                key.unlink()
        path.unlink()
    except OSError:
        pass  # the cluster directory still refuses: the copy stays where it is
