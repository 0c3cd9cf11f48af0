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
