"""Steps turned into command lines and checked before anything starts (launcher/steps/commands.py)."""

from __future__ import annotations

import getpass
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.runtime.hadoop import FAST_START_FLAGS, HadoopRuntime
from launcher.steps.commands import (
    RUN_JAR,
    ResolvedStep,
    check_step_inputs,
    client_env,
    client_step,
    kill_command,
    resolve_steps,
)
from launcher.util.errors import UserError

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]
RUNJAR = "org.apache.hadoop.util.RunJar"


@pytest.fixture
def resolve(make_spec: SpecFactory, make_test_plan: PlanFactory) -> Callable[..., list[ResolvedStep]]:
    """``resolve(steps, overwrite=False, **spec_fields)``: resolve steps on a 3-node plan."""

    def run(steps: list[dict[str, Any]], *, overwrite: bool = False, check_inputs: bool = True,
            **fields: Any) -> list[ResolvedStep]:
        spec = make_spec(steps=steps, **fields)
        return resolve_steps(spec, make_test_plan(spec), overwrite=overwrite, job_file="job.yaml",
                             check_inputs=check_inputs)

    return run


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """An existing input file."""
    path = tmp_path / "input" / "words.txt"
    path.parent.mkdir()
    path.write_text("a b a\n")
    return path


def after(argv: list[str], marker: str) -> list[str]:
    return argv[argv.index(marker) + 1:]


# -- example steps ------------------------------------------------------------------------------

def test_example_argv(resolve: Callable[..., list[ResolvedStep]], fake_runtime: HadoopRuntime, corpus: Path,
                      tmp_path: Path) -> None:
    out = tmp_path / "out"
    [step] = resolve([{"example": "wordcount", "args": [str(corpus), str(out)],
                       "properties": {"mapreduce.job.reduces": 2, "mapreduce.map.speculative": True}}])
    assert step.kind == "example" and step.name == "wordcount" and step.index == 1
    assert step.argv[0] == str(fake_runtime.java_home / "bin" / "java")
    assert after(step.argv, RUNJAR) == [str(fake_runtime.examples_jar), "wordcount",
                                        "-D", "mapreduce.job.reduces=2", "-D", "mapreduce.map.speculative=true",
                                        str(corpus), str(out)]
    cp = step.argv[step.argv.index("-cp") + 1].split(":")
    # The runtime's jars first (a class-data-sharing archive needs them there), then its directories, conf/ last.
    jars = [e for e in fake_runtime.classpath if e.endswith("/*")]
    dirs = [e for e in fake_runtime.classpath if not e.endswith("/*")]
    assert cp[:-1] == jars + dirs and cp[-1].endswith("/conf")
    assert all(flag in step.argv for flag in FAST_START_FLAGS)
    assert step.inputs == (str(corpus),)
    assert step.outputs == (str(out),)
    assert step.log.name == "01-wordcount.log"


def test_a_job_jar_comes_before_every_directory(make_spec: Callable[..., JobSpec],
                                                make_test_plan: Callable[..., ClusterPlan], tmp_path: Path) -> None:
    """Every directory (each cluster's conf/, another path per cluster) after every jar: one class-data-sharing
    archive of a job client serves every cluster."""
    plan = make_test_plan(make_spec())
    step = client_step(plan, 2, "mine", ["x"], main_class="my.Main", extra_classpath=[tmp_path / "my.jar"])
    cp = step.argv[step.argv.index("-cp") + 1].split(":")
    jars = [e for e in plan.runtime.classpath if e.endswith("/*")]
    dirs = [e for e in plan.runtime.classpath if not e.endswith("/*")]
    assert cp == [*jars, str(tmp_path / "my.jar"), *dirs, str(plan.conf_dir)]


def test_fast_start_false_drops_client_jvm_flags(resolve: Callable[..., list[ResolvedStep]]) -> None:
    [step] = resolve([{"example": "pi", "args": [2, 10]}], hadoop={"fast_start": False})
    assert not any(flag in step.argv for flag in FAST_START_FLAGS)
    assert after(step.argv, RUNJAR)[1:] == ["pi", "2", "10"]
    assert step.outputs == () and step.inputs == ()


