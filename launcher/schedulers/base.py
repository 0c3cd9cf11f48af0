"""The scheduler interface: get nodes (submit, poll, cancel) and read the allocation we run in.

A backend only builds argument lists and parses outputs; running commands (:func:`run_command`) and polling
(:meth:`BatchScheduler.wait`, on :func:`launcher.util.polling.poll`) live here, as does reading the allocation
(:meth:`BatchScheduler.allocation`): the shape of PSI/J's batch executors and Parsl's providers
(docs/architecture.md, Data flow).
"""

from __future__ import annotations

import os
import re
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, Union

from launcher.config.spec import JobSpec
from launcher.schedulers.allocation import Allocation, JobState, Node
from launcher.util.errors import CommandError, UserError, command_failure
from launcher.util.network import bind_address, node_address
from launcher.util.polling import Polled, poll
from launcher.util.records import Record

#: The largest share of the walltime the teardown lead may take (10%): a short job keeps 90% of its time.
TEARDOWN_LEAD_FRACTION = 0.1


def teardown_lead(spec: JobSpec) -> int:
    """Seconds before the walltime ends when teardown starts, the same on every backend.

    ``min(batch.signal_lead, 10% of walltime)``, at least 1 s; used for Slurm's ``--signal=B:USR1@lead``,
    Grid Engine's soft limit ``s_rt = walltime - lead``, and the runner's own deadline (PBS sends no warning).
    For the default ``signal_lead`` (180 s): a 1-hour job gets 180 s, a 10-minute job 60 s (warning at 9:00).
    """
    return max(1, int(min(float(spec.batch.signal_lead), spec.walltime * TEARDOWN_LEAD_FRACTION)))


#: A cgroup v1 ``memory.limit_in_bytes`` at or above this means "no limit" (the kernel writes 2^63 rounded down
#: to the page size).
_CGROUP_V1_UNLIMITED = 1 << 60


def _read_limit(path: Path) -> int | None:
    """A cgroup memory limit file's value in bytes; ``None`` for ``max``, an unlimited v1 value, or no file."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit() or int(text) >= _CGROUP_V1_UNLIMITED:
        return None
    return int(text)


def cgroup_memory_limit(proc_cgroup: str | None = None, root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The smallest memory limit, bytes, of this process's cgroups and their ancestors (a batch system limits the
    job's cgroup, the process may sit in a step or task cgroup below it); ``None`` when there is none.

    Reads ``/proc/self/cgroup`` (or ``proc_cgroup``): a cgroup v2 line ``0::/path`` → ``root/path/memory.max``
    (``root/unified/...`` on hybrid hosts), a v1 line ``N:memory:/path`` → ``root/memory/path/
    memory.limit_in_bytes``.
    """
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    limits: list[int] = []
    for line in proc_cgroup.splitlines():
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            bases, name = [root, root / "unified"], "memory.max"
        elif "memory" in controllers.split(","):
            bases, name = [root / "memory", root / controllers], "memory.limit_in_bytes"
        else:
            continue
        relative = Path(path.strip().lstrip("/"))
        for base in bases:
            for directory in [base / relative, *(base / parent for parent in relative.parents)]:
                limit = _read_limit(directory / name)
                if limit is not None:
                    limits.append(limit)
    return min(limits) if limits else None


def granted_memory(*limits: int | None) -> int:
    """Memory a node grants this job, bytes: the smallest of the node's RAM (``psutil``), this process's cgroup
    limit (:func:`cgroup_memory_limit`) and ``limits`` (what the batch system says it granted; ``None``/0 =
    not said)."""
    import psutil

    known = [psutil.virtual_memory().total, cgroup_memory_limit(), *limits]
    return int(min(value for value in known if value))


