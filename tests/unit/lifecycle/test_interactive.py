"""The index of clusters, their states, ``clean``'s refusal, the client wrappers and ``env``/``exec``/
``completion`` at the command line: no daemons (the life cycle on real daemons is in
tests/integration/test_interactive.py)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.lifecycle.interactive import (
    STOP_FILE,
    BatchAnswer,
    JobStateOf,
    clean,
    find,
    index_entries,
    register,
    state_dir,
    status_of,
)
from launcher.lifecycle.report import RunReport
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import SUBCOMMANDS, apply_environment, client_environment, export_lines, render_wrappers
from launcher.schedulers.allocation import JobState
from launcher.util.errors import UserError
from launcher.util.states import RunState


def make_dir(tmp_path: Path, cid: str, *, report: dict | None = None, plan: bool = True) -> Path:
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


def test_index_lives_under_xdg_state_home(tmp_path: Path) -> None:
    path = register("c-1", tmp_path / "c-1", "slurm", "12", interactive=True)
    assert path == tmp_path / "state" / "hpc-hadoop" / "clusters" / "c-1.json" and state_dir() == path.parent
    register("c-1", tmp_path / "c-1", "slurm")  # re-registering keeps the job id and the interactive flag
    (entry,) = index_entries()
    assert entry.job_id == "12" and entry.interactive is True


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
    with pytest.raises(UserError, match="no running cluster"):
        find(None)


def test_clean_refuses_an_active_cluster_and_deletes_nothing(tmp_path: Path) -> None:
    done = make_dir(tmp_path, "done", report={"state": "stopped"})
    live = make_dir(tmp_path, "live", report={"state": "running", "bringup_s": 1.0, "hold": True})
    register("done", done, "slurm", "1")
    register("live", live, "slurm", "2")
    statuses = [status_of(e, job_state=batch("running")) for e in index_entries()]
    with pytest.raises(UserError, match="stop it first: hpc-hadoop stop live"):
        clean(statuses)
    assert done.is_dir() and live.is_dir()
    assert clean([s for s in statuses if not s.active]) == [str(done)]
    assert not done.exists() and live.is_dir() and [e.cluster_id for e in index_entries()] == ["live"]


def test_clean_asks_first(tmp_path: Path) -> None:
    done = make_dir(tmp_path, "done", report={"state": "failed"})
    register("done", done, "local")
    result = CliRunner().invoke(main, ["clean"], input="n\n")
    assert result.exit_code == 1 and "delete this cluster directory?" in result.output and done.is_dir()
    result = CliRunner().invoke(main, ["clean"], input="y\n")
    assert result.exit_code == 0 and not done.exists()


def test_start_needs_no_steps_but_submit_does(tmp_path: Path) -> None:
    data = {"name": "i", "filesystem": {"root": str(tmp_path)}}
    spec, _ = load_spec(None, data=data, require_steps=False)
    assert spec.steps == []
    with pytest.raises(UserError, match="steps: required field is missing"):
        load_spec(None, data=data)


# -- client wrappers and environment ------------------------------------------------------------

@pytest.fixture
def plan(make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan]) -> ClusterPlan:
    return make_test_plan(make_spec())


def test_wrappers_map_subcommands_like_hadoops_scripts(plan: ClusterPlan, tmp_path: Path) -> None:
    texts = render_wrappers(plan)
    assert set(texts) == {"hadoop", "yarn", "mapred"}
    for name, text in texts.items():
        script = tmp_path / f"{name}.sh"
        script.write_text(text)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        assert f"export HADOOP_CONF_DIR={plan.conf_dir}" in text
        for sub, (main_class, _) in SUBCOMMANDS[name].items():
            assert f"  {sub}) class={main_class}" in text
    assert 'node) class=org.apache.hadoop.yarn.client.cli.NodeCLI ;;' in texts["yarn"]
    # ApplicationCLI reads its title (application, container...) from its first argument.
    assert 'application) class=org.apache.hadoop.yarn.client.cli.ApplicationCLI; set -- "$sub" "$@" ;;' \
        in texts["yarn"]


def test_wrapper_prints_classpath_and_rejects_unknown_subcommands(plan: ClusterPlan, tmp_path: Path) -> None:
    script = tmp_path / "yarn.sh"
    script.write_text(render_wrappers(plan)["yarn"])
    script.chmod(0o755)
    out = subprocess.run([str(script), "classpath"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().startswith(str(plan.conf_dir) + ":")
    bad = subprocess.run([str(script), "nodez"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown subcommand 'nodez'" in bad.stderr


def test_env_lines_evaluate_in_a_shell(plan: ClusterPlan) -> None:
    lines = export_lines(client_environment(plan))
    script = "\n".join(lines) + '\necho "$HADOOP_CONF_DIR|$HPC_HADOOP_CLUSTER|$PATH"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    conf, cid, path = out.stdout.strip().split("|")
    assert conf == str(plan.conf_dir) and cid == plan.cluster_id
    assert path.startswith(f"{plan.run_dir}/bin:") and path.endswith(":/usr/bin:/bin")
    env = apply_environment(client_environment(plan), {"PATH": "/bin", "CLASSPATH": "/x"})
    assert env["PATH"].endswith(":/bin") and "CLASSPATH" not in env


def test_exec_without_a_running_cluster_is_a_one_line_error() -> None:
    result = CliRunner().invoke(main, ["exec", "--", "yarn", "node", "-list"])
    assert result.exit_code == 2 and "no running cluster" in result.output
    result = CliRunner().invoke(main, ["exec", "a", "b", "--", "yarn"])
    assert result.exit_code == 2 and "at most one ID before `--`" in result.output


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts(shell: str) -> None:
    result = CliRunner().invoke(main, ["completion", shell])
    assert result.exit_code == 0 and "_HPC_HADOOP_COMPLETE" in result.output and "hpc-hadoop" in result.output


def test_bash_completion_completes_subcommands() -> None:
    env = {**os.environ, "_HPC_HADOOP_COMPLETE": "bash_complete", "COMP_WORDS": "hpc-hadoop st", "COMP_CWORD": "1"}
    out = subprocess.run([sys.executable, "-c", "from launcher.cli.main import main; main(prog_name='hpc-hadoop')"],
                         capture_output=True, text=True, env=env)
    words = {line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line}
    assert {"start", "status", "stop"} <= words


def test_app_option_takes_an_id_or_a_step_of_run_json(tmp_path: Path) -> None:
    """``hpc-hadoop logs ID --app X``: X is an application id, or a step's name or number in run.json."""
    from launcher.cli.clusters import application_of
    from launcher.util.errors import UserError

    (tmp_path / "run.json").write_text(json.dumps({"steps": [
        {"name": "teragen", "application_id": "application_1_0001"},
        {"name": "terasort", "application_id": "application_1_0002"},
        {"name": "broken", "application_id": None, "log": "steps/03-broken.log"}]}))
    assert application_of(tmp_path, "application_9_0042") == "application_9_0042"
    assert application_of(tmp_path, "terasort") == "application_1_0002"
    assert application_of(tmp_path, "1") == "application_1_0001"
    with pytest.raises(UserError, match="no step 'sort'.*1 teragen, 2 terasort, 3 broken"):
        application_of(tmp_path, "sort")
    with pytest.raises(UserError, match="no YARN application") as info:
        application_of(tmp_path, "broken")
    assert "steps/03-broken.log" in str(info.value.fix)


