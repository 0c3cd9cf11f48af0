"""Classes chosen by name (schedulers, fan-out launchers, filesystems, workloads): the one registry mechanism."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TypeVar, cast

from launcher.util.errors import UserError

T = TypeVar("T")

#: The built-in classes of each kind, by name (``"module:Class"``, imported on first use): a new scheduler or
#: fan-out launcher is one new module and one line here (or a :meth:`Registry.register` call at run time).
BUILT_IN: dict[str, dict[str, str]] = {
    "scheduler": {
        "local": "launcher.schedulers.local:LocalScheduler",
        "slurm": "launcher.schedulers.slurm:SlurmScheduler",
        "pbs": "launcher.schedulers.pbs:PbsScheduler",
        "sge": "launcher.schedulers.sge:SgeScheduler",
    },
    "fan-out launcher": {
        "local": "launcher.fanout.local:LocalLauncher",
        "srun": "launcher.fanout.srun:SrunLauncher",
        "pbsdsh": "launcher.fanout.pbsdsh:PbsdshLauncher",
        "pbs_tmrsh": "launcher.fanout.pbsdsh:TmrshLauncher",
        "qrsh": "launcher.fanout.qrsh:QrshLauncher",
    },
}


class Registry(Mapping[str, type[T]]):
    """The one name → class registry of hpc-hadoop: schedulers (``launcher.schedulers.SCHEDULERS``), fan-out launchers
    (``launcher.fanout.LAUNCHERS``), filesystems (``launcher.filesystems.FILESYSTEMS``) and the benchmarks' workloads
    (``benchmarks.workloads.WORKLOADS``).

    Each entry is a class or a ``"module:Class"`` path, imported on first use. As a mapping it gives a name's class
    (``registry[name]``; ``KeyError`` when unknown) and iterates over the names in the order they were registered;
    :meth:`create` returns a new instance, with a :class:`~launcher.util.errors.UserError` listing the valid names
    for an unknown one. A package that keeps one exposes :meth:`register` and :meth:`create` under its own names
    (``launcher.schedulers.get_scheduler``, ``launcher.fanout.get_launcher``).

    Args:
        what: what the entries are, for error messages, and the key of the built-in ones in :data:`BUILT_IN`
            (``"scheduler"``).
        field: the job-file field that names one (``"scheduler"``), if any.
        entries: the first entries (name → class or ``"module:Class"``), after those of :data:`BUILT_IN`.
        sort_names: list the valid names sorted in the unknown-name error (else in registration order).
    """

    def __init__(self, what: str, field: str | None = None, entries: Mapping[str, str | type[T]] | None = None, *,
                 sort_names: bool = True) -> None:
        self.what = what
        self.field = field
        self.sort_names = sort_names
        self.entries: dict[str, str | type[T]] = {**BUILT_IN.get(what, {}), **(entries or {})}

    def register(self, name: str, target: str | type[T]) -> None:
        """Add (or replace) ``name`` → a class or ``"module:Class"``."""
        self.entries[name] = target

    def __getitem__(self, name: str) -> type[T]:
        """The class registered as ``name``, imported if it was given as ``"module:Class"``.

        Raises:
            KeyError: unknown name.
        """
        target = self.entries[name]
        if isinstance(target, str):
            module_name, _, class_name = target.partition(":")
            target = cast("type[T]", getattr(importlib.import_module(module_name), class_name))
        return target

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def create(self, name: str, **options: object) -> T:
        """A new instance of the class registered as ``name``, made with ``options`` (keyword arguments).

        Raises:
            UserError: unknown name; lists the valid ones.
        """
        if name not in self.entries:
            names = sorted(self.entries) if self.sort_names else list(self.entries)
            raise UserError(f"unknown {self.what} {name!r}", field=self.field, fix=f"use one of: {', '.join(names)}")
        return self[name](**options)
