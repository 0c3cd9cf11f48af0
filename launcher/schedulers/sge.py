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
    Command,
    Granted,
    StatusQuery,
    teardown_lead,
)
from launcher.util.errors import UserError
from launcher.util.units import MiB, format_walltime

#: Grid Engine state letters (``qstat`` column ``state``) → ours; ``E`` (error) anywhere means FAILED.
STATES = state_table(pending="qw hqw hRwq Rq s S T ts", running="r t Rr Rt", cancelled="dr dt dqw")


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


def listing_state(stdout: str, job_id: str) -> JobState | None:
    """``job_id``'s state in ``qstat -u '*'`` output (:func:`parse_qstat`, :func:`state_of`); ``None`` once it has
    left the listing."""
    letters = parse_qstat(stdout, job_id)
    return None if letters is None else state_of(letters)


def qacct_state(stdout: str) -> JobState:
    """A finished job's state from ``qacct -j`` output: FAILED when ``failed`` or ``exit_status`` is not 0."""
    acct = parse_qacct(stdout)
    if acct.get("failed", "0").split()[0] != "0":
        return JobState.FAILED
    return JobState.COMPLETED if acct.get("exit_status", "0").split()[0] == "0" else JobState.FAILED


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


#: Grid Engine's client commands the backend runs (all beside ``qconf``, ``$SGE_ROOT/bin/<arch>`` or ``/usr/bin``).
GRID_ENGINE_COMMANDS = frozenset({"qsub", "qstat", "qacct", "qdel", "qrsh", "qconf"})


class SgeScheduler(BatchScheduler):
    """Grid Engine backend (tested on a real Grid Engine 8.1.9, Debian's gridengine packages)."""

    name = "sge"
    default_fanout = "qrsh"
    job_environment = ("PE_HOSTFILE", "JOB_ID")
    settings_section = "sge"
    system = BatchSystem(script="batch/sge.qsub.j2", cancel="qdel", job_variable="JOB_ID",
                         host_variables=("PE_HOSTFILE",), inside="a Grid Engine parallel job",
                         batch_script="a qsub script with -pe",
                         options={"partition": "-q {}", "account": "-P {}"}, shown="Grid Engine",
                         walltime_source="`qstat -j` h_rt")

    #: What Grid Engine 8.1.9 answers for a job it does not know (recorded on the test cluster, exit 1 each):
    #: ``qdel``: ``denied: job "ID" does not exist``; ``qacct -j``: ``error: job id ID not found``, or ``no jobs
    #: running since startup`` without an accounting file. A stopped ``sge_qmaster`` gives ``error: commlib error:
    #: got select error (Connection refused)``: no answer.
    forgotten = (r'job "[^"]*" does not exist', r"job id \S+ not found", r"no jobs running since startup")

    # -- submission -------------------------------------------------------------------------
    @classmethod
    def doctor_finds(cls) -> tuple[str | None, tuple[str, str] | None]:
        """``sge (<qstat>)`` when Grid Engine's ``qconf`` is on ``PATH``, naming the ``qstat`` of that installation
        (:meth:`program`), not whichever comes first on ``PATH`` (:meth:`Scheduler.doctor_finds`)."""
        return (f"sge ({cls().program('qstat')})" if shutil.which("qconf") else None), None

    def program(self, name: str) -> str:
        """Grid Engine's ``name``: the one in the directory of ``qconf`` (a command only Grid Engine has), so that a
        PBS ``qsub`` or ``qstat`` first on ``PATH`` is never run for a Grid Engine job (issue 37 item 6); else
        ``name`` on ``PATH``."""
        qconf = shutil.which("qconf")
        if qconf is not None and name in GRID_ENGINE_COMMANDS:
            own = os.path.join(os.path.dirname(qconf), name)
            if os.access(own, os.X_OK):
                return own
        return super().program(name)

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
                 f"-o {run_dir}/batch-$JOB_ID.out", "-j y", f"-wd {run_dir}", "-V", *self.option_directives(spec)]
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

    def status_queries(self, job_id: str) -> list[StatusQuery]:
        """``qstat -u '*'`` (:func:`listing_state`); once the job has left it, ``qacct -j`` (:func:`qacct_state`)."""
        return [(["qstat", "-u", "*"], lambda stdout: listing_state(stdout, job_id)),
                (["qacct", "-j", job_id], qacct_state)]

    # -- inside an allocation ---------------------------------------------------------------
    def allocation_commands(self, job_id: str, env: Mapping[str, str]) -> dict[str, Command]:
        """``qstat -j $JOB_ID`` and (for the start time; may fail) ``qstat -u '*'``."""
        return {"job": Command(["qstat", "-j", job_id]), "listing": Command(["qstat", "-u", "*"], required=False)}

    def parse_allocation(self, spec: JobSpec, job_id: str, env: Mapping[str, str],
                         outputs: Mapping[str, str]) -> Granted:
        """Hosts from ``PE_HOSTFILE``, cores from its slots on the first host, walltime (``h_rt``) from
        ``qstat -j``, start from the ``qstat`` listing (else now). No memory limit: Grid Engine's ``h_vmem`` limits
        address space, not RAM (the node's RAM and the cgroup decide).

        Raises:
            OSError: the host file cannot be read.
        """
        hosts = parse_pe_hostfile(Path(env["PE_HOSTFILE"]).read_text())
        return Granted(names=[host for host, _ in hosts], cores=hosts[0][1], memory_limits=(),
                       walltime=h_rt_of(parse_qstat_j(outputs["job"])),
                       start_time=start_of(outputs["listing"], job_id) or time.time())
