"""The suite counts its own cluster bring-ups (issue 38: at most 25 a run) and prints them at its end.

A bring-up is a ResourceManager JVM started while the suite runs (every cluster has exactly one, on every backend:
``local``, Slurm, PBS, Grid Engine; ``hdfs`` mode and Spark jobs too). A thread looks at the machine's processes every
0.25 s (all of the test cluster's node namespaces share this PID namespace) and credits each new one to the test that
was running when it appeared; a bring-up takes seconds, far longer than a look. No product code is involved: what is
counted is what the kernel shows.
"""

from __future__ import annotations

import threading
from collections import Counter

import psutil
import pytest

#: The ResourceManager's main class: one per cluster.
RM_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
#: Seconds between two looks at the process table.
INTERVAL_S = 0.25


class BringUpCounter:
    """ResourceManagers seen since :meth:`start`, by the test running when each was first seen."""

    def __init__(self) -> None:
        self.current = "(between tests)"
        self.seen: dict[tuple[int, float], str] = {}
        self.looked: set[tuple[int, float]] = set()
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
        for proc in psutil.process_iter(["name", "create_time"]):
            key = (proc.pid, proc.info["create_time"] or 0.0)
            if proc.info["name"] != "java" or key in self.looked:
                continue
            self.looked.add(key)
            try:
                if RM_CLASS in proc.cmdline():
                    self.seen[key] = self.current
            except psutil.Error:
                continue

    def by_module(self) -> Counter[str]:
        return Counter(test.split("::")[0] for test in self.seen.values())


_counter: BringUpCounter | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _counter
    if _counter is None and not hasattr(config, "workerinput"):
        _counter = BringUpCounter()
        _counter.start()


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _counter is not None:
        _counter.current = nodeid


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _counter is not None:
        _counter.look()  # a bring-up of this test's last seconds is still its own
        _counter.current = "(between tests)"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _counter is None:
        return
    _counter.look()
    _counter.stop()
    total = len(_counter.seen)
    modules = ", ".join(f"{module} {n}" for module, n in _counter.by_module().most_common())
    terminalreporter.write_sep("=", f"cluster bring-ups: {total} (ResourceManagers started)")
    if total:
        terminalreporter.write_line(f"by module: {modules}")
