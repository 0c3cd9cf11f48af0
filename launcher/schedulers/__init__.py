"""Batch-system backends, one class each, chosen by name (``local``, ``slurm``, ``pbs``, ``sge``).

``get_scheduler(name)`` returns a new backend (``UserError`` naming the valid ones for an unknown name);
``register(name, "module:Class")`` adds one (imported on first use). The backends produce the
:class:`~launcher.schedulers.allocation.Allocation` the plan is made from (``allocation.py``). May import
:mod:`launcher.config` and everything below it; each backend is independent of its siblings.
"""

from __future__ import annotations

from launcher.schedulers.allocation import Allocation, JobState
from launcher.schedulers.base import Scheduler
from launcher.util.registry import Registry

SCHEDULERS: Registry[Scheduler] = Registry("scheduler", field="scheduler")
register = SCHEDULERS.register
get_scheduler = SCHEDULERS.create

__all__ = ["SCHEDULERS", "Allocation", "JobState", "Scheduler", "get_scheduler", "register"]
