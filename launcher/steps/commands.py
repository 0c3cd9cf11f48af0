"""The user's steps turned into command lines: what runs, with which arguments and environment, before anything does.

A step is a Hadoop job client started with ``java`` and the cluster's ``conf/`` on the classpath:

* ``example``: ``RunJar <examples jar> <program> [-D k=v...] args``;
* ``jar`` without ``class``: ``RunJar <jar> [-D k=v...] args`` (the jar's manifest names the class);
* ``jar`` with ``class``: ``java -cp conf:<runtime>:<jar> <class> [-D k=v...] args`` (jars such as the
  jobclient tests jar, whose manifest driver is unusable, docs/architecture.md, Hadoop runtime);
* ``streaming``: ``RunJar <streaming jar> [-D k=v...] [-files ...] -input ... -output ... -mapper ...``;
* ``spark`` and ``pyspark``: ``spark-submit --master yarn ... (--class CLASS JAR | SCRIPT) args``, with the
  cluster's ``spark-conf/`` (:mod:`launcher.render.spark`).

Arguments may use ``${run_dir}``, ``${cluster_id}``, ``${name}``, ``${user}``, ``${fs_root}``,
``${examples_jar}``, ``${tests_jar}``, ``${streaming_jar}``, ``${hadoop_home}`` (and, in a job that uses Spark,
``${spark_home}``, ``${spark_examples_jar}``) and environment variables.

Owns the builders (:func:`resolve_steps` for the job file's steps, :func:`client_step` and :func:`spark_step` for the
benchmarks', :func:`client_env`, :func:`kill_command`, :func:`setup_commands`) and the checks made before anything
starts (:func:`check_step_inputs`). They start no process and write nothing; what they read of the filesystem is
whether the paths a step names exist (and where the Spark runtime is). Running the commands is
:mod:`launcher.steps.jobs`'.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.config.examples import EXAMPLE_INPUT_ARGS, EXAMPLE_OUTPUT_ARG, positional
from launcher.config.spec import (
    SPARK_KINDS,
    ExampleStep,
    JarStep,
    JobSpec,
    PySparkStep,
    SparkStep,
    StreamingStep,
    uses_spark,
)
from launcher.plan.cluster_plan import ClusterPlan, expand
from launcher.render.config import xml_value
from launcher.render.daemons import client_command, hadoop_env
from launcher.util.errors import UserError

if TYPE_CHECKING:  # imported where a Spark step is made: a job without Spark does not import it
    from launcher.render.spark import SparkRuntime

#: Hadoop's jar runner: ``RunJar JAR [CLASS] ARGS`` (the class from the jar's manifest when not given).
RUN_JAR = "org.apache.hadoop.util.RunJar"

#: How long ``yarn application -kill`` waits for the ResourceManager, ms (``hpc.rm.connect.max-wait.ms``, which
#: ``yarn-site.xml`` substitutes; Hadoop's default is 15 min): a killed step whose ResourceManager is gone must
#: not hold teardown up.
KILL_RM_WAIT_MS = 5000


@dataclass(frozen=True)
class ResolvedStep:
    """A step ready to run.

    Attributes:
        index: 1-based position.
        name: display name.
        kind: ``example``, ``jar``, ``streaming``, ``spark`` or ``pyspark``.
        argv: the full command line.
        inputs: input paths (local, may be globs) of the built-in examples and streaming steps.
        outputs: output directories (absolute paths) this step creates.
        log: the step's log file (client output).
    """

    index: int
    name: str
    kind: str
    argv: list[str]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    log: Path


def _local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _d_options(properties: Mapping[str, object]) -> list[str]:
    options = []
    for key, value in properties.items():
        options += ["-D", f"{key}={xml_value(value) if isinstance(value, bool) else value}"]
    return options


def resolve_steps(spec: JobSpec, plan: ClusterPlan, *, overwrite: bool, job_file: str = "job file",
                  check_inputs: bool = True) -> list[ResolvedStep]:
    """Turn the spec's steps into command lines and check them before anything starts.

    Checks: jars and files to ship exist; a streaming step that asks for reducers has a reducer; input paths
    of built-in examples and streaming steps exist (``check_inputs``; a job with ``setup:`` lines checks them
    after setup ran); output directories are absolute, not inside one of the step's inputs, and do not exist
    yet (unless ``overwrite``: they are then removed just before their step runs).

    Raises:
        UserError: a missing jar, file or input, reducers without a reducer, an existing output or one inside
            an input, an unknown variable.
    """
    values = plan.variables()
    spark: SparkRuntime | None = None
    if uses_spark(spec):  # launcher.render.spark: imported by a job that uses Spark only
        from launcher.render.spark import discover_spark, spark_variables

        spark = discover_spark(spec)
        values = {**values, **spark_variables(spark)}
    resolved = []
    for index, step in enumerate(spec.steps, start=1):
        where = f"steps.{index}"
        if isinstance(step, (SparkStep, PySparkStep)):
            assert spark is not None
            kind, name, argv, inputs, outputs = _spark(step, where, values, plan, spark, job_file)
        elif isinstance(step, StreamingStep):
            kind, name, argv, inputs, outputs = _streaming(step, where, values, plan, job_file)
        elif isinstance(step, ExampleStep):
            kind, name, argv, inputs, outputs = _example(step, where, values, plan)
        else:
            kind, name, argv, inputs, outputs = _jar(step, where, values, plan, job_file)
        _check_outputs(outputs, inputs, overwrite=overwrite, job_file=job_file, where=where)
        resolved.append(ResolvedStep(index=index, name=name, kind=kind, argv=argv, log=step_log(plan, index, name),
                                     inputs=tuple(_local_path(i) for i in inputs),
                                     outputs=tuple(_local_path(o) for o in outputs)))
    if check_inputs:
        check_step_inputs(resolved, job_file)
    return resolved


#: What a step resolves to: kind, name, argv, inputs, outputs.
_Resolved = tuple[str, str, list[str], list[str], list[str]]


def client_env(plan: ClusterPlan, kind: str = "jar") -> dict[str, str]:
    """The environment of a step's client of kind ``kind`` (:attr:`ResolvedStep.kind`): for ``spark`` and ``pyspark``
    ``spark-submit``'s (:func:`launcher.render.spark.spark_env`, imported then only), for any other a Hadoop client's
    (:func:`launcher.render.daemons.hadoop_env`): the caller's environment with the cluster's variables.

    Raises:
        UserError: a Spark step, and no Spark runtime is found (:func:`launcher.render.spark.discover_spark`).
    """
    if kind not in SPARK_KINDS:
        return hadoop_env(plan)
    from launcher.render.spark import spark_env

    return spark_env(plan)


def kill_command(plan: ClusterPlan, application_id: str) -> list[str]:
    """``yarn application -kill <application_id>``'s command line (a small client, waiting at most
    :data:`KILL_RM_WAIT_MS` for the ResourceManager); its environment is :func:`client_env`'s."""
    return client_command(plan, "org.apache.hadoop.yarn.client.cli.ApplicationCLI",
                          ["application", "-kill", application_id], heap_mb=256, fast_start=True,
                          properties={"hpc.rm.connect.max-wait.ms": KILL_RM_WAIT_MS})


