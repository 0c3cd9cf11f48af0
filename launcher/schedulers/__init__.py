"""Batch-system backends, one class each, chosen by name (``local``, ``slurm``, ...)."""

from __future__ import annotations

from launcher.errors import UserError
from launcher.schedulers.base import Allocation, JobState, Scheduler

_REGISTRY: dict[str, str] = {
    "local": "launcher.schedulers.local:LocalScheduler",
    "slurm": "launcher.schedulers.slurm:SlurmScheduler",
    "pbs": "launcher.schedulers.pbs:PbsScheduler",
    "sge": "launcher.schedulers.sge:SgeScheduler",
}


def register(name: str, target: str) -> None:
    """Register a backend class by ``"module:Class"`` path (import happens on first use)."""
    _REGISTRY[name] = target


def get_scheduler(name: str) -> Scheduler:
    """Return a new backend instance for ``name``.

    Raises:
        UserError: unknown backend; lists the valid names.
    """
    target = _REGISTRY.get(name)
    if target is None:
        raise UserError(f"unknown scheduler {name!r}", field="scheduler",
                        fix=f"use one of: {', '.join(sorted(_REGISTRY))}")
    module_name, _, class_name = target.partition(":")
    module = __import__(module_name, fromlist=[class_name])
    return getattr(module, class_name)()


__all__ = ["Allocation", "JobState", "Scheduler", "get_scheduler", "register"]
