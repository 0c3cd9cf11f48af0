"""Faults a cluster inside a batch job meets, with real daemons on the local backend (issue 13): a daemon
killed mid-job, the walltime warning during bring-up and again during teardown, two runs racing for one output
directory, a filesystem that fills up, a parallel filesystem (GlusterFS) that stalls. Each checks what the user
sees, what is kept, and that no process is left (docs/reliability.md).

Every launcher here runs as ``hhcarol``, an ordinary user (tests/users.py): a site's users are never root, and
root hides permission bugs (item 9). The test itself stays root, to kill daemons, stop GlusterFS bricks and mount
filesystems.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from tests import jobs
from tests.conftest import PFS, REPO, processes_of, run_report
from tests.integration.test_filesystems import SHIM_FILESYSTEM, SHIM_HADOOP, SHIM_STEPS, check_terasort_through_the_shim
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop


@pytest.fixture(scope="module")
def carol() -> TestUser:
    return make_user("hhcarol")


@pytest.fixture
def user_root(carol: TestUser) -> Iterator[Path]:
    """A scratch root (0755) holding ``hhcarol``'s own directory (0700): the ``filesystem.root`` of her jobs."""
    base = shared_base("hh-faults")
    user_dir(base, carol)
    yield base
    subprocess.run(["rm", "-rf", str(base)], check=False)


def run_dirs(root: Path, user: TestUser) -> list[Path]:
    """Cluster directories ``user`` made under a filesystem root (``<root>/<user>/hpc-hadoop/*``)."""
    return sorted((root / user.name / "hpc-hadoop").glob("*"))


def write_job(user: TestUser, root: Path, job: dict) -> Path:
    """A local-backend job file of ``user``, theirs, in their own directory under ``root`` (its root)."""
    return jobs.write_job(root / user.name, job, {"scheduler": "local", "filesystem": {"root": str(root)}}, owner=user)


