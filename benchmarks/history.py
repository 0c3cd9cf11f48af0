"""Figures read from a MapReduce job's history (``.jhist`` in JSON, ``mapreduce.jobhistory.jhist.format=json``,
or the JobHistoryServer's REST API when the history is on HDFS), from a job client's output (counters), and from a
Spark application's event log (``spark.eventLog.dir``, uncompressed JSON lines)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from launcher.steps.jobhistory import find_jhist as find_jhist  # re-exported: the workloads read histories through here
from launcher.steps.jobhistory import job_events
from launcher.util.polling import poll

_COUNTER = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 _:.\-()]*?)=(\d+)\s*$")


def submit_to_first_map_s(path: Path) -> float | None:
    """Seconds from JOB_SUBMITTED (``submitTime``) to the first MAP_ATTEMPT_STARTED (``startTime``).

    Returns ``None`` when either event is missing (a binary Avro history, a job without maps).
    """
    submitted: int | None = None
    first_map: int | None = None
    for kind, fields in job_events(path):
        if kind == "JOB_SUBMITTED" and "submitTime" in fields:
            submitted = int(fields["submitTime"])
        elif kind == "MAP_ATTEMPT_STARTED" and "startTime" in fields:
            start = int(fields["startTime"])
            first_map = start if first_map is None else min(first_map, start)
    if submitted is None or first_map is None:
        return None
    return (first_map - submitted) / 1000.0


#: The phases of a job's start, in order: (name, event it ends with). Each phase's length is the time from the
#: previous event to its own; ``submitted`` is the client's submission (JOB_SUBMITTED ``submitTime``).
LATENCY_PHASES = (
    ("am_launch_s", "am_launched"),  # the ResourceManager schedules the AM container and the NodeManager launches it
    ("am_jvm_s", "am_started"),      # the AM's JVM starts and reaches MRAppMaster (AM_STARTED startTime)
    ("am_init_s", "job_inited"),     # the AM reads the job, its splits, starts its services (JOB_INITED launchTime)
    ("first_map_s", "first_map"),    # the first map container is asked for, launched, the task attempt runs
)


def start_events(path: Path) -> dict[str, int]:
    """Epoch milliseconds of the events of a job's start in its JSON ``.jhist``: ``submitted`` (JOB_SUBMITTED
    ``submitTime``), ``am_started`` (the first AM_STARTED ``startTime``: the ApplicationMaster's JVM reached
    ``MRAppMaster``), ``job_inited`` (JOB_INITED ``launchTime``: the AM has read the job and starts its tasks) and
    ``first_map`` (the earliest MAP_ATTEMPT_STARTED ``startTime``). An event that is missing is left out."""
    found: dict[str, int] = {}
    for kind, fields in job_events(path):
        if kind == "JOB_SUBMITTED" and "submitTime" in fields:
            found["submitted"] = int(fields["submitTime"])
        elif kind == "AM_STARTED" and "startTime" in fields:
            found.setdefault("am_started", int(fields["startTime"]))
        elif kind == "JOB_INITED" and "launchTime" in fields:
            found.setdefault("job_inited", int(fields["launchTime"]))
        elif kind == "MAP_ATTEMPT_STARTED" and "startTime" in fields:
            start = int(fields["startTime"])
            found["first_map"] = min(start, found.get("first_map", start))
    return found


def am_launched_ms(rm_web: str, application_id: str | None, user: str, auth: httpx.Auth | None = None) -> int | None:
    """When the ResourceManager launched the application's first AM container (``launchTime`` of
    ``/ws/v1/cluster/apps/{id}``, epoch ms), or ``None`` (no answer, never launched). Asked as ``user`` (the
    application's owner, ``user.name`` of ``simple`` authentication): with ACLs on, anyone else gets the
    application without its times. ``auth``: the owner's signed cookie under ``security: per-cluster``
    (:func:`launcher.security.webauth.web_auth`), where ``user.name`` is not believed."""
    if not application_id:
        return None
    try:
        with httpx.Client(timeout=5.0, trust_env=False, headers={"Accept": "application/json"}, auth=auth) as http:
            app = http.get(f"{rm_web}/ws/v1/cluster/apps/{application_id}", params={"user.name": user}).json()["app"]
        launched = int(app.get("launchTime") or 0)
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None
    return launched or None


def latency_breakdown(events: dict[str, int]) -> dict[str, float | None]:
    """``latency_s`` (submission → first map attempt running) and the length of each phase of
    :data:`LATENCY_PHASES`, seconds; a phase whose events are missing (or out of order: clocks of two nodes) is
    ``None``. ``events``: :func:`start_events`, with ``am_launched`` (:func:`am_launched_ms`) when known."""
    result: dict[str, float | None] = {"latency_s": None}
    if "submitted" in events and "first_map" in events:
        result["latency_s"] = (events["first_map"] - events["submitted"]) / 1000.0
    previous = events.get("submitted")
    for phase, event in LATENCY_PHASES:
        ended = events.get(event)
        result[phase] = (ended - previous) / 1000.0 if ended is not None and previous is not None \
            and ended >= previous else None
        previous = ended
    return result


def job_latency_s(history_dir: Path, job_id: str | None, wait_s: float = 15.0) -> float | None:
    """Submission → first map task running, in seconds, for ``job_id`` (``None`` if the history is not there)."""
    if not job_id:
        return None
    path = find_jhist(history_dir, job_id, wait_s)
    return submit_to_first_map_s(path) if path else None


def rest_latency_s(jhs_web: str, job_id: str | None, wait_s: float = 15.0,
                   auth: httpx.Auth | None = None) -> float | None:
    """Submission → first map task running, in seconds, from the JobHistoryServer's REST API.

    For clusters whose history is not a file on the shared filesystem (``hdfs`` mode keeps it on HDFS).
    Reads the job's ``submitTime`` (``/ws/v1/history/mapreduce/jobs/{job}``) and the earliest ``startTime``
    of any map attempt (``.../tasks?type=m``, ``.../tasks/{task}/attempts``), both epoch milliseconds: the
    same events as :func:`submit_to_first_map_s` reads from a ``.jhist``.

    Args:
        jhs_web: ``http://host:port`` of the JobHistoryServer's web address.
        wait_s: how long to wait for the server to know the job (it lists a job once its history is
            written, up to ``mapreduce.jobhistory.move.interval-ms`` after the client returns).
        auth: the owner's signed cookie under ``security: per-cluster`` (:func:`launcher.security.webauth.web_auth`).

    Returns:
        ``None`` when the server does not answer in time or the job has no map attempt.
    """
    if not job_id:
        return None
    base = f"{jhs_web}/ws/v1/history/mapreduce/jobs/{job_id}"
    with httpx.Client(timeout=5.0, trust_env=False, headers={"Accept": "application/json"}, auth=auth) as http:

        def probe() -> tuple[bool, float | None]:  # (the server knows the job, the latency)
            try:
                response = http.get(base)
                if response.status_code == 200:
                    submitted = int(response.json()["job"]["submitTime"])
                    tasks = http.get(f"{base}/tasks", params={"type": "m"}).json()["tasks"] or {}
                    starts = []
                    for task in tasks.get("task", []):
                        attempts = http.get(f"{base}/tasks/{task['id']}/attempts").json()["taskAttempts"] or {}
                        starts += [int(a["startTime"]) for a in attempts.get("taskAttempt", [])
                                   if int(a.get("startTime") or 0) > 0]
                    return True, (min(starts) - submitted) / 1000.0 if starts else None
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                pass
            return False, None

        return poll(probe, done=lambda answer: answer[0], interval=0.5, backoff=1.0, timeout=wait_s).value[1]


def client_counters(log_text: str) -> dict[str, int]:
    """The last value of every ``Name=number`` counter line in a job client's output.

    Keys are as printed, e.g. ``FILE: Number of bytes read`` (bytes), ``Map input records``.
    """
    counters: dict[str, int] = {}
    for line in log_text.splitlines():
        m = _COUNTER.match(line)
        if m:
            counters[m.group(1).strip()] = int(m.group(2))
    return counters


def file_bytes(log_text: str) -> tuple[int | None, int | None]:
    """``(FILE_BYTES_READ, FILE_BYTES_WRITTEN)`` in bytes of the last job in a client log (``None`` if absent)."""
    counters = client_counters(log_text)
    return counters.get("FILE: Number of bytes read"), counters.get("FILE: Number of bytes written")


def dfsio_results(text: str) -> list[dict[str, Any]]:
    """Parse TestDFSIO's result file (``-resFile``): one dict per ``----- TestDFSIO ----- : <mode>`` block.

    Keys: ``mode`` (``write``/``read``), ``files``, ``total_mb`` (MiB), ``throughput_mb_s`` (per-map average,
    MiB/s), ``avg_io_rate_mb_s``, ``io_rate_std``, ``exec_time_s`` (job wall time, s).
    """
    names = {"Number of files": "files", "Total MBytes processed": "total_mb", "Throughput mb/sec": "throughput_mb_s",
             "Average IO rate mb/sec": "avg_io_rate_mb_s", "IO rate std deviation": "io_rate_std",
             "Test exec time sec": "exec_time_s"}
    blocks: list[dict[str, Any]] = []
    for line in text.splitlines():
        if "----- TestDFSIO -----" in line:
            blocks.append({"mode": line.rsplit(":", 1)[-1].strip()})
            continue
        key, sep, value = line.partition(":")
        if sep and blocks and key.strip() in names:
            number = value.strip().replace(",", "")
            try:
                blocks[-1][names[key.strip()]] = int(number) if number.isdigit() else float(number)
            except ValueError:
                continue
    return blocks


def spark_events(events_dir: Path, application_id: str) -> list[dict[str, Any]]:
    """The events of one application's Spark event log in ``events_dir`` (the cluster's ``spark-events/``), in order:
    a rolling log (Spark 4's default: ``eventlog_v2_<id>/events_<n>_<id>``, by ``n``) or a single file (``<id>``, or
    ``<id>.inprogress`` for an application that did not stop). Lines that are not JSON objects (a compressed log, a
    line cut short) are skipped; no log gives ``[]``."""
    rolled = events_dir / f"eventlog_v2_{application_id}"
    if rolled.is_dir():
        parts = sorted(rolled.glob("events_*"), key=lambda f: int(f.name.split("_")[1]) if
                       f.name.split("_")[1].isdigit() else 0)
    else:
        parts = [f for f in (events_dir / application_id, events_dir / f"{application_id}.inprogress") if f.is_file()]
    events: list[dict[str, Any]] = []
    for part in parts:
        for line in part.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return events


#: Spark's task metrics (``SparkListenerTaskEnd`` ``Task Metrics``) summed by :func:`spark_task_totals`: our name →
#: the path to it. Bytes unless the name says records.
SPARK_TASK_METRICS = {
    "input_read_bytes": ("Input Metrics", "Bytes Read"),
    "input_records": ("Input Metrics", "Records Read"),
    "output_bytes": ("Output Metrics", "Bytes Written"),
    "output_records": ("Output Metrics", "Records Written"),
    "shuffle_write_bytes": ("Shuffle Write Metrics", "Shuffle Bytes Written"),
    "shuffle_remote_bytes": ("Shuffle Read Metrics", "Remote Bytes Read"),
    "shuffle_local_bytes": ("Shuffle Read Metrics", "Local Bytes Read"),
    "disk_spilled_bytes": ("Disk Bytes Spilled",),
    "memory_spilled_bytes": ("Memory Bytes Spilled",),
}


def spark_task_totals(events: list[dict[str, Any]]) -> dict[str, int | None]:
    """The sums over every task of an application (its ``SparkListenerTaskEnd`` events, failed attempts included)
    of :data:`SPARK_TASK_METRICS`; ``None`` for a metric no task reported (or when there is no task)."""
    totals: dict[str, int | None] = dict.fromkeys(SPARK_TASK_METRICS)
    for event in events:
        if event.get("Event") != "SparkListenerTaskEnd":
            continue
        metrics = event.get("Task Metrics") or {}
        for name, path in SPARK_TASK_METRICS.items():
            value: Any = metrics
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, int):
                totals[name] = (totals[name] or 0) + value
    return totals


def spark_jobs_s(events: list[dict[str, Any]]) -> tuple[int, float | None]:
    """``(jobs, seconds)``: how many Spark jobs the application ran and the sum of their durations (each job's
    ``SparkListenerJobStart`` ``Submission Time`` → ``SparkListenerJobEnd`` ``Completion Time``, epoch ms): the
    engine's time without the driver's, the ApplicationMaster's and the executors' start-up. ``None`` seconds
    when no job both started and ended."""
    started = {e["Job ID"]: e["Submission Time"] for e in events
               if e.get("Event") == "SparkListenerJobStart" and "Submission Time" in e}
    ended = {e["Job ID"]: e["Completion Time"] for e in events
             if e.get("Event") == "SparkListenerJobEnd" and "Completion Time" in e}
    both = [ended[job] - started[job] for job in started if job in ended]
    return len(started), (sum(both) / 1000.0 if both else None)