def step_log(plan: ClusterPlan, index: int, name: str) -> Path:
    """A step's client log: ``steps/<NN>-<name>.log`` in the cluster directory (odd characters as ``_``)."""
    return plan.path("steps", f"{index:02d}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.log")


def client_step(plan: ClusterPlan, index: int, name: str, args: Sequence[str], *, main_class: str = RUN_JAR,
                extra_classpath: Sequence[str | Path] = (), outputs: Sequence[str | Path] = ()) -> ResolvedStep:
    """A job client step built from a main class and its arguments (the benchmarks' steps), ready to run.

    Args:
        index: its number (the log is ``steps/<NN>-<name>.log``).
        args: the program's arguments (generic options such as ``-D k=v`` and ``-libjars`` included); with the
            default ``RunJar``, ``args[0]`` is the jar.
        extra_classpath: jars or directories appended to the client's classpath.
        outputs: output directories the step creates (removed first when run with ``overwrite``).
    """
    argv = client_command(plan, main_class, args, extra_classpath=extra_classpath)
    return ResolvedStep(index=index, name=name, kind="jar", argv=argv, inputs=(),
                        outputs=tuple(str(o) for o in outputs), log=step_log(plan, index, name))


def spark_step(plan: ClusterPlan, index: int, name: str, application: Sequence[str], *,
               executors: int | str = "auto", outputs: Sequence[str | Path] = ()) -> ResolvedStep:
    """A ``spark-submit`` step built from its application part (the benchmarks' Spark steps), ready to run.

    Args:
        index: its number (the log is ``steps/<NN>-<name>.log``).
        application: ``--class CLASS JAR ARGS`` or ``SCRIPT ARGS``.
        executors: ``auto`` or a number (:func:`launcher.render.spark.size_executors`).
        outputs: output directories the step creates (removed first when run with ``overwrite``).

    Raises:
        UserError: no Spark runtime, or executors that do not fit a NodeManager.
    """
    from launcher.render.spark import discover_spark, submit_command

    argv = submit_command(plan, discover_spark(plan.spec), name=f"{plan.spec.name}-{name}", application=application,
                          executors=executors, properties={})
    return ResolvedStep(index=index, name=name, kind="spark", argv=argv, inputs=(),
                        outputs=tuple(str(o) for o in outputs), log=step_log(plan, index, name))