def sleep_job(user: TestUser, root: Path, name: str, seconds: int) -> Path:
    return write_job(user, root, {
        "name": name, "walltime": "00:30:00",
        "steps": [{"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                   "args": ["-m", "1", "-r", "0", "-mt", str(seconds * 1000)]}]})


class Launcher:
    """``hpc-hadoop submit JOB`` run by ``user`` as a child process whose output lines are collected as they come."""

    def __init__(self, job: Path, user: TestUser, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job)],
                                     cwd=user.home, env=user.env(env), user=user.uid, group=user.gid, extra_groups=[],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the launcher exited ({self.proc.returncode}) before {what}:\n{self.output}")
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n{self.output}")

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def finish(self, timeout: float = 180) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(timeout=5)
        return code

    @property
    def output(self) -> str:
        return "".join(self.lines)


def step_log_says(root: Path, text: str, step: int = 1) -> Callable[[], bool]:
    """Whether the log of step ``step`` of the one run below ``root`` (``<root>/<user>/hpc-hadoop/<cluster>/steps/``)
    has ``text``. The glob goes no deeper than ``steps/``: an ``rglob`` of the whole root walked into an earlier
    step's ``logs/<host>/userlogs/application_*`` as YARN removed it (FileNotFoundError, stop 52's CI)."""
    def check() -> bool:
        logs = list(root.glob(f"*/hpc-hadoop/*/steps/{step:02d}-*.log"))
        return bool(logs) and text in logs[0].read_text(errors="replace")
    return check


@pytest.mark.own_cluster("its ResourceManager is killed: the run ends")
def test_resourcemanager_killed_mid_job_fails_in_seconds_naming_it(hadoop_runtime: Path, user_root: Path,
                                                                   carol: TestUser) -> None:
    """Item 3: no timeout, a one-line error naming the daemon and its log, teardown done, nothing left."""
    launcher = Launcher(sleep_job(carol, user_root, "rm-killed", 300), carol)
    launcher.wait_for(step_log_says(user_root, "Running job:"), 180, "the sleep job to run")
    (run_dir,) = run_dirs(user_root, carol)
    agent = json.loads((run_dir / "agents" / "localhost.json").read_text())
    os.kill(agent["daemons"]["resourcemanager"]["pid"], signal.SIGKILL)
    killed = time.monotonic()
    code = launcher.finish()
    detected_s = time.monotonic() - killed
    print(f"ResourceManager killed: the launcher exited {detected_s:.1f} s later")  # the figure for the report
    assert code == 1, launcher.output
    report = run_report(run_dir)
    log = run_dir / "logs" / "localhost" / "resourcemanager.log"
    assert report["state"] == "failed" and report["teardown_s"] is not None
    assert report["error"].startswith("resourcemanager on localhost exited with code -9 while step 1")
    assert str(log) in report["error"] and log.stat().st_size > 0
    assert report["steps"][0]["state"] == "killed"
    assert report["leftover_processes"] == 0 and processes_of(run_dir) == []


@pytest.mark.own_cluster("a walltime warning ends it during bring-up")
def test_walltime_warning_during_bringup_and_again_during_teardown(hadoop_runtime: Path, user_root: Path,
                                                                    carol: TestUser) -> None:
    """Item 4: SIGUSR1 (the batch system's walltime warning) while the daemons start ends the run as timed_out;
    a second one while it tears down does not stop the teardown; run.json and every daemon log are kept."""
    launcher = Launcher(sleep_job(carol, user_root, "warned", 60), carol)
    launcher.wait_for(lambda: launcher.said("bring-up") and any(user_root.rglob("agents/localhost.json")), 120,
                      "bring-up to begin")
    launcher.proc.send_signal(signal.SIGUSR1)
    warned = time.monotonic()
    launcher.wait_for(lambda: launcher.said("teardown"), 60, "teardown to begin")
    began_s = time.monotonic() - warned
    launcher.proc.send_signal(signal.SIGUSR1)
    code = launcher.finish()
    print(f"walltime warning during bring-up: teardown began {began_s:.1f} s later, the launcher ended "
          f"{time.monotonic() - warned:.1f} s later")  # the figures for the report
    assert code == 124, launcher.output
    (run_dir,) = run_dirs(user_root, carol)
    report = run_report(run_dir)
    assert report["state"] == "timed_out" and report["bringup_s"] is None and report["steps"] == []
    assert report["error"] == "stopped by SIGUSR1 (walltime warning)"
    assert "SIGUSR1 arrived during teardown, which went on to the end" in report["notes"]
    assert report["teardown_s"] is not None and report["leftover_processes"] == 0
    for daemon in ("resourcemanager", "nodemanager", "historyserver"):
        assert (run_dir / "logs" / "localhost" / f"{daemon}.out").exists(), daemon
    assert processes_of(run_dir) == []


@pytest.mark.own_cluster("two runs race for one output directory")
def test_two_runs_racing_for_one_output_directory(hadoop_runtime: Path, user_root: Path, carol: TestUser) -> None:
    """Item 8: both pass the checks before either writes; exactly one writes the output, the other gets the
    existing-output error, and the output holds one job's files only."""
    mine = user_root / carol.name
    corpus = mine / "words.txt"
    corpus.write_text("alpha beta\nbeta gamma\n" * 2000)
    carol.own(corpus, 0o600)
    out = mine / "shared-output"
    jobs = [write_job(carol, user_root, {"name": f"racer{i}", "steps": [
        {"example": "wordcount", "args": [str(corpus), str(out)]}]}) for i in (1, 2)]
    racers = [Launcher(job, carol) for job in jobs]
    began = time.monotonic()
    codes = [racer.finish(timeout=300) for racer in racers]
    print(f"racing runs: exit codes {codes}, both ended within {time.monotonic() - began:.1f} s")
    if sorted(codes) != [0, 2]:  # pytest cuts a long assertion message: the whole of each output, for the cause
        for i, (racer, code) in enumerate(zip(racers, codes, strict=True), 1):
            print(f"--- racer{i} (exit {code}):\n{racer.output}")
    assert sorted(codes) == [0, 2], codes
    loser = racers[codes.index(2)]
    assert f"output {out} already exists" in loser.output
    # The loser made a cluster when it passed the checks before the winner wrote (the race), none when it came late.
    states = sorted(run_report(d)["state"] for d in run_dirs(user_root, carol))
    assert states in (["failed", "succeeded"], ["succeeded"]), states
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "part-r-00000"]
    counts = dict(line.split("\t") for line in (out / "part-r-00000").read_text().splitlines())
    assert counts == {"alpha": "2000", "beta": "4000", "gamma": "2000"}
    assert not list(mine.glob(".*hpc-hadoop-claim"))
    assert all(processes_of(d) == [] for d in run_dirs(user_root, carol))


@pytest.fixture
def small_root(carol: TestUser) -> Iterator[Path]:
    """A 64 MiB tmpfs as the filesystem root: a parallel filesystem that fills up (mounted by root, as a site
    mounts it, with ``hhcarol``'s directory in it; unmounted after the test)."""
    mount = Path(tempfile.mkdtemp(prefix="hh-small-"))
    mount.chmod(0o755)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "hh-full", str(mount)], check=True)
    try:
        user_dir(mount, carol)
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=False)
        mount.rmdir()


