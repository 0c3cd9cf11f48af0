"""Fan-out: run our per-node agent on every node of the allocation.

A launcher (chosen by name: ``local``, ``srun``, ``pbsdsh``, ``pbs_tmrsh``, ``qrsh``) only builds commands
(:meth:`Launcher.wrap`); :class:`AgentGroup` runs them, the same way for every launcher. ``get_launcher(name)``
returns a new launcher (``UserError`` naming the valid ones for an unknown name). May import
:mod:`launcher.plan` and everything below it (today :mod:`launcher.util` only), nothing of the cluster, the
steps, the node agent or the life cycle.
"""

from __future__ import annotations

from launcher.fanout.base import Launcher, StepOptions
from launcher.fanout.processes import AgentGroup
from launcher.util.registry import Registry

LAUNCHERS: Registry[Launcher] = Registry("fan-out launcher")
register = LAUNCHERS.register
get_launcher = LAUNCHERS.create

__all__ = ["LAUNCHERS", "AgentGroup", "Launcher", "StepOptions", "get_launcher", "register"]
