"""Why a step failed: the first error of the process that failed first, from the container logs of its YARN
application, kept as a file in the cluster directory and named with the command that shows every container's log.

A job client that loses its ApplicationMaster says only "Exception from container-launch."; the cause is in the
container's own log (``syslog``, ``stderr``, ``prelaunch.err``). Those logs are read where the NodeManager keeps
them while the application runs (``logs/<host>/userlogs/<application>/<container>/``), else, once log aggregation
has moved them, with YARN's own reader (``yarn logs``, :func:`launcher.render.clients.yarn_logs_command`).

Which error is the cause (issue 28 item 1): a streaming task's script writes its own traceback to the container's
``stderr`` (:func:`script_cause`), which beats what the JVM says about it; the JVM's ``subprocess failed with code N``
beats the ``Broken pipe`` and ``Stream closed`` it logs first while it still writes to the dead script; otherwise the
root ``Caused by`` of the first ERROR/FATAL exception (:func:`first_cause`). Of the failed containers, the one whose
log shows the failure first (log4j timestamps, :func:`failure_time`) comes first: a task fails before its
ApplicationMaster reports it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import yarn_logs_command
from launcher.security.webauth import web_client
from launcher.util.polling import poll

#: A container id, as YARN writes it (``container_1764070000000_0001_01_000001``, ``container_e17_...``).
CONTAINER = re.compile(r"container_(?:e\d+_)?\d+_\d+_\d+_\d+")
#: The log files read, in this order.
LOG_FILES = ("syslog", "stderr", "prelaunch.err", "stdout")
#: A log4j record of level ERROR or FATAL (``2026-11-25 12:00:00,000 ERROR [main] Class: message``).
_RECORD = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ (ERROR|FATAL) ")
#: The first line of an exception (``java.io.IOException: message``, ``Exception in thread "main" ...``).
_EXCEPTION = re.compile(r"^(Exception in thread \S+ )?([\w$]+\.)+[\w$]*(Exception|Error)\b")
#: A Python traceback's frame line (``  File "/path/mapper.py", line 6, in <module>``).
_FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+)')
#: The JVM's word for a streaming script that exited with an error (``PipeMapRed.waitOutputThreads(): subprocess
#: failed with code 1``), after the exception class that carries it (Hadoop 3.4 ``PipeMapRed``).
_SUBPROCESS_FAILED = re.compile(r"(?:[\w$]+\.)+[\w$]*(?:Exception|Error): [^\n]*?subprocess failed with code \d+")
#: What the JVM logs while it writes to a streaming script that is already dead: consequences, never the cause.
CONSEQUENCES = ("java.io.IOException: Broken pipe", "java.io.IOException: Stream closed")
#: Lines of a container's ``stderr`` that the JVM wrote, not the script: log4j's and SLF4J's warnings, Jersey's
#: java.util.logging records (``Nov 27, 2026 11:12:46 AM com.sun...`` then ``INFO: ...``), the JVM's CDS warnings
#: (``[5.8s][warning][cds] ...``).
_JVM_NOISE = re.compile(r"^(log4j:|SLF4J:|[A-Z][a-z]{2} \d{1,2}, \d{4} \d{1,2}:\d\d:\d\d [AP]M |"
                        r"(SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST): |\[\d+\.\d+s\]\[)")
#: The start of a log4j record and its timestamp (``2026-11-25 12:00:00,000 LEVEL ...``).
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+) [A-Z]+ ")
#: The stderr lines of a script without a traceback that a cause quotes.
SCRIPT_TAIL_LINES = 3
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
        path: the file in the cluster directory that holds the whole ``file`` of ``container`` (written by
            :func:`diagnose`), or ``""`` when it could not be written.
    """

    container: str
    file: str
    line: str
    command: str
    path: str = ""


def first_cause(text: str) -> str | None:
    """The first cause line of one log file's ``text``: a streaming script's failure as the JVM words it
    (``...RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 1``) when the log has one,
    which beats the :data:`CONSEQUENCES` (``Broken pipe``, ``Stream closed``) logged before it; else, for the first
    ERROR/FATAL record or exception that is not a consequence, its root cause (the last ``Caused by:`` of its stack
    trace), else its exception line, else the line itself; ``None`` when the log has neither."""
    streaming = _SUBPROCESS_FAILED.search(text)
    if streaming:
        return streaming.group(0)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not (_RECORD.match(line) or _EXCEPTION.match(line)) or line.strip().startswith(CONSEQUENCES):
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


