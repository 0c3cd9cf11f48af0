"""Slurm: ``sbatch`` to submit, ``squeue``/``scontrol`` to poll, ``scancel`` to cancel; inside a job the
allocation comes from ``SLURM_JOB_NODELIST`` (expanded by ``scontrol show hostnames``) and
``scontrol show job``. Daemons start through one ``srun --overlap`` step (:mod:`launcher.fanout.srun`).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.schedulers.allocation import JobState, state_table
from launcher.schedulers.base import (
    BatchScheduler,
    BatchSystem,
    CheckQuery,
    Command,
    Granted,
    StatusQuery,
    granted_memory,
    teardown_lead,
)
from launcher.util.errors import UserError
from launcher.util.units import MiB, format_walltime, parse_walltime

#: Slurm job states (squeue %T / scontrol JobState) → ours.
STATES = state_table(
    pending="PENDING CONFIGURING REQUEUED REQUEUE_HOLD REQUEUE_FED RESV_DEL_HOLD SUSPENDED",
    running="RUNNING COMPLETING SIGNALING STAGE_OUT RESIZING",
    completed="COMPLETED", failed="FAILED NODE_FAIL BOOT_FAIL OUT_OF_MEMORY SPECIAL_EXIT",
    cancelled="CANCELLED PREEMPTED REVOKED", timeout="TIMEOUT DEADLINE")


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


def granted_limits(env: Mapping[str, str]) -> tuple[int, tuple[int | None, int | None]]:
    """(cores, memory limits in bytes) Slurm granted on this node, from the job's environment.

    Cores: ``SLURM_CPUS_ON_NODE``, else the first count of ``SLURM_JOB_CPUS_PER_NODE``, else the CPUs this process
    may use. Limits: ``SLURM_MEM_PER_NODE`` (MiB; 0 = all: ``0``) and ``SLURM_MEM_PER_CPU`` (MiB) × cores
    (``None`` when unset).
    """
    cores = first_count(env.get("SLURM_CPUS_ON_NODE", "")) or first_count(env.get("SLURM_JOB_CPUS_PER_NODE", "")) \
        or len(os.sched_getaffinity(0)) or 1
    per_node = first_count(env.get("SLURM_MEM_PER_NODE", ""))
    per_cpu = first_count(env.get("SLURM_MEM_PER_CPU", ""))
    return cores, (per_node and per_node * MiB, per_cpu and per_cpu * MiB * cores)


def granted(env: Mapping[str, str]) -> tuple[int, int]:
    """(cores, memory bytes) Slurm granted on this node, from the job's environment: :func:`granted_limits`, the
    memory being the smallest of its limits, the node's RAM and this process's cgroup limit
    (:func:`launcher.schedulers.base.granted_memory`, as :meth:`BatchScheduler.allocation` applies it)."""
    cores, limits = granted_limits(env)
    return cores, granted_memory(*limits)


def squeue_state(stdout: str) -> JobState | None:
    """The state in ``squeue -h -o %T`` output; ``None`` when squeue no longer lists the job."""
    text = stdout.strip()
    return STATES.get(text.split()[0], JobState.UNKNOWN) if text else None


def scontrol_state(stdout: str) -> JobState | None:
    """The ``JobState`` of ``scontrol show job -o`` output; ``None`` when it has none."""
    text = parse_scontrol_job(stdout).get("JobState", "")
    return STATES.get(text.split()[0], JobState.UNKNOWN) if text else None


def partition_verdict(spec: JobSpec, sinfo_output: str) -> None:
    """Refuse ``spec`` when it asks for more nodes than its partition has, from ``sinfo -h -o "%P %D"`` output
    (the default partition is marked ``*``; a partition listed on several lines adds up).

    Raises:
        UserError: more nodes than the partition has.
    """
    counts: dict[str, int] = {}
    default = None
    for line in sinfo_output.splitlines():
        name, _, count = line.partition(" ")
        if name.endswith("*"):
            name = default = name[:-1]
        if count.strip().isdigit():
            counts[name] = counts.get(name, 0) + int(count)
    partition = spec.batch.partition or default
    if partition in counts and spec.nodes > counts[partition]:
        raise UserError(f"partition {partition} has {counts[partition]} nodes; the job asks for {spec.nodes}",
                        field="nodes", fix=f"ask for at most {counts[partition]} nodes or another partition")


def _nodelist(env: Mapping[str, str]) -> str | None:
    return env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")


class SlurmScheduler(BatchScheduler):
    """Slurm backend (tested on a real multi-node Slurm 22.05 cluster)."""

    name = "slurm"
    default_fanout = "srun"
    job_environment = ("SLURM_JOB_ID",)
    system = BatchSystem(script="batch/slurm.sbatch.j2", cancel="scancel", job_variable="SLURM_JOB_ID",
                         host_variables=("SLURM_JOB_NODELIST", "SLURM_NODELIST"), inside="a Slurm allocation",
                         batch_script="an sbatch script",
                         options={"partition": "--partition={}", "account": "--account={}", "qos": "--qos={}"},
                         shown="Slurm", walltime_source="`scontrol show job` TimeLimit")

    #: ``squeue``/``scontrol`` of a job slurmctld no longer knows: ``slurm_load_jobs error: Invalid job id specified``
    #: (exit 1, recorded on the test cluster's Slurm 22.05); ``Unable to contact slurm controller (connect failure)``
    #: is no answer.
    forgotten = (r"Invalid job id specified",)

    # -- submission -------------------------------------------------------------------------
    @classmethod
    def doctor_finds(cls) -> tuple[str | None, tuple[str, str] | None]:
        """``slurm (<sbatch>)`` when ``sbatch`` is on ``PATH`` (:meth:`Scheduler.doctor_finds`)."""
        sbatch = shutil.which("sbatch")
        return (f"slurm ({sbatch})" if sbatch else None), None

    @classmethod
    def takes_whole_nodes(cls, spec: JobSpec) -> bool:
        """``batch.exclusive`` without ``batch.cores_per_node``: ``--exclusive``
        (:meth:`Scheduler.takes_whole_nodes`)."""
        return spec.batch.exclusive and not spec.batch.cores_per_node

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
        lines += self.option_directives(spec)
        if b.exclusive:
            lines.append("--exclusive")
        if b.cores_per_node:
            lines.append(f"--cpus-per-task={b.cores_per_node}")
        if b.memory_per_node:
            lines.append(f"--mem={b.memory_per_node // MiB}M")
        elif b.exclusive:
            lines.append("--mem=0")  # all the memory of each node
        return lines

    def check_query(self, spec: JobSpec) -> CheckQuery:
        """Slurm queues a job that asks for more nodes than its partition has (reason ``PartitionNodeLimit``,
        pending forever, unless ``EnforcePartLimits``): ``sinfo``'s node counts refuse it here
        (:func:`partition_verdict`)."""
        return ["sinfo", "-h", "-o", "%P %D"], lambda stdout: partition_verdict(spec, stdout)

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

    def status_queries(self, job_id: str) -> list[StatusQuery]:
        """``squeue``, then ``scontrol show job`` (jobs leave squeue after MinJobAge)."""
        return [(["squeue", "-h", "-j", job_id, "-o", "%T"], squeue_state),
                (["scontrol", "show", "job", "-o", job_id], scontrol_state)]

    # -- inside an allocation ---------------------------------------------------------------
    def allocation_commands(self, job_id: str, env: Mapping[str, str]) -> dict[str, Command]:
        """``scontrol show hostnames $SLURM_JOB_NODELIST`` and ``scontrol show job -o ID``."""
        return {"hostnames": Command(["scontrol", "show", "hostnames", _nodelist(env) or ""]),
                "job": Command(["scontrol", "show", "job", "-o", job_id])}

    def parse_allocation(self, spec: JobSpec, job_id: str, env: Mapping[str, str],
                         outputs: Mapping[str, str]) -> Granted:
        """Nodes from the expanded node list, cores and memory as granted (:func:`granted_limits`), walltime
        (``TimeLimit``) and start (``StartTime``; else now) from ``scontrol show job``."""
        info = parse_scontrol_job(outputs["job"])
        start = time.time()
        if info.get("StartTime", "Unknown") not in ("Unknown", "None"):
            start = datetime.strptime(info["StartTime"], "%Y-%m-%dT%H:%M:%S").timestamp()
        cores, limits = granted_limits(env)
        return Granted(names=outputs["hostnames"].split(), cores=cores, memory_limits=limits,
                       walltime=parse_time_limit(info.get("TimeLimit", "")), start_time=start)
