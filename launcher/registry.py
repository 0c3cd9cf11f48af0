"""Classes chosen by name (schedulers, fan-out launchers), imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

from launcher.errors import UserError


class Registry:
    """Names → ``"module:Class"`` paths; :meth:`create` imports the class and returns a new instance.

    Args:
        what: what the entries are, for error messages (``"scheduler"``).
        field: the job-file field that names one (``"scheduler"``), if any.
        entries: the built-in entries.
    """

    def __init__(self, what: str, field: str | None, entries: dict[str, str]) -> None:
        self.what = what
        self.field = field
        self.entries = dict(entries)

    def register(self, name: str, target: str) -> None:
        """Add (or replace) ``name`` → ``"module:Class"``."""
        self.entries[name] = target

    def create(self, name: str) -> Any:
        """A new instance of the class registered as ``name``.

        Raises:
            UserError: unknown name; lists the valid ones.
        """
        target = self.entries.get(name)
        if target is None:
            raise UserError(f"unknown {self.what} {name!r}", field=self.field,
                            fix=f"use one of: {', '.join(sorted(self.entries))}")
        module_name, _, class_name = target.partition(":")
        return getattr(importlib.import_module(module_name), class_name)()
