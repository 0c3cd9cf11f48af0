"""The run report: ``run.json`` in the cluster directory and the summary on the terminal."""

from __future__ import annotations

import errno
import getpass
import ipaddress
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from launcher import __version__
from launcher.filesystems.base import DirectoryRecord, FilesystemRecord
from launcher.steps import shuffle
from launcher.steps.jobs import SPARK_STAGE_FIELDS, StepResult
from launcher.util.errors import UserError
from launcher.util.files import replace_private
from launcher.util.network import WILDCARD_ADDRESSES
from launcher.util.records import Record
from launcher.util.safedirs import make_private_dir
from launcher.util.states import RunState, StepState, exit_code_of
from launcher.util.userdirs import node_record_dir, node_work_root

#: Final states of a run (``stopped``: an interactive cluster ended by ``hpc-hadoop stop``): the terminal
#: :class:`RunState` members.
STATES: tuple[RunState, ...] = tuple(state for state in RunState if state.terminal)


class _Entry(BaseModel):
    """An entry of a list in ``run.json``; keys it does not know are kept (:class:`Record`'s policy)."""

    model_config = ConfigDict(extra="allow")


class StepRecord(StepResult):
    """A step in ``run.json`` (``steps``): :class:`launcher.steps.jobs.StepResult`'s fields but its output lines,
    plus ``errors`` (the client's last 5 lines); fields a run directory written by an older release lacks have
    defaults, and keys it does not know are kept (:class:`Record`'s policy)."""

    model_config = ConfigDict(extra="allow")

    kind: str = ""
    argv: list[str] = Field(default_factory=list)
    log: str = ""
    outputs: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_unused_spark_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A step that never saw a Spark stage (``stage`` is ``None``: every MapReduce step) is written without the
        ``stage*`` fields, so a ``run.json`` of the release before reads and writes back the same keys."""
        data: dict[str, Any] = handler(self)
        if data.get("stage") is None:
            for key in SPARK_STAGE_FIELDS:
                data.pop(key, None)
        return data


class PortRecord(_Entry):
    """A TCP port the cluster's processes were seen listening on (``ports``)."""

    node: str
    process: str
    address: str
    port: int


class LostNodeRecord(_Entry):
    """A node whose NodeManager was lost while a step ran, which the run survived (``lost_nodes``): ``at`` epoch
    seconds when its agent saw the daemon exit (``None`` if not told), ``exit`` its exit code."""

    node: str
    step: int | None = None
    daemon: str
    exit: int | None = None
    at: float | None = None


class StallRecord(_Entry):
    """A read of the shared filesystem that went unanswered (``stalls``; :class:`launcher.cluster.watch.Stall`)."""

    path: str
    began: float
    seconds: float
    ongoing: bool = True


