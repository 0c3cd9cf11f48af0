"""Classes chosen by name (schedulers, fan-out launchers), imported on first use."""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar, cast

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


class Registry(Generic[T]):
    """Names → ``"module:Class"`` paths of subclasses of ``T``; :meth:`create` imports the class and returns a new
    instance. A package that keeps one exposes :meth:`register` and :meth:`create` under its own names
    (``launcher.schedulers.get_scheduler``, ``launcher.fanout.get_launcher``).

    Args:
        what: what the entries are, for error messages, and the key of the built-in ones in :data:`BUILT_IN`
            (``"scheduler"``).
        field: the job-file field that names one (``"scheduler"``), if any.
    """

    def __init__(self, what: str, field: str | None = None) -> None:
        self.what = what
        self.field = field
        self.entries = dict(BUILT_IN.get(what, {}))

    def register(self, name: str, target: str) -> None:
        """Add (or replace) ``name`` → ``"module:Class"``."""
        self.entries[name] = target

    def create(self, name: str, **options: object) -> T:
        """A new instance of the class registered as ``name``, made with ``options`` (keyword arguments).

        Raises:
            UserError: unknown name; lists the valid ones.
        """
        target = self.entries.get(name)
        if target is None:
            raise UserError(f"unknown {self.what} {name!r}", field=self.field,
                            fix=f"use one of: {', '.join(sorted(self.entries))}")
        module_name, _, class_name = target.partition(":")
        return cast(T, getattr(importlib.import_module(module_name), class_name)(**options))
