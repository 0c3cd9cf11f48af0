"""Slurm: ``sbatch`` to submit, ``squeue``/``scontrol`` to poll, ``scancel`` to cancel; inside a job the
allocation comes from ``SLURM_JOB_NODELIST`` (expanded by ``scontrol show hostnames``) and
``scontrol show job``. Daemons start through one ``srun --overlap`` step (:mod:`launcher.fanout.srun`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from launcher.errors import UserError
from launcher.schedulers.base import (
    Allocation,
    BatchScheduler,
    JobState,
    Node,
    granted_memory,
    node_address,
    run_command,
    teardown_lead,
)
from launcher.spec import JobSpec
from launcher.units import MiB, format_walltime, parse_walltime

#: Slurm job states (squeue %T / scontrol JobState) → ours.
STATES = {
    "PENDING": JobState.PENDING, "CONFIGURING": JobState.PENDING, "REQUEUED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING, "REQUEUE_FED": JobState.PENDING, "RESV_DEL_HOLD": JobState.PENDING,
    "SUSPENDED": JobState.PENDING, "RUNNING": JobState.RUNNING, "COMPLETING": JobState.RUNNING,
    "SIGNALING": JobState.RUNNING, "STAGE_OUT": JobState.RUNNING, "RESIZING": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED, "FAILED": JobState.FAILED, "NODE_FAIL": JobState.FAILED,
    "BOOT_FAIL": JobState.FAILED, "OUT_OF_MEMORY": JobState.FAILED, "SPECIAL_EXIT": JobState.FAILED,
    "CANCELLED": JobState.CANCELLED, "PREEMPTED": JobState.CANCELLED, "REVOKED": JobState.CANCELLED,
    "TIMEOUT": JobState.TIMEOUT, "DEADLINE": JobState.TIMEOUT,
}


def parse_scontrol_job(text: str) -> dict[str, str]:
    """``scontrol show job -o ID`` output (``Key=Value`` pairs) as a dict."""
    fields: dict[str, str] = {}
    for match in re.finditer(r"(\w[\w:/]*)=(\S*)", text):
        fields.setdefault(match.group(1), match.group(2))
    return fields


def parse_time_limit(value: str) -> float | None:
    """Slurm's ``TimeLimit`` (``30:00``, ``1-00:00:00``, ``UNLIMITED``) in seconds, or ``None``."""
    if value in ("UNLIMITED", "INFINITE", "NONE", "Partition_Limit", ""):
        return None
    # TimeLimit is always [D-]HH:MM:SS or MM:SS here (never bare minutes).
    if re.fullmatch(r"\d+:\d{2}", value):
        minutes, seconds = value.split(":")
        return float(int(minutes) * 60 + int(seconds))
    return float(parse_walltime(value))


def first_count(value: str) -> int | None:
    """The first node's count of ``SLURM_JOB_CPUS_PER_NODE`` (``16(x4)``, ``16,8(x2)``, ``4``), or ``None``."""
    match = re.match(r"\s*(\d+)", value or "")
    return int(match.group(1)) if match else None


def granted(env: Mapping[str, str]) -> tuple[int, int]:
    """(cores, memory bytes) Slurm granted on this node, from the job's environment.

    Cores: ``SLURM_CPUS_ON_NODE``, else the first count of ``SLURM_JOB_CPUS_PER_NODE``, else the CPUs this process
    may use. Memory: the smallest of ``SLURM_MEM_PER_NODE`` (MiB; 0 = all), ``SLURM_MEM_PER_CPU`` (MiB) × cores,
    the node's RAM and this process's cgroup limit (:func:`launcher.schedulers.base.granted_memory`).
    """
    cores = first_count(env.get("SLURM_CPUS_ON_NODE", "")) or first_count(env.get("SLURM_JOB_CPUS_PER_NODE", "")) \
        or len(os.sched_getaffinity(0)) or 1
    per_node = first_count(env.get("SLURM_MEM_PER_NODE", ""))
    per_cpu = first_count(env.get("SLURM_MEM_PER_CPU", ""))
    return cores, granted_memory(per_node and per_node * MiB, per_cpu and per_cpu * MiB * cores)


