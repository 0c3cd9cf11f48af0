"""A cluster's state from its directory and the batch system's answer (launcher/lifecycle/clusters/status.py), and
:func:`find`'s one rule for an ID: no daemons (the life cycle on real daemons is in
tests/integration/test_interactive.py). That a look writes nothing: test_writers.py."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launcher.lifecycle.clusters.index import index_entries, register
from launcher.lifecycle.clusters.status import STOP_FILE, BatchAnswer, JobStateOf, find, status_of
from launcher.schedulers.allocation import JobState
from launcher.util.errors import UserError


def make_dir(tmp_path: Path, cid: str, *, report: dict | None = None, plan: bool = True) -> Path:
    """A cluster directory ``<tmp>/pfs/<cid>`` with a ``plan.json`` of nodes n1, n2 (job 77, 600 s of walltime left)
    unless not ``plan``, and ``report`` as its ``run.json``."""
    run_dir = tmp_path / "pfs" / cid
    run_dir.mkdir(parents=True)
    if plan:
        (run_dir / "plan.json").write_text(json.dumps({
            "nodes": [{"name": "n1"}, {"name": "n2"}], "master": {"name": "n1"}, "job_id": "77",
            "deadline": time.time() + 600}))
    if report is not None:
        (run_dir / "run.json").write_text(json.dumps(report))
    return run_dir


def batch(state: str) -> JobStateOf:
    """A batch system that answers ``state`` (a :class:`JobState` value) about every job."""
    return lambda scheduler, job_id: BatchAnswer(JobState(state))


@pytest.mark.parametrize(("job_state", "report", "expected"), [
    ("pending", None, "pending"),
    ("running", None, "starting"),
    ("running", {"state": "running", "bringup_s": None}, "starting"),
    ("running", {"state": "running", "bringup_s": 3.0, "hold": True}, "ready"),
    ("running", {"state": "running", "bringup_s": 3.0, "hold": False}, "running"),
    ("completed", {"state": "running", "bringup_s": 3.0, "hold": True}, "lost"),
    ("unknown", {"state": "running", "bringup_s": 3.0, "hold": True}, "lost"),
    ("failed", None, "lost"),
    ("completed", {"state": "stopped", "bringup_s": 3.0, "hold": True}, "stopped"),
    ("failed", {"state": "bringup_failed", "error": "boom"}, "bringup_failed"),
    ("cancelled", {"state": "cancelled", "bringup_s": 3.0, "error": "stopped by SIGTERM"}, "cancelled"),  # qdel
    ("cancelled", {"state": "interrupted", "bringup_s": 3.0, "error": "stopped by SIGTERM"}, "interrupted"),  # old
])
def test_state_from_directory_and_batch_system(tmp_path: Path, job_state: str, report: dict | None,
                                               expected: str) -> None:
    run_dir = make_dir(tmp_path, "c", report=report)
    status = status_of({"cluster_id": "c", "run_dir": str(run_dir), "scheduler": "slurm", "job_id": "77"},
                       job_state=batch(job_state))
    assert status.state == expected
    assert status.nodes == ["n1", "n2"] and status.head == "n1"
    if expected == "lost":  # issue 17 item 11: was `ended`; the same word on every scheduler (and `local` below)
        assert "no final run.json" in status.detail and not status.active
        assert status.observed is not None and status.observed.ended is not None  # for index.record to keep
        assert (status.observed.ended.state, status.observed.ended.detail) == ("lost", status.detail)
    if expected == "ready":
        assert 590 < status.walltime_left_s <= 600 and status.active


def test_stop_requested_shows_as_stopping(tmp_path: Path) -> None:
    run_dir = make_dir(tmp_path, "c", report={"state": "running", "bringup_s": 1.0, "hold": True})
    (run_dir / STOP_FILE).write_text("x")
    entry = {"cluster_id": "c", "run_dir": str(run_dir), "scheduler": "slurm", "job_id": "77"}
    assert status_of(entry, job_state=batch("running")).state == "stopping"


def test_local_cluster_state_follows_its_holder_process(tmp_path: Path) -> None:
    run_dir = make_dir(tmp_path, "loc", report={"state": "running", "bringup_s": 1.0, "hold": True})
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        register("loc", run_dir, "local", holder_pid=holder.pid)
        (entry,) = index_entries()
        assert status_of(entry).state == "ready"
    finally:
        holder.kill()
        holder.wait()
    status = status_of(entry)
    assert status.state == "lost" and f"pid {holder.pid}" in status.detail


def test_a_removed_directory_is_gone(tmp_path: Path) -> None:
    status = status_of({"cluster_id": "x", "run_dir": str(tmp_path / "nope"), "scheduler": "local"})
    assert status.state == "gone" and not status.active


def test_a_directory_on_a_filesystem_that_does_not_answer_is_unreachable(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`list` met ENOTCONN from a GlusterFS mount being remounted and died with a traceback; one cluster on such a
    mount is now shown as unreachable. (The stat is made to fail here: a FUSE mount cannot be broken on demand.)"""
    real_is_dir = Path.is_dir

    def is_dir(self: Path) -> bool:
        if self == tmp_path / "on-fuse":
            raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), str(self))
        return real_is_dir(self)

    monkeypatch.setattr(Path, "is_dir", is_dir)
    status = status_of({"cluster_id": "x", "run_dir": str(tmp_path / "on-fuse"), "scheduler": "local"})
    assert status.state == "unreachable" and "not connected" in status.detail and not status.active


