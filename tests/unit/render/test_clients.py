"""The client side of a cluster (launcher/render/clients.py): how ``hpc-hadoop logs --app`` runs YARN's log reader
(issue 28 item 1: on a finished cluster it printed ten ``Retrying connect to server`` lines and ignored ``-n``).
The real reader on a finished cluster is run by tests/integration/test_local_end_to_end.py
(test_failing_step_stops_the_run_and_tears_down)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.clients import tail_logs, yarn_logs_command
from launcher.render.config import render_config
from tests.unit.render.test_config import single

DATA = Path(__file__).parents[1] / "steps" / "data"


def test_a_finished_clusters_logs_are_read_without_retries(make_spec: Callable[..., JobSpec],
                                                           make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec())
    core = single(render_config(plan)["core-site.xml"])
    # Hadoop's 10 tries by default; a JVM system property the configuration substitutes sets them to 0.
    assert core["ipc.client.connect.max.retries"] == "${hpc.ipc.connect.max.retries}"
    assert core["hpc.ipc.connect.max.retries"] == "10"
    argv, env = yarn_logs_command(plan, "application_1_0001", running=False)
    assert argv[-3:] == ["logs", "-applicationId", "application_1_0001"]
    assert "-Dhpc.ipc.connect.max.retries=0" in env["HADOOP_CLIENT_OPTS"].split()
    assert "-Dhpc.rm.connect.max-wait.ms=0" in env["HADOOP_CLIENT_OPTS"].split()
    assert env["HADOOP_ROOT_LOGGER"] == "ERROR,console"
    _, env = yarn_logs_command(plan, "application_1_0001")
    assert "-Dhpc.rm.connect.max-wait.ms=1000" in env["HADOOP_CLIENT_OPTS"].split()
    assert "HADOOP_ROOT_LOGGER" not in env and "hpc.ipc" not in env["HADOOP_CLIENT_OPTS"]


def _bodies(lines: list[str]) -> list[list[str]]:
    bodies, body = [], None
    for line in lines:
        if line == "LogContents:":
            body = []
        elif line.startswith("End of LogType:") and body is not None:
            bodies.append(body)
            body = None
        elif body is not None:
            body.append(line)
    return bodies


def test_each_log_file_is_cut_to_its_last_lines() -> None:
    """Recorded ``yarn logs`` output of a failed streaming job (tests/unit/steps/data): every log file's contents
    cut to its last 5 lines (a trailing blank line does not count), the headers kept; 0 keeps everything."""
    recorded = (DATA / "streaming-nameerror.yarn-logs").read_text().splitlines()
    cut = list(tail_logs(recorded, 5))
    before, after = _bodies(recorded), _bodies(cut)
    assert len(after) == len(before) >= 10
    for whole, tail in zip(before, after, strict=True):
        text = "\n".join(whole).strip("\n").splitlines()  # no blank lines around the contents
        assert tail == [*text[-5:], ""]
    assert [line for line in cut if line.startswith(("Container:", "LogType:"))] == \
        [line for line in recorded if line.startswith(("Container:", "LogType:"))]
    assert "NameError: name 'x' is not defined" in cut
    assert list(tail_logs(recorded, 0)) == recorded
