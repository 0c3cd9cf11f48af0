"""``hpc-hadoop results ID [STEP] [-n N]`` and the summary's ``results:`` lines (issue 40): which step a STEP names,
an output's files in part order, which of them Hadoop reads (SequenceFiles, compressed files), the first lines; on a
real index and cluster directory, no daemons. ``hadoop fs -text`` itself on a real SequenceFile, and ``results`` on a
real word count, are in tests/integration/test_local_end_to_end.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.lifecycle.clusters.index import register
from launcher.lifecycle.clusters.results import (
    StepOutputs,
    choose_step,
    first_lines,
    needs_hadoop,
    output_files,
    steps_of,
)
from launcher.lifecycle.report import RunReport, StepRecord, result_lines
from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.errors import UserError
from launcher.util.states import RunState, StepState


def text_output(directory: Path) -> Path:
    """A word count's output as Hadoop leaves it: two parts (written out of order), ``_SUCCESS`` and a hidden
    checksum file, which are not part of it."""
    directory.mkdir(parents=True)
    (directory / "part-r-00001").write_text("c\t1\nd\t4\n")
    (directory / "part-r-00000").write_text("a\t3\nb\t2\n")
    (directory / "_SUCCESS").write_text("")
    (directory / ".part-r-00000.crc").write_bytes(b"crc\x00")
    return directory


def test_an_outputs_files_are_its_parts_in_order_without_hidden_ones(tmp_path: Path) -> None:
    out = text_output(tmp_path / "wc")
    (out / "_temporary" / "0").mkdir(parents=True)
    (out / "_temporary" / "0" / "part-r-00002").write_text("x\t9\n")  # a task's uncommitted output: not a part
    (out / "year=2026").mkdir()
    (out / "year=2026" / "part-00000.csv").write_text("y\n")  # Spark's partitionBy directories: in order
    assert [p.relative_to(out).as_posix() for p in output_files(out)] == [
        "part-r-00000", "part-r-00001", "year=2026/part-00000.csv"]
    assert output_files(out / "part-r-00000") == [out / "part-r-00000"]  # an output that is a file


def test_sequence_files_and_compressed_files_are_read_by_hadoop(tmp_path: Path) -> None:
    (tmp_path / "part-r-00000").write_bytes(b"SEQ\x06\x19org.apache.hadoop.io.Text")  # SequenceFile's header
    (tmp_path / "part-r-00001.gz").write_bytes(b"\x1f\x8b")
    (tmp_path / "part-00000").write_text("SEQUEL\t1\n")  # a text line that starts with SEQ... is still a SequenceFile
    (tmp_path / "part-00001").write_text("sequel\t1\n")
    assert [needs_hadoop(tmp_path / name) for name in ("part-r-00000", "part-r-00001.gz", "part-00001")] == \
        [True, True, False]


def fake_reader(seen: list[str]) -> Callable[[ClusterPlan, Path], Generator[str, None, None]]:
    """A stand-in for ``hadoop fs -text`` (tested for real in the integration tier): ``key<TAB>n`` lines, and
    ``closed`` noted when it is ended early."""
    def read(plan: ClusterPlan, path: Path) -> Generator[str, None, None]:
        try:
            for n in range(100):
                yield f"{path.name}\t{n}"
        finally:
            seen.append(f"closed {path.name}")
    return read


def test_the_first_lines_run_on_across_parts_and_through_hadoops_reader(tmp_path: Path) -> None:
    out = text_output(tmp_path / "wc")
    plan = None  # the reader is given: no plan needed
    assert first_lines(plan, output_files(out), 3) == (["a\t3", "b\t2", "c\t1"], True)  # type: ignore[arg-type]
    assert first_lines(plan, output_files(out), 4) == (["a\t3", "b\t2", "c\t1", "d\t4"], False)  # type: ignore[arg-type]
    assert first_lines(plan, output_files(out), 0)[0] == ["a\t3", "b\t2", "c\t1", "d\t4"]  # type: ignore[arg-type]
    (out / "part-r-00002").write_bytes(b"SEQ\x06")
    seen: list[str] = []
    lines, more = first_lines(plan, output_files(out), 6, hadoop=fake_reader(seen))  # type: ignore[arg-type]
    assert (lines, more) == (["a\t3", "b\t2", "c\t1", "d\t4", "part-r-00002\t0", "part-r-00002\t1"], True)
    assert seen == ["closed part-r-00002"]  # Hadoop's reader ended once no more lines are wanted


def steps(*names: str) -> list[StepOutputs]:
    return [StepOutputs(i, name, (f"/o/{i}",), f"/r/steps/0{i}-{name}.log", "succeeded")
            for i, name in enumerate(names, start=1)]


def test_a_step_is_named_by_number_or_name_as_logs_app_names_it() -> None:
    found = steps("teragen", "terasort", "terasort", "validate")
    assert choose_step(found, "2", where="run.json").number == 2
    assert choose_step(found, "terasort", where="run.json").number == 3  # the last of that name
    with pytest.raises(UserError) as caught:
        choose_step(found, "sort", where="/r/run.json")
    assert str(caught.value).startswith("STEP: no step 'sort' in /r/run.json (steps: 1 teragen, 2 terasort, "
                                        "3 terasort, 4 validate)")


@pytest.fixture
def cluster(tmp_path: Path, make_spec: Callable[..., JobSpec],
            make_test_plan: Callable[..., ClusterPlan]) -> tuple[ClusterPlan, Path]:
    """A finished local cluster in the index: a word count that succeeded (its output with two parts), ``pi`` (no
    output), and a streaming step of its job file that never ran (the run was stopped before it)."""
    out = tmp_path / "pfs" / "me" / "results"
    spec = make_spec(scheduler="local", nodes=1, steps=[
        {"example": "wordcount", "args": [str(tmp_path / "in.txt"), str(out / "wc")]},
        {"example": "pi", "args": [2, 10]},
        {"streaming": {"mapper": "cat", "input": [str(tmp_path / "in.txt")], "output": str(out / "lines")}}])
    plan = make_test_plan(spec)
    run_dir = Path(plan.run_dir)
    run_dir.mkdir(parents=True)
    (run_dir / "plan.json").write_text(plan.to_json())
    text_output(out / "wc")
    logs = [str(run_dir / "steps" / name) for name in ("01-wordcount.log", "02-pi.log")]
    RunReport(cluster_id=plan.cluster_id, run_dir=str(run_dir), scheduler="local", nodes=["n1"],
              state=RunState.STOPPED, steps=[
                  StepRecord(name="wordcount", kind="example", argv=[], log=logs[0], outputs=[str(out / "wc")],
                             state=StepState.SUCCEEDED, returncode=0),
                  StepRecord(name="pi", kind="example", argv=[], log=logs[1], outputs=[], state=StepState.SUCCEEDED,
                             returncode=0)]).write(run_dir / "run.json")
    register(plan.cluster_id, run_dir, "local")
    return plan, out


def test_the_steps_of_a_cluster_are_its_records_then_its_job_files_steps_to_come(
        cluster: tuple[ClusterPlan, Path]) -> None:
    plan, out = cluster
    found = steps_of(plan, RunReport.load(plan.run_dir))
    assert [(s.number, s.name, s.outputs, s.state) for s in found] == [
        (1, "wordcount", (str(out / "wc"),), "succeeded"), (2, "pi", (), "succeeded"),
        (3, "streaming", (str(out / "lines"),), None)]


def test_results_prints_a_steps_first_lines_merged_in_part_order(cluster: tuple[ClusterPlan, Path]) -> None:
    plan, out = cluster
    result = CliRunner().invoke(main, ["results", plan.cluster_id, "wordcount", "-n", "3"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"==> step 1 wordcount: {out / 'wc'} (2 files, 16 B) <==", "a\t3", "b\t2", "c\t1",
        "... (the first 3 lines; -n 0 shows all)"]
    every = CliRunner().invoke(main, ["results", plan.cluster_id, "1", "-n", "0"])
    assert every.exit_code == 0 and every.stdout.splitlines()[1:] == ["a\t3", "b\t2", "c\t1", "d\t4"]


def test_a_bad_step_is_one_line_naming_the_steps_and_exit_2(cluster: tuple[ClusterPlan, Path]) -> None:
    plan, _ = cluster
    result = CliRunner().invoke(main, ["results", plan.cluster_id, "wordcont"])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr == (f"error: STEP: no step 'wordcont' in {plan.run_dir}/run.json (steps: 1 wordcount, 2 pi, "
                             "3 streaming) (fix: give a step's number or name, or leave STEP out for every step)\n")


def test_every_step_a_step_without_output_and_one_that_never_ran(cluster: tuple[ClusterPlan, Path]) -> None:
    """Without STEP, every step in turn: ``pi`` says it has no output and where what it printed is; the step the
    run never reached says so, and the exit code is 1 (an output is not there)."""
    plan, out = cluster
    result = CliRunner().invoke(main, ["results", plan.cluster_id])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"==> step 1 wordcount: {out / 'wc'} (2 files, 16 B) <==" and lines[1:5] == \
        ["a\t3", "b\t2", "c\t1", "d\t4"]
    assert lines[5:] == [f"==> step 2 pi: no output; what it printed: {plan.run_dir}/steps/02-pi.log <==",
                         f"==> step 3 streaming: {out / 'lines'}: never ran: the run ended before it <=="]


def test_an_output_not_there_says_so_with_the_steps_state(cluster: tuple[ClusterPlan, Path]) -> None:
    plan, out = cluster
    report = RunReport.load(plan.run_dir)
    report.steps[0].state = StepState.FAILED
    report.write()
    for path in (out / "wc").iterdir():
        path.unlink()
    result = CliRunner().invoke(main, ["results", plan.cluster_id, "1"])
    assert (result.exit_code, result.stdout) == (1, f"==> step 1 wordcount: {out / 'wc'}: holds no part files "
                                                    "(the step failed) <==\n")


def test_the_summary_and_run_json_end_with_each_steps_results(cluster: tuple[ClusterPlan, Path]) -> None:
    plan, out = cluster
    report = RunReport.load(plan.run_dir)
    assert result_lines(report) == [
        "results:", f"  1 wordcount: {out / 'wc'}",
        f"  2 pi: no output; what it printed: {plan.run_dir}/steps/02-pi.log",
        f"  first lines of each: hpc-hadoop results {plan.cluster_id} [STEP]"]
    data = json.loads(report.to_json())
    assert list(data)[-1] == "results" and data["results"] == [
        {"number": 1, "name": "wordcount", "state": "succeeded", "outputs": [str(out / "wc")],
         "log": f"{plan.run_dir}/steps/01-wordcount.log"},
        {"number": 2, "name": "pi", "state": "succeeded", "outputs": [], "log": f"{plan.run_dir}/steps/02-pi.log"}]
    again = RunReport.parse(report.to_json())  # read back and written again: still last, not twice
    assert list(json.loads(again.to_json()))[-1] == "results"
    report.steps[0].state = StepState.KILLED
    assert result_lines(report)[1] == f"  1 wordcount: {out / 'wc'} (killed: may be partial or missing)"
    assert result_lines(RunReport()) == []
