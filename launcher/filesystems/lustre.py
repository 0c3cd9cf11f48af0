"""Lustre: ``lfs setstripe -c COUNT -S SIZE [-i INDEX] DIR``, read back with ``lfs getstripe -d DIR``; what a new
file really gets with ``lfs getstripe FILE`` (Lustre gives a file at most one stripe per OST)."""

from __future__ import annotations

import re
from pathlib import Path

from launcher.config.spec import StripeSpec
from launcher.filesystems.base import Filesystem, Layout, positive_size
from launcher.util.errors import UserError

#: Lustre stripe sizes are multiples of 64 KiB.
STRIPE_UNIT = 64 << 10

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _field(output: str, key: str) -> int | None:
    match = re.search(rf"\b(?:lmm_)?{key}:\s*(-?\d+)([kKmMgG]?)\b", output)
    return int(match.group(1)) * _SUFFIX[match.group(2).lower()] if match else None


class LustreFilesystem(Filesystem):
    """Lustre, through its ``lfs`` command (``lfs`` on ``PATH``)."""

    name = "lustre"
    striping = True
    unusable_fix = "install the Lustre client tools (lfs) on every node, or set filesystem.type"

    def __init__(self, lfs: str = "lfs") -> None:
        self.lfs = lfs

    def check(self, setting: StripeSpec, field: str) -> None:
        """Stripe size a positive multiple of 64 KiB; count ≠ 0 (``-1`` = all OSTs)."""
        positive_size(setting, field, STRIPE_UNIT)
        if setting.count == 0:
            raise UserError("stripe count 0 means 'filesystem default' to lfs", field=f"{field}.count",
                            fix="leave count out for the default, or use -1 for all OSTs")

    def stripe_commands(self, directory: Path, setting: StripeSpec) -> list[list[str]]:
        """``lfs setstripe [-c COUNT] [-S SIZE] [-i INDEX] DIR`` (only the options that are set)."""
        argv = [self.lfs, "setstripe"]
        if setting.count is not None:
            argv += ["-c", str(setting.count)]
        if setting.size is not None:
            argv += ["-S", str(setting.size)]
        if setting.index is not None:
            argv += ["-i", str(setting.index)]
        return [[*argv, str(directory)]]

    def layout_command(self, directory: Path) -> list[str]:
        """``lfs getstripe -d DIR``: the directory's default layout, which new files inherit."""
        return [self.lfs, "getstripe", "-d", str(directory)]

    def file_layout_command(self, path: Path) -> list[str]:
        """``lfs getstripe FILE``: the layout the file really has (``lmm_stripe_count``...)."""
        return [self.lfs, "getstripe", str(path)]

    def parse_layout(self, output: str) -> Layout:
        """Parse ``lfs getstripe`` output: the directory-default line (``stripe_count:  4 stripe_size:
        1048576 pattern: raid0 stripe_offset: -1``) or the ``lmm_*`` lines of a file (the first component's
        for a composite layout)."""
        return Layout(count=_field(output, "stripe_count"), size=_field(output, "stripe_size"),
                      index=_field(output, "stripe_offset"))
