#!/usr/bin/env python3
"""Stand-in PBS commands (``qsub``, ``qstat``, ``qdel``, ``pbsdsh``, ``pbs_tmrsh``) for tests.

No PBS server installs from this machine's package registries, so tests put this directory first on
``PATH``. Each command is a symlink to this file; it records its arguments in ``$PBS_STANDIN_DIR/<cmd>.args``
(one line per call) and behaves like the real command, in its output formats, on this one machine:

* ``qsub SCRIPT`` prints the job id line (``1.standin``), copies the script, and runs it in the background
  with ``bash`` (in a session of its own) with ``PBS_JOBID``, ``PBS_NODEFILE`` (one line per core, the host
  ``localhost``), ``PBS_O_WORKDIR``, ``PBS_NUM_NODES``/``PBS_NUM_PPN`` (Torque) or ``NCPUS`` (PBS Pro),
  in ``$HOME``, output to the ``-o`` path; it enforces ``walltime`` as Torque does (SIGTERM to the job's
  processes, SIGKILL ``kill_delay`` = 2 s later). ``$PBS_STANDIN_REFUSE`` makes it refuse with that message.
* ``qstat --version`` answers as Torque 6.1.3 or OpenPBS 22.05 (``$PBS_STANDIN_FLAVOR``: torque | pbspro);
  ``qstat -f ID`` (PBS Pro: ``-x -f``) prints ``Job Id:`` and indented ``key = value`` attributes
  (``job_state``, ``Resource_List.walltime``, ``resources_used.walltime``, ``start_time``, Torque's
  ``Walltime.Remaining``, ``exit_status``); a recorded sample ``$PBS_STANDIN_DIR/ID.qstat`` is printed as is.
* ``qdel ID`` ends the job as the walltime does.
* ``pbsdsh -h HOST CMD...`` (Torque) and ``pbs_tmrsh HOST WORDS...`` (PBS Pro: words joined, run by ``sh -c``)
  run the command here, with ``HPC_HADOOP_NODE=HOST``; only inside a job, as the real ones (TM interface).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(os.environ.get("PBS_STANDIN_DIR") or f"/tmp/pbs-standin-{os.getuid()}")
FLAVOR = os.environ.get("PBS_STANDIN_FLAVOR", "torque")
KILL_DELAY = 2.0


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


def parse_seconds(text: str) -> int:
    total = 0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total


def directives(script: str) -> dict:
    """What the job asks for, from its ``#PBS`` lines (both dialects)."""
    asked = {"nodes": 1, "ppn": 1, "walltime": 3600, "out": None, "name": "STDIN"}
    for line in script.splitlines():
        if not line.startswith("#PBS "):
            continue
        words = shlex.split(line[5:])
        for flag, value in zip(words, [*words[1:], ""], strict=True):
            if flag == "-l":
                for item in re.split(r"[,]", value):
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
            elif flag == "-o":
                asked["out"] = value
            elif flag == "-N":
                asked["name"] = value
    return asked


def qsub(argv: list[str]) -> int:
    record("qsub", argv)
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
    job = {"id": job_id, "state": "Q", "ctime": time.time(), "start": None, "end": None, "exit": None,
           "cwd": os.getcwd(), **asked}
    save(job)
    with open(STATE / f"{job_id}.runner.log", "ab") as log:
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "_run", job_id], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    print(job_id)
    return 0


