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
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

if TYPE_CHECKING:
    from tests.integration.test_shuffle import LocalRun

# The suite counts its cluster bring-ups, prints them at its end and fails a test that starts a cluster of its own
# without saying why (issue 38): every hook of tests/bringups.py. (Until 2026-12-02 only four of them were imported
# here, and the check of `own_cluster` ran in tests/unit/test_bringups.py's inner session alone.)
pytest_plugins = ["tests.bringups"]



@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n 2 --dist loadgroup``, pyproject.toml), every ``hadoop`` test goes to one worker, in
    order: one cluster at a time on the machine, and the module- and session-scoped clusters held where their tests
    run; the other worker runs the unit tier meanwhile."""
    for item in items:
        if item.get_closest_marker("hadoop"):
            item.add_marker(pytest.mark.xdist_group("hadoop"))


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


@pytest.fixture(scope="session")
def gluster() -> Path:
    """The GlusterFS test volume, FUSE-mounted at /mnt/hhpfs (tests/cluster/gluster-up.sh is idempotent), without
    the Slurm cluster."""
    done = subprocess.run(["bash", str(CLUSTER / "gluster-up.sh")], capture_output=True, text=True, timeout=600,
                          check=False)
    if done.returncode != 0:
        pytest.fail(f"gluster-up.sh failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return PFS


@pytest.fixture(scope="session")
def local_run(hadoop_runtime: Path, tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    """The session's one local-backend cluster of sorts, a reducer re-run and a failing step
    (:func:`tests.integration.test_shuffle.run_local_cluster`), read by test_shuffle.py and
    test_local_end_to_end.py. Here, not in either module: a fixture imported into two modules runs once in each."""
    from tests.integration.test_shuffle import run_local_cluster

    return run_local_cluster(tmp_path_factory)


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
    # A parametrized test's name has brackets ("test_x[a]"), which hpc-hadoop refuses in filesystem.root (the
    # NodeManager writes them URL-encoded, "%5B", in its local dirs): keep names to letters, digits, "_" and "-".
    return Path(tempfile.mkdtemp(prefix=re.sub(r"[^A-Za-z0-9_-]", "_", prefix) + "-", dir=base))


#: The stand-in of an OrangeFS volume behind its FUSE client (tests/standins/orangefs_fuse.py).
ORANGEFS_STANDIN = REPO / "tests" / "standins" / "orangefs_fuse.py"


def mounted(mountpoint: Path) -> bool:
    """True when ``mountpoint`` is a mount point of this process's mount namespace (``/proc/self/mountinfo``)."""
    escaped = str(mountpoint).replace("\\", "\\134").replace(" ", "\\040")
    return any(line.split()[4] == escaped for line in Path("/proc/self/mountinfo").read_text().splitlines())


@contextmanager
def orangefs_standin(directory: Path, *, xattrs: str = "store", servers: int = 4,
                     permission_cache: float | None = None, cache_refusals: bool = True) -> Iterator[Path]:
    """Mount the OrangeFS stand-in (FUSE, as root) on ``directory/mnt`` over ``directory/backing``; yields the
    mount point and unmounts it afterwards (the stand-in exits then). ``xattrs``: ``store`` or ``none``;
    ``permission_cache``: its ``--permission-cache`` (seconds a permission result answers every user; 0: the kernel
    checks), the stand-in's default when ``None``; ``cache_refusals`` False: ``--permission-cache-refusals no``."""
    backing, mountpoint = directory / "backing", directory / "mnt"
    backing.mkdir(parents=True)
    mountpoint.mkdir()
    log = directory / "orangefs-standin.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(ORANGEFS_STANDIN), str(backing), str(mountpoint),
                                 "--xattrs", xattrs, "--servers", str(servers),
                                 *([] if permission_cache is None else ["--permission-cache", str(permission_cache)]),
                                 *([] if cache_refusals else ["--permission-cache-refusals", "no"])],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not mounted(mountpoint):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the OrangeFS stand-in did not mount {mountpoint}: {log.read_text()[-2000:]}")
            time.sleep(0.05)
        yield mountpoint
    finally:
        if mounted(mountpoint):
            subprocess.run(["umount", str(mountpoint)], check=False, capture_output=True)
        if mounted(mountpoint):  # still busy: detach it, so that no later test finds it
            subprocess.run(["umount", "-l", str(mountpoint)], check=False, capture_output=True)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def hpc_hadoop(*args: str, timeout: float = 600, env: dict[str, str] | None = None,
               cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run the real ``hpc-hadoop`` command (this interpreter's entry point) and capture its output."""
    return subprocess.run([sys.executable, "-m", "launcher.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd, check=False)


def read_http_head(sock: socket.socket) -> bytes:
    """What ``sock`` sends up to the end of an HTTP head (its blank line; everything read when the peer closes
    first): the status line and headers, and whatever of the body came in the same reads."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


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


#: The Spark runtime ``install.sh`` installs (PyPI's pyspark).
SPARK_HOME = REPO / "spark-runtime" / "pyspark"


@pytest.fixture(scope="session")
def spark_runtime() -> Path:
    """The Spark runtime ``install.sh`` installs; fails (never skips) when it is missing."""
    if not (SPARK_HOME / "bin" / "spark-submit").is_file():
        pytest.fail(f"no Spark runtime at {SPARK_HOME}: run ./install.sh")
    return SPARK_HOME


@pytest.fixture(scope="session")
def gcide_corpus() -> Path:
    """The dict-gcide dictionary (Debian package): the wordcount example's real English corpus."""
    path = Path("/usr/share/dictd/gcide.dict.dz")
    if not path.is_file():
        pytest.fail("dict-gcide is not installed: apt-get install dict-gcide")
    return path


__all__ = ["CLUSTER", "ORANGEFS_STANDIN", "PFS", "REPO", "fresh_pfs_dir", "hpc_hadoop", "mounted", "only_run_dir",
           "orangefs_standin", "processes_of", "run_dirs", "run_report", "shutil"]
