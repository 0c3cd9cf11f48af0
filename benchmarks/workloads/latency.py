"""One-map jobs (Hadoop's SleepJob): the job latency and the job throughput of one live cluster.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.history import (
    LATENCY_PHASES,
    am_launched_ms,
    find_jhist,
    latency_breakdown,
    start_events,
)
from benchmarks.workloads.base import (
    Context,
    Workload,
)
from launcher.lifecycle.runner import step_error
from launcher.security.webauth import web_auth
from launcher.util.errors import ClusterError

#: The one-map job of the latency workload: Hadoop's SleepJob (jobclient tests jar), one map of 1 ms, no reduce.
SLEEP_JOB = "org.apache.hadoop.mapreduce.SleepJob"


class Latency(Workload):
    """``jobs`` one-map jobs one after another in the live cluster: what an interactive user waits for.

    Each job's start is split into the phases of :data:`benchmarks.history.LATENCY_PHASES` (submission → AM
    container launched, from the ResourceManager; → AM's JVM at ``MRAppMaster``; → job initialised; → first map
    attempt running, from the job's history). The Spider paper measured 6.8 s from submission to the first map.
    """

    name = "latency"

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``latency_s`` (the median of the jobs' submission → first map running), the median of each
        phase (``am_launch_s``, ``am_jvm_s``, ``am_init_s``, ``first_map_s``), ``client_s`` (median job client
        wall time, JVM start to exit), ``jobs_per_min`` (sequential: jobs ÷ their summed client time × 60),
        ``wall_s`` (all jobs), ``jobs_detail`` (each job's figures) and ``input_bytes`` 0 (the jobs read no input)."""
        assert ctx.session is not None
        plan = ctx.session.plan
        history = Path(plan.run_dir, "history")
        details: list[dict[str, Any]] = []
        for number in range(1, int(ctx.params["jobs"]) + 1):
            job = self.hadoop(ctx, f"latency-{number}", ["-m", "1", "-r", "0", "-mt", "1", "-rt", "1"],
                              main_class=SLEEP_JOB, extra_classpath=(plan.runtime.tests_jar,))
            jhist = find_jhist(history, job["job_id"]) if job["job_id"] else None
            events = start_events(jhist) if jhist else {}
            launched = am_launched_ms(plan.rm_web, job["application_id"], plan.user, web_auth(plan))
            if launched is not None:
                events["am_launched"] = launched
            details.append({"job_id": job["job_id"], "client_s": job["wall_s"], **latency_breakdown(events)})
        figures: dict[str, Any] = {"jobs": len(details), "jobs_detail": details, "input_bytes": 0,
                                   "wall_s": sum(d["client_s"] for d in details)}
        for key in ("latency_s", "client_s", *(phase for phase, _ in LATENCY_PHASES)):
            values = [d[key] for d in details if d.get(key) is not None]
            figures[key] = statistics.median(values) if values else None
        figures["jobs_per_min"] = 60.0 * len(details) / figures["wall_s"] if figures["wall_s"] > 0 else None
        return figures


class Throughput(Workload):
    """One-map jobs through one live cluster: ``jobs`` of them one after another, then ``jobs`` more with
    ``concurrency`` submitted at a time (each batch's clients start together; the next batch when all have
    ended). What a user running many small jobs gets; issue 12's goal is ≥ 20 / ≥ 40 jobs per minute on the local
    backend. The jobs are :data:`SLEEP_JOB`'s (one 1 ms map, no reduce), as in :class:`Latency`.

    ``cpu_s_per_job`` is the machine's CPU time (user + system, all processes: :func:`psutil.cpu_times`) spent
    per job while they ran, in seconds: on a test cluster whose nodes share one machine it says how far the cores
    are the limit (2 cores give at most 120 CPU-seconds a minute).
    """

    name = "throughput"

    def _batch(self, ctx: Context, names: list[str]) -> list[float]:
        """Run one batch of one-map jobs at once; returns each job's client wall time (s).

        Raises:
            ClusterError: a job failed (names its log).
        """
        assert ctx.session is not None
        plan = ctx.session.plan
        steps = [ctx.session.java_step(name, ["-m", "1", "-r", "0", "-mt", "1", "-rt", "1"], main_class=SLEEP_JOB,
                                       extra_classpath=(plan.runtime.tests_jar,)) for name in names]
        results = ctx.session.run_steps_at_once(steps, label=f"{len(steps)} one-map jobs at once")
        for step, result in zip(steps, results, strict=True):
            if result.returncode != 0:
                raise ClusterError(step_error(step, result))
        return [result.wall_s or 0.0 for result in results]

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``jobs_per_min_sequential`` and ``jobs_per_min_concurrent`` (jobs ÷ elapsed wall time × 60),
        ``wall_s_sequential`` / ``wall_s_concurrent`` (s), ``client_s_sequential`` / ``client_s_concurrent``
        (median job client wall time, s), ``cpu_s_per_job_sequential`` / ``cpu_s_per_job_concurrent`` (s),
        ``jobs``, ``concurrency``, ``wall_s`` (both parts) and ``jobs_per_min`` (the concurrent figure)."""
        jobs, concurrency = int(ctx.params["jobs"]), max(1, int(ctx.params["concurrency"]))
        figures: dict[str, Any] = {"jobs": jobs, "concurrency": concurrency, "input_bytes": 0}
        for mode, width in (("sequential", 1), ("concurrent", concurrency)):
            clients: list[float] = []
            cpu_before, began = _cpu_s(), time.monotonic()
            for first in range(0, jobs, width):
                names = [f"{mode}-{n + 1}" for n in range(first, min(jobs, first + width))]
                clients += self._batch(ctx, names)
            wall = time.monotonic() - began
            figures.update({f"wall_s_{mode}": wall, f"jobs_per_min_{mode}": 60.0 * jobs / wall,
                            f"client_s_{mode}": statistics.median(clients),
                            f"cpu_s_per_job_{mode}": (_cpu_s() - cpu_before) / jobs})
        figures["wall_s"] = figures["wall_s_sequential"] + figures["wall_s_concurrent"]
        figures["jobs_per_min"] = figures["jobs_per_min_concurrent"]
        return figures


def _cpu_s() -> float:
    """CPU seconds (user + system + nice) the whole machine has spent since boot (:func:`psutil.cpu_times`)."""
    times = psutil.cpu_times()
    return float(times.user + times.system + times.nice)


