#!/usr/bin/env python3
"""Stand-in PBS commands (``qsub``, ``qstat``, ``qdel``, ``pbsdsh``, ``pbs_tmrsh``) for tests.

No PBS server installs from this machine's package registries, so tests put this directory first on
``PATH``. Each command is a symlink to this file; it records its arguments in ``$PBS_STANDIN_DIR/<cmd>.args``
(one line per call) and behaves like the real command of Torque 6.1 or OpenPBS 23.06 (``$PBS_STANDIN_FLAVOR``:
torque | pbspro), in its output formats, on this one machine, including what the real ones did that the first
version of this stand-in did not (issue 17 items 9-12):

* ``qsub SCRIPT`` prints the job id line (``1.standin``), copies the script and runs it in the background with
  ``PBS_JOBID``, ``PBS_NODEFILE`` (one line per core, the host ``localhost``), ``PBS_O_WORKDIR``,
  ``PBS_NUM_NODES``/``PBS_NUM_PPN`` (Torque) or ``NCPUS`` (PBS Pro), in ``$HOME``, output to the ``-o`` path.
  As both MoMs do, the job starts through a login shell: the submitter's environment when the script asks for
  ``-V``, but ``PATH`` reset to the login shell's, on which ``login/`` of this directory comes first: ANOTHER
  ``qstat`` (Grid Engine's, which fails) and another ``java``, so anything the job looks up on ``PATH`` is not
  what the submitter had. The job's script runs in a session of its own (the job's session).
  ``$PBS_STANDIN_REFUSE`` makes ``qsub`` refuse with that message.
* The job's processes are those of its session and of its tasks' sessions (below). The walltime ends them as
  the MoM does: SIGTERM, SIGKILL ``kill_delay`` (2 s here) later. ``qdel ID`` ends them the same way, with the
  SIGKILL 26 ms after the SIGTERM on Torque (what a real Torque 6.1 MoM did), 2 s on PBS Pro. When the job's script
  exits, what is left of them is killed (SIGKILL). A process that made a session of its own outside a task
  escapes all of this, as it escapes the real MoMs.
* ``qstat --version`` answers as Torque 6.1.3 or OpenPBS 23.06.06; ``qstat -f ID`` prints ``Job Id:`` and indented
  ``key = value`` attributes (``job_state``, ``Resource_List.walltime``, ``resources_used.walltime``, Torque's
  ``start_time`` and ``Walltime.Remaining``, PBS Pro's ``stime``; the exit status as Torque's ``exit_status`` or
  PBS Pro's ``Exit_status``); a recorded sample ``$PBS_STANDIN_DIR/ID.qstat`` is printed as is. PBS Pro keeps no
  job history unless ``$PBS_STANDIN_HISTORY`` is ``1`` (OpenPBS's default: ``job_history_enable`` unset): then
  ``qstat -x -f ID`` exits 0 with nothing on standard output and ``qstat: PBS is not configured to maintain job
  history ID`` on standard error, even for a running job, and a finished job is unknown to ``qstat -f``
  (``qstat: Unknown Job Id ID``, exit 153). With history, ``qstat -f`` of a finished job says ``qstat: ID Job has
  finished, use -x or -H to obtain historical job information`` (exit 35) and ``-x -f`` shows it (state ``F``).
  Torque keeps a completed job (state ``C``) and shows it to ``qstat -f``; its ``-x`` (XML) is not emulated.
* ``pbsdsh [-o] -h HOST CMD...`` (Torque) and ``pbs_tmrsh HOST WORDS...`` (PBS Pro: words joined, run by ``sh -c``)
  ask the MoM for a task of the job: here the command runs in a session of its own with ``HPC_HADOOP_NODE=HOST``,
  recorded as a task of the job, while the client waits for it and exits with its code. Only inside a job, as the
  real ones (TM interface). The task's standard output and error go to the **job's** output file, never to the
  client's (issue 37 item 5, seen on real OpenPBS 23.06 and Torque 6.1.3: inside a job
  ``out=$(pbs_tmrsh pbshost echo hello1)`` leaves ``out`` empty, exit 0, and ``hello1`` is in the job's ``.OU`` file;
  OpenPBS's ``src/cmds/pbs_tmrsh.c`` starts the task with ``tm_spawn()`` and relays nothing), except with Torque's
  ``pbsdsh -o`` ("redirect tasks' stdout and stderr to this proc's", ``src/cmds/pbsdsh.c``).
  ``pbsdsh`` passes SIGTERM, SIGINT and SIGHUP on to its task and exits 1 (OpenPBS's
  ``bailout``); ``pbs_tmrsh`` has no handler. A client whose task the MoM killed because the job ended gets no
  obituary and waits on (the real Torque client did, for over 76 s, until killed by hand).
* A server that does not answer (issue 25 item 7: ``qterm -t quick``, jobs running on): while the file
  ``$PBS_STANDIN_DIR/server-down`` exists, ``qstat``, ``qdel`` and ``qsub`` cannot connect, with the real messages and
  exit codes: Torque's ``qstat: cannot connect to server standin (errno=111) Connection refused`` (exit 111; ``qdel:``
  the same), OpenPBS's ``Connection refused`` then ``qstat: cannot connect to server standin (errno=15010)`` (exit 255,
  ``src/cmds/qstat.c``: the connection's -1) or ``Couldn't connect to cluster: standin`` (``qdel``: exit 162, its
  ``PBSE_SYSTEM`` 15010 modulo 256). The jobs themselves run on.
* ``#PBS -h`` (a user hold) keeps the job queued (state ``H``) until ``qdel`` removes it: a job that never runs,
  which costs no Hadoop. ``qdel`` of a job that has not run ends it with no exit status.
* A task (``pbsdsh``, ``pbs_tmrsh``) gets the *job's* environment, not its caller's: Torque's ``pbsdsh.c`` hands
  ``tm_spawn`` only ``TM_STDOUT_PORT`` (with ``-o``), OpenPBS's ``pbs_tmrsh.c`` passes ``NULL``, and the MoM starts the
  task with the environment it gave the job (saved at the job's start as ``<id>.env``), plus ``PBS_TASKNUM``. A
  variable the job's script sets before ``pbsdsh`` does not reach the task. The job's environment has
  ``PBS_JOBCOOKIE`` (32 hex digits, random per job: the secret ``tm_init`` reads in every task).
* The job's environment has ``PBS_O_PATH`` (the submitter's ``PATH``), as both MoMs set it. At the walltime the MoM
  records Torque's ``JOB_EXEC_OVERLIMIT_WT`` (-11) or OpenPBS's ``JOB_EXEC_KILL_WALLTIME`` (-29) as the exit status; a
  script killed by a signal (``qdel``) gets 256 + the signal.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ.get("PBS_STANDIN_DIR") or f"/tmp/pbs-standin-{os.getuid()}")
FLAVOR = os.environ.get("PBS_STANDIN_FLAVOR", "torque")
HISTORY = FLAVOR == "torque" or os.environ.get("PBS_STANDIN_HISTORY") == "1"
#: The MoM's ``kill_delay`` at the walltime (and on PBS Pro's ``qdel``), seconds (OpenPBS's default is 10).
KILL_DELAY = 2.0
#: Seconds between the SIGTERM and the SIGKILL of Torque's ``qdel``, as a real Torque 6.1 MoM sent them.
TORQUE_QDEL_DELAY = 0.026
#: ``PATH`` after the login shell's profile: another ``qstat`` and ``java`` first (``login/``), then the system's.
LOGIN_PATH = f"{HERE / 'login'}:/usr/local/bin:/usr/bin:/bin:{HERE}"
#: What the job keeps of the environment without ``-V`` (and the stand-in's own settings, which play the server's).
KEPT = ("HOME", "USER", "LOGNAME", "SHELL", "LANG", "TMPDIR", "PBS_STANDIN_DIR", "PBS_STANDIN_FLAVOR",
        "PBS_STANDIN_HISTORY")


#: While this file exists in the state directory, the server does not answer (:func:`server_down`).
DOWN_FLAG = "server-down"
#: What the real client commands print and exit with when the server cannot be reached, by flavor and command:
#: Torque 6.1 (``src/cmds/qstat.c``, ``qdel.c``: ``errno`` is the connect's, ECONNREFUSED) and OpenPBS 23.06
#: (``src/cmds/qstat.c``, ``qdel.c``, ``src/lib/Libcmds/cnt2server.c``: ``perror`` then PBSE_SYSTEM 15010).
UNREACHABLE = {
    ("torque", "qstat"): ("qstat: cannot connect to server standin (errno=111) Connection refused", 111),
    ("torque", "qdel"): ("qdel: cannot connect to server standin (errno=111) Connection refused", 111),
    ("torque", "qsub"): ("qsub: cannot connect to server standin (errno=111) Connection refused", 111),
    ("pbspro", "qstat"): ("Connection refused\nqstat: cannot connect to server standin (errno=15010)", 255),
    ("pbspro", "qdel"): ("Connection refused\nCouldn't connect to cluster: standin", 162),
    ("pbspro", "qsub"): ("Connection refused\nqsub: cannot connect to server standin (errno=15010)", 255),
}


def server_down(command: str) -> int | None:
    """The exit code of ``command`` when the server does not answer (its message printed), else ``None``."""
    if not (STATE / DOWN_FLAG).exists():
        return None
    message, code = UNREACHABLE[(FLAVOR, command)]
    print(message, file=sys.stderr)
    return code


def record(command: str, argv: list[str]) -> None:
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / f"{command}.args", "a") as out:
        out.write(" ".join(argv) + "\n")


def hms(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def ctime(epoch: float) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(epoch))


def load(job_id: str) -> dict | None:
    try:
        return json.loads((STATE / f"{job_id}.json").read_text())
    except (OSError, ValueError):
        return None


def save(job: dict) -> None:
    tmp = STATE / f"{job['id']}.json.tmp{os.getpid()}"
    tmp.write_text(json.dumps(job))
    os.replace(tmp, STATE / f"{job['id']}.json")


def update(job_id: str, **fields: object) -> None:
    """Set ``fields`` in the job's record (read again first: the runner and ``qdel`` both write it)."""
    job = load(job_id)
    if job is not None:
        job.update(fields)
        save(job)


