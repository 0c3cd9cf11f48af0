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
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.lifecycle.front import Front, front_door
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.report import RunReport
from launcher.lifecycle.runner import ClusterRun, execute, materialize
from launcher.plan.cluster_plan import ClusterPlan


def prepare_run(front: Front) -> list[str]:
    """Write the cluster directory of ``front`` (:func:`launcher.lifecycle.runner.materialize`: the rendered
    configuration, ``plan.json``), a run through ``run`` or ``bench``'s entrance; the plan, the allocation and the
    steps stay ``front``'s.

    Returns:
        The notes of the configuration's one rendering, for ``run.json``.

    Raises:
        UserError: as :func:`~launcher.lifecycle.runner.materialize`.
    """
    return materialize(front.plan, submitted=front.submitted)


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
    notes = prepare_run(front)
    if announce is not None:
        announce(front.plan)
    return execute(front.plan, front.steps, overwrite=overwrite, observer=observer,
                   allocation_start=front.allocation.start_time, hold=hold, notes=notes)


def open_cluster(front: Front, *, observer: Observer | None = None) -> ClusterRun:
    """A new cluster for ``front`` (``bench``'s entrance), planned and written but not yet up (enter it), for a
    caller that makes and runs its own steps (the bench harness).

    Raises:
        UserError: as :func:`prepare_run`.
    """
    return ClusterRun(front.plan, observer=observer, notes=prepare_run(front))
