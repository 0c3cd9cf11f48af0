"""Tests of launcher/cluster/events.py: the bring-up's lines (issue 28 item 2: nothing was printed during a 20-60 s
bring-up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launcher.cluster.events import BringUpEvents
from launcher.util.records import AgentRecord, DaemonRecord


def agent(**pids: int | None) -> AgentRecord:
    """An agent's state file with its daemons' pids (``None``: not started yet)."""
    return AgentRecord(daemons={name: DaemonRecord(pid=pid) for name, pid in pids.items()})


def test_each_bring_up_event_is_said_once_in_the_order_seen(make_spec: Callable[..., Any],
                                                            make_test_plan: Callable[..., Any]) -> None:
    """Issue 28 item 2: a line as each node's daemons start and register, each once, over repeated polls."""
    plan = make_test_plan(make_spec())  # n1..n3 at 10.0.0.1..3, n1 the master
    events = BringUpEvents(plan)
    nm = plan.ports.nm
    assert events.started({"n1": agent(resourcemanager=101, historyserver=None, nodemanager=None)}) == \
        ["n1: ResourceManager started (pid 101)"]
    assert events.answered(None) == []  # the ResourceManager does not answer yet
    states = {"n1": agent(resourcemanager=101, historyserver=102, nodemanager=103), "n2": agent(nodemanager=201)}
    assert events.started(states) == ["n1: JobHistoryServer started (pid 102)", "n1: NodeManager started (pid 103)",
                                      "n2: NodeManager started (pid 201)"]
    assert events.answered([f"10.0.0.2:{nm}"]) == [f"ResourceManager up at {plan.rm_web}",
                                                   "n2: NodeManager registered (1/3)"]
    assert events.started(states) == [] and events.answered([f"10.0.0.2:{nm}"]) == []  # nothing new: nothing said
    states["n3"] = agent(nodemanager=301)
    assert events.started(states) == ["n3: NodeManager started (pid 301)"]
    everyone = [f"10.0.0.{i}:{nm}" for i in (1, 2, 3)]
    assert events.answered(everyone, history_up=True) == ["n1: NodeManager registered (2/3)",
                                                          "n3: NodeManager registered (3/3)",
                                                          f"JobHistoryServer up at {plan.jhs_web}"]
    assert events.answered(everyone, history_up=True) == []