@pytest.mark.own_cluster("its filesystem fills up")
def test_filesystem_filling_up_mid_job(hadoop_runtime: Path, small_root: Path, carol: TestUser) -> None:
    """Item 6: teragen writes 200 MB to a 64 MiB filesystem. The step fails with an error that says the
    filesystem is full and where; teardown completes; run.json is written (from the room the run kept for it);
    a file that was there before is untouched; no process is left."""
    kept = small_root / "results-from-last-week.txt"
    kept.write_text("do not touch\n")
    before = kept.stat()
    job = write_job(carol, small_root, {"name": "filler", "walltime": "00:30:00", "hadoop": SMALL,
        "steps": [{"example": "teragen", "args": [2_000_000, "${run_dir}/output/teragen"]}]})
    launcher = Launcher(job, carol)
    code = launcher.finish(timeout=600)
    print(launcher.output[-3000:])
    assert code != 0, launcher.output
    (run_dir,) = run_dirs(small_root, carol)
    report = run_report(run_dir)
    print(f"filesystem full: step {report['steps'][0]['wall_s']:.1f} s, teardown {report['teardown_s']:.1f} s")
    assert report["state"] == "failed", report
    assert report["error"].startswith(f"the filesystem of {small_root} filled up ("), report["error"]
    assert report["steps"][0]["min_free_bytes"] < 16 << 20
    assert "filled up" in launcher.output
    assert report["teardown_s"] is not None and report["leftover_processes"] == 0
    assert processes_of(run_dir) == []
    after = kept.stat()
    assert kept.read_text() == "do not touch\n" and (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns,
                                                                                            before.st_ino)


@pytest.fixture
def gluster_root(gluster: Path, carol: TestUser) -> Iterator[Path]:
    """A scratch root on the GlusterFS volume with ``hhcarol``'s directory in it (removed afterwards)."""
    base = Path(tempfile.mkdtemp(prefix="stall-", dir=PFS / "tests" if (PFS / "tests").is_dir() else PFS))
    base.chmod(0o755)
    user_dir(base, carol)
    yield base
    subprocess.run(["rm", "-rf", str(base)], check=False)


def brick_processes() -> list[psutil.Process]:
    """The GlusterFS brick servers (``glusterfsd``) of the test volume."""
    return [p for p in psutil.process_iter(["name"]) if p.info["name"] == "glusterfsd"]


@pytest.mark.own_cluster("its GlusterFS stalls")
def test_parallel_filesystem_stalling_mid_job(hadoop_runtime: Path, gluster_root: Path, carol: TestUser) -> None:
    """First, through the ``pfs://`` shim, TeraGen and TeraSort over GlusterFS
    (:func:`tests.integration.test_filesystems.check_terasort_through_the_shim`: a cluster of its own until issue 38).
    Then item 7: every brick of the GlusterFS volume stopped (SIGSTOP) while a job runs, so that every read and write
    of the mount waits. The launcher says, while it lasts, which path does not answer; the walltime warning that
    comes during the stall starts the teardown at once (today's launcher sat in a read of agents/ until the
    bricks came back); once they do, the run ends timed_out with the stall in run.json, and nothing is left.
    The stall is kept well under GlusterFS's 42 s ``network.ping-timeout``, after which the client would fail the
    reads instead of waiting."""
    bricks = brick_processes()
    assert len(bricks) == 3, "gluster-up.sh should run three bricks"
    job = write_job(carol, gluster_root, {
        "name": "stalled", "walltime": "00:30:00", "filesystem": {"root": str(gluster_root), **SHIM_FILESYSTEM},
        "hadoop": SHIM_HADOOP, "steps": [*SHIM_STEPS, {
            "jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
            "args": ["-m", "1", "-r", "0", "-mt", "300000"]}]})
    launcher = Launcher(job, carol)
    launcher.wait_for(step_log_says(gluster_root, "Running job:", step=3), 300, "the sleep job to run")
    (run_dir,) = run_dirs(gluster_root, carol)
    for brick in bricks:
        brick.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        launcher.wait_for(lambda: launcher.said("shared filesystem is not answering"), 25, "the stall to be shown")
        shown_s = time.monotonic() - stopped
        launcher.proc.send_signal(signal.SIGUSR1)
        launcher.wait_for(lambda: launcher.said("teardown"), 10, "teardown to begin during the stall")
        teardown_s = time.monotonic() - stopped
    finally:
        for brick in bricks:
            brick.send_signal(signal.SIGCONT)
    stall_s = time.monotonic() - stopped
    code = launcher.finish(timeout=300)
    ended_s = time.monotonic() - stopped
    print(f"stall shown after {shown_s:.1f} s, teardown began {teardown_s:.1f} s into it, bricks back after "
          f"{stall_s:.1f} s, launcher ended {ended_s:.1f} s after the stall began")  # the figures for the report
    shown = next(line for line in launcher.lines if "not answering" in line)
    assert f"a read of {gluster_root}" in shown or f"a read of {run_dir}" in shown, shown
    assert code == 124, launcher.output
    report = run_report(run_dir)
    assert report["state"] == "timed_out" and report["error"].startswith("stopped by SIGUSR1 (walltime warning)")
    (stall,) = report["stalls"]
    assert stall["path"].startswith(str(gluster_root)) and not stall["ongoing"]
    assert 15 <= stall["seconds"] <= stall_s + 1, stall
    assert any(note.startswith("the shared filesystem stalled for") for note in report["notes"]), report["notes"]
    assert report["steps"][2]["state"] == "killed"
    assert report["teardown_s"] is not None and report["leftover_processes"] == 0
    for daemon in ("resourcemanager", "nodemanager", "historyserver"):
        assert (run_dir / "logs" / "localhost" / f"{daemon}.log").stat().st_size > 0, daemon
    check_terasort_through_the_shim(run_dir, report)
    assert processes_of(run_dir) == []
    assert all(not os.path.exists(f"/proc/{b.pid}") or b.status() != psutil.STATUS_STOPPED for b in bricks)


