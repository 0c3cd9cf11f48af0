"""Batch-system backends, one class each, chosen by name (``local``, ``slurm``, ``pbs``, ``sge``).

``get_scheduler(name)`` returns a new backend (``UserError`` naming the valid ones for an unknown name);
``register(name, "module:Class")`` adds one (imported on first use). The backends produce the
:class:`~launcher.schedulers.allocation.Allocation` the plan is made from (``allocation.py``). May import
:mod:`launcher.config` and everything below it; each backend is independent of its siblings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from launcher.schedulers.allocation import Allocation, JobState
from launcher.util.registry import Registry

if TYPE_CHECKING:  # at run time imported with the first backend (``launcher.schedulers.Scheduler`` too: __getattr__),
    # so that the CLI's choices (the names) do not import the job-file model
    from launcher.schedulers.base import Scheduler

SCHEDULERS: Registry[Scheduler] = Registry("scheduler", field="scheduler")
register = SCHEDULERS.register
get_scheduler = SCHEDULERS.create


def __getattr__(name: str) -> object:
    """``launcher.schedulers.Scheduler``, imported on first access (PEP 562).

    Raises:
        AttributeError: any other name.
    """
    if name == "Scheduler":
        from launcher.schedulers.base import Scheduler

        return Scheduler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["SCHEDULERS", "Allocation", "JobState", "Scheduler", "get_scheduler", "register"]
