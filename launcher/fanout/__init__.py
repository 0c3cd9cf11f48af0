"""Fan-out launchers: run our per-node agent on every node of the allocation, chosen by name."""

from __future__ import annotations

from launcher.fanout.base import Fanout
from launcher.registry import Registry

_REGISTRY = Registry("fan-out launcher", None, {
    "local": "launcher.fanout.local:LocalFanout",
    "srun": "launcher.fanout.srun:SrunFanout",
    "pbsdsh": "launcher.fanout.pbsdsh:PbsdshFanout",
    "pbs_tmrsh": "launcher.fanout.pbsdsh:TmrshFanout",
    "qrsh": "launcher.fanout.qrsh:QrshFanout",
})


def register(name: str, target: str) -> None:
    """Register a fan-out class by ``"module:Class"`` path."""
    _REGISTRY.register(name, target)


def get_fanout(name: str) -> Fanout:
    """A new fan-out launcher for ``name``.

    Raises:
        UserError: unknown name; lists the valid ones.
    """
    return _REGISTRY.create(name)


__all__ = ["Fanout", "get_fanout", "register"]
