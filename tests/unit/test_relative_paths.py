"""Issue #11: relative paths in a job file mean the job file's directory, and the submitted job.yaml holds them
absolute (launcher/config/spec.py ``absolute_paths``): the run happens in the cluster directory, not where `submit`
ran."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from launcher.config.spec import load_spec
from launcher.lifecycle import submit as submit_module
from launcher.runtime.hadoop import HadoopRuntime
from tests.conftest import REPO


@pytest.fixture
def project(tmp_path: Path, write_yaml: Callable[..., Path]) -> Path:
    """``proj/job.yaml`` with relative paths, the jar and the data they name, next to it."""
    proj = tmp_path / "proj"
    (proj / "target").mkdir(parents=True)
    (proj / "target" / "myjob-1.0.jar").write_bytes(b"")
    (proj / "data").mkdir()
    (proj / "data" / "words.txt").write_text("a b\n")
    (proj / "mapper.py").write_text("print()\n")
    write_yaml(proj / "job.yaml", {
        "name": "rel", "filesystem": {"root": "pfs"},
        "steps": [{"jar": "target/myjob-1.0.jar", "args": ["in", "out"], "output": "results/jar"},
                  {"example": "wordcount", "args": ["-D", "x=1", "data/words.txt", "results/wc"]},
                  {"example": "pi", "args": [2, 10]},
                  {"streaming": {"mapper": "python3 mapper.py", "files": ["mapper.py"], "input": "data",
                                 "output": "../elsewhere/out"}}]})
    return proj


def test_relative_paths_resolve_against_the_job_files_directory(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # not the job file's directory
    spec, _ = load_spec(project / "job.yaml")
    jar, wordcount, pi, streaming = spec.steps
    assert spec.filesystem.root == str(project / "pfs")
    assert jar.jar == str(project / "target" / "myjob-1.0.jar") and jar.output == str(project / "results" / "jar")
    assert jar.args == ["in", "out"]  # a jar's own arguments are passed as they are
    assert wordcount.args == ["-D", "x=1", str(project / "data" / "words.txt"), str(project / "results" / "wc")]
    assert pi.args == ["2", "10"]
    assert streaming.streaming.files == [str(project / "mapper.py")]
    assert streaming.streaming.input == [str(project / "data")]
    assert streaming.streaming.output == str(tmp_path / "elsewhere" / "out")
    assert streaming.streaming.mapper == "python3 mapper.py"


def test_variables_and_absolute_paths_are_kept(tmp_path: Path, write_yaml: Callable[..., Path]) -> None:
    job = write_yaml(tmp_path / "j.yaml", {"name": "keep", "filesystem": {"root": "$HOME/pfs"},
                                           "steps": [{"jar": "${examples_jar}", "output": "/abs/out"},
                                                     {"example": "wordcount", "args": ["file:///in", "~/out"]}]})
    spec, _ = load_spec(job)
    assert spec.filesystem.root == "$HOME/pfs" and spec.steps[0].jar == "${examples_jar}"
    assert spec.steps[0].output == "/abs/out" and spec.steps[1].args == ["file:///in", "~/out"]


def test_submitted_job_yaml_holds_absolute_paths(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 fake_runtime: HadoopRuntime) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(submit_module, "discover", lambda home, java: fake_runtime)
    spec, _ = load_spec(project / "job.yaml", sets=["scheduler=slurm", "filesystem.shared=true"])
    run_dir = submit_module.make_cluster_dir(spec, project / "job.yaml", overwrite=False, command="submit")
    written = yaml.safe_load((run_dir / "job.yaml").read_text())
    assert written["steps"][0]["jar"] == str(project / "target" / "myjob-1.0.jar")
    assert written["steps"][3]["streaming"]["files"] == [str(project / "mapper.py")]
    assert str(run_dir).startswith(str(project / "pfs"))


def test_render_from_another_directory_finds_a_relative_jar(project: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "launcher.cli", "render", str(project / "job.yaml")],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"RunJar {project}/target/myjob-1.0.jar in out" in proc.stdout
