"""The code base stays ``ruff`` clean (rules in pyproject.toml): the check CI would otherwise forget."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_check_is_clean() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "launcher", "benchmarks", "tests",
                           "setup.py"], capture_output=True, text=True, cwd=REPO, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
