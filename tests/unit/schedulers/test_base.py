"""What ``BatchScheduler`` (launcher/schedulers/base.py) does for every backend: it runs the commands the backend
builds, tries the status queries in order, polls (``wait``), reads the allocation through one ``allocation()``
on recorded outputs of Slurm, PBS and Grid Engine, and settles the PBS flavor (``render`` where ``qstat`` is not
installed renders for PBS Pro and says so). Every wait of ``submit``, ``start`` and ``stop`` goes through
launcher/util/polling.py: ``follow`` and ``_wait_released`` are checked here on a fake clock.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.lifecycle import front as front_module
from launcher.lifecycle import submit as submit_module
from launcher.lifecycle.clusters import index as cluster_index
from launcher.lifecycle.clusters import status as cluster_status
from launcher.lifecycle.clusters import stop as cluster_stop
from launcher.lifecycle.clusters.status import BatchAnswer, ClusterStatus
from launcher.lifecycle.submit import SubmitRecord
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers import base
from launcher.schedulers.base import (
    JobState,
    MissingCommand,
    NoAnswer,
    Settled,
    cgroup_memory_limit,
    granted_memory,
    state_of,
    teardown_lead,
)
from launcher.schedulers.pbs import PbsScheduler, PbsSettled
from launcher.schedulers.sge import SgeScheduler
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util import polling, yamlio
from launcher.util.errors import CommandError, UserError
from launcher.util.states import ClusterState
from launcher.util.units import MiB, parse_walltime
from tests.conftest import REPO
from tests.unit.schedulers.test_pbs import STANDINS as PBS_STANDINS
from tests.unit.schedulers.test_pbs import TORQUE_QSTAT_F
from tests.unit.schedulers.test_sge import QSTAT, QSTAT_J
from tests.unit.util.test_polling import FakeTime

SLURM_DATA = REPO / "tests" / "data" / "slurm"
#: What Slurm 22.05's squeue/scontrol print (exit 1) for a job slurmctld no longer knows, and while slurmctld is
#: stopped (recorded on the test cluster).
FORGOT = "slurm_load_jobs error: Invalid job id specified"
DOWN = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"


class Commands:
    """Stands in for ``run_command``: answers from ``outputs`` (argv joined → (returncode, stdout), a list of them
    answers in turn) and records each call as (argv, check). A command is known by its base name: a backend runs
    its batch system's own installation (``/usr/bin/qstat``: :meth:`BatchScheduler.installed`), which the tests of
    ``tests/integration/test_sge.py`` and ``test_pbs.py`` check with two batch systems on ``PATH``."""

    def __init__(self, outputs: dict[str, Any]) -> None:
        self.outputs = outputs
        self.calls: list[tuple[list[str], bool]] = []

    def __call__(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        check = bool(kwargs.get("check", True))
        argv = [os.path.basename(argv[0]), *argv[1:]] if argv else argv
        self.calls.append((argv, check))
        answer = self.outputs[" ".join(argv)]
        code, out = answer.pop(0) if isinstance(answer, list) else answer
        if check and code:
            raise CommandError(argv, code, out, "")
        return subprocess.CompletedProcess(argv, code, out, "")

    @property
    def argvs(self) -> list[str]:
        return [" ".join(argv) for argv, _ in self.calls]


def fake_commands(monkeypatch: pytest.MonkeyPatch, outputs: dict[str, Any]) -> Commands:
    commands = Commands(outputs)
    monkeypatch.setattr(base, "run_command", commands)
    return commands


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    """The polling loop's clock and sleep, faked: nothing sleeps."""
    clock = FakeTime()
    monkeypatch.setattr(polling, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    return clock


# -- state: the queries in order ------------------------------------------------------------------------

def test_state_stops_at_the_first_query_that_knows_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    commands = fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": (0, "PENDING\n")})
    assert SlurmScheduler().state("7") is JobState.PENDING
    assert commands.calls == [(["squeue", "-h", "-j", "7", "-o", "%T"], False)]


@pytest.mark.parametrize(("squeue", "scontrol", "expected"), [
    ((1, FORGOT), (0, "JobId=7 JobState=COMPLETED Reason=None"), JobState.COMPLETED),  # forgot: next query
    ((0, "\n"), (0, "JobId=7 JobState=CANCELLED by 1000"), JobState.CANCELLED),      # parser says None: next query
    ((0, ""), (0, "JobId=7 Reason=None"), JobState.UNKNOWN),                          # none answered
    ((1, FORGOT), (1, FORGOT), JobState.UNKNOWN),
    ((1, DOWN), (0, ""), JobState.NO_ANSWER),
])
def test_state_falls_through_the_queries(monkeypatch: pytest.MonkeyPatch, squeue: tuple[int, str],
                                         scontrol: tuple[int, str], expected: JobState) -> None:
    commands = fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": squeue, "scontrol show job -o 7": scontrol})
    answer = SlurmScheduler().state("7")
    assert state_of(answer) is expected
    if expected is JobState.NO_ANSWER:  # the value says which command gave no answer, and what it printed
        assert answer == NoAnswer(("squeue", "-h", "-j", "7", "-o", "%T"), 1, DOWN, "")
        assert str(answer) == f"`squeue -h -j 7 -o %T` exited with 1: {DOWN}"
    asked = ["squeue -h -j 7 -o %T"] + (["scontrol show job -o 7"] if expected is not JobState.NO_ANSWER else [])
    assert commands.argvs == asked


def test_no_answer_is_a_value_and_leaves_the_job_unknown_never_gone(monkeypatch: pytest.MonkeyPatch,
                                                                     fake_time: FakeTime) -> None:
    """A batch command that fails, or a batch system that does not answer, is a :class:`NoAnswer` returned (no
    exception, nothing kept on the backend): ``list``/``status`` get ``no_answer`` with the command and what it
    printed (the cluster is ``unknown``), ``cancel`` returns it (nothing cancelled). Only an ANSWER that the job is
    unknown is ``UNKNOWN``, and a cancel of such a job went through."""
    gone = "scancel: error: Kill job error on job id 8: Invalid job id specified"
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": (1, DOWN), "scancel 7": (1, DOWN),
                                "squeue -h -j 8 -o %T": (1, FORGOT), "scontrol show job -o 8": (1, FORGOT),
                                "scancel 8": (1, gone)})
    assert not issubclass(NoAnswer, BaseException)
    scheduler = SlurmScheduler()
    failure = scheduler.cancel("7")
    assert isinstance(failure, NoAnswer) and str(failure) == f"`scancel 7` exited with 1: {DOWN}"
    assert scheduler.cancel("8") is None
    assert vars(scheduler) == {"paths": {}}  # no side channel
    silent = cluster_status.batch_state("slurm", "7")
    assert silent == BatchAnswer(JobState.NO_ANSWER, f"`squeue -h -j 7 -o %T` exited with 1: {DOWN}")
    assert not silent.answered
    assert cluster_status.batch_state("slurm", "8") == BatchAnswer(JobState.UNKNOWN)  # asked 3 times, 0.5 s apart


