"""Tests of launcher/lifecycle/submit.py."""

from __future__ import annotations

import getpass
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.lifecycle import front as front_module
from launcher.lifecycle import submit as submit_module
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import CommandError, UserError
from tests.unit.schedulers.test_pbs import STANDINS as PBS_STANDINS

# -- issue 11, folded from tests/unit/test_relative_paths.py: Issue #11: relative paths in a job file mean the
# job file's directory, and the submitted job.yaml holds them absolute (launcher/config/spec.py
# ``absolute_paths``): the run happens in the cluster directory, not where `submit` ran.


def test_submitted_job_yaml_holds_absolute_paths(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 fake_runtime: HadoopRuntime) -> None:
    """Issue 11 (was ``tests/unit/test_relative_paths.py``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)
    monkeypatch.setattr(SlurmScheduler, "check", lambda self, spec: None)  # no sinfo: not what is tested here
    spec, _ = load_spec(project / "job.yaml", sets=["scheduler=slurm", "filesystem.shared=true"])
    front = front_module.front_door("submit", spec, project / "job.yaml")
    run_dir = submit_module.make_cluster_dir(front, project / "job.yaml", command="submit")
    written = yaml.safe_load((run_dir / "job.yaml").read_text())
    assert written["steps"][0]["jar"] == str(project / "target" / "myjob-1.0.jar")
    assert written["steps"][3]["streaming"]["files"] == [str(project / "mapper.py")]
    assert str(run_dir).startswith(str(project / "pfs"))


# -- issue 25 item 10, folded from tests/unit/test_small_fixes.py: Small things a user saw on real PBS and in
# a run's progress (issue 25 item 10): a submission the batch system refuses leaves nothing on the filesystem;
# ``render`` says which YARN sizes the allocation decides when the job runs; a step that never submitted a job
# shows no progress it never made.


@pytest.fixture
def pbs_standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], None]:
    """The PBS stand-in commands first on PATH; call with the flavor (``torque``, ``pbspro``)."""
    monkeypatch.setenv("PATH", f"{PBS_STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PBS_STANDIN_DIR", str(tmp_path / "standin"))
    return lambda flavor: monkeypatch.setenv("PBS_STANDIN_FLAVOR", flavor)


def test_a_refused_root_submission_on_torque_leaves_nothing(pbs_standins: Callable[[str], None],
                                                           monkeypatch: pytest.MonkeyPatch, pfs_root: Path,
                                                           make_spec: Callable[..., JobSpec],
                                                           fake_runtime: HadoopRuntime) -> None:
    """Item 10: Torque runs no job of root's (refused before qsub); the cluster directory made for it went, but
    ``<root>/root/hpc-hadoop`` stayed, empty.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    pbs_standins("torque")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)
    spec = make_spec(scheduler="pbs", nodes=1, filesystem={"root": str(pfs_root), "shared": True})
    with pytest.raises(UserError, match="Torque refuses jobs submitted by root"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(pfs_root.iterdir()) == []


def test_a_refused_submission_keeps_the_users_own_directories(pbs_standins: Callable[[str], None],
                                                              monkeypatch: pytest.MonkeyPatch, pfs_root: Path,
                                                              make_spec: Callable[..., JobSpec],
                                                              fake_runtime: HadoopRuntime) -> None:
    """A server's refusal (PBS Pro, an unknown queue) removes what the submission made, and only that: the user's
    own directory under the root, and another cluster's directory, stay.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    pbs_standins("pbspro")
    monkeypatch.setenv("PBS_STANDIN_REFUSE", "qsub: Unknown queue MSG=cannot locate queue")
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)
    spec = make_spec(scheduler="pbs", nodes=1, filesystem={"root": str(pfs_root), "shared": True})
    mine = pfs_root / getpass.getuser()
    mine.mkdir()
    with pytest.raises(CommandError, match="Unknown queue"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(pfs_root.iterdir()) == [mine] and list(mine.iterdir()) == []
    other = mine / "hpc-hadoop" / "other-cluster"
    other.mkdir(parents=True)
    with pytest.raises(CommandError, match="Unknown queue"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(other.parent.iterdir()) == [other]


# -- issue 37 item 8: one state and one exit code per way a run ends, in run.json, submit --wait, list and status --

def _ended_run(tmp_path: Path, ending: BaseException | None, *, hold: bool = False,
               step_exit: int | None = None) -> Path:
    """A cluster directory whose run ``ending`` ended (``None``: a held cluster stopped by ``hpc-hadoop stop`` once
    up, as :meth:`ClusterRun.hold` leaves it; with ``step_exit``, a run whose one step exited so, as
    :func:`launcher.lifecycle.runner.run_steps` records it), its ``run.json`` written by the runner itself (no
    daemons)."""
    from launcher.lifecycle.report import StepRecord
    from launcher.lifecycle.runner import ClusterRun, materialize, prepare
    from launcher.schedulers import get_scheduler
    from launcher.util.states import RunState, StepState

    spec, _ = load_spec(None, data={"name": "ending", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    session = ClusterRun(plan, hold=hold)
    if step_exit is not None:
        session.report.bringup_s = 1.0
        session.report.steps.append(StepRecord(name="exit3", state=StepState.FAILED, returncode=step_exit))
        session.fail(f"step 1 (exit3) failed with exit code {step_exit}; read {plan.run_dir}/steps/01-exit3.log")
    elif ending is None:
        session.report.bringup_s = 1.0
        session.report.state = RunState.STOPPED  # what hold() sets once `stop` asked
    session.__exit__(type(ending) if ending else None, ending, None)
    return Path(plan.run_dir)


def _follow_and_list(monkeypatch: pytest.MonkeyPatch, run_dir: Path, batch_end: str) -> tuple[int, str, str]:
    """``submit --wait`` (:func:`follow`) of PBS job ``10.pbshost`` seen running, then ``batch_end``, and
    ``hpc-hadoop status`` of its cluster afterwards: ``(exit code, the last line follow printed, status's state)``."""
    from types import SimpleNamespace

    from launcher.lifecycle.clusters.index import register
    from launcher.lifecycle.clusters.status import BatchAnswer, status_of
    from launcher.schedulers.allocation import JobState
    from launcher.schedulers.pbs import PbsScheduler
    from launcher.util import polling

    states = iter([JobState.RUNNING, JobState(batch_end)])
    monkeypatch.setattr(PbsScheduler, "state", lambda self, job_id: next(states))
    monkeypatch.setattr(polling, "time", SimpleNamespace(monotonic=lambda: 0.0, sleep=lambda seconds: None))
    out = io.StringIO()
    code = submit_module.follow(PbsScheduler(), "10.pbshost", run_dir, run_dir / "none.out",
                                Console(file=out, width=300, highlight=False))
    register(run_dir.name, run_dir, "pbs", "10.pbshost")
    shown = status_of({"cluster_id": run_dir.name, "run_dir": str(run_dir), "scheduler": "pbs",
                       "job_id": "10.pbshost"}, job_state=lambda scheduler, job_id: BatchAnswer(JobState(batch_end)))
    return code, out.getvalue().splitlines()[-1], shown.state


def test_qdel_of_a_running_cluster_is_cancelled_143_in_run_json_submit_wait_and_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37 item 8: ``qdel`` of a running cluster (OpenPBS sends SIGTERM; the launcher tears down) printed
    ``job 10.pbshost: cancelled`` and exited 130 while ``list`` said ``interrupted``. Now every one of them says
    ``cancelled`` and 143 (128 + SIGTERM)."""
    import json
    import signal

    from launcher.lifecycle.signals import Interrupted

    run_dir = _ended_run(tmp_path, Interrupted(signal.SIGTERM))
    report = json.loads((run_dir / "run.json").read_text())
    assert (report["state"], report["exit_code"]) == ("cancelled", 143)
    assert _follow_and_list(monkeypatch, run_dir, "cancelled") == (143, "job 10.pbshost: cancelled", "cancelled")


@pytest.mark.parametrize(("hold", "batch_end", "word", "code"), [
    (True, "completed", "stopped", 0),    # a held cluster (`start`), up, then `hpc-hadoop stop`: its normal end
    (False, "failed", "cancelled", 143),  # `stop` during a step of a `submit`ted run: the launcher exits 143
])
def test_a_cluster_ended_by_stop_shows_the_runs_state_in_submit_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     hold: bool, batch_end: str, word: str,
                                                                     code: int) -> None:
    """Issue 37 item 8: a cluster ended by ``hpc-hadoop stop`` printed ``job 5.pbshost: failed`` (PBS's word for a
    job that exited non-zero) or ``completed``: ``submit --wait`` now ends with the run's own state, as ``list`` and
    ``status`` show it, and exits with the exit code ``run.json`` records for it."""
    import json

    from launcher.util.errors import StopRequested

    run_dir = _ended_run(tmp_path, None if hold else StopRequested("during step 1 (pi)"), hold=hold)
    report = json.loads((run_dir / "run.json").read_text())
    assert (report["state"], report["exit_code"]) == (word, code)
    assert _follow_and_list(monkeypatch, run_dir, batch_end) == (code, f"job 10.pbshost: {word}", word)


def test_submit_wait_of_a_torque_job_whose_step_exited_3_prints_failed_and_exits_3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 item 10 on Torque, whose server keeps the finished job (``job_state = C``, ``exit_status = 3``):
    ``submit --wait`` (:func:`follow`, through the stand-in ``qstat``) prints the job running, then ``failed`` (never
    ``completed``), and exits 3, the exit code ``run.json`` records for the failed step. (Until issue 38 this was
    tests/integration/test_pbs.py's cluster of its own; PBS Pro's server without job history, which forgets the job at
    once, is the second step of that module's ``test_wordcount_then_a_step_that_exits_3_through_standin_pbs_pro``.)"""
    import json
    import subprocess
    import threading
    import time

    from launcher.schedulers.pbs import PbsScheduler

    state = tmp_path / "standin"
    monkeypatch.setenv("PATH", f"{PBS_STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PBS_STANDIN_DIR", str(state))
    monkeypatch.setenv("PBS_STANDIN_FLAVOR", "torque")
    monkeypatch.setenv("PBS_STANDIN_HISTORY", "1")
    run_dir = _ended_run(tmp_path, None, step_exit=3)
    report = json.loads((run_dir / "run.json").read_text())
    assert (report["state"], report["exit_code"]) == ("failed", 3)
    # The job's script ends (exit 3, as the batch script does after a failed run) once follow() has shown it running.
    gate, script = tmp_path / "gate", tmp_path / "batch.sh"
    script.write_text(f"#!/bin/bash\n#PBS -N exit3\n#PBS -o {tmp_path}/job.out\n"
                      f"while [ ! -e {gate} ]; do sleep 0.1; done\nexit 3\n")
    job_id = subprocess.run(["qsub", str(script)], capture_output=True, text=True, check=True).stdout.strip()
    out = io.StringIO()

    def open_the_gate() -> None:
        deadline = time.monotonic() + 60
        while "running" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        gate.touch()

    opener = threading.Thread(target=open_the_gate, daemon=True)
    opener.start()
    try:
        code = submit_module.follow(PbsScheduler(), job_id, run_dir, tmp_path / "job.out",
                                    Console(file=out, width=300, highlight=False))
    finally:
        gate.touch()
        opener.join(timeout=5)
    said = out.getvalue().splitlines()
    assert code == 3, said
    assert said == [f"job {job_id}: running", f"job {job_id}: failed"], said
    assert "exit_status = 3" in subprocess.run(["qstat", "-f", job_id], capture_output=True, text=True,
                                               check=False).stdout


def test_an_old_run_json_that_says_interrupted_for_a_sigterm_reads_as_it_is(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``run.json`` of the release before, where SIGTERM was ``interrupted`` (130): read as it says, by
    ``submit --wait`` and ``status`` alike (an old value stays readable)."""
    import json

    run_dir = tmp_path / "old"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"state": "interrupted", "exit_code": 130, "bringup_s": 2.0,
                                                  "error": "stopped by SIGTERM"}))
    assert _follow_and_list(monkeypatch, run_dir, "cancelled") == (130, "job 10.pbshost: interrupted", "interrupted")
