"""Fan-out: run our per-node agent on every node of the allocation.

A launcher (chosen by name: ``local``, ``srun``, ``pbsdsh``, ``pbs_tmrsh``, ``qrsh``) only builds commands
(:meth:`Launcher.wrap`); :class:`AgentGroup` runs them, the same way for every launcher.
"""

from __future__ import annotations

from launcher.fanout.base import Launcher, StepOptions
from launcher.fanout.processes import AgentGroup
from launcher.registry import Registry

_REGISTRY = Registry("fan-out launcher", None, {
    "local": "launcher.fanout.local:LocalLauncher",
    "srun": "launcher.fanout.srun:SrunLauncher",
    "pbsdsh": "launcher.fanout.pbsdsh:PbsdshLauncher",
    "pbs_tmrsh": "launcher.fanout.pbsdsh:TmrshLauncher",
    "qrsh": "launcher.fanout.qrsh:QrshLauncher",
})


def register(name: str, target: str) -> None:
    """Register a launcher class (a :class:`Launcher`) by ``"module:Class"`` path."""
    _REGISTRY.register(name, target)


def get_launcher(name: str) -> Launcher:
    """A new launcher for ``name`` (an allocation's ``fanout``).

    Raises:
        UserError: unknown name; lists the valid ones.
    """
    launcher: Launcher = _REGISTRY.create(name)
    return launcher


__all__ = ["AgentGroup", "Launcher", "StepOptions", "get_launcher", "register"]