def test_grid_engine_state_from_the_listing_then_qacct(monkeypatch: pytest.MonkeyPatch) -> None:
    qacct = "qname hh.q\nfailed       0\nexit_status  2\n"
    commands = fake_commands(monkeypatch, {"qstat -u *": (0, QSTAT), "qacct -j 9": (0, qacct),
                                           "qacct -j 10": (1, "error: job id 10 not found")})
    scheduler = SgeScheduler()
    assert scheduler.state("4") is JobState.RUNNING and scheduler.state("12") is JobState.FAILED
    assert commands.argvs == ["qstat -u *", "qstat -u *"]
    assert scheduler.state("9") is JobState.FAILED and scheduler.state("10") is JobState.UNKNOWN
    assert commands.argvs[2:] == ["qstat -u *", "qacct -j 9", "qstat -u *", "qacct -j 10"]


def test_pbs_state_detects_the_flavor_once_then_asks_qstat(monkeypatch: pytest.MonkeyPatch) -> None:
    """PBS Pro: ``qstat -f`` first (it shows a running job with or without job history); a finished job it no
    longer shows (``Job has finished``, exit 35) is asked again with ``-x``."""
    finished = "Job Id: 5.head\n    job_state = F\n    Exit_status = 0\n"
    commands = fake_commands(monkeypatch, {"qstat --version": (0, "pbs_version = 22.05.11\n"),
                                           "qstat -f 5.head": (35, ""), "qstat -x -f 5.head": (0, finished)})
    scheduler = PbsScheduler()
    assert scheduler.state("5.head") is JobState.COMPLETED and scheduler.state("5.head") is JobState.COMPLETED
    assert commands.argvs == ["qstat --version", "qstat -f 5.head", "qstat -x -f 5.head", "qstat -f 5.head",
                              "qstat -x -f 5.head"]


# -- PBS Pro without job history (issue 17 item 9), on recorded outputs of OpenPBS 23.06 ----------------------

PBS_DATA = REPO / "tests" / "data" / "pbs"
OPENPBS = {"qstat --version": (0, "pbs_version = 23.06.06\n")}


def recorded(name: str) -> str:
    return (PBS_DATA / name).read_text()


