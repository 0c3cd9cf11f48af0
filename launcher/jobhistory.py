"""A MapReduce job's history file (``.jhist``, in JSON: ``mapreduce.jobhistory.jhist.format=json``) in the
cluster's history directory: finding it and reading its events. Used by the run report (:mod:`launcher.shuffle`)
and the benchmarks (:mod:`benchmarks.history`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

#: Seconds to wait for a finished job's ``.jhist`` to appear in the history directory (the ApplicationMaster
#: copies it there as the job ends, about when the job client returns).
JHIST_WAIT_S = 10.0


def find_jhist(history_dir: Path, job_id: str, wait_s: float = JHIST_WAIT_S) -> Path | None:
    """The ``.jhist`` of ``job_id`` under ``history_dir`` (``intermediate/`` or ``done/``), waiting up to
    ``wait_s`` seconds for it; ``None`` if it does not appear (history on HDFS, a binary history)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = sorted(history_dir.rglob(f"{job_id}*.jhist")) if history_dir.is_dir() else []
        if found or time.monotonic() >= deadline:
            return found[0] if found else None
        time.sleep(0.5)


def job_events(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(type, fields)`` of each event of a JSON ``.jhist`` (the header and schema lines are skipped)."""
    events = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("event"), dict):
            body: object = next(iter(record["event"].values()), {})
            events.append((str(record.get("type")), body if isinstance(body, dict) else {}))
    return events
