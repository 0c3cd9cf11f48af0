"""Task flow over time from a MapReduce job's history (the Spider paper's Figures 8-9): how many tasks of each kind
run at each time step, for the whole cluster and per host.

A task attempt's phases come from its ``.jhist`` events (:func:`launcher.steps.jobhistory.job_events`):

* ``map``: ``MAP_ATTEMPT_STARTED.startTime`` → ``MAP_ATTEMPT_FINISHED.finishTime`` (the map function, then its
  output's sort and spill: the jhist has no finer phase that the paper draws);
* ``shuffle``: ``REDUCE_ATTEMPT_STARTED.startTime`` → ``REDUCE_ATTEMPT_FINISHED.shuffleFinishTime`` (fetching the map
  outputs);
* ``merge``: ``shuffleFinishTime`` → ``sortFinishTime`` (the reducer's merge of its fetched map outputs);
* ``reduce``: ``sortFinishTime`` → ``finishTime`` (the reduce function and writing the output).

An attempt that failed or was killed (``MAP_ATTEMPT_FAILED``, ``REDUCE_ATTEMPT_KILLED``...) counts as ``map`` or
``reduce`` from its start to its ``finishTime`` (its events do not say which reduce phase it reached). The host is
the attempt's ``trackerName`` (the NodeManager's host). Times are seconds since the job's submission
(``JOB_SUBMITTED.submitTime``); a phase ``[start, end)`` counts at the step ``[t, t + STEP_S)`` (``t`` = 0,
:data:`STEP_S`, ...) when it runs at some moment of it (``start < t + STEP_S`` and ``end > t``), so a phase shorter
than a step (a reducer's merge) is still seen; a task ending and another starting within one step both count
there.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.steps.jobhistory import job_events

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Kinds of task phases, in the order they are drawn.
KINDS = ("map", "shuffle", "merge", "reduce")
#: The colour of each kind, the same in every panel.
COLORS = {"map": "tab:blue", "shuffle": "tab:orange", "merge": "tab:green", "reduce": "tab:red"}
#: Time step of the task flow, seconds (the paper's figures count tasks per second).
STEP_S = 1.0
#: Where the bench keeps each job's history under its output directory (``bench plot`` redraws from there).
HISTORY_DIR = "history"
#: Workloads whose jobs' histories are kept and drawn (one-map jobs of ``latency``/``throughput`` are not).
FLOW_WORKLOADS = ("dfsio", "terasort", "kmeans")


@dataclass(frozen=True)
class Phase:
    """One task attempt's phase: ``kind`` (:data:`KINDS`) on ``host`` from ``start`` to ``end`` (seconds since the
    job's submission)."""

    kind: str
    host: str
    start: float
    end: float


def phases(events: Sequence[tuple[str, dict[str, Any]]]) -> list[Phase]:
    """The phases of every task attempt of a job's events (the module's docstring says which event gives what).

    Raises:
        ValueError: no ``JOB_SUBMITTED`` event (not a job's history).
    """
    submitted = next((float(body["submitTime"]) for kind, body in events if kind == "JOB_SUBMITTED"), None)
    if submitted is None:
        raise ValueError("no JOB_SUBMITTED event: not a MapReduce job's history")
    started: dict[str, tuple[float, str]] = {}
    out: list[Phase] = []

    def seconds(ms: object) -> float:
        return (float(ms) - submitted) / 1000.0  # type: ignore[arg-type]

    for kind, body in events:
        if kind in ("MAP_ATTEMPT_STARTED", "REDUCE_ATTEMPT_STARTED"):
            started[str(body["attemptId"])] = (seconds(body["startTime"]), str(body.get("trackerName") or "?"))
            continue
        match = re.fullmatch(r"(MAP|REDUCE)_ATTEMPT_(FINISHED|FAILED|KILLED)", kind)
        if not match or str(body.get("attemptId")) not in started:
            continue
        start, host = started.pop(str(body["attemptId"]))
        end = seconds(body["finishTime"])
        if match.group(1) == "MAP" or match.group(2) != "FINISHED":
            out.append(Phase("map" if match.group(1) == "MAP" else "reduce", host, start, end))
            continue
        shuffled, sorted_ = seconds(body["shuffleFinishTime"]), seconds(body["sortFinishTime"])
        out += [Phase("shuffle", host, start, shuffled), Phase("merge", host, shuffled, sorted_),
                Phase("reduce", host, sorted_, end)]
    return out


@dataclass(frozen=True)
class TaskFlow:
    """Running task phases per time step.

    Attributes:
        times: the steps' starts, seconds since the job's submission (0, :data:`STEP_S`, ...; the last one holds the
            last phase's end).
        cluster: kind → running phases of that kind at each step, over every host.
        hosts: host → kind → the same on that host.
    """

    times: list[float]
    cluster: dict[str, list[int]]
    hosts: dict[str, dict[str, list[int]]]


