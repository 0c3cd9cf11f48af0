"""Typed records of the files that pass between processes, and the agents' state file.

Every file one process writes and another reads (``run.json``, ``agents/<node>.json``, ``submit.json``,
``ended.json``, the clusters index, ``plan.json``: :class:`launcher.plan.cluster_plan.ClusterPlan`) is a
pydantic model derived from :class:`Record`, written and read only through it.

Compatibility policy (every record): the file carries ``schema`` (:data:`Record.SCHEMA` of the release that
wrote it; a file without one was written before records had versions and reads as schema 0). A reader accepts
any older or missing ``schema`` and keeps keys it does not know (``extra="allow"``: a newer release's fields
survive a rewrite by an older one); a release that renames or drops a field raises ``SCHEMA`` and maps the old
name in a ``mode="before"`` validator. The JSON keeps the key names and shapes the files had before they were
typed, so scripts reading them by raw keys go on working.

This module is at the bottom of the layers (the agent's state file is read by the fan-out, the cluster and
the agents); the records of the run's life cycle live with their writers (:mod:`launcher.lifecycle.report`,
:mod:`launcher.lifecycle.submit`, :mod:`launcher.lifecycle.clusters.index`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from launcher.util.files import replace_private
from launcher.util.states import AgentState

R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """A JSON file's record: ``schema`` (its version) plus the subclass's fields; unknown keys are kept.

    Raises (readers):
        pydantic.ValidationError: the file holds a value of the wrong type for a known field.
        ValueError: the file is not JSON (``pydantic.ValidationError`` is a ``ValueError``).
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    #: The version this release writes; bump it (and map the old form) when a field changes meaning.
    SCHEMA: ClassVar[int] = 1

    schema_version: int = Field(default=1, alias="schema",
                                description="version of the record's layout; 0: written before records had one")

    @classmethod
    def parse(cls: type[R], text: str | bytes) -> R:
        """The record in JSON ``text``; a file without ``schema`` reads as schema 0 (set on a copy: a frozen record,
        :class:`launcher.plan.cluster_plan.ClusterPlan`, takes no assignment)."""
        record = cls.model_validate_json(text)
        if "schema_version" not in record.model_fields_set:
            record = record.model_copy(update={"schema_version": 0})
        return record

    @classmethod
    def read(cls: type[R], path: str | Path) -> R:
        """The record in the file ``path``.

        Raises:
            OSError: it cannot be read. ValueError: it is not a record of this kind (not JSON, a wrong type).
        """
        return cls.parse(Path(path).read_bytes())

    @classmethod
    def read_or_none(cls: type[R], path: str | Path) -> R | None:
        """:meth:`read`, or ``None`` when the file is missing, unreadable or not such a record."""
        try:
            return cls.read(path)
        except (OSError, ValueError):
            return None

    def dump(self) -> dict[str, Any]:
        """The JSON-ready form (the files' key names; ``schema`` set to what this release writes)."""
        data = self.model_dump(mode="json", by_alias=True)
        data["schema"] = self.SCHEMA
        return data

    def to_json(self, indent: int | None = 2) -> str:
        """JSON text of the record (:meth:`dump`)."""
        import json

        return json.dumps(self.dump(), indent=indent)

    def write(self, path: str | Path, *, indent: int | None = 2) -> Path:
        """Write the record to ``path`` atomically and private to the user, mode 0600 from its creation
        (:func:`launcher.util.files.replace_private`).

        Raises:
            OSError: it could not be written.
        """
        path = Path(path)
        replace_private(path, self.to_json(indent))
        return path


class Section(BaseModel):
    """A section of a record, or an entry of one of its lists (``run.json``'s ``filesystem``, a step's
    ``shuffle``): no ``schema`` of its own (its record's counts), the same policy otherwise: keys it does not know
    are kept, the JSON keeps the names and shapes written before it was typed.

    Raises (readers):
        pydantic.ValidationError: a known key holds a value of the wrong type.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready form (the files' key names)."""
        return self.model_dump(mode="json", by_alias=True)


