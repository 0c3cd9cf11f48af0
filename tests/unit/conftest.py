"""Fixtures of the unit tests: fake allocations, a fake Hadoop runtime, specs and plans.

Nothing here starts a daemon or touches the network; a plan's ports are only checked with ``bind``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from launcher import filesystems
from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.filesystems import decide
from launcher.plan.cluster_plan import ClusterPlan, make_plan
from launcher.runtime.hadoop import BUILT_RUNTIME, HadoopRuntime
from launcher.schedulers.base import Allocation, Node
from launcher.util import safedirs
from launcher.util.errors import UserError
from launcher.util.units import GiB

BUILD_HINT = "run `mvn -B -q -f hadoop-fs-shim/pom.xml package` to build it"


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep the developer's own config, Hadoop installs and batch allocation out of every test, and give each test
    the umask it started with (making a cluster directory sets 077 for the process:
    :func:`launcher.util.safedirs.private_umask`)."""
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(tmp_path / "no-user-config.yaml"))
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(tmp_path / "no-site-dir"))  # the site layer (launcher.config.site)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the user config that HPC_HADOOP_CONFIG hides
    # the index of clusters (launcher.lifecycle.clusters.index)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # class-data-sharing archives (launcher.runtime.cds)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the user prefix of runtimes (launcher.util.resources)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "node-tmp"))  # node-local dirs: working dirs, the realm's own
    for name in ("HPC_HADOOP_HOME", "HADOOP_HOME", "HADOOP_CONF_DIR", "HPC_HADOOP_SHARE", "SPARK_HOME",
                 "SLURM_JOB_ID", "PBS_JOBID", "JOB_ID", "PE_HOSTFILE"):
        monkeypatch.delenv(name, raising=False)
    umask = os.umask(0o022)
    os.umask(umask)
    monkeypatch.setattr(safedirs, "_USER_UMASK", None)
    yield
    os.umask(umask)


