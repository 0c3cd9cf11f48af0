"""The latency workload's breakdown of a job's start (benchmarks/history.py), read from a real job history:
``tests/data/jhist/sleep-one-map.jhist`` is the ``.jhist`` of a one-map SleepJob that Hadoop 3.4.2 wrote in a
test run of the latency workload (tests/integration/test_bench.py runs it on live daemons)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.history import LATENCY_PHASES, latency_breakdown, start_events, submit_to_first_map_s

JHIST = Path(__file__).resolve().parents[2] / "data" / "jhist" / "sleep-one-map.jhist"


def test_start_events_of_a_real_history() -> None:
    events = start_events(JHIST)
    assert set(events) == {"submitted", "am_started", "job_inited", "first_map"}
    assert events["submitted"] <= events["am_started"] <= events["job_inited"] <= events["first_map"]


def test_phases_add_up_to_the_latency_the_other_reader_gives() -> None:
    events = start_events(JHIST)
    events["am_launched"] = events["submitted"] + 1500  # the ResourceManager's launchTime, read over REST
    figures = latency_breakdown(events)
    assert figures["latency_s"] == pytest.approx(submit_to_first_map_s(JHIST))
    phases = [figures[name] for name, _ in LATENCY_PHASES]
    assert phases[0] == pytest.approx(1.5) and all(p is not None and p >= 0 for p in phases)
    assert sum(phases) == pytest.approx(figures["latency_s"])  # type: ignore[arg-type]


def test_a_missing_or_out_of_order_event_leaves_its_phases_unknown() -> None:
    events = start_events(JHIST)
    without = latency_breakdown(events)  # no launchTime from the ResourceManager
    assert without["am_launch_s"] is None and without["am_jvm_s"] is None
    assert without["am_init_s"] is not None and without["latency_s"] is not None
    skewed = latency_breakdown({**events, "am_launched": events["am_started"] + 10_000})  # another node's clock
    assert skewed["am_jvm_s"] is None
