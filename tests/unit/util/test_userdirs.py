"""Every per-user directory from one module (launcher/userdirs.py, issue 26 item 4): the paths of the releases
before it, on Linux, so that existing users' caches, configs and indexes are still found."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from launcher.config import load as spec
from launcher.lifecycle import report
from launcher.lifecycle.clusters import index
from launcher.runtime import cds
from launcher.util import userdirs


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory and no XDG_*, HPC_HADOOP_CONFIG or TMPDIR."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HPC_HADOOP_CONFIG", "TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_defaults_are_the_paths_of_before(home: Path) -> None:
    assert cds.cache_root() == home / ".cache" / "hpc-hadoop" / "cds"
    assert spec.user_config_path() == home / ".config" / "hpc-hadoop" / "config.yaml"
    assert index.state_dir() == home / ".local" / "state" / "hpc-hadoop" / "clusters"
    user = getpass.getuser()
    assert report.local_record_paths("c-1") == [Path(f"/var/tmp/hpc-hadoop-{user}/c-1.run.json"),
                                                Path(f"/tmp/hpc-hadoop-{user}/c-1.run.json")]
    assert userdirs.node_work_root("alice") == Path("/tmp/hpc-hadoop-alice")
    assert not (home / ".cache").exists() and not (home / ".config").exists()  # nothing is made by asking


def test_xdg_variables_are_honoured_when_absolute(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    monkeypatch.setenv("XDG_STATE_HOME", "/x/state")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/x/config")  # ignored before issue 26: ~/.config always
    assert cds.cache_root() == Path("/x/cache/hpc-hadoop/cds")
    assert index.state_dir() == Path("/x/state/hpc-hadoop/clusters")
    assert spec.user_config_path() == Path("/x/config/hpc-hadoop/config.yaml")
    monkeypatch.setenv("HPC_HADOOP_CONFIG", "/y/mine.yaml")
    assert spec.user_config_path() == Path("/y/mine.yaml")
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty: the default, as before
    assert cds.cache_root() == home / ".cache" / "hpc-hadoop" / "cds"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG rule: a relative path is ignored
    assert userdirs.cache_dir() == home / ".cache" / "hpc-hadoop"


def test_node_local_directories_of_a_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", "/local/job-7")
    assert userdirs.node_work_root("bob") == Path("/local/job-7/hpc-hadoop-bob")
    monkeypatch.setenv("TMPDIR", "relative")
    assert userdirs.node_work_root("bob") == Path("/tmp/hpc-hadoop-bob")
    assert userdirs.node_record_dir("bob") == Path("/var/tmp/hpc-hadoop-bob")
    assert userdirs.per_user("/dev/shm", "bob") == Path("/dev/shm/hpc-hadoop-bob")