def test_running_job_is_running_with_job_history_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenPBS's default: ``qstat -x -f ID`` exits 0 with nothing on standard output (``PBS is not configured to
    maintain job history`` on standard error) even for a running job; it was taken for a job that had ended."""
    commands = fake_commands(monkeypatch, {**OPENPBS, "qstat -f 13.vm": (0, recorded("openpbs-qstat-f-running.txt")),
                                           "qstat -x -f 13.vm": (0, "")})
    assert PbsScheduler().state("13.vm") is JobState.RUNNING
    assert commands.argvs == ["qstat --version", "qstat -f 13.vm"]


@pytest.mark.parametrize(("plain", "history", "expected"), [
    ((153, ""), (0, ""), JobState.UNKNOWN),                                          # no history: forgotten
    ((35, ""), (0, recorded("openpbs-qstat-x-f-finished-exit3.txt")), JobState.FAILED),  # history: Exit_status 3
])
def test_finished_job_with_and_without_job_history(monkeypatch: pytest.MonkeyPatch, plain: tuple[int, str],
                                                   history: tuple[int, str], expected: JobState) -> None:
    commands = fake_commands(monkeypatch, {**OPENPBS, "qstat -f 2.vm": plain, "qstat -x -f 2.vm": history})
    assert PbsScheduler().state("2.vm") is expected
    assert commands.argvs == ["qstat --version", "qstat -f 2.vm", "qstat -x -f 2.vm"]


def test_allocation_reads_the_walltime_with_job_history_off(monkeypatch: pytest.MonkeyPatch, resolved: list[str],
                                                            make_spec: Callable[..., JobSpec], tmp_path: Path) -> None:
    """Inside the job the walltime came from ``qstat -x -f``: empty without job history, so no deadline, and PBS's
    own SIGTERM at the walltime ended the run as ``interrupted`` (130) instead of ``timed_out`` (124)."""
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("vm\nvm\n")
    monkeypatch.setenv("PBS_JOBID", "13.vm")
    monkeypatch.setenv("PBS_NODEFILE", str(nodefile))
    monkeypatch.setenv("NCPUS", "2")
    commands = fake_commands(monkeypatch, {"qstat -f 13.vm": (0, recorded("openpbs-qstat-f-running.txt")),
                                           "qstat -x -f 13.vm": (0, "")})
    alloc = PbsScheduler().allocation(make_spec(scheduler="pbs", nodes=1, pbs={"flavor": "pbspro"},
                                                batch={"cores_per_node": 2}))
    assert commands.argvs == ["qstat -f 13.vm"] and alloc.walltime == 1800.0
    assert alloc.deadline == datetime(2026, 11, 24, 10, 2, 13).timestamp() + 1800


def test_one_empty_answer_never_makes_a_job_ended(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime) -> None:
    """``list``, ``start`` and ``stop`` ask :meth:`confirmed_state`: a job is unknown only after 3 answers in a row
    (0.5 s apart); ``start`` had failed after 0.6 s on one empty answer while the cluster came up."""
    running = recorded("openpbs-qstat-f-running.txt")
    commands = fake_commands(monkeypatch, {**OPENPBS, "qstat -f 13.vm": [(0, ""), (0, running)],
                                           "qstat -x -f 13.vm": (0, ""), "qstat -f 14.vm": (153, ""),
                                           "qstat -x -f 14.vm": (0, "")})
    scheduler = PbsScheduler()
    assert scheduler.confirmed_state("13.vm") is JobState.RUNNING and fake_time.sleeps == [0.5]
    assert scheduler.confirmed_state("14.vm") is JobState.UNKNOWN and fake_time.sleeps == [0.5] * 3
    assert commands.argvs.count("qstat -x -f 14.vm") == 3


def test_a_starting_cluster_is_not_lost_on_one_empty_answer(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime,
                                                             tmp_path: Path) -> None:
    run_dir = tmp_path / "c"
    run_dir.mkdir()
    fake_commands(monkeypatch, {**OPENPBS, "qstat -f 13.vm": [(0, ""), (0, recorded("openpbs-qstat-f-running.txt"))],
                                "qstat -x -f 13.vm": (0, "")})
    status = cluster_status.status_of({"cluster_id": "c", "run_dir": str(run_dir), "scheduler": "pbs",
                                       "job_id": "13.vm"})
    assert status.state == "starting" and status.active


def answers(state: JobState) -> Callable[..., BatchAnswer]:
    """A stand-in of :func:`launcher.lifecycle.clusters.status.batch_state`: the batch system answers ``state``."""
    return lambda scheduler, job_id, run_dir=None, **asked: BatchAnswer(state)


def batch_answers(monkeypatch: pytest.MonkeyPatch, state: JobState) -> None:
    """The batch system answers ``state`` to every look (:mod:`~launcher.lifecycle.clusters.status`) and to ``stop``'s
    polls (:mod:`~launcher.lifecycle.clusters.stop`)."""
    for module in (cluster_status, cluster_stop):
        monkeypatch.setattr(module, "batch_state", answers(state))


def test_stop_cancels_a_job_the_batch_system_still_knows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cluster whose run.json is final (or lost) while its job still runs: ``stop`` said ``is already ...`` and left
    the job to its walltime; it now cancels it."""
    run_dir = tmp_path / "c"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"state": "bringup_failed", "error": "boom"}))
    cluster_index.register("c", run_dir, "pbs", "13.vm", interactive=True)
    batch_answers(monkeypatch, JobState.RUNNING)
    cancelled: list[str | None] = []
    monkeypatch.setattr(cluster_stop, "_cancel", lambda status, backends: cancelled.append(status.job_id) and None)
    result = CliRunner().invoke(main, ["stop", "c"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output == "cluster c is already bringup_failed; its pbs job 13.vm was still running: cancelled\n"
    assert cancelled == ["13.vm"]
    batch_answers(monkeypatch, JobState.UNKNOWN)
    result = CliRunner().invoke(main, ["stop", "c"], terminal_width=200)
    assert result.output == "cluster c is already bringup_failed\n" and cancelled == ["13.vm"]


# -- wait: the job-state polling loop ------------------------------------------------------------------------

def test_wait_backs_off_while_pending_and_tolerates_unknown(monkeypatch: pytest.MonkeyPatch,
                                                            fake_time: FakeTime) -> None:
    states = ["PENDING"] * 4 + ["RUNNING"] * 2 + ["", "", "RUNNING", "COMPLETED"]
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": [(0, s) for s in states],
                                "scontrol show job -o 7": (1, FORGOT)})
    seen: list[JobState] = []
    polled = SlurmScheduler().wait("7", each=seen.append)
    assert polled.done and polled.value is JobState.COMPLETED and len(seen) == len(states)
    assert fake_time.sleeps == [0.5, 0.75, 1.125, 1.6875, 0.5, 0.5, 0.5, 0.5, 0.5]


def test_wait_gives_up_after_more_unknown_polls_than_tolerated(monkeypatch: pytest.MonkeyPatch,
                                                               fake_time: FakeTime) -> None:
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": [(0, "RUNNING")] + [(1, FORGOT)] * 10,
                                "scontrol show job -o 7": (1, FORGOT)})
    polled = SlurmScheduler().wait("7", tolerate=5)
    assert polled.outcome == "failed" and polled.value is JobState.UNKNOWN and polled.polls == 7


def test_wait_tolerates_a_command_that_did_not_answer(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime) -> None:
    answers = iter([CommandError(["squeue"], -1, "", "no answer within 60 s"), JobState.RUNNING,
                    JobState.COMPLETED])

    def state(self: SlurmScheduler, job_id: str) -> JobState:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(SlurmScheduler, "state", state)
    assert SlurmScheduler().wait("7").value is JobState.COMPLETED
    monkeypatch.setattr(SlurmScheduler, "state", lambda self, job_id: (_ for _ in ()).throw(
        CommandError(["squeue"], -1, "", "no answer")))
    with pytest.raises(CommandError, match="no answer"):
        SlurmScheduler().wait("7", tolerate=2)
    assert fake_time.sleeps[-2:] == [0.5, 0.5]


def test_wait_with_a_timeout_and_another_goal(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime) -> None:
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": (0, "PENDING")})
    polled = SlurmScheduler().wait("7", until=lambda state: state is JobState.RUNNING, timeout=10.0)
    assert polled.timed_out and polled.value is JobState.PENDING and fake_time.now == pytest.approx(110.0)


# -- follow (submit --wait) ------------------------------------------------------------------------------

