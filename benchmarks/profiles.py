"""HiBench's scale profiles for each workload: the only place sizes are defined.

Sizes are bytes unless the name says otherwise. ``tiny`` is what CI runs on a 2-core machine; ``small``
to ``huge`` follow HiBench's ``conf/workloads/*/*.conf`` orders of magnitude (TeraSort tiny 32 000 rows,
small 3.2 M rows (320 MB), large 32 M rows (3.2 GB), huge 320 M rows (32 GB); KMeans samples and
dimensions as HiBench's ``hibench.kmeans.*`` settings).
"""

from __future__ import annotations

from typing import Any

MiB = 1 << 20

#: profile → workload → parameters.
#:
#: * dd / dfsio: ``files`` (number of files = parallel writers), ``file_size`` (bytes each);
#: * terasort: ``rows`` (100-byte TeraGen rows), ``maps`` (TeraGen maps), ``reduces``;
#: * kmeans: ``samples`` (points), ``dimensions``, ``k`` (clusters), ``iterations``, ``std`` (cluster spread),
#:   ``files`` (input files = maps);
#: * spark-kmeans: the kmeans parameters (the same points, clustered by MLlib on Spark);
#: * spark-terasort: the terasort parameters (the same TeraGen rows, sorted by Spark into ``reduces`` partitions);
#: * latency: ``jobs`` (one-map jobs run one after another; the figure is their median);
#: * throughput: ``jobs`` (one-map jobs run one after another, then as many again), ``concurrency`` (how many of
#:   the second lot are submitted at a time).
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "tiny": {
        "dd": {"files": 2, "file_size": 8 * MiB},
        "dfsio": {"files": 2, "file_size": 8 * MiB},
        "terasort": {"rows": 32_000, "maps": 2, "reduces": 2},
        "kmeans": {"samples": 3_000, "dimensions": 20, "k": 10, "iterations": 5, "std": 1.0, "files": 2},
        "latency": {"jobs": 3},
        "throughput": {"jobs": 4, "concurrency": 2},
    },
    "small": {
        "dd": {"files": 8, "file_size": 128 * MiB},
        "dfsio": {"files": 8, "file_size": 128 * MiB},
        "terasort": {"rows": 3_200_000, "maps": 8, "reduces": 4},
        "kmeans": {"samples": 300_000, "dimensions": 20, "k": 10, "iterations": 5, "std": 1.0, "files": 4},
        "latency": {"jobs": 10},
        "throughput": {"jobs": 12, "concurrency": 4},
    },
    "large": {
        "dd": {"files": 32, "file_size": 1024 * MiB},
        "dfsio": {"files": 32, "file_size": 1024 * MiB},
        "terasort": {"rows": 32_000_000, "maps": 32, "reduces": 16},
        "kmeans": {"samples": 3_000_000, "dimensions": 20, "k": 10, "iterations": 5, "std": 1.0, "files": 16},
        "latency": {"jobs": 10},
        "throughput": {"jobs": 20, "concurrency": 4},
    },
    "huge": {
        "dd": {"files": 128, "file_size": 4096 * MiB},
        "dfsio": {"files": 128, "file_size": 4096 * MiB},
        "terasort": {"rows": 320_000_000, "maps": 128, "reduces": 64},
        "kmeans": {"samples": 100_000_000, "dimensions": 20, "k": 10, "iterations": 5, "std": 1.0, "files": 64},
        "latency": {"jobs": 10},
        "throughput": {"jobs": 40, "concurrency": 8},
    },
}

#: spark-kmeans clusters the kmeans workload's points, spark-terasort sorts the terasort workload's rows (``reduces``
#: = its partitions): the same parameters at every scale.
for _scale in PROFILES.values():
    _scale["spark-kmeans"] = dict(_scale["kmeans"])
    _scale["spark-terasort"] = dict(_scale["terasort"])


def profile(name: str, workload: str) -> dict[str, Any]:
    """The parameters of ``workload`` at scale ``name`` (a copy).

    Raises:
        KeyError: unknown profile or workload; the message lists the known ones.
    """
    if name not in PROFILES:
        raise KeyError(f"unknown profile {name!r}: use one of {', '.join(PROFILES)}")
    if workload not in PROFILES[name]:
        raise KeyError(f"unknown workload {workload!r}: use one of {', '.join(PROFILES[name])}")
    return dict(PROFILES[name][workload])
