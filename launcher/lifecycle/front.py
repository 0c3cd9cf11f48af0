"""The front half of every command, in one place (issue 38 item 1): the scheduler, the job as the batch system
settles it, the allocation (real, the batch system's stand-in, or the one this process is in), the plan and the
steps, as one typed :class:`Front`, made by :func:`front_door` and nothing else.

What differs between the commands is a row of :data:`ENTRANCES` (one :class:`Entrance` a command), not code:

=================  ======================  ===========  ========================  ==============  ==========  ====
command            settle (PBS's flavour)  batch check  allocation                taken from it   new dir     root
=================  ======================  ===========  ========================  ==============  ==========  ====
``submit``         asked                   ``check``    the stand-in (login node) no              yes         yes
``start``          asked                   ``check``    the stand-in              no              yes         yes
``start`` here     asked                   no           this process's            no (``run``)    yes         yes
``run``            no (``job.yaml`` says)  no           this process's            yes             no          yes
``render``         asked, else assumed     if installed the stand-in              no              no          yes
``render --run``   no                      no           this process's            yes             no          yes
``doctor``         asked, else assumed     if installed the stand-in              no              no          no
``bench``          no                      no           this process's (trimmed)  no              no          yes
=================  ======================  ===========  ========================  ==============  ==========  ====

"root": ``filesystem.root`` is checked first (:func:`launcher.util.safedirs.check_root`): one the user cannot write
(another user's 0755 directory, a 0555 one) is refused in one line naming it, its owner and mode, and the fix, before
anything else is asked or planned (issue 39); not for ``run --run-dir`` (the directory ``submit`` made is there, and
checked as the user's) nor ``doctor`` (its ``filesystem`` line says it, with the same words).

The local backend has no batch system: its allocation is this machine whatever the row says, its settle changes
nothing, and it has no batch check. Validation and the plan are :func:`launcher.lifecycle.validate.prepare` (which
writes nothing); what a command then writes (the cluster directory, ``job.yaml``, the batch script, the rendered
files) is the command's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.lifecycle.validate import prepare
from launcher.plan import cluster_plan
from launcher.plan.cluster_plan import ClusterPlan, new_cluster_id
from launcher.runtime.hadoop import discover
from launcher.schedulers import get_scheduler
from launcher.schedulers.allocation import Allocation
from launcher.schedulers.base import BatchScheduler, MissingCommand, Scheduler, Settled
from launcher.schedulers.inside import take_allocation
from launcher.steps.commands import ResolvedStep
from launcher.util.errors import UserError
from launcher.util.safedirs import check_root


class Seen(str, Enum):
    """Which allocation a command plans on."""

    #: The batch system's stand-in allocation (:meth:`BatchScheduler.preview_allocation`): the job is not running
    #: yet (``submit`` and ``start`` on a login node, ``render``, ``doctor``).
    STAND_IN = "stand-in"
    #: The allocation this process runs in (:meth:`Scheduler.allocation`): a batch script, an ``salloc`` shell, or
    #: this machine on the local backend.
    HERE = "here"


class Check(str, Enum):
    """When a command runs the batch system's own check of the request (:meth:`BatchScheduler.check`: more nodes
    than the partition has...)."""

    #: Always: a batch system whose commands are missing is an error (``submit``, ``start``).
    ALWAYS = "always"
    #: Where the batch system's commands are installed; skipped elsewhere (``render``, ``doctor`` on a laptop).
    INSTALLED = "installed"


class Settle(str, Enum):
    """How a command settles what the batch system decides (:meth:`Scheduler.settle`: PBS's flavor and commands)."""

    #: Not at all: ``job.yaml`` was settled at submission, or the command needs no dialect.
    NO = "no"
    #: Ask the batch system; an answer it cannot give is an error.
    ASK = "ask"
    #: Ask where its commands are installed, else assume one dialect with a note saying which and how to choose.
    PREVIEW = "preview"


@dataclass(frozen=True)
class Entrance:
    """One command's way through the front door (a row of :data:`ENTRANCES`).

    Attributes:
        settle: how the job is settled.
        check: when the batch system's own check of the request runs (:class:`Check`); ``None``: never.
        seen: the allocation planned on.
        take: apply ``run``'s rule to the allocation (:func:`launcher.schedulers.inside.take_allocation`).
        new_dir: the command makes a new cluster directory (``submit``, ``start``): the plan is made for it, and
            without ``flock``'s probe (nothing may be written before the directory is).
        root: ``filesystem.root`` is checked to be one the user can write (:func:`launcher.util.safedirs.check_root`)
            before anything else.
    """

    settle: Settle
    check: Check | None
    seen: Seen
    take: bool
    new_dir: bool
    root: bool = True


#: Every command's entrance, by name (the table of the module's docstring).
ENTRANCES: dict[str, Entrance] = {
    "submit": Entrance(Settle.ASK, Check.ALWAYS, Seen.STAND_IN, take=False, new_dir=True),
    "start": Entrance(Settle.ASK, Check.ALWAYS, Seen.STAND_IN, take=False, new_dir=True),
    "start-here": Entrance(Settle.ASK, None, Seen.HERE, take=False, new_dir=True),
    "run": Entrance(Settle.NO, None, Seen.HERE, take=True, new_dir=False),
    "render": Entrance(Settle.PREVIEW, Check.INSTALLED, Seen.STAND_IN, take=False, new_dir=False),
    "render-run": Entrance(Settle.NO, None, Seen.HERE, take=True, new_dir=False),
    "doctor": Entrance(Settle.PREVIEW, Check.INSTALLED, Seen.STAND_IN, take=False, new_dir=False, root=False),
    "bench": Entrance(Settle.NO, None, Seen.HERE, take=False, new_dir=False),
}


@dataclass(frozen=True)
class Front:
    """A command's front half: everything decided and checked, nothing written.

    Attributes:
        command: the :data:`ENTRANCES` key it came through.
        scheduler: the job's batch-system backend.
        spec: the job as it will run: settled, and with what was taken from the allocation.
        allocation: the allocation the plan is made on.
        plan: the plan (its ``run_dir`` the new cluster directory for ``submit`` and ``start``, not yet made).
        steps: the job file's resolved steps.
        taken: the line saying what was taken from the allocation (``allocation: Slurm job 123, ...``; on the
            local backend ``allocation: this machine ...``), ``None`` on a row that takes nothing.
        submitted: the plan's cluster directory is one ``submit``/``start`` made (``run --run-dir``), not a new one.
        settled: what the batch system decided (:meth:`Scheduler.settle`), already written into ``spec``; ``submit``
            and ``start`` keep it in ``submit.json``. ``None`` on a row that does not settle.
    """

    command: str
    scheduler: Scheduler
    spec: JobSpec
    allocation: Allocation
    plan: ClusterPlan
    steps: list[ResolvedStep]
    taken: str | None
    submitted: bool
    settled: Settled | None = None


def front_door(command: str, spec: JobSpec, job_file: Path | str = "job file", *, overwrite: bool = False,
               run_dir: Path | None = None, notes: list[str] | None = None, nodes: int | None = None,
               taken: Callable[[str], None] | None = None) -> Front:
    """The front half of ``command`` (a key of :data:`ENTRANCES`) for ``spec``: settle, the batch system's check,
    the allocation, what is taken from it, then validation and the plan
    (:func:`launcher.lifecycle.validate.prepare`). Runs the batch system's read-only commands (``qstat --version``,
    ``sinfo``), ``java -version`` and, on a row that plans on this process's allocation, ``flock`` in the root;
    writes nothing else.

    Args:
        job_file: named in every error.
        overwrite: existing step outputs are to be replaced (not an error).
        run_dir: the cluster directory ``submit``/``start`` made, for ``run --run-dir`` (else a new one is planned:
            a new cluster id for the rows that make a directory, the run's own otherwise).
        notes: where a previewed settle says which dialect it assumed (``render``).
        nodes: use only the first ``nodes`` nodes of the allocation (a benchmark point smaller than it); an
            allocation with fewer is refused (``sweep.nodes``: a cluster would come up on fewer nodes than its rows
            say).
        taken: called with the line saying what was taken from a batch system's allocation, as soon as it is known
            (before the checks: a batch job's log says it first, whatever is refused after it).

    Returns:
        The :class:`Front`.

    Raises:
        KeyError: an unknown ``command`` (a bug).
        UserError: bad input, found before anything is written: a ``filesystem.root`` the user cannot write
            (:func:`launcher.util.safedirs.check_root`; first, on every row but ``doctor`` and ``run --run-dir``), an
            allocation with fewer than ``nodes`` nodes, not inside an allocation of the job's batch system
            (a row that plans on this process's), a request the batch system can never satisfy, missing Java or
            Hadoop, existing outputs, missing jars or inputs, memory too small, a directory that is not the user's.
    """
    entrance = ENTRANCES[command]
    if entrance.root and not (run_dir is not None and not entrance.new_dir):
        check_root(cluster_plan.expand_root(spec.filesystem.root), file=str(job_file))
    scheduler = get_scheduler(spec.scheduler)
    spec, allocation, settled = _settled(entrance, scheduler, spec, notes)
    if nodes is not None:
        if len(allocation.nodes) < nodes:
            raise UserError(f"the allocation has {len(allocation.nodes)} node(s); the {command} asks for up to {nodes}",
                            field="sweep.nodes", fix=f"ask the batch system for {nodes} nodes (e.g. sbatch -N {nodes})"
                            " or drop the larger node counts")
        allocation = dataclasses.replace(allocation, nodes=allocation.nodes[:nodes])
    line = None
    if entrance.take:
        took = take_allocation(spec, allocation, scheduler)
        spec, line = took.spec, took.line
        if taken is not None and allocation.job_id is not None:
            taken(line)
    runtime = discover(spec.hadoop.home, spec.hadoop.java_home)
    submitted = run_dir is not None and not entrance.new_dir
    if run_dir is not None and submitted:
        run_dir = run_dir.resolve()
    elif entrance.new_dir:
        run_dir = cluster_plan.cluster_dir(spec.filesystem.root, new_cluster_id(spec.name))
    plan, steps = prepare(spec, allocation, overwrite=overwrite, job_file=str(job_file), runtime=runtime,
                          run_dir=run_dir, probe=not entrance.new_dir)
    return Front(command, scheduler, spec, allocation, plan, steps, line, submitted, settled)


def _settled(entrance: Entrance, scheduler: Scheduler, spec: JobSpec,
             notes: list[str] | None) -> tuple[JobSpec, Allocation, Settled | None]:
    """``spec`` settled as ``entrance`` says (what was settled written in), the batch system's check, the allocation
    it plans on, and the record of what was settled (``None`` when the row does not settle)."""
    settled = None
    if entrance.settle is not Settle.NO:
        settled = scheduler.settle(spec, preview=entrance.settle is Settle.PREVIEW, notes=notes)
        spec = settled.into(spec)
    if not isinstance(scheduler, BatchScheduler):
        return spec, scheduler.allocation(spec), settled
    if entrance.check is not None:
        try:
            scheduler.check(spec)
        except MissingCommand:
            if entrance.check is not Check.INSTALLED:
                raise
    if entrance.seen is Seen.STAND_IN:
        return spec, scheduler.preview_allocation(spec), settled
    return spec, scheduler.allocation(spec), settled


__all__ = ["ENTRANCES", "Check", "Entrance", "Front", "Seen", "Settle", "front_door"]