def test_follow_prints_state_changes_and_the_growing_log(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime,
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "batch-7.out"
    states = iter(["PENDING", "PENDING", "RUNNING", "", "RUNNING", "COMPLETED"])
    chunks = iter(["", "", "starting\n", "", "step 1 done\n", "bye\n"])

    def squeue(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if argv[0] == "squeue":
            state = next(states)
            text = next(chunks)
            if text:
                with open(log, "a") as out:
                    out.write(text)
            return subprocess.CompletedProcess(argv, 0 if state else 1, state, "" if state else FORGOT)
        return subprocess.CompletedProcess(argv, 1, "", FORGOT)

    monkeypatch.setattr(base, "run_command", squeue)
    out = io.StringIO()
    code = submit_module.follow(SlurmScheduler(), "7", tmp_path, log, Console(file=out, highlight=False))
    assert code == 0
    assert out.getvalue().splitlines() == ["job 7: pending", "job 7: running", "job 7: completed"]
    assert capsys.readouterr().out == "starting\nstep 1 done\nbye\n"


@pytest.mark.parametrize(("report", "expected", "said"), [
    (None, 1, "none"), ({"state": "timed_out", "exit_code": 124}, 124, "timed_out, exit code 124")])
def test_follow_stops_after_six_unknown_polls(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime, tmp_path: Path,
                                              report: dict[str, Any] | None, expected: int, said: str) -> None:
    """A job the batch system forgot (PBS Pro without job history forgets a finished job at once): 5 UNKNOWN polls
    in a row are tolerated, the 6th ends ``follow``; its exit code comes from run.json, which a line names, else
    from the last state shown (running: 1)."""
    if report is not None:
        (tmp_path / "run.json").write_text(json.dumps(report))
    commands = fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": [(0, "RUNNING")] + [(1, FORGOT)] * 20,
                                           "scontrol show job -o 7": (1, FORGOT)})
    out = io.StringIO()
    code = submit_module.follow(SlurmScheduler(), "7", tmp_path, tmp_path / "none.out", Console(file=out, width=60))
    assert code == expected
    assert out.getvalue().splitlines() == ["job 7: running",
                                           f"job 7: no longer known to the batch system; run.json: {said}"]
    assert commands.argvs.count("squeue -h -j 7 -o %T") == 7


def test_follow_waits_through_a_batch_system_that_does_not_answer(monkeypatch: pytest.MonkeyPatch,
                                                                   fake_time: FakeTime, tmp_path: Path) -> None:
    """Issue 25 item 7: ``submit --wait`` across a slurmctld restart exited 1 (``no longer known``) while the job ran
    on. Polls with no answer are waited through (a line says so), and a job cancelled then is 143."""
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": [(0, "RUNNING")] + [(1, DOWN)] * 30 + [(0, "RUNNING")]
                                + [(1, FORGOT)],
                                "scontrol show job -o 7": (0, "JobId=7 JobState=CANCELLED Reason=None")})
    out = io.StringIO()
    code = submit_module.follow(SlurmScheduler(), "7", tmp_path, tmp_path / "none.out", Console(file=out, width=300),
                                patience=3600.0, clock=fake_time.monotonic)
    lines = out.getvalue().splitlines()
    assert code == 143
    assert lines[0] == "job 7: running" and lines[1].startswith("job 7: unknown: batch system not answering since ")
    assert lines[1].endswith(f"(`squeue -h -j 7 -o %T` exited with 1: {DOWN}); waiting")
    assert lines[2:] == ["job 7: the batch system answers again", "job 7: cancelled"]


def test_follow_gives_up_on_silence_after_its_patience(monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime,
                                                        tmp_path: Path) -> None:
    fake_commands(monkeypatch, {"squeue -h -j 7 -o %T": (1, DOWN)})
    out = io.StringIO()
    code = submit_module.follow(SlurmScheduler(), "7", tmp_path, tmp_path / "none.out", Console(file=out, width=300),
                                patience=100.0, clock=fake_time.monotonic)
    assert code == 1 and 200.0 < fake_time.now < 210.0
    assert out.getvalue().splitlines()[-1].startswith("job 7: the batch system did not answer for 10")


# -- stop: the allocation released ------------------------------------------------------------------------

def test_wait_released_cancels_a_lingering_job_at_half_time(monkeypatch: pytest.MonkeyPatch,
                                                            fake_time: FakeTime, tmp_path: Path) -> None:
    cancelled: list[float] = []
    batch_answers(monkeypatch, JobState.RUNNING)
    monkeypatch.setattr(cluster_stop, "_cancel", lambda status, backends: cancelled.append(fake_time.now))
    status = ClusterStatus(cluster_id="c", run_dir=str(tmp_path / "gone"), scheduler="slurm", job_id="7",
                           state=ClusterState.STOPPING)
    after = cluster_stop._wait_released(status, {}, 60.0, 0.5)
    assert cancelled == [pytest.approx(130.0)] and fake_time.now == pytest.approx(160.0)
    assert after.state == "gone" and set(fake_time.sleeps) == {0.5}


def test_wait_released_of_a_holder_process_waits_without_cancelling(monkeypatch: pytest.MonkeyPatch,
                                                                    fake_time: FakeTime, tmp_path: Path) -> None:
    alive = iter([True] * 7 + [False])
    monkeypatch.setattr(cluster_stop, "holder_alive", lambda entry: next(alive))
    monkeypatch.setattr(cluster_stop, "_cancel",
                        lambda status, backends: pytest.fail("a local cluster has no job to cancel"))
    status = ClusterStatus(cluster_id="c", run_dir=str(tmp_path / "gone"), scheduler="local", job_id=None,
                           state=ClusterState.STOPPING)
    cluster_stop._wait_released(status, {}, 4.0, 0.5)  # 2 s, then up to 2 s more: the holder exits at 3 s
    assert fake_time.now == pytest.approx(103.0)


