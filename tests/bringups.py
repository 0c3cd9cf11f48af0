"""The suite counts its own cluster bring-ups (issue 38: at most 25 a run) and prints them at its end, and fails a
test that starts a cluster of its own without saying why.

A bring-up is a ResourceManager JVM started while the suite runs (every cluster has exactly one, on every backend:
``local``, Slurm, PBS, Grid Engine; ``hdfs`` mode and Spark jobs too). A thread looks at the machine's processes every
0.25 s (all of the test cluster's node namespaces share this PID namespace) and credits each new one to the test, and
the phase of it (``setup``, ``call``, ``teardown``), that was running when it appeared; a bring-up takes seconds, far
longer than a look. No product code is involved: what is counted is what the kernel shows.

Clusters are shared (issue 38 item 4): a module- or session-scoped fixture brings one up, in the ``setup`` of the
first test that asks for it, and the tests read it. A test whose own body (``call``) brings one up must say why with
``@pytest.mark.own_cluster("why")`` (its cluster ends in a way no other test could share: a walltime, Ctrl-C, a
fault, a realm of its own...); else it fails, naming the fix.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Generator

import psutil
import pytest

#: The ResourceManager's main class: one per cluster. ``HPC_HADOOP_TEST_RM_CLASS`` names another, for
#: tests/unit/test_bringups.py's inner session, whose stand-in ResourceManagers the suite's own count must not see.
RM_CLASS = os.environ.get("HPC_HADOOP_TEST_RM_CLASS", "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager")
#: Seconds between two looks at the process table.
INTERVAL_S = 0.25


class BringUpCounter:
    """ResourceManagers seen since :meth:`start`, by the test running when each was first seen."""

    def __init__(self) -> None:
        self.current = "(between tests)"
        self.phase = ""
        self.seen: dict[tuple[int, float], str] = {}
        self.phases: dict[tuple[int, float], str] = {}
        self.looked: set[tuple[int, float]] = set()
        self._lock = threading.Lock()  # the watcher and the hooks both look
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="bring-up counter", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            self.look()

    def look(self) -> None:
        """One look: every java process not looked at before whose command line names :data:`RM_CLASS`."""
        with self._lock:
            self._look()

    def _look(self) -> None:
        for proc in psutil.process_iter(["name", "create_time"]):
            key = (proc.pid, proc.info["create_time"] or 0.0)
            if proc.info["name"] != "java" or key in self.looked:
                continue
            self.looked.add(key)
            try:
                if RM_CLASS in proc.cmdline():
                    self.seen[key] = self.current
                    self.phases[key] = self.phase
            except psutil.Error:
                continue

    def started_by(self, nodeid: str, phase: str) -> int:
        """Bring-ups credited to test ``nodeid`` in ``phase``."""
        return sum(1 for key, test in self.seen.items() if test == nodeid and self.phases.get(key) == phase)

    def records(self) -> list[tuple[str, str]]:
        """Each bring-up seen, as (the test it is credited to, the phase)."""
        return [(test, self.phases.get(key, "")) for key, test in self.seen.items()]


_counter: BringUpCounter | None = None
#: Under pytest-xdist, in the controller: the bring-ups its workers counted, as (test, phase) pairs.
_merged: list[tuple[str, str]] | None = None


def _distributed(config: pytest.Config) -> bool:
    """This session hands its tests to pytest-xdist workers (``-n N``, N > 0)."""
    return bool(getattr(config.option, "numprocesses", None)) and getattr(config.option, "dist", "no") != "no"


def pytest_configure(config: pytest.Config) -> None:
    """Where the counting happens: in the process that runs the ``hadoop`` tests, from the first of them on
    (:func:`pytest_runtest_protocol`); under pytest-xdist that is the one worker handed them (conftest.py puts them in
    one ``xdist_group``), and the controller merges what it counted (:func:`pytest_testnodedown`). A process that
    runs none does not count: the unit tier, beside a suite's clusters (the other xdist worker, or a developer's run
    while another runs the integration tests), would credit their clusters to its own tests."""
    global _merged
    config.addinivalue_line("markers", "own_cluster(why): the test's body starts a cluster of its own, for the reason "
                            "given (tests/bringups.py; any other test reads a shared one)")
    if not hasattr(config, "workerinput") and _distributed(config):
        _merged = []


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _counter is not None:
        _counter.current = nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    """Start counting at the process's first ``hadoop`` test (under xdist the group of them comes to one worker)."""
    global _counter
    if _counter is None and _merged is None and item.get_closest_marker("hadoop"):
        _counter = BringUpCounter()
        _counter.start()
        _counter.current = item.nodeid


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In an xdist worker: hand what it counted to the controller."""
    if _counter is not None and hasattr(session.config, "workerinput"):
        _counter.look()
        _counter.stop()
        session.config.workeroutput["bringups"] = _counter.records()  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """In the xdist controller: a worker's count (none from a worker that ran no ``hadoop`` test)."""
    if _merged is not None:
        _merged.extend(tuple(pair) for pair in getattr(node, "workeroutput", {}).get("bringups", []))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    return (yield from _in_phase("setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> object:
    return (yield from _in_phase("teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """The test's body; after it, a cluster it started without an ``own_cluster`` marker (with a reason) fails it."""
    result = yield from _in_phase("call")
    if _counter is not None:
        _counter.look()
        started = _counter.started_by(item.nodeid, "call")
        marker = item.get_closest_marker("own_cluster")
        if started and not (marker and marker.args and str(marker.args[0]).strip()):
            raise AssertionError(
                f"{item.nodeid} started {started} cluster(s) of its own (tests/bringups.py): read a shared one (a "
                "module- or session-scoped fixture), or say why it needs its own with "
                "@pytest.mark.own_cluster(\"why\")")
    return result


def _in_phase(phase: str) -> Generator[None, object, object]:
    """Credit what starts meanwhile to ``phase`` of the current test (back to none after it)."""
    if _counter is not None:
        _counter.phase = phase
    try:
        return (yield)
    finally:
        if _counter is not None:
            _counter.look()  # a bring-up of this phase's last moment is still its own
            _counter.phase = ""


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _counter is not None:
        _counter.look()  # a bring-up of this test's last seconds is still its own
        _counter.current = "(between tests)"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _merged is not None:
        records = _merged
    elif _counter is not None:
        _counter.look()
        _counter.stop()
        records = _counter.records()
    else:
        records = []  # no hadoop test ran here
    modules = Counter(test.split("::")[0].split("@")[0] for test, _ in records)
    terminalreporter.write_sep("=", f"cluster bring-ups: {len(records)} (ResourceManagers started)")
    if records:
        terminalreporter.write_line("by module: " + ", ".join(f"{module} {n}" for module, n in modules.most_common()))
