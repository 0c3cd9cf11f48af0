"""PBS, in two dialects: Torque and PBS Pro/OpenPBS (``pbs.flavor``, else detected from ``qstat --version``).

``qsub`` to submit, ``qstat -f`` to poll (PBS Pro needs ``-x`` to show finished jobs; on Torque ``-x``
means XML), ``qdel`` to cancel. Inside a job the nodes come from ``PBS_NODEFILE`` (one line per core:
the unique hosts, in order) and the walltime and start time from ``qstat -f $PBS_JOBID``. PBS sends no
warning before the walltime ends, so the runner begins teardown ``batch.signal_lead`` seconds before the
deadline computed here; SIGTERM (Torque sends it, then SIGKILL after ``kill_delay``) is trapped too.
Daemons start through ``pbsdsh -h HOST`` (Torque) or ``pbs_tmrsh HOST`` (PBS Pro), see
:mod:`launcher.fanout.pbsdsh`.
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime
from pathlib import Path

from launcher.errors import CommandError, UserError
from launcher.schedulers.base import (
    Allocation,
    BatchScheduler,
    JobState,
    Node,
    granted_memory,
    node_address,
    run_command,
    whole_node_cores,
)
from launcher.spec import JobSpec
from launcher.units import MiB, format_walltime

#: PBS ``job_state`` letters (Torque and PBS Pro) → ours; ``C``/``F`` are refined by ``exit_status``.
STATES = {
    "Q": JobState.PENDING, "H": JobState.PENDING, "W": JobState.PENDING, "T": JobState.PENDING,
    "S": JobState.PENDING, "U": JobState.PENDING, "M": JobState.PENDING,
    "R": JobState.RUNNING, "E": JobState.RUNNING, "B": JobState.RUNNING, "X": JobState.COMPLETED,
    "C": JobState.COMPLETED, "F": JobState.COMPLETED,
}
#: The fan-out launcher of each dialect.
FANOUTS = {"torque": "pbsdsh", "pbspro": "pbs_tmrsh"}
#: What Torque's server answers when root submits (it refuses root unless ``acl_roots`` allows it).
ROOT_REFUSALS = ("Bad UID for job execution", "root is not allowed", "can not be run as root", "cannot be run as root")


def parse_qstat_f(text: str) -> dict[str, str]:
    """``qstat -f`` output as ``{attribute: value}`` (plus ``Job Id``); continuation lines are joined.

    PBS wraps long values onto lines that start with a tab (Torque) or more indentation than the
    attribute lines (PBS Pro); both are appended to the previous value.
    """
    fields: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        if line.startswith("Job Id:"):
            fields["Job Id"] = line.partition(":")[2].strip()
            last = None
            continue
        match = re.match(r"^\s{4}(\S[^=]*?) = (.*)$", line)
        if match and not line.startswith("\t"):
            last = match.group(1).strip()
            fields[last] = match.group(2).strip()
        elif last is not None and line.strip():
            fields[last] += line.strip()
    return fields


def parse_pbs_duration(value: str) -> float | None:
    """A PBS duration (``HH:MM:SS``, ``MM:SS`` or seconds) in seconds; ``None`` when absent."""
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    parts = value.split(":")
    if not all(p.isdigit() for p in parts) or len(parts) > 3:
        return None
    nums = [int(p) for p in parts]
    return float({2: nums[0] * 60 + nums[1], 3: nums[0] * 3600 + nums[1] * 60 + nums[2]}.get(len(nums), nums[0]))


def parse_pbs_time(value: str) -> float | None:
    """``start_time`` as PBS prints it (``Sun Nov 22 04:40:18 2026``; Torque may print epoch seconds)."""
    value = " ".join(value.split())
    if value.isdigit():
        return float(value)
    try:
        return datetime.strptime(value, "%a %b %d %H:%M:%S %Y").timestamp()
    except ValueError:
        return None


_PBS_UNITS = {"b": 1, "w": 8, "kb": 1 << 10, "kw": 8 << 10, "mb": 1 << 20, "mw": 8 << 20, "gb": 1 << 30,
              "gw": 8 << 30, "tb": 1 << 40, "tw": 8 << 40}


def parse_pbs_size(value: str) -> int | None:
    """A PBS size (``16gb``, ``62500mb``, ``1024kb``, ``512``: bytes; ``w`` = 8-byte words) in bytes, or ``None``."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmgt]?[bw])?\s*", value.lower())
    if not match:
        return None
    return int(match.group(1)) * _PBS_UNITS[match.group(2) or "b"]


