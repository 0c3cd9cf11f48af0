"""Batch-system backends, one class each, chosen by name (``local``, ``slurm``, ...)."""

from __future__ import annotations

from launcher.registry import Registry
from launcher.schedulers.base import Allocation, JobState, Scheduler

_REGISTRY = Registry("scheduler", "scheduler", {
    "local": "launcher.schedulers.local:LocalScheduler",
    "slurm": "launcher.schedulers.slurm:SlurmScheduler",
    "pbs": "launcher.schedulers.pbs:PbsScheduler",
    "sge": "launcher.schedulers.sge:SgeScheduler",
})


def register(name: str, target: str) -> None:
    """Register a backend class by ``"module:Class"`` path (import happens on first use)."""
    _REGISTRY.register(name, target)


def get_scheduler(name: str) -> Scheduler:
    """Return a new backend instance for ``name``.

    Raises:
        UserError: unknown backend; lists the valid names.
    """
    return _REGISTRY.create(name)


__all__ = ["Allocation", "JobState", "Scheduler", "get_scheduler", "register"]
