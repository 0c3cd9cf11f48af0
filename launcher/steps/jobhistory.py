"""A MapReduce job's history file (``.jhist``, in JSON: ``mapreduce.jobhistory.jhist.format=json``) in the
cluster's history directory: finding it and reading its events. Used by the run report (:mod:`launcher.steps.shuffle`)
and the benchmarks (:mod:`benchmarks.history`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from launcher.util.polling import poll

#: Seconds to wait for a finished job's ``.jhist`` to appear in the history directory (the ApplicationMaster
#: copies it there as the job ends, about when the job client returns).
JHIST_WAIT_S = 10.0


def find_jhist(history_dir: Path, job_id: str, wait_s: float = JHIST_WAIT_S) -> Path | None:
    """The ``.jhist`` of ``job_id`` under ``history_dir`` (``intermediate/`` or ``done/``), waiting up to
    ``wait_s`` seconds for it; ``None`` if it does not appear (history on HDFS, a binary history)."""
    found = poll(lambda: sorted(history_dir.rglob(f"{job_id}*.jhist")) if history_dir.is_dir() else [], done=bool,
                 interval=0.5, backoff=1.0, timeout=wait_s).value
    return found[0] if found else None


#: Seconds to wait, after a job's client has returned, for its ``.jhist`` to reach ``history/done``: the
#: ApplicationMaster copies it to ``history/intermediate`` as the job ends and the JobHistoryServer moves it to
#: ``done/`` on its next scan (``mapreduce.jobhistory.move.interval-ms``, 0.5 s in ``mapred-site.xml``). Only a history
#: that is not kept waits all of it.
DONE_WAIT_S = 20.0


def history_not_kept(history_dir: Path, job_id: str, wait_s: float = DONE_WAIT_S) -> str | None:
    """Why the history of ``job_id`` was not kept, or ``None`` once its ``.jhist`` is in ``history_dir/done``
    (polled every 0.25 s for up to ``wait_s`` seconds): one line that names what ``intermediate/`` holds of it
    instead (the ``.jhist`` the JobHistoryServer did not move, or what the ApplicationMaster left of its history when
    the filesystem cut the file's name short or refused it)."""
    done = history_dir / "done"
    if poll(lambda: done.is_dir() and any(done.rglob(f"{job_id}-*.jhist")), done=bool, interval=0.25, backoff=1.0,
            timeout=wait_s).done:
        return None
    intermediate = history_dir / "intermediate"
    left = sorted(p.name for p in intermediate.rglob(f"{job_id}*")) if intermediate.is_dir() else []
    jhist = [name for name in left if name.endswith(".jhist")]
    found = (f"it stayed in {intermediate}: {jhist[0]}" if jhist else
             f"{intermediate} has only {', '.join(left[:3])} of it" if left else f"{intermediate} has none of it")
    return f"the job history of {job_id} was not kept: no .jhist in {done} {wait_s:.0f} s after the job, and {found}"


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