@pytest.mark.parametrize("release", ["this", "before"])
def test_stop_reads_what_the_submission_settled_once_for_all_its_polls(monkeypatch: pytest.MonkeyPatch,
                                                                       fake_time: FakeTime, tmp_path: Path,
                                                                       release: str) -> None:
    """``stop`` polls the batch system until the teardown is over, then until the job is released: what the
    submission settled (the commands to run: submit.json's record; in a cluster directory of the release before,
    the ``pbs:`` section of its job.yaml) is read once for all those polls (issue 26 item 4), not once per poll, and
    every poll asks with the commands recorded at submission."""
    run_dir = tmp_path / "c"
    run_dir.mkdir()
    qdel = "/opt/pbs/bin/qdel"
    (run_dir / "job.yaml").write_text(f"scheduler: pbs\npbs:\n  flavor: torque\n  commands: {{qdel: {qdel}}}\n")
    settled = PbsSettled(flavor="torque", commands={"qdel": qdel}) if release == "this" else None
    SubmitRecord(scheduler="pbs", job_id="7.vm", submitted=0.0, job_file="j.yaml",
                 settled=settled).write(run_dir / "submit.json")
    cluster_index.register("c", run_dir, "pbs", "7.vm", interactive=True)
    states = iter([JobState.RUNNING] * 4 + [JobState.COMPLETED] * 10)
    asked_with: set[tuple[str, ...]] = set()

    def confirmed_state(self: PbsScheduler, job_id: str) -> JobState:
        asked_with.add((self.flavor(), *self.cancel_argv(job_id)))
        return next(states)

    monkeypatch.setattr(PbsScheduler, "confirmed_state", confirmed_state)
    reads: list[Path] = []
    real_read = cluster_status._settled_at_submission
    monkeypatch.setattr(cluster_status, "_settled_at_submission",
                        lambda backend, path: reads.append(path) or real_read(backend, path))
    parsed: list[str] = []
    real_load = yamlio.load_yaml
    monkeypatch.setattr("launcher.util.yamlio.load_yaml", lambda text: parsed.append(text) or real_load(text))
    status = cluster_status.status_of(cluster_index.index_entries()[0])
    assert len(reads) == 1 and status.state == "starting"
    after = cluster_stop.request_stop(status, timeout=10.0, poll=0.5)
    assert after.state == "lost" and len(reads) == 2, reads  # one for status_of above, one for the whole stop
    assert asked_with == {("torque", qdel, "7.vm")}
    assert len(parsed) == (0 if release == "this" else 2)  # job.yaml: only in a directory of the release before


def test_stop_asks_no_more_once_the_batch_system_did_not_answer_the_cancel(monkeypatch: pytest.MonkeyPatch,
                                                                         fake_time: FakeTime, tmp_path: Path) -> None:
    """``slurmctld`` stopped (tests/integration/test_silent_batch_systems.py): each look at the cluster waits on
    Slurm's clients (about 18 s there) and ``stop --timeout 2`` took 63 s, the last 18 s a look after the cancel had
    gone unanswered, which could only say the same. The cluster's state is the look's before the cancel: unknown,
    active; the stop file is written (the holder tears down when it reads it)."""
    run_dir = tmp_path / "c"
    run_dir.mkdir()
    cluster_index.register("c", run_dir, "slurm", "7", interactive=True)
    silent = ClusterStatus(cluster_id="c", run_dir=str(run_dir), scheduler="slurm", job_id="7",
                           state=ClusterState.UNKNOWN, detail="batch system not answering since 12:00:00")
    asked: list[str] = []  # what stop asked the batch system, in order
    monkeypatch.setattr(cluster_stop, "_look", lambda entry, backends, asking=None: asked.append("look") or silent)
    no_answer = NoAnswer(("scancel", "7"), 1, "",
                         "scancel: error: Unable to contact slurm controller (connect failure)")
    monkeypatch.setattr(cluster_stop, "_cancel", lambda status, backends: asked.append(f"cancel {status.job_id}")
                        or no_answer)
    said: list[str] = []
    after = cluster_stop.request_stop(silent, timeout=2.0, poll=0.5, on_wait=said.append)
    assert after is silent and after.active
    assert said[0] == "teardown requested" and said[-1].startswith("the batch system did not answer the cancel: ")
    assert (run_dir / cluster_stop.STOP_FILE).is_file()
    assert asked[0] == "look" and asked[-1] == "cancel 7" and asked.count("cancel 7") == 1, asked  # no look after


def test_stop_does_not_ask_a_silent_batch_system_again_while_it_waits_for_the_teardown(
        monkeypatch: pytest.MonkeyPatch, fake_time: FakeTime, tmp_path: Path) -> None:
    """The same stop, its polls real: ``squeue`` took 18 s there with ``slurmctld`` stopped, and ``stop --timeout
    2`` still asked it twice (45 s: the look that found the cluster, a poll, the cancel). The look that found it did
    not get an answer: no poll asks again (every one reads the cluster directory: still unknown, since when kept),
    the cancel after the timeout is asked once. A batch system that answered is asked at each poll, until it does
    not: the no-answer then stands."""
    run_dir = tmp_path / "c"
    run_dir.mkdir()
    cluster_index.register("c", run_dir, "slurm", "7", interactive=True)
    why = "squeue: error: Unable to contact slurm controller (connect failure)"
    answers: list[BatchAnswer] = []
    monkeypatch.setattr(cluster_stop, "batch_state", lambda *a, **k: answers.pop(0))
    cancels: list[str] = []
    monkeypatch.setattr(cluster_stop, "_cancel", lambda status, backends: cancels.append(status.job_id)
                        or NoAnswer(("scancel", "7"), 1, "", why.replace("squeue", "scancel")))
    answers.append(BatchAnswer(JobState.NO_ANSWER, why))
    found = cluster_status.status_of(cluster_index.index_entries()[0],
                                     job_state=lambda *a: cluster_stop.batch_state(*a))
    assert found.state is ClusterState.UNKNOWN and found.batch is not None and not answers
    cluster_index.record(found.observed, cluster_index.index_entries()[0])
    after = cluster_stop.request_stop(found, timeout=2.0, poll=0.5)
    assert after.state is ClusterState.UNKNOWN and why in after.detail and cancels == ["7"]
    # answered at first (running), then not: asked twice, the polls after that read the directory alone
    (run_dir / cluster_stop.STOP_FILE).unlink()
    answers.extend([BatchAnswer(JobState.RUNNING), BatchAnswer(JobState.NO_ANSWER, why)])
    running = cluster_status.status_of(cluster_index.index_entries()[0], job_state=lambda *a: BatchAnswer(
        JobState.RUNNING))
    after = cluster_stop.request_stop(running, timeout=5.0, poll=0.5)
    assert after.state is ClusterState.UNKNOWN and not answers and cancels == ["7", "7"]


# -- allocation: one for every batch backend ------------------------------------------------------------

