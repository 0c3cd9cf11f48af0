"""Why a step failed: the failed container of its YARN application and the first cause line of that container's
log, with the command that shows the whole log.

A job client that loses its ApplicationMaster says only "Exception from container-launch."; the cause is in the
container's own log (``syslog``, ``stderr``, ``prelaunch.err``). Those logs are read where the NodeManager keeps
them while the application runs (``logs/<host>/userlogs/<application>/<container>/``), else, once log aggregation
has moved them, with YARN's own reader (``yarn logs``, :func:`launcher.render.clients.yarn_logs_command`).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx

from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import yarn_logs_command
from launcher.util.polling import poll

#: A container id, as YARN writes it (``container_1764070000000_0001_01_000001``, ``container_e17_...``).
CONTAINER = re.compile(r"container_(?:e\d+_)?\d+_\d+_\d+_\d+")
#: The log files read, in this order.
LOG_FILES = ("syslog", "stderr", "prelaunch.err", "stdout")
#: A log4j record of level ERROR or FATAL (``2026-11-25 12:00:00,000 ERROR [main] Class: message``).
_RECORD = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ (ERROR|FATAL) ")
#: The first line of an exception (``java.io.IOException: message``, ``Exception in thread "main" ...``).
_EXCEPTION = re.compile(r"^(Exception in thread \S+ )?([\w$]+\.)+[\w$]*(Exception|Error)\b")
#: Log aggregation states after which ``yarn logs`` has every container's log (or never will).
AGGREGATION_DONE = {"SUCCEEDED", "FAILED", "TIME_OUT", "DISABLED", "NOT_START"}
#: Seconds to wait for log aggregation of a failed application.
AGGREGATION_WAIT = 30.0


@dataclass(frozen=True)
class Cause:
    """The first cause line of a failed container's log.

    Attributes:
        container: the container id.
        file: the log file it is in (``syslog``, ``stderr``...).
        line: the line: the root cause (last ``Caused by:``) of the first ERROR or FATAL record's exception,
            else that exception, else the record or the first exception line.
        command: the command that shows the whole log (``hpc-hadoop logs CLUSTER --app APP``).
    """

    container: str
    file: str
    line: str
    command: str


def first_cause(text: str) -> str | None:
    """The first cause line of one log file's ``text``: for the first ERROR/FATAL record or exception, its root
    cause (the last ``Caused by:`` of its stack trace), else its exception line, else the line itself; ``None``
    when the log has neither."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not (_RECORD.match(line) or _EXCEPTION.match(line)):
            continue
        block = [line]
        for following in lines[i + 1:]:
            if _RECORD.match(following) or not (following[:1] in ("\t", " ") or following.startswith("Caused by:")
                                                or _EXCEPTION.match(following) or following.startswith("...")):
                break
            block.append(following)
        causes = [b.removeprefix("Caused by:").strip() for b in block if b.startswith("Caused by:")]
        if causes:
            return causes[-1]
        exceptions = [b.strip() for b in block[1:] if _EXCEPTION.match(b)]
        return exceptions[0] if exceptions else line.strip()
    return None


def local_logs(plan: ClusterPlan, application: str) -> dict[str, dict[str, str]]:
    """The container logs the NodeManagers still keep (``<node log dir>/userlogs/<application>/<container>/``):
    container id → file name → text; a node whose directory cannot be read (its filesystem is gone) has none."""
    found: dict[str, dict[str, str]] = {}
    for node in plan.nodes:
        try:
            containers = sorted(Path(node.log_dir, "userlogs", application).glob("container_*"))
        except OSError:
            continue
        for container in containers:
            files = {}
            for name in LOG_FILES:
                try:
                    files[name] = (container / name).read_text(errors="replace")
                except OSError:
                    continue
            if files:
                found[container.name] = files
    return found


def parse_yarn_logs(output: str) -> dict[str, dict[str, str]]:
    """``yarn logs -applicationId`` output → container id → log type → text: each ``LogType:`` section's lines
    from ``LogContents:`` to its ``End of LogType:`` line, under the last ``Container:`` line before it (one pass
    over the lines)."""
    found: dict[str, dict[str, str]] = {}
    container, log_type = "", ""
    body: list[str] | None = None
    for line in output.splitlines():
        if body is not None:
            if line == f"End of LogType:{log_type}":
                found.setdefault(container, {})[log_type] = "\n".join(body)
                body = None
            else:
                body.append(line)
        elif line.startswith("Container: "):
            container = line.split()[1]
        elif line.startswith("LogType:"):
            log_type = line.removeprefix("LogType:").strip()
        elif line == "LogContents:" and container and log_type:
            body = []
    return found


def aggregated_logs(plan: ClusterPlan, application: str) -> dict[str, dict[str, str]]:
    """The aggregated container logs of ``application`` (``yarn logs``), once the ResourceManager says aggregation
    is over (``logAggregationStatus``, waited for up to :data:`AGGREGATION_WAIT` s); empty when they cannot be
    read."""
    url = f"{plan.rm_web}/ws/v1/cluster/apps/{application}"
    with httpx.Client(timeout=2.0, trust_env=False) as http:
        def status() -> str:
            try:
                return str(http.get(url).json()["app"].get("logAggregationStatus", "DISABLED"))
            except (httpx.HTTPError, ValueError, KeyError):
                return "UNKNOWN"

        poll(status, done=lambda s: s in AGGREGATION_DONE, interval=0.5, backoff=1.0, timeout=AGGREGATION_WAIT)
    argv, env = yarn_logs_command(plan, application)
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return parse_yarn_logs(done.stdout)


def _attempt(container: str) -> int:
    """The application attempt of a container id (``container_..._02_000001`` → 2)."""
    return int(container.rsplit("_", 2)[1])


def failed_containers(client_output: str) -> list[str]:
    """Container ids the job client's output names as failed (``Container id: ...`` of a launch failure, or a
    container on a line saying it exited or failed), the last application attempt's first, otherwise in the
    order named, without repeats. A client that polls while the ResourceManager starts a second
    ApplicationMaster prints the first attempt's failure too, before the final one; which of the two it prints
    first depends on timing, and the last attempt's failure is the one that ended the step."""
    named: list[str] = []
    for line in client_output.splitlines():
        if "Container id:" in line or re.search(r"exit|fail|killed", line, re.IGNORECASE):
            named += [c for c in CONTAINER.findall(line) if c not in named]
    return sorted(named, key=_attempt, reverse=True)


def diagnose(plan: ClusterPlan, application: str, client_output: str) -> Cause | None:
    """The first cause line of the failed container's log (:func:`first_cause`), for a failed step's error line
    and its record in ``run.json``: the containers the client names as failed first, then the ApplicationMasters'
    (``..._000001``, the last attempt's first), then the others; logs read where the NodeManagers keep them, else
    aggregated.

    Returns:
        The cause, or ``None`` when no container log of the application has one.
    """
    command = f"hpc-hadoop logs {plan.cluster_id} --app {application}"
    named = failed_containers(client_output)
    for read in (local_logs, aggregated_logs):
        logs = read(plan, application)
        others = sorted((c for c in logs if c not in named),
                        key=lambda c: (not c.endswith("_000001"), -_attempt(c), c))  # the last AM first
        for container in [*[c for c in named if c in logs], *others]:
            for name in LOG_FILES:
                line = first_cause(logs[container].get(name, ""))
                if line:
                    return Cause(container, name, line, command)
    return None
