"""The run's life cycle, composed once: allocate → validate and plan → materialize → run.

Every command that runs a cluster goes through here, and keeps only what is its own:

* ``submit`` on the local backend and ``run`` (in a batch script, or ``start``'s detached ``run --hold``):
  :func:`run_here`, the whole cycle with the job file's steps (and, with ``hold``, the hold);
* ``submit`` and ``start`` outside an allocation validate and plan the same way before they make the cluster
  directory (:func:`launcher.lifecycle.submit.make_cluster_dir` calls :func:`launcher.lifecycle.runner.prepare`); the
  batch script then calls ``run``;
* ``bench``: :func:`open_cluster`, a cluster not yet up whose steps the harness makes and runs itself.

Validate and plan is :func:`launcher.lifecycle.runner.prepare`, the cluster directory is written by
:func:`launcher.lifecycle.runner.materialize` (which renders the configuration, once per run), the cluster's life
is :class:`launcher.lifecycle.runner.ClusterRun`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.report import RunReport
from launcher.lifecycle.runner import ClusterRun, execute, materialize, prepare
from launcher.plan.cluster_plan import ClusterPlan
from launcher.schedulers import get_scheduler
from launcher.schedulers.allocation import Allocation
from launcher.schedulers.inside import take_allocation
from launcher.steps.commands import ResolvedStep


@dataclass(frozen=True)
class Prepared:
    """A run planned and written, not yet started.

    Attributes:
        allocation: the nodes it runs on.
        plan: its plan (``plan.json`` written).
        steps: the job file's resolved steps.
        notes: the notes of the configuration's one rendering, for ``run.json``.
    """

    allocation: Allocation
    plan: ClusterPlan
    steps: list[ResolvedStep]
    notes: list[str]


def allocate(spec: JobSpec) -> Allocation:
    """The allocation this process runs in for ``spec.scheduler`` (the local backend: this machine).

    Raises:
        UserError: not inside an allocation of that batch system.
    """
    return get_scheduler(spec.scheduler).allocation(spec)


def prepare_run(spec: JobSpec, allocation: Allocation, *, overwrite: bool, job_file: str = "job file",
                run_dir: Path | None = None) -> Prepared:
    """Validate and plan (:func:`launcher.lifecycle.runner.prepare`), then write the cluster directory
    (:func:`launcher.lifecycle.runner.materialize`).

    Args:
        run_dir: a cluster directory made by ``submit``/``start`` (else a new one).

    Raises:
        UserError: as :func:`~launcher.lifecycle.runner.prepare` and :func:`~launcher.lifecycle.runner.materialize`.
    """
    plan, steps = prepare(spec, allocation, overwrite=overwrite, job_file=job_file,
                          run_dir=run_dir.resolve() if run_dir else None)
    notes = materialize(plan, submitted=run_dir is not None)
    return Prepared(allocation, plan, steps, notes)


def run_here(spec: JobSpec, job_file: Path, *, overwrite: bool, run_dir: Path | None = None, hold: bool = False,
             observer: Observer | None = None, announce: Callable[[ClusterPlan], None] | None = None,
             taken: Callable[[str], None] | None = None) -> RunReport:
    """The whole life cycle on the allocation this process is in: allocate, validate and plan, write the cluster
    directory, then bring the cluster up, run the steps and tear it down (:func:`launcher.lifecycle.runner.execute`).

    Args:
        run_dir: a cluster directory made by ``submit``/``start``.
        hold: keep the cluster up after the steps until ``hpc-hadoop stop``.
        observer: terminal progress.
        announce: called with the plan once the cluster directory is written, before bring-up.
        taken: called, on a batch system, with the line that says what was taken from the allocation (its nodes
            and walltime replace the job file's: :func:`launcher.schedulers.inside.take_allocation`), before
            anything is checked.

    Returns:
        The run's report (``run.json``); ``report.exit_code`` is what the CLI exits with.

    Raises:
        UserError: bad input, found before anything starts.
    """
    scheduler = get_scheduler(spec.scheduler)
    allocation = scheduler.allocation(spec)
    took = take_allocation(spec, allocation, scheduler)
    spec = took.spec
    if taken is not None and allocation.job_id is not None:
        taken(took.line)
    ready = prepare_run(spec, allocation, overwrite=overwrite, job_file=str(job_file), run_dir=run_dir)
    if announce is not None:
        announce(ready.plan)
    return execute(ready.plan, ready.steps, overwrite=overwrite, observer=observer,
                   allocation_start=allocation.start_time, hold=hold, notes=ready.notes)


def open_cluster(spec: JobSpec, allocation: Allocation, *, observer: Observer | None = None) -> ClusterRun:
    """A new cluster for ``spec`` on ``allocation``, planned and written but not yet up (enter it), for a caller that
    makes and runs its own steps (the bench harness); existing outputs of its steps are replaced.

    Raises:
        UserError: as :func:`prepare_run`.
    """
    ready = prepare_run(spec, allocation, overwrite=True)
    return ClusterRun(ready.plan, observer=observer, notes=ready.notes)
