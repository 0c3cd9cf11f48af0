"""Tests of launcher/lifecycle/report.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from launcher.lifecycle import report
from launcher.lifecycle.clusters import index as cluster_index
from launcher.lifecycle.clusters import status as cluster_status
from launcher.lifecycle.report import RunReport
from tests.conftest import REPO
from tests.users import make_user, shared_base

# -- issue 25 item 4, folded from tests/unit/test_lost_filesystem.py: The shared filesystem gone in the middle
# of a run (issue 25 item 4), the parts that need no daemons: what tells that a mount is gone (``ENOTCONN``,
# ``ECONNABORTED``), the one line that says so, and the run's final record kept on the node.
# tests/integration/test_lost_filesystem.py kills the OrangeFS stand-in's client under a running cluster.


def test_the_record_is_kept_on_the_node_where_it_can_be(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first place that is this user's private directory takes it (not a symbolic link someone else made).
    Issue 25 item 4 (was ``tests/unit/test_lost_filesystem.py``)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "var-tmp").mkdir()
    (tmp_path / "var-tmp" / "hpc-hadoop-me").symlink_to(elsewhere)
    places = [tmp_path / "var-tmp" / "hpc-hadoop-me" / "c1.run.json",
              tmp_path / "tmp" / "hpc-hadoop-me" / "c1.run.json"]
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(report, "local_record_paths", lambda cluster_id: places)
    record = RunReport(cluster_id="c1", name="wc", run_dir="/mnt/ofs/me/hpc-hadoop/c1", scheduler="local", job_id=None,
                       nodes=["n1"], state="failed", error="the shared filesystem at /mnt/ofs is gone (ENOTCONN: ...)")
    assert record.keep_locally() == places[1]
    assert record.error == (f"the shared filesystem at /mnt/ofs is gone (ENOTCONN: ...); final record kept at "
                            f"{places[1]} (the cluster directory cannot be written)")
    kept = json.loads(places[1].read_text())
    assert kept["kept_at"] == str(places[1]) and kept["error"] == record.error and kept["state"] == "failed"
    assert places[1].parent.stat().st_mode & 0o777 == 0o700 and list(elsewhere.iterdir()) == []
    monkeypatch.setattr(report, "local_record_paths", lambda cluster_id: [places[0]])
    record.error = "gone"
    assert record.keep_locally() is None and record.kept_at is None
    assert record.error == ("gone; no final record kept (the cluster directory cannot be written, nor "
                            f"{places[0].parent})")


# -- issue 28 item 2: the ports line only where it says something a user must act on.

#: ``ports`` of a real local run (tests/integration/test_spark.py's bench, block 26112-26143) and of a real ``hdfs``
#: mode run (the DataNode's internal web server on an ephemeral loopback port).
RECORDED_PORTS = [
    ("ResourceManager", "127.0.0.1", 26112), ("ResourceManager", "127.0.0.1", 26116),
    ("NodeManager", "127.0.0.1", 26117), ("NodeManager", "::", 26120), ("JobHistoryServer", "127.0.0.1", 26122),
    ("MRAppMaster", "::", 36715), ("java", "127.0.0.1", 39517), ("DataNode", "127.0.0.1", 34219),
]


def ports(*entries: tuple[str, str, int], node: str = "localhost") -> list[report.PortRecord]:
    return [report.PortRecord(node=node, process=process, address=address, port=port)
            for process, address, port in entries]


def test_the_ports_line_is_printed_only_where_a_user_must_act() -> None:
    """Issue 28 item 2: every run printed ``ports: 15 listening TCP ports ... on every interface: ...`` although
    the ShuffleHandler and the ApplicationMaster listen there by Hadoop's design; now ``None`` for such a run, a
    line for a daemon's port on every interface or outside the planned block (off loopback)."""
    block = range(26112, 26144)
    usual = ports(*RECORDED_PORTS)
    assert report.ports_line(usual, interface=None, block=block, shuffle_port=26120) is None
    assert report.ports_line(usual, interface="ib0", block=block, shuffle_port=26120) is None
    odd = usual + ports(("ResourceManager", "0.0.0.0", 26114), ("DataNode", "10.0.0.2", 40001), node="n2")
    assert report.ports_line(odd, interface="ib0", block=block, shuffle_port=26120) == (
        "ports (all 10 in run.json 'ports'): on every interface although the daemons bind to interface ib0's "
        "address: ResourceManager 26114 on n2; outside the planned block 26112-26143: DataNode 40001 on n2")


def test_the_summary_prints_no_ports_line_itself(tmp_path: Path) -> None:
    """Issue 28 item 2: the summary printed the ports line on every run; only a teardown note can say it now."""
    import io

    from rich.console import Console

    record = RunReport(cluster_id="c", name="wc", run_dir=str(tmp_path), scheduler="local",
                       ports=ports(*RECORDED_PORTS))
    out = io.StringIO()
    report.summary(record, Console(file=out, width=200))
    assert not [line for line in out.getvalue().splitlines() if line.startswith("ports")], out.getvalue()


