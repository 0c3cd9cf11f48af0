"""Class-data-sharing archives for the daemons (launcher.cds): which flags a daemon gets, the classpath order
the JDK requires, and how an archive written at exit is published. The archives themselves are made and used
by the real daemons in every integration test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from launcher.cds import archive_key, archive_path, cds_flags, publish
from launcher.daemons import daemon_command, format_command
from launcher.plan import ClusterPlan
from launcher.runtime import HadoopRuntime
from launcher.spec import JobSpec


def test_first_run_writes_an_archive_then_uses_it(make_spec: Callable[..., JobSpec],
                                                  make_test_plan: Callable[..., ClusterPlan], tmp_path: Path) -> None:
    plan = make_test_plan(make_spec())
    node = plan.nodes[0]
    first = daemon_command(plan, node, "resourcemanager")
    assert first.archive is not None and first.archive_tmp is not None
    assert first.archive.is_relative_to(tmp_path / "cache" / "hpc-hadoop" / "cds")
    assert f"-XX:ArchiveClassesAtExit={first.archive_tmp}" in first.argv
    assert first.archive_tmp.name.startswith(f"resourcemanager.jsa.{node.name}.{plan.cluster_id}")
    first.archive_tmp.write_bytes(b"archive")  # what the JVM writes at exit
    assert publish(first.archive_tmp, first.archive, 143) and first.archive.read_bytes() == b"archive"
    again = daemon_command(plan, node, "resourcemanager")
    assert f"-XX:SharedArchiveFile={first.archive}" in again.argv and again.archive_tmp is None
    assert not any(a.startswith("-XX:ArchiveClassesAtExit") for a in again.argv)


def test_daemon_classpath_puts_jars_first_and_conf_last(make_spec: Callable[..., JobSpec],
                                                        make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec())
    argv = daemon_command(plan, plan.nodes[0], "nodemanager").argv
    entries = argv[argv.index("-cp") + 1].split(":")
    assert entries[0].endswith("/lib/*") and entries[-1] == str(plan.conf_dir)
    # log4j's configuration is named, since conf/ is no longer first on the classpath.
    assert f"-Dlog4j.configuration=file:{plan.conf_dir}/log4j.properties" in argv


def test_sharing_off_and_format_runs_make_no_archive(make_spec: Callable[..., JobSpec],
                                                     make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec(hadoop={"class_data_sharing": False}))
    command = daemon_command(plan, plan.nodes[0], "resourcemanager")
    assert command.archive is None and not any("Archive" in a for a in command.argv)
    plan = make_test_plan(make_spec(filesystem={"root": "/tmp/x", "mode": "hdfs"}))
    fmt = format_command(plan, plan.nodes[0])
    assert not any(a.startswith(("-XX:ArchiveClassesAtExit", "-XX:SharedArchiveFile")) for a in fmt.argv)


def test_unclean_exit_drops_the_archive_and_first_writer_wins(tmp_path: Path) -> None:
    archive = tmp_path / "rm.jsa"
    killed = tmp_path / "rm.jsa.n1.x.tmp"
    killed.write_bytes(b"partial")
    assert not publish(killed, archive, -9) and not killed.exists() and not archive.exists()
    for node in ("n1", "n2"):
        (tmp_path / f"rm.jsa.{node}.x.tmp").write_bytes(node.encode())
    assert publish(tmp_path / "rm.jsa.n1.x.tmp", archive, 0)
    assert not publish(tmp_path / "rm.jsa.n2.x.tmp", archive, 0)
    assert archive.read_bytes() == b"n1" and not (tmp_path / "rm.jsa.n2.x.tmp").exists()


def test_archive_key_follows_the_jars_and_the_flags(fake_runtime: HadoopRuntime) -> None:
    key = archive_key(fake_runtime)
    assert archive_key(fake_runtime) == key and archive_key(fake_runtime, ("--add-opens=x",)) != key
    fake_runtime.examples_jar.write_bytes(b"a new build")
    assert archive_key(fake_runtime) != key
    assert archive_path(fake_runtime, "nodemanager").name == "nodemanager.jsa"


def test_old_jdks_get_no_flags(fake_runtime: HadoopRuntime) -> None:
    old = HadoopRuntime(**{**fake_runtime.__dict__, "java_version": 11})
    assert cds_flags(old, "resourcemanager", "n1", "c")[0] == []
