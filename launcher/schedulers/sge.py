"""Grid Engine (SGE, Son of Grid Engine, Univa/Altair GE): ``qsub`` to submit, ``qstat`` to poll
(``qacct -j`` once a job has left ``qstat``), ``qdel`` to cancel.

Inside a job the hosts come from ``PE_HOSTFILE`` (``host slots queue processors`` per line: the first
column) and the walltime from ``qstat -j $JOB_ID`` (``h_rt``). The script asks for ``-l h_rt=WALLTIME``
and a soft limit ``-l s_rt`` ``batch.signal_lead`` seconds earlier, at which Grid Engine sends SIGUSR1:
the walltime warning, forwarded to the launcher. ``-notify`` makes Grid Engine send SIGUSR1/SIGUSR2
before it suspends or kills the job; both are forwarded. Daemons start through ``qrsh -inherit HOST``
(:mod:`launcher.fanout.qrsh`), which needs a parallel environment with ``control_slaves TRUE``.
"""

from __future__ import annotations

import os
import re
import time
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
from launcher.units import MiB, format_walltime

#: Grid Engine state letters (``qstat`` column ``state``) → ours; ``E`` (error) anywhere means FAILED.
STATES = {
    "qw": JobState.PENDING, "hqw": JobState.PENDING, "hRwq": JobState.PENDING, "Rq": JobState.PENDING,
    "r": JobState.RUNNING, "t": JobState.RUNNING, "Rr": JobState.RUNNING, "Rt": JobState.RUNNING,
    "s": JobState.PENDING, "S": JobState.PENDING, "T": JobState.PENDING, "ts": JobState.PENDING,
    "dr": JobState.CANCELLED, "dt": JobState.CANCELLED, "dqw": JobState.CANCELLED,
}


def parse_pe_hostfile(text: str) -> list[tuple[str, int]]:
    """``PE_HOSTFILE`` lines (``host slots queue processor-range``): ``(host, slots)`` in order, hosts unique."""
    hosts: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        slots = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 1
        hosts[parts[0]] = hosts.get(parts[0], 0) + slots
    return list(hosts.items())


def parse_qstat(text: str, job_id: str) -> str | None:
    """The state letters of ``job_id`` in plain ``qstat`` output (first task's line), or ``None``."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] == job_id:
            return parts[4]
    return None


def state_of(letters: str) -> JobState:
    """Our state for Grid Engine's state letters."""
    if "E" in letters:
        return JobState.FAILED
    if letters.startswith("d"):
        return JobState.CANCELLED
    return STATES.get(letters, JobState.RUNNING if "r" in letters else JobState.UNKNOWN)


def parse_qacct(text: str) -> dict[str, str]:
    """``qacct -j ID`` output (``key value`` lines) as a dict (the last record wins)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key and not key.startswith("="):
            fields[key] = value.strip()
    return fields


def parse_qstat_j(text: str) -> dict[str, str]:
    """``qstat -j ID`` output (``key:   value`` lines) as a dict."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"^([\w .]+?):\s+(.*)$", line)
        if match:
            fields.setdefault(match.group(1).strip(), match.group(2).strip())
    return fields


def h_rt_of(info: dict[str, str]) -> float | None:
    """``h_rt`` in seconds from ``qstat -j``'s ``hard resource_list`` (``h_rt=600`` or ``h_rt=0:10:0``)."""
    match = re.search(r"(?:^|,)h_rt=([\d:]+)", info.get("hard resource_list", ""))
    if not match:
        return None
    parts = [int(p or 0) for p in match.group(1).split(":")]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    return float(seconds)


def start_of(qstat_text: str, job_id: str) -> float | None:
    """The running job's start (``submit/start at`` column of plain ``qstat``: ``11/22/2026 04:53:51``)."""
    for line in qstat_text.splitlines():
        parts = line.split()
        if len(parts) >= 7 and parts[0] == job_id and "r" in parts[4]:
            try:
                return datetime.strptime(f"{parts[5]} {parts[6]}", "%m/%d/%Y %H:%M:%S").timestamp()
            except ValueError:
                return None
    return None