def test_an_ended_cluster_is_final_and_not_asked_again(tmp_path: Path) -> None:
    """Issue 25 item 9: ``list`` asked the batch system again about every ``lost`` cluster (7.2 s with 7 of them)."""
    run_dir = tmp_path / "c-9"
    run_dir.mkdir()
    register("c-9", run_dir, "slurm", "9")
    asked: list[str] = []

    def forgot(scheduler: str, job_id: str) -> BatchAnswer:
        asked.append(job_id)
        return BatchAnswer(JobState.UNKNOWN)

    (entry,) = index_entries()
    assert status_of(entry, job_state=forgot).state == "lost" and asked == ["9"]
    assert status_of(entry, job_state=forgot).state == "lost" and asked == ["9"]  # recorded: not asked again


def test_a_batch_system_that_does_not_answer_makes_a_cluster_unknown(tmp_path: Path) -> None:
    """Issue 25 item 7: an error exit is no answer about the job: ``unknown`` (active), since when and why."""
    run_dir = tmp_path / "c-8"
    run_dir.mkdir()
    register("c-8", run_dir, "slurm", "8")
    (entry,) = index_entries()
    silent = BatchAnswer(JobState.NO_ANSWER, "`squeue -h -j 8 -o %T` exited with 1: slurm_load_jobs error: Unable to "
                                             "contact slurm controller (connect failure)")
    status = status_of(entry, job_state=lambda scheduler, job_id: silent)
    assert status.state == "unknown" and status.active
    assert status.detail.startswith("batch system not answering since ") and status.detail.endswith(silent.why)
    (entry,) = index_entries()
    assert entry.no_answer_since is not None and entry.no_answer_since <= time.time()  # kept across commands
    assert status_of(entry, job_state=batch("running")).state == "starting"
    (entry,) = index_entries()
    assert entry.no_answer_since is None and not (run_dir / "ended.json").exists()


