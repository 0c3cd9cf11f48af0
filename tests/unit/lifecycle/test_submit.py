"""Tests of launcher/lifecycle/submit.py."""

from __future__ import annotations

import getpass
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from launcher.config.spec import JobSpec, load_spec
from launcher.lifecycle import submit as submit_module
from launcher.runtime.hadoop import HadoopRuntime
from launcher.util.errors import CommandError, UserError
from tests.unit.schedulers.test_pbs import STANDINS as PBS_STANDINS

# -- issue 11, folded from tests/unit/test_relative_paths.py: Issue #11: relative paths in a job file mean the
# job file's directory, and the submitted job.yaml holds them absolute (launcher/config/spec.py
# ``absolute_paths``): the run happens in the cluster directory, not where `submit` ran.


def test_submitted_job_yaml_holds_absolute_paths(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 fake_runtime: HadoopRuntime) -> None:
    """Issue 11 (was ``tests/unit/test_relative_paths.py``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(submit_module, "discover", lambda home, java: fake_runtime)
    spec, _ = load_spec(project / "job.yaml", sets=["scheduler=slurm", "filesystem.shared=true"])
    run_dir = submit_module.make_cluster_dir(spec, project / "job.yaml", overwrite=False, command="submit")
    written = yaml.safe_load((run_dir / "job.yaml").read_text())
    assert written["steps"][0]["jar"] == str(project / "target" / "myjob-1.0.jar")
    assert written["steps"][3]["streaming"]["files"] == [str(project / "mapper.py")]
    assert str(run_dir).startswith(str(project / "pfs"))


# -- issue 25 item 10, folded from tests/unit/test_small_fixes.py: Small things a user saw on real PBS and in
# a run's progress (issue 25 item 10): a submission the batch system refuses leaves nothing on the filesystem;
# ``render`` says which YARN sizes the allocation decides when the job runs; a step that never submitted a job
# shows no progress it never made.


@pytest.fixture
def pbs_standins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], None]:
    """The PBS stand-in commands first on PATH; call with the flavor (``torque``, ``pbspro``)."""
    monkeypatch.setenv("PATH", f"{PBS_STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PBS_STANDIN_DIR", str(tmp_path / "standin"))
    return lambda flavor: monkeypatch.setenv("PBS_STANDIN_FLAVOR", flavor)


def test_a_refused_root_submission_on_torque_leaves_nothing(pbs_standins: Callable[[str], None],
                                                           monkeypatch: pytest.MonkeyPatch, pfs_root: Path,
                                                           make_spec: Callable[..., JobSpec],
                                                           fake_runtime: HadoopRuntime) -> None:
    """Item 10: Torque runs no job of root's (refused before qsub); the cluster directory made for it went, but
    ``<root>/root/hpc-hadoop`` stayed, empty.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    pbs_standins("torque")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(submit_module, "discover", lambda home, java: fake_runtime)
    spec = make_spec(scheduler="pbs", nodes=1, filesystem={"root": str(pfs_root), "shared": True})
    with pytest.raises(UserError, match="Torque refuses jobs submitted by root"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(pfs_root.iterdir()) == []


def test_a_refused_submission_keeps_the_users_own_directories(pbs_standins: Callable[[str], None],
                                                              monkeypatch: pytest.MonkeyPatch, pfs_root: Path,
                                                              make_spec: Callable[..., JobSpec],
                                                              fake_runtime: HadoopRuntime) -> None:
    """A server's refusal (PBS Pro, an unknown queue) removes what the submission made, and only that: the user's
    own directory under the root, and another cluster's directory, stay.
    Issue 25 item 10 (was ``tests/unit/test_small_fixes.py``)."""
    pbs_standins("pbspro")
    monkeypatch.setenv("PBS_STANDIN_REFUSE", "qsub: Unknown queue MSG=cannot locate queue")
    monkeypatch.setattr(submit_module, "discover", lambda home, java: fake_runtime)
    spec = make_spec(scheduler="pbs", nodes=1, filesystem={"root": str(pfs_root), "shared": True})
    mine = pfs_root / getpass.getuser()
    mine.mkdir()
    with pytest.raises(CommandError, match="Unknown queue"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(pfs_root.iterdir()) == [mine] and list(mine.iterdir()) == []
    other = mine / "hpc-hadoop" / "other-cluster"
    other.mkdir(parents=True)
    with pytest.raises(CommandError, match="Unknown queue"):
        submit_module.submit_batch(spec, pfs_root.parent / "job.yaml", overwrite=False, wait=False,
                                   console=Console(file=io.StringIO()))
    assert list(other.parent.iterdir()) == [other]
