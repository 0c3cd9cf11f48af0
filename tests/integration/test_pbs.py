"""The PBS backend end to end through STAND-INS: no PBS server (Torque, PBS Pro or OpenPBS) installs from this
machine's package registries, so ``tests/standins/pbs/`` (first on ``PATH``) plays ``qsub``, ``qstat``, ``qdel``,
``pbsdsh`` and ``pbs_tmrsh``: it records their arguments, prints what the real commands print, and runs the batch
script here with a ``PBS_NODEFILE``, as the real ones did in issue 17 (PBS Pro keeps no job history by default and
spells ``Exit_status``; the MoM starts the job through a login shell whose ``PATH`` finds another ``qstat`` and
another ``java`` first; Torque's ``qdel`` sends SIGKILL 26 ms after SIGTERM to the job's session and tasks).
Everything else is real: the rendered script, the launcher inside it, the Hadoop daemons and the job steps.

Torque's ``qsub`` runs no job as root (the launcher refuses it before ``qsub``), so when the tests run as root the
commands of the issue-17 tests run as the unprivileged user ``nobody`` (:class:`Submitter`), as a PBS user would.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import REPO, hpc_hadoop, only_run_dir, processes_of, run_dirs, run_report
from tests.jobs import SMALL, wait_until

pytestmark = [pytest.mark.hadoop]

STANDINS = REPO / "tests" / "standins" / "pbs"
#: A job client that exits with the code it is given (built by :func:`exit_jar`).
EXIT_JAVA = "public class ExitWith { public static void main(String[] a) { System.exit(Integer.parseInt(a[0])); } }\n"


def standin_env(state: Path, flavor: str) -> dict[str, str]:
    return {"PATH": f"{STANDINS}{os.pathsep}{os.environ['PATH']}", "PBS_STANDIN_DIR": str(state),
            "PBS_STANDIN_FLAVOR": flavor}


def write_job(tmp_path: Path, pfs_root: Path, **fields: object) -> Path:
    text = pfs_root / "words.txt"
    text.write_text("the quick brown fox\njumps over the lazy dog\nthe end\n")
    job = tmp_path / "pbswc.yaml"
    job.write_text(yaml.safe_dump({
        "name": "pbswc", "scheduler": "pbs", "nodes": 1, "walltime": "00:15:00", "interface": "lo",
        # The stand-in runs its one node on this machine: the root under /tmp is "shared" (issue #11 refuses a
        # batch job's node-local root unless filesystem.shared asserts it).
        "filesystem": {"root": str(pfs_root), "shared": True}, "hadoop": SMALL,
        "steps": [{"example": "wordcount", "args": [str(text), "${run_dir}/output/wordcount"]}], **fields}))
    return job


@pytest.mark.own_cluster("a PBS job of its own (stand-in OpenPBS, no job history); its step that exits 3 ends it")
def test_wordcount_then_a_step_that_exits_3_through_standin_pbs_pro(pfs_root: Path, tmp_path: Path,
                                                                    hadoop_runtime: Path, exit_jar: Path) -> None:
    """``submit --wait`` on stand-in OpenPBS (flavor detected from ``qstat --version``; no job history, its
    default), agent via ``pbs_tmrsh``; inside the job nothing is found on the login shell's ``PATH``. Grid Engine's
    ``qsub``, ``qstat`` and ``qdel`` (``/usr/bin``, the real ones) come first on ``PATH``, as OpenPBS's own
    ``/etc/profile.d/pbs.sh`` leaves a login shell where both are installed: every PBS command is PBS's (issue 37
    item 6: the code before ran Grid Engine's ``qsub``, which printed ``Your job 3 ("batch.sh") has been submitted``).
    The default security's checks answer through files (item 5: ``pbs_tmrsh`` relays nothing).

    The word count, then a step that exits 3 (issue 17 item 10, on PBS Pro; issue 38 merged its cluster of its own
    here): without job history the server forgets the job at once, and ``--wait`` takes the exit code from run.json.
    (``Exit_status = 3`` read from a server that keeps history is tests/unit/schedulers/test_pbs.py's, through the
    same stand-ins; ``submit --wait`` of a Torque job whose step exited 3, its ``exit_status`` kept by the server, is
    tests/unit/lifecycle/test_submit.py's, through the same stand-ins.)"""
    state = tmp_path / "standin"
    job = write_job(tmp_path, pfs_root)
    spec = yaml.safe_load(job.read_text())
    spec["steps"].append({"jar": str(exit_jar), "class": "ExitWith", "args": [3]})
    job.write_text(yaml.safe_dump(spec))
    env = standin_env(state, "pbspro")
    assert Path("/usr/bin/qsub").exists() and Path("/usr/bin/qconf").exists(), "Grid Engine's clients (install.sh)"
    env["PATH"] = f"/usr/bin:/bin:{STANDINS}:{os.environ['PATH']}"
    result = hpc_hadoop("submit", str(job), "--wait", env=env, timeout=600)
    assert result.returncode == 3, result.stdout[-4000:] + result.stderr[-2000:]
    run_dir = only_run_dir(pfs_root)
    report = run_report(run_dir)
    assert report["state"] == "failed" and report["scheduler"] == "pbs" and report["job_id"] == "1.standin"
    assert report["exit_code"] == 3 and [s["returncode"] for s in report["steps"]] == [0, 3], report["steps"]
    counts = dict(line.split("\t") for p in (run_dir / "output" / "wordcount").glob("part-r-*")
                  for line in p.read_text().splitlines())
    assert counts["the"] == "3"
    assert (state / "qsub.args").read_text().split() == [str(run_dir / "batch.sh")]
    assert (state / "pbs_tmrsh.args").read_text().startswith("localhost ")
    assert "-x -f 1.standin" in (state / "qstat.args").read_text()
    assert "#PBS -l select=1:ncpus=1" in (run_dir / "batch.sh").read_text()
    submitted = yaml.safe_load((run_dir / "job.yaml").read_text())
    assert submitted["pbs"]["commands"]["pbs_tmrsh"] == str(STANDINS / "pbs_tmrsh")
    assert "job 1.standin: running" in result.stdout
    assert "job 1.standin: no longer known to the batch system; run.json: failed, exit code 3" in result.stdout
    assert "job 1.standin: completed" not in result.stdout
    assert processes_of(run_dir) == []


@pytest.mark.parametrize("flavor", ["torque", "pbspro"])
def test_the_task_launchers_relay_nothing_of_their_task(tmp_path: Path, flavor: str) -> None:
    """Issue 37 item 5, as seen on real OpenPBS 23.06 and Torque 6.1.3: inside a job, ``out=$(pbs_tmrsh HOST echo
    hello1)`` (and ``pbsdsh -h HOST``) leaves ``out`` empty with exit 0, and ``hello1`` is in the job's output file;
    Torque's ``pbsdsh -o`` relays it. The stand-in behaves so (its old ``pbs_tmrsh`` passed the output through, and
    the launcher read the secure-mode checks' answer from it: every real PBS run failed at bring-up)."""
    state, out = tmp_path / "standin", tmp_path / "job.out"
    client = "pbsdsh -h localhost" if flavor == "torque" else "pbs_tmrsh localhost"
    script = tmp_path / "relay.sh"
    script.write_text(f"#!/bin/bash\n#PBS -o {out}\n#PBS -l walltime=00:01:00\n"
                      f'got=$({client} echo hello1); echo "client printed [$got] exit $?"\n'
                      + ('got=$(pbsdsh -o -h localhost echo hello2); echo "with -o: [$got]"\n' if flavor == "torque"
                         else ""))
    env = {**os.environ, **standin_env(state, flavor)}
    submitted = subprocess.run(["qsub", str(script)], capture_output=True, text=True, env=env, timeout=60,
                               check=False)
    assert submitted.returncode == 0, submitted.stderr
    deadline = time.monotonic() + 60
    while "client printed" not in (out.read_text() if out.exists() else ""):
        assert time.monotonic() < deadline, "the stand-in job did not run"
        time.sleep(0.1)
    time.sleep(0.5)
    text = out.read_text()
    print(text)
    assert "hello1\nclient printed [] exit 0" in text
    if flavor == "torque":
        assert "with -o: [hello2]" in text


def test_torque_as_root_is_refused_in_one_line(pfs_root: Path, tmp_path: Path, hadoop_runtime: Path) -> None:
    state = tmp_path / "standin"
    job = write_job(tmp_path, pfs_root, pbs={"flavor": "torque"})
    result = hpc_hadoop("submit", str(job), env=standin_env(state, "torque"), timeout=120)
    if os.geteuid() == 0:
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.strip() == ("error: scheduler: Torque refuses jobs submitted by root "
                                         "(fix: submit as a regular user (Torque's qsub runs no job as root))")
        assert not (state / "qsub.args").exists() and run_dirs(pfs_root) == []
    else:
        assert result.returncode == 0 and (state / "qsub.args").exists()


# -- issue 17 items 9-12, as a PBS user ---------------------------------------------------------------------------

class Submitter:
    """Runs ``hpc-hadoop`` and the stand-in PBS commands as a PBS user: ``nobody`` when the tests run as root (with
    a home of its own for the session, so its class-data-sharing archives warm the later bring-ups), else the
    test's own user. Its environment is a login's: ``PATH`` with the stand-ins first, no ``JAVA_HOME``."""

    def __init__(self, home: Path) -> None:
        self.root = os.geteuid() == 0
        entry = pwd.getpwnam("nobody") if self.root else pwd.getpwuid(os.getuid())
        self.user, self.uid, self.gid = entry.pw_name, entry.pw_uid, entry.pw_gid
        self.home = home

    def directory(self, prefix: str) -> Path:
        """A new directory under /tmp that the user owns (mode 0700 as a user's own would be)."""
        path = Path(tempfile.mkdtemp(prefix=f"hh-pbs-{prefix}-", dir="/tmp"))
        os.chown(path, self.uid, self.gid)
        return path

    def env(self, work: Path, flavor: str, **extra: str) -> dict[str, str]:
        return {"PATH": f"{STANDINS}:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "USER": self.user,
                "LOGNAME": self.user, "LANG": "C.UTF-8", "TMPDIR": str(work / "tmp"),
                "XDG_STATE_HOME": str(work / "state"), "PBS_STANDIN_DIR": str(work / "standin"),
                "PBS_STANDIN_FLAVOR": flavor, **extra}

    def run(self, argv: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        ids = {"user": self.uid, "group": self.gid, "extra_groups": []} if self.root else {}
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO, check=False,
                              **ids)  # type: ignore[call-overload]

    def hpc_hadoop(self, *args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-m", "launcher.cli", *args], env, timeout)


@pytest.fixture(scope="session")
def submitter() -> Iterator[Submitter]:
    home = Path(tempfile.mkdtemp(prefix="hh-pbs-home-", dir="/tmp"))
    user = Submitter(home)
    os.chown(home, user.uid, user.gid)
    for path in (REPO, Path(sys.executable).resolve()):
        assert os.access(path, os.R_OK), f"{path} must be readable by {user.user} for the PBS tests"
    yield user
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def work(submitter: Submitter) -> Iterator[Path]:
    """The test's directory, owned by the submitter: ``pfs/`` (the filesystem root), ``tmp/`` (node-local),
    ``state/`` (the index of clusters), ``standin/`` (the stand-ins' records)."""
    path = submitter.directory("work")
    for sub in ("pfs", "tmp", "state", "standin"):
        (path / sub).mkdir()
        os.chown(path / sub, submitter.uid, submitter.gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def exit_jar(tmp_path_factory: pytest.TempPathFactory, hadoop_runtime: Path) -> Iterator[Path]:
    """``exit-with.jar``: class ``ExitWith``, whose main exits with its argument (the step of a job that exits 3)."""
    javac, jar = shutil.which("javac"), shutil.which("jar")
    assert javac and jar, "the JDK's javac and jar are needed to build the step that exits 3"
    out = Path(tempfile.mkdtemp(prefix="hh-pbs-jar-", dir="/tmp"))
    out.chmod(0o755)
    source = tmp_path_factory.mktemp("exitwith") / "ExitWith.java"
    source.write_text(EXIT_JAVA)
    subprocess.run([javac, "-d", str(source.parent), str(source)], check=True)
    subprocess.run([jar, "cf", str(out / "exit-with.jar"), "-C", str(source.parent), "ExitWith.class"], check=True)
    (out / "exit-with.jar").chmod(0o644)
    yield out / "exit-with.jar"
    shutil.rmtree(out, ignore_errors=True)


def job_file(submitter: Submitter, work: Path, name: str, flavor: str, steps: list[dict]) -> Path:
    job = work / f"{name}.yaml"
    job.write_text(yaml.safe_dump({
        "name": name, "scheduler": "pbs", "nodes": 1, "walltime": "00:15:00", "interface": "lo",
        "pbs": {"flavor": flavor}, "filesystem": {"root": str(work / "pfs"), "shared": True}, "hadoop": SMALL,
        "steps": steps}))
    os.chown(job, submitter.uid, submitter.gid)
    return job


def the_run_dir(submitter: Submitter, work: Path) -> Path:
    (run_dir,) = (work / "pfs" / submitter.user / "hpc-hadoop").iterdir()
    return run_dir


@pytest.fixture
def leftovers(work: Path) -> Iterator[None]:
    """After the test, kill what a failed run of it left running (processes naming the test's directory)."""
    yield
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(work) in part for part in proc.info["cmdline"] or ()):
                proc.kill()
        except psutil.Error:
            continue


@pytest.mark.usefixtures("leftovers")
@pytest.mark.own_cluster("start and stop on PBS without job history")
def test_start_with_job_history_off_comes_up_and_stop_ends_it(submitter: Submitter, work: Path,
                                                               hadoop_runtime: Path) -> None:
    """Issue 17 item 9: without job history (OpenPBS's default) ``qstat -x -f`` says nothing even of a running job;
    ``start`` failed in 0.6 s (``the batch system no longer knows job``) while the cluster came up, ``stop`` said
    ``is already ended`` and the cluster ran to its walltime."""
    env = submitter.env(work, "pbspro")
    job = job_file(submitter, work, "inter", "pbspro", [])
    started = submitter.hpc_hadoop("start", str(job), env=env)
    assert started.returncode == 0, started.stdout[-4000:] + started.stderr[-2000:]
    run_dir = the_run_dir(submitter, work)
    assert f"cluster {run_dir.name} is up" in started.stdout
    assert yaml.safe_load((run_dir / "job.yaml").read_text())["hadoop"]["java_home"]  # not the login PATH's java
    listed = submitter.hpc_hadoop("list", "--json", env=env)
    assert [json.loads(line)["state"] for line in listed.stdout.splitlines()] == ["ready"], listed.stdout
    plan = json.loads((run_dir / "plan.json").read_text())
    assert plan["deadline"] is not None and plan["fanout_program"] == str(STANDINS / "pbs_tmrsh")
    stopped = submitter.hpc_hadoop("stop", run_dir.name, env=env)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert f"cluster {run_dir.name}: stopped" in stopped.stdout
    assert run_report(run_dir)["state"] == "stopped"
    assert not (work / "standin" / "qdel.args").exists()  # torn down by the cluster: nothing to cancel
    assert processes_of(run_dir) == []


@pytest.mark.usefixtures("leftovers")
def processes_below(work: Path) -> list[str]:
    """Live processes whose command line names ``work`` anywhere (the cluster directory, the node-local ``nm-local``
    of the containers), each as ``pid: <main class or program>``: the full command line is matched, as a
    container's main class comes after several hundred characters of options."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status", "pid"]):
        try:
            words = proc.info["cmdline"] or []
            if proc.info["status"] != psutil.STATUS_ZOMBIE and any(str(work) in word for word in words):
                main = next((w for w in words if w.startswith("org.apache.hadoop.")), words[0] if words else "?")
                found.append(f"{proc.info['pid']}: {main}")
        except psutil.Error:
            continue
    return found


@pytest.mark.own_cluster("Torque's qdel ends it")
def test_torque_qdel_leaves_a_lost_cluster_and_no_process(submitter: Submitter, work: Path,
                                                          hadoop_runtime: Path) -> None:
    """Issue 17 item 11: Torque's ``qdel`` (SIGKILL 26 ms after SIGTERM) leaves no time for teardown: the cluster
    shows ``lost`` (``run.json`` still says running), its logs stay readable, and nothing it started survives (the
    ``pbsdsh`` client, in a session of its own, had survived for over 76 s). Issue 37 item 7: with a SleepJob's map
    running at the ``qdel``, its MRAppMaster and map containers (each in a session of its own: the NodeManager's
    ``setsid``, out of the job's session that the MoM kills) end too: the agent's reaper ends them."""
    env = submitter.env(work, "torque")
    job = job_file(submitter, work, "killed", "torque", [{
        "jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
        "args": ["-Dmapreduce.job.ubertask.enable=false", "-m", "1", "-r", "0", "-mt", "600000"]}])
    submitted = submitter.hpc_hadoop("submit", str(job), env=env)
    assert submitted.returncode == 0, submitted.stdout[-4000:] + submitted.stderr[-2000:]
    wait_until(lambda: any("YarnChild" in p for p in processes_below(work)), 180, "the SleepJob's map to run")
    run_dir = the_run_dir(submitter, work)
    before = processes_below(work)
    assert any("MRAppMaster" in p for p in before), before
    deleted = submitter.run([str(STANDINS / "qdel"), "1.standin"], env)
    assert deleted.returncode == 0, deleted.stderr
    qstat = [str(STANDINS / "qstat"), "-f", "1.standin"]
    wait_until(lambda: "job_state = C" in submitter.run(qstat, env).stdout, 30, "the job to end")
    wait_until(lambda: not processes_below(work), 15, f"no process of the cluster: {processes_below(work)}")
    print(f"before the qdel: {len(before)} processes ({', '.join(p.split(': ')[1] for p in before)}); 15 s after: none")
    assert run_report(run_dir)["state"] == "running"  # no teardown ran
    (listed,) = [json.loads(line) for line in submitter.hpc_hadoop("list", "--json", env=env).stdout.splitlines()]
    assert listed["state"] == "lost" and not listed["active"]
    assert listed["detail"].startswith("the batch job 1.standin is ") and listed["detail"].endswith("no final run.json")
    logs = submitter.hpc_hadoop("logs", run_dir.name, "--daemon", "resourcemanager", env=env)
    assert logs.returncode == 0 and "resourcemanager.log <==" in logs.stdout


# -- issue 25 items 7 and 9: a server that does not answer, a job that never ran ------------------------------------

def held_job(submitter: Submitter, work: Path, flavor: str) -> Path:
    """A job held in the queue (``#PBS -h``: it never runs, so no Hadoop starts)."""
    job = job_file(submitter, work, "held", flavor, [{"example": "pi", "args": [1, 10]}])
    spec = yaml.safe_load(job.read_text())
    spec["batch"] = {"extra_directives": ["-h"]}
    job.write_text(yaml.safe_dump(spec))
    return job


@pytest.mark.parametrize("flavor", ["torque", "pbspro"])
@pytest.mark.usefixtures("leftovers")
def test_a_server_that_does_not_answer_is_never_an_answer_about_the_job(submitter: Submitter, work: Path,
                                                                        flavor: str) -> None:
    """Issue 25 item 7: while the server does not answer (or Grid Engine's ``qstat`` comes first on the login
    ``PATH``), ``list`` showed a queued cluster ``lost`` and ``stop`` said ``is already lost`` (exit 0, nothing
    stopped). Now: ``unknown`` since when and why, with the ``qstat`` recorded at submission; ``stop`` requests the
    teardown and says the cancel went unanswered (exit 1). Item 9: stopped while queued, it is ``cancelled``, final
    (``list`` no longer asks the server)."""
    env = submitter.env(work, flavor)
    login = {**env, "PATH": f"{STANDINS / 'login'}:{env['PATH']}"}  # Grid Engine's qstat first, as pbs.sh leaves it
    submitted = submitter.hpc_hadoop("submit", str(held_job(submitter, work, flavor)), env=env)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    run_dir = the_run_dir(submitter, work)
    listed = submitter.hpc_hadoop("list", "--json", env=login)
    assert [json.loads(line)["state"] for line in listed.stdout.splitlines()] == ["pending"], listed.stdout
    down = work / "standin" / "server-down"
    down.touch()
    message = {"torque": "qstat: cannot connect to server standin (errno=111) Connection refused",
               "pbspro": "qstat: cannot connect to server standin (errno=15010)"}[flavor]
    (listed,) = [json.loads(line) for line in submitter.hpc_hadoop("list", "--json", env=login).stdout.splitlines()]
    assert listed["state"] == "unknown" and listed["active"], listed
    assert listed["detail"].startswith("batch system not answering since ") and message in listed["detail"]
    shown = submitter.hpc_hadoop("status", run_dir.name, env=login)
    assert shown.returncode == 0 and "unknown" in shown.stdout and message in " ".join(shown.stdout.split())
    stopped = submitter.hpc_hadoop("stop", run_dir.name, "--timeout", "2", env=login)
    said = " ".join(stopped.stdout.split())
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    assert "teardown requested" in said and "the batch system did not answer the cancel" in said
    assert f"cluster {run_dir.name} is still unknown" in said and (run_dir / "stop-requested").exists()
    assert (work / "standin" / "qdel.args").read_text().split() == ["1.standin"]
    down.unlink()
    stopped = submitter.hpc_hadoop("stop", run_dir.name, env=login)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert f"cluster {run_dir.name}: cancelled" in stopped.stdout
    (listed,) = [json.loads(line) for line in submitter.hpc_hadoop("list", "--json", env=login).stdout.splitlines()]
    assert listed["state"] == "cancelled" and not listed["active"]
    assert listed["detail"].startswith("stopped while queued")
    asked = (work / "standin" / "qstat.args").read_text().count("\n")
    submitter.hpc_hadoop("list", env=login)
    assert (work / "standin" / "qstat.args").read_text().count("\n") == asked  # an ended cluster is not asked again


@pytest.mark.parametrize("flavor", ["torque", "pbspro"])
@pytest.mark.usefixtures("leftovers")
def test_submit_wait_waits_through_a_server_that_does_not_answer_and_a_qdel_is_cancelled(
        submitter: Submitter, work: Path, hadoop_runtime: Path, flavor: str) -> None:
    """Issue 25 item 7: ``submit --wait`` across a server restart printed ``no longer known to the batch system`` and
    exited 1 while the job ran on; item 9: a job removed with ``qdel`` ended it with 1 (``failed``). Now it waits
    through the silence (a line says since when and why) and reports ``cancelled``, 143 (PBS Pro keeping job history,
    as a site that wants ended jobs told apart must: without it the server forgets the job at once)."""
    env = submitter.env(work, flavor, PBS_STANDIN_HISTORY="1")
    job = job_file(submitter, work, "waited", flavor, [{"example": "pi", "args": [1, 10]}])
    spec = yaml.safe_load(job.read_text())
    spec["batch"] = {"prologue": ["sleep 300"]}  # the job runs (state R) without starting Hadoop
    job.write_text(yaml.safe_dump(spec))
    ids = {"user": submitter.uid, "group": submitter.gid, "extra_groups": []} if submitter.root else {}
    waiting = subprocess.Popen([sys.executable, "-m", "launcher.cli", "submit", str(job), "--wait"], env=env, cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **ids)  # type: ignore[call-overload]
    try:
        record = work / "standin" / "1.standin.json"
        wait_until(lambda: record.exists() and json.loads(record.read_text())["state"] == "R", 60, "the job to run")
        asked = work / "standin" / "qstat.args"
        down = work / "standin" / "server-down"
        wait_until(asked.exists, 30, "submit --wait to ask qstat")
        before = asked.read_text().count("\n")
        down.touch()
        wait_until(lambda: asked.read_text().count("\n") >= before + 7 or waiting.poll() is not None, 60,
                   "seven polls of a server that does not answer")
        assert waiting.poll() is None, waiting.communicate()[0][-3000:]  # still waiting
        down.unlink()
        deleted = submitter.run([str(STANDINS / "qdel"), "1.standin"], env)
        assert deleted.returncode == 0, deleted.stderr
        out, _ = waiting.communicate(timeout=120)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    said = " ".join(out.split())
    message = {"torque": "qstat: cannot connect to server standin (errno=111) Connection refused",
               "pbspro": "qstat: cannot connect to server standin (errno=15010)"}[flavor]
    assert "job 1.standin: unknown: batch system not answering since " in said and message in said, out[-3000:]
    assert "job 1.standin: the batch system answers again" in said
    assert waiting.returncode == 143, out[-3000:]
    assert "job 1.standin: cancelled" in said, out[-3000:]