class RunReport(Record):
    """Everything worth keeping about one run; written as ``run.json`` (schema policy: :class:`Record`; the keys and
    shapes are those ``run.json`` had before it was typed, plus ``schema``; every field has a default, so that a
    partial record, one a run wrote before it knew its cluster, reads too).

    ``filesystem`` (:class:`launcher.filesystems.base.FilesystemRecord`, ``{}`` until prepared): type (``lustre``,
    ``orangefs (fuse)``, ``fuse.glusterfs``...), mount, ``mode``, why layouts can
    be neither set nor read there (``striping_error``, or ``null``) and one entry per directory (input, output,
    staging, scratch) with its status: ``applied`` (the ``requested`` layout, the directory's read back in
    ``layout``, the one a new file really got in ``effective`` and each setting it did not get in ``differs``),
    ``striping not applicable`` (and why), ``not restriped: holds data``, ``not requested`` or ``failed``.

    ``notes``: what the launcher changed or skipped on its own, e.g. timeouts clamped to half the walltime.
    ``ports``: every TCP port the cluster's processes were seen listening on (``node``, ``process``,
    ``address``, ``port``), sampled each second by the agents (:mod:`launcher.node.listeners`).
    ``lost_nodes``: nodes whose NodeManager was lost while a step ran, which the run survived (``node``,
    ``step``, ``daemon``, ``exit``, ``at`` in epoch seconds).
    ``stalls``: reads of the shared filesystem that went unanswered for :data:`launcher.cluster.watch.STALL_SECONDS` or
    more while the cluster ran (``path``, ``began`` in epoch seconds, ``seconds``, ``ongoing``: still unanswered
    when the cluster was down).
    ``hold``: an interactive cluster (``hpc-hadoop start``), kept up after its steps until stopped.
    ``lost_filesystem``: the shared filesystem was lost while the cluster ran (``mount``, ``errno``, ``strerror``:
    :class:`launcher.util.errors.FilesystemLost`), or ``null``; ``kept_at``: where this record was kept instead of
    ``run.json`` in the cluster directory, which could not be written (:meth:`RunReport.keep_locally`), or ``null``.

    Timings are seconds: ``bringup_s`` (agents started → every NodeManager RUNNING),
    ``since_allocation_s`` (allocation start → ready), ``teardown_s``, ``total_s``; per step ``wall_s``.
    """

    model_config = ConfigDict(validate_assignment=True)

    cluster_id: str = ""
    name: str = ""
    run_dir: str = ""
    scheduler: str = ""
    job_id: str | None = None
    nodes: list[str] = Field(default_factory=list)
    state: RunState = RunState.RUNNING
    error: str | None = None
    started: float = Field(default_factory=time.time)
    ended: float | None = None
    bringup_s: float | None = None
    since_allocation_s: float | None = None
    teardown_s: float | None = None
    total_s: float | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    rm_web: str | None = None
    jhs_web: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    leftover_processes: int | None = None
    error_exit_code: int | None = None
    filesystem: FilesystemRecord = Field(default_factory=FilesystemRecord)
    hold: bool = False
    notes: list[str] = Field(default_factory=list)
    ports: list[PortRecord] = Field(default_factory=list)
    lost_nodes: list[LostNodeRecord] = Field(default_factory=list)
    stalls: list[StallRecord] = Field(default_factory=list)
    lost_filesystem: dict[str, str] | None = None
    kept_at: str | None = None

    @classmethod
    def load(cls, run_dir: str | Path) -> RunReport:
        """``<run_dir>/run.json``.

        Raises:
            OSError: it cannot be read. ValueError: it is not a run report.
        """
        return cls.read(Path(run_dir, "run.json"))

    @property
    def exit_code(self) -> int:
        """The exit code of the way the run ended (:data:`launcher.util.states.EXIT_CODES`): 0 succeeded or
        stopped (a held cluster), 130 interrupted (Ctrl-C), 143 cancelled (SIGTERM, SIGHUP, ``stop`` during bring-up
        or a step), 124 timed out; for a failure, the exit code of the error that ended the run around its steps
        (``error_exit_code``: 1 a daemon died, 2 bad input) even when it killed a step; else the failed step's exit
        code; else 1. A run still ``running`` counts as failed (1)."""
        fixed = exit_code_of(self.state)
        if fixed is not None:
            return fixed
        if self.error_exit_code is not None:  # the run failed around its steps (a daemon died, bad input)
            return self.error_exit_code
        failed = [s.returncode for s in self.steps if s.returncode not in (0, None)]
        if failed:
            return int(failed[-1] or 1)
        return 1

    def to_json(self, indent: int | None = 2) -> str:
        """JSON text of ``run.json``: the record, ``exit_code`` (:attr:`exit_code`), ``hpc_hadoop_version`` (this
        release's) and, last, ``results``: each step's outputs (:func:`step_results`; derived from ``steps``, written
        again on every write)."""
        data = self.dump()
        data.pop("results", None)  # read back from an earlier write: derived, written last again
        data["exit_code"] = self.exit_code
        data["hpc_hadoop_version"] = __version__
        data["results"] = [entry.model_dump() for entry in step_results(self)]
        return json.dumps(data, indent=indent)

    def write(self, path: str | Path | None = None, *, indent: int | None = 2) -> Path:
        """Write ``<run_dir>/run.json`` (``path``: elsewhere) atomically; returns its path. On a full filesystem
        (``ENOSPC``) the room kept by :func:`reserve_room` is given back and the write tried once more.

        Raises:
            OSError: it could not be written (the filesystem is full and no reserve is left, or it failed).
        """
        path = Path(self.run_dir, "run.json") if path is None else Path(path)
        try:
            _replace(path, self.to_json(indent))
        except OSError as err:
            if err.errno != errno.ENOSPC or not release_room(self.run_dir):
                raise
            _replace(path, self.to_json(indent))
        return path

    def keep_locally(self) -> Path | None:
        """Write the record on this node (the first of :func:`local_record_paths` that takes it), for a run whose
        cluster directory cannot be written (its filesystem is gone); ``kept_at`` names the file, and ``error`` says
        where it is (or that no place took it).

        Returns:
            The file, or ``None`` when no node-local directory could take it either.
        """
        error, tried = self.error, local_record_paths(self.cluster_id)
        for path in tried:
            self.kept_at = str(path)
            self.error = f"{error}; final record kept at {path} (the cluster directory cannot be written)"
            try:
                _private_dir(path.parent)
                _replace(path, self.to_json())
            except OSError:
                continue
            return path
        self.kept_at = None
        self.error = (f"{error}; no final record kept (the cluster directory cannot be written, nor "
                      f"{' nor '.join(str(p.parent) for p in tried)})")
        return None


