"""The index of clusters and what a look learned, kept (launcher/lifecycle/clusters/index.py): where the index lives,
an index that cannot be written, :func:`record` (``ended.json``, the index entry's ``no_answer_since``) and the
commands that keep what they learned (``list``, ``start`` following a cluster up). That no other module writes the
index or ``ended.json``: test_writers.py."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from launcher.cli.main import main
from launcher.lifecycle.clusters import status as status_module
from launcher.lifecycle.clusters.index import (
    ENDED_FILE,
    EndedRecord,
    check_index,
    index_entries,
    record,
    register,
    state_dir,
    unregister,
)
from launcher.lifecycle.clusters.status import BatchAnswer, status_of
from launcher.schedulers.allocation import JobState
from launcher.util.errors import UserError
from tests.unit.lifecycle.clusters.test_status import batch


def test_index_lives_under_xdg_state_home(tmp_path: Path) -> None:
    path = register("c-1", tmp_path / "c-1", "slurm", "12", interactive=True)
    assert path == tmp_path / "state" / "hpc-hadoop" / "clusters" / "c-1.json" and state_dir() == path.parent
    register("c-1", tmp_path / "c-1", "slurm")  # re-registering keeps the job id and the interactive flag
    (entry,) = index_entries()
    assert entry.job_id == "12" and entry.interactive is True
    unregister("c-1")
    unregister("c-1")  # a missing entry is no error
    assert index_entries() == [] and not path.exists()


def test_an_ended_cluster_is_final_and_not_asked_again(tmp_path: Path) -> None:
    """Issue 25 item 9: ``list`` asked the batch system again about every ``lost`` cluster (7.2 s with 7 of them).
    The look writes nothing (issue 38); what it learned, kept by :func:`record`, makes the next look final."""
    run_dir = tmp_path / "c-9"
    run_dir.mkdir()
    register("c-9", run_dir, "slurm", "9")
    asked: list[str] = []

    def forgot(scheduler: str, job_id: str) -> BatchAnswer:
        asked.append(job_id)
        return BatchAnswer(JobState.UNKNOWN)

    (entry,) = index_entries()
    status = status_of(entry, job_state=forgot)
    assert status.state == "lost" and asked == ["9"] and not (run_dir / ENDED_FILE).exists()
    record(status.observed)
    ended = EndedRecord.read(run_dir / ENDED_FILE)
    assert (ended.state, ended.detail) == ("lost", "the batch system no longer knows job 9, with no final run.json")
    assert status_of(entry, job_state=forgot).state == "lost" and asked == ["9"]  # recorded: not asked again


def test_the_time_the_batch_system_stopped_answering_is_kept_across_commands(tmp_path: Path) -> None:
    """Issue 25 item 7: ``unknown`` says since when the batch system has not answered: the first look's time, kept in
    the index entry by :func:`record` (and in the caller's copy of the entry), until it answers again."""
    run_dir = tmp_path / "c-8"
    run_dir.mkdir()
    register("c-8", run_dir, "slurm", "8")
    (entry,) = index_entries()
    status = status_of(entry, job_state=batch("no_answer"))
    (stored,) = index_entries()
    assert status.state == "unknown" and stored.no_answer_since is None  # the look wrote nothing
    record(status.observed, entry)
    (stored,) = index_entries()
    since = stored.no_answer_since
    assert since is not None and since <= time.time() and entry.no_answer_since == since  # kept across commands
    later = status_of(stored, job_state=batch("no_answer"))
    assert later.detail == status.detail and later.observed is not None and later.observed.no_answer_since == since
    answered = status_of(stored, job_state=batch("running"))
    assert answered.state == "starting"
    record(answered.observed)
    (stored,) = index_entries()
    assert stored.no_answer_since is None and not (run_dir / ENDED_FILE).exists()


def test_list_keeps_what_its_looks_learned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``hpc-hadoop list`` records a ``lost`` cluster's end (``ended.json``): a second ``list`` shows the same and does
    not ask the batch system again (issue 25 item 9, kept through issue 38's split)."""
    run_dir = tmp_path / "c-7"
    run_dir.mkdir()
    register("c-7", run_dir, "slurm", "7")
    asked: list[str] = []

    def forgot(scheduler: str, job_id: str, run_dir: object = None) -> BatchAnswer:
        asked.append(job_id)
        return BatchAnswer(JobState.UNKNOWN)

    monkeypatch.setattr(status_module, "batch_state", forgot)
    first = CliRunner().invoke(main, ["list"])
    assert first.exit_code == 0 and " lost " in first.output and asked == ["7"]
    assert EndedRecord.read(run_dir / ENDED_FILE).state == "lost"
    second = CliRunner().invoke(main, ["list"])
    assert second.output == first.output and asked == ["7"]


def test_start_keeps_what_its_looks_learned(tmp_path: Path) -> None:
    """``start`` following a cluster up (:func:`wait_until_up`) records the end of a cluster it finds lost."""
    from launcher.lifecycle.start import wait_until_up

    run_dir = tmp_path / "c-6"
    run_dir.mkdir()
    register("c-6", run_dir, "local")  # no holder process: lost at the first look
    status = wait_until_up(run_dir, Console(file=io.StringIO()), poll=0.01)
    assert status.state == "lost" and EndedRecord.read(run_dir / ENDED_FILE).state == "lost"


# -- issue 36: the index must be writable ---------------------------------------------------------------------------

def test_an_index_that_cannot_be_written_is_one_line_and_a_required_entry_raises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``start``, ``submit`` to a batch system and ``run --hold`` ask :func:`check_index` before anything starts (they
    ended in a ``StopIteration`` with the cluster running on, unreachable); a run's own update of its entry stays a
    convenience (a compute node's read-only home)."""
    assert check_index() == state_dir() and oct(state_dir().stat().st_mode & 0o777) == "0o700"
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")  # even root cannot make a directory below a file
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    with pytest.raises(UserError) as refused:
        check_index()
    assert str(refused.value) == (f"XDG_STATE_HOME: cannot write the index of your clusters in {state_dir()}: Not a "
                                  "directory (fix: make it writable, or set XDG_STATE_HOME to a directory of yours "
                                  "that you can write)")
    register("c-1", tmp_path / "c-1", "local")  # not required: left as it is
    with pytest.raises(UserError, match="cannot write the index of your clusters"):
        register("c-1", tmp_path / "c-1", "local", required=True)
    record(status_of({"cluster_id": "c-1", "run_dir": str(tmp_path), "scheduler": "slurm", "job_id": "1"},
                     job_state=batch("no_answer")).observed)  # left as it is too: never raises


def test_start_waits_on_an_index_entry_that_is_not_there_with_one_line(tmp_path: Path) -> None:
    """What ended in ``StopIteration`` (``next`` over the index) is a :class:`UserError` naming the directory."""
    from launcher.lifecycle.start import wait_until_up

    with pytest.raises(UserError) as missing:
        wait_until_up(tmp_path / "c-9", Console(file=io.StringIO()))
    assert str(missing.value) == (f"XDG_STATE_HOME: cluster c-9 is not in the index of your clusters ({state_dir()}) "
                                  f"(fix: follow it in {tmp_path / 'c-9'}; stop it with `touch "
                                  f"{tmp_path / 'c-9'}/stop-requested`)")