@pytest.mark.own_cluster("its launcher is killed")
def test_launcher_killed_on_the_local_backend_leaves_no_job_client(hadoop_runtime: Path, user_root: Path,
                                                                  carol: TestUser) -> None:
    """SIGKILL to the launcher (no handler of ours runs) while a step's job client waits on its job: the agents
    stop the daemons (they are tied to the launcher, ``PR_SET_PDEATHSIG``), and the job client, tied the same way,
    ends at once instead of retrying a ResourceManager that is gone. Nothing of the cluster is left."""
    launcher = Launcher(sleep_job(carol, user_root, "killed-local", 600), carol)
    try:
        launcher.wait_for(step_log_says(user_root, "Running job: job_"), 120, "the job's start")
        (run_dir,) = run_dirs(user_root, carol)
        clients = [p for p in psutil.Process(launcher.proc.pid).children()
                   if "org.apache.hadoop.mapreduce.SleepJob" in p.cmdline()]
        assert len(clients) == 1, [p.cmdline() for p in psutil.Process(launcher.proc.pid).children()]
        launcher.proc.kill()
        launcher.finish(timeout=10)
        # The job client's JVM gets SIGTERM from the kernel as the launcher dies: well within 10 s it is gone.
        gone, alive = psutil.wait_procs(clients, timeout=10)
        assert not alive, f"the job client outlived the launcher: {[p.cmdline()[-6:] for p in alive]}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and processes_of(run_dir):
            time.sleep(0.5)
        assert processes_of(run_dir) == [], "processes survived the launcher"
    finally:
        if launcher.proc.poll() is None:
            launcher.proc.kill()


@pytest.mark.own_cluster("a user's first runs, without class-data-sharing archives, one cut short")
def test_archives_a_first_run_writes_never_hold_its_teardown_and_one_cut_short_is_set_aside(
        hadoop_runtime: Path, user_root: Path, carol: TestUser) -> None:
    """Issue 25, items 5 and 0, on ``hhcarol``'s first two runs (a cache of her own, no site archives).

    Run 1 (item 5): the daemons write their class-data-sharing archives at exit. The NodeManager and the
    ResourceManager are stopped (SIGSTOP: a node so loaded that writing an archive never ends) as the teardown begins:
    the agent's teardown budget ends them, drops their unfinished archives and removes the node-local directory; no
    process is left (before: 38 s per daemon, the agent SIGKILLed by the launcher at 45 s, the directory left).
    Run 2 (item 0): her JobHistoryServer archive, published by run 1, is cut to 126,976 bytes (the real failure's
    size): the JobHistoryServer dies mapping it (SIGSEGV in ``MetaspaceShared::map_archive``); the agent sets it aside
    (renamed, kept), starts the daemon again without it, and the run succeeds, saying so on the terminal and in
    run.json."""
    cache = user_root / carol.name / "cache"
    cache.mkdir()
    carol.own(cache)
    env = {"XDG_CACHE_HOME": str(cache), "HPC_HADOOP_CDS_SITE": ""}
    (user_root / carol.name / "in.txt").write_text("one class data sharing archive\n")
    job = write_job(carol, user_root, {
        "name": "cds-first", "walltime": "00:30:00",
        "steps": [{"example": "wordcount", "args": [str(user_root / carol.name / "in.txt"), "${run_dir}/out"]}]})
    archives = cache / "hpc-hadoop" / "cds"

    launcher = Launcher(job, carol, env)
    try:
        launcher.wait_for(lambda: launcher.said("teardown"), 300, "the teardown of run 1")
        (first,) = run_dirs(user_root, carol)
        agent = json.loads((first / "agents" / "localhost.json").read_text())
        work_dir = Path(agent["work_dir"])
        assert work_dir.is_dir()
        stopped = [agent["daemons"][name]["pid"] for name in ("nodemanager", "resourcemanager")]
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        code = launcher.finish()
    finally:
        if launcher.proc.poll() is None:
            launcher.proc.kill()
    assert code == 0, launcher.output
    check_first_run_archives(first, work_dir, stopped, archives)
    run_again_with_a_cut_archive(user_root, carol, env, first, archives)


