"""Tests of launcher/lifecycle/compose.py (issue 26 item 2): the life cycle composed once, the cluster directory's
path from one formula, the configuration rendered once per run with its notes kept for ``run.json``."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from launcher.config.load import load_spec
from launcher.lifecycle import submit as submit_module
from launcher.lifecycle.compose import open_cluster, prepare_run
from launcher.lifecycle.front import front_door
from launcher.plan.cluster_plan import ClusterPlan, cluster_dir, clusters_root
from launcher.render import config as render_module


def test_a_prepared_run_lives_in_the_one_cluster_directory_formula(tmp_path: Path) -> None:
    spec, _ = load_spec(None, data={"name": "composed", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    ready = front_door("run", spec)
    prepare_run(ready)
    assert Path(ready.plan.run_dir) == cluster_dir(str(tmp_path), ready.plan.cluster_id)
    assert Path(ready.plan.run_dir).parent == clusters_root(str(tmp_path)) == submit_module.clusters_dir(spec)
    assert clusters_root(str(tmp_path)) == tmp_path / getpass.getuser() / "hpc-hadoop"
    assert (Path(ready.plan.run_dir) / "plan.json").is_file() and [s.name for s in ready.steps] == ["pi"]


def test_the_configuration_is_rendered_once_and_its_notes_open_run_json(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10-minute walltime clamps two timeouts (a note each); the notes reach the run report without a second
    rendering (``runner.py`` rendered again "only for the notes" before issue 26)."""
    spec, _ = load_spec(None, data={"name": "once", "walltime": "00:10:00", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": ["1", "10"]}]})
    calls: list[str] = []
    real = render_module.render_config

    def counted(plan: ClusterPlan, notes: list[str] | None = None) -> dict[str, str]:
        calls.append(plan.cluster_id)
        return real(plan, notes)

    monkeypatch.setattr("launcher.lifecycle.runner.render_config", counted)
    session = open_cluster(front_door("bench", spec, overwrite=True))
    assert calls == [session.plan.cluster_id]
    assert any("mapreduce.task.timeout clamped" in note for note in session.report.notes)
    assert session.bringup_s is None