def _write_yaml(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def write_yaml() -> Callable[[Path, Any], Path]:
    """``write_yaml(path, data)``: write ``data`` as YAML (parents created) and return the path."""
    return _write_yaml


@pytest.fixture
def fake_runtime(tmp_path: Path) -> HadoopRuntime:
    """A runtime whose jars are real (empty) files in ``tmp_path``; nothing runs it."""
    home = tmp_path / "hadoop"
    lib = home / "lib"
    lib.mkdir(parents=True)
    jars = {}
    for key, name in (("examples_jar", "hadoop-mapreduce-examples-3.4.2.jar"),
                      ("tests_jar", "hadoop-mapreduce-client-jobclient-3.4.2-tests.jar"),
                      ("streaming_jar", "hadoop-streaming-3.4.2.jar")):
        jars[key] = lib / name
        jars[key].write_bytes(b"")
    return HadoopRuntime(home=home, version="3.4.2", classpath=(f"{lib}/*", str(home / "extra-classpath")),
                         java_home=tmp_path / "jdk", java_version=17, **jars)


def _allocation(nodes: int = 3, *, cores: int = 8, memory: int = 64 * GiB, scheduler: str = "slurm") -> Allocation:
    return Allocation(scheduler=scheduler, job_id=None if scheduler == "local" else "4242",
                      nodes=tuple(Node(f"n{i}", f"10.0.0.{i}") for i in range(1, nodes + 1)),
                      cores_per_node=cores, memory_per_node=memory, walltime=3600.0, start_time=1_700_000_000.0,
                      fanout="local" if scheduler == "local" else "srun")


@pytest.fixture
def make_allocation() -> Callable[..., Allocation]:
    """``make_allocation(nodes=3, cores=8, memory=64 GiB, scheduler="slurm")``: nodes n1..nN at 10.0.0.1..N."""
    return _allocation


@pytest.fixture
def alloc3() -> Allocation:
    """Three Slurm nodes with 8 cores and 64 GiB each."""
    return _allocation(3)


@pytest.fixture
def pfs_root(tmp_path: Path) -> Path:
    """An empty directory standing in for the parallel filesystem (``filesystem.root``)."""
    root = tmp_path / "pfs"
    root.mkdir()
    return root


@pytest.fixture
def make_spec(pfs_root: Path) -> Callable[..., JobSpec]:
    """Build a JobSpec from job-file fields (defaults: a 3-node Slurm job with one `pi` step)."""

    def build(**fields: Any) -> JobSpec:
        data: dict[str, Any] = {"name": "t", "scheduler": "slurm", "nodes": 3,
                                "filesystem": {"root": str(pfs_root)}, "steps": [{"example": "pi", "args": [2, 10]}]}
        data.update(fields)
        spec, _ = load_spec(None, data=data)
        return spec

    return build


@pytest.fixture
def make_test_plan(tmp_path: Path, fake_runtime: HadoopRuntime, alloc3: Allocation) -> Callable[..., ClusterPlan]:
    """``make_plan`` on the 3-node allocation and the fake runtime, with a run dir in ``tmp_path``; the filesystem
    decision is made for the spec's root, or for ``tmp_path`` when the root does not expand here (a preset's
    ``$SCRATCH``)."""

    def build(spec: JobSpec, alloc: Allocation | None = None, **kwargs: Any) -> ClusterPlan:
        kwargs.setdefault("cluster_id", "t-20240101-000000-abcd")
        kwargs.setdefault("run_dir", tmp_path / "pfs" / "me" / "hpc-hadoop" / kwargs["cluster_id"])
        if "filesystem" not in kwargs:
            try:
                kwargs["filesystem"] = decide(spec.filesystem)
            except UserError:
                kwargs["filesystem"] = decide(spec.filesystem.model_copy(update={"root": str(tmp_path)}))
        return make_plan(spec, alloc or alloc3, fake_runtime, **kwargs)

    return build


@pytest.fixture
def built_runtime() -> Path:
    """The Hadoop runtime built by Maven; fails (never skips) when it is missing."""
    if not (BUILT_RUNTIME / "lib").is_dir():
        pytest.fail(f"the Hadoop runtime is missing at {BUILT_RUNTIME}: {BUILD_HINT}")
    return BUILT_RUNTIME


@pytest.fixture
def project(tmp_path: Path, write_yaml: Callable[..., Path]) -> Path:
    """Issue 11: ``proj/job.yaml`` with relative paths, the jar and the data they name, next to it."""
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


#: The stand-ins of commands that cannot run here (``lfs``, ``pvfs2-*``, PBS's): tests/standins/.
STANDINS = Path(__file__).resolve().parents[1] / "standins"


@pytest.fixture
def lfs_standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-in ``lfs`` first on PATH (Lustre cannot run on this kernel); returns its state directory, where it
    logs its calls (``calls.jsonl``)."""
    state = tmp_path / "standin-state"
    state.mkdir()
    monkeypatch.setenv("PATH", f"{STANDINS}:{os.environ['PATH']}")
    monkeypatch.setenv("HPC_STANDIN_DIR", str(state))
    return state


@pytest.fixture
def statvfs_gone(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``statvfs_gone(mount)``: from then on ``statvfs`` of ``mount`` fails with ``ENOTCONN`` as on a FUSE mount
    whose client died (issue 25); any other path answers."""
    real = os.statvfs

    def make_gone(mount: str) -> None:
        def statvfs(path: str | Path) -> os.statvfs_result:
            if str(path) == mount:
                raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), str(path))
            return real(path)

        monkeypatch.setattr(filesystems.os, "statvfs", statvfs)

    return make_gone


@pytest.fixture
def spark_home(tmp_path: Path) -> Path:
    """A Spark install as PyPI's pyspark lays it out, with our examples jar beside it (files only: nothing runs)."""
    home = tmp_path / "spark-runtime" / "pyspark"
    for name in ("bin/spark-submit", "jars/spark-core_2.13-4.1.1.jar", "python/lib/pyspark.zip",
                 "python/lib/py4j-0.10.9.9-src.zip"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    (home.parent / "hpc-hadoop-spark-examples.jar").write_bytes(b"")
    return home