def parse_nodefile(text: str) -> list[str]:
    """``PBS_NODEFILE``: one line per core (or per chunk); the unique host names in order of appearance."""
    hosts: list[str] = []
    for line in text.splitlines():
        name = line.strip()
        if name and name not in hosts:
            hosts.append(name)
    return hosts


def flavor_of(version_output: str) -> str:
    """``torque`` or ``pbspro`` from ``qstat --version`` (PBS Pro/OpenPBS: ``pbs_version = 19.1.3``;
    Torque: ``Version: 6.1.3``).

    Raises:
        UserError: the output names neither.
    """
    if "pbs_version" in version_output:
        return "pbspro"
    if re.search(r"^\s*Version:", version_output, re.MULTILINE):
        return "torque"
    first = (version_output.strip().splitlines() or [""])[0][:60]
    if re.match(r"(SGE|OGS|GE|UGE|AGE) \d", first):
        raise UserError(f"the qstat on PATH is Grid Engine's ({first}), not PBS's", field="pbs.flavor",
                        fix="use --scheduler sge, or set pbs.flavor: torque or pbspro to render a PBS script")
    raise UserError(f"cannot tell Torque from PBS Pro by `qstat --version` ({first!r})", field="pbs.flavor",
                    fix="set pbs.flavor: torque or pbspro")


