"""Which shuffle a MapReduce step used, and the map-output bytes its reducers read each way (issue 15).

With ``hadoop.shuffle: shared-fs`` every reduce task runs hpc-hadoop's shuffle plugin
(:data:`PLUGIN_CLASS`, ``hadoop-fs-shim``): it reads each finished map's partition straight from the map's
``file.out`` on the shared filesystem and fetches over HTTP (Hadoop's ShuffleHandler) only what it cannot read;
its counters (group :data:`COUNTER_GROUP`) say how many map outputs and bytes went each way. With ``http`` the
reducers run Hadoop's own shuffle, which fetches everything over HTTP (``REDUCE_SHUFFLE_BYTES``).

The figures come from the job's history file (``.jhist`` in JSON, ``mapreduce.jobhistory.jhist.format=json``):
one entry per successful reduce attempt (``REDUCE_ATTEMPT_FINISHED``), summed for the step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

# The plugin's Java names live with the runtime (rendering needs them too); re-exported here as before.
from launcher.runtime.shuffle_plugin import HADOOP_SHUFFLE as HADOOP_SHUFFLE
from launcher.runtime.shuffle_plugin import LOCAL_DIRS_PROPERTY as LOCAL_DIRS_PROPERTY
from launcher.runtime.shuffle_plugin import PLUGIN_CLASS as PLUGIN_CLASS
from launcher.steps.jobhistory import find_jhist as find_jhist  # re-exported: the runner reads a step's history here
from launcher.steps.jobhistory import job_events
from launcher.util.records import Section, SparseSection

#: The plugin's counter group, and its counters → the keys they have here.
COUNTER_GROUP = "org.hpchadoop.shuffle"
COUNTERS = {"DIRECT_BYTES": "direct_bytes", "HTTP_BYTES": "http_bytes", "DIRECT_MAPS": "direct_maps",
            "HTTP_MAPS": "http_maps"}
#: Hadoop's task counters read alongside (group ``org.apache.hadoop.mapreduce.TaskCounter``).
TASK_COUNTERS = {"REDUCE_SHUFFLE_BYTES": "shuffle_bytes", "SHUFFLED_MAPS": "shuffled_maps"}
_TASK_GROUP = "org.apache.hadoop.mapreduce.TaskCounter"


def _counters(fields: dict[str, Any]) -> dict[str, int]:
    """The plugin's and the shuffle's task counters of one attempt-finished event, by their keys here."""
    wanted = {COUNTER_GROUP: COUNTERS, _TASK_GROUP: TASK_COUNTERS}
    values: dict[str, int] = {}
    counters = fields.get("counters")
    for group in counters.get("groups", []) if isinstance(counters, dict) else []:
        names = wanted.get(group.get("name"), {})
        if group.get("name") == COUNTER_GROUP:  # the plugin ran: a counter it never incremented is 0
            values.update(dict.fromkeys(COUNTERS.values(), 0))
        for count in group.get("counts", []):
            if count.get("name") in names:
                values[names[count["name"]]] = int(count.get("value", 0))
    return values


def reducers(path: Path) -> list[dict[str, Any]]:
    """One entry per successful reduce attempt of a job's ``.jhist``: ``task``, ``attempt``, ``host``, the
    shuffle phase in seconds (``shuffle_s``: attempt start → ``shuffleFinishTime``, ``None`` if not known), the
    task's ``shuffle_bytes`` and ``shuffled_maps``, and, where the plugin ran, ``direct_bytes``, ``http_bytes``,
    ``direct_maps``, ``http_maps``. Sorted by task."""
    started: dict[str, int] = {}
    found = []
    for kind, fields in job_events(path):
        if kind == "REDUCE_ATTEMPT_STARTED" and "startTime" in fields:
            started[str(fields.get("attemptId"))] = int(fields["startTime"])
        elif kind == "REDUCE_ATTEMPT_FINISHED" and fields.get("taskStatus") == "SUCCEEDED":
            attempt = str(fields.get("attemptId"))
            start, end = started.get(attempt), fields.get("shuffleFinishTime")
            found.append({"task": str(fields.get("taskid")), "attempt": attempt, "host": fields.get("hostname"),
                          "shuffle_s": None if start is None or end is None else (int(end) - start) / 1000.0,
                          **_counters(fields)})
    return sorted(found, key=lambda r: r["task"])


class ReducerRecord(SparseSection):
    """One successful reduce attempt in a step's ``shuffle.reducers`` (:func:`reducers`); the counters it did not
    report (the plugin's, where Hadoop's shuffle ran) are left out of the JSON, as before. Schema policy:
    :class:`launcher.util.records.Record`."""

    task: str
    attempt: str
    host: str | None = None
    shuffle_s: float | None = None
    shuffle_bytes: int | None = None
    shuffled_maps: int | None = None
    direct_bytes: int | None = None
    http_bytes: int | None = None
    direct_maps: int | None = None
    http_maps: int | None = None


class ShuffleRecord(Section):
    """A step's ``shuffle`` entry in ``run.json`` (:func:`step_shuffle`): which shuffle the reducers used, bytes and
    map outputs read directly and over HTTP (sums over reducers), the longest shuffle phase (seconds), and each
    reducer. Schema policy: :class:`launcher.util.records.Record`."""

    used: Literal["shared-fs", "http"]
    shuffle_bytes: int = 0
    direct_bytes: int = 0
    http_bytes: int = 0
    direct_maps: int = 0
    http_maps: int = 0
    shuffle_s: float | None = None
    reducers: list[ReducerRecord] = Field(default_factory=list)


def step_shuffle(path: Path | None) -> ShuffleRecord | None:
    """What a step's ``shuffle`` entry in ``run.json`` holds, from its job's ``.jhist``: ``used`` (``shared-fs``
    when the reducers ran the plugin, else ``http``), the sums over reducers of ``shuffle_bytes``,
    ``direct_bytes``, ``http_bytes`` (everything, under ``http``), ``direct_maps``, ``http_maps``, the longest
    ``shuffle_s``, and ``reducers`` (:func:`reducers`). ``None``: no history file, or a job without reducers."""
    if path is None:
        return None
    per = reducers(path)
    if not per:
        return None
    shared = any("direct_bytes" in r for r in per)
    total = {key: sum(int(r.get(key, 0)) for r in per) for key in ("shuffle_bytes", *COUNTERS.values())}
    if not shared:
        total["http_bytes"] = total["shuffle_bytes"]
        total["http_maps"] = sum(int(r.get("shuffled_maps", 0)) for r in per)
    phases = [r["shuffle_s"] for r in per if r["shuffle_s"] is not None]
    return ShuffleRecord(used="shared-fs" if shared else "http", **total, shuffle_s=max(phases) if phases else None,
                         reducers=[ReducerRecord(**r) for r in per])


def describe(shuffle: ShuffleRecord | None) -> str:
    """A step's shuffle in a few words for the run summary: ``shared-fs, 10400048 bytes read directly, 0 over
    HTTP``, ``http, 10400048 bytes``, ``-`` (none)."""
    if not shuffle:
        return "-"
    if shuffle.used != "shared-fs":
        return f"http, {shuffle.http_bytes} bytes"
    return f"shared-fs, {shuffle.direct_bytes} bytes read directly, {shuffle.http_bytes} over HTTP"
