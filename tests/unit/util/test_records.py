"""Tests of launcher/util/records.py and launcher/util/states.py: the typed records of a run directory (issue 26
item 3) read what the release before them wrote, and write the same keys and shapes back.

``tests/data/records/`` is a real run directory's records, written before the records were typed (no ``schema``):
a Slurm run of three nodes whose NodeManager on n2 was killed while its step ran (the integration test
``test_nodemanager_lost_mid_job_the_job_completes[tasks]`` of the time): ``run.json``, ``plan.json``,
``submit.json`` and ``agents/n1.json``, ``n2.json``, ``n3.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from launcher.filesystems.base import NOT_APPLICABLE, DirectoryRecord, FilesystemRecord
from launcher.lifecycle.clusters.index import EndedRecord, IndexEntry
from launcher.lifecycle.report import RunReport, directory_line
from launcher.lifecycle.submit import SubmitRecord
from launcher.plan.cluster_plan import PLAN_SCHEMA, ClusterPlan, PlanSummary
from launcher.steps.shuffle import ReducerRecord, ShuffleRecord, describe
from launcher.util.records import AgentRecord, Record
from launcher.util.states import AgentState, ClusterState, RunState, StepState

RECORDS = Path(__file__).resolve().parents[2] / "data" / "records"


def raw(name: str) -> dict[str, object]:
    data = json.loads((RECORDS / name).read_text())
    assert isinstance(data, dict)
    return data


def test_run_json_of_the_release_before_reads_and_writes_back_the_same_keys(tmp_path: Path) -> None:
    report = RunReport.load(RECORDS)
    assert report.schema_version == 0  # written before records had a schema
    assert report.state is RunState.SUCCEEDED and report.state.terminal and report.exit_code == 0
    assert report.nodes == ["n1", "n2", "n3"] and report.scheduler == "slurm"
    (step,) = report.steps
    assert step.state is StepState.SUCCEEDED and step.returncode == 0 and step.application_id
    (lost,) = report.lost_nodes
    assert (lost.node, lost.step, lost.daemon, lost.exit) == ("n2", 1, "nodemanager", -9)
    assert len(report.ports) == 23 and all(p.port > 0 for p in report.ports)
    written = json.loads(report.write(tmp_path / "run.json").read_text())
    before = raw("run.json")
    # issue 40: ``results`` (each step's outputs, derived from ``steps``) is new, and written last
    assert set(written) == set(before) | {"schema", "results"} and written["schema"] == Record.SCHEMA
    assert list(written)[-1] == "results" and [r["outputs"] for r in written["results"]] == [step.outputs]
    assert {k: v for k, v in written.items() if k not in ("schema", "results")} == before
    assert RunReport.read(tmp_path / "run.json").schema_version == Record.SCHEMA


def test_run_json_s_filesystem_section_and_shuffle_entries_read_through_their_models(tmp_path: Path) -> None:
    """Issue 26 item 3: ``filesystem`` (with its ``directories``) and each step's ``shuffle`` (with its
    ``reducers``) are models, read from the release before and written back with the same keys."""
    report = RunReport.load(RECORDS)
    fs = report.filesystem
    assert isinstance(fs, FilesystemRecord) and fs.recorded
    assert (fs.type, fs.class_, fs.mode, fs.striping) == ("fuse.glusterfs", "generic", "rawfs", False)
    assert [d.role for d in fs.directories] == ["scratch", "scratch", "scratch", "input", "output", "staging"]
    assert all(isinstance(d, DirectoryRecord) and d.status == NOT_APPLICABLE for d in fs.directories)
    assert directory_line(fs.directories[3]) == f"striping not applicable: {fs.directories[3].path}"
    (step,) = report.steps
    assert isinstance(step.shuffle, ShuffleRecord) and step.shuffle.used == "http"
    assert step.shuffle.http_bytes == step.shuffle.shuffle_bytes == 396
    (reducer,) = step.shuffle.reducers
    assert isinstance(reducer, ReducerRecord) and reducer.host == "n1" and reducer.shuffled_maps == 6
    assert describe(step.shuffle) == "http, 396 bytes"
    before = raw("run.json")
    assert fs.dump() == before["filesystem"]
    assert step.shuffle.dump() == before["steps"][0]["shuffle"]  # type: ignore[index]
    assert "direct_bytes" not in step.shuffle.dump()["reducers"][0]  # Hadoop's shuffle: no plugin counters


def test_entries_with_fewer_keys_are_written_back_with_those_keys(tmp_path: Path) -> None:
    """A directory whose striping failed has no ``layout``, ``commands``, ``effective``, ``differs``; a run that
    never prepared its filesystem has ``filesystem: {}``; both read and are written back as they were."""
    failed = {"role": "output", "path": "/p/output", "status": "failed",
              "requested": {"count": 4, "size": None, "index": None}, "reason": "lfs exited with 99"}
    data = raw("run.json")
    data["filesystem"] = {**data["filesystem"], "directories": [failed]}  # type: ignore[dict-item]
    report = RunReport.parse(json.dumps(data))
    assert report.filesystem.directories[0].layout is None
    assert directory_line(report.filesystem.directories[0]) == "failed [lfs exited with 99]: /p/output"
    assert json.loads(report.write(tmp_path / "run.json").read_text())["filesystem"]["directories"] == [failed]
    empty = RunReport.parse(json.dumps({**raw("run.json"), "filesystem": {}}))
    assert not empty.filesystem.recorded and empty.dump()["filesystem"] == {}
    assert RunReport(cluster_id="c", name="n", run_dir="/r", scheduler="local").dump()["filesystem"] == {}


def test_agent_state_files_of_the_release_before_read() -> None:
    records = {path.stem: AgentRecord.read(path) for path in sorted((RECORDS / "agents").glob("*.json"))}
    assert sorted(records) == ["n1", "n2", "n3"]
    assert all(r.state.terminal and r.node == node and r.schema_version == 0 for node, r in records.items())
    assert records["n2"].failed == {"nodemanager": -9} and records["n2"].state is AgentState.FAILED
    assert records["n1"].daemons["resourcemanager"].log.endswith("resourcemanager.log")
    for node, record in records.items():
        written = record.dump()
        assert {k: v for k, v in written.items() if k != "schema"} == raw(f"agents/{node}.json")


def test_submit_json_and_plan_json_of_the_release_before_read() -> None:
    submitted = SubmitRecord.read(RECORDS / "submit.json")
    assert submitted.scheduler == "slurm" and submitted.job_id and submitted.hold is False
    assert {k: v for k, v in submitted.dump().items() if k != "schema"} == raw("submit.json")
    plan = ClusterPlan.load(RECORDS)
    assert [n.name for n in plan.nodes] == ["n1", "n2", "n3"] and plan.scheduler == "slurm"
    assert json.loads(plan.to_json())["schema"] == PLAN_SCHEMA
    summary = PlanSummary.read(RECORDS / "plan.json")
    assert summary.master.name == "n1" and summary.job_id == plan.job_id and summary.schema_version == 0


def test_a_newer_release_s_keys_are_kept_and_a_newer_plan_still_loads(tmp_path: Path) -> None:
    """The compatibility policy: unknown keys are accepted and kept (the plan's too, since it is a record: issue
    38)."""
    newer = {**raw("run.json"), "schema": Record.SCHEMA + 1, "from_the_future": {"x": 1}}
    report = RunReport.parse(json.dumps(newer))
    assert report.schema_version == Record.SCHEMA + 1
    assert json.loads(report.to_json())["from_the_future"] == {"x": 1}
    plan = {**raw("plan.json"), "schema": PLAN_SCHEMA + 1, "from_the_future": True}
    plan["master"] = {**plan["master"], "extra": 1}  # type: ignore[dict-item]
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    newer_plan = ClusterPlan.load(tmp_path)
    assert newer_plan.master.name == "n1" and newer_plan.schema_version == PLAN_SCHEMA + 1
    again = json.loads(newer_plan.to_json())
    assert again["from_the_future"] is True and again["master"]["extra"] == 1 and again["schema"] == PLAN_SCHEMA


def test_index_entries_and_ended_records_leave_out_what_is_unset(tmp_path: Path) -> None:
    entry = IndexEntry(cluster_id="c", run_dir="/r", scheduler="local", created=1.0)
    assert entry.dump() == {"schema": Record.SCHEMA, "cluster_id": "c", "run_dir": "/r", "scheduler": "local",
                            "created": 1.0, "interactive": False}
    ended = EndedRecord(state=ClusterState.LOST, detail="gone", at=2.0)
    ended.write(tmp_path / "ended.json")
    assert json.loads((tmp_path / "ended.json").read_text())["state"] == "lost"
    assert EndedRecord.read(tmp_path / "ended.json") == ended
    assert IndexEntry.read_or_none(tmp_path / "missing.json") is None


def test_every_end_of_a_run_has_one_exit_code_and_each_signal_one_state() -> None:
    """Issue 37 item 8: the table of how a run ends (launcher/util/states.py), which run.json, the CLI and
    ``submit --wait`` share: every terminal run state has its exit code (``None``: what failed decides), a cluster's
    ``cancelled`` (while queued) the run's 143, and SIGTERM is not SIGINT."""
    import signal

    from launcher.util.states import EXIT_CODES, exit_code_of, signal_state

    assert set(EXIT_CODES) == {state for state in RunState if state.terminal}
    assert {state.value: EXIT_CODES[state] for state in EXIT_CODES} == {
        "succeeded": 0, "stopped": 0, "failed": None, "bringup_failed": None, "interrupted": 130, "cancelled": 143,
        "timed_out": 124}
    assert exit_code_of(ClusterState.CANCELLED) == 143 and exit_code_of("lost") is None
    assert [signal_state(s).value for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)] == [
        "interrupted", "cancelled", "cancelled", "timed_out"]