def parse_seconds(text: str) -> int:
    total = 0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total


#: ``#PBS`` flags without a value and what each sets (``-V``: export the environment; ``-h``: held).
_FLAG_SWITCHES = {"-V": "export", "-h": "hold"}
#: ``#PBS`` flags with a value and the field it sets.
_FLAG_VALUES = {"-o": "out", "-N": "name"}


def _resources(value: str, asked: dict) -> None:
    """One ``-l`` list (both dialects: Torque's ``nodes=N:ppn=P``, PBS Pro's ``select=N:ncpus=P``), into ``asked``."""
    for item in value.split(","):
        key, _, val = item.partition("=")
        if key == "nodes":
            count, _, ppn = val.partition(":ppn=")
            asked["nodes"], asked["ppn"] = int(count), int(ppn or 1)
        elif key == "select":
            count, _, rest = val.partition(":")
            asked["nodes"] = int(count)
            match = re.search(r"ncpus=(\d+)", rest)
            asked["ppn"] = int(match.group(1)) if match else 1
        elif key == "walltime":
            asked["walltime"] = parse_seconds(val)


def directives(script: str) -> dict:
    """What the job asks for, from its ``#PBS`` lines (both dialects)."""
    asked = {"nodes": 1, "ppn": 1, "walltime": 3600, "out": None, "name": "STDIN", "export": False, "hold": False}
    for line in script.splitlines():
        if not line.startswith("#PBS "):
            continue
        words = shlex.split(line[5:])
        for flag, value in zip(words, [*words[1:], ""], strict=True):
            if flag == "-l":
                _resources(value, asked)
            elif flag in _FLAG_VALUES:
                asked[_FLAG_VALUES[flag]] = value
            elif flag in _FLAG_SWITCHES:
                asked[_FLAG_SWITCHES[flag]] = True
    return asked


