"""``install.sh`` builds ``.venv`` from an interpreter every user of a site install can run (issue 17 item 13).

Runs the real script with ``--print-python``, which only chooses the interpreter (no apt, pip or Maven).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

SYSTEM_PYTHON = Path("/usr/bin/python3")


def choose(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "install.sh"), "--print-python"], capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env}, timeout=60, check=False)


@pytest.fixture
def private_python(tmp_path: Path) -> Path:
    """A python3 that only its owner can reach (as pyenv under a home directory): a link, in a 0700 directory,
    to the system's python3, which anyone could run by its own path (the CI run that caught the first version
    of the check, which looked only at where the link leads)."""
    private = tmp_path / "home" / ".pyenv" / "bin"
    private.mkdir(parents=True)
    (tmp_path / "home").chmod(0o700)
    (private / "python3").symlink_to(SYSTEM_PYTHON)
    return private / "python3"


def test_system_python_before_a_private_one_first_on_path(tmp_path: Path, private_python: Path) -> None:
    result = choose(tmp_path, PATH=f"{private_python.parent}:{os.environ['PATH']}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(SYSTEM_PYTHON) and result.stderr == ""


def test_a_chosen_private_python_is_used_with_a_warning(tmp_path: Path, private_python: Path) -> None:
    result = choose(tmp_path, HPC_HADOOP_PYTHON=str(private_python))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(private_python)
    assert f"other users cannot run {private_python}" in result.stderr


def _checkout_with_standins(tmp_path: Path, cds_exit: int) -> tuple[Path, dict[str, str]]:
    """A copy of ``install.sh`` in a checkout whose installers are stand-ins: ``dpkg-query`` finds every package,
    ``mvn`` and ``pip`` succeed, Spark and its examples jar are there, and ``.venv/bin/python -m
    launcher.runtime.cds_build`` prints one line and exits ``cds_exit`` (the real one needs a training run: its exit
    codes are tests/unit/runtime/test_cds_build.py's). The script's own control flow is what runs."""
    repo = tmp_path / "checkout"
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / "install.sh").write_text((REPO / "install.sh").read_text())
    spark = re.search(r"^spark_version=(\S+)$", (REPO / "install.sh").read_text(), re.M)
    assert spark is not None
    jars = repo / "spark-runtime" / "pyspark" / "jars"
    jars.mkdir(parents=True)
    (jars / f"spark-core_2.13-{spark.group(1)}.jar").write_bytes(b"")
    (repo / "spark-runtime" / "hpc-hadoop-spark-examples.jar").write_bytes(b"")
    (repo / "spark-examples" / "src").mkdir(parents=True)
    runtime = repo / "hadoop-fs-shim" / "target" / "hadoop-runtime"
    runtime.mkdir(parents=True)
    (runtime / "VERSION").write_text("3.4.2\n")
    line = ("hpc-hadoop cds_build: 3 archives (150 MiB) in /x, built in 90 s; missing after 2 training runs: "
            "resourcemanager.jsa (no class list); fix: re-run")
    if not cds_exit:
        line = "hpc-hadoop cds_build: 6 archives (363 MiB) in /x, built in 82 s"
    scripts = {
        repo / ".venv" / "bin" / "python": f"""[[ "$1 $2" == "-m launcher.runtime.cds_build" ]] || exit 0
echo "{line}" >&{2 if cds_exit else 1}
exit {cds_exit}""",
        repo / ".venv" / "bin" / "hpc-hadoop": "echo hpc-hadoop 0.0",
        tmp_path / "bin" / "dpkg-query": "echo 'install ok installed'",
        tmp_path / "bin" / "mvn": "exit 0",
    }
    for path, body in scripts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    return repo, {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path)}


def test_an_archive_missing_fails_the_install_in_one_line(tmp_path: Path) -> None:
    """Issue 39: install.sh reported ``ready`` after a warning while three archives were missing; now cds_build's one
    line is the install's last, and its exit code non-zero."""
    repo, env = _checkout_with_standins(tmp_path, cds_exit=1)
    done = subprocess.run(["bash", str(repo / "install.sh")], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("hpc-hadoop cds_build: ") and "missing" in done.stderr
    assert "ready" not in done.stdout and "warning: no class-data-sharing" not in done.stderr
    repo, env = _checkout_with_standins(tmp_path / "ok", cds_exit=0)
    done = subprocess.run(["bash", str(repo / "install.sh")], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("install.sh: ready: hpc-hadoop 0.0, Hadoop 3.4.2")
