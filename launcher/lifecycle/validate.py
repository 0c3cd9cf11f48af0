"""Validate and plan, once, before anything is made or queued: :func:`prepare` (used by ``submit``, ``run``,
``start``, ``render``, ``doctor JOB`` and the benchmark harness; :mod:`launcher.lifecycle.runner` re-exports it).

A module of its own so that the checks (``render``, ``doctor``, ``submit`` on a batch system) do not import the
cluster's life cycle (:class:`launcher.lifecycle.runner.ClusterRun` and its parts).
"""

from __future__ import annotations

import socket
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.filesystems import check_shared_root, decide
from launcher.filesystems.pathlength import check_path_lengths
from launcher.plan.cluster_plan import (
    SHARED_LOCAL_DIRS,
    ClusterPlan,
    NodePlan,
    check_cluster_directory,
    make_plan,
    naming_job_file,
)
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.schedulers.allocation import Allocation
from launcher.steps.commands import ResolvedStep, resolve_steps
from launcher.util.safedirs import check_private_tree


def prepare(spec: JobSpec, allocation: Allocation, *, overwrite: bool = False, job_file: str = "job file",
            runtime: HadoopRuntime | None = None, run_dir: Path | None = None,
            probe: bool = True) -> tuple[ClusterPlan, list[ResolvedStep]]:
    """Validate everything that can be validated before anything starts, and make the plan: the Hadoop runtime
    (:func:`launcher.runtime.hadoop.discover` runs ``java -version``), the filesystem decision
    (:func:`launcher.filesystems.decide`; with ``probe`` it tries ``flock`` in the root), the plan (which checks
    that its port block binds) and the resolved steps. Writes nothing but ``flock``'s temporary file.

    Raises:
        UserError: missing Java/Hadoop, a directory the run would use that is not the user's
            (:func:`check_own_dirs`), bad root (one the nodes do not share:
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
    check_own_dirs(plan, allocation, job_file)
    with naming_job_file(job_file):
        check_path_lengths(plan)
    steps = resolve_steps(spec, plan, overwrite=overwrite, job_file=job_file, check_inputs=not spec.setup)
    return plan, steps


def nodes_here(plan: ClusterPlan, allocation: Allocation) -> list[NodePlan]:
    """The nodes of ``plan`` that are this host: the local backend's one node; on a batch system, the node of the
    allocation this process runs on (``run`` in the batch script runs on the first one), found by host name; none for
    a preview allocation (``submit`` on a login node, whose disks are not the nodes')."""
    if allocation.scheduler == "local":
        return list(plan.nodes)
    if allocation.preview:
        return []
    names = {socket.gethostname(), socket.gethostname().split(".")[0]}
    return [node for node in plan.nodes if node.name in names or node.name.split(".")[0] in names]


def check_own_dirs(plan: ClusterPlan, allocation: Allocation, job_file: str = "job file") -> None:
    """Refuse, before anything is made or started, a directory already there that the run would make or use below a
    root other users write to, unless it is the user's, not a symbolic link and not writable by others
    (:mod:`launcher.util.safedirs`): every level of the cluster directory below ``filesystem.root`` that exists
    (``<root>/<user>``, ``<root>/<user>/hpc-hadoop``, a submitted cluster directory), and, on the nodes that are this
    host (:func:`nodes_here`), every level of a NodeManager local dir below ``filesystem.local_dirs``
    (``<local_dirs>/hpc-hadoop-<user>``...). Each node's agent checks its own again as it makes them
    (:meth:`launcher.node.agent.Agent.make_nm_local_dir`): another node's disks are seen only there.

    Raises:
        UserError: the first level refused, naming it, its owner and mode, and the fix (with ``job_file``).
    """
    check_cluster_directory(plan.run_dir, field="filesystem.root", file=job_file, missing_ok=True)
    local_dirs = plan.spec.filesystem.local_dirs
    if not local_dirs or local_dirs == SHARED_LOCAL_DIRS:
        return
    for node in nodes_here(plan, allocation):
        if "nodemanager" in node.roles:
            check_private_tree(plan.nm_local_root(node), node.nm_local_dir, field="filesystem.local_dirs",
                               file=job_file, missing_ok=True)
