"""Runs on an OrangeFS-like mount, with real Hadoop daemons: the stand-in of an OrangeFS volume behind its FUSE
client ``pvfs2fuse`` (tests/standins/orangefs_fuse.py; OrangeFS cannot be installed on the test machine). It
refuses the sticky bit (and its client exits after 8 refusals, as OrangeFS 2.10's does), mounts as plain ``fuse``
from ``pvfs2fuse#tcp://...``, keeps the ``user.pvfs2.*`` attributes of directories and gives each new file at most
4 data files (4 data servers), in its ``system.pvfs2.dh``/``md``.
TeraSort runs on it as root through the shim with shared local dirs (then a wordcount, and a step whose history is cut
short), and a small wordcount, TeraSort and a failing step as a user who is not root.

Data is tiny: a Python FUSE passthrough is slow.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests import jobs
from tests.conftest import REPO, hpc_hadoop, only_run_dir, orangefs_standin, processes_of, run_report
from tests.integration.attacks import READ_LOOP, keys_in
from tests.jobs import SMALL
from tests.standins.orangefs_fuse import REFUSAL_MESSAGE
from tests.users import make_user

pytestmark = pytest.mark.hadoop

#: Small containers: the CI machine has 2 cores.
TEXT = "the quick brown fox jumps over the lazy dog\nthe dog sleeps\n" * 200


@pytest.fixture(scope="module")
def orangefs() -> Iterator[Path]:
    """The OrangeFS stand-in, mounted once for this module (4 data servers, ``user.pvfs2.*`` kept, the real
    client's cross-user permission window), under a directory every user may traverse (pytest's own are root's only).
    Its refusals are not cached for other users: mallory's refused reads would refuse the owner's run for half a
    second at a time, the real client's other face, which no launcher can prevent; the tests here are about what she
    reads."""
    base = Path(tempfile.mkdtemp(prefix="hh-orangefs-"))
    base.chmod(0o755)
    try:
        with orangefs_standin(base, cache_refusals=False) as mountpoint:
            yield mountpoint
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def ofs_root(orangefs: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of this test on the mount."""
    root = orangefs / re.sub(r"[^A-Za-z0-9]+", "-", request.node.name)[:40]
    root.mkdir()
    return root


def refused_chmods(mountpoint: Path) -> int:
    """The ``chmod``s the stand-in mounted on ``mountpoint`` has refused so far (one line each in its log; its
    client exits at the 8th, as OrangeFS's)."""
    return (mountpoint.parent / "orangefs-standin.log").read_text().count(REFUSAL_MESSAGE)


def alive(mountpoint: Path) -> bool:
    """The mount still answers (a dead FUSE client gives ENOTCONN)."""
    try:
        os.listdir(mountpoint)
    except OSError:
        return False
    return True


def word_counts(output: Path) -> Counter[str]:
    """The counts a word count wrote in ``output`` (its ``part-r-*`` files: ``word<TAB>count`` lines)."""
    counts: Counter[str] = Counter()
    for part in output.glob("part-r-*"):
        for line in part.read_text().splitlines():
            word, _, count = line.rpartition("\t")
            counts[word] += int(count)
    return counts


def write_job(directory: Path, job: dict) -> Path:
    return jobs.write_job(directory, job, {"scheduler": "local"})


def records(directory: Path, pattern: str) -> list[bytes]:
    """TeraSort's 100-byte records of the files matching ``pattern`` in ``directory``."""
    data = b"".join(p.read_bytes() for p in sorted(directory.glob(pattern)))
    assert len(data) % 100 == 0
    return [data[i:i + 100] for i in range(0, len(data), 100)]


def dfiles(path: Path) -> bytes | int:
    """A directory's ``user.pvfs2.num_dfiles`` (what its files are asked to get), a file's number of data files as
    the servers keep it (``system.pvfs2.nd``, clamped to the servers: what it gets, stuffed or not)."""
    if path.is_dir():
        return os.getxattr(path, "user.pvfs2.num_dfiles")
    return int.from_bytes(os.getxattr(path, "system.pvfs2.nd"), "little")


def dfiles_now(path: Path) -> int:
    """A file's data files now (``system.pvfs2.dh``: 8 bytes per handle): one while it is stuffed."""
    return len(os.getxattr(path, "system.pvfs2.dh")) // 8


@pytest.mark.own_cluster("filesystem.mode shim with striping and shared local_dirs on OrangeFS; its last step fails")
def test_terasort_through_the_shim_with_shared_local_dirs_on_orangefs_then_a_cut_history_fails(
        hadoop_runtime: Path, ofs_root: Path, tmp_path: Path) -> None:
    """One cluster, four steps (issue 38: one bring-up for what were two tests).

    Issue 17 items 4 and 5: TeraGen (to input/) and TeraSort (to output/, 2 reducers) through the pfs:// shim with
    striping asked for input (2 data files) and output (8, on 4 servers). The report gives the layout asked for
    and the one files really get (4); directories Hadoop makes under input/ get the input layout, not output's.

    Issue 25 item 3: with `filesystem.local_dirs: shared` every job failed even with a 3-byte root (the
    ApplicationMaster's web temp directory 251 bytes below the mount): a wordcount with its local dirs on the mount
    succeeds and its history reaches history/done. A step whose history file's name the client cuts short (the job's
    name made long, and Hadoop told to keep 200 bytes of it: the issue's run with a 70-byte root, whose .jhist ended
    in `.j`) is a failure that says so, not a success."""
    corpus = ofs_root / "corpus.txt"
    corpus.write_text(TEXT)
    long_name = "a-job-with-a-long-name-" + "n" * 140
    job = write_job(tmp_path, {
        "name": "ts", "hadoop": {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2}}},
        "filesystem": {"root": str(ofs_root), "mode": "shim", "local_dirs": "shared",
                       "striping": {"input": {"count": 2, "size": "1m"}, "output": {"count": 8, "size": "1m"}}},
        "steps": [{"example": "teragen", "args": ["-Dmapreduce.job.maps=2", "5000", "${run_dir}/input/teragen"]},
                  {"example": "terasort", "args": ["${run_dir}/input/teragen", "${run_dir}/output/sorted"]},
                  {"example": "wordcount", "args": [str(corpus), "${run_dir}/output/wc"]},
                  {"name": "long", "streaming": {"mapper": "cat", "input": [str(corpus)],
                                                 "output": "${run_dir}/output/long", "reducers": 0},
                   "properties": {"mapreduce.job.name": long_name, "mapreduce.jobhistory.jobname.limit": 200}}]})
    result = hpc_hadoop("submit", str(job))
    run_dir = only_run_dir(ofs_root)
    report = run_report(run_dir)
    states = [s["state"] for s in report["steps"]]
    assert states == ["succeeded"] * 3 + ["failed"], (report.get("error"), result.stdout[-3000:],
                                                       result.stderr[-3000:])
    generated = records(run_dir / "input" / "teragen", "part-m-*")
    ordered = records(run_dir / "output" / "sorted", "part-r-*")
    assert len(generated) == 5000 and sorted(generated) == sorted(ordered)
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)
    by_role = {d["role"]: d for d in report["filesystem"]["directories"]}
    # Issue 37 item 1: the stand-in stuffs files as a real server with FileStuffing yes; what files get is nd's count
    assert by_role["input"]["effective"] == {"count": 2, "size": 1 << 20, "index": None, "stuffed": True}
    assert by_role["input"]["differs"] == []
    assert by_role["output"]["requested"] == {"count": 8, "size": 1 << 20, "index": None}
    assert by_role["output"]["layout"]["count"] == 8 and by_role["output"]["effective"]["count"] == 4
    assert by_role["output"]["differs"] == ["count 8 asked, 4 given"]
    assert ("output   applied: requested count 8, size 1048576; effective count 4, size 1048576, stuffed (one data "
            "file until a file grows past its first strip) (count 8 asked, 4 given)") in result.stdout
    # item 5: the shim's directories take their role's layout; their files get it, clamped to 4 servers
    assert dfiles(run_dir / "input" / "teragen") == b"2\0"
    assert {dfiles(p) for p in (run_dir / "input" / "teragen").glob("part-m-*")} == {2}
    assert dfiles(run_dir / "output" / "sorted") == b"8\0"
    assert {dfiles(p) for p in (run_dir / "output" / "sorted").glob("part-r-*")} == {4}
    # each part is smaller than one 1 MiB strip (5000 records of 100 bytes): still stuffed, as on a real server
    parts = [*(run_dir / "input" / "teragen").glob("part-m-*"), *(run_dir / "output" / "sorted").glob("part-r-*")]
    assert all(p.stat().st_size < 1 << 20 for p in parts) and {dfiles_now(p) for p in parts} == {1}
    shared_local_dirs_keep_the_history_and_a_cut_one_fails(run_dir, report, result)
    assert processes_of(run_dir) == []


