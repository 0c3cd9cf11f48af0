"""Tests of launcher/lifecycle/progress.py."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from launcher.lifecycle.progress import ConsoleObserver
from launcher.steps.jobs import StepResult

# -- issue 25 item 10, folded from tests/unit/test_small_fixes.py: Small things a user saw on real PBS and in
# a run's progress (issue 25 item 10): a submission the batch system refuses leaves nothing on the filesystem;
# ``render`` says which YARN sizes the allocation decides when the job runs; a step that never submitted a job
# shows no progress it never made.


@pytest.mark.parametrize("live", [False, True])
def test_a_step_that_never_submitted_a_job_shows_no_progress(live: bool) -> None:
    """Item 10: a jar step whose client failed before it submitted a job printed ``map 0% reduce 0% (failed)``.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, force_terminal=live, width=200))
    observer.phase("step 1/2 myjar")
    observer.progress(StepResult(name="myjar", kind="jar", argv=[], log="1.log", outputs=[], returncode=1,
                                 state="failed"))
    observer.phase("step 2/2 wordcount")
    submitted = StepResult(name="wordcount", kind="example", argv=[], log="2.log", outputs=[], returncode=1,
                           state="failed", application_id="application_1_0001", map_pct=100, reduce_pct=30)
    observer.progress(submitted)
    observer.close()
    text = out.getvalue()
    assert ("failed (exit code 1, no job submitted)" if live else "myjar: failed (exit code 1, no job submitted)") \
        in text, text
    assert not [line for line in text.splitlines() if "myjar" in line and "%" in line], text
    assert "reduce  30%" in text and "application_1_0001" in text, text


# -- issue 28 item 2: a batch log has one line per event: bring-up events, Spark stages and tasks.


def test_a_batch_log_has_one_line_per_event_spark_in_stages_and_tasks() -> None:
    """Issue 28 item 2: no live redraws into a file; the bring-up's events as lines; a Spark step in stages and
    tasks (a line per stage, per tenth of its tasks and per state), never ``map N%``."""
    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, width=80))
    observer.phase("bring-up")
    observer.event("n1: NodeManager started (pid 4242)")
    observer.event("n1: NodeManager registered (1/1)")
    observer.phase("step 1/1 kmeans")
    step = StepResult(name="kmeans", kind="spark", argv=[], log="1.log", outputs=[], state="running",
                      application_id="application_1_0001")
    observer.progress(step)
    step.stage, step.stage_tasks = 0, 200
    for done in range(201):
        step.stage_done = done
        observer.progress(step)
    step.stages_done, step.stage, step.stage_done, step.stage_tasks = 1, 1, 0, 2
    observer.progress(step)
    step.state = "succeeded"
    observer.progress(step)
    observer.close()
    lines = [line.split("] ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines[:4] == ["bring-up", "n1: NodeManager started (pid 4242)", "n1: NodeManager registered (1/1)",
                         "step 1/1 kmeans"], lines
    assert lines[4] == "kmeans: no stage started yet  application_1_0001 (running)"
    assert lines[5:] == [f"kmeans: stage 0: {done}/200 tasks  application_1_0001 (running)"
                         for done in range(0, 201, 20)] + [
        "kmeans: stage 1: 0/2 tasks, 1 stage done  application_1_0001 (running)",
        "kmeans: stage 1: 0/2 tasks, 1 stage done  application_1_0001 (succeeded)"], lines
    assert "map" not in out.getvalue() and "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