def _streaming(step: StreamingStep, where: str, values: Mapping[str, str], plan: ClusterPlan,
               job_file: str) -> _Resolved:
    """A streaming step's command line.

    Raises:
        UserError: a file to ship is missing, or ``reducers`` > 0 without a ``reducer`` (Hadoop would run a
            map-only job: ``-numReduceTasks 0``).
    """
    s = step.streaming
    ins = [expand(p, values, f"{where}.streaming.input") for p in s.input]
    out = expand(s.output, values, f"{where}.streaming.output")
    files = [expand(p, values, f"{where}.streaming.files") for p in s.files]
    for f in files:
        if not Path(f).exists():
            raise UserError(f"file {f} does not exist", file=job_file, field=f"{where}.streaming.files",
                            fix="give an existing file to ship to the tasks")
    if s.reducers and not s.reducer:
        raise UserError(f"reducers: {s.reducers} without a reducer would run a map-only job", file=job_file,
                        field=f"{where}.streaming.reducers",
                        fix="add reducer: (reducer: cat passes the sorted map output through) or remove reducers")
    args = [str(plan.runtime.streaming_jar), *_d_options(step.properties)]
    if files:
        args += ["-files", ",".join(files)]
    for i in ins:
        args += ["-input", i]
    args += ["-output", out, "-mapper", s.mapper]
    args += ["-reducer", s.reducer] if s.reducer else ["-numReduceTasks", "0"]
    if s.reducers is not None and s.reducer:
        args += ["-numReduceTasks", str(s.reducers)]
    return "streaming", step.name or "streaming", client_command(plan, RUN_JAR, args), ins, [out]


def _example(step: ExampleStep, where: str, values: Mapping[str, str], plan: ClusterPlan) -> _Resolved:
    """A built-in example's command line; its inputs and output from the argument positions it takes."""
    args = [expand(a, values, f"{where}.args") for a in step.args]
    argv = client_command(plan, RUN_JAR, [str(plan.runtime.examples_jar), step.example,
                                          *_d_options(step.properties), *args])
    position = EXAMPLE_OUTPUT_ARG.get(step.example)
    plain = positional(args)
    outputs: list[str] = []
    if step.output:
        outputs = [expand(step.output, values, f"{where}.output")]
    elif position is not None and len(plain) > (position if position >= 0 else -position - 1):
        outputs = [plain[position]]
    inputs = plain[EXAMPLE_INPUT_ARGS[step.example]] if step.example in EXAMPLE_INPUT_ARGS else []
    return "example", step.name or step.example, argv, inputs, outputs


def _jar(step: JarStep, where: str, values: Mapping[str, str], plan: ClusterPlan, job_file: str) -> _Resolved:
    """A user's jar: ``RunJar`` (the manifest's class) or ``java -cp ...:JAR CLASS``.

    Raises:
        UserError: the jar does not exist.
    """
    args = [expand(a, values, f"{where}.args") for a in step.args]
    jar = expand(step.jar, values, f"{where}.jar")
    if not Path(jar).is_file():
        raise UserError(f"jar {jar} does not exist", file=job_file, field=f"{where}.jar",
                        fix="give the path of an existing jar (${examples_jar}, ${tests_jar} work)")
    name = step.name or (step.main_class.rsplit(".", 1)[-1] if step.main_class else Path(jar).stem)
    if step.main_class:
        argv = client_command(plan, step.main_class, [*_d_options(step.properties), *args], extra_classpath=[jar])
    else:
        argv = client_command(plan, RUN_JAR, [jar, *_d_options(step.properties), *args])
    outputs = [expand(step.output, values, f"{where}.output")] if step.output else []
    return "jar", name, argv, [], outputs


