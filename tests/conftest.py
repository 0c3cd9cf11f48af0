"""Fixtures shared by every test layer.

Integration tests run the real thing: real Hadoop 3.4.2 daemons from the runtime that Maven assembles in
``hadoop-fs-shim/target/hadoop-runtime`` (``.ci/run`` builds it), real files, real processes.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parent.parent
RUNTIME = REPO / "hadoop-fs-shim" / "target" / "hadoop-runtime"
#: The real test cluster's scripts (tests/cluster/README.md) and its GlusterFS FUSE mount.
CLUSTER = REPO / "tests" / "cluster"
PFS = Path("/mnt/hhpfs")


@pytest.fixture(scope="session")
def hadoop_runtime() -> Path:
    """The assembled Hadoop runtime; fails (never skips) with how to build it when it is missing."""
    if not (RUNTIME / "lib").is_dir():
        pytest.fail(f"no Hadoop runtime at {RUNTIME}: run `mvn -B -q -f hadoop-fs-shim/pom.xml package`")
    return RUNTIME


@pytest.fixture(scope="session")
def slurm_cluster() -> list[str]:
    """Start (or re-verify) the 3-node Slurm cluster and the GlusterFS mount; returns the node names.

    Shared by every test that uses the real Slurm test cluster (test_slurm.py, test_bench.py...).
    """
    for script, args in (("slurm-up.sh", ["3"]), ("gluster-up.sh", [])):
        proc = subprocess.run(["bash", str(CLUSTER / script), *args], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.fail(f"{script} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return ["n1", "n2", "n3"]


@pytest.fixture
def pfs_root(tmp_path: Path) -> Path:
    """A fresh directory standing in for the parallel filesystem (the local backend's ``filesystem.root``)."""
    root = tmp_path / "pfs"
    root.mkdir()
    return root


def fresh_pfs_dir(prefix: str) -> Path:
    """A new, empty directory under ``/mnt/hhpfs/tests/`` named ``<prefix>-<random>``.

    The GlusterFS volume outlives a test run (CI runs again on the same machine), so a name built from the
    test's name or the time of day can already exist; ``mkdtemp`` never reuses one. Mode 0700 is fine:
    the Slurm jobs of the tests run as the same user.
    """
    base = PFS / "tests"
    base.mkdir(parents=True, exist_ok=True)
    # A parametrized test's name has brackets ("test_x[a]"), which the NodeManager writes URL-encoded
    # ("test_x%5Ba%5D") in its local dirs: keep names to letters, digits, "_" and "-".
    return Path(tempfile.mkdtemp(prefix=re.sub(r"[^A-Za-z0-9_-]", "_", prefix) + "-", dir=base))


def hpc_hadoop(*args: str, timeout: float = 600, env: dict[str, str] | None = None,
               cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run the real ``hpc-hadoop`` command (this interpreter's entry point) and capture its output."""
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd, check=False)


def run_dirs(root: Path) -> list[Path]:
    """Cluster directories created under a filesystem root (``<root>/<user>/hpc-hadoop/*``)."""
    return sorted((root / getpass.getuser() / "hpc-hadoop").glob("*"))


def only_run_dir(root: Path) -> Path:
    """The single cluster directory under ``root`` (asserts there is exactly one)."""
    dirs = run_dirs(root)
    assert len(dirs) == 1, f"expected one cluster directory under {root}, found {dirs}"
    return dirs[0]


def run_report(run_dir: Path) -> dict:
    """``run.json`` of a cluster directory."""
    return json.loads((run_dir / "run.json").read_text())


def processes_of(run_dir: Path) -> list[str]:
    """Command lines of live processes that belong to the cluster in ``run_dir`` (daemons, containers, agents)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if proc.info["status"] != psutil.STATUS_ZOMBIE and any(str(run_dir) in part for part in cmdline):
                found.append(" ".join(cmdline)[:200])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.fixture(scope="session")
def gcide_corpus() -> Path:
    """The dict-gcide dictionary (Debian package): the wordcount example's real English corpus."""
    path = Path("/usr/share/dictd/gcide.dict.dz")
    if not path.is_file():
        pytest.fail("dict-gcide is not installed: apt-get install dict-gcide")
    return path


__all__ = ["CLUSTER", "PFS", "REPO", "fresh_pfs_dir", "hpc_hadoop", "only_run_dir", "processes_of", "run_dirs",
           "run_report", "shutil"]