@pytest.mark.parametrize(("example", "args", "inputs", "output"), [
    ("wordcount", ["IN", "IN2", "OUT"], ["IN", "IN2"], "OUT"),
    ("teragen", ["-Dmapreduce.job.maps=2", "1000", "OUT"], [], "OUT"),
    ("terasort", ["IN", "OUT"], ["IN"], "OUT"),
    ("teravalidate", ["IN", "OUT"], ["IN"], "OUT"),
])
def test_example_outputs_and_inputs_found_at_the_right_argument(
        resolve: Callable[..., list[ResolvedStep]], tmp_path: Path, example: str, args: list[str],
        inputs: list[str], output: str) -> None:
    paths = {"IN": tmp_path / "in1", "IN2": tmp_path / "in2", "OUT": tmp_path / "result"}
    for name in ("IN", "IN2"):
        paths[name].mkdir()
    [step] = resolve([{"example": example, "args": [str(paths.get(a, a)) for a in args]}])
    assert step.outputs == (str(paths[output]),)
    assert step.inputs == tuple(str(paths[i]) for i in inputs)


def test_explicit_output_field_wins(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path) -> None:
    [step] = resolve([{"example": "pi", "args": [1, 1], "output": "${run_dir}/pi-out"}])
    assert step.outputs == (str(tmp_path / "pfs" / "me" / "hpc-hadoop" / "t-20240101-000000-abcd" / "pi-out"),)


def test_file_scheme_outputs_are_checked_as_local_paths(resolve: Callable[..., list[ResolvedStep]],
                                                        tmp_path: Path) -> None:
    existing = tmp_path / "exists"
    existing.mkdir()
    with pytest.raises(UserError, match="already exists"):
        resolve([{"example": "teragen", "args": [10, f"file://{existing}"]}])
    [step] = resolve([{"example": "teragen", "args": [10, f"file://{tmp_path}/new"]}])
    assert step.outputs == (f"{tmp_path}/new",)