@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Node names resolve to 10.1.0.<n> (in order of resolution); records the names resolved. The node has
    256 GiB of RAM and no cgroup limit."""
    names: list[str] = []

    def node_address(name: str) -> str:
        names.append(name)
        return f"10.1.0.{len(names)}"

    monkeypatch.setattr(base, "node_address", node_address)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=256 << 30))
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: None)
    return names


def test_slurm_allocation_on_recorded_outputs(monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
                                              resolved: list[str]) -> None:
    for name, value in (("SLURM_JOB_ID", "4242"), ("SLURM_JOB_NODELIST", "n[01-03],gpu7"),
                        ("SLURM_CPUS_ON_NODE", "16"), ("SLURM_MEM_PER_NODE", "62500")):
        monkeypatch.setenv(name, value)
    commands = fake_commands(monkeypatch, {
        "scontrol show hostnames n[01-03],gpu7": (0, (SLURM_DATA / "scontrol-show-hostnames.txt").read_text()),
        "scontrol show job -o 4242": (0, (SLURM_DATA / "scontrol-show-job-running.txt").read_text())})
    alloc = SlurmScheduler().allocation(make_spec(nodes=4))
    assert commands.calls == [(["scontrol", "show", "hostnames", "n[01-03],gpu7"], True),
                              (["scontrol", "show", "job", "-o", "4242"], True)]
    assert [(n.name, n.address) for n in alloc.nodes] == [("n01", "10.1.0.1"), ("n02", "10.1.0.2"),
                                                          ("n03", "10.1.0.3"), ("gpu7", "10.1.0.4")]
    assert resolved == ["n01", "n02", "n03", "gpu7"]  # each name resolved once
    assert (alloc.scheduler, alloc.job_id, alloc.fanout) == ("slurm", "4242", "srun")
    assert (alloc.cores_per_node, alloc.memory_per_node, alloc.walltime) == (16, 62500 * MiB, 3600.0)
    assert alloc.start_time == datetime(2026, 1, 1, 10, 0, 5).timestamp()


def test_torque_allocation_on_a_recorded_qstat(monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
                                               resolved: list[str], tmp_path: Path) -> None:
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("n17\n" * 4 + "n18\n" * 4)
    job_id = "4242.torque-server.example.org"
    monkeypatch.setenv("PBS_JOBID", job_id)
    monkeypatch.setenv("PBS_NODEFILE", str(nodefile))
    for name in ("PBS_NUM_PPN", "NCPUS"):
        monkeypatch.delenv(name, raising=False)
    qstat = TORQUE_QSTAT_F.replace("    Resource_List.nodect = 4\n", "    Resource_List.nodect = 4\n"
                                   "    Resource_List.mem = 16gb\n")
    commands = fake_commands(monkeypatch, {f"qstat -f {job_id}": (0, qstat)})
    before = time.time()
    alloc = PbsScheduler().allocation(make_spec(scheduler="pbs", nodes=2, pbs={"flavor": "torque"}))
    assert commands.calls == [(["qstat", "-f", job_id], True)]  # the flavor is the job file's: no qstat --version
    assert [(n.name, n.address) for n in alloc.nodes] == [("n17", "10.1.0.1"), ("n18", "10.1.0.2")]
    assert (alloc.cores_per_node, alloc.memory_per_node, alloc.fanout) == (4, 8 << 30, "pbsdsh")
    assert alloc.walltime == 3600 and alloc.deadline is not None
    assert before + 2995 <= alloc.deadline <= before + 2995 + 5  # Walltime.Remaining


def test_pbs_pro_allocation_detects_the_flavor(monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
                                               resolved: list[str], tmp_path: Path) -> None:
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("n1\nn2\n")
    monkeypatch.setenv("PBS_JOBID", "108.pbs-head")
    monkeypatch.setenv("PBS_NODEFILE", str(nodefile))
    monkeypatch.setenv("NCPUS", "16")
    monkeypatch.delenv("PBS_NUM_PPN", raising=False)
    qstat = "Job Id: 108.pbs-head\n    job_state = R\n    Resource_List.walltime = 00:30:00\n" \
            "    start_time = Sun Nov 22 04:30:02 2026\n"
    commands = fake_commands(monkeypatch, {"qstat --version": (0, "pbs_version = 22.05.11\n"),
                                           "qstat -f 108.pbs-head": (0, qstat)})
    alloc = PbsScheduler().allocation(make_spec(scheduler="pbs", nodes=2, batch={"cores_per_node": 16}))
    assert commands.argvs == ["qstat --version", "qstat -f 108.pbs-head"]
    assert (alloc.cores_per_node, alloc.walltime, alloc.fanout) == (16, 1800.0, "pbs_tmrsh")
    assert alloc.start_time == datetime(2026, 11, 22, 4, 30, 2).timestamp() and resolved == ["n1", "n2"]


@pytest.mark.parametrize("listing", [(0, QSTAT), (1, "")])
def test_grid_engine_allocation_on_recorded_outputs(monkeypatch: pytest.MonkeyPatch,
                                                    make_spec: Callable[..., JobSpec], resolved: list[str],
                                                    tmp_path: Path, listing: tuple[int, str]) -> None:
    hostfile = tmp_path / "pe_hostfile"
    hostfile.write_text("n3 4 all.q@n3 UNDEFINED\nn1 4 all.q@n1 UNDEFINED\n")
    monkeypatch.setenv("JOB_ID", "4")
    monkeypatch.setenv("PE_HOSTFILE", str(hostfile))
    commands = fake_commands(monkeypatch, {"qstat -j 4": (0, QSTAT_J), "qstat -u *": listing})
    before = time.time()
    alloc = SgeScheduler().allocation(make_spec(scheduler="sge", nodes=2))
    assert commands.calls == [(["qstat", "-j", "4"], True), (["qstat", "-u", "*"], False)]  # the listing may fail
    assert [(n.name, n.address) for n in alloc.nodes] == [("n3", "10.1.0.1"), ("n1", "10.1.0.2")]
    assert (alloc.job_id, alloc.cores_per_node, alloc.memory_per_node, alloc.walltime, alloc.fanout) == \
        ("4", 4, 256 << 30, 600.0, "qrsh")
    if listing[0] == 0:
        assert alloc.start_time == datetime(2026, 11, 22, 4, 53, 51).timestamp()
    else:
        assert alloc.start_time >= before  # no listing: the allocation starts now


def test_allocation_with_an_interface_resolves_no_name(monkeypatch: pytest.MonkeyPatch,
                                                       make_spec: Callable[..., JobSpec], resolved: list[str],
                                                       tmp_path: Path) -> None:
    hostfile = tmp_path / "pe_hostfile"
    hostfile.write_text("n3 4 all.q@n3 UNDEFINED\nn1 4 all.q@n1 UNDEFINED\n")
    monkeypatch.setenv("JOB_ID", "4")
    monkeypatch.setenv("PE_HOSTFILE", str(hostfile))
    fake_commands(monkeypatch, {"qstat -j 4": (0, QSTAT_J), "qstat -u *": (0, QSTAT)})
    alloc = SgeScheduler().allocation(make_spec(scheduler="sge", nodes=2, interface="lo"))
    assert [(n.name, n.address) for n in alloc.nodes] == [("n3", "127.0.0.1"), ("n1", "n1")] and resolved == []


@pytest.mark.parametrize(("scheduler", "message"), [(SlurmScheduler, "not inside a Slurm allocation"),
                                                    (PbsScheduler, "not inside a PBS allocation"),
                                                    (SgeScheduler, "not inside a Grid Engine parallel job")])
def test_allocation_outside_a_job_runs_nothing(monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec],
                                               scheduler: type[base.BatchScheduler], message: str) -> None:
    commands = fake_commands(monkeypatch, {})
    with pytest.raises(UserError, match=message):
        scheduler().allocation(make_spec())
    assert commands.calls == []


# -- the PBS flavor: settled at submission, assumed by render where qstat is not installed -----------------

@pytest.fixture
def no_qstat(monkeypatch: pytest.MonkeyPatch) -> None:
    """``qstat`` is not installed (every other command runs as it is)."""
    real = subprocess.run

    def run(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        if argv[0] == "qstat":
            raise FileNotFoundError(2, "No such file or directory", "qstat")
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(base.subprocess, "run", run)


def test_settle_writes_the_detected_flavor_once(monkeypatch: pytest.MonkeyPatch,
                                                make_spec: Callable[..., JobSpec]) -> None:
    commands = fake_commands(monkeypatch, {"qstat --version": (0, "Version: 6.1.3\nCommit: 7fb6d6e\n")})
    scheduler = PbsScheduler()
    spec = make_spec(scheduler="pbs")
    settled = scheduler.settle(spec)
    assert isinstance(settled, PbsSettled) and settled.flavor == "torque" and spec.pbs.flavor is None
    assert settled.into(spec).pbs.flavor == "torque"
    assert scheduler.settle(spec).flavor == "torque" and commands.argvs == ["qstat --version"]
    assert PbsScheduler().settle(make_spec(scheduler="pbs", pbs={"flavor": "pbspro"})).flavor == "pbspro"
    nothing = SlurmScheduler().settle(spec)
    assert type(nothing) is Settled and nothing.into(spec) is spec and commands.argvs == ["qstat --version"]


def test_builders_run_nothing(monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec]) -> None:
    """``directives`` never runs ``qstat --version``: without a known flavor they are PBS Pro's."""
    commands = fake_commands(monkeypatch, {})
    scheduler = PbsScheduler()
    spec = make_spec(scheduler="pbs", nodes=2)
    assert "-l select=2:ncpus=1" in scheduler.filtered_directives(spec, Path("/r"))
    assert scheduler.preview_allocation(spec).fanout == "pbs_tmrsh"
    assert [argv for argv, _ in scheduler.status_queries("5")] == [["qstat", "-f", "5"], ["qstat", "-x", "-f", "5"]]
    assert commands.calls == []