# -- issue 36: the index must be writable; a cluster directory that is not yours is never trusted --------------------

def test_an_index_that_cannot_be_written_is_one_line_and_a_required_entry_raises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``start``, ``submit`` to a batch system and ``run --hold`` ask :func:`check_index` before anything starts (they
    ended in a ``StopIteration`` with the cluster running on, unreachable); a run's own update of its entry stays a
    convenience (a compute node's read-only home)."""
    from launcher.lifecycle.interactive import check_index

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


def test_start_waits_on_an_index_entry_that_is_not_there_with_one_line(tmp_path: Path) -> None:
    """What ended in ``StopIteration`` (``next`` over the index) is a :class:`UserError` naming the directory."""
    import io

    from rich.console import Console

    from launcher.lifecycle.start import wait_until_up

    with pytest.raises(UserError) as missing:
        wait_until_up(tmp_path / "c-9", Console(file=io.StringIO()))
    assert str(missing.value) == (f"XDG_STATE_HOME: cluster c-9 is not in the index of your clusters ({state_dir()}) "
                                  f"(fix: follow it in {tmp_path / 'c-9'}; stop it with `touch "
                                  f"{tmp_path / 'c-9'}/stop-requested`)")


def swapped_cluster(plan: ClusterPlan, tmp_path: Path) -> tuple[Path, Path]:
    """A held cluster's directory (``plan.json``, ``run.json``: ready, its holder a live process) whose place another
    hand took: the cluster directory is now a symbolic link to a farm of links back to it, but for a ``bin/`` of its
    own whose ``yarn`` leaves a mark. Returns the cluster directory (the link) and the mark."""
    run_dir = Path(plan.run_dir)
    moved = run_dir.with_name(run_dir.name + ".moved")
    moved.mkdir(parents=True)
    (moved / "plan.json").write_text(plan.to_json())
    RunReport(cluster_id=plan.cluster_id, run_dir=str(run_dir), scheduler="local", nodes=["n1"], bringup_s=2.0,
              hold=True, state=RunState.RUNNING).write(moved / "run.json")
    farm = tmp_path / "farm"
    (farm / "bin").mkdir(parents=True)
    for name in ("plan.json", "run.json"):
        (farm / name).symlink_to(moved / name)
    mark = tmp_path / "ran-the-farms-yarn"
    (farm / "bin" / "yarn").write_text(f"#!/bin/sh\ntouch {mark}\necho 'Total Nodes:1'\n")
    (farm / "bin" / "yarn").chmod(0o755)
    run_dir.symlink_to(farm)
    return run_dir, mark


def test_env_and_exec_refuse_a_cluster_directory_swapped_for_a_link(plan: ClusterPlan, tmp_path: Path) -> None:
    """Issue 36: ``exec ID -- yarn node -list`` ran the ``bin/yarn`` of whoever had swapped the cluster directory for
    a link farm; ``env`` pointed ``PATH`` there, ``logs`` showed its files. Each refuses in one line (exit 2) and runs
    nothing."""
    run_dir, mark = swapped_cluster(plan, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        register(plan.cluster_id, run_dir, "local", holder_pid=holder.pid, interactive=True)
        line = (f"error: ID: {run_dir} is a symbolic link to {tmp_path / 'farm'} (owner root, mode 0777): hpc-hadoop "
                "follows no link here (fix: remove it, then run again)\n")
        for args in (["env", plan.cluster_id], ["exec", plan.cluster_id, "--", "yarn", "node", "-list"],
                     ["logs", plan.cluster_id]):
            result = CliRunner().invoke(main, args)
            assert (result.exit_code, result.output) == (2, line), (args, result.output)
        assert not mark.exists()
        (entry,) = index_entries()
        status = status_of(entry)  # list and status read nothing in it either
        assert (status.state, status.detail) == ("unreachable", line.removeprefix("error: ").rstrip())
    finally:
        holder.kill()
        holder.wait()