class SlurmScheduler(BatchScheduler):
    """Slurm backend (tested on a real multi-node Slurm 22.05 cluster)."""

    name = "slurm"
    default_fanout = "srun"
    script_template = "slurm.sbatch.j2"

    # -- submission -------------------------------------------------------------------------
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """``#SBATCH`` options: job name, nodes, one task per node, time, output files, the walltime
        warning (``--signal=B:USR1@lead``, lead = :func:`teardown_lead`: to the batch shell, which forwards it),
        partition, account, qos, whole nodes (``batch.exclusive``: ``--exclusive``, all cores, and ``--mem=0``, all
        memory, unless ``batch.memory_per_node``), cores (``--cpus-per-task``) and memory per node (``--mem`` in
        MiB)."""
        b = spec.batch
        lead = teardown_lead(spec)
        lines = [f"--job-name=hh-{spec.name}", f"--nodes={spec.nodes}", "--ntasks-per-node=1",
                 f"--time={format_walltime(spec.walltime)}", f"--output={run_dir}/batch-%j.out",
                 f"--error={run_dir}/batch-%j.out", f"--signal=B:USR1@{lead}", f"--chdir={run_dir}"]
        if b.partition:
            lines.append(f"--partition={b.partition}")
        if b.account:
            lines.append(f"--account={b.account}")
        if b.qos:
            lines.append(f"--qos={b.qos}")
        if b.exclusive:
            lines.append("--exclusive")
        if b.cores_per_node:
            lines.append(f"--cpus-per-task={b.cores_per_node}")
        if b.memory_per_node:
            lines.append(f"--mem={b.memory_per_node // MiB}M")
        elif b.exclusive:
            lines.append("--mem=0")  # all the memory of each node
        return lines

    def check(self, spec: JobSpec) -> None:
        """Slurm queues a job that asks for more nodes than its partition has (reason ``PartitionNodeLimit``,
        pending forever, unless ``EnforcePartLimits``): refuse it here, from ``sinfo``'s node counts.

        Raises:
            UserError: more nodes than the partition has.
        """
        proc = run_command(["sinfo", "-h", "-o", "%P %D"], check=False)
        counts: dict[str, int] = {}
        default = None
        for line in proc.stdout.splitlines():
            name, _, count = line.partition(" ")
            if name.endswith("*"):
                name = default = name[:-1]
            if count.strip().isdigit():
                counts[name] = counts.get(name, 0) + int(count)
        partition = spec.batch.partition or default
        if partition in counts and spec.nodes > counts[partition]:
            raise UserError(f"partition {partition} has {counts[partition]} nodes; the job asks for {spec.nodes}",
                            field="nodes", fix=f"ask for at most {counts[partition]} nodes or another partition")

    def submit_argv(self, script: Path) -> list[str]:
        """``sbatch --parsable SCRIPT``."""
        return ["sbatch", "--parsable", str(script)]

    def parse_job_id(self, stdout: str) -> str:
        """``--parsable`` prints ``JOBID[;CLUSTER]``."""
        line = stdout.strip().splitlines()[-1] if stdout.strip() else ""
        job_id = line.split(";")[0]
        if not job_id.isdigit():
            raise UserError(f"sbatch printed no job id: {stdout.strip()!r}")
        return job_id

    def state(self, job_id: str) -> JobState:
        """From ``squeue``, else ``scontrol show job`` (jobs leave squeue after MinJobAge)."""
        proc = run_command(["squeue", "-h", "-j", job_id, "-o", "%T"], check=False)
        text = proc.stdout.strip()
        if proc.returncode != 0 or not text:
            proc = run_command(["scontrol", "show", "job", "-o", job_id], check=False)
            text = parse_scontrol_job(proc.stdout).get("JobState", "") if proc.returncode == 0 else ""
        return STATES.get(text.split()[0] if text else "", JobState.UNKNOWN)

    def cancel_argv(self, job_id: str) -> list[str]:
        """``scancel JOBID``."""
        return ["scancel", job_id]

    # -- inside an allocation ---------------------------------------------------------------
    def allocation(self, spec: JobSpec) -> Allocation:
        """Nodes from ``SLURM_JOB_NODELIST``, cores and memory as granted (:func:`granted`), walltime and start
        from ``scontrol show job``.

        Raises:
            UserError: not inside a Slurm job, or a node name that resolves to loopback.
        """
        job_id = os.environ.get("SLURM_JOB_ID")
        nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
        if not job_id or not nodelist:
            raise UserError("not inside a Slurm allocation (no SLURM_JOB_ID / SLURM_JOB_NODELIST)",
                            field="scheduler", fix="use `hpc-hadoop submit`, or call `run` from an sbatch script")
        names = run_command(["scontrol", "show", "hostnames", nodelist]).stdout.split()
        info = parse_scontrol_job(run_command(["scontrol", "show", "job", "-o", job_id]).stdout)
        walltime = parse_time_limit(info.get("TimeLimit", ""))
        start = time.time()
        if info.get("StartTime", "Unknown") not in ("Unknown", "None"):
            start = datetime.strptime(info["StartTime"], "%Y-%m-%dT%H:%M:%S").timestamp()
        cores, memory = granted(os.environ)
        if spec.interface:
            from launcher.agent import interface_address

            master = Node(names[0], interface_address(spec.interface))
            nodes = (master, *(Node(n, n) for n in names[1:]))
        else:
            nodes = tuple(Node(n, node_address(n)) for n in names)
        return Allocation(scheduler=self.name, job_id=job_id, nodes=nodes, cores_per_node=cores,
                          memory_per_node=memory, walltime=walltime, start_time=start, fanout=self.default_fanout)