def test_settle_without_qstat(no_qstat: None, make_spec: Callable[..., JobSpec]) -> None:
    spec = make_spec(scheduler="pbs")
    with pytest.raises(MissingCommand, match="`qstat` is not installed"):
        PbsScheduler().settle(spec)
    notes: list[str] = []
    assert PbsScheduler().settle(spec, preview=True, notes=notes).flavor == "pbspro"
    assert notes == ["`qstat` is not installed here: the batch script is for PBS Pro/OpenPBS (pbs.flavor: pbspro); "
                     "set pbs.flavor (pbspro or torque) in the job file or with --set to choose"]


def render_sections(stdout: str) -> dict[str, str]:
    found: dict[str, str] = {}
    title = ""
    for line in stdout.splitlines():
        if line.startswith("==> ") and line.endswith(" <=="):
            title = line[4:-4]
            found[title] = ""
        else:
            found[title] = found.get(title, "") + line + "\n"
    return found


def test_render_for_pbs_without_qstat_assumes_pbs_pro_and_says_so(no_qstat: None, tmp_path: Path, pfs_root: Path,
                                                                  write_yaml: Callable[..., Path],
                                                                  built_runtime: Path) -> None:
    job = write_yaml(tmp_path / "job.yaml", {"name": "pbsr", "scheduler": "pbs", "nodes": 2,
                                             "filesystem": {"root": str(pfs_root), "shared": True}})
    result = CliRunner().invoke(main, ["render", str(job)])
    assert result.exit_code == 0, result.output
    parts = render_sections(result.stdout)
    assert "#PBS -l select=2:ncpus=1\n" in parts["batch script"]
    assert "`qstat` is not installed here" in parts["notes"] and "set pbs.flavor" in parts["notes"]
    result = CliRunner().invoke(main, ["render", str(job), "--set", "pbs.flavor=torque"])
    assert result.exit_code == 0, result.output
    parts = render_sections(result.stdout)
    assert "#PBS -l nodes=2:ppn=1,walltime=" in parts["batch script"] and "qstat" not in parts.get("notes", "")
    result = CliRunner().invoke(main, ["doctor", str(job)])
    [line] = [line for line in result.stdout.splitlines() if "job file" in line]
    assert line.split()[0] == "ok", result.stdout


