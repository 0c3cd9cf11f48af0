"""Ordinary (non-root) users for the tests: a site's users are never root, and root hides permission bugs.

``make_user(name)`` creates the account once per machine (``useradd``; the suite runs as root in CI) and
returns a :class:`TestUser` that runs commands as that user with a login-like environment: its own
``HOME``, ``PATH=/usr/local/bin:/usr/bin:/bin`` and nothing of root's environment. ``hpc-hadoop`` runs from
the repository's ``.venv``, whose interpreter is Debian's ``/usr/bin/python3`` (``install.sh``): every user
can run it, as on a site where it is installed once for all users.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

#: Where the users' "shared filesystem" directories of one session are made (mode 0755, like a scratch root).
USERS_BASE = Path("/tmp")
#: Variables of the test process that say where hpc-hadoop's code and data are, passed on to the users' commands when
#: set: a checkout other than the one the ``.venv``'s editable install maps (a git worktree) runs its own code then.
PASSED_ON = ("PYTHONPATH", "HPC_HADOOP_SHARE")


@dataclass(frozen=True)
class TestUser:
    """A non-root account: ``name``, ``uid``, ``gid``, ``home``."""

    __test__ = False  # not a pytest test class

    name: str
    uid: int
    gid: int
    home: Path

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A login-like environment of this user (nothing inherited from the test process but :data:`PASSED_ON`)."""
        return {**{name: os.environ[name] for name in PASSED_ON if name in os.environ},
                "HOME": str(self.home), "USER": self.name, "LOGNAME": self.name, "LANG": "C.UTF-8",
                "PATH": "/usr/local/bin:/usr/bin:/bin", **(extra or {})}

    def run(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` as this user (its uid, gid and no supplementary groups); output captured."""
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.env(env),
                              cwd=cwd or self.home, user=self.uid, group=self.gid, extra_groups=[], check=False)

    def popen(self, argv: list[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start ``argv`` as this user in the background (output captured)."""
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env(env), cwd=self.home, user=self.uid, group=self.gid, extra_groups=[])

    def hpc_hadoop(self, *args: str, env: dict[str, str] | None = None,
                   timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """The real ``hpc-hadoop`` command, as this user."""
        return self.run([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", *args], env=env,
                        timeout=timeout)

    def start_cluster(self, home: Path, name: str, job: dict[str, Any], env: dict[str, str]) -> Path:
        """Write ``job`` (a job file's mapping) to ``home/<name>.yaml``, this user's, mode 0600, and run
        ``hpc-hadoop start`` on it as this user with ``env``; returns the cluster's run directory (the one directory
        in ``home/hpc-hadoop``: ``home`` is the job's ``filesystem.root`` for this user).

        Raises:
            AssertionError: ``start`` exited non-zero (the tail of its output in the message).
        """
        path = home / f"{name}.yaml"
        path.write_text(yaml.safe_dump(job))
        self.own(path, 0o600)
        started = self.hpc_hadoop("start", str(path), env=env, timeout=300)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        (run_dir,) = (home / "hpc-hadoop").iterdir()
        return run_dir

    def own(self, path: Path, mode: int = 0o700) -> Path:
        """Give ``path`` (made by root) to this user, with ``mode``; returns it."""
        os.chown(path, self.uid, self.gid)
        path.chmod(mode)
        return path


def make_user(name: str) -> TestUser:
    """The account ``name``, created (with a home directory) if this machine does not have it yet; makes the
    repository traversable (``o+x`` on it and its parents, nothing readable added) so the account can run
    ``hpc-hadoop`` from it.

    Raises:
        subprocess.CalledProcessError: ``useradd`` failed (the suite must run as root to create users).
    """
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True,
                       capture_output=True)
        entry = pwd.getpwnam(name)
    _traversable(REPO)
    return TestUser(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


def _traversable(path: Path) -> None:
    """Add ``o+x`` (search, not read) to ``path`` and each parent that lacks it."""
    for part in (path, *path.parents):
        mode = part.stat().st_mode
        if not mode & stat.S_IXOTH:
            part.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


def shared_base(prefix: str) -> Path:
    """A new directory standing for a scratch filesystem every user can enter (mode 0755), under ``/tmp``."""
    base = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=USERS_BASE))
    base.chmod(0o755)
    return base


@contextlib.contextmanager
def sticky_dir(prefix: str, name: str) -> Iterator[Path]:
    """``<shared_base(prefix)>/<name>``, mode 1777: a root every user may make a directory in (``/tmp``, a scratch
    filesystem, a node-local disk); removed with its base afterwards."""
    base = shared_base(prefix)
    root = base / name
    root.mkdir()
    root.chmod(0o1777)
    try:
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def user_dir(base: Path, user: TestUser) -> Path:
    """``base/<user>``: the user's own directory on the scratch root (0700), as a site pre-creates them."""
    path = base / user.name
    path.mkdir()
    return user.own(path)


__all__ = ["TestUser", "make_user", "shared_base", "sticky_dir", "user_dir"]
