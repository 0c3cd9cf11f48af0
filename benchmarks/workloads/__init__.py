"""The benchmark workloads: one class each behind :class:`benchmarks.workloads.base.Workload`, chosen by name
from :data:`WORKLOADS` (imported on first use). Each workload's module imports :mod:`benchmarks.workloads.base`
and nothing of its siblings (an import contract in pyproject.toml); a new workload is its module and its line
here (docs/architecture.md).
"""

from __future__ import annotations

from benchmarks.workloads.base import Context as Context
from benchmarks.workloads.base import Workload as Workload
from launcher.util.registry import Registry

WORKLOADS: Registry[Workload] = Registry("workload", field="workload", sort_names=False, entries={
    "dd": "benchmarks.workloads.dd:Dd",
    "dfsio": "benchmarks.workloads.dfsio:DfsIO",
    "terasort": "benchmarks.workloads.terasort:TeraSort",
    "spark-terasort": "benchmarks.workloads.terasort:SparkTeraSort",
    "kmeans": "benchmarks.workloads.kmeans:KMeans",
    "spark-kmeans": "benchmarks.workloads.kmeans:SparkKMeans",
    "latency": "benchmarks.workloads.latency:Latency",
    "throughput": "benchmarks.workloads.latency:Throughput",
})


def get_workload(name: str) -> Workload:
    """A workload by name.

    Raises:
        UserError: unknown name; lists the known ones.
    """
    return WORKLOADS.create(name)