@pytest.mark.parametrize(("kind", "terminal"), [
    (RunState, {"succeeded", "stopped", "failed", "bringup_failed", "interrupted", "cancelled", "timed_out"}),
    (AgentState, {"stopped", "failed"}),
    (StepState, {"succeeded", "failed", "killed"}),
    (ClusterState, {"lost", "cancelled", "gone", "succeeded", "stopped", "failed", "bringup_failed",
                    "interrupted", "timed_out"}),
])
def test_each_vocabulary_names_its_terminal_states(kind: type[RunState], terminal: set[str]) -> None:
    assert {state.value for state in kind if state.terminal} == terminal
    state = next(iter(kind))
    assert state == state.value and f"{state}" == str(state) == state.value  # prints and compares as its value


def test_active_cluster_states() -> None:
    assert {s.value for s in ClusterState if s.active} == {"pending", "starting", "running", "ready", "stopping",
                                                           "unknown"}


def test_every_record_is_private_itself_whatever_the_umask(tmp_path: Path) -> None:
    """Issue 36: ``run.json``, ``ended.json``, ``submit.json``, ``agents/<node>.json``, the index entries and a run's
    final record kept on its node are mode 0600 themselves (they were 0644, private only by their 0700 directory):
    each is created 0600, then renamed into place; rewriting one over a 0644 file leaves 0600."""
    from launcher.lifecycle.clusters.index import record_end, register
    from launcher.node.agent import StatusWriter
    from launcher.util.states import ClusterState

    run_dir = tmp_path / "c-1"
    (run_dir / "agents").mkdir(parents=True)
    (run_dir / "run.json").write_text("{}")
    (run_dir / "run.json").chmod(0o644)  # a record of an earlier release
    umask = os.umask(0o022)
    try:
        report = RunReport(cluster_id="c-1", run_dir=str(run_dir), scheduler="local")
        report.write()
        record_end(run_dir, ClusterState.LOST, "the holder is gone")
        SubmitRecord(scheduler="slurm", job_id="1", submitted=0.0, job_file="j.yaml").write(run_dir / "submit.json")
        entry = register("c-1", run_dir, "local")
        writer = StatusWriter(run_dir / "agents" / "n1.json", "n1")
        writer.put(AgentRecord(node="n1").to_json())
        assert writer.flush(10)
    finally:
        os.umask(umask)
    paths = [run_dir / name for name in ("run.json", "ended.json", "submit.json", "agents/n1.json")] + [entry]
    assert {str(p.relative_to(tmp_path)): oct(p.stat().st_mode & 0o777) for p in paths} == {
        str(p.relative_to(tmp_path)): "0o600" for p in paths}
    assert oct(entry.parent.stat().st_mode & 0o777) == "0o700"  # the index's directory
    assert sorted(p.name for p in run_dir.iterdir()) == ["agents", "ended.json", "run.json", "submit.json"]