def _spark(step: SparkStep | PySparkStep, where: str, values: Mapping[str, str], plan: ClusterPlan,
           runtime: SparkRuntime, job_file: str) -> _Resolved:
    """A ``spark:`` or ``pyspark:`` step's ``spark-submit`` command line (:func:`launcher.render.spark.submit_command`).

    Raises:
        UserError: the jar or script does not exist (``${spark_examples_jar}`` empty: no examples jar is installed),
            or the step's executors do not fit a NodeManager.
    """
    from launcher.render.spark import NO_EXAMPLES_JAR_FIX, submit_command

    if isinstance(step, SparkStep):
        s, key = step.spark, "spark"
        jar = expand(s.jar, values, f"{where}.spark.jar")
        if not jar and runtime.examples_jar is None and "${spark_examples_jar}" in s.jar:
            raise UserError(f"${{spark_examples_jar}} is empty: no Spark examples jar is installed beside the Spark at "
                            f"{runtime.home}", file=job_file, field=f"{where}.spark.jar", fix=NO_EXAMPLES_JAR_FIX)
        if not Path(jar).is_file():
            raise UserError(f"jar {jar or '(empty)'} does not exist", file=job_file, field=f"{where}.spark.jar",
                            fix="give the path of an existing Spark application jar (${spark_examples_jar} works)")
        application = ["--class", s.main_class, jar]
        name = step.name or s.main_class.rsplit(".", 1)[-1]
    else:
        p, key = step.pyspark, "pyspark"
        script = expand(p.script, values, f"{where}.pyspark.script")
        if not Path(script).is_file():
            raise UserError(f"script {script} does not exist", file=job_file, field=f"{where}.pyspark.script",
                            fix="give the path of an existing Python file (relative: the job file's directory)")
        application = [script]
        name = step.name or Path(script).stem
    inner = step.spark if isinstance(step, SparkStep) else step.pyspark
    args = [expand(a, values, f"{where}.{key}.args") for a in inner.args]
    outputs = [expand(inner.output, values, f"{where}.{key}.output")] if inner.output else []
    argv = submit_command(plan, runtime, name=f"{plan.spec.name}-{name}", application=[*application, *args],
                          executors=inner.executors, properties=step.properties)
    return key, name, argv, [], outputs


def _fixed_prefix(path: str) -> str:
    """The part of an input path before its first glob character's directory (``/d/in/*.txt`` → ``/d/in``)."""
    parts = Path(path).parts
    for i, part in enumerate(parts):
        if any(c in part for c in "*?[{"):
            return str(Path(*parts[:i])) if i else ""
    return path


def _check_outputs(outputs: list[str], inputs: list[str], *, overwrite: bool, job_file: str, where: str) -> None:
    """Each output is absolute, not inside (or equal to) one of the step's inputs, and new unless ``overwrite``.

    Raises:
        UserError: a relative output, one inside an input (Hadoop would read what it writes, and ``--overwrite``
            would delete the input), or one that exists already.
    """
    for out in outputs:
        local = _local_path(out)
        if not os.path.isabs(local):
            raise UserError(f"output {out!r} is not an absolute path", file=job_file, field=where,
                            fix="use an absolute path, e.g. ${run_dir}/output/NAME")
        real = os.path.abspath(local)
        for given in inputs:
            prefix = _fixed_prefix(_local_path(given))
            inside = os.path.abspath(prefix) if prefix else None
            if inside and (real == inside or real.startswith(inside.rstrip("/") + "/")):
                raise UserError(f"output {out} is inside input {given}", file=job_file, field=where,
                                fix="write the output outside the input directory, e.g. ${run_dir}/output/NAME")
        if os.path.lexists(local) and not overwrite:
            raise UserError(f"output {out} already exists", file=job_file, field=where,
                            fix="choose another output directory, or pass --overwrite to replace it")


def check_step_inputs(steps: list[ResolvedStep], job_file: str = "job file") -> None:
    """Check that every input exists, or is the output of an earlier step.

    Raises:
        UserError: an input path (or glob) matches nothing.
    """
    produced: set[str] = set()
    for step in steps:
        for path in step.inputs:
            if path not in produced and not any(Path(path).parent.glob(Path(path).name)):
                raise UserError(f"input {path} does not exist", file=job_file, field=f"steps.{step.index}",
                                fix="give an existing file or directory (absolute path)")
        produced.update(step.outputs)


def setup_commands(spec: JobSpec, plan: ClusterPlan) -> list[str]:
    """The job file's ``setup:`` lines with ``${...}`` expanded."""
    values = plan.variables()
    return [expand(line, values, f"setup.{i}") for i, line in enumerate(spec.setup, start=1)]
