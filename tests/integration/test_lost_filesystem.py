"""The shared filesystem lost in the middle of a run (issue 25 item 4), with real Hadoop daemons on the local
backend: the cluster directory is on the OrangeFS-like FUSE stand-in (tests/standins/orangefs_fuse.py), whose
process is killed (SIGKILL) while a step runs. The kernel then aborts the FUSE connection, and every call on the
mount fails with ``ENOTCONN`` (``Transport endpoint is not connected``), as on a real ``pvfs2fuse`` mount whose
client died (issue 25 items 1 and 4: ``pvfs2fuse`` exits 255 and the mount answers ``ENOTCONN``).

On real OrangeFS this ended a run with three Python tracebacks, no error line and no final ``run.json``. The run
must end with one line naming the mount and the errno, a final record kept node-locally (the line says where), a
non-zero exit code, and no process of the cluster left.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import ORANGEFS_STANDIN, REPO, mounted, orangefs_standin, processes_of, run_dirs
from tests.jobs import SMALL

pytestmark = pytest.mark.hadoop

#: Small containers: the CI machine has 2 cores (as tests/integration/test_orangefs.py).


def standin_process(mountpoint: Path) -> psutil.Process:
    """The stand-in's FUSE server process of ``mountpoint`` (what ``pvfs2fuse`` is on a real node)."""
    found = [p for p in psutil.process_iter(["cmdline"])
             if str(ORANGEFS_STANDIN) in (p.info["cmdline"] or []) and str(mountpoint) in (p.info["cmdline"] or [])]
    assert len(found) == 1, found
    return found[0]


def kill_the_mount_mid_step(job: Path, root: Path, mountpoint: Path, out: Path, err: Path) -> tuple[int, Path]:
    """Submit ``job`` (stdout and stderr to ``out`` and ``err``), kill the stand-in's client once its sleep job
    runs, and wait for the launcher. Returns its exit code and the cluster directory."""
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        launcher = subprocess.Popen([sys.executable, "-m", "launcher.cli", "submit", str(job)], cwd=REPO,
                                    stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not [log for log in root.rglob("steps/01-*.log")
                   if "Running job: job_" in log.read_text(errors="replace")]:
            assert launcher.poll() is None, (out.read_text(), err.read_text())
            assert time.monotonic() < deadline, "the sleep job did not start"
            time.sleep(0.2)
        (run_dir,) = run_dirs(root)
        standin_process(mountpoint).send_signal(signal.SIGKILL)
        killed = time.monotonic()
        code = launcher.wait(timeout=180)
        print(f"mount lost: the launcher exited {time.monotonic() - killed:.1f} s later")  # for the docs
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    return code, run_dir


@pytest.mark.own_cluster("its filesystem is lost mid-step")
def test_filesystem_lost_during_a_step(hadoop_runtime: Path, tmp_path: Path) -> None:
    """Item 4: the mount's client killed while a sleep job runs. One error line names the mount and
    ``ENOTCONN``, and where the final record is kept (node-local: not on the lost mount); it says the run failed
    because the filesystem was lost; the exit code is not 0; stderr has no traceback; no process of the cluster
    is left (daemons, containers, agents, the job client)."""
    base = Path(tempfile.mkdtemp(prefix="hh-lostfs-"))
    base.chmod(0o755)
    record: Path | None = None
    try:
        with orangefs_standin(base) as mountpoint:
            root = mountpoint / "root"
            root.mkdir()
            job = tmp_path / "lost.yaml"
            job.write_text(yaml.safe_dump({
                "name": "lost", "scheduler": "local", "walltime": "00:30:00", "filesystem": {"root": str(root)},
                "hadoop": SMALL,
                "steps": [{"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                           "args": ["-m", "1", "-r", "0", "-mt", "600000"]}]}))
            out, err = tmp_path / "stdout", tmp_path / "stderr"
            code, run_dir = kill_the_mount_mid_step(job, root, mountpoint, out, err)
            stdout_text, stderr_text = out.read_text(), err.read_text()
            print(stdout_text[-3000:], stderr_text[-3000:], sep="\n---\n")  # what the user saw, for the report
            assert code != 0
            assert "Traceback" not in stderr_text, stderr_text
            lines = [line for line in (stdout_text + stderr_text).splitlines() if "is gone (" in line]
            assert len(lines) == 1 and lines[0].startswith("error: "), (stdout_text, stderr_text)
            line = lines[0]
            assert f"the shared filesystem at {mountpoint} is gone (ENOTCONN: Transport endpoint is not " \
                   "connected)" in line, line
            kept = re.search(r"final record kept at (\S+?)[;,)]?(\s|$)", line)
            assert kept, line
            record = Path(kept.group(1))
            assert not record.is_relative_to(mountpoint) and record.is_file()
            report = json.loads(record.read_text())
            assert report["run_dir"] == str(run_dir) and report["state"] == "failed", report
            assert report["lost_filesystem"] == {"mount": str(mountpoint), "errno": "ENOTCONN",
                                                 "strerror": "Transport endpoint is not connected"}, report
            assert report["exit_code"] == code and report["leftover_processes"] == 0, report
            assert processes_of(run_dir) == []
        assert not mounted(mountpoint)
    finally:
        if record is not None:
            record.unlink(missing_ok=True)
        if mounted(base / "mnt"):
            subprocess.run(["umount", "-l", str(base / "mnt")], check=False)
        shutil.rmtree(base, ignore_errors=True)
