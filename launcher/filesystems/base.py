"""The filesystem interface: detect, stripe a directory, read its layout back (the directory's, and the one a new
file in it really gets), report.

A filesystem class only builds argument lists and parses outputs, as a scheduler backend does
(docs/architecture.md, Data flow); running a command and turning a failure into a
:class:`~launcher.util.errors.CommandError` lives here, once.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from launcher.config.spec import StripeSpec
from launcher.util.errors import CommandError, UserError
from launcher.util.records import SparseSection

#: Seconds an ``lfs``/``setfattr``/``getfattr`` call may take.
COMMAND_TIMEOUT = 60.0

NOT_APPLICABLE = "striping not applicable"


@dataclass(frozen=True)
class Layout:
    """A directory's stripe layout as the filesystem reports it (``None`` = not reported). ``stuffed``: a new file
    has fewer data files than ``count`` until it grows past its first strip (OrangeFS's file stuffing); ``None``
    where the filesystem has no such thing."""

    count: int | None = None
    size: int | None = None
    index: int | None = None
    stuffed: bool | None = None

    def to_dict(self) -> dict[str, int | bool | None]:
        """JSON-ready dictionary (``stuffed`` only where the filesystem says it)."""
        data: dict[str, int | bool | None] = asdict(self)
        if data["stuffed"] is None:
            del data["stuffed"]
        return data


@dataclass(frozen=True)
class StripeOutcome:
    """What happened to one directory (one entry of the run report's ``filesystem.directories``).

    Attributes:
        role: ``input``, ``output``, ``staging``, ``scratch``.
        path: the directory.
        status: ``applied``, ``striping not applicable``, ``not restriped: holds data``, ``not requested``.
        requested: the job file's setting (count/size/index; ``None`` fields unset).
        layout: the directory's layout read back from the filesystem after striping (or the current one).
        commands: the commands run for this directory.
        reason: why striping was not applied, or why the layout was not read, when it was not.
        effective: after striping, the layout a new file in the directory really got (:meth:`Filesystem.effective`).
        differs: each requested setting the new file did not get, e.g. ``count 8 asked, 4 given`` (OrangeFS gives a
            file at most one data file per server, Lustre at most one stripe per OST, both silently).
    """

    role: str
    path: str
    status: str
    requested: dict[str, int | None]
    layout: dict[str, int | None] | None = None
    commands: tuple[tuple[str, ...], ...] = ()
    reason: str | None = None
    effective: dict[str, int | None] | None = None
    differs: tuple[str, ...] = ()

    def to_record(self) -> DirectoryRecord:
        """Its entry of ``run.json``'s ``filesystem.directories``, every key set."""
        return DirectoryRecord(role=self.role, path=self.path, status=self.status, requested=self.requested,
                               layout=self.layout, commands=[list(c) for c in self.commands], reason=self.reason,
                               effective=self.effective, differs=list(self.differs))


class DirectoryRecord(SparseSection):
    """One directory in ``run.json``'s ``filesystem.directories`` (:class:`StripeOutcome`'s fields; a directory
    whose striping failed has only ``role``, ``path``, ``status`` ``failed``, ``requested`` and ``reason``, and is
    written back so). Schema policy: :class:`launcher.util.records.Record`."""

    role: str
    path: str
    status: str
    requested: dict[str, int | None] = Field(default_factory=dict)
    layout: dict[str, Any] | None = None
    commands: list[list[str]] = Field(default_factory=list)
    reason: str | None = None
    effective: dict[str, Any] | None = None
    differs: list[str] = Field(default_factory=list)


class FilesystemRecord(SparseSection):
    """``run.json``'s ``filesystem`` section (:func:`launcher.filesystems.report_section`): the plan's decision
    (``type`` detected, ``class`` that stripes, ``mount``, ``source``, ``free_bytes``, ``flock``), the ``mode``,
    whether the class stripes (``striping``) and why layouts cannot be used (``striping_error``), and each
    directory's outcome. Empty (``{}``, :attr:`recorded` false) until the filesystem is prepared. Schema policy:
    :class:`launcher.util.records.Record`."""

    type: str = ""
    class_: str = Field("", alias="class")
    mount: str | None = None
    source: str | None = None
    mode: str = ""
    free_bytes: int = 0
    flock: bool = False
    striping: bool = False
    striping_error: str | None = None
    directories: list[DirectoryRecord] = Field(default_factory=list)

    @property
    def recorded(self) -> bool:
        """Whether the section was written (the run got as far as preparing its filesystem)."""
        return bool(self.model_fields_set)


def _requested(setting: StripeSpec) -> dict[str, int | None]:
    return {"count": setting.count, "size": setting.size, "index": setting.index}


def differences(requested: dict[str, int | None], effective: dict[str, int | None] | None) -> tuple[str, ...]:
    """Each requested setting that ``effective`` (a new file's layout) does not have, as ``count 8 asked, 4 given``;
    a count of -1 (all targets) and the fields the filesystem does not report are not compared."""
    if effective is None:
        return ()
    found = []
    for key, asked in requested.items():
        given = effective.get(key)
        if asked is None or given is None or asked == given or (asked == -1 and key in ("count", "index")):
            continue
        found.append(f"{key} {asked} asked, {given} given")
    return tuple(found)


def holds_data(directory: Path) -> bool:
    """True if ``directory`` exists and has at least one entry."""
    try:
        with os.scandir(directory) as entries:
            return any(True for _ in entries)
    except (FileNotFoundError, NotADirectoryError):
        return False


class Filesystem:
    """One kind of filesystem. Subclasses set :attr:`name` and, if they can stripe a directory, override
    :meth:`stripe_commands`, :meth:`layout_command` and :meth:`parse_layout`.

    Attributes:
        name: registry name (``lustre``, ``orangefs``, ``gpfs``, ``generic``).
        striping: whether the filesystem has per-directory striping we can set.
        why_not: said in the report when :attr:`striping` is false.
    """

    name: str = ""
    striping: bool = False
    why_not: str = "no per-directory striping on this filesystem"
    #: What to do when striping can be neither set nor read (:meth:`unusable`), said in the error.
    unusable_fix: str = "install this filesystem's client tools on every node"

    # -- what subclasses provide -----------------------------------------------------------
    def check(self, setting: StripeSpec, field: str) -> None:
        """Reject a setting this filesystem cannot honour (e.g. a Lustre stripe size not a multiple of 64 KiB).

        Raises:
            UserError: naming ``field``.
        """
        positive_size(setting, field)

    def stripe_commands(self, directory: Path, setting: StripeSpec) -> list[list[str]]:
        """The commands that give ``directory`` the layout ``setting`` (new files inherit it); none here:
        filesystems without per-directory striping (:attr:`striping` false) are never asked to run any."""
        return []

    def layout_command(self, directory: Path) -> list[str] | None:
        """The command that prints ``directory``'s layout, or ``None`` if there is none."""
        return None

    def file_layout_command(self, path: Path) -> list[str] | None:
        """The command that prints the layout the file ``path`` really has (default: :meth:`layout_command`)."""
        return self.layout_command(path)

    def file_layout_commands(self, path: Path) -> list[list[str]]:
        """The commands whose outputs, joined, say the layout the file ``path`` really has (default:
        :meth:`file_layout_command` alone; none when it is ``None``)."""
        argv = self.file_layout_command(path)
        return [argv] if argv else []

    def parse_layout(self, output: str) -> Layout:
        """Parse :meth:`layout_command`'s (and :meth:`file_layout_command`'s) output."""
        return Layout()

    def parse_file_layout(self, output: str) -> Layout:
        """Parse the joined outputs of :meth:`file_layout_commands` (default: :meth:`parse_layout`)."""
        return self.parse_layout(output)

    # -- what the base class does -----------------------------------------------------------
    def run(self, argv: list[str], hint: str | None = None) -> str:
        """Run ``argv`` (no shell); return its stdout.

        Raises:
            CommandError: it failed, could not start or timed out (with the command, exit code and output tails).
        """
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False,
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise CommandError(argv, 127, stderr=f"{argv[0]}: command not found",
                               hint=hint or f"install the {self.name} client tools, or set filesystem.type") from None
        except subprocess.TimeoutExpired as exc:
            raise CommandError(argv, 124, stderr=f"timed out after {exc.timeout:.0f} s", hint=hint) from None
        if done.returncode != 0:
            raise CommandError(argv, done.returncode, done.stdout, done.stderr, hint=hint)
        return done.stdout

    def layout(self, directory: Path) -> Layout | None:
        """The current layout of ``directory``, or ``None`` when the filesystem reports none.

        Raises:
            CommandError: the layout command failed.
        """
        argv = self.layout_command(directory)
        if argv is None:
            return None
        return self.parse_layout(self.run(argv))

    def unusable(self, directory: Path) -> str | None:
        """Why striping can be neither set nor read under ``directory``, or ``None``: its layout command fails there
        (the client tools are missing; OrangeFS's FUSE client answers every extended-attribute call with "Operation
        not supported"). Reads only; ``None`` for a filesystem without striping.

        Returns:
            One line: the command, its exit code and its message.
        """
        argv = self.layout_command(directory) if self.striping else None
        if argv is None:
            return None
        try:
            self.run(argv)
        except CommandError as exc:
            return str(CommandError(exc.argv, exc.returncode, exc.stdout, exc.stderr))
        return None

    def effective(self, directory: Path) -> Layout | None:
        """The layout a new file in ``directory`` really gets, which may be less than the directory asks for:
        an empty probe file ``.hpc-hadoop-layout-<pid>`` is made there, read with :meth:`file_layout_commands` and
        removed.

        Raises:
            CommandError: the layout command failed.
            OSError: the probe file could not be made.
        """
        probe = directory / f".hpc-hadoop-layout-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            return self.read_file_layout(probe)
        finally:
            probe.unlink(missing_ok=True)

    def read_file_layout(self, path: Path) -> Layout | None:
        """The layout the file ``path`` has: :meth:`file_layout_commands` run and their output parsed
        (:meth:`parse_file_layout`); ``None`` where this filesystem has none.

        Raises:
            CommandError: a layout command failed.
        """
        commands = self.file_layout_commands(path)
        return self.parse_file_layout("".join(self.run(argv) for argv in commands)) if commands else None

    def stripe(self, role: str, directory: Path, setting: StripeSpec, *, keep_data: bool = False,
               unusable: str | None = None) -> StripeOutcome:
        """Give ``directory`` (created if missing) the layout ``setting``, read it back, and read the layout a new
        file there gets (:meth:`effective`), naming each setting it did not get.

        Args:
            role: ``input``, ``output``, ``staging``, ``scratch`` (for the report).
            keep_data: a directory that already holds data is left as it is (input directories).
            unusable: why layouts can be neither set nor read here (:meth:`unusable`, decided with the plan): a
                directory for which nothing is asked is then reported with this reason, its layout unread.

        Raises:
            UserError: a setting this filesystem cannot honour.
            CommandError: a striping command failed.
        """
        directory.mkdir(parents=True, exist_ok=True)
        requested = _requested(setting)
        if not setting.requested:
            if not self.striping:
                return StripeOutcome(role, str(directory), NOT_APPLICABLE, requested, reason=self.why_not)
            if unusable:
                return StripeOutcome(role, str(directory), "not requested", requested,
                                     reason=f"layout not read: {unusable}")
            current = self.layout(directory)
            return StripeOutcome(role, str(directory), "not requested", requested,
                                 current.to_dict() if current else None)
        if not self.striping:
            return StripeOutcome(role, str(directory), NOT_APPLICABLE, requested, reason=self.why_not)
        self.check(setting, f"filesystem.striping.{role}")
        if keep_data and holds_data(directory):
            current = self.layout(directory)
            return StripeOutcome(role, str(directory), "not restriped: holds data", requested,
                                 current.to_dict() if current else None,
                                 reason="input directories that already hold data are never restriped")
        commands = self.stripe_commands(directory, setting)
        for argv in commands:
            self.run(argv)
        read_back = self.layout(directory)
        read_cmd = self.layout_command(directory)
        got = self.effective(directory)
        effective = got.to_dict() if got else None
        ran = tuple(tuple(c) for c in [*commands, *([read_cmd] if read_cmd else [])])
        return StripeOutcome(role, str(directory), "applied", requested, read_back.to_dict() if read_back else None,
                             ran, effective=effective, differs=differences(requested, effective))


def positive_size(setting: StripeSpec, field: str, multiple: int = 1) -> None:
    """Raise a :class:`UserError` unless ``setting.size`` is unset or a positive multiple of ``multiple``."""
    if setting.size is not None and (setting.size <= 0 or setting.size % multiple):
        unit = f" multiple of {multiple} bytes" if multiple > 1 else " number of bytes"
        raise UserError(f"stripe size {setting.size} is not a positive{unit}", field=f"{field}.size",
                        fix="use e.g. 1m, 4m, 64m")