class SparseSection(Section):
    """A :class:`Section` that writes only the keys it was given (read from a file, passed when made, or assigned
    since): for entries whose keys vary (a directory that failed has no ``layout``; a reducer has the plugin's
    counters only where the plugin ran), so each is written back with the keys it had."""

    @model_serializer(mode="wrap")
    def _only_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        given = {fields[name].alias or name if name in fields else name for name in self.model_fields_set}
        given |= set(self.model_extra or {})
        return {key: value for key, value in data.items() if key in given}


class DaemonRecord(BaseModel):
    """One daemon in an agent's state file: ``pid`` (``None`` before it started), ``returncode`` (``None`` while it
    runs), its ``log`` and ``out`` files."""

    model_config = ConfigDict(extra="allow")

    pid: int | None = None
    returncode: int | None = None
    log: str = ""
    out: str = ""


class ListeningRecord(BaseModel):
    """A TCP port a process of the node was seen listening on (:mod:`launcher.node.listeners`)."""

    model_config = ConfigDict(extra="allow")

    process: str
    address: str
    port: int


#: Daemons a cluster can lose on a node while a step runs (YARN re-runs the work): the node's agent runs on when
#: its other daemons do (the master's), the launcher decommissions the node (:mod:`launcher.lifecycle.health`).
LOSABLE = frozenset({"nodemanager"})


class AgentRecord(Record):
    """``agents/<node>.json``: a node's agent and its daemons, rewritten by the agent at each change.

    ``failed``: daemon → exit code of each daemon that exited on its own, ``failed_at`` → when (epoch seconds);
    ``stop_reason``: the signal that stopped the agent (``SIGTERM``...); ``work_dir``/``nm_local_dir`` the node-local
    directories chosen (``work_note``/``nm_note`` why not the preferred ones; ``nm_note`` also why the NodeManager was
    not started: its local dir refused as not the user's, ``failed`` then has it with exit code 2); ``archive_notes``:
    class-data-sharing
    archives dropped; ``listening``: every port seen listening on the node; ``foreign_ports``: ports of the cluster's
    block held on the node by another user's process when a daemon exited (port, as text, → her uid: a daemon that
    could not bind). ``address``: under the job file's ``interface:``, the node's address on it, where its daemons
    bind (a node other than the master has only its name in the plan); ``None`` otherwise. ``notebook_note``: why the
    master's agent did not start JupyterLab or an execution (``hpc-hadoop notebook``). ``updated``: epoch seconds.
    Schema policy: :class:`Record`; every field has a default, so a partial file (an older agent's) reads too.
    """

    node: str = ""
    pid: int | None = None
    state: AgentState = AgentState.STARTING
    updated: float = 0.0
    daemons: dict[str, DaemonRecord] = Field(default_factory=dict)
    failed: dict[str, int] = Field(default_factory=dict)
    failed_at: dict[str, float] = Field(default_factory=dict)
    stop_reason: str | None = None
    work_dir: str | None = None
    work_note: str | None = None
    nm_local_dir: str | None = None
    nm_note: str | None = None
    archive_notes: list[str] = Field(default_factory=list)
    listening: list[ListeningRecord] = Field(default_factory=list)
    foreign_ports: dict[str, int] = Field(default_factory=dict)
    address: str | None = None
    notebook_note: str | None = None

    def dump(self) -> dict[str, Any]:
        """:meth:`Record.dump`, without ``foreign_ports`` when there are none nor ``address`` when it is ``None`` (a
        record as the release before wrote it reads and is written back as it was)."""
        data = super().dump()
        if not data.get("foreign_ports"):
            data.pop("foreign_ports", None)
        if data.get("address") is None:
            data.pop("address", None)
        if data.get("notebook_note") is None:
            data.pop("notebook_note", None)
        return data
