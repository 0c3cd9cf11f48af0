"""PBS, in two flavors: Torque and PBS Pro/OpenPBS (``pbs.flavor``, else detected from ``qstat --version``;
``render`` where ``qstat`` is not installed assumes PBS Pro and says so): :meth:`PbsScheduler.flavor`, the one
way to ask which.

``qsub`` to submit, ``qstat -f`` to poll, ``qdel`` to cancel. ``qstat -f ID`` shows a queued or running job on
both flavors; PBS Pro forgets a finished job unless the server keeps job history (``job_history_enable``, off by
default: then ``qstat -x -f ID`` exits 0, prints nothing on standard output and ``qstat: PBS is not configured to
maintain job history ID`` on standard error, even for a running job), so ``-x`` is only asked for a job ``-f`` no
longer shows (on Torque ``-x`` means XML). A finished job's exit status is ``Exit_status`` on PBS Pro, ``exit_status``
on Torque. Inside a job the nodes come from ``PBS_NODEFILE`` (one line per core: the unique hosts, in order) and
the walltime and start time from ``qstat -f $PBS_JOBID``. PBS sends no
warning before the walltime ends, so the runner begins teardown ``batch.signal_lead`` seconds before the
deadline computed here; SIGTERM (Torque sends it, then SIGKILL after ``kill_delay``) is trapped too.
Daemons start through ``pbsdsh -h HOST`` (Torque) or ``pbs_tmrsh HOST`` (PBS Pro), see
:mod:`launcher.fanout.pbsdsh`. Both MoMs start the job through a login shell, which resets ``PATH`` despite ``-V``:
what was found at submission (the flavor, the absolute paths of ``qstat``, ``qdel`` and the fan-out launcher: a
:class:`PbsSettled`) is written into the submitted ``job.yaml`` (``pbs.flavor``, ``pbs.commands``) and nothing is
looked up again inside the job; the same record in ``submit.json`` gives ``list``, ``status`` and ``stop`` the
commands found at submission.

The ``pbs:`` section's model (:class:`launcher.config.spec.PbsSpec`) and the facts it is validated against (the
flavors, their fan-out launchers, the commands a job runs: :data:`launcher.config.spec.PBS_FANOUTS`,
:data:`~launcher.config.spec.PBS_JOB_COMMANDS`) are this backend's, kept in the job file's model, below the
schedulers; this module takes them from there.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from launcher.config.spec import PBS_FANOUTS, PBS_JOB_COMMANDS, JobSpec, PbsFlavor, PbsSpec
from launcher.schedulers import base
from launcher.schedulers.allocation import Allocation, JobState, state_table
from launcher.schedulers.base import (
    BatchScheduler,
    BatchSystem,
    Command,
    Granted,
    MissingCommand,
    Settled,
    StatusQuery,
    whole_node_cores,
)
from launcher.util.errors import CommandError, UserError
from launcher.util.units import MiB, format_walltime

#: PBS ``job_state`` letters (Torque and PBS Pro) → ours; ``C``/``F`` are refined by the exit status.
STATES = state_table(pending="Q H W T S U M", running="R E B", completed="X C F")
#: The ``qstat -f`` attribute of a finished job's exit status: ``Exit_status`` on PBS Pro/OpenPBS
#: (``ATTR_exit_status`` in OpenPBS's ``src/include/pbs_ifl.h``), ``exit_status`` on Torque.
EXIT_STATUS = ("Exit_status", "exit_status")
#: The exit status the MoM records for a job it ended at its walltime: Torque's ``JOB_EXEC_OVERLIMIT_WT`` (-11,
#: ``src/include/pbs_job.h``), OpenPBS's ``JOB_EXEC_KILL_WALLTIME`` (-29, ``src/include/job.h``).
WALLTIME_EXITS = (-11, -29)
#: The exit status of a job whose script was killed by SIGTERM or SIGKILL (256 + signal, both flavors): ``qdel`` of a
#: running job (the MoM's limits have codes of their own, :data:`WALLTIME_EXITS`).
KILLED_EXITS = (256 + 15, 256 + 9)
#: The flavor assumed when none is known (the builders; ``render`` where ``qstat`` is not installed).
PREVIEW_FLAVOR: PbsFlavor = "pbspro"
#: What users call each flavor (``doctor``'s line, ``render``'s note), the assumed one first.
SHOWN: dict[PbsFlavor, str] = {PREVIEW_FLAVOR: "PBS Pro/OpenPBS", "torque": "Torque"}
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


def _flavor_of(version_output: str) -> PbsFlavor:
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


class PbsSettled(Settled):
    """What a PBS submission settles (:meth:`PbsScheduler.settle`): the flavor and the absolute paths of the PBS
    commands the job runs inside its allocation (both MoMs start the job through a login shell, which resets ``PATH``
    despite ``-V``). Written into the submitted ``job.yaml`` as ``pbs.flavor`` and ``pbs.commands`` (:meth:`into`)
    and into ``submit.json``, from which ``list``, ``status`` and ``stop`` recall them (:meth:`PbsScheduler.recall`).

    Attributes:
        flavor: ``torque`` or ``pbspro``; ``None`` in a record of a job file that names none.
        commands: command name (:data:`launcher.config.spec.PBS_JOB_COMMANDS`) → its absolute path; a command found
            nowhere at submission is left out.
    """

    flavor: PbsFlavor | None = None
    commands: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of_section(cls, section: PbsSpec) -> PbsSettled:
        """The record in the job file's ``pbs:`` section (``spec.pbs``): its ``flavor`` and ``commands``."""
        return cls(flavor=section.flavor, commands=dict(section.commands))

    @classmethod
    def from_job_file(cls, submitted: Mapping[str, Any]) -> PbsSettled | None:
        """The record in a submitted ``job.yaml`` of the release before (read as a mapping): its ``pbs:`` section,
        validated as the job file's (:class:`launcher.config.spec.PbsSpec`); ``None`` when it has none or an invalid
        one."""
        section = submitted.get("pbs")
        if not isinstance(section, Mapping):
            return None
        try:
            return cls.of_section(PbsSpec.model_validate(dict(section)))
        except ValidationError:
            return None

    def into(self, spec: JobSpec) -> JobSpec:
        """``spec`` with ``pbs.flavor`` and ``pbs.commands`` this record's."""
        pbs = spec.pbs.model_copy(update={"flavor": self.flavor, "commands": dict(self.commands)})
        return spec.model_copy(update={"pbs": pbs})


