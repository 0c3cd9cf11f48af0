"""``install.sh`` builds ``.venv`` from an interpreter every user of a site install can run (issue 17 item 13).

Runs the real script with ``--print-python``, which only chooses the interpreter (no apt, pip or Maven).
"""

from __future__ import annotations

import os
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