def qsub(argv: list[str]) -> int:
    record("qsub", argv)
    down = server_down("qsub")
    if down is not None:
        return down
    refuse = os.environ.get("PBS_STANDIN_REFUSE")
    if refuse:
        print(refuse, file=sys.stderr)
        return 1
    if not argv:
        print("usage: qsub [options] script", file=sys.stderr)
        return 2
    script = Path(argv[-1]).read_text()
    counter = STATE / "seq"
    number = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(number))
    job_id = f"{number}.standin"
    asked = directives(script)
    (STATE / f"{job_id}.sh").write_text(script)
    job = {"id": job_id, "state": "H" if asked["hold"] else "Q", "ctime": time.time(), "start": None, "end": None,
           "exit": None, "cwd": os.getcwd(), "session": None, **asked}
    save(job)
    if asked["hold"]:  # held until qdel: never runs
        print(job_id)
        return 0
    with open(STATE / f"{job_id}.runner.log", "ab") as log:
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "_run", job_id], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    print(job_id)
    return 0


def job_environment(job: dict, nodefile: Path) -> dict[str, str]:
    """The job's environment: the submitter's with ``-V`` (else a login's few variables), ``PATH`` as the login
    shell leaves it (:data:`LOGIN_PATH`), and the ``PBS_*`` variables."""
    env = dict(os.environ) if job["export"] else {k: v for k, v in os.environ.items() if k in KEPT}
    env.update(PATH=LOGIN_PATH, PBS_O_PATH=os.environ.get("PATH", ""))
    env.update(PBS_JOBID=job["id"], PBS_NODEFILE=str(nodefile), PBS_O_WORKDIR=job["cwd"],
               PBS_JOBNAME=job["name"], PBS_ENVIRONMENT="PBS_BATCH", PBS_QUEUE="batch",
               PBS_JOBCOOKIE=secrets.token_hex(16).upper())
    if FLAVOR == "torque":
        env.update(PBS_NUM_NODES=str(job["nodes"]), PBS_NUM_PPN=str(job["ppn"]))
    else:
        env.update(NCPUS=str(job["ppn"]))
    return env


