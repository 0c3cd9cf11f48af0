"""Tests of launcher/util/errors.py."""

from __future__ import annotations

import errno
from pathlib import Path

from launcher.util.errors import WalltimeExpired

# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


def test_walltime_expired_is_not_a_timeout_error() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    stalled_mount = OSError(errno.ETIMEDOUT, "Connection timed out")
    assert isinstance(stalled_mount, TimeoutError)
    assert not isinstance(stalled_mount, WalltimeExpired)
    assert not issubclass(WalltimeExpired, TimeoutError)
    assert not issubclass(WalltimeExpired, OSError)


def test_runner_and_jobs_use_walltime_expired_not_timeout_error() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    root = Path(__file__).resolve().parents[3] / "launcher"
    for path in root.rglob("*.py"):
        code = [line for line in path.read_text().splitlines() if not line.lstrip().startswith(("#", "``", "Our"))]
        assert not any("TimeoutError" in line and "``" not in line for line in code), path
