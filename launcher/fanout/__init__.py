"""Fan-out launchers: run our per-node agent on every node of the allocation, chosen by name."""

from __future__ import annotations

from launcher.errors import UserError
from launcher.fanout.base import Fanout

_REGISTRY: dict[str, str] = {
    "local": "launcher.fanout.local:LocalFanout",
    "srun": "launcher.fanout.srun:SrunFanout",
    "pbsdsh": "launcher.fanout.pbsdsh:PbsdshFanout",
    "pbs_tmrsh": "launcher.fanout.pbsdsh:TmrshFanout",
    "qrsh": "launcher.fanout.qrsh:QrshFanout",
}


def register(name: str, target: str) -> None:
    """Register a fan-out class by ``"module:Class"`` path."""
    _REGISTRY[name] = target


def get_fanout(name: str) -> Fanout:
    """A new fan-out launcher for ``name``.

    Raises:
        UserError: unknown name; lists the valid ones.
    """
    target = _REGISTRY.get(name)
    if target is None:
        raise UserError(f"unknown fan-out launcher {name!r}", fix=f"use one of: {', '.join(sorted(_REGISTRY))}")
    module_name, _, class_name = target.partition(":")
    module = __import__(module_name, fromlist=[class_name])
    return getattr(module, class_name)()


__all__ = ["Fanout", "get_fanout", "register"]
