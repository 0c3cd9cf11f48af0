"""What ``run`` takes from the allocation it runs in (issue 28 item 3): the rule, applied once, and the one line
that says it.

The rule, for ``hpc-hadoop run`` inside a batch job (a user's own ``sbatch``/``qsub`` script, or the one ``submit``
writes):

* **nodes**: every node of the allocation is used. The job file's ``nodes`` is a minimum: an allocation with fewer
  nodes is refused before anything starts (:func:`launcher.plan.cluster_plan.make_plan`); one with more uses them
  all, and the job's ``nodes`` becomes the allocation's count.
* **walltime**: the allocation's time limit, counted from the job's start, ends the run (teardown begins
  :func:`launcher.schedulers.base.teardown_lead` before it). The job's ``walltime`` becomes the allocation's, so
  that the teardown lead and the timeouts clamped to half the walltime follow the time the job really has; where
  the batch system reports no limit, the job file's walltime stays and no deadline is kept.

The ``local`` backend takes nothing: one node, this machine, the job file's walltime.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from launcher.config.spec import JobSpec
from launcher.schedulers.allocation import Allocation
from launcher.schedulers.base import BatchScheduler, Scheduler
from launcher.util.units import format_walltime


@dataclass(frozen=True)
class Taken:
    """What ``run`` took from its allocation.

    Attributes:
        spec: the job with the allocation's node count and walltime written in (see the module's rule).
        line: the one line that says it (``allocation: Slurm job 123, 3 nodes (n1,n2,n3) from ...``).
    """

    spec: JobSpec
    line: str


def _clock(seconds: float) -> str:
    return format_walltime(max(0, int(seconds)))


def take_allocation(spec: JobSpec, allocation: Allocation, scheduler: Scheduler,
                    environ: Mapping[str, str] | None = None, now: float | None = None) -> Taken:
    """Apply the module's rule to ``spec`` on ``allocation`` (read by ``scheduler``) and say what was taken, in
    one line (the batch system's name, node variable and walltime source: its
    :class:`~launcher.schedulers.base.BatchSystem`).

    Args:
        environ: the environment the allocation was read from (default ``os.environ``): names the node variable.
        now: epoch seconds, for the walltime left (default: now).

    Returns:
        The job as it runs and the line; an allocation with fewer nodes than ``spec.nodes`` leaves ``spec.nodes``
        as it is (the plan refuses it, naming both counts).
    """
    env = os.environ if environ is None else environ
    names = ",".join(node.name for node in allocation.nodes)
    count = len(allocation.nodes)
    if not isinstance(scheduler, BatchScheduler):
        return Taken(spec, f"allocation: this machine ({scheduler.name} backend), {count} node ({names}), "
                           f"walltime {_clock(spec.walltime)} from the job file")
    system = scheduler.system
    walltime_source = system.walltime_source
    variable = next((name for name in system.host_variables if env.get(name)), system.host_variables[0])
    updates: dict[str, int] = {}
    asked = [f"nodes: {spec.nodes}"]
    if count > spec.nodes:
        updates["nodes"] = count
        asked[0] += f" → using {count}"
    elif count < spec.nodes:
        asked[0] += f" → refused, the allocation has {count}"
    if allocation.walltime is None:
        walltime = f"no time limit from {walltime_source}"
        asked.append(f"walltime: {_clock(spec.walltime)} → kept for timeouts, no deadline")
    else:
        left = (allocation.deadline or 0.0) - (time.time() if now is None else now)
        walltime = f"walltime {_clock(allocation.walltime)} ({_clock(left)} left) from {walltime_source}"
        asked.append(f"walltime: {_clock(spec.walltime)}")
        if int(allocation.walltime) != spec.walltime:
            updates["walltime"] = int(allocation.walltime)
            asked[-1] += f" → using {_clock(allocation.walltime)}"
    line = (f"allocation: {system.shown} job {allocation.job_id}, {count} node{'s' if count != 1 else ''} ({names}) "
            f"from {variable}, {walltime}; job file asked {', '.join(asked)}")
    return Taken(spec.model_copy(update=updates) if updates else spec, line)


__all__ = ["Taken", "take_allocation"]
