"""Issue 29 item 2: task-flow plots (the Spider paper's Figures 8-9) from recorded job histories: the counts per
time step, for the cluster and per host, checked against the events, and the figure checked from its data."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import StepPatch

from benchmarks.taskflow import KINDS, keep_histories, phases, plot_task_flows, task_flow, task_flow_figure
from launcher.steps.jobhistory import job_events

DATA = Path(__file__).resolve().parents[2] / "data" / "jhist"
#: TeraSort of 4 maps and 2 reducers on 3 Slurm nodes (recorded; its job id).
TERASORT = DATA / "terasort-http.jhist"
TERASORT_JOB = "job_1795633536232_0004"


def _attempts(path: Path) -> list[dict]:
    """Every finished attempt straight from the events: type, host, and its times in epoch ms."""
    events = job_events(path)
    started = {b["attemptId"]: b for t, b in events if t.endswith("_ATTEMPT_STARTED")}
    return [{"type": b["taskType"], "host": started[b["attemptId"]]["trackerName"],
             "start": started[b["attemptId"]]["startTime"], **b}
            for t, b in events if t.endswith("_ATTEMPT_FINISHED")]


def _expected(path: Path, host: str | None = None) -> dict[str, list[int]]:
    """Running phases per 1-s step computed from the raw events (ms since submission), independently of the
    module: a phase [a, b) counts at step [t, t+1) when a < t+1 and b > t."""
    submitted = next(b["submitTime"] for t, b in job_events(path) if t == "JOB_SUBMITTED")
    spans: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    for a in _attempts(path):
        if host is not None and a["host"] != host:
            continue
        s, f = (a["start"] - submitted) / 1000, (a["finishTime"] - submitted) / 1000
        if a["type"] == "MAP":
            spans["map"].append((s, f))
        else:
            shuffled, merged = (a["shuffleFinishTime"] - submitted) / 1000, (a["sortFinishTime"] - submitted) / 1000
            spans["shuffle"].append((s, shuffled))
            spans["merge"].append((shuffled, merged))
            spans["reduce"].append((merged, f))
    last = max(f for a in _attempts(path) for f in [(a["finishTime"] - submitted) / 1000])
    steps = range(int(math.floor(last)) + 1)
    return {kind: [sum(1 for a, b in spans[kind] if a < t + 1 and b > t) for t in steps] for kind in KINDS}


def test_terasort_phases_come_from_the_events() -> None:
    parts = phases(job_events(TERASORT))
    attempts = _attempts(TERASORT)
    assert sum(1 for p in parts if p.kind == "map") == sum(1 for a in attempts if a["type"] == "MAP") == 4
    reducers = [a for a in attempts if a["type"] == "REDUCE"]
    for kind in ("shuffle", "merge", "reduce"):
        assert sorted(p.host for p in parts if p.kind == kind) == sorted(a["host"] for a in reducers) == ["n1", "n2"]
    assert {p.host for p in parts if p.kind == "map"} == {"n3"}
    assert all(0 <= p.start <= p.end for p in parts)


def test_counts_per_step_match_the_events_for_the_cluster_and_each_host() -> None:
    flow = task_flow(phases(job_events(TERASORT)))
    assert flow.times == [float(t) for t in range(len(flow.times))] and len(flow.times) == 38
    assert flow.cluster == _expected(TERASORT)
    assert max(flow.cluster["map"]) == 4 and max(flow.cluster["shuffle"]) == 2
    assert sum(flow.cluster["merge"]) > 0  # a 0.5 s merge is seen in its step
    assert sorted(flow.hosts) == ["n1", "n2", "n3"]
    for host in flow.hosts:
        assert flow.hosts[host] == _expected(TERASORT, host)
    # Per step, the cluster is the sum of its hosts.
    for kind in KINDS:
        assert flow.cluster[kind] == [sum(h[kind][i] for h in flow.hosts.values()) for i in range(len(flow.times))]


def test_one_map_job_has_only_maps() -> None:
    path = DATA / "sleep-one-map.jhist"
    flow = task_flow(phases(job_events(path)))
    assert flow.cluster == _expected(path) and max(flow.cluster["map"]) == 1
    assert not any(flow.cluster["shuffle"] + flow.cluster["merge"] + flow.cluster["reduce"])


def test_not_a_job_history_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jhist"
    path.write_text("Avro-Json\n")
    with pytest.raises(ValueError, match="JOB_SUBMITTED"):
        phases(job_events(path))


def test_figure_draws_the_counts_with_integer_axes() -> None:
    flow = task_flow(phases(job_events(TERASORT)))
    fig = task_flow_figure(flow, "terasort")
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["cluster", "host n1", "host n2", "host n3"]
    for ax, counts in zip(fig.axes, [flow.cluster, *flow.hosts.values()], strict=True):
        drawn = {p.get_label(): p.get_data() for p in ax.patches if isinstance(p, StepPatch)}
        assert set(drawn) == {kind for kind in KINDS if any(counts[kind])}  # no empty line
        for kind, data in drawn.items():
            assert list(data.values) == counts[kind]
            assert list(data.edges) == [*flow.times, flow.times[-1] + 1.0]
        assert ax.get_ylabel() == "running tasks" and ax.get_ylim()[0] == 0
        assert all(float(t).is_integer() for t in ax.get_yticks())
    assert fig.axes[-1].get_xlabel() == "time since job submission (s)"
    assert any(t.get_gid() == "note" and "1 s step" in t.get_text() for t in fig.texts)
    plt.close(fig)


def test_histories_are_kept_with_the_results_and_drawn_from_there(tmp_path: Path) -> None:
    """The harness copies each job's .jhist from the cluster's history into the output directory (`bench plot` redraws
    after the cluster directory is gone); one PNG per job of a successful row."""
    history = tmp_path / "cluster" / "history" / "done" / "2026" / "11"
    history.mkdir(parents=True)
    shutil.copyfile(TERASORT, history / f"{TERASORT_JOB}-1795633646671-hhdave-TeraSort.jhist")
    out = tmp_path / "out"
    row = {"workload": "terasort", "job_id": TERASORT_JOB, "state": "succeeded", "nodes": 3, "repeat": 1}
    kept = keep_histories(tmp_path / "cluster" / "history", row, out)
    assert kept == [f"history/{TERASORT_JOB}.jhist"]
    assert (out / kept[0]).read_bytes() == TERASORT.read_bytes() and TERASORT.stat().st_size < 100_000
    assert keep_histories(tmp_path / "cluster" / "history", {**row, "workload": "latency"}, out) == []
    shutil.rmtree(tmp_path / "cluster")
    (png,) = plot_task_flows([{**row, "jhists": kept}, {**row, "jhists": kept, "state": "failed"}], out)
    assert png.name == f"taskflow_terasort_{TERASORT_JOB}.png" and png.stat().st_size > 5000