def run_job(job_id: str) -> int:
    """The MoM's part: run the script through the login shell, end the job at the walltime or on ``qdel``, kill what
    is left of it when its script exits, record the end."""
    job = load(job_id)
    assert job is not None
    nodefile = STATE / f"{job_id}.nodefile"
    nodefile.write_text("localhost\n" * job["ppn"])
    out_path = job["out"] or str(Path.home() / f"{job['name']}.o{job_id.split('.')[0]}")
    env = job_environment(job, nodefile)
    fd = os.open(STATE / f"{job_id}.env", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as saved:  # what the MoM gives every task of the job (``task``)
        json.dump(env, saved)
    with open(out_path, "ab") as out:
        proc = subprocess.Popen(["/bin/bash", str(STATE / f"{job_id}.sh")], env=env,
                                cwd=str(Path.home()), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    update(job_id, state="R", start=time.time(), session=proc.pid)
    deadline = time.time() + job["walltime"]
    walltime_ended = False
    while proc.poll() is None:
        current = load(job_id) or job
        if time.time() >= deadline or current.get("deleted"):
            walltime_ended = not current.get("deleted")
            update(job_id, ended_by_mom=True)
            delay = TORQUE_QDEL_DELAY if current.get("deleted") and FLAVOR == "torque" else KILL_DELAY
            end_job(job_id, delay)
            break
        time.sleep(0.05)
    proc.wait()
    signal_job(job_id, signal.SIGKILL)  # what is left of the job once its script exited
    code = proc.returncode
    if walltime_ended:  # the MoM's own code for a job it ended at the walltime
        code = -11 if FLAVOR == "torque" else -29
    elif code < 0:  # killed by a signal: 256 + the signal
        code = 256 - code
    update(job_id, state="C" if FLAVOR == "torque" else "F", end=time.time(), exit=code)
    return 0


def job_processes(job_id: str) -> list[int]:
    """Pids of the job's processes: those of its session and of its tasks' sessions."""
    job = load(job_id) or {}
    tasks = tasks_file(job_id)
    sessions = {job.get("session"), *(int(pid) for pid in (tasks.read_text().split() if tasks.exists() else []))}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if os.getsid(int(entry.name)) in sessions:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def signal_job(job_id: str, signum: int) -> None:
    for pid in job_processes(job_id):
        try:
            os.kill(pid, signum)
        except OSError:
            continue


def end_job(job_id: str, delay: float) -> None:
    """As the MoM at the walltime or on ``qdel``: SIGTERM to every process of the job, SIGKILL ``delay`` s later to
    every one left."""
    signal_job(job_id, signal.SIGTERM)
    time.sleep(delay)
    signal_job(job_id, signal.SIGKILL)


def tasks_file(job_id: str) -> Path:
    return STATE / f"{job_id}.tasks"


def qstat(argv: list[str]) -> int:
    record("qstat", argv)
    down = server_down("qstat")
    if down is not None and "--version" not in argv:
        return down
    if "--version" in argv:
        print("Version: 6.1.3\nCommit: 7fb6d6e3aa8f2d1b2e3e0f4a0b6b1de8b7b8c8c1" if FLAVOR == "torque"
              else "pbs_version = 23.06.06")
        return 0
    if FLAVOR == "torque" and "-x" in argv:  # Torque's -x is XML output: not emulated
        print("qstat: -x (XML) is not emulated by the stand-in", file=sys.stderr)
        return 2
    history = "-x" in argv
    job_ids = [a for a in argv if not a.startswith("-")]
    status = 0
    for job_id in job_ids:
        sample = STATE / f"{job_id}.qstat"
        if sample.exists():
            sys.stdout.write(sample.read_text())
            continue
        if history and not HISTORY:
            print(f"qstat: PBS is not configured to maintain job history {job_id}", file=sys.stderr)
            continue  # OpenPBS exits 0 for PBSE_JOBHISTNOTSET (src/cmds/qstat.c)
        job = load(job_id)
        finished = job is not None and job["state"] == "F"
        if job is None or (finished and not HISTORY):
            print(f"qstat: Unknown Job Id {job_id}", file=sys.stderr)
            status = 153
        elif finished and not history:
            print(f"qstat: {job_id} Job has finished, use -x or -H to obtain historical job information",
                  file=sys.stderr)
            status = 35
        else:
            print(render(job))
    return status


def render(job: dict) -> str:
    now = time.time()
    used = (job["end"] or now) - job["start"] if job["start"] else 0
    owner = os.environ.get("USER", "root")
    lines = [f"Job Id: {job['id']}", f"    Job_Name = {job['name']}", f"    Job_Owner = {owner}@standin"]
    if job["start"]:
        lines += ["    resources_used.cput = 00:00:01", f"    resources_used.walltime = {hms(used)}"]
    lines += [f"    job_state = {job['state']}", "    queue = batch", "    server = standin",
              f"    ctime = {ctime(job['ctime'])}", "    Join_Path = oe"]
    if FLAVOR == "torque":
        lines += [f"    Resource_List.nodes = {job['nodes']}:ppn={job['ppn']}",
                  f"    Resource_List.walltime = {hms(job['walltime'])}"]
    else:
        lines += [f"    Resource_List.select = {job['nodes']}:ncpus={job['ppn']}",
                  f"    Resource_List.walltime = {hms(job['walltime'])}"]
    if job["start"]:
        if FLAVOR == "pbspro":
            lines.append(f"    stime = {ctime(job['start'])}")
        else:
            lines.append(f"    start_time = {ctime(job['start'])}")
            if job["state"] == "R":
                lines.append(f"    Walltime.Remaining = {max(0, int(job['start'] + job['walltime'] - now))}")
    if job["exit"] is not None:
        lines.append(f"    {'exit_status' if FLAVOR == 'torque' else 'Exit_status'} = {job['exit']}")
    return "\n".join(lines) + "\n"


def qdel(argv: list[str]) -> int:
    record("qdel", argv)
    down = server_down("qdel")
    if down is not None:
        return down
    for job_id in argv:
        job = load(job_id)
        if job is None or job["state"] in ("C", "F"):
            print(f"qdel: Unknown Job Id {job_id}", file=sys.stderr)
            return 153
        if job["state"] in ("Q", "H"):  # never ran: ends at once, with no exit status
            update(job_id, deleted=True, state="C" if FLAVOR == "torque" else "F", end=time.time())
        else:
            update(job_id, deleted=True)
    return 0


def pbsdsh_options(argv: list[str]) -> tuple[str, bool, list[str]] | None:
    """Torque's ``pbsdsh [-c N][-o][-s][-u][-v] -h HOST program [args]``: ``(host, -o given, program and args)``, or
    ``None`` for a usage error (no ``-h``, no program, an unknown option)."""
    host, relay, words = None, False, list(argv)
    while words and words[0].startswith("-"):
        flag = words.pop(0)
        if flag == "-o":
            relay = True
        elif flag in ("-h", "-c") and words:
            value = words.pop(0)
            host = value if flag == "-h" else host
        elif flag not in ("-s", "-u", "-v"):
            return None
    return (host, relay, words) if host is not None and words else None


def task_output(job_id: str) -> str:
    """Where the MoM sends a task's output: the job's output file (``tm_spawn`` relays nothing to the client;
    OpenPBS's ``pbs_tmrsh`` has no way to, Torque's ``pbsdsh`` only with ``-o``); for a job id the stand-in server
    does not know (a unit test's environment), ``$PBS_STANDIN_DIR/<id>.task-output``."""
    job = load(job_id)
    if not job:
        return str(STATE / f"{job_id}.task-output")
    return str(job["out"] or Path.home() / f"{job['name']}.o{job_id.split('.')[0]}")


def task_environment(job_id: str) -> dict[str, str]:
    """The environment the MoM gives a task: the job's, as saved at its start, with ``PBS_TASKNUM``; for a job the
    stand-in server did not start (a unit test's environment), the caller's."""
    try:
        env = dict(json.loads((STATE / f"{job_id}.env").read_text()))
    except (OSError, ValueError):
        env = dict(os.environ)
    tasks = tasks_file(job_id)
    env["PBS_TASKNUM"] = str(1 + (len(tasks.read_text().split()) if tasks.exists() else 0))
    return env


def task(command: str, argv: list[str]) -> int:
    """``pbsdsh -h HOST CMD...`` / ``pbs_tmrsh HOST WORDS...``: the command as a task of the job (its own session,
    recorded in ``ID.tasks``), waited for."""
    record(command, argv)
    job_id = os.environ.get("PBS_JOBID")
    if not job_id:
        print(f"{command}: tm_init failed, rc = TM_ESYSTEM (17000)", file=sys.stderr)
        return 1
    relay = False
    if command == "pbsdsh":
        parsed = pbsdsh_options(argv)
        if parsed is None:
            print("Usage: pbsdsh [-c copies][-o][-s][-u][-v] [-h hostname] program [args]...", file=sys.stderr)
            return 1
        host, relay, cmd = parsed
    else:
        host, cmd = argv[0], ["sh", "-c", " ".join(argv[1:])]
    try:
        with open(task_output(job_id), "ab") as job_out:
            output = None if relay else job_out
            child = subprocess.Popen(cmd, env={**task_environment(job_id), "HPC_HADOOP_NODE": host},
                                     start_new_session=True,
                                     stdin=subprocess.DEVNULL, stdout=output, stderr=output)
    except OSError as exc:
        print(f"{command}: task spawn failed: {exc}", file=sys.stderr)
        return 1
    with open(tasks_file(job_id), "a") as tasks:
        tasks.write(f"{child.pid}\n")
    if command == "pbsdsh":
        def bailout(signum: int, _frame: object) -> None:
            child.send_signal(signum)
            sys.exit(1)

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, bailout)
    code = child.wait()
    if (load(job_id) or {}).get("ended_by_mom"):
        while True:  # the MoM ended the job: no obituary of the task will come
            time.sleep(3600)
    return code if code >= 0 else 256 - code


def main() -> int:
    command = Path(sys.argv[0]).name
    argv = sys.argv[1:]
    if argv[:1] == ["_run"]:
        return run_job(argv[1])
    handlers = {"qsub": qsub, "qstat": qstat, "qdel": qdel}
    if command in handlers:
        return handlers[command](argv)
    return task(command, argv)


if __name__ == "__main__":
    sys.exit(main())
