"""Validate and plan, once, before anything is made or queued: :func:`prepare` (used by ``submit``, ``run``,
``start``, ``render``, ``doctor JOB`` and the benchmark harness; :mod:`launcher.lifecycle.runner` re-exports it).

A module of its own so that the checks (``render``, ``doctor``, ``submit`` on a batch system) do not import the
cluster's life cycle (:class:`launcher.lifecycle.runner.ClusterRun` and its parts).
"""

from __future__ import annotations

from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.filesystems import check_shared_root, decide
from launcher.filesystems.pathlength import check_path_lengths
from launcher.plan.cluster_plan import ClusterPlan, make_plan, naming_job_file
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.schedulers.allocation import Allocation
from launcher.steps.jobs import ResolvedStep, resolve_steps


def prepare(spec: JobSpec, allocation: Allocation, *, overwrite: bool = False, job_file: str = "job file",
            runtime: HadoopRuntime | None = None, run_dir: Path | None = None,
            probe: bool = True) -> tuple[ClusterPlan, list[ResolvedStep]]:
    """Validate everything that can be validated before anything starts, and make the plan: the Hadoop runtime
    (:func:`launcher.runtime.hadoop.discover` runs ``java -version``), the filesystem decision
    (:func:`launcher.filesystems.decide`; with ``probe`` it tries ``flock`` in the root), the plan (which checks
    that its port block binds) and the resolved steps. Writes nothing but ``flock``'s temporary file.

    Raises:
        UserError: missing Java/Hadoop, bad root (one the nodes do not share:
        :func:`launcher.filesystems.check_shared_root`;
            one too deep for the paths a run makes: :func:`launcher.filesystems.pathlength.check_path_lengths`),
            existing outputs, missing jars or inputs, memory too small.
    """
    runtime = runtime or discover(spec.hadoop.home, spec.hadoop.java_home)
    with naming_job_file(job_file):
        check_shared_root(spec, allocation)
        filesystem = decide(spec.filesystem, check_flock=probe and not allocation.preview)
    plan = make_plan(spec, allocation, runtime, filesystem=filesystem, cluster_id=run_dir.name if run_dir else None,
                     run_dir=run_dir, job_file=job_file)
    with naming_job_file(job_file):
        check_path_lengths(plan)
    steps = resolve_steps(spec, plan, overwrite=overwrite, job_file=job_file, check_inputs=not spec.setup)
    return plan, steps