def test_submit_writes_the_detected_flavor_into_job_yaml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         pfs_root: Path, make_spec: Callable[..., JobSpec],
                                                         fake_runtime: HadoopRuntime) -> None:
    """Everything decided at submission is in the submitted files: the flavor ``qstat --version`` names, the
    absolute paths of the PBS commands the job runs and the JDK (issue 17 item 12: the job's login shell resets
    ``PATH``); the Python is the batch script's absolute one."""
    monkeypatch.setenv("PATH", f"{PBS_STANDINS}:{os.environ['PATH']}")
    monkeypatch.setenv("PBS_STANDIN_DIR", str(tmp_path / "standin"))
    monkeypatch.setenv("PBS_STANDIN_FLAVOR", "torque")
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)
    monkeypatch.setattr(PbsScheduler, "submit", lambda self, script: "9.standin")  # queue nothing
    spec = make_spec(scheduler="pbs", nodes=1, filesystem={"root": str(pfs_root), "shared": True})
    code, run_dir, job_id = submit_module.submit_batch(spec, tmp_path / "job.yaml", overwrite=False, wait=False,
                                                       console=Console(file=io.StringIO()))
    assert (code, job_id) == (0, "9.standin")
    submitted = yaml.safe_load((run_dir / "job.yaml").read_text())
    assert submitted["pbs"]["flavor"] == "torque"
    assert submitted["pbs"]["commands"] == {name: str(PBS_STANDINS / name) for name in ("qstat", "qdel", "pbsdsh")}
    assert submitted["hadoop"]["java_home"] == str(fake_runtime.java_home)
    # the same record in submit.json, for `list`, `status` and `stop` (issue 38)
    record = json.loads((run_dir / "submit.json").read_text())
    assert record["settled"] == {"schema": 1, "flavor": "torque", "commands": submitted["pbs"]["commands"]}
    script = (run_dir / "batch.sh").read_text()
    assert "#PBS -l nodes=1:ppn=1,walltime=01:00:00\n" in script and f"\n{sys.executable} -m launcher.cli run" in script
    assert (tmp_path / "standin" / "qstat.args").read_text() == "--version\n"


# -- issue 11, folded from tests/unit/test_whole_nodes.py: Issue #11: sizing reads what the allocation grants,
# down to the cgroup limit of the process (launcher/schedulers/base.py ``cgroup_memory_limit``,
# ``granted_memory``).


def _limit(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n")


def test_cgroup_v2_takes_the_smallest_limit_up_the_tree(tmp_path: Path) -> None:
    """Slurm limits the job's cgroup; the process sits in a step/task cgroup below it with `max`.
    Issue 11 (was ``tests/unit/test_whole_nodes.py``)."""
    job = tmp_path / "system.slice" / "slurmstepd.scope" / "job_42"
    _limit(job / "memory.max", str(6000 << 20))
    _limit(job / "step_batch" / "user" / "task_0" / "memory.max", "max")
    text = "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0\n"
    assert cgroup_memory_limit(text, tmp_path) == 6000 << 20
    assert cgroup_memory_limit("0::/\n", tmp_path) is None


def test_cgroup_v1_memory_controller(tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_whole_nodes.py``)."""
    _limit(tmp_path / "memory" / "slurm" / "uid_0" / "job_7" / "memory.limit_in_bytes", str(2 << 30))
    _limit(tmp_path / "memory" / "memory.limit_in_bytes", str(9223372036854771712))  # unlimited root
    text = "5:cpu,cpuacct:/slurm/uid_0/job_7\n4:memory:/slurm/uid_0/job_7/step_0\n0::/\n"
    assert cgroup_memory_limit(text, tmp_path) == 2 << 30


def test_granted_memory_is_the_smallest_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 (was ``tests/unit/test_whole_nodes.py``)."""
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(total=64 << 30))
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: 16 << 30)
    assert granted_memory() == 16 << 30
    assert granted_memory(None, 0, 8 << 30) == 8 << 30
    monkeypatch.setattr(base, "cgroup_memory_limit", lambda: None)
    assert granted_memory(None) == 64 << 30


# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


SpecFactory = Callable[..., JobSpec]


RUN_DIR = Path("/scratch/me/hpc-hadoop/x")


@pytest.mark.parametrize(("walltime", "lead"), [("00:10:00", 60), ("01:00:00", 180), ("10:00:00", 180)])
def test_teardown_lead_is_the_same_on_every_backend(make_spec: SpecFactory, walltime: str, lead: int) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    slurm = make_spec(walltime=walltime)
    sge = make_spec(walltime=walltime, scheduler="sge")
    assert teardown_lead(slurm) == lead
    assert f"--signal=B:USR1@{lead}" in SlurmScheduler().directives(slurm, RUN_DIR)
    wall = parse_walltime(walltime)
    soft = f"-l s_rt={(wall - lead) // 3600:02d}:{(wall - lead) % 3600 // 60:02d}:{(wall - lead) % 60:02d}"
    assert soft in SgeScheduler().directives(sge, RUN_DIR)


def test_the_local_backend_binds_the_interface_or_refuses_it_in_one_line(
        monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., JobSpec]) -> None:
    """Issue 37 item 9: ``interface:`` was silently ignored by the ``local`` backend (the daemons bound 127.0.0.1).
    Now its address is the node's; an interface this machine lacks (or one without an IPv4 address) is refused
    with the field, the interfaces that have one, and the fix; a batch backend's master does the same."""
    from launcher.schedulers.local import LocalScheduler

    addr = type(psutil.net_if_addrs()["lo"][0])  # psutil's own record of an address
    interfaces = {"lo": [addr(socket.AF_INET, "127.0.0.1", "255.0.0.0", None, None)],
                  "hhib0": [addr(socket.AF_INET, "10.99.0.1", "255.255.255.0", None, None)],
                  "hhv6": [addr(socket.AF_INET6, "fd00::1", None, None, None)]}
    monkeypatch.setattr(psutil, "net_if_addrs", lambda: interfaces)
    bound = LocalScheduler().allocation(make_spec(scheduler="local", nodes=1, interface="hhib0"))
    assert bound.nodes[0].address == "10.99.0.1"
    assert LocalScheduler().allocation(make_spec(scheduler="local", nodes=1)).nodes[0].address == "127.0.0.1"
    for name in ("nosuch0", "hhv6"):
        with pytest.raises(UserError) as info:
            LocalScheduler().allocation(make_spec(scheduler="local", nodes=1, interface=name))
        assert info.value.field == "interface" and "interfaces with one: hhib0, lo" in info.value.message
        assert info.value.exit_code == 2
    with pytest.raises(UserError, match="interface nosuch0 has no IPv4 address"):
        base.allocation_nodes(["n1", "n2"], "nosuch0")