def test_a_batch_system_that_does_not_answer_makes_a_cluster_unknown(tmp_path: Path) -> None:
    """Issue 25 item 7: an error exit is no answer about the job: ``unknown`` (active), since when and why; never
    ``lost``, and no end is recorded. (That the time is kept across commands: test_index.py.)"""
    run_dir = tmp_path / "c-8"
    run_dir.mkdir()
    register("c-8", run_dir, "slurm", "8")
    (entry,) = index_entries()
    silent = BatchAnswer(JobState.NO_ANSWER, "`squeue -h -j 8 -o %T` exited with 1: slurm_load_jobs error: Unable to "
                                             "contact slurm controller (connect failure)")
    status = status_of(entry, job_state=lambda scheduler, job_id: silent)
    assert status.state == "unknown" and status.active
    assert status.detail.startswith("batch system not answering since ") and status.detail.endswith(silent.why)
    assert status.observed is not None and status.observed.ended is None and status.observed.asked
    assert status.observed.no_answer_since is not None and status.observed.no_answer_since <= time.time()


def test_a_job_cancelled_while_queued_is_cancelled_not_lost(tmp_path: Path) -> None:
    run_dir = make_dir(tmp_path, "c", plan=False)
    status = status_of({"cluster_id": "c", "run_dir": str(run_dir), "scheduler": "slurm", "job_id": "5"},
                       job_state=batch("cancelled"))
    assert (status.state, status.detail) == ("cancelled", "the batch job 5 was cancelled while queued")
    assert status.observed is not None and status.observed.ended is not None
    assert status.observed.ended.state == "cancelled"


def test_find_by_id_prefix_or_job_id_and_errors(tmp_path: Path) -> None:
    for cid, job in (("wc-20260101-000000-aaaa", "101"), ("wc-20260101-000000-bbbb", "102")):
        register(cid, make_dir(tmp_path, cid, report={"state": "stopped"}), "slurm", job)
    assert find("wc-20260101-000000-aaaa").job_id == "101"
    assert find("102").cluster_id == "wc-20260101-000000-bbbb"
    assert find("wc-20260101-000000-b").job_id == "102"
    with pytest.raises(UserError, match="matches 2 clusters"):
        find("wc-")
    with pytest.raises(UserError, match="no cluster 'zz'"):
        find("zz")
    seen: list[str] = []
    with pytest.raises(UserError, match="no running cluster"):
        find(None, seen=lambda status: seen.append(status.cluster_id))
    assert seen == ["wc-20260101-000000-aaaa", "wc-20260101-000000-bbbb"]  # every look, before the refusal


def test_list_json_leaves_out_what_a_look_learned(tmp_path: Path) -> None:
    """``list --json`` shows the same keys as before :attr:`ClusterStatus.observed` was there."""
    run_dir = make_dir(tmp_path, "c", report={"state": "running", "bringup_s": 3.0, "hold": True})
    status = status_of({"cluster_id": "c", "run_dir": str(run_dir), "scheduler": "slurm", "job_id": "77"},
                       job_state=batch("completed"))
    assert status.observed is not None
    assert list(status.to_dict()) == ["cluster_id", "run_dir", "scheduler", "job_id", "state", "detail", "nodes",
                                      "head", "created", "walltime_left_s", "rm_web", "jhs_web", "interactive",
                                      "active"]
    json.dumps(status.to_dict())


# -- what the submission settled, recalled for the batch system's commands (issue 38) ---------------------------