class StepResults(BaseModel):
    """Where one step's results are (``run.json`` ``results``, the summary's ``results:`` lines, issue 40): its
    ``number`` (its place in ``steps``, 1-based: what ``hpc-hadoop results ID STEP`` and ``logs --app STEP`` take) and
    ``name``, its ``outputs`` (directories or files, absolute; none for a step that declares no output: ``pi``, a
    ``jar`` or Spark step without ``output:``) and its client ``log`` (``steps/NN-name.log``: what it printed)."""

    number: int
    name: str
    state: str
    outputs: list[str]
    log: str


def step_results(report: RunReport) -> list[StepResults]:
    """Each recorded step's :class:`StepResults`, in the order of ``report.steps``."""
    return [StepResults(number=number, name=step.name, state=str(step.state), outputs=list(step.outputs),
                        log=step.log) for number, step in enumerate(report.steps, start=1)]


def result_lines(report: RunReport) -> list[str]:
    """The summary's last lines (issue 40): ``results:``, then one line per step, ``  1 wordcount: /path/out`` (two
    outputs: both, ``, ``-separated); a step without an output says so and where what it printed is (``  2 SparkPi:
    no output; what it printed: /run/steps/02-SparkPi.log``); a step that did not succeed says so after its path
    (``(failed: may be partial or missing)``). Then how to read them (``hpc-hadoop results ID [STEP]``). No lines for
    a run without steps."""
    entries = step_results(report)
    if not entries:
        return []
    lines = ["results:"]
    for entry in entries:
        where = (", ".join(entry.outputs) if entry.outputs
                 else f"no output; what it printed: {entry.log}" if entry.log else "no output")
        if entry.outputs and entry.state != StepState.SUCCEEDED:
            where += f" ({entry.state}: may be partial or missing)"
        lines.append(f"  {entry.number} {entry.name}: {where}")
    if any(entry.outputs for entry in entries):
        lines.append(f"  first lines of each: hpc-hadoop results {report.cluster_id} [STEP]")
    return lines