class PbsScheduler(BatchScheduler):
    """PBS backend (Torque and PBS Pro); tested through stand-in commands, as no PBS server installs here."""

    name = "pbs"
    default_fanout = "pbsdsh"
    script_template = "pbs.qsub.j2"

    def __init__(self) -> None:
        self._flavor: str | None = None

    def flavor(self, spec: JobSpec | None = None) -> str:
        """``pbs.flavor`` when set, else what ``qstat --version`` says (asked once)."""
        if spec is not None and spec.pbs.flavor:
            self._flavor = spec.pbs.flavor
        if self._flavor is None:
            proc = run_command(["qstat", "--version"], check=False)
            self._flavor = flavor_of(proc.stdout + proc.stderr)
        return self._flavor

    # -- submission -------------------------------------------------------------------------
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """``#PBS`` options: name, nodes and cores (Torque ``-l nodes=N:ppn=M``, PBS Pro ``-l select=N:ncpus=M``
        + ``-l place=scatter:excl``: whole nodes with ``batch.exclusive``), walltime, joined output, queue, account,
        environment. Torque has no whole-node request: ``ppn`` is ``batch.cores_per_node`` (the presets set it)."""
        b = spec.batch
        cores = b.cores_per_node or 1
        name = f"hh-{spec.name}"[:15]  # PBS Pro refuses job names over 15 characters on older servers
        lines = [f"-N {name}"]
        if self.flavor(spec) == "torque":
            resources = f"nodes={spec.nodes}:ppn={cores}"
            if b.memory_per_node:
                resources += f",mem={b.memory_per_node // MiB * spec.nodes}mb"
            lines += [f"-l {resources},walltime={format_walltime(spec.walltime)}"]
        else:
            chunk = f"select={spec.nodes}:ncpus={cores}"
            if b.memory_per_node:
                chunk += f":mem={b.memory_per_node // MiB}mb"
            place = "scatter:excl" if b.exclusive else "scatter"
            lines += [f"-l {chunk}", f"-l walltime={format_walltime(spec.walltime)}", f"-l place={place}"]
        lines += [f"-o {run_dir}/batch-pbs.out", "-j oe", "-V"]
        if b.partition:
            lines.append(f"-q {b.partition}")
        if b.account:
            lines.append(f"-A {b.account}")
        return lines

    def submit_argv(self, script: Path) -> list[str]:
        """``qsub SCRIPT`` (run from the cluster directory)."""
        return ["qsub", str(script)]

    def submit(self, script: Path) -> str:
        """``qsub``; refuses at once on Torque as root, and says why when the server refuses root.

        Raises:
            UserError: Torque and root.
            CommandError: any other refusal.
        """
        root_error = UserError("Torque refuses jobs submitted by root", field="scheduler",
                               fix="submit as a regular user (Torque's qsub runs no job as root)")
        if self._flavor == "torque" and os.geteuid() == 0:
            raise root_error
        try:
            return super().submit(script)
        except CommandError as exc:
            if any(text in exc.stderr + exc.stdout for text in ROOT_REFUSALS):
                raise root_error from None
            raise

    def parse_job_id(self, stdout: str) -> str:
        """``qsub`` prints the job id on its last line: ``123.server`` (PBS Pro, Torque)."""
        line = stdout.strip().splitlines()[-1].strip() if stdout.strip() else ""
        if not re.fullmatch(r"\d+(\[\d*\])?(\.[\w.-]+)?", line):
            raise UserError(f"qsub printed no job id: {stdout.strip()!r}")
        return line

    def status_argv(self, job_id: str) -> list[str]:
        """``qstat -f ID``; PBS Pro adds ``-x`` so that finished jobs are shown too."""
        return ["qstat", "-x", "-f", job_id] if self.flavor() == "pbspro" else ["qstat", "-f", job_id]

    def state(self, job_id: str) -> JobState:
        """From ``job_state``; a finished job (``C``/``F``) is FAILED when its ``exit_status`` is not 0."""
        proc = run_command(self.status_argv(job_id), check=False)
        info = parse_qstat_f(proc.stdout) if proc.returncode == 0 else {}
        state = STATES.get(info.get("job_state", ""), JobState.UNKNOWN)
        if state == JobState.COMPLETED and info.get("exit_status", "0").strip() not in ("0", ""):
            return JobState.FAILED
        return state

    def cancel_argv(self, job_id: str) -> list[str]:
        """``qdel JOBID``."""
        return ["qdel", job_id]

    def preview_allocation(self, spec: JobSpec) -> Allocation:
        """As the base class, with this dialect's fan-out launcher."""
        allocation = super().preview_allocation(spec)
        return Allocation(**{**allocation.__dict__, "fanout": FANOUTS[self.flavor(spec)]})

    # -- inside an allocation ---------------------------------------------------------------
    def allocation(self, spec: JobSpec) -> Allocation:
        """Nodes from ``PBS_NODEFILE``; cores from the node file's lines per host (or ``PBS_NUM_PPN``/
        ``NCPUS``); walltime from ``Resource_List.walltime`` and ``start_time`` (``Walltime.Remaining``
        where Torque gives it) of ``qstat -f``; memory: the smallest of the job's ``Resource_List.mem`` ÷ nodes,
        the node's RAM and this process's cgroup limit (:func:`launcher.schedulers.base.granted_memory`).

        Raises:
            UserError: not inside a PBS job, or a node name that resolves to loopback.
        """
        job_id = os.environ.get("PBS_JOBID")
        nodefile = os.environ.get("PBS_NODEFILE")
        if not job_id or not nodefile:
            raise UserError("not inside a PBS allocation (no PBS_JOBID / PBS_NODEFILE)", field="scheduler",
                            fix="use `hpc-hadoop submit`, or call `run` from a qsub script")
        lines = [line.strip() for line in Path(nodefile).read_text().splitlines() if line.strip()]
        names = parse_nodefile("\n".join(lines))
        per_host = lines.count(names[0]) if names else 1
        cores = int(os.environ.get("PBS_NUM_PPN") or os.environ.get("NCPUS") or per_host)
        if self.flavor(spec) == "pbspro":  # place=scatter:excl; Torque has no whole-node request
            cores = whole_node_cores(cores, spec)
        info = parse_qstat_f(run_command(self.status_argv(job_id)).stdout)
        walltime, start = walltime_and_start(info)
        job_memory = parse_pbs_size(info.get("Resource_List.mem", ""))
        if spec.interface:
            from launcher.agent import interface_address

            nodes = (Node(names[0], interface_address(spec.interface)), *(Node(n, n) for n in names[1:]))
        else:
            nodes = tuple(Node(n, node_address(n)) for n in names)
        memory = granted_memory(job_memory and job_memory // max(1, len(names)))
        return Allocation(scheduler=self.name, job_id=job_id, nodes=nodes, cores_per_node=cores,
                          memory_per_node=memory, walltime=walltime, start_time=start,
                          fanout=FANOUTS[self.flavor(spec)])


def walltime_and_start(info: dict[str, str], now: float | None = None) -> tuple[float | None, float]:
    """(walltime seconds, start epoch) from ``qstat -f`` attributes.

    ``Walltime.Remaining`` (Torque) is the most direct: the deadline is ``now + remaining``, written as
    walltime and start time that add up to it. Else ``Resource_List.walltime`` and ``start_time`` (or
    ``stime``); without a start time, now.
    """
    now = time.time() if now is None else now
    walltime = parse_pbs_duration(info.get("Resource_List.walltime", ""))
    start = parse_pbs_time(info.get("start_time", "") or info.get("stime", "")) or now
    remaining = parse_pbs_duration(info.get("Walltime.Remaining", ""))
    if remaining is not None:
        if walltime is None:
            return remaining, now
        return walltime, now + remaining - walltime
    return walltime, start


__all__ = ["PbsScheduler", "flavor_of", "parse_nodefile", "parse_pbs_duration", "parse_qstat_f", "walltime_and_start"]