RECORDS = Path(__file__).resolve().parents[3] / "data" / "records"
#: The PBS commands a submission found (tests/standins/pbs/ would answer; nothing here runs them).
PBS_COMMANDS = {"qstat": "/opt/pbs/bin/qstat", "qdel": "/opt/pbs/bin/qdel", "pbsdsh": "/opt/pbs/bin/pbsdsh"}


def test_the_record_in_submit_json_gives_the_backend_what_its_submission_settled(tmp_path: Path) -> None:
    """``submit`` keeps what the batch system decided (PBS: the flavor, the commands' paths) in ``submit.json``; a
    later look's backend asks with those commands, whatever ``job.yaml`` or ``PATH`` say, and runs nothing to
    learn the flavor."""
    from launcher.lifecycle.clusters.status import submitted_backend
    from launcher.lifecycle.submit import SubmitRecord
    from launcher.schedulers.pbs import PbsScheduler, PbsSettled

    run_dir = make_dir(tmp_path, "c")
    settled = PbsSettled(flavor="torque", commands=PBS_COMMANDS)
    SubmitRecord(scheduler="pbs", job_id="13.vm", submitted=0.0, job_file="j.yaml",
                 settled=settled).write(run_dir / "submit.json")
    (run_dir / "job.yaml").write_text("pbs:\n  flavor: pbspro\n")  # not read: the record says it
    backend = submitted_backend("pbs", run_dir)
    assert isinstance(backend, PbsScheduler) and backend.flavor() == "torque"
    assert backend.status_queries("13.vm")[0][0] == ["/opt/pbs/bin/qstat", "-f", "13.vm"]
    assert backend.cancel_argv("13.vm") == ["/opt/pbs/bin/qdel", "13.vm"]
    assert json.loads((run_dir / "submit.json").read_text())["settled"] == {"schema": 1, "flavor": "torque",
                                                                            "commands": PBS_COMMANDS}


def test_a_cluster_directory_of_the_release_before_recalls_what_its_job_yaml_says(tmp_path: Path) -> None:
    """A ``submit.json`` of the release before (tests/data/records/) has no record: what the submission settled is
    read from the submitted ``job.yaml`` (``pbs.flavor``, ``pbs.commands``), as that release did; the file is
    written back as it was."""
    from launcher.lifecycle.clusters.status import submitted_backend
    from launcher.lifecycle.submit import SubmitRecord
    from launcher.schedulers.pbs import PbsScheduler
    from launcher.schedulers.slurm import SlurmScheduler
    from launcher.util.yamlio import dump_yaml

    before = json.loads((RECORDS / "submit.json").read_text())
    old = SubmitRecord.read(RECORDS / "submit.json")
    assert old.settled is None and "settled" not in old.dump()
    run_dir = make_dir(tmp_path, "c")
    (run_dir / "submit.json").write_text(json.dumps({**before, "scheduler": "pbs", "job_id": "13.vm"}))
    (run_dir / "job.yaml").write_text("# Resolved from j.yaml (every layer applied) by hpc-hadoop submit.\n"
                                      + dump_yaml({"name": "t", "scheduler": "pbs",
                                                   "pbs": {"flavor": "torque", "commands": PBS_COMMANDS}}))
    backend = submitted_backend("pbs", run_dir)
    assert isinstance(backend, PbsScheduler) and backend.flavor() == "torque"
    assert backend.cancel_argv("13.vm") == ["/opt/pbs/bin/qdel", "13.vm"]
    # A batch system that settles nothing reads no job.yaml; an unreadable one recalls nothing (PATH's commands).
    (run_dir / "job.yaml").write_text("pbs: [\n")
    assert isinstance(submitted_backend("slurm", run_dir), SlurmScheduler)
    assert submitted_backend("pbs", run_dir).cancel_argv("13.vm") == ["qdel", "13.vm"]


def test_a_record_this_release_cannot_read_recalls_nothing(tmp_path: Path) -> None:
    """A ``settled`` record with a flavor this release does not know (a newer one's) is no error: the look asks with
    the commands on ``PATH``, as for a cluster whose records name none."""
    from launcher.lifecycle.clusters.status import submitted_backend

    run_dir = make_dir(tmp_path, "c")
    (run_dir / "submit.json").write_text(json.dumps({
        "schema": 1, "scheduler": "pbs", "job_id": "13.vm", "submitted": 0.0, "job_file": "j.yaml", "hold": False,
        "settled": {"schema": 2, "flavor": "pbs-next", "commands": {"qdel": "/opt/pbs/bin/qdel"}}}))
    assert submitted_backend("pbs", run_dir).cancel_argv("13.vm") == ["qdel", "13.vm"]