def shared_local_dirs_keep_the_history_and_a_cut_one_fails(run_dir: Path, report: dict,
                                                           result: subprocess.CompletedProcess[str]) -> None:
    """Steps 3 and 4 of
    :func:`test_terasort_through_the_shim_with_shared_local_dirs_on_orangefs_then_a_cut_history_fails`: the wordcount
    whose local dirs are on the mount kept its history; the one whose history file's name was cut short failed."""
    first, second = report["steps"][2:]
    assert first["state"] == "succeeded" and first["returncode"] == 0, (report.get("error"), result.stdout[-3000:])
    assert list((run_dir / "history" / "done").rglob(f"{first['job_id']}-*.jhist"))
    assert list(run_dir.glob("nm-local/*/usercache"))  # the containers ran in the cluster directory
    assert word_counts(run_dir / "output" / "wc") == Counter(TEXT.split())
    # the last job ran to its end, but its history file was made under a name cut short and never reached done/
    assert second["returncode"] == 0 and second["state"] == "failed", second
    assert result.returncode == 1 and report["state"] == "failed"
    left = sorted(p.name for p in (run_dir / "history" / "intermediate").rglob(f"{second['job_id']}*"))
    assert not list((run_dir / "history").rglob(f"{second['job_id']}-*.jhist")), left
    assert report["error"] == (f"step 4 (long) ran, but the job history of {second['job_id']} was not kept: no .jhist "
                               f"in {run_dir / 'history' / 'done'} 20 s after the job, and "
                               f"{run_dir / 'history' / 'intermediate'} has only {', '.join(left[:3])} of it; "
                               f"read {run_dir / 'steps' / '04-long.log'}"), report["error"]
    assert report["error"] in result.stdout.replace("\n", "") or report["error"] in result.stderr.replace("\n", "")
    print(report["error"])


