"""``hpc-hadoop results ID [STEP] [-n N]``: where each step's outputs are and their first lines (issue 40).

A step is named as ``logs --app STEP`` names it (:func:`choose_step`): by its number (its place in ``run.json``'s
``steps``, 1-based, then the job file's steps still to come) or its name, the last of that name. Its outputs are the
directories (or files) it declared (``run.json``'s ``outputs``; a job-file step not recorded yet: the one
:func:`launcher.steps.commands.resolve_steps` gives it). An output directory's files are read in part order
(:func:`output_files`: every file whose name and directories start with neither ``_`` nor ``.``, Hadoop's own rule
for the files of a job's input, sorted by path: ``part-r-00000``, ``part-r-00001``...). A text file is read here; a
SequenceFile (its first bytes ``SEQ``) or a compressed file (``.gz``, ``.deflate``, ``.bz2``...) through Hadoop's own
reader, ``hadoop fs -text`` of the cluster's ``bin/hadoop`` (:func:`launcher.render.clients.fs_text_command`), which
needs no running daemon: the cluster's default filesystem is the shared one (``file://``).

Owns :class:`StepOutputs`, :func:`steps_of`, :func:`choose_step`, :func:`output_files`, :func:`needs_hadoop` and
:func:`first_lines`; writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from launcher.lifecycle.report import RunReport
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import fs_text_command
from launcher.util.errors import UserError

#: Bytes a SequenceFile starts with (Hadoop's ``SequenceFile`` header: ``SEQ`` and a version byte).
SEQUENCE_FILE_MAGIC = b"SEQ"
#: File name endings of the compression codecs Hadoop ships (``CompressionCodecFactory``'s defaults), whose files
#: ``hadoop fs -text`` decompresses.
COMPRESSED_SUFFIXES = (".gz", ".deflate", ".bz2", ".snappy", ".lz4", ".zst")
#: Lines ``results`` shows of each output by default.
DEFAULT_LINES = 20


@dataclass(frozen=True)
class StepOutputs:
    """One step of a cluster, as ``results`` shows it.

    Attributes:
        number: its number (1-based: its place in ``run.json``'s ``steps``, then the job file's steps not recorded
            yet).
        name: its name.
        outputs: its output directories or files (absolute); empty when it declares none.
        log: its client log (``steps/NN-name.log``).
        state: how it ended (``succeeded``, ``failed``, ``killed``), or ``None`` when it has not ended (running, or
            still to come).
    """

    number: int
    name: str
    outputs: tuple[str, ...]
    log: str
    state: str | None


def steps_of(plan: ClusterPlan, report: RunReport | None) -> list[StepOutputs]:
    """The steps of a cluster: those ``run.json`` records (ended), then those of its job file that it does not record
    yet (running, or still to come; resolved from the plan, :func:`launcher.steps.commands.resolve_steps`; none when
    they cannot be resolved any more, e.g. a jar deleted since)."""
    recorded = report.steps if report is not None else []
    found = [StepOutputs(number, step.name, tuple(step.outputs), step.log, str(step.state))
             for number, step in enumerate(recorded, start=1)]
    if len(plan.spec.steps) > len(recorded):
        from launcher.steps.commands import resolve_steps

        try:
            resolved = resolve_steps(plan.spec, plan, overwrite=True, check_inputs=False)
        except UserError:
            resolved = []
        found += [StepOutputs(step.index, step.name, step.outputs, str(step.log), None)
                  for step in resolved[len(recorded):]]
    return found


def choose_step(steps: list[StepOutputs], given: str, *, where: str) -> StepOutputs:
    """The step ``given`` names: its number, else its name (the last step of that name), as ``logs --app STEP``.

    Raises:
        UserError: no step of that number or name: one line listing the steps there are (``where``: the file that
            lists them, for the line).
    """
    chosen = [s for s in steps if given in (str(s.number), s.name)]
    if chosen:
        return chosen[-1]
    names = ", ".join(f"{s.number} {s.name}" for s in steps) or "none"
    raise UserError(f"no step {given!r} in {where} (steps: {names})", field="STEP",
                    fix="give a step's number or name, or leave STEP out for every step")


def output_files(output: Path) -> list[Path]:
    """The files of one output, in part order: the output itself when it is a file; for a directory every file below
    it whose name, and the name of every directory between, starts with neither ``_`` nor ``.`` (``_SUCCESS``,
    ``_temporary/``, ``.part-r-00000.crc`` left out, as Hadoop leaves them out of a job's input), sorted by their
    path below it (``part-r-00000`` before ``part-r-00001``; Spark's ``key=value/`` directories in order)."""
    if not output.is_dir():
        return [output]
    found = []
    for directory, subdirectories, files in os.walk(output):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith(("_", ".")))
        found += [Path(directory, name) for name in files if not name.startswith(("_", "."))]
    return sorted(found, key=lambda path: path.relative_to(output).parts)


def needs_hadoop(path: Path) -> bool:
    """Whether ``path`` is read through Hadoop (``hadoop fs -text``): a SequenceFile (its first bytes are
    :data:`SEQUENCE_FILE_MAGIC`) or a file of a compression codec (:data:`COMPRESSED_SUFFIXES`)."""
    if path.name.endswith(COMPRESSED_SUFFIXES):
        return True
    with open(path, "rb") as handle:
        return handle.read(len(SEQUENCE_FILE_MAGIC)) == SEQUENCE_FILE_MAGIC


def _text_lines(path: Path) -> Generator[str, None, None]:
    """The lines of a text file, without their line ends (bad UTF-8 replaced, as Hadoop's ``Text.toString`` does)."""
    with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:
        for line in handle:
            yield line.rstrip("\n")


def _hadoop_lines(plan: ClusterPlan, path: Path) -> Generator[str, None, None]:
    """The lines ``hadoop fs -text`` prints of ``path`` (:func:`launcher.render.clients.fs_text_command`); the reader
    is ended once no more are wanted (the generator closed).

    Raises:
        UserError: it printed nothing and failed: its last error line.
    """
    argv, env = fs_text_command(plan, path)
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL,
                                text=True, errors="replace")
        assert proc.stdout is not None
        printed = False
        try:
            for line in proc.stdout:
                printed = True
                yield line.rstrip("\n")
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.stdout.close()
            code = proc.wait()
        if code != 0 and not printed:
            errors.seek(0)
            said = [line for line in errors.read().decode(errors="replace").splitlines() if line.strip()]
            raise UserError(f"hadoop fs -text {path} failed (exit code {code}): {said[-1] if said else 'no output'}",
                            field="STEP", fix=f"read it with `hpc-hadoop exec {plan.cluster_id} -- hadoop fs -text "
                                              f"{path}`")


#: A reader of the files Hadoop reads (:func:`_hadoop_lines`): the plan and the file → its lines.
HadoopReader = Callable[[ClusterPlan, Path], Generator[str, None, None]]


def first_lines(plan: ClusterPlan, files: list[Path], count: int,
                hadoop: HadoopReader = _hadoop_lines) -> tuple[list[str], bool]:
    """The first ``count`` lines (0: all) of ``files`` read one after the other (text files here, the others through
    ``hadoop``: :func:`needs_hadoop`).

    Returns:
        The lines, and whether there are more.

    Raises:
        UserError: Hadoop's reader failed on a file.
    """
    lines: list[str] = []
    for path in files:
        reader = hadoop(plan, path) if needs_hadoop(path) else _text_lines(path)
        try:
            for line in reader:
                if count and len(lines) == count:
                    return lines, True
                lines.append(line)
        finally:
            reader.close()  # ends Hadoop's reader
    return lines, False
