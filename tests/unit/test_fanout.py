"""How a fan-out process is stopped (launcher/fanout/base.py): the stop signal first, then SIGTERM, then SIGKILL.

Real processes (bash) stand in for ``srun``; the real ``srun`` forwarding SIGUSR1 to the agents is tested on the
Slurm test cluster (tests/integration/test_slurm.py: every agent reports ``stopped (SIGUSR1)`` and the
daemons' class-data-sharing archives are kept).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from launcher.fanout import base
from launcher.fanout.base import Fanout
from launcher.fanout.srun import SrunFanout
from launcher.plan import ClusterPlan

#: Records each signal it gets in a file; exits 0 on the first one unless told to ignore it.
SCRIPT = """
for s in USR1 TERM; do trap "echo $s >> {log}; [ $s = {ignore} ] || exit 0" $s; done
echo started >> {log}
while true; do sleep 0.05; done
"""


class BashFanout(Fanout):
    """A fan-out whose "launcher" is a bash loop that logs the signals it receives."""

    name = "bash"
    stop_signal = signal.SIGUSR1

    def __init__(self, log: Path, ignore: str = "none") -> None:
        super().__init__()
        self.log, self.ignore = log, ignore

    def command(self, plan: ClusterPlan) -> list[str]:
        return ["bash", "-c", SCRIPT.format(log=self.log, ignore=self.ignore)]


def start(fanout: BashFanout, tmp_path: Path) -> None:
    plan = type("P", (), {"path": lambda self, *parts: tmp_path.joinpath(*parts)})()
    fanout.start(plan)  # type: ignore[arg-type]
    deadline = time.monotonic() + 10
    while not (fanout.log.exists() and "started" in fanout.log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)


def test_srun_is_asked_with_sigusr1_which_it_forwards() -> None:
    assert SrunFanout.stop_signal == signal.SIGUSR1 and Fanout.stop_signal == signal.SIGTERM


def test_stop_signal_first_and_the_process_ends_by_itself(tmp_path: Path) -> None:
    fanout = BashFanout(tmp_path / "signals")
    start(fanout, tmp_path)
    assert fanout.stop(timeout=10) == 0
    assert fanout.log.read_text().split() == ["started", "USR1"]


def test_sigterm_when_the_stop_signal_is_not_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "FORCE_SECONDS", 5.0)
    fanout = BashFanout(tmp_path / "signals", ignore="USR1")
    start(fanout, tmp_path)
    assert fanout.stop(timeout=0.5) == 0
    assert fanout.log.read_text().split() == ["started", "USR1", "TERM"]


def test_sigkill_when_nothing_else_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "FORCE_SECONDS", 0.5)
    fanout = BashFanout(tmp_path / "signals", ignore="TERM")  # exits on USR1... unless USR1 is ignored too
    fanout.stop_signal = signal.SIGTERM  # a fan-out whose stop signal is SIGTERM goes straight to SIGKILL
    start(fanout, tmp_path)
    assert fanout.stop(timeout=0.5) == -signal.SIGKILL
    assert fanout.log.read_text().split() == ["started", "TERM"]