#: The user who is not root (made by the test when missing).
USER = "hhofs"


@pytest.fixture(scope="module")
def other_user() -> Iterator[pwd.struct_passwd]:
    """A user who is not root, with a home directory, who may traverse every directory on the way to the repository
    (an ACL entry for the user where one lacks o+x, removed afterwards)."""
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", USER], check=True)
        entry = pwd.getpwnam(USER)
    granted = []
    for directory in [REPO, *REPO.parents]:
        if not os.stat(directory).st_mode & 0o001:
            subprocess.run(["setfacl", "-m", f"u:{USER}:x", str(directory)], check=True)
            granted.append(directory)
    try:
        yield entry
    finally:
        for directory in granted:
            subprocess.run(["setfacl", "-x", f"u:{USER}", str(directory)], check=False)


def as_user(user: pwd.struct_passwd, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``hpc-hadoop ARGS`` as ``user`` (the product's console script in .venv, made from /usr/bin/python3)."""
    env = {"HOME": user.pw_dir, "USER": user.pw_name, "LOGNAME": user.pw_name, "PATH": "/usr/bin:/bin"}
    return subprocess.run(["runuser", "-u", user.pw_name, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()],
                           str(REPO / ".venv" / "bin" / "hpc-hadoop"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=user.pw_dir, check=False)


def doctor_names_orangefs(user: pwd.struct_passwd, home: Path) -> None:
    """``doctor`` as ``user`` on their directory ``home`` of the mount: it names the filesystem, never tries the
    sticky bit, and says the keys will never be on it."""
    doctor = as_user(user, "doctor", "--set", f"filesystem.root={home}", timeout=120)
    lines = {line.split()[1]: line for line in doctor.stdout.splitlines() if len(line.split()) > 2}
    assert "orangefs (fuse)" in lines["filesystem"] and "pvfs2fuse#tcp://" in lines["filesystem"], doctor.stdout
    assert lines["operations"].split()[0] == "ok" and "never tried: the sticky bit" in lines["operations"], \
        doctor.stdout
    keys = next(line for line in doctor.stdout.splitlines() if line.split()[1:3] == ["krb", "keys"])
    assert keys.split()[0] == "ok" and f"never on {home} (orangefs (fuse))" in keys, doctor.stdout


@pytest.mark.own_cluster("a user who is not root, on OrangeFS; its failed step ends it")
def test_doctor_wordcount_terasort_then_a_failed_step_as_a_user_who_is_not_root(
        hadoop_runtime: Path, orangefs: Path, other_user: pwd.struct_passwd, tmp_path: Path) -> None:
    """One cluster of a user who is not root, four steps (issue 38: one bring-up for what were two tests, the first
    as root).

    Issue 17 items 1 and 2 for a user's own directory on the mount: doctor names the filesystem, bring-up makes no
    sticky-bit directory (the JobHistoryServer's intermediate done dir failed with EINVAL), the mount is recognised as
    OrangeFS from its source, and a small wordcount and TeraSort run. Issue 25 item 1: neither doctor (it tried the
    sticky bit) nor the run makes a chmod OrangeFS refuses (each NodeManager chmodded
    app-logs/<random>.permission_check to 1777; the client exits after 8 refusals, killing the mount), and the mount
    is alive afterwards. Issue 36 item 5: the mount caches permission answers across users, as the real ``pvfs2fuse``
    does (the stand-in's default ``--permission-cache``), and a second user who reads every file of the owner's
    cluster directory in a loop through the run (``hhmallory``, :data:`attacks.READ_LOOP`) gets no keytab, ticket
    cache or cookie secret (``per-cluster``, the default).

    The failed last step: issue 17 item 7: the ApplicationMaster dies at start-up (its job-history directory lies
    under a regular file); the client says only "Exception from container-launch.", the cause is in the AM's own log.
    The step's error line and run.json carry that first cause line and the command that shows the whole log."""
    before = refused_chmods(orangefs)
    home = orangefs / other_user.pw_name
    home.mkdir(exist_ok=True)
    os.chown(home, other_user.pw_uid, other_user.pw_gid)
    doctor_names_orangefs(other_user, home)
    assert refused_chmods(orangefs) == before
    corpus = home / "corpus.txt"
    corpus.write_text("a b a\n" * 50)
    job = home / "wc.yaml"
    a_file = home / "a-file"
    a_file.write_text("not a directory\n")
    job.write_text(yaml.safe_dump({"name": "wc-user", "scheduler": "local", "filesystem": {"root": str(home)},
                                   "hadoop": SMALL, "steps": [
                                       {"example": "wordcount", "args": [str(corpus), "${run_dir}/output/wc"]},
                                       {"example": "teragen", "args": [2000, "${run_dir}/output/gen"]},
                                       {"example": "terasort", "args": ["${run_dir}/output/gen",
                                                                        "${run_dir}/output/sorted"]},
                                       {"example": "pi", "args": ["1", "10"], "properties": {
                                           "mapreduce.jobhistory.intermediate-done-dir": str(a_file / "h")}}]}))
    for path in (corpus, job, a_file):
        os.chown(path, other_user.pw_uid, other_user.pw_gid)
    mallory = make_user("hhmallory")
    loot_dir = mallory.own(Path(tempfile.mkdtemp(prefix="hh-loot-")))
    stop = loot_dir / "stop"
    (home / other_user.pw_name).mkdir(mode=0o700)  # the launcher's per-user level, which mallory reads below
    os.chown(home / other_user.pw_name, other_user.pw_uid, other_user.pw_gid)
    reader = mallory.popen(["/usr/bin/python3", "-c", READ_LOOP, str(home / other_user.pw_name), str(stop)])
    try:
        result = as_user(other_user, "submit", str(job))
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=120)
        shutil.rmtree(loot_dir, ignore_errors=True)
    loot = json.loads(out)
    print(f"mallory: {loot['passes']} passes over the owner's cluster directory {loot['clusters']} read "
          f"{len(loot['read'])} files (the window): {sorted(loot['read'])[:12]}")
    assert loot["passes"] > 1 and loot["clusters"], err[-2000:]  # she found the cluster from the command lines
    assert keys_in(loot["read"]) == [], (keys_in(loot["read"]), err[-2000:])
    run_dirs = sorted((home / other_user.pw_name / "hpc-hadoop").glob("wc-user-*"))
    assert len(run_dirs) == 1, (result.stdout[-3000:], result.stderr[-3000:])
    run_dir = run_dirs[0]
    report = run_report(run_dir)
    assert result.returncode != 0 and [s["state"] for s in report["steps"]] == ["succeeded"] * 3 + ["failed"], \
        (report.get("error"), result.stdout[-3000:], result.stderr[-3000:])
    assert report["filesystem"]["type"] == "orangefs (fuse)" and report["filesystem"]["class"] == "orangefs"
    assert report["filesystem"]["source"] == "pvfs2fuse#tcp://ofs-server:3334/ofs"
    modes = {p: os.stat(p).st_mode for p in run_dir.rglob("*") if not p.is_symlink()}
    assert not [p for p, m in modes.items() if m & 0o3000], "a sticky or setgid bit in the cluster directory"
    assert list((run_dir / "history").rglob("job_*.jhist"))
    assert list((run_dir / "app-logs").rglob("*")), "no aggregated log"
    text = "".join(p.read_text() for p in (run_dir / "output" / "wc").glob("part-r-*"))
    assert sorted(text.split("\n")) == ["", "a\t100", "b\t50"]
    sorted_files = sorted(p.name for p in (run_dir / "output" / "sorted").iterdir())
    assert "_SUCCESS" in sorted_files and any(n.startswith("part-r-") for n in sorted_files), sorted_files
    only_the_user_reads_it(run_dir, other_user)
    assert processes_of(run_dir) == []
    assert refused_chmods(orangefs) - before == 0 and alive(orangefs)
    failed_step_names_its_cause(other_user, run_dir, report, result.stdout, a_file)


def only_the_user_reads_it(run_dir: Path, user: pwd.struct_passwd) -> None:
    """Everything in ``run_dir`` is ``user``'s, every file private itself."""
    assert {p.stat().st_uid for p in run_dir.rglob("*") if not p.is_symlink()} == {user.pw_uid}
    # Every file private itself (issue 36 item 5); directories keep Hadoop's explicit modes (the NodeManager's 0710
    # container log directories: it refuses a usercache that is not exactly 0755), inside the 0700 cluster directory.
    shared = [p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_mode & 0o077]
    assert shared == [], [(str(p.relative_to(run_dir)), oct(p.stat().st_mode & 0o777)) for p in shared][:20]


def failed_step_names_its_cause(user: pwd.struct_passwd, run_dir: Path, report: dict, printed: str,
                                a_file: Path) -> None:
    """The last step of :func:`test_doctor_wordcount_terasort_then_a_failed_step_as_a_user_who_is_not_root`, whose
    ApplicationMaster died at start-up on ``a_file`` (a regular file where its history directory should be): its
    cause, from the AM's own log, in run.json, on the terminal (``printed``) and through ``hpc-hadoop logs``."""
    step = report["steps"][-1]
    assert "Exception from container-launch" in (run_dir / "steps" / "04-pi.log").read_text()
    cause = step["cause"]
    # The ApplicationMaster's container of the last attempt (two attempts: yarn.resourcemanager.am.max-attempts 2)
    assert re.fullmatch(r"container_\d+_\d+_02_000001", cause["container"]) and cause["file"] == "syslog", cause
    assert str(a_file) in cause["line"], cause
    assert cause["command"] == f"hpc-hadoop logs {report['cluster_id']} --app {step['application_id']}"
    assert f"cause: {cause['line']}; read {cause['path']}; all container logs: {cause['command']}" in report["error"]
    assert cause["line"].split(":")[0] in Path(cause["path"]).read_text()
    assert cause["line"] in printed.replace("\n", "")
    shown = as_user(user, *cause["command"].split()[1:], timeout=120)
    assert shown.returncode == 0 and cause["line"] in shown.stdout, shown.stdout[-2000:] + shown.stderr[-2000:]


# -- issue 25 item 3: path lengths below the mount ---------------------------------------------------------------

#: The root of the issue's failed runs: 123 bytes below the mount point (every job failed, `doctor` said all ok).
DEEP = "deep-root-" + "r" * 113


def test_a_root_too_deep_for_the_mount_is_refused_in_one_line(hadoop_runtime: Path, orangefs: Path,
                                                              tmp_path: Path) -> None:
    """pvfs2fuse makes no path of more than 254 bytes below its mount point (the stand-in cuts or refuses longer
    ones, as the real client does): `doctor`, `render` and `submit` refuse a root 123 bytes below the mount in one
    line that names its depth, the limit and the fix, before anything is made or started."""
    deep = orangefs / DEEP
    deep.mkdir()
    assert len(DEEP) == 123
    job = write_job(tmp_path, {"name": "deep", "filesystem": {"root": str(deep)}, "hadoop": SMALL,
                               "steps": [{"example": "pi", "args": ["1", "10"]}]})
    for command in ("render", "submit"):
        result = hpc_hadoop(command, str(job), timeout=120)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, (command, result.returncode, result.stderr[-3000:])
        assert lines[0].startswith(f"error: {job}: filesystem.root: {deep} is 123 bytes below the mount point "
                                   f"{orangefs} of orangefs (fuse), and a run makes paths "), lines[0]
        assert "more than the 254 OrangeFS's FUSE client (pvfs2fuse) takes (fix: choose a filesystem.root at most " \
               in lines[0], lines[0]
        assert "==> conf/" not in result.stdout
        print(f"{command}: {lines[0]}")
    assert os.listdir(deep) == []  # no cluster directory, nothing started
    doctor = hpc_hadoop("doctor", "--set", f"filesystem.root={deep}", timeout=120)
    lines = {line.split()[1]: line for line in doctor.stdout.splitlines() if len(line.split()) > 2}
    assert doctor.returncode == 1 and lines["path"].split()[0] == "fail", doctor.stdout
    assert f"filesystem.root: {deep} is 123 bytes below the mount point {orangefs}" in lines["path"], doctor.stdout
    print(doctor.stdout)
