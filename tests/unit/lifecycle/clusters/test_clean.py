"""``clean`` (launcher/lifecycle/clusters/clean.py): its refusal of an active cluster, and its question. What it
deletes and keeps at the command line: tests/unit/cli/test_clusters.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.lifecycle.clusters.clean import clean
from launcher.lifecycle.clusters.index import index_entries, register
from launcher.lifecycle.clusters.status import status_of
from launcher.util.errors import UserError
from tests.unit.lifecycle.clusters.test_status import batch, make_dir


def test_clean_refuses_an_active_cluster_and_deletes_nothing(tmp_path: Path) -> None:
    done = make_dir(tmp_path, "done", report={"state": "stopped"})
    live = make_dir(tmp_path, "live", report={"state": "running", "bringup_s": 1.0, "hold": True})
    register("done", done, "slurm", "1")
    register("live", live, "slurm", "2")
    statuses = [status_of(e, job_state=batch("running")) for e in index_entries()]
    with pytest.raises(UserError, match="stop it first: hpc-hadoop stop live"):
        clean(statuses)
    assert done.is_dir() and live.is_dir()
    assert clean([s for s in statuses if not s.active]) == [str(done)]
    assert not done.exists() and live.is_dir() and [e.cluster_id for e in index_entries()] == ["live"]


def test_clean_asks_first(tmp_path: Path) -> None:
    done = make_dir(tmp_path, "done", report={"state": "failed"})
    register("done", done, "local")
    result = CliRunner().invoke(main, ["clean"], input="n\n")
    assert result.exit_code == 1 and "delete this cluster directory?" in result.output and done.is_dir()
    result = CliRunner().invoke(main, ["clean"], input="y\n")
    assert result.exit_code == 0 and not done.exists()
