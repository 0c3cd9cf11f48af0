"""Small things a user saw on real PBS and in a run's progress (issue 25 item 10): a submission the batch system
refuses leaves nothing on the filesystem; ``render`` says which YARN sizes the allocation decides when the job runs;
a step that never submitted a job shows no progress it never made.

The PBS commands are the stand-ins of tests/standins/pbs (they behave as Torque 6.1 and OpenPBS 23.06 did,
``$PBS_STANDIN_REFUSE`` making ``qsub`` refuse with that message); nothing is queued.
"""

from __future__ import annotations

import getpass
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.lifecycle import submit as submit_module
from launcher.lifecycle.progress import ConsoleObserver
from launcher.runtime.hadoop import HadoopRuntime
from launcher.steps.jobs import StepResult
from launcher.util.errors import CommandError, UserError
from tests.unit.test_pbs import STANDINS as PBS_STANDINS


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
    ``<root>/root/hpc-hadoop`` stayed, empty."""
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
    own directory under the root, and another cluster's directory, stay."""
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


def render_notes(stdout: str) -> list[str]:
    """The lines of ``render``'s ``notes`` section."""
    _, found, rest = stdout.partition("==> notes <==\n")
    return rest.partition("==> ")[0].splitlines() if found else []


def test_render_on_pbs_pro_says_the_cores_come_from_the_allocation(pbs_standins: Callable[[str], None],
                                                                    tmp_path: Path, pfs_root: Path,
                                                                    write_yaml: Callable[..., Path],
                                                                    built_runtime: Path) -> None:
    """Item 10: PBS Pro asks ``ncpus=1`` with ``place=scatter:excl`` and YARN gets the whole node's cores inside the
    allocation; the preview's ``cpu-vcores 1`` (and the memory that follows from it) is said to be a stand-in.
    With the cores in the job file, no such note; Torque, which grants the cores asked for, has none for cores."""
    pbs_standins("pbspro")
    job = write_yaml(tmp_path / "job.yaml", {"name": "pbsr", "scheduler": "pbs", "nodes": 2,
                                             "filesystem": {"root": str(pfs_root), "shared": True}})
    result = CliRunner().invoke(main, ["render", str(job)])
    assert result.exit_code == 0, result.output
    assert "#PBS -l select=2:ncpus=1\n" in result.stdout and "#PBS -l place=scatter:excl\n" in result.stdout
    assert "<name>yarn.nodemanager.resource.cpu-vcores</name>\n    <value>1</value>" in result.stdout
    notes = render_notes(result.stdout)
    assert [n for n in notes if n.startswith("yarn.nodemanager.resource.cpu-vcores 1 is a stand-in: the job takes "
                                             "whole nodes (batch.exclusive) and YARN gets each node's cores from the "
                                             "allocation when it runs")], notes
    assert [n for n in notes if n.startswith("yarn.nodemanager.resource.memory-mb 2048 is a stand-in")], notes
    fixed = CliRunner().invoke(main, ["render", str(job), "--set", "batch.cores_per_node=4",
                                      "--set", "hadoop.nodemanager_memory=6g"])
    assert fixed.exit_code == 0, fixed.output
    assert not [n for n in render_notes(fixed.stdout) if "stand-in" in n], fixed.stdout
    pbs_standins("torque")
    torque = CliRunner().invoke(main, ["render", str(job)])
    assert torque.exit_code == 0, torque.output
    assert not [n for n in render_notes(torque.stdout) if "cpu-vcores" in n], torque.stdout


@pytest.mark.parametrize("live", [False, True])
def test_a_step_that_never_submitted_a_job_shows_no_progress(live: bool) -> None:
    """Item 10: a jar step whose client failed before it submitted a job printed ``map 0% reduce 0% (failed)``."""
    out = io.StringIO()
    observer = ConsoleObserver(Console(file=out, force_terminal=live, width=200))
    observer.phase("step 1/2 myjar")
    observer.progress(StepResult(name="myjar", kind="jar", argv=[], log="1.log", outputs=[], returncode=1,
                                 state="failed"))
    observer.phase("step 2/2 wordcount")
    submitted = StepResult(name="wordcount", kind="example", argv=[], log="2.log", outputs=[], returncode=1,
                           state="failed", application_id="application_1_0001", map_pct=100, reduce_pct=30)
    observer.progress(submitted)
    observer.close()
    text = out.getvalue()
    assert ("failed (exit code 1, no job submitted)" if live else "myjar: failed (exit code 1, no job submitted)") \
        in text, text
    assert not [line for line in text.splitlines() if "myjar" in line and "%" in line], text
    assert "reduce  30%" in text and "application_1_0001" in text, text