class PbsScheduler(BatchScheduler):
    """PBS backend (Torque and PBS Pro); tested through stand-in commands, as no PBS server installs here."""

    name = "pbs"
    default_fanout = "pbsdsh"
    job_environment = ("PBS_JOBID",)
    settings_section = "pbs"
    system = BatchSystem(script="batch/pbs.qsub.j2", cancel="qdel", job_variable="PBS_JOBID",
                         host_variables=("PBS_NODEFILE",), inside="a PBS allocation", batch_script="a qsub script",
                         options={"partition": "-q {}", "account": "-A {}"}, shown="PBS",
                         walltime_source="`qstat -f` Resource_List.walltime")

    settled_type = PbsSettled
    #: A server's answer that it does not know the job (OpenPBS and Torque ``qstat``/``qdel``: ``Unknown Job Id``,
    #: exit 153; OpenPBS ``qstat -f`` of a finished job with history: ``Job has finished``, exit 35). ``cannot connect
    #: to server`` (Torque: exit 111, ``errno=111``; OpenPBS: exit 255, ``errno=15010``) and Grid Engine's ``qstat``
    #: (its usage, exit 1) are no answer.
    forgotten = (r"Unknown Job Id", r"Job has finished", r"nonexistent job id")
    forgotten_exits = (153, 35)

    def __init__(self) -> None:
        super().__init__()
        #: The flavor once known (the job file's, the submission's record, or found by ``qstat --version``).
        self._flavor: PbsFlavor | None = None

    @classmethod
    def takes_whole_nodes(cls, spec: JobSpec) -> bool:
        """PBS Pro's ``place=scatter:excl`` (``batch.exclusive`` without ``batch.cores_per_node``); Torque has no
        whole-node request (:meth:`Scheduler.takes_whole_nodes`)."""
        return spec.pbs.flavor == "pbspro" and spec.batch.exclusive and not spec.batch.cores_per_node

    @classmethod
    def doctor_finds(cls) -> tuple[str | None, tuple[str, str] | None]:
        """When ``qsub`` is on ``PATH``: ``pbs (<qstat>, <flavor>)`` with the ``qstat`` and flavor ``submit`` would
        use (:meth:`flavor`; where Grid Engine's ``qstat`` comes first on ``PATH``, said), or a warning when
        no PBS ``qstat`` answers (none when Grid Engine's ``qconf`` is there: its ``qsub`` it is)
        (:meth:`Scheduler.doctor_finds`)."""
        if not shutil.which("qsub"):
            return None, None
        pbs = cls()
        first = shutil.which("qstat")
        try:
            flavor = pbs.flavor()
        except UserError as exc:
            if not shutil.which("qconf"):
                return None, (f"pbs: qsub is installed but no PBS qstat answers: {exc.message}", exc.fix or "")
            return None, None
        qstat = pbs.paths.get("qstat", first)
        note = f"; the first qstat on PATH, {first}, is Grid Engine's" if qstat != first else ""
        return f"pbs ({qstat}, {SHOWN[flavor]}{note})", None

    # -- the flavor: the one way to ask it, and what the submission settles --------------------------
    def flavor(self, spec: JobSpec | None = None) -> PbsFlavor:
        """The PBS flavor, ``torque`` or ``pbspro``: ``spec``'s ``pbs.flavor``, else the one known (the submission's,
        :meth:`recall`, or found before), else what ``qstat --version`` says, asked once and remembered. Where the
        first ``qstat`` is not PBS's (Grid Engine's first on ``PATH``, as OpenPBS's own ``/etc/profile.d/pbs.sh``
        leaves a login shell), the first PBS ``qstat`` on ``PATH`` or ``PBS_O_PATH`` (:meth:`_locate_qstat`), whose
        paths are then used. ``spec``'s ``pbs.commands`` are remembered too (:attr:`paths`).

        Raises:
            MissingCommand: no ``qstat`` is installed.
            UserError: no ``qstat`` found is PBS's (names each one run and what it is).
        """
        known = self._known(spec)
        if known is not None:
            return known
        proc = base.run_command(["qstat", "--version"], check=False)
        try:
            self._flavor = _flavor_of(proc.stdout + proc.stderr)
        except UserError as first:
            self._flavor = self._locate_qstat(first)
        return self._flavor

    def _known(self, spec: JobSpec | None) -> PbsFlavor | None:
        """The flavor without running anything: ``spec``'s settled fields recalled first (:meth:`recall`), then the
        one known; ``None`` when none is."""
        if spec is not None:
            self.recall(PbsSettled.of_section(spec.pbs))
        return self._flavor

    def _assumed(self, spec: JobSpec | None = None) -> PbsFlavor:
        """The flavor for the builders, which run nothing: the one known (:meth:`_known`), else PBS Pro."""
        return self._known(spec) or PREVIEW_FLAVOR

    def prepare_commands(self, spec: JobSpec | None = None) -> None:
        """The flavor (:meth:`flavor`): PBS Pro's status queries differ from Torque's.

        Raises:
            MissingCommand, UserError: as :meth:`flavor`.
        """
        self.flavor(spec)

    def settle(self, spec: JobSpec, *, preview: bool = False, notes: list[str] | None = None) -> PbsSettled:
        """What the submission of ``spec`` settles (remembered, :meth:`recall`): the flavor (:meth:`flavor`) and the
        absolute paths of the commands the job runs (:meth:`command_paths`).

        Args:
            preview: for ``render`` and ``doctor``: where ``qstat`` is not installed, assume PBS Pro and append a
                line saying so (and how to choose) to ``notes``.

        Raises:
            MissingCommand: ``qstat`` is not installed (without ``preview``).
            UserError: no ``qstat`` found is PBS's.
        """
        try:
            flavor = self.flavor(spec)
        except MissingCommand:
            if not preview:
                raise
            flavor = self._flavor = PREVIEW_FLAVOR
            if notes is not None:
                notes.append(f"`qstat` is not installed here: the batch script is for {SHOWN[flavor]} (pbs.flavor: "
                             f"{flavor}); set pbs.flavor ({' or '.join(SHOWN)}) in the job file or with --set to "
                             "choose")
        settled = PbsSettled(flavor=flavor, commands=self.command_paths(spec))
        self.recall(settled)
        return settled

    def recall(self, settled: Settled) -> None:
        """Remember what a submission settled (a :class:`PbsSettled`, or a plain :class:`Settled` holding its
        fields: ``submit.json``'s): its flavor, when it names one, and its commands' paths (:attr:`paths`), so that
        ``list``, ``status`` and ``stop`` run the commands found at submission, not whatever comes first on ``PATH``
        now.

        Raises:
            pydantic.ValidationError: ``settled`` holds a flavor or commands of the wrong type.
        """
        own = PbsSettled.from_record(settled)
        if own.flavor is not None:
            self._flavor = own.flavor
        self.paths.update(own.commands)

    def command_paths(self, spec: JobSpec) -> dict[str, str]:
        """The absolute path of each command ``spec``'s job runs inside its allocation (:meth:`job_commands`): the
        one the job file gives (``pbs.commands``), else the one of the installation the flavor check found
        (:attr:`paths`), else the one found on this process's ``PATH`` (made absolute, symbolic links kept: a PBS
        command may be a link whose name chooses what it does); a command found nowhere is left out (the job then
        looks it up on its own ``PATH``). Runs nothing."""
        given = dict(spec.pbs.commands)
        for name in self.job_commands(spec):
            found = given.get(name) or self.paths.get(name) or shutil.which(name)  # the installation found first
            if found:
                given[name] = os.path.abspath(found)
        return given

    def _locate_qstat(self, first: UserError | None = None) -> PbsFlavor:
        """Find PBS's ``qstat`` where another comes first: every ``qstat`` on ``PATH``, then on ``PBS_O_PATH`` (the
        submitter's ``PATH``, which a PBS job has), asked ``--version`` in turn; the first that names a flavor is
        remembered (with ``qsub``, ``qdel``, ``pbsdsh`` and ``pbs_tmrsh`` beside it) in :attr:`paths`.

        Returns:
            The flavor it names.

        Raises:
            UserError: none does (``first``, the error of the first one, when it is the only one): the error names
                every ``qstat`` run and what it said (Grid Engine's).
        """
        env = os.environ
        found: dict[str, str] = {}  # real path → the path found (a PBS command may be a link whose name counts)
        for path in (env.get("PATH", ""), env.get("PBS_O_PATH", "")):
            for directory in path.split(os.pathsep):
                candidate = os.path.abspath(os.path.join(directory, "qstat")) if directory else ""
                if candidate and os.access(candidate, os.X_OK):
                    found.setdefault(os.path.realpath(candidate), candidate)
        said: list[str] = []
        for candidate in found.values():
            proc = base.run_command([candidate, "--version"], check=False)
            output = proc.stdout + proc.stderr
            try:
                flavor = _flavor_of(output)
            except UserError:
                lines = output.strip().splitlines()
                what = (f"Grid Engine's ({lines[0]})" if lines and re.match(r"(SGE|OGS|GE|UGE|AGE) \d", lines[0])
                        else repr(lines[0][:60]) if lines else "nothing")
                said.append(f"`{candidate} --version`: {what}")
                continue
            self.paths.setdefault("qstat", candidate)
            for name in ("qsub", *PBS_JOB_COMMANDS):
                sibling = os.path.join(os.path.dirname(candidate), name)
                if os.access(sibling, os.X_OK):
                    self.paths.setdefault(name, sibling)
            return flavor
        if first is not None and len(found) <= 1:
            raise first
        raise UserError(f"no PBS qstat on PATH or PBS_O_PATH: {'; '.join(said) or 'none found'}", field="pbs.flavor",
                        fix="put PBS's bin directory first on PATH, or set pbs.commands.qstat to its absolute path")

    def allocation(self, spec: JobSpec) -> Allocation:
        """:meth:`BatchScheduler.allocation`; where the job file names no ``qstat`` (``pbs.commands``: a user's own
        PBS script calling ``run``) and the one on the job's login ``PATH`` fails (Grid Engine's), PBS's is looked
        for on ``PATH`` and ``PBS_O_PATH`` (:meth:`_locate_qstat`) and asked instead.

        Raises:
            UserError: as :meth:`BatchScheduler.allocation`; no PBS ``qstat`` found (names each one run).
            CommandError: PBS's ``qstat -f`` failed.
        """
        try:
            return super().allocation(spec)
        except CommandError as failed:
            if "qstat" in self.paths or failed.argv[:1] != ["qstat"]:
                raise
            try:
                self._locate_qstat()
            except UserError as none:
                said = (failed.stderr.strip() or failed.stdout.strip() or "no output").splitlines()[-1][:120]
                raise UserError(f"`{shutil.which('qstat') or 'qstat'} {' '.join(failed.argv[1:])}` exited with "
                                f"{failed.returncode} ({said}); {none.message}", field="pbs.commands",
                                fix="put PBS's bin directory first on PATH, or set pbs.commands.qstat") from None
            return super().allocation(spec)

    def fanout_for(self, spec: JobSpec) -> str:
        """``pbsdsh`` on Torque, ``pbs_tmrsh`` on PBS Pro (:data:`launcher.config.spec.PBS_FANOUTS`)."""
        return PBS_FANOUTS[self._assumed(spec)]

    def job_commands(self, spec: JobSpec) -> tuple[str, ...]:
        """The commands ``spec``'s job runs inside its allocation (:data:`launcher.config.spec.PBS_JOB_COMMANDS` but
        the other flavor's fan-out launcher): ``qstat`` (the allocation's walltime), ``qdel`` and the fan-out
        launcher (:meth:`fanout_for`). Both MoMs start the job through a login shell, which resets ``PATH`` despite
        ``-V``, so the submission writes their absolute paths into ``pbs.commands`` (:meth:`settle`)."""
        fanout = self.fanout_for(spec)
        return tuple(name for name in PBS_JOB_COMMANDS if name == fanout or name not in PBS_FANOUTS.values())

    # -- submission -------------------------------------------------------------------------
    def directives(self, spec: JobSpec, run_dir: Path) -> list[str]:
        """``#PBS`` options: name, nodes and cores (Torque ``-l nodes=N:ppn=M``, PBS Pro ``-l select=N:ncpus=M``
        + ``-l place=scatter:excl``: whole nodes with ``batch.exclusive``), walltime, joined output, queue, account,
        environment. Torque has no whole-node request: ``ppn`` is ``batch.cores_per_node`` (the presets set it)."""
        b = spec.batch
        cores = b.cores_per_node or 1
        name = f"hh-{spec.name}"[:15]  # PBS Pro refuses job names over 15 characters on older servers
        lines = [f"-N {name}"]
        if self._assumed(spec) == "torque":
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
        return [*lines, f"-o {run_dir}/batch-pbs.out", "-j oe", "-V", *self.option_directives(spec)]

    def submit_argv(self, script: Path) -> list[str]:
        """``qsub SCRIPT`` (run from the cluster directory).

        Raises:
            UserError: Torque and root (Torque's qsub runs no job as root): refused before ``qsub`` runs.
        """
        if self._flavor == "torque" and os.geteuid() == 0:
            raise _root_refused()
        return [self.own_qsub(), str(script)]

    def own_qsub(self) -> str:
        """PBS's ``qsub``: the one beside PBS's ``qstat`` (found by :meth:`_locate_qstat`: the first ``qstat`` on
        ``PATH`` or ``PBS_O_PATH`` that names a PBS flavour), never another batch system's that comes first on
        ``PATH`` (Grid Engine's, in a login shell OpenPBS's ``/etc/profile.d/pbs.sh`` leaves).

        Raises:
            UserError: PBS's ``qstat`` has no ``qsub`` beside it and the ``qsub`` on ``PATH`` is elsewhere: names both.
        """
        if "qsub" not in self.paths:
            try:
                self._locate_qstat()
            except UserError:
                return "qsub"  # no PBS qstat answers: the qsub on PATH, whose refusal is the batch system's answer
        qsub = self.paths.get("qsub")
        if qsub is not None:
            return qsub
        other = shutil.which("qsub")
        if other is None:
            raise MissingCommand(f"PBS's qsub is not beside its qstat ({self.paths.get('qstat')})", field="scheduler",
                                 fix="install PBS's client commands, or set pbs.commands.qsub")
        raise UserError(f"the qsub on PATH ({other}) is not beside PBS's qstat ({self.paths.get('qstat')}): it is "
                        "another batch system's", field="pbs.commands",
                        fix="put PBS's bin directory first on PATH, or set pbs.commands.qsub to PBS's qsub")

    def submit_refusal(self, error: CommandError) -> Exception:
        """A server that refuses root (:data:`ROOT_REFUSALS`) says so in one line; any other refusal as it is."""
        return _root_refused() if any(text in error.stderr + error.stdout for text in ROOT_REFUSALS) else error

    def parse_job_id(self, stdout: str) -> str:
        """``qsub`` prints the job id on its last line: ``123.server`` (PBS Pro, Torque)."""
        line = stdout.strip().splitlines()[-1].strip() if stdout.strip() else ""
        if not re.fullmatch(r"\d+(\[\d*\])?(\.[\w.-]+)?", line):
            raise UserError(f"qsub printed no job id: {stdout.strip()!r}")
        return line

    def status_argv(self, job_id: str) -> list[str]:
        """``qstat -f ID``: a queued or running job on both flavors, whether PBS Pro keeps job history or not."""
        return [self.program("qstat"), "-f", job_id]

    def status_queries(self, job_id: str) -> list[StatusQuery]:
        """``qstat -f ID`` (:meth:`status_argv`); on PBS Pro then ``qstat -x -f ID`` for a job that ``-f`` no longer
        shows (finished: ``Job has finished, use -x or -H``, exit 35), which answers only when the server keeps job
        history. Both parsed by :func:`qstat_state` (no job in the output: the next query, then ``UNKNOWN``)."""
        queries: list[StatusQuery] = [(self.status_argv(job_id), qstat_state)]
        if self._assumed() == "pbspro":
            queries.append(([self.program("qstat"), "-x", "-f", job_id], qstat_state))
        return queries

    # -- inside an allocation ---------------------------------------------------------------
    def allocation_commands(self, job_id: str, env: Mapping[str, str]) -> dict[str, Command]:
        """``qstat -f $PBS_JOBID`` (:meth:`status_argv`: the job runs, so ``-f`` shows it on both flavors)."""
        return {"qstat": Command(self.status_argv(job_id))}

    def parse_allocation(self, spec: JobSpec, job_id: str, env: Mapping[str, str],
                         outputs: Mapping[str, str]) -> Granted:
        """Nodes from ``PBS_NODEFILE``; cores from the node file's lines per host (or ``PBS_NUM_PPN``/``NCPUS``;
        on PBS Pro :func:`launcher.schedulers.base.whole_node_cores`); walltime and start from ``qstat -f``
        (:func:`walltime_and_start`); memory limit: the job's ``Resource_List.mem`` ÷ nodes.

        Raises:
            OSError: the node file cannot be read.
        """
        lines = [line.strip() for line in Path(env["PBS_NODEFILE"]).read_text().splitlines() if line.strip()]
        names = parse_nodefile("\n".join(lines))
        per_host = lines.count(names[0]) if names else 1
        cores = int(env.get("PBS_NUM_PPN") or env.get("NCPUS") or per_host)
        if self._assumed(spec) == "pbspro":  # place=scatter:excl; Torque has no whole-node request
            cores = whole_node_cores(cores, spec)
        info = parse_qstat_f(outputs["qstat"])
        walltime, start = walltime_and_start(info)
        job_memory = parse_pbs_size(info.get("Resource_List.mem", ""))
        return Granted(names=names, cores=cores, memory_limits=(job_memory and job_memory // max(1, len(names)),),
                       walltime=walltime, start_time=start)


def _root_refused() -> UserError:
    return UserError("Torque refuses jobs submitted by root", field="scheduler",
                     fix="submit as a regular user (Torque's qsub runs no job as root)")


def exit_status(info: Mapping[str, str]) -> int | None:
    """A finished job's exit status from ``qstat -f`` attributes (:data:`EXIT_STATUS`: PBS Pro's ``Exit_status``,
    Torque's ``exit_status``); ``None`` when there is none (a job still queued or running)."""
    for name in EXIT_STATUS:
        value = info.get(name, "").strip()
        if re.fullmatch(r"-?\d+", value):
            return int(value)
    return None


def qstat_state(stdout: str) -> JobState | None:
    """The state in ``qstat -f`` output, from ``job_state``; a finished job (``C``/``F``) is FAILED when its
    exit status (:func:`exit_status`) is not 0; ``None`` when the output holds no ``job_state`` (an empty answer,
    e.g. ``qstat -x -f`` on a PBS Pro server without job history: the job is not known from it)."""
    info = parse_qstat_f(stdout)
    if "job_state" not in info:
        return None
    state = STATES.get(info["job_state"], JobState.UNKNOWN)
    status = exit_status(info)
    if state == JobState.COMPLETED and status in WALLTIME_EXITS:
        return JobState.TIMEOUT
    if state == JobState.COMPLETED and (status in KILLED_EXITS or status is None):  # None: it never ran (qdel)
        return JobState.CANCELLED
    if state == JobState.COMPLETED and status not in (0, None):
        return JobState.FAILED
    return state


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


__all__ = ["PbsScheduler", "PbsSettled", "exit_status", "parse_nodefile", "parse_pbs_duration", "parse_qstat_f",
           "qstat_state", "walltime_and_start"]
