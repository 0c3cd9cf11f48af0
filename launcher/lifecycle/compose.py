"""The run's life cycle, composed once: the front half (:func:`launcher.lifecycle.front.front_door`) → materialize →
run.

Every command that runs a cluster goes through here, and keeps only what is its own:

* ``submit`` on the local backend and ``run`` (in a batch script, or ``start``'s detached ``run --hold``):
  :func:`run_here`, the whole cycle with the job file's steps (and, with ``hold``, the hold);
* ``submit`` and ``start`` outside an allocation come through the same front door before they make the cluster
  directory (:func:`launcher.lifecycle.submit.make_cluster_dir`); the batch script then calls ``run``;
* ``bench``: :func:`open_cluster`, a cluster not yet up whose steps the harness makes and runs itself.

The cluster directory is written by :func:`launcher.lifecycle.runner.materialize` (which renders the configuration,
once per run), the cluster's life is :class:`launcher.lifecycle.runner.ClusterRun`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.lifecycle.front import Front, front_door
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.report import RunReport
from launcher.lifecycle.runner import ClusterRun, execute, materialize
from launcher.plan.cluster_plan import ClusterPlan
from launcher.schedulers.allocation import Allocation
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


def prepare_run(front: Front) -> Prepared:
    """Write the cluster directory of ``front`` (:func:`launcher.lifecycle.runner.materialize`: the rendered
    configuration, ``plan.json``), a run through ``run`` or ``bench``'s entrance.

    Raises:
        UserError: as :func:`~launcher.lifecycle.runner.materialize`.
    """
    notes = materialize(front.plan, submitted=front.submitted)
    return Prepared(front.allocation, front.plan, front.steps, notes)


def run_here(spec: JobSpec, job_file: Path, *, overwrite: bool, run_dir: Path | None = None, hold: bool = False,
             observer: Observer | None = None, announce: Callable[[ClusterPlan], None] | None = None,
             taken: Callable[[str], None] | None = None) -> RunReport:
    """The whole life cycle on the allocation this process is in: the front half (``run``'s entrance), the cluster
    directory written, then the cluster brought up, the steps run and the cluster torn down
    (:func:`launcher.lifecycle.runner.execute`).

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
    front = front_door("run", spec, job_file, overwrite=overwrite, run_dir=run_dir, taken=taken)
    ready = prepare_run(front)
    if announce is not None:
        announce(ready.plan)
    return execute(ready.plan, ready.steps, overwrite=overwrite, observer=observer,
                   allocation_start=front.allocation.start_time, hold=hold, notes=ready.notes)


def open_cluster(front: Front, *, observer: Observer | None = None) -> ClusterRun:
    """A new cluster for ``front`` (``bench``'s entrance), planned and written but not yet up (enter it), for a
    caller that makes and runs its own steps (the bench harness).

    Raises:
        UserError: as :func:`prepare_run`.
    """
    ready = prepare_run(front)
    return ClusterRun(ready.plan, observer=observer, notes=ready.notes)