# -- issue 37 items 3 and 4: a refused write keeps the record on the node; status reads it and writes it back.

REFUSED_WRITE = r"""
import json, sys, types
from pathlib import Path
from launcher.lifecycle import report
from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport
run_dir, kept = Path(sys.argv[1]), Path(sys.argv[2])
report.local_record_paths = lambda cluster_id: [kept]
record = RunReport(cluster_id="c37", name="wc", run_dir=str(run_dir), scheduler="local", nodes=["n1"],
                   state="succeeded")
health = types.SimpleNamespace(lost=lambda exc, when="": None)  # the filesystem answers: it is not gone
RunRecord(record, health).write_final(None)  # must not raise
print(json.dumps({"state": record.state.value, "error": record.error, "kept_at": record.kept_at}))
"""


def test_a_refused_final_write_is_one_clause_and_a_record_on_the_node(tmp_path: Path) -> None:
    """Issue 37 item 4: the cluster directory's filesystem answers but refuses ``run.json`` (here a real EACCES: a
    directory of the owner's she cannot write, as a real OrangeFS client's cross-user permission cache refused the
    owner her own keytab): no traceback; the run is ``failed``, its error names the file and the errno, and the record
    is kept on the node (the code before kept one only for ``ENOTCONN`` and raised ``PermissionError``)."""
    alice = make_user("hhalice")
    base = shared_base("hh-refused")  # under /tmp, 0755: alice can reach it (pytest's own tmp_path is root's, 0700)
    try:
        (base / "c37").mkdir()
        run_dir = alice.own(base / "c37", 0o500)  # hers, but she cannot write into it
        (base / "kept").mkdir()
        alice.own(base / "kept")
        kept = base / "kept" / "c37.run.json"
        done = alice.run([str(REPO / ".venv" / "bin" / "python"), "-c", REFUSED_WRITE, str(run_dir), str(kept)],
                         env={"PYTHONPATH": str(REPO)})
        kept_text = kept.read_text() if kept.exists() else ""
        run_json = (run_dir / "run.json").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    print(answer)
    assert answer["state"] == "failed" and answer["kept_at"] == str(kept)
    assert answer["error"].startswith(f"the final record {run_dir / 'run.json'} could not be written: EACCES "
                                      "(Permission denied); final record kept at ")
    assert json.loads(kept_text)["state"] == "failed" and not run_json


def test_status_after_a_remount_reads_the_record_kept_on_the_node_and_writes_it_back(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 37 item 3: the run kept its final record on the node while the mount was gone, ``run.json`` still says
    ``running`` and an earlier ``status`` concluded ``lost``; once the cluster directory answers, ``status`` shows the
    kept record's state and cause, writes it back as ``run.json``, removes the realm's keys the run could not, and the
    node's copy goes (the code before said ``lost``)."""
    run_dir = tmp_path / "pfs" / "me" / "hpc-hadoop" / "c37"
    (run_dir / "krb").mkdir(parents=True)
    for name in ("services.keytab", "me.ccache", "http-signature.secret", "krb5.conf"):
        (run_dir / "krb" / name).write_text("x")
    RunReport(cluster_id="c37", name="wc", run_dir=str(run_dir), scheduler="local", state="running").write()
    (run_dir / "ended.json").write_text(json.dumps({"state": "lost", "detail": "the process holding it is gone"}))
    kept = tmp_path / "var-tmp" / "hpc-hadoop-me" / "c37.run.json"
    kept.parent.mkdir(parents=True)
    cause = "the shared filesystem at /mnt/ofs is gone (ENOTCONN)"
    RunReport(cluster_id="c37", name="wc", run_dir=str(run_dir), scheduler="local", state="failed",
              error=f"{cause}; final record kept at {kept}", kept_at=str(kept)).write(kept)
    monkeypatch.setattr(cluster_status, "local_record_paths", lambda cluster_id: [kept])
    status = cluster_status.status_of({"cluster_id": "c37", "run_dir": str(run_dir), "scheduler": "local",
                                       "job_id": None, "created": 0.0, "holder_pid": None})
    print(status.state, status.detail)
    assert status.state == "failed" and cause in status.detail and str(kept) in status.detail
    assert json.loads((run_dir / "run.json").read_text())["state"] == "running" and kept.exists()  # nothing written
    cluster_index.record(status.observed)  # what `status` does with what it learned (issue 38)
    written = json.loads((run_dir / "run.json").read_text())
    assert written["state"] == "failed" and written["error"].startswith(cause) and not kept.exists()
    assert sorted(p.name for p in (run_dir / "krb").iterdir()) == ["krb5.conf"]
