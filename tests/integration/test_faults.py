"""Faults a cluster inside a batch job meets, with real daemons on the local backend (issue 13): a daemon
killed mid-job, the walltime warning during bring-up and again during teardown, two runs racing for one output
directory. Each checks what the user sees, what is kept, and that no process is left (docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, processes_of, run_dirs, run_report

pytestmark = pytest.mark.hadoop


def write_job(tmp_path: Path, root: Path, job: dict) -> Path:
    job = {"scheduler": "local", "filesystem": {"root": str(root)}, **job}
    path = tmp_path / f"{job['name']}.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


def sleep_job(tmp_path: Path, root: Path, name: str, seconds: int) -> Path:
    return write_job(tmp_path, root, {
        "name": name, "walltime": "00:30:00",
        "steps": [{"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                   "args": ["-m", "1", "-r", "0", "-mt", str(seconds * 1000)]}]})


class Launcher:
    """``hpc-hadoop submit JOB`` as a child process whose output lines are collected as they come."""

    def __init__(self, job: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "launcher.cli", "submit", str(job)], cwd=REPO,
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


def step_log_says(root: Path, text: str) -> Callable[[], bool]:
    def check() -> bool:
        logs = list(root.rglob("steps/01-*.log"))
        return bool(logs) and text in logs[0].read_text(errors="replace")
    return check


def test_resourcemanager_killed_mid_job_fails_in_seconds_naming_it(hadoop_runtime: Path, pfs_root: Path,
                                                                   tmp_path: Path) -> None:
    """Item 3: no timeout, a one-line error naming the daemon and its log, teardown done, nothing left."""
    launcher = Launcher(sleep_job(tmp_path, pfs_root, "rm-killed", 300))
    launcher.wait_for(step_log_says(pfs_root, "Running job:"), 180, "the sleep job to run")
    (run_dir,) = run_dirs(pfs_root)
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


def test_walltime_warning_during_bringup_and_again_during_teardown(hadoop_runtime: Path, pfs_root: Path,
                                                                    tmp_path: Path) -> None:
    """Item 4: SIGUSR1 (the batch system's walltime warning) while the daemons start ends the run as timed_out;
    a second one while it tears down does not stop the teardown; run.json and every daemon log are kept."""
    launcher = Launcher(sleep_job(tmp_path, pfs_root, "warned", 60))
    launcher.wait_for(lambda: launcher.said("bring-up") and any(pfs_root.rglob("agents/localhost.json")), 120,
                      "bring-up to begin")
    launcher.proc.send_signal(signal.SIGUSR1)
    launcher.wait_for(lambda: launcher.said("teardown"), 60, "teardown to begin")
    launcher.proc.send_signal(signal.SIGUSR1)
    code = launcher.finish()
    assert code == 124, launcher.output
    (run_dir,) = run_dirs(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "timed_out" and report["bringup_s"] is None and report["steps"] == []
    assert report["error"] == "stopped by SIGUSR1 (walltime warning)"
    assert "SIGUSR1 arrived during teardown, which went on to the end" in report["notes"]
    assert report["teardown_s"] is not None and report["leftover_processes"] == 0
    for daemon in ("resourcemanager", "nodemanager", "historyserver"):
        assert (run_dir / "logs" / "localhost" / f"{daemon}.out").exists(), daemon
    assert processes_of(run_dir) == []


def test_two_runs_racing_for_one_output_directory(hadoop_runtime: Path, pfs_root: Path, tmp_path: Path) -> None:
    """Item 8: both pass the checks before either writes; exactly one writes the output, the other gets the
    existing-output error, and the output holds one job's files only."""
    corpus = pfs_root / "words.txt"
    corpus.write_text("alpha beta\nbeta gamma\n" * 2000)
    out = pfs_root / "shared-output"
    jobs = [write_job(tmp_path, pfs_root, {"name": f"racer{i}", "steps": [
        {"example": "wordcount", "args": [str(corpus), str(out)]}]}) for i in (1, 2)]
    racers = [Launcher(job) for job in jobs]
    codes = [racer.finish(timeout=300) for racer in racers]
    assert sorted(codes) == [0, 2], [r.output for r in racers]
    loser = racers[codes.index(2)]
    assert f"output {out} already exists" in loser.output
    # The loser made a cluster when it passed the checks before the winner wrote (the race), none when it came late.
    states = sorted(run_report(d)["state"] for d in run_dirs(pfs_root))
    assert states in (["failed", "succeeded"], ["succeeded"]), states
    assert sorted(p.name for p in out.iterdir()) == ["_SUCCESS", "part-r-00000"]
    counts = dict(line.split("\t") for line in (out / "part-r-00000").read_text().splitlines())
    assert counts == {"alpha": "2000", "beta": "4000", "gamma": "2000"}
    assert not list(pfs_root.glob(".*hpc-hadoop-claim"))
    assert all(processes_of(d) == [] for d in run_dirs(pfs_root))


@pytest.fixture
def small_root(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB tmpfs as the filesystem root: a parallel filesystem that fills up (mounted by root, as the
    suite runs in CI; unmounted after the test)."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "hh-full", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=False)


def test_filesystem_filling_up_mid_job(hadoop_runtime: Path, small_root: Path, tmp_path: Path) -> None:
    """Item 6: teragen writes 200 MB to a 64 MiB filesystem. The step fails with an error that says the
    filesystem is full and where; teardown completes; run.json is written (from the room the run kept for it);
    a file that was there before is untouched; no process is left."""
    kept = small_root / "results-from-last-week.txt"
    kept.write_text("do not touch\n")
    before = kept.stat()
    job = write_job(tmp_path, small_root, {"name": "filler", "walltime": "00:30:00", "hadoop": {
        "map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m", "daemon_heap": "512m"},
        "steps": [{"example": "teragen", "args": [2_000_000, "${run_dir}/output/teragen"]}]})
    launcher = Launcher(job)
    code = launcher.finish(timeout=600)
    print(launcher.output[-3000:])
    assert code != 0, launcher.output
    (run_dir,) = run_dirs(small_root)
    report = run_report(run_dir)
    assert report["state"] == "failed", report
    assert report["error"].startswith(f"the filesystem of {small_root} filled up ("), report["error"]
    assert report["steps"][0]["min_free_bytes"] < 16 << 20
    assert "filled up" in launcher.output
    assert report["teardown_s"] is not None and report["leftover_processes"] == 0
    assert processes_of(run_dir) == []
    after = kept.stat()
    assert kept.read_text() == "do not touch\n" and (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns,
                                                                                            before.st_ino)