def check_first_run_archives(first: Path, work_dir: Path, stopped: list[int], archives: Path) -> None:
    """Run 1 of :func:`test_archives_a_first_run_writes_never_hold_its_teardown_and_one_cut_short_is_set_aside`:
    the frozen daemons ended within the teardown budget, their archives dropped, nothing left."""
    report = run_report(first)
    assert report["state"] == "succeeded" and report["leftover_processes"] == 0, report
    assert not work_dir.exists(), "the node-local directory was left behind"
    assert processes_of(first) == [] and not any(psutil.pid_exists(pid) for pid in stopped)
    agent = json.loads((first / "agents" / "localhost.json").read_text())
    assert agent["state"] == "stopped" and agent["daemons"]["historyserver"]["returncode"] == 143, agent
    assert {agent["daemons"][name]["returncode"] for name in ("nodemanager", "resourcemanager")} == {-9}, agent
    dropped = [n for n in report["notes"] if "class-data-sharing archive was not written within the teardown" in n]
    assert len(dropped) == 2, report["notes"]
    assert {p.name for p in archives.glob("*/*.jsa")} >= {"historyserver.jsa"}
    assert not list(archives.glob("*/resourcemanager.jsa*")) and not list(archives.glob("*/nodemanager.jsa*"))
    assert not list(archives.glob("*/*.tmp")), "an unfinished archive was kept"


def run_again_with_a_cut_archive(user_root: Path, carol: TestUser, env: dict[str, str], first: Path,
                                 archives: Path) -> None:
    """Run 2 of :func:`test_archives_a_first_run_writes_never_hold_its_teardown_and_one_cut_short_is_set_aside`:
    the JobHistoryServer archive cut short is set aside and the run succeeds."""
    (history,) = archives.glob("*/historyserver.jsa")
    cut = carol.run(["sh", "-c", f"chmod u+w {history} && truncate -s 126976 {history} && chmod 0400 {history}"])
    assert cut.returncode == 0 and history.stat().st_size == 126976, cut.stderr
    job = write_job(carol, user_root, {
        "name": "cds-second", "walltime": "00:30:00",
        "steps": [{"example": "wordcount", "args": [str(user_root / carol.name / "in.txt"), "${run_dir}/out"]}]})
    second_run = carol.run([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job)],
                           env=env, timeout=600)
    assert second_run.returncode == 0, second_run.stdout[-3000:] + second_run.stderr[-2000:]
    (second,) = [d for d in run_dirs(user_root, carol) if d != first]
    report = run_report(second)
    assert report["state"] == "succeeded", report
    (note,) = [n for n in report["notes"] if "set aside" in n]
    assert note.startswith("historyserver on localhost died (exit code -6) mapping the class-data-sharing "
                           f"archive {history}"), note
    assert "historyserver started again without it" in note
    terminal = re.sub(r"\s+", "", second_run.stdout)  # the summary's lines are wrapped to the terminal's width
    assert "historyserveronlocalhostdied" in terminal and re.sub(r"\s+", "", f"set aside as {history}") in terminal
    (kept,) = archives.glob("*/historyserver.jsa.refused-*")
    assert kept.stat().st_size == 126976 and not history.exists()
    assert "MetaspaceShared::map_archive" in "".join(p.read_text() for p in (second / "logs" / "localhost").glob(
        "hs_err_pid*.log"))
    agent = json.loads((second / "agents" / "localhost.json").read_text())
    assert agent["archive_notes"] == [note] and agent["state"] == "stopped"
    # The daemons that had none wrote theirs at exit, and they were published: the JDK maps them.
    assert {p.name for p in archives.glob("*/*.jsa")} >= {"resourcemanager.jsa", "nodemanager.jsa"}
    assert processes_of(second) == []
