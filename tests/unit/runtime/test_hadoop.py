"""Locating the Hadoop runtime (launcher/runtime/hadoop.py): the shim jar on every classpath."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.runtime import hadoop as runtime


def _site_install(root: Path) -> Path:
    """A site's standard Hadoop layout (share/hadoop/...) with empty jars."""
    share = root / "share" / "hadoop"
    for sub, name in (("common", "hadoop-common-3.4.2.jar"), ("mapreduce", "hadoop-mapreduce-examples-3.4.2.jar"),
                      ("mapreduce", "hadoop-mapreduce-client-jobclient-3.4.2-tests.jar"),
                      ("tools/lib", "hadoop-streaming-3.4.2.jar"), ("yarn", "hadoop-yarn-api-3.4.2.jar")):
        (share / sub).mkdir(parents=True, exist_ok=True)
        (share / sub / name).write_bytes(b"")
    return root


@pytest.fixture
def fake_jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    (jdk / "bin" / "java").write_text("#!/bin/sh\n")
    monkeypatch.setattr(runtime, "java_major_version", lambda home: 17)
    return jdk


def test_site_install_gets_the_built_shim_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              fake_jdk: Path) -> None:
    built = tmp_path / "shim" / "target" / "hadoop-runtime"
    (built / "lib").mkdir(parents=True)
    jar = built / "lib" / "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar"
    jar.write_bytes(b"")
    monkeypatch.setattr(runtime, "BUILT_RUNTIME", built)
    found = runtime.discover(str(_site_install(tmp_path / "hadoop")), str(fake_jdk))
    assert found.classpath[-1] == str(jar)  # fs.file.impl / fs.pfs.impl classes for daemons and containers
    assert runtime.shim_jar() == jar


def test_shim_jar_next_to_the_runtime_and_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "target" / "hadoop-runtime"
    monkeypatch.setattr(runtime, "BUILT_RUNTIME", built)
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(tmp_path / "share"))  # no package data: no shipped jar either
    assert runtime.shim_jar() is None
    (tmp_path / "target").mkdir()
    jar = tmp_path / "target" / "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar"
    jar.write_bytes(b"")
    (tmp_path / "target" / "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT-sources.jar").write_bytes(b"")
    assert runtime.shim_jar() == jar


def test_our_runtime_has_the_shim_in_lib(tmp_path: Path, fake_jdk: Path) -> None:
    home = tmp_path / "hadoop-runtime"
    (home / "lib").mkdir(parents=True)
    for name in ("hadoop-mapreduce-examples-3.4.2.jar", "hadoop-mapreduce-client-jobclient-3.4.2-tests.jar",
                 "hadoop-streaming-3.4.2.jar", "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar"):
        (home / "lib" / name).write_bytes(b"")
    (home / "VERSION").write_text("3.4.2\n")
    found = runtime.discover(str(home), str(fake_jdk))
    assert found.classpath == (f"{home / 'lib'}/*",)  # the glob covers the shim jar