def local_record_paths(cluster_id: str) -> list[Path]:
    """Where a run's final record goes on its node when the cluster directory cannot be written, best first:
    ``/var/tmp/hpc-hadoop-<user>/<cluster id>.run.json`` (``/var/tmp`` outlives the job, whose ``$TMPDIR`` the
    batch system deletes at its end, and a reboot), then the same in the daemons' node-local working root
    (:func:`launcher.util.userdirs.node_work_root`: ``$TMPDIR`` or ``/tmp``)."""
    user = getpass.getuser()
    name = f"{cluster_id}.run.json"
    return [node_record_dir(user) / name, node_work_root(user) / name]


def _private_dir(directory: Path) -> None:
    """Make ``directory`` (``hpc-hadoop-<user>``, mode 0700) in a parent every user writes to such as ``/var/tmp``,
    and check it is ours (:func:`launcher.util.safedirs.make_private_dir`: ours, not a link, not writable by
    others).

    Raises:
        OSError: it cannot be made; or it is someone else's, a symbolic link or writable by others
            (``PermissionError`` with the refusal's line).
    """
    try:
        make_private_dir(directory.parent, directory)
    except UserError as refused:
        raise PermissionError(str(refused)) from None


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, mode 0600 from its creation
    (:func:`launcher.util.files.replace_private`; the temporary file ``<stem>.tmp<pid>`` beside it)."""
    replace_private(path, text, tmp=path.with_suffix(f".tmp{os.getpid()}"))


#: Room kept in the cluster directory for the last writes of ``run.json`` when the filesystem fills up
#: (issue 13 item 6): ``run.json`` of a run with many steps and ports is tens of KiB.
RESERVE_BYTES = 1 << 20
RESERVE_FILE = ".room-for-run.json"


def reserve_room(run_dir: str | Path) -> None:
    """Write :data:`RESERVE_BYTES` of real (not sparse) blocks to ``<run_dir>/.room-for-run.json``, given back by
    :func:`release_room` when the filesystem fills up, so that ``run.json`` can still say what happened.

    Raises:
        OSError: the filesystem has not even that room (the run would fail anyway).
    """
    with open(Path(run_dir, RESERVE_FILE), "wb") as out:
        out.write(b"\0" * RESERVE_BYTES)
        out.flush()
        os.fsync(out.fileno())


def release_room(run_dir: str | Path) -> bool:
    """Delete the reserve of :func:`reserve_room`; True if there was one and it is gone (False too when it cannot be
    deleted: the filesystem is gone)."""
    try:
        Path(run_dir, RESERVE_FILE).unlink()
    except OSError:
        return False
    return True


#: The daemons whose ports the plan gives out of the cluster's block (:class:`launcher.plan.cluster_plan.Ports`), as
#: ``run.json``'s ``ports`` names them; containers (``MRAppMaster``, Spark's JVMs) take ephemeral ports by design.
PLANNED_DAEMONS = frozenset({"ResourceManager", "NodeManager", "JobHistoryServer", "NameNode", "DataNode"})


def ports_line(ports: list[PortRecord], *, interface: str | None, block: range, shuffle_port: int) -> str | None:
    """The one line on the ports a cluster listened on (``RunReport.ports``) that a user must act on, or ``None``
    (the full list is in ``run.json``): a daemon's port (:data:`PLANNED_DAEMONS`) on every interface although the
    daemons bind to one address (``interface``'s, or the node's), except the ShuffleHandler's (``shuffle_port``:
    Hadoop 3.4.2 has no key for its address, docs/admin-guide.md); and a daemon's port outside the planned
    ``block`` that other hosts can reach (not on a loopback address: a DataNode's internal web server takes an
    ephemeral port on ``127.0.0.1``).

    Args:
        ports: the ports seen (:class:`PortRecord`).
        interface: the job file's ``interface`` (``None``: the address of each node's hostname).
        block: the cluster's port block (:meth:`launcher.plan.cluster_plan.Ports.all`).
        shuffle_port: the NodeManagers' ShuffleHandler port (``Ports.shuffle``).
    """
    daemons = [p for p in ports if p.process in PLANNED_DAEMONS]
    said = []
    wildcard = [f"{p.process} {p.port} on {p.node}" for p in daemons
                if p.address in WILDCARD_ADDRESSES and not (p.process == "NodeManager" and p.port == shuffle_port)]
    if wildcard:
        asked = f"interface {interface}'s address" if interface else "the node's address"
        said.append(f"on every interface although the daemons bind to {asked}: {', '.join(wildcard)}")
    outside = [f"{p.process} {p.port} on {p.node}" for p in daemons if p.port not in block and not _loopback(p.address)]
    if outside:
        said.append(f"outside the planned block {block.start}-{block.stop - 1}: {', '.join(outside)}")
    return f"ports (all {len(ports)} in run.json 'ports'): {'; '.join(said)}" if said else None


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _layout_text(layout: dict[str, Any] | None) -> str:
    """``count 4, size 1048576``; ``stuffed`` said in words: files have one data file until they grow past their
    first strip (OrangeFS's file stuffing)."""
    text = ", ".join(f"{k} {v}" for k, v in (layout or {}).items()
                     if v is not None and k not in ("error", "stuffed"))
    if (layout or {}).get("stuffed"):
        text += ", stuffed (one data file until a file grows past its first strip)"
    return text


def directory_line(entry: DirectoryRecord) -> str:
    """One directory of the report's ``filesystem`` section as a line: ``applied: requested count 8, size 1048576;
    effective count 4, size 1048576 (count 8 asked, 4 given): /path``; other statuses with the directory's layout
    (``not requested (count 4): /path``) and why."""
    status = entry.status
    if status == "applied":
        effective = _layout_text(entry.effective) or "not reported"
        differs = f" ({'; '.join(entry.differs)})" if entry.differs else ""
        text = f"applied: requested {_layout_text(entry.requested)}; effective {effective}{differs}"
    else:
        shown = _layout_text(entry.layout)
        text = status + (f" ({shown})" if shown else "")
        if status != "striping not applicable" and entry.reason:
            text += f" [{entry.reason}]"
    return f"{text}: {entry.path}"


def _filesystem_lines(fs: FilesystemRecord, console: Console) -> None:
    """The summary's filesystem lines: its type, mount and mode, then each directory's striping outcome."""
    if fs.recorded:
        console.print(f"filesystem: {fs.type} at {fs.mount}, mode {fs.mode}", markup=False)
        for entry in fs.directories:
            console.print(f"  {entry.role:<8} {directory_line(entry)}", soft_wrap=True, markup=False)


def summary(report: RunReport, console: Console) -> None:
    """Print the run summary: state, timings, one row per step, where the logs are, and last where each step's
    results are (:func:`result_lines`)."""
    table = Table(title=f"{report.name}: {report.state}", title_justify="left", show_edge=False)
    for column in ("step", "state", "exit", "wall (s)", "application"):
        table.add_column(column, justify="right" if column in ("exit", "wall (s)") else "left")
    for step in report.steps:
        wall = f"{step.wall_s:.1f}" if step.wall_s is not None else "-"
        table.add_row(step.name, step.state, str(step.returncode), wall, step.application_id or "-")
    console.print(table)
    for step in report.steps:
        if step.shuffle:
            console.print(f"shuffle of {step.name}: {shuffle.describe(step.shuffle)}", markup=False)
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f} s"

    console.print(f"bring-up {fmt(report.bringup_s)}, teardown {fmt(report.teardown_s)}, "
                  f"total {fmt(report.total_s)}")
    _filesystem_lines(report.filesystem, console)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    if report.error:
        console.print(f"[red]error:[/red] {escape(report.error)}", soft_wrap=True)
    if report.kept_at:
        console.print(f"run directory: {report.run_dir}  (on the lost filesystem; the run's record: {report.kept_at})",
                      soft_wrap=True, markup=False)
    else:
        console.print(f"run directory: {report.run_dir}  (run.json, logs/, steps/, history/)")
    for line in result_lines(report):
        console.print(line, soft_wrap=True, markup=False, highlight=False)
