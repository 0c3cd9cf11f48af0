"""The embedded ``local`` backend: this one machine, no scheduler.

The "parallel filesystem" is a local directory (``filesystem.root``). Daemons bind to 127.0.0.1 under
the name ``localhost`` so that a laptop with an odd hostname works too, or to the address of the job file's
``interface:`` (issue 37 item 9: it was silently ignored here); one that this machine lacks is refused in one line.
``submit`` runs at once.
"""

from __future__ import annotations

import os
import time

from launcher.config.spec import JobSpec
from launcher.schedulers.allocation import Allocation, Node
from launcher.schedulers.base import Scheduler, granted_memory
from launcher.util.network import bind_address


class LocalScheduler(Scheduler):
    """One machine: cores and memory from ``psutil``, walltime from the job file."""

    name = "local"
    default_fanout = "local"

    def allocation(self, spec: JobSpec) -> Allocation:
        """This machine as a one-node allocation, named ``localhost``, its address 127.0.0.1 or that of
        ``interface:`` (:func:`launcher.util.network.bind_address`).

        Cores: the CPUs this process may use (``sched_getaffinity``); memory: the smaller of ``psutil``'s total RAM
        and this process's cgroup limit (bytes, :func:`launcher.schedulers.base.granted_memory`).

        Raises:
            UserError: ``interface:`` names an interface without an IPv4 address here.
        """
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        address = bind_address(spec.interface) if spec.interface else "127.0.0.1"
        return Allocation(scheduler=self.name, job_id=None, nodes=(Node("localhost", address),),
                          cores_per_node=cores, memory_per_node=granted_memory(),
                          walltime=float(spec.walltime), start_time=time.time(), fanout=self.default_fanout)