def usable_cpus() -> int:
    """CPUs this process may run on: its CPU affinity (which a batch system's cpuset limits), else the CPU count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def whole_node_cores(granted: int, spec: JobSpec) -> int:
    """Cores YARN may use on a node of a whole-node allocation (issue 11).

    PBS Pro has no "all cores" in ``select``: without ``batch.cores_per_node`` the batch script asks
    ``ncpus=1`` with ``place=scatter:excl``, the node is the job's, and ``NCPUS`` says 1. Then YARN gets
    :func:`usable_cpus` instead (never fewer than ``granted``). Anything else keeps ``granted``: a node that is
    not exclusive may be shared with other jobs, and ``batch.cores_per_node`` is the user's own limit.
    """
    if spec.batch.exclusive and not spec.batch.cores_per_node:
        return max(granted, usable_cpus())
    return granted


@dataclass(frozen=True)
class NoAnswer:
    """What a batch system's status or cancel command returns when it gave no answer about the job
    (:meth:`BatchScheduler.ask`, :meth:`BatchScheduler.state`, :meth:`BatchScheduler.cancel`): it could not connect
    (``Unable to contact slurm controller``, ``cannot connect to server``, Grid Engine's ``commlib error``), timed
    out, exited with an error that does not say the job is unknown, or is another batch system's command (Grid
    Engine's ``qstat`` answering a PBS query with its usage). Never an answer about the job: the job's state is
    unknown, never gone. A value, not an exception: ``str()`` says which command and what it printed.

    Attributes:
        argv: the command line asked (as the backend built it).
        returncode: its exit code (-1: no answer within the timeout).
        stdout, stderr: what it printed (for a timeout, ``stderr`` says so).
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""

    def __str__(self) -> str:
        """`` `ARGV` exited with CODE: TAIL`` (:func:`launcher.util.errors.command_failure`)."""
        return command_failure(self.argv, self.returncode, self.stdout, self.stderr)


#: What the batch system says of a job (:meth:`BatchScheduler.state`): its state, or that it gave no answer.
JobAnswer = Union[JobState, NoAnswer]


def state_of(answer: JobAnswer) -> JobState:
    """The :class:`JobState` of ``answer``: itself, or ``JobState.NO_ANSWER`` for a :class:`NoAnswer` (the word
    ``list``, ``status`` and the index keep)."""
    return JobState.NO_ANSWER if isinstance(answer, NoAnswer) else answer


S = TypeVar("S", bound="Settled")


class Settled(Record):
    """What a backend decides at submission (:meth:`Scheduler.settle`), as one typed record, for the two that need
    it later: the job, which reads it from the submitted ``job.yaml`` (:meth:`into` writes it there, into the
    backend's section of the job file), and ``list``, ``status``, ``stop`` and ``cancel`` of the submitted cluster,
    which give it back to the backend (:meth:`Scheduler.recall`) from ``submit.json``
    (:class:`launcher.lifecycle.submit.SubmitRecord`'s ``settled``). This base decides nothing (Slurm, Grid Engine,
    the local backend); a backend that decides something declares its subclass (:attr:`Scheduler.settled_type`:
    PBS's :class:`launcher.schedulers.pbs.PbsSettled`). Schema policy: :class:`launcher.util.records.Record`.
    """

    @classmethod
    def decides(cls) -> bool:
        """Whether this kind of record holds anything (a field besides ``schema``)."""
        return bool(set(cls.model_fields) - {"schema_version"})

    @classmethod
    def from_record(cls: type[S], settled: Settled) -> S:
        """``settled`` as this kind of record: itself, or read again from its JSON form (``submit.json`` is read as a
        plain :class:`Settled`, the backend's fields kept as its unknown keys).

        Raises:
            pydantic.ValidationError: a field of this kind holds a value of the wrong type.
        """
        return settled if isinstance(settled, cls) else cls.model_validate(settled.model_dump(mode="json",
                                                                                              by_alias=True))

    @classmethod
    def from_job_file(cls: type[S], submitted: Mapping[str, Any]) -> S | None:
        """The record in a submitted ``job.yaml`` (read as a mapping), for a cluster directory written by the release
        before, whose ``submit.json`` has no record: the backend's section of the job file was then the only place
        of what the submission settled. ``None`` when it holds none (this base: always)."""
        return None

    def into(self, spec: JobSpec) -> JobSpec:
        """``spec`` with this record written into it, as the submitted ``job.yaml`` holds it (this base: ``spec``)."""
        return spec


class MissingCommand(UserError):
    """A batch system's command is not installed (or not on ``PATH``) on this machine."""


def run_command(argv: list[str], *, timeout: float = 60.0, hint: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a scheduler command (never through a shell) and capture its output.

    Args:
        argv: the command line.
        timeout: seconds to wait for it.
        hint: what the user can do when it fails (goes into the :class:`CommandError`).
        check: raise when it exits non-zero (else the caller reads ``returncode``).

    Raises:
        MissingCommand: the command is not installed (a :class:`UserError` naming it).
        CommandError: it gave no answer within ``timeout``, or (with ``check``) exited non-zero; carries its
            output's tail and ``hint``.
    """
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise MissingCommand(f"`{argv[0]}` is not installed or not on PATH", field="scheduler",
                             fix="load the batch system's module, or choose another scheduler") from None
    except subprocess.TimeoutExpired:
        raise CommandError(argv, -1, "", f"no answer within {timeout:.0f} s", hint) from None
    if check and proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stdout, proc.stderr, hint)
    return proc


class Scheduler(ABC):
    """A batch system backend.

    Subclasses set :attr:`name` and :attr:`default_fanout` and implement :meth:`allocation`; batch systems
    (:class:`BatchScheduler`) add submission, polling and cancelling. What the generic code asks of every registered
    backend (:data:`launcher.schedulers.SCHEDULERS`) is here too, so that a new scheduler is its module (plus its
    batch template): whether this process runs inside one of its allocations (:attr:`job_environment`,
    :meth:`inside_allocation`: ``run`` and ``start`` without ``--scheduler``), its own section of the job file
    (:attr:`settings_section`), what it decides at submission and is given back later (:meth:`settle`,
    :meth:`recall`: a record of :attr:`settled_type`) and what ``doctor`` says of it on this machine
    (:meth:`doctor_finds`).
    """

    name: ClassVar[str]
    default_fanout: ClassVar[str]
    #: Environment variables that, all set and not empty, say this process runs inside an allocation of this batch
    #: system (Slurm: ``SLURM_JOB_ID``; Grid Engine: ``PE_HOSTFILE`` and ``JOB_ID``); empty: never detected.
    job_environment: ClassVar[tuple[str, ...]] = ()
    #: The job file's section of this backend's own settings (``pbs``: :class:`launcher.config.spec.PbsSpec`), if
    #: any; it is a field of :class:`launcher.config.spec.JobSpec` (the configuration layer sits below the schedulers).
    settings_section: ClassVar[str | None] = None
    #: The record of what :meth:`settle` decides (PBS: :class:`launcher.schedulers.pbs.PbsSettled`).
    settled_type: ClassVar[type[Settled]] = Settled

    @classmethod
    def inside_allocation(cls, environ: Mapping[str, str] | None = None) -> bool:
        """True when ``environ`` (default ``os.environ``) has every :attr:`job_environment` variable set."""
        env = os.environ if environ is None else environ
        return bool(cls.job_environment) and all(env.get(variable) for variable in cls.job_environment)

    @classmethod
    def doctor_finds(cls) -> tuple[str | None, tuple[str, str] | None]:
        """What ``doctor``'s "batch system" line says of this batch system on this machine (runs its commands'
        probes, never submits).

        Returns:
            ``(found, warning)``: ``found`` names it with the command it would be asked through (``slurm
            (/usr/bin/sbatch)``), ``None`` when it is not installed; ``warning`` is ``(message, fix)`` when it is
            installed but unusable, else ``None``.
        """
        return None, None

    @classmethod
    def takes_whole_nodes(cls, spec: JobSpec) -> bool:
        """Whether the batch script asks for whole nodes whose cores the allocation names only when the job runs
        (:func:`whole_node_cores`); ``False`` where the batch system has no whole-node request and grants the cores
        asked for (Torque, Grid Engine, the local backend)."""
        return False

    @abstractmethod
    def allocation(self, spec: JobSpec) -> Allocation:
        """Read the allocation this process runs in (nodes, cores, memory, walltime).

        Raises:
            UserError: not inside an allocation of this scheduler, or it is unusable.
        """

    def settle(self, spec: JobSpec, *, preview: bool = False, notes: list[str] | None = None) -> Settled:
        """What the batch system decides at submission for ``spec`` (:attr:`settled_type`; this default: nothing),
        remembered (:meth:`recall`); :meth:`Settled.into` writes it into ``spec``, so the submitted ``job.yaml`` says it
        and nothing is decided again inside the job. Called by :func:`launcher.lifecycle.front.front_door` only.

        Args:
            preview: for ``render`` and ``doctor``: what cannot be asked here (the batch system's command is not
                installed) is assumed, with a line saying so (and how to choose) appended to ``notes``.

        Raises:
            MissingCommand: a command it asks is not installed (without ``preview``).
            UserError: the batch system's answer decides nothing (PBS: ``qstat --version`` names no flavor).
        """
        return Settled()

    def recall(self, settled: Settled) -> None:
        """Remember what a submission settled (``settled``, a record of :attr:`settled_type`, or a plain
        :class:`Settled` holding its fields), so that the commands found then run, not whatever comes first on
        ``PATH`` now (this default: read as :attr:`settled_type`, nothing to remember).

        Raises:
            pydantic.ValidationError: ``settled`` holds a field of :attr:`settled_type` of the wrong type.
        """
        self.settled_type.from_record(settled)


#: A status query: the command's argv and the parser of its standard output (``None``: this query does not know
#: the job; the next one is asked).
StatusQuery = tuple[list[str], Callable[[str], JobState | None]]
#: A check before submission: the command's argv and the verdict on its standard output (raises ``UserError``).
CheckQuery = tuple[list[str], Callable[[str], None]]


@dataclass(frozen=True)
class Command:
    """A command whose output describes the allocation.

    Attributes:
        argv: the command line.
        required: a failure is an error (:class:`CommandError`); else its (possibly empty) output is parsed.
    """

    argv: list[str]
    required: bool = True


@dataclass(frozen=True)
class Granted:
    """What a backend parsed of the allocation it runs in (:meth:`BatchScheduler.parse_allocation`).

    Attributes:
        names: node names, master first.
        cores: cores usable on each node.
        memory_limits: what the batch system says each node grants, bytes (``None``/0: not said); the node's RAM
            and this process's cgroup limit are added by :func:`granted_memory`.
        walltime: seconds the allocation lasts, ``None`` when unlimited.
        start_time: when the allocation began, epoch seconds.
    """

    names: list[str]
    cores: int
    memory_limits: tuple[int | None, ...]
    walltime: float | None
    start_time: float


def allocation_nodes(names: Sequence[str], interface: str | None) -> tuple[Node, ...]:
    """The nodes of ``names`` with the addresses daemons bind to.

    With ``interface`` (the job file's ``interface``), the master binds to that interface's address on this host
    and each other node finds its own (its name stands in here); else every name is resolved
    (:func:`launcher.util.network.node_address`).

    Raises:
        UserError: a node name does not resolve, or resolves to a loopback address; ``interface`` has no IPv4
            address on this host (:func:`launcher.util.network.bind_address`).
    """
    if interface:
        return (Node(names[0], bind_address(interface)), *(Node(n, n) for n in names[1:]))
    return tuple(Node(n, node_address(n)) for n in names)


@dataclass(frozen=True)
class BatchSystem:
    """A batch system's fixed facts, the data part of its :class:`BatchScheduler`.

    Attributes:
        script: the batch script's template in ``templates/`` (``batch/slurm.sbatch.j2``).
        cancel: the command that cancels a job (``scancel``, ``qdel``).
        job_variable: the variable holding the job id inside a job (``SLURM_JOB_ID``).
        host_variables: variables of which one names the job's nodes (``SLURM_JOB_NODELIST``, ``PBS_NODEFILE``).
        inside: what a process inside a job runs in, for the error outside one (``a Slurm allocation``).
        batch_script: where ``run`` is called from inside a job (``an sbatch script``), for the same error.
        options: ``batch`` fields that map to one directive each (field → format, ``{}`` the value), in order.
        shown: the batch system's name as users know it (``Grid Engine``), for ``run``'s allocation line.
        walltime_source: where :meth:`BatchScheduler.allocation` reads the walltime (command and field), for the same
            line (:func:`launcher.schedulers.inside.take_allocation`).
    """

    script: str
    cancel: str
    job_variable: str
    host_variables: tuple[str, ...]
    inside: str
    batch_script: str
    options: dict[str, str] = field(default_factory=dict)
    shown: str = ""
    walltime_source: str = ""


class BatchScheduler(Scheduler):
    """A real batch system: renders a batch script, submits it, polls it, cancels it, reads its allocation.

    Subclasses provide the directives, the argument lists and the output parsers (no subprocess of their own);
    this class runs the commands (:func:`run_command`), polls (:meth:`wait`) and builds the :class:`Allocation`.

    The commands come from the batch system's own installation where the backend knows it (:attr:`paths`,
    :meth:`program`: PBS's found at submission, recalled from the submission's record, :meth:`Scheduler.recall`);
    what they depend on is learnt before the first one runs (:meth:`prepare_commands`: the flavor of PBS, the one
    batch system of several dialects, whose machinery is its own: :class:`launcher.schedulers.pbs.PbsScheduler`).
    """

    #: The batch system's fixed facts: script template, cancel command, job environment, one-to-one options.
    system: ClassVar[BatchSystem]
    #: What a status or cancel command prints (standard output or error; regular expressions) when the batch system
    #: ANSWERED that it does not know the job; any other error exit is no answer (:class:`NoAnswer`).
    forgotten: ClassVar[tuple[str, ...]] = ()
    #: Exit codes that are that answer whatever is printed (PBS: 153 ``PBSE_UNKJOBID``, 35 a finished job).
    forgotten_exits: ClassVar[tuple[int, ...]] = ()

    def __init__(self) -> None:
        #: Absolute paths of the batch system's commands, by name, once known (PBS: the job file's ``pbs.commands``,
        #: the submission's record, or its installation found beside PBS's ``qstat``).
        self.paths: dict[str, str] = {}

    # -- what a backend provides ----------------------------------------------------------------
    @abstractmethod
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """The scheduler directives for ``spec`` (without the ``#SBATCH``/``#PBS`` prefix); runs nothing."""

    @abstractmethod
    def submit_argv(self, script: Path) -> list[str]:
        """The command that submits ``script``.

        Raises:
            UserError: the batch system would refuse the job whatever it says (e.g. Torque and root).
        """

    @abstractmethod
    def parse_job_id(self, stdout: str) -> str:
        """The job id from the submit command's output.

        Raises:
            UserError: the output holds no job id.
        """

    @abstractmethod
    def status_queries(self, job_id: str) -> list[StatusQuery]:
        """The commands that tell ``job_id``'s state, in the order :meth:`state` asks them, with their parsers."""

    def cancel_argv(self, job_id: str) -> list[str]:
        """The command that cancels ``job_id``: the system's cancel command (:meth:`program`) and ``JOBID``."""
        return [self.program(self.system.cancel), job_id]

    @property
    def script_template(self) -> str:
        """The batch script's template in ``templates/``."""
        return self.system.script

    def job_in(self, env: Mapping[str, str]) -> str:
        """The id of the job this process runs in: the system's job variable in its environment ``env``, with one
        of its host variables (the node list or file).

        Raises:
            UserError: not inside an allocation of this batch system (names the variables it lacks).
        """
        facts = self.system
        job_id = env.get(facts.job_variable)
        if not job_id or not any(env.get(name) for name in facts.host_variables):
            raise UserError(f"not inside {facts.inside} (no {facts.job_variable} / {facts.host_variables[0]})",
                            field="scheduler", fix=f"use `hpc-hadoop submit`, or call `run` from {facts.batch_script}")
        return job_id

    def option_directives(self, spec: JobSpec) -> list[str]:
        """The directives of the ``batch`` fields that map one to one (the system's options: queue, account...),
        in that order, for the fields the job sets."""
        return [form.format(value) for field, form in self.system.options.items()
                if (value := getattr(spec.batch, field))]

    @abstractmethod
    def allocation_commands(self, job_id: str, env: Mapping[str, str]) -> dict[str, Command]:
        """The commands whose output describes the allocation of ``job_id``, by name (for :meth:`parse_allocation`)."""

    @abstractmethod
    def parse_allocation(self, spec: JobSpec, job_id: str, env: Mapping[str, str],
                         outputs: Mapping[str, str]) -> Granted:
        """Nodes, cores, memory limits, walltime and start of the allocation, from the environment, the standard
        output of each of :meth:`allocation_commands` (by name) and the node file the environment names."""

    def check_query(self, spec: JobSpec) -> CheckQuery | None:
        """The command whose output tells whether the batch system could ever run ``spec`` (default: none)."""
        return None

    def submit_refusal(self, error: CommandError) -> Exception:
        """The error to report when the submit command failed with ``error`` (default: ``error`` itself)."""
        return error

    def fanout_for(self, spec: JobSpec) -> str:
        """The fan-out launcher of ``spec``'s allocation (default: :attr:`default_fanout`); runs nothing."""
        return self.default_fanout

    def prepare_commands(self, spec: JobSpec | None = None) -> None:
        """Learn what the batch system's commands depend on, before :meth:`state` or :meth:`allocation` runs the
        first of them (default: nothing; PBS: its flavor, from ``spec`` or ``qstat --version``).

        Raises:
            MissingCommand: a command it asks is not installed.
            UserError: the batch system's answer is unusable.
        """

    def program(self, name: str) -> str:
        """The command ``name`` to run: its absolute path when known (:attr:`paths`), else ``name`` itself, looked
        up on ``PATH``."""
        return self.paths.get(name, name)

    def installed(self, argv: list[str]) -> list[str]:
        """``argv`` with its command from this batch system's own installation (:meth:`program`): where two batch
        systems are installed, every command comes from the one the flavour check found (issue 37 item 6: a PBS job
        was given to Grid Engine's ``qsub``, first on ``PATH``)."""
        return [self.program(argv[0]), *argv[1:]] if argv else argv

    # -- asking the batch system -------------------------------------------------------------
    def ask(self, argv: list[str]) -> subprocess.CompletedProcess[str] | NoAnswer:
        """Run a status or cancel command: its result when it exited 0 or its error exit is the batch system's answer
        that it does not know the job (:attr:`forgotten`, :attr:`forgotten_exits`); else (no answer within 60 s, any
        other error exit) the :class:`NoAnswer`.

        Raises:
            MissingCommand: the command is not installed.
        """
        try:
            proc = run_command(self.installed(argv), check=False)
        except CommandError as exc:  # no answer within the timeout
            return NoAnswer(tuple(argv), exc.returncode, exc.stdout, exc.stderr)
        text = proc.stdout + proc.stderr
        if proc.returncode == 0 or proc.returncode in self.forgotten_exits or \
                any(re.search(pattern, text) for pattern in self.forgotten):
            return proc
        return NoAnswer(tuple(argv), proc.returncode, proc.stdout, proc.stderr)

    # -- what this class runs -------------------------------------------------------------------
    def preview_allocation(self, spec: JobSpec) -> Allocation:
        """A stand-in allocation of ``spec.nodes`` nodes (``node1``...) to preview the configuration; runs nothing."""
        cores = spec.batch.cores_per_node or 1
        memory = spec.batch.memory_per_node or 8 * (1 << 30)
        nodes = tuple(Node(f"node{i}", f"10.0.0.{i}") for i in range(1, spec.nodes + 1))
        return Allocation(scheduler=self.name, job_id="(preview)", nodes=nodes, cores_per_node=cores,
                          memory_per_node=memory, walltime=float(spec.walltime), fanout=self.fanout_for(spec),
                          preview=True)

    def check(self, spec: JobSpec) -> None:
        """Refuse, before submission, what the batch system would accept but never run (:meth:`check_query`).

        Raises:
            UserError: the request can never be satisfied; the check's command is not installed
                (:class:`MissingCommand`).
        """
        query = self.check_query(spec)
        if query is not None:
            argv, verdict = query
            verdict(run_command(self.installed(argv), check=False).stdout)

    def filtered_directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """:meth:`directives` minus ``batch.skip_directives`` (by substring) plus ``batch.extra_directives``."""
        kept = [d for d in self.directives(spec, run_dir)
                if not any(skip in d for skip in spec.batch.skip_directives)]
        return kept + list(spec.batch.extra_directives)

    def submit(self, script: Path) -> str:
        """Submit ``script``; returns the job id.

        Raises:
            UserError: refused before anything ran (:meth:`submit_argv`), or a refusal the backend explains
                (:meth:`submit_refusal`); the submit command is not installed.
            CommandError: the batch system refused it (its message is passed on).
        """
        argv = self.installed(self.submit_argv(script))
        try:
            proc = run_command(argv, hint="the batch system refused the job; nothing is queued")
        except CommandError as exc:
            refusal = self.submit_refusal(exc)
            if refusal is exc:
                raise
            raise refusal from None
        return self.parse_job_id(proc.stdout)

    def state(self, job_id: str) -> JobAnswer:
        """The job's current state: the first of :meth:`status_queries` that knows the job; ``UNKNOWN`` when every
        one ANSWERED that it does not know it (exit 0 without the job, or an error that says so: :meth:`ask`); the
        :class:`NoAnswer` of the first one that gives no answer (cannot connect, no answer within 60 s, any other
        error exit: which command and what it printed), never ``UNKNOWN`` then.

        Raises:
            MissingCommand: a query's command (or one :meth:`prepare_commands` asks) is not installed.
        """
        self.prepare_commands()
        for argv, parse in self.status_queries(job_id):
            proc = self.ask(argv)
            if isinstance(proc, NoAnswer):
                return proc
            answer = parse(proc.stdout) if proc.returncode == 0 else None
            if answer is not None:
                return answer
        return JobState.UNKNOWN

    def wait(self, job_id: str, *, until: Callable[[JobAnswer], bool] | None = None,
             each: Callable[[JobAnswer], None] | None = None, timeout: float | None = None, tolerate: int = 3,
             clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None
             ) -> Polled[JobAnswer]:
        """Poll ``job_id``'s :meth:`state` until ``until(state)`` (default: a terminal state), on
        :func:`launcher.util.polling.poll`: 0.5 s between polls, backing off (×1.5, at most 5 s) while the job is
        pending or the batch system does not answer; ``UNKNOWN`` and a :class:`CommandError` count as failed polls,
        ``tolerate`` of them in a row are tolerated. A :class:`NoAnswer` is never a failed poll (nor a change from the
        one before, whatever it printed): ``until`` decides how long it is waited through.

        Args:
            each: called with every state polled (before the next sleep).
            timeout: seconds to wait at most (``None``: as long as it takes).
            clock, sleep: for tests (see :func:`launcher.util.polling.poll`).

        Returns:
            The last state with why the wait ended (``done``, ``timeout``, ``failed``: the job is unknown).

        Raises:
            MissingCommand: a query's command is not installed.
            CommandError: more than ``tolerate`` polls in a row had no answer.
        """
        def probe() -> JobAnswer:
            state = self.state(job_id)
            if each is not None:
                each(state)
            return state

        return poll(probe, done=until or (lambda state: state_of(state).terminal),
                    failed=lambda s: s is JobState.UNKNOWN, errors=(CommandError,), tolerate=tolerate,
                    key=state_of, backoff_while=lambda s: state_of(s) in (JobState.PENDING, JobState.NO_ANSWER),
                    timeout=timeout, clock=clock, sleep=sleep)

    def confirmed_state(self, job_id: str, *, tolerate: int = 2, clock: Callable[[], float] | None = None,
                        sleep: Callable[[float], None] | None = None) -> JobAnswer:
        """The job's :meth:`state`, asked again (0.5 s apart, at most ``tolerate`` more times) while the batch system
        does not know the job: one empty answer (a busy or restarting server, a query that shows only some jobs)
        never makes a job ended. ``UNKNOWN`` only when every answer was; the :class:`NoAnswer` at once when the
        batch system does not answer.

        Raises:
            MissingCommand: a query's command is not installed.
        """
        return self.wait(job_id, until=lambda state: state is not JobState.UNKNOWN, tolerate=tolerate, clock=clock,
                         sleep=sleep).value

    def cancel(self, job_id: str) -> NoAnswer | None:
        """Cancel ``job_id`` with the cancel command (:meth:`cancel_argv`: the one recorded at submission).

        Returns:
            ``None`` when the batch system accepted it or answered that it does not know the job (it ended); the
            :class:`NoAnswer` when it did not answer (nothing is cancelled then).

        Raises:
            MissingCommand: the cancel command is not installed.
        """
        proc = self.ask(self.cancel_argv(job_id))
        return proc if isinstance(proc, NoAnswer) else None

    def allocation(self, spec: JobSpec) -> Allocation:
        """The allocation this process runs in: :meth:`job_in` the environment, :meth:`prepare_commands`, then
        :meth:`allocation_commands` run and parsed (:meth:`parse_allocation`); node addresses from
        :func:`allocation_nodes`, memory from :func:`granted_memory`.

        Raises:
            UserError: not inside an allocation of this batch system, a command is not installed, a node name that
                does not resolve or resolves to loopback.
            CommandError: a required command failed.
            UserError: ``spec.interface`` has no IPv4 address on this host.
        """
        env = os.environ
        job_id = self.job_in(env)
        self.prepare_commands(spec)
        outputs = {name: run_command(self.installed(command.argv), check=command.required).stdout
                   for name, command in self.allocation_commands(job_id, env).items()}
        granted = self.parse_allocation(spec, job_id, env, outputs)
        fanout = self.fanout_for(spec)
        return Allocation(scheduler=self.name, job_id=job_id, nodes=allocation_nodes(granted.names, spec.interface),
                          cores_per_node=granted.cores, memory_per_node=granted_memory(*granted.memory_limits),
                          walltime=granted.walltime, start_time=granted.start_time, fanout=fanout,
                          fanout_program=self.paths.get(fanout))