def run_job(job_id: str) -> int:
    """The MOM's part: run the script, enforce the walltime, record the end."""
    job = load(job_id)
    assert job is not None
    nodefile = STATE / f"{job_id}.nodefile"
    nodefile.write_text("localhost\n" * job["ppn"])
    env = {**os.environ, "PBS_JOBID": job_id, "PBS_NODEFILE": str(nodefile), "PBS_O_WORKDIR": job["cwd"],
           "PBS_JOBNAME": job["name"], "PBS_ENVIRONMENT": "PBS_BATCH", "PBS_QUEUE": "batch"}
    if FLAVOR == "torque":
        env.update(PBS_NUM_NODES=str(job["nodes"]), PBS_NUM_PPN=str(job["ppn"]))
    else:
        env.update(NCPUS=str(job["ppn"]))
    out_path = job["out"] or str(Path.home() / f"{job['name']}.o{job_id.split('.')[0]}")
    job.update(state="R", start=time.time())
    save(job)
    with open(out_path, "ab") as out:
        proc = subprocess.Popen(["/bin/bash", str(STATE / f"{job_id}.sh")], env=env, cwd=str(Path.home()),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        deadline = job["start"] + job["walltime"]
        while proc.poll() is None:
            current = load(job_id) or job
            if time.time() >= deadline or current.get("deleted"):
                end_job(proc)
                break
            time.sleep(0.2)
    job = load(job_id) or job
    code = proc.returncode
    job.update(state="C" if FLAVOR == "torque" else "F", end=time.time(),
               exit=code if code >= 0 else 256 + -code)
    save(job)
    return 0


def end_job(proc: subprocess.Popen) -> None:
    """As Torque at the walltime or on qdel: SIGTERM to the job's processes, SIGKILL after kill_delay."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=KILL_DELAY)
            return
        except subprocess.TimeoutExpired:
            continue


def qstat(argv: list[str]) -> int:
    record("qstat", argv)
    if "--version" in argv:
        print("Version: 6.1.3\nCommit: 7fb6d6e3aa8f2d1b2e3e0f4a0b6b1de8b7b8c8c1" if FLAVOR == "torque"
              else "pbs_version = 22.05.11")
        return 0
    if FLAVOR == "torque" and "-x" in argv:  # Torque's -x is XML output: not emulated
        print("qstat: -x (XML) is not emulated by the stand-in", file=sys.stderr)
        return 2
    job_ids = [a for a in argv if not a.startswith("-")]
    status = 0
    for job_id in job_ids:
        sample = STATE / f"{job_id}.qstat"
        if sample.exists():
            sys.stdout.write(sample.read_text())
            continue
        job = load(job_id)
        if job is None or (FLAVOR == "pbspro" and job["state"] == "F" and "-x" not in argv):
            print(f"qstat: Unknown Job Id {job_id}", file=sys.stderr)
            status = 153
            continue
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
        lines.append(f"    start_time = {ctime(job['start'])}")
        if FLAVOR == "pbspro":
            lines.append(f"    stime = {ctime(job['start'])}")
        elif job["state"] == "R":
            lines.append(f"    Walltime.Remaining = {max(0, int(job['start'] + job['walltime'] - now))}")
    if job["exit"] is not None:
        lines.append(f"    exit_status = {job['exit']}")
    return "\n".join(lines) + "\n"


def qdel(argv: list[str]) -> int:
    record("qdel", argv)
    for job_id in argv:
        job = load(job_id)
        if job is None:
            print(f"qdel: Unknown Job Id {job_id}", file=sys.stderr)
            return 153
        job["deleted"] = True
        save(job)
    return 0


def task(command: str, argv: list[str]) -> int:
    record(command, argv)
    if not os.environ.get("PBS_JOBID"):
        print(f"{command}: tm_init failed, rc = TM_ESYSTEM (17000)", file=sys.stderr)
        return 1
    if command == "pbsdsh":
        if len(argv) < 3 or argv[0] != "-h":
            print("Usage: pbsdsh [-c copies][-o][-s][-u][-v] [-h hostname] program [args]...", file=sys.stderr)
            return 1
        host, cmd = argv[1], argv[2:]
    else:
        host, cmd = argv[0], ["sh", "-c", " ".join(argv[1:])]
    os.execvpe(cmd[0], cmd, {**os.environ, "HPC_HADOOP_NODE": host})
    return 127


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