def python_traceback(text: str) -> str | None:
    """The exception of the first Python traceback in ``text`` (a container's ``stderr``): the first line after
    ``Traceback (most recent call last):`` that is not indented, with the innermost frame's file name and line
    (``NameError: name 'x' is not defined (mapper.py, line 6)``); else the error Python reports without a traceback,
    a script that does not compile (issue 40: ``  File ".../mapper_bad.py", line 8``, the code, a caret, then
    ``SyntaxError: '(' was never closed`` → ``SyntaxError: '(' was never closed (mapper_bad.py, line 8)``; an
    ``IndentationError`` likewise); ``None`` without either."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last):"):
            continue
        frame = None
        for following in lines[i + 1:]:
            match = _FRAME.match(following)
            if match:
                frame = match
            elif following.strip() and not following[:1].isspace():
                where = f" ({Path(frame['path']).name}, line {frame['line']})" if frame else ""
                return f"{following.strip()}{where}"
    return _compile_error(lines)


#: The line Python ends a report of a script that does not compile with (``SyntaxError: '(' was never closed``,
#: ``IndentationError: unexpected indent``, ``TabError: ...``).
_COMPILE_ERROR = re.compile(r"^(SyntaxError|IndentationError|TabError): ")


def _compile_error(lines: list[str]) -> str | None:
    """A compile error Python printed without a traceback (the script itself did not compile): its ``File "...",
    line N`` line, the indented code and caret lines after it, then the error line; the error with the file's base
    name and the line, or ``None``."""
    for i, line in enumerate(lines):
        frame = _FRAME.match(line)
        if not frame:
            continue
        for following in lines[i + 1:]:
            if following[:1].isspace():
                continue
            if _COMPILE_ERROR.match(following):
                return f"{following.strip()} ({Path(frame['path']).name}, line {frame['line']})"
            break
    return None


def script_cause(files: dict[str, str]) -> tuple[str, str] | None:
    """The cause a streaming task's script gave, from one container's log ``files`` (name → text): its Python
    traceback in ``stderr`` (:func:`python_traceback`); else, when the JVM says the script failed
    (``subprocess failed with code N`` in ``syslog``), the script's last :data:`SCRIPT_TAIL_LINES` lines of
    ``stderr`` (the JVM's own lines left out, :data:`_JVM_NOISE`), joined with `` | ``.

    Returns:
        ``(file, line)`` (the file is ``stderr``), or ``None`` when the script said nothing.
    """
    stderr = files.get("stderr", "")
    traceback = python_traceback(stderr)
    if traceback:
        return "stderr", traceback
    if not _SUBPROCESS_FAILED.search(files.get("syslog", "")):
        return None
    said = [line.strip() for line in stderr.splitlines() if line.strip() and not _JVM_NOISE.match(line)]
    return ("stderr", " | ".join(said[-SCRIPT_TAIL_LINES:])) if said else None


def container_cause(files: dict[str, str]) -> tuple[str, str] | None:
    """The cause in one container's log ``files`` (name → text): the script's own (:func:`script_cause`), else
    the first cause line (:func:`first_cause`) of the first of :data:`LOG_FILES` that has one.

    Returns:
        ``(file, line)``, or ``None``.
    """
    found = script_cause(files)
    if found:
        return found
    for name in LOG_FILES:
        line = first_cause(files.get(name, ""))
        if line:
            return name, line
    return None


def failure_time(files: dict[str, str]) -> str:
    """When a container's log shows it failing: the log4j timestamp (``2026-11-27 11:12:29,801``, sortable as
    text) of the ``syslog`` record that holds or precedes the first streaming failure (``subprocess failed with
    code N``) or the first ERROR/FATAL record; ``"~"`` (after every timestamp) when the log has neither."""
    stamp = ""
    for line in files.get("syslog", "").splitlines():
        match = _STAMP.match(line)
        if match:
            stamp = match.group(1)
        if stamp and (_RECORD.match(line) or _SUBPROCESS_FAILED.search(line)):
            return stamp
    return "~"


def keep_log(text: str, path: Path) -> str:
    """Write one container log's ``text`` to ``path`` (in the cluster directory, where the user can open it: the
    NodeManager deletes its own copy once it has aggregated it). Returns the path, or ``""`` when it cannot be
    written (the filesystem is full or gone)."""
    try:
        path.write_text(text)
    except OSError:
        return ""
    return str(path)


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
    with web_client(plan, timeout=2.0) as http:
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


def suspects(client_output: str, logs: Mapping[str, dict[str, str]]) -> list[str]:
    """The containers of ``logs`` (container id → file name → text) in the order :func:`diagnose` searches them for
    the cause: the application's last attempt first, since its failure ended the step (a client that polled while
    the ResourceManager started the next ApplicationMaster may have named only an earlier attempt's failure: CI of
    2026-11-28 14:35 took the cause from attempt 1); within an attempt, the containers the client names as failed
    (:func:`failed_containers`, in that order), then the others in the order their logs show them failing
    (:func:`failure_time`; at the same time a task before an ApplicationMaster, ``..._000001``)."""
    named = [c for c in failed_containers(client_output) if c in logs]

    def key(container: str) -> tuple[int, int, str, bool, str]:
        if container in named:
            return -_attempt(container), 0, f"{named.index(container):06d}", False, container
        return -_attempt(container), 1, failure_time(logs[container]), container.endswith("_000001"), container
    return sorted(logs, key=key)


def last_attempt(plan: ClusterPlan, application: str) -> int:
    """The number of ``application``'s last attempt, as the ResourceManager lists them
    (``/ws/v1/cluster/apps/<application>/appattempts``: ``appAttempts.appAttempt[].id``), or 0 when it cannot be read
    (unknown: the caller goes by what the job client named)."""
    url = f"{plan.rm_web}/ws/v1/cluster/apps/{application}/appattempts"
    try:
        with web_client(plan, timeout=2.0) as http:
            attempts = http.get(url).json()["appAttempts"]["appAttempt"]
        return max((int(a["id"]) for a in attempts), default=0)
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return 0


def diagnose(plan: ClusterPlan, application: str, client_output: str, keep: Path | None = None) -> Cause | None:
    """The cause of a failed step: the first error of the process that failed first (:func:`container_cause`),
    for the step's error line and its record in ``run.json``. The containers are searched in :func:`suspects`'
    order (the last attempt's first, the ones the client names as failed first in each); logs are read where the
    NodeManagers keep them, else aggregated.

    The last attempt (the ResourceManager's, :func:`last_attempt`, or the latest the client names) is searched
    alone first, in the node's logs and then YARN's aggregated ones, since its failure ended the step: while the
    NodeManager aggregates the logs of the application that just ended, container by container (each local copy
    deleted once uploaded), the last attempt's may be gone from the node, or half gone, while an earlier attempt's is
    still there (CI of 2026-12-01 23:31 and of 2026-12-03 19:38 took the cause from attempt 1; the second time the
    client had named no container of attempt 2). Only then are the earlier attempts searched.

    Args:
        keep: where the log file holding the cause is kept, as ``<keep>.<container>.<file>`` (:func:`keep_log`;
            the step's client log without ``.log``), or ``None`` not to keep it.

    Returns:
        The cause, or ``None`` when no container log of the application has one.
    """
    command = f"hpc-hadoop logs {plan.cluster_id} --app {application}"
    read: dict[str, dict[str, dict[str, str]]] = {}
    readers: dict[str, Callable[[], dict[str, dict[str, str]]]] = {
        "local": lambda: local_logs(plan, application), "aggregated": lambda: aggregated_logs(plan, application)}

    def logs_of(where: str) -> dict[str, dict[str, str]]:
        if where not in read:
            read[where] = readers[where]()
        return read[where]

    last = max([_attempt(c) for c in failed_containers(client_output)] + [last_attempt(plan, application)])
    for earliest in dict.fromkeys((last, 0)):
        for where in readers:
            logs = logs_of(where)
            for container in suspects(client_output, logs):
                found = container_cause(logs[container]) if _attempt(container) >= earliest else None
                if found:
                    name, line = found
                    path = keep_log(logs[container][name], Path(f"{keep}.{container}.{name}")) if keep else ""
                    return Cause(container, name, line, command, path)
    return None
