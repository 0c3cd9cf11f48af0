"""launcher.lifecycle.runner.ClusterRun builds job-client steps on a plan without starting anything, and obeys
``hpc-hadoop stop`` during a step (the cluster parts run in tests/integration/test_bench.py)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from launcher.config.load import load_spec
from launcher.lifecycle.clusters.status import STOP_FILE
from launcher.lifecycle.runner import ClusterRun, materialize, prepare
from launcher.lifecycle.signals import Interrupted
from launcher.schedulers import get_scheduler
from launcher.security.kerberos import SIMPLE_WARNING
from launcher.steps.commands import ResolvedStep
from launcher.util.errors import StopRequested


def test_java_steps_are_numbered_and_carry_the_extra_classpath(tmp_path: Path) -> None:
    spec, _ = load_spec(None, data={"name": "bench", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    allocation = get_scheduler("local").allocation(spec)
    plan, _ = prepare(spec, allocation)
    materialize(plan)
    session = ClusterRun(plan)
    first = session.java_step("dfsio write", ["-write"], main_class="org.apache.hadoop.fs.TestDFSIO",
                              extra_classpath=["/x/tests.jar"], outputs=[tmp_path / "out"])
    second = session.java_step("teragen", ["examples.jar", "teragen", "10", "/o"])
    assert first.log.name == "01-dfsio_write.log" and second.log.name == "02-teragen.log"
    cp = first.argv[first.argv.index("-cp") + 1]
    assert cp.endswith(str(session.plan.conf_dir)) and ":/x/tests.jar:" in cp
    assert first.argv[-2:] == ["org.apache.hadoop.fs.TestDFSIO", "-write"]
    assert second.argv[-5] == "org.apache.hadoop.util.RunJar" and first.outputs == (str(tmp_path / "out"),)
    assert session.bringup_s is None


def test_stop_requested_during_a_step_kills_it_and_the_run_is_cancelled(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 item 11: ``hpc-hadoop stop`` tears a cluster down through the cluster itself (``stop-requested``), a
    cluster from ``submit`` as one from ``start``, before anything asks the batch system to cancel the job (Torque's
    ``qdel`` leaves 26 ms for it). The run looks for the file every second during a step. Issue 37 item 8: the run
    ended before its work was done, as by ``qdel``: ``cancelled``, 143 (not ``interrupted``, 130: Ctrl-C's)."""
    spec, _ = load_spec(None, data={"name": "stopme", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    session = ClusterRun(plan)
    # no daemons in a unit test
    monkeypatch.setattr(session.cluster, "raise_if_failed", lambda when="", tolerate_lost=False: {})
    step = ResolvedStep(index=1, name="sleeper", kind="jar", argv=["sleep", "60"], inputs=(), outputs=(),
                        log=plan.path("steps", "01-sleeper.log"))
    plan.path(STOP_FILE).write_text("stop requested\n")
    began = time.monotonic()
    with pytest.raises(StopRequested) as info:
        session.run_step(step)
    assert time.monotonic() - began < 10
    session.__exit__(StopRequested, info.value, None)
    report = json.loads(plan.path("run.json").read_text())
    assert (report["state"], report["exit_code"]) == ("cancelled", 143)
    assert report["error"] == "stopped by `hpc-hadoop stop` during step 1 (sleeper)"
    assert [s["state"] for s in report["steps"]] == ["killed"]


@pytest.mark.parametrize(("signum", "state", "code"), [
    (signal.SIGTERM, "cancelled", 143), (signal.SIGHUP, "cancelled", 143), (signal.SIGINT, "interrupted", 130),
    (signal.SIGUSR1, "timed_out", 124)])
def test_a_signal_ends_the_run_in_the_state_and_exit_code_of_the_table(tmp_path: Path, signum: int, state: str,
                                                                       code: int) -> None:
    """Issue 37 item 8: ``qdel`` of a running cluster (OpenPBS sends SIGTERM; ``scancel`` and ``kill`` too) was
    recorded ``interrupted``, exit code 130, while ``submit --wait`` printed ``cancelled``: each way a run ends has one
    state and one exit code (:data:`launcher.util.states.EXIT_CODES`), 143 for SIGTERM (128 + 15)."""
    spec, _ = load_spec(None, data={"name": "signalled", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    session = ClusterRun(plan)
    session.__exit__(Interrupted, Interrupted(signum), None)
    report = json.loads(plan.path("run.json").read_text())
    assert (report["state"], report["exit_code"]) == (state, code)
    assert session.report.exit_code == code
    assert report["error"].startswith(f"stopped by {signal.Signals(signum).name}")


def test_a_simple_cluster_warns_in_its_report_what_it_leaves_open(tmp_path: Path) -> None:
    """Issue 27: ``security: simple`` (today's default) names the gap in run.json's notes; per-cluster does not."""
    for security, warned in (("simple", True), ("per-cluster", False)):
        spec, _ = load_spec(None, data={"name": f"sec-{security}", "security": security,
                                        "filesystem": {"root": str(tmp_path)},
                                        "steps": [{"example": "pi", "args": ["1", "10"]}]})
        plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
        materialize(plan)
        assert (SIMPLE_WARNING in ClusterRun(plan).report.notes) is warned
    assert "HADOOP_USER_NAME" in SIMPLE_WARNING and "security: per-cluster" in SIMPLE_WARNING


def test_agents_ending_while_a_stop_is_requested_is_a_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleting an Open OnDemand session (``scancel``) signals its script, which writes ``stop-requested``, and the
    agents' job step at once: the held run saw the agents gone first and ended ``failed`` ("the agents stopped while
    the cluster was held"). A failure seen while the file is there ends the hold as a stop; without the file it is
    still the failure."""
    from launcher.lifecycle import runner
    from launcher.util.errors import ClusterError

    spec, _ = load_spec(None, data={"name": "held", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    plan, _ = prepare(spec, get_scheduler("local").allocation(spec))
    materialize(plan)
    session = ClusterRun(plan)

    def agents_gone(when: str = "", tolerate_lost: bool = False) -> dict[str, object]:
        raise ClusterError(f"the agents stopped {when}")

    monkeypatch.setattr(session.cluster, "raise_if_failed", agents_gone)
    clock = iter(float(i) * 10 for i in range(1000))
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    with pytest.raises(ClusterError, match="the agents stopped while the cluster was held"):
        runner.hold_cluster(plan, session.cluster, None, interval=0.01)
    plan.path(STOP_FILE).write_text("stop requested\n")
    runner.hold_cluster(plan, session.cluster, None, interval=0.01)  # returns: the stop
