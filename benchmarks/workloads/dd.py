"""The raw-filesystem baseline as a workload: parallel ``dd`` writes then reads of the same files TestDFSIO
would use (:func:`benchmarks.workloads.base.dd_pair`).
"""

from __future__ import annotations

from typing import Any

from benchmarks.workloads.base import (
    Context,
    Workload,
    dd_pair,
)


class Dd(Workload):
    """The raw baseline: N parallel ``dd`` writers then readers on the filesystem root (no Hadoop)."""

    name = "dd"
    needs_cluster = False

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``dd_write_mb_s``, ``dd_read_mb_s`` (aggregate MiB/s), ``dd_write_proc_mb_s``,
        ``dd_read_proc_mb_s`` (per process, MiB/s), their times, ``wall_s`` (both)."""
        figures = dd_pair(ctx, ctx.work_dir / "dd")
        figures["wall_s"] = figures["dd_write_s"] + figures["dd_read_s"]
        figures["write_mb_s"], figures["read_mb_s"] = figures["dd_write_mb_s"], figures["dd_read_mb_s"]
        return figures