def task_flow(parts: Sequence[Phase], step: float = STEP_S) -> TaskFlow:
    """Count the phases running at some moment of each step ``[t, t + step)`` (``start < t + step`` and
    ``end > t``), by kind, for the cluster and per host."""
    last = max((p.end for p in parts), default=0.0)
    times = [i * step for i in range(int(math.floor(last / step)) + 1)]

    def counts(selected: Sequence[Phase]) -> dict[str, list[int]]:
        return {kind: [sum(1 for p in selected if p.kind == kind and p.start < t + step and p.end > t) for t in times]
                for kind in KINDS}

    hosts = sorted({p.host for p in parts})
    return TaskFlow(times=times, cluster=counts(parts),
                    hosts={h: counts([p for p in parts if p.host == h]) for h in hosts})


def task_flow_figure(flow: TaskFlow, title: str) -> Figure:
    """The cluster's task flow on top, then one panel per host (shared time axis): running tasks (an integer axis)
    per step, one step line (``ax.stairs``) per kind present; a note says the step and where the phases come from."""
    import matplotlib

    matplotlib.use("Agg")  # no display: files only (as benchmarks.plots)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    panels = [("cluster", flow.cluster), *((f"host {h}", c) for h, c in flow.hosts.items())]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(7, 1.2 + 1.6 * len(panels)), squeeze=False)
    for ax, (name, counts) in zip(axes[:, 0], panels, strict=True):
        edges = [*flow.times, flow.times[-1] + STEP_S] if flow.times else [0.0]
        for kind in KINDS:
            if any(counts[kind]):  # a StepPatch: get_data() gives the counts and the steps' edges
                ax.stairs(counts[kind], edges, label=kind, color=COLORS[kind], linewidth=1.5)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(bottom=0)
        ax.set_ylabel("running tasks")
        ax.set_title(name, fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time since job submission (s)")
    fig.suptitle(title, fontsize=10)
    fig.text(0.01, 0.005, f"tasks running at each {STEP_S:g} s step, from the job history: map = attempt start to "
             "finish; shuffle, merge, reduce = a reducer's start, shuffle end, sort end, finish", fontsize=7,
             gid="note", wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def job_ids(row: dict[str, Any]) -> list[str]:
    """The MapReduce job ids of a ``results.jsonl`` row (``job_id``, ``write_job_id``, ``read_job_id``...)."""
    return sorted({str(v) for k, v in row.items() if k.endswith("job_id") and str(v).startswith("job_")})


def keep_histories(history_dir: Path, row: dict[str, Any], out_dir: Path) -> list[str]:
    """Copy the ``.jhist`` of each job of ``row`` (a :data:`FLOW_WORKLOADS` run) from the cluster's history
    directory to ``out_dir/history/`` (``bench plot`` redraws from there, after the cluster directory is gone).

    Returns:
        The copies' names (relative to ``out_dir``); a job whose history is not found is left out.
    """
    from launcher.steps.jobhistory import find_jhist

    if row.get("workload") not in FLOW_WORKLOADS:
        return []
    kept = []
    for job_id in job_ids(row):
        target = out_dir / HISTORY_DIR / f"{job_id}.jhist"
        target.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):  # the JobHistoryServer may move it from intermediate/ to done/ as it is copied
            found = find_jhist(history_dir, job_id, wait_s=0.0)
            if found is None:
                break
            try:
                shutil.copyfile(found, target)
            except FileNotFoundError:
                continue
            kept.append(f"{HISTORY_DIR}/{job_id}.jhist")
            break
    return kept


def plot_task_flows(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per kept job history of the successful rows (``jhists``: :func:`keep_histories`):
    ``taskflow_<workload>_<job id>.png``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")  # no display: files only (as benchmarks.plots)
    import matplotlib.pyplot as plt

    written = []
    for row in rows:
        if row.get("state") != "succeeded":
            continue
        for name in row.get("jhists") or []:
            path = out_dir / name
            if not path.is_file():
                continue
            flow = task_flow(phases(job_events(path)))
            point = ", ".join(f"{k} {row[k]}" for k in ("nodes", "stripe_count", "files") if row.get(k) is not None)
            fig = task_flow_figure(flow, f"{row['workload']} {path.stem} ({point}, repeat {row.get('repeat')})")
            png = out_dir / f"taskflow_{row['workload']}_{path.stem}.png"
            fig.savefig(png, dpi=100)
            plt.close(fig)
            written.append(png)
    return written
