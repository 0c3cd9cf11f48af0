"""Batch-system backends, one class each, chosen by name (``local``, ``slurm``, ``pbs``, ``sge``).

``get_scheduler(name)`` returns a new backend (``UserError`` naming the valid ones for an unknown name);
``register(name, "module:Class")`` adds one (imported on first use).
"""

from __future__ import annotations

from launcher.schedulers.base import Allocation, JobState, Scheduler
from launcher.util.registry import Registry

SCHEDULERS: Registry[Scheduler] = Registry("scheduler", field="scheduler")
register = SCHEDULERS.register
get_scheduler = SCHEDULERS.create

__all__ = ["SCHEDULERS", "Allocation", "JobState", "Scheduler", "get_scheduler", "register"]