class SgeScheduler(BatchScheduler):
    """Grid Engine backend (tested on a real Grid Engine 8.1.9, Debian's gridengine packages)."""

    name = "sge"
    default_fanout = "qrsh"
    script_template = "sge.qsub.j2"

    # -- submission -------------------------------------------------------------------------
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """``#$`` options: name, shell, parallel environment and slots, hard and soft run time (the soft one
        sends SIGUSR1 :func:`teardown_lead` s early), ``-notify``, output, working dir, environment, queue,
        account (project), memory."""
        b = spec.batch
        cores = b.cores_per_node or 1
        lead = teardown_lead(spec)
        lines = [f"-N hh-{spec.name}", "-S /bin/bash", f"-pe {spec.sge.pe} {spec.nodes * cores}",
                 f"-l h_rt={format_walltime(spec.walltime)}",
                 f"-l s_rt={format_walltime(max(1, spec.walltime - lead))}", "-notify",
                 f"-o {run_dir}/batch-$JOB_ID.out", "-j y", f"-wd {run_dir}", "-V"]
        if b.partition:
            lines.append(f"-q {b.partition}")
        if b.account:
            lines.append(f"-P {b.account}")
        if b.memory_per_node:
            lines.append(f"-l h_vmem={b.memory_per_node // MiB // cores}M")
        return lines

    def submit_argv(self, script: Path) -> list[str]:
        """``qsub -terse SCRIPT`` (prints only the job id)."""
        return ["qsub", "-terse", str(script)]

    def parse_job_id(self, stdout: str) -> str:
        """``-terse`` prints ``JOBID`` (``JOBID.1-N:1`` for array jobs); without it ``Your job JOBID ...``."""
        text = stdout.strip()
        match = re.search(r"^(\d+)", text.splitlines()[-1]) if text else None
        match = match or re.search(r"Your job (\d+)", text)
        if not match:
            raise UserError(f"qsub printed no job id: {text!r}")
        return match.group(1)

    def state(self, job_id: str) -> JobState:
        """From ``qstat -u '*'``; once the job has left it, from ``qacct -j`` (``failed``, ``exit_status``)."""
        proc = run_command(["qstat", "-u", "*"], check=False)
        letters = parse_qstat(proc.stdout, job_id) if proc.returncode == 0 else None
        if letters is not None:
            return state_of(letters)
        proc = run_command(["qacct", "-j", job_id], check=False)
        if proc.returncode != 0:
            return JobState.UNKNOWN
        acct = parse_qacct(proc.stdout)
        if acct.get("failed", "0").split()[0] != "0":
            return JobState.FAILED
        return JobState.COMPLETED if acct.get("exit_status", "0").split()[0] == "0" else JobState.FAILED

    def cancel_argv(self, job_id: str) -> list[str]:
        """``qdel JOBID``."""
        return ["qdel", job_id]

    # -- inside an allocation ---------------------------------------------------------------
    def allocation(self, spec: JobSpec) -> Allocation:
        """Hosts from ``PE_HOSTFILE``, cores from its slots on the first host, walltime (``h_rt``) and
        start from ``qstat -j $JOB_ID``, memory: the smallest of the node's RAM and this process's cgroup limit
        (:func:`launcher.schedulers.base.granted_memory`; Grid Engine's ``h_vmem`` limits address space, not RAM).

        Raises:
            UserError: not inside a Grid Engine parallel job, or a host name that resolves to loopback.
        """
        job_id = os.environ.get("JOB_ID")
        hostfile = os.environ.get("PE_HOSTFILE")
        if not job_id or not hostfile:
            raise UserError("not inside a Grid Engine parallel job (no JOB_ID / PE_HOSTFILE)", field="scheduler",
                            fix="use `hpc-hadoop submit`, or call `run` from a qsub script with -pe")
        hosts = parse_pe_hostfile(Path(hostfile).read_text())
        names = [host for host, _ in hosts]
        info = parse_qstat_j(run_command(["qstat", "-j", job_id]).stdout)
        walltime = h_rt_of(info)
        listing = run_command(["qstat", "-u", "*"], check=False).stdout
        start = start_of(listing, job_id) or time.time()
        if spec.interface:
            from launcher.agent import interface_address

            nodes = (Node(names[0], interface_address(spec.interface)), *(Node(n, n) for n in names[1:]))
        else:
            nodes = tuple(Node(n, node_address(n)) for n in names)
        return Allocation(scheduler=self.name, job_id=job_id, nodes=nodes, cores_per_node=hosts[0][1],
                          memory_per_node=granted_memory(), walltime=walltime, start_time=start,
                          fanout=self.default_fanout)