def test_existing_output_needs_overwrite(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(UserError) as info:
        resolve([{"example": "teragen", "args": [10, str(out)]}])
    assert "--overwrite" in str(info.value)
    assert info.value.file == "job.yaml" and info.value.field == "steps.1"
    [step] = resolve([{"example": "teragen", "args": [10, str(out)]}], overwrite=True)
    assert step.outputs == (str(out),)
    assert out.is_dir()  # resolving removes nothing


def test_relative_output_is_an_error(resolve: Callable[..., list[ResolvedStep]]) -> None:
    with pytest.raises(UserError, match="not an absolute path") as info:
        resolve([{"example": "teragen", "args": [10, "out/dir"]}])
    assert "${run_dir}" in info.value.fix


# -- jar steps ----------------------------------------------------------------------------------

def test_jar_step_with_missing_jar(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist") as info:
        resolve([{"jar": str(tmp_path / "missing.jar")}])
    assert info.value.field == "steps.1.jar"
    assert info.value.file == "job.yaml"


def test_jar_step_with_class_runs_the_class_directly(resolve: Callable[..., list[ResolvedStep]],
                                                     fake_runtime: HadoopRuntime) -> None:
    [step] = resolve([{"jar": "${tests_jar}", "class": "org.apache.hadoop.fs.TestDFSIO",
                       "args": ["-write", "-nrFiles", "2"], "properties": {"test.build.data": "/x"}}])
    assert RUNJAR not in step.argv
    cp = step.argv[step.argv.index("-cp") + 1]
    assert f":{fake_runtime.tests_jar}:" in cp and cp.endswith("/conf")  # after the runtime's jars, before conf/
    assert after(step.argv, "-cp")[1:] == ["org.apache.hadoop.fs.TestDFSIO", "-D", "test.build.data=/x",
                                           "-write", "-nrFiles", "2"]
    assert step.kind == "jar" and step.name == "TestDFSIO"


def test_jar_step_without_class_uses_runjar(resolve: Callable[..., list[ResolvedStep]],
                                            fake_runtime: HadoopRuntime, tmp_path: Path) -> None:
    [step] = resolve([{"jar": "${examples_jar}", "args": ["pi", "1", "1"], "output": str(tmp_path / "o")}])
    assert after(step.argv, RUNJAR) == [str(fake_runtime.examples_jar), "pi", "1", "1"]
    assert step.outputs == (str(tmp_path / "o"),)
    assert step.kind == "jar"


def test_jar_step_name_from_explicit_name(resolve: Callable[..., list[ResolvedStep]]) -> None:
    [step] = resolve([{"jar": "${examples_jar}", "name": "my pi", "args": ["pi", "1", "1"]}])
    assert step.name == "my pi"
    assert step.log.name == "01-my_pi.log"


def test_jar_step_name_defaults_to_the_jar_name(resolve: Callable[..., list[ResolvedStep]]) -> None:
    [step] = resolve([{"jar": "${examples_jar}", "args": ["pi", "1", "1"]}])
    assert step.name == "hadoop-mapreduce-examples-3.4.2"


# -- streaming ------------------------------------------------------------------------------------

def test_streaming_with_reducer(resolve: Callable[..., list[ResolvedStep]], fake_runtime: HadoopRuntime,
                                corpus: Path, tmp_path: Path) -> None:
    helper = tmp_path / "mapper.py"
    helper.write_text("print()\n")
    [step] = resolve([{"streaming": {"mapper": "python3 mapper.py", "reducer": "wc -l", "reducers": 3,
                                     "input": [str(corpus), str(corpus.parent / "*.txt")],
                                     "output": str(tmp_path / "s-out"), "files": [str(helper)]},
                       "properties": {"k": "v"}}])
    assert after(step.argv, RUNJAR) == [
        str(fake_runtime.streaming_jar), "-D", "k=v", "-files", str(helper),
        "-input", str(corpus), "-input", str(corpus.parent / "*.txt"), "-output", str(tmp_path / "s-out"),
        "-mapper", "python3 mapper.py", "-reducer", "wc -l", "-numReduceTasks", "3"]
    assert step.kind == "streaming"
    assert step.inputs == (str(corpus), str(corpus.parent / "*.txt"))
    assert step.outputs == (str(tmp_path / "s-out"),)


def test_streaming_map_only(resolve: Callable[..., list[ResolvedStep]], corpus: Path, tmp_path: Path) -> None:
    [step] = resolve([{"streaming": {"mapper": "cat", "input": str(corpus), "output": str(tmp_path / "m")}}])
    tail = after(step.argv, "-output")
    assert tail == [str(tmp_path / "m"), "-mapper", "cat", "-numReduceTasks", "0"]
    assert "-reducer" not in step.argv and "-files" not in step.argv


def test_streaming_reducers_without_a_reducer_is_an_error(resolve: Callable[..., list[ResolvedStep]], corpus: Path,
                                                          tmp_path: Path) -> None:
    """Issue #11: `reducers: 4` without `reducer:` used to run a map-only job (-numReduceTasks 0) silently."""
    with pytest.raises(UserError, match="without a reducer") as info:
        resolve([{"streaming": {"mapper": "cat", "input": str(corpus), "output": str(tmp_path / "m"),
                                "reducers": 4}}])
    assert info.value.field == "steps.1.streaming.reducers" and "reducer: cat" in info.value.fix
    [step] = resolve([{"streaming": {"mapper": "cat", "input": str(corpus), "output": str(tmp_path / "m"),
                                     "reducers": 0}}])
    assert after(step.argv, "-mapper") == ["cat", "-numReduceTasks", "0"]


@pytest.mark.parametrize("output", ["in", "in/sub/out", "in/"])
def test_output_inside_an_input_is_an_error(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path,
                                            output: str) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a\n")
    with pytest.raises(UserError, match="is inside input") as info:
        resolve([{"streaming": {"mapper": "cat", "input": f"{tmp_path}/in/*.txt", "output": f"{tmp_path}/{output}"}}],
                overwrite=True)
    assert info.value.field == "steps.1"
    [step] = resolve([{"example": "wordcount", "args": [f"{tmp_path}/in", f"{tmp_path}/input-counts"]}])
    assert step.outputs == (f"{tmp_path}/input-counts",)


def test_streaming_missing_file_to_ship(resolve: Callable[..., list[ResolvedStep]], corpus: Path,
                                        tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist") as info:
        resolve([{"streaming": {"mapper": "cat", "input": str(corpus), "output": str(tmp_path / "m"),
                                "files": [str(tmp_path / "nope.py")]}}])
    assert info.value.field == "steps.1.streaming.files"


# -- variables ------------------------------------------------------------------------------------

def test_variables_expand(resolve: Callable[..., list[ResolvedStep]], fake_runtime: HadoopRuntime,
                          monkeypatch: pytest.MonkeyPatch, pfs_root: Path) -> None:
    monkeypatch.setenv("MY_ROWS", "1234")
    gen, jar = resolve([{"example": "teragen", "args": ["${MY_ROWS}", "${fs_root}/${name}-${cluster_id}"]},
                        {"jar": "${hadoop_home}/lib/hadoop-streaming-3.4.2.jar", "args": ["${user}", "$$5"]}])
    assert gen.argv[-2:] == ["1234", f"{pfs_root}/t-t-20240101-000000-abcd"]
    assert after(jar.argv, RUNJAR) == [str(fake_runtime.streaming_jar), getpass.getuser(), "$5"]


def test_unknown_variable_lists_known_ones(resolve: Callable[..., list[ResolvedStep]],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_VAR_XYZ", raising=False)
    with pytest.raises(UserError, match=r"unknown variable \$\{NO_SUCH_VAR_XYZ\}") as info:
        resolve([{"example": "teragen", "args": [10, "${NO_SUCH_VAR_XYZ}/out"]}])
    assert info.value.field == "steps.1.args"
    for known in ("${run_dir}", "${cluster_id}", "${fs_root}", "${examples_jar}", "${tests_jar}"):
        assert known in info.value.fix


def test_lone_dollar_is_an_error(resolve: Callable[..., list[ResolvedStep]]) -> None:
    with pytest.raises(UserError, match="bad '\\$'") as info:
        resolve([{"example": "pi", "args": ["$5"]}])
    assert "$$" in info.value.fix


# -- inputs -----------------------------------------------------------------------------------------

def test_input_produced_by_an_earlier_step_is_accepted(resolve: Callable[..., list[ResolvedStep]]) -> None:
    steps = resolve([{"example": "teragen", "args": [100, "${run_dir}/gen"]},
                     {"example": "terasort", "args": ["${run_dir}/gen", "${run_dir}/sorted"]},
                     {"example": "teravalidate", "args": ["${run_dir}/sorted", "${run_dir}/report"]}])
    assert steps[1].inputs == steps[0].outputs
    assert steps[2].inputs == steps[1].outputs
    assert [s.log.name for s in steps] == ["01-teragen.log", "02-terasort.log", "03-teravalidate.log"]


def test_missing_input_is_rejected(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path) -> None:
    with pytest.raises(UserError, match="input .*missing-corpus does not exist") as info:
        resolve([{"example": "wordcount", "args": [str(tmp_path / "missing-corpus"), str(tmp_path / "o")]}])
    assert info.value.field == "steps.1"


def test_input_check_can_wait_for_setup(resolve: Callable[..., list[ResolvedStep]], tmp_path: Path) -> None:
    [step] = resolve([{"example": "wordcount", "args": [str(tmp_path / "later"), str(tmp_path / "o")]}],
                     check_inputs=False)
    with pytest.raises(UserError, match="does not exist"):
        check_step_inputs([step], "job.yaml")
    (tmp_path / "later").write_text("x")
    check_step_inputs([step], "job.yaml")


def test_check_step_inputs_order_matters_and_globs_match(tmp_path: Path) -> None:
    (tmp_path / "part-0.txt").write_text("x")

    def step(index: int, inputs: tuple[str, ...], outputs: tuple[str, ...]) -> ResolvedStep:
        return ResolvedStep(index=index, name=f"s{index}", kind="example", argv=[], inputs=inputs,
                            outputs=outputs, log=tmp_path / f"{index}.log")

    produced = str(tmp_path / "made")
    check_step_inputs([step(1, (str(tmp_path / "*.txt"),), (produced,)), step(2, (produced,), ())])
    with pytest.raises(UserError) as info:
        check_step_inputs([step(1, (produced,), ()), step(2, (), (produced,))])
    assert info.value.field == "steps.1"
    with pytest.raises(UserError):
        check_step_inputs([step(1, (str(tmp_path / "*.csv"),), ())])


# -- the clients' environment and the kill of a step's application ------------------------------------

def test_a_hadoop_clients_environment_and_the_kill_command(make_spec: SpecFactory,
                                                           make_test_plan: PlanFactory) -> None:
    """Issue 38: built here, run by :class:`launcher.steps.jobs.StepRunner` (``yarn application -kill`` of a killed
    step's application: a small client that waits 5 s at most for the ResourceManager)."""
    plan = make_test_plan(make_spec())
    env = client_env(plan)
    assert env["HADOOP_CONF_DIR"] == str(plan.conf_dir) and env == client_env(plan, "streaming")
    argv = kill_command(plan, "application_1_0001")
    assert argv[:2] == [plan.runtime.java, "-Xmx256m"] and RUN_JAR not in argv
    assert "-Dhpc.rm.connect.max-wait.ms=5000" in argv
    assert after(argv, "-cp")[1:] == ["org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", "-kill",
                                      "application_1_0001"]
