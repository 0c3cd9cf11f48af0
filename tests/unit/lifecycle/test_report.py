"""Tests of launcher/lifecycle/report.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.lifecycle import report
from launcher.lifecycle.report import RunReport

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
