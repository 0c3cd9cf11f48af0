"""Class-data-sharing archives (launcher.runtime.cds) of the daemons, the job clients and the ApplicationMaster: which
flags each gets, the classpath order the JDK requires, and how an archive written at exit is published (the
AM's after the real JDK has mapped it). The archives themselves are made and used by the real daemons and jobs
in every integration test."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.config import render_config
from launcher.render.daemons import daemon_command, format_command
from launcher.runtime.cds import (
    am_archive_option,
    am_archive_path,
    archive_key,
    archive_path,
    cds_flags,
    client_archive_flags,
    jar_entries,
    maps,
    publish,
    publish_am_archives,
    publish_client_archive,
    set_aside,
    site_archive_path,
    site_root,
)
from launcher.runtime.hadoop import HadoopRuntime


def _real_archive(runtime: HadoopRuntime, path: Path) -> Path:
    """Write a real (dynamic) archive at ``path``: the classes ``java -version`` loads, with the runtime's jars as
    classpath, as the JDK writes it at exit."""
    done = subprocess.run([str(runtime.java), f"-XX:ArchiveClassesAtExit={path}", "-cp",
                           ":".join(jar_entries(runtime)), "-version"], capture_output=True, check=False)
    assert done.returncode == 0 and path.stat().st_size > 0, done.stderr
    return path


def test_first_run_writes_an_archive_then_uses_it(make_spec: Callable[..., JobSpec],
                                                  make_test_plan: Callable[..., ClusterPlan], tmp_path: Path,
                                                  fake_runtime: HadoopRuntime) -> None:
    plan = make_test_plan(make_spec())
    node = plan.nodes[0]
    first = daemon_command(plan, node, "resourcemanager")
    assert first.archive is not None and first.archive_tmp is not None
    assert first.archive.is_relative_to(tmp_path / "cache" / "hpc-hadoop" / "cds")
    assert f"-XX:ArchiveClassesAtExit={first.archive_tmp}" in first.argv
    assert first.archive_tmp.name.startswith(f"resourcemanager.jsa.{node.name}.{plan.cluster_id}")
    runtime = _real_java(fake_runtime)
    _real_archive(runtime, first.archive_tmp)  # what the JVM writes at exit
    assert publish(first.archive_tmp, first.archive, 143, java=runtime.java, classpath=JARS(runtime))
    again = daemon_command(plan, node, "resourcemanager")
    assert f"-XX:SharedArchiveFile={first.archive}" in again.argv and again.archive_tmp is None
    assert again.archive == first.archive
    assert not any(a.startswith("-XX:ArchiveClassesAtExit") for a in again.argv)


def JARS(runtime: HadoopRuntime) -> str:  # noqa: N802 - reads as the classpath it is
    """The runtime's jars as a classpath (what the agent checks an archive with)."""
    return ":".join(jar_entries(runtime))


def test_an_archive_cut_short_is_never_published(fake_runtime: HadoopRuntime, tmp_path: Path) -> None:
    """Issue 25: a ResourceManager archive published at 126,976 bytes (a run interrupted while the JVM wrote it, exit
    143 counted as clean) made every later ResourceManager of that user die with SIGSEGV in
    ``MetaspaceShared::map_archive``. The real JDK must map an archive before it is published."""
    runtime = _real_java(fake_runtime)
    good = _real_archive(runtime, tmp_path / "whole.jsa")
    cut = tmp_path / "rm.jsa.n1.x.tmp"
    cut.write_bytes(good.read_bytes()[:good.stat().st_size // 3])
    assert not maps(runtime.java, cut, JARS(runtime)) and maps(runtime.java, good, JARS(runtime))
    archive = tmp_path / "rm.jsa"
    assert not publish(cut, archive, 143, java=runtime.java, classpath=JARS(runtime))
    assert not archive.exists() and not cut.exists()
    assert not list(tmp_path.glob("hs_err*")) and not list(Path.cwd().glob("hs_err_pid*"))  # the check's crash report


def test_a_site_archive_wins_and_one_a_daemon_died_on_is_skipped(fake_runtime: HadoopRuntime, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """install.sh's archives (``<runtime>/cds/<key>/``) serve every user; a user's own cache is the fallback, and
    an archive a daemon died on is set aside: the user's renamed (never deleted), the site's skipped from then on."""
    flags = ("--add-opens=x",)
    site = site_archive_path(fake_runtime, "resourcemanager", flags)
    assert site is not None and site.parent.parent == fake_runtime.home / "cds"
    site.parent.mkdir(parents=True)
    site.write_bytes(b"site")
    used, tmp, archive = cds_flags(fake_runtime, "resourcemanager", "n1", "c", flags)
    assert used == [f"-XX:SharedArchiveFile={site}"] and tmp is None and archive == site
    marker = set_aside(site)
    assert marker is not None and marker.is_relative_to(tmp_path / "cache") and site.read_bytes() == b"site"
    used, tmp, archive = cds_flags(fake_runtime, "resourcemanager", "n1", "c", flags)
    assert tmp is not None and archive == archive_path(fake_runtime, "resourcemanager", flags)
    archive.write_bytes(b"mine")
    used, tmp, _ = cds_flags(fake_runtime, "resourcemanager", "n1", "c", flags)
    assert used == [f"-XX:SharedArchiveFile={archive}"] and tmp is None
    moved = set_aside(archive)
    assert moved is not None and moved.read_bytes() == b"mine" and not archive.exists()
    assert moved.name.startswith("resourcemanager.jsa.refused-")
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", "")  # no site archives (a test of a user's first run)
    assert site_root(fake_runtime) is None
    assert cds_flags(fake_runtime, "nodemanager", "n1", "c")[1] is not None


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


def test_unclean_exit_drops_the_archive_and_first_writer_wins(fake_runtime: HadoopRuntime, tmp_path: Path) -> None:
    runtime = _real_java(fake_runtime)
    archive = tmp_path / "rm.jsa"
    killed = _real_archive(runtime, tmp_path / "rm.jsa.n1.x.tmp")
    assert not publish(killed, archive, -9, java=runtime.java, classpath=JARS(runtime))
    assert not killed.exists() and not archive.exists()
    for node in ("n1", "n2"):
        _real_archive(runtime, tmp_path / f"rm.jsa.{node}.x.tmp")
    first = (tmp_path / "rm.jsa.n1.x.tmp").read_bytes()
    assert publish(tmp_path / "rm.jsa.n1.x.tmp", archive, 0, java=runtime.java, classpath=JARS(runtime))
    assert not publish(tmp_path / "rm.jsa.n2.x.tmp", archive, 0, java=runtime.java, classpath=JARS(runtime))
    assert archive.read_bytes() == first and not (tmp_path / "rm.jsa.n2.x.tmp").exists()


def test_archive_key_follows_the_jars_and_the_flags(fake_runtime: HadoopRuntime) -> None:
    key = archive_key(fake_runtime)
    assert archive_key(fake_runtime) == key and archive_key(fake_runtime, ("--add-opens=x",)) != key
    fake_runtime.examples_jar.write_bytes(b"a new build")
    assert archive_key(fake_runtime) != key
    assert archive_path(fake_runtime, "nodemanager").name == "nodemanager.jsa"


def test_old_jdks_get_no_flags(fake_runtime: HadoopRuntime) -> None:
    old = HadoopRuntime(**{**fake_runtime.__dict__, "java_version": 11})
    assert cds_flags(old, "resourcemanager", "n1", "c")[0] == []
    # Never an empty hpc.am.cds: Hadoop would leave ${hpc.am.cds} in the AM's command, and bash fail on it.
    assert am_archive_option(old) == "-Xshare:auto"


def test_mapred_site_never_leaves_the_am_option_empty(make_spec: Callable[..., JobSpec],
                                                      make_test_plan: Callable[..., ClusterPlan]) -> None:
    """A job submitted by another client (``hpc-hadoop exec -- hadoop jar``, or with class_data_sharing off) gets
    the default, a no-op JVM option, in place of ``${hpc.am.cds}``."""
    plan = make_test_plan(make_spec(hadoop={"class_data_sharing": False}))
    site = ElementTree.fromstring(render_config(plan)["mapred-site.xml"])
    values = {p.findtext("name"): p.findtext("value") for p in site.iter("property")}
    assert values["yarn.app.mapreduce.am.command-opts"].endswith(" ${hpc.am.cds}")
    assert values["hpc.am.cds"] == "-Xshare:auto"


def _real_java(fake_runtime: HadoopRuntime) -> HadoopRuntime:
    """The fake runtime run by this machine's real JDK 17 (its jars are empty files: only the JDK's classes load)."""
    java_home = Path(subprocess.run(["readlink", "-f", shutil.which("java") or "java"], capture_output=True,
                                    text=True, check=True).stdout.strip()).parent.parent
    return HadoopRuntime(**{**fake_runtime.__dict__, "java_home": java_home})


def test_a_job_client_writes_its_archive_then_uses_it(fake_runtime: HadoopRuntime, tmp_path: Path) -> None:
    runtime = _real_java(fake_runtime)
    argv = [str(runtime.java), "-Xmx512m", "-XX:+UseSerialGC", "-cp", f"{fake_runtime.home}/lib/*:/conf",
            "org.apache.hadoop.util.RunJar", "x.jar"]
    (first,) = client_archive_flags(fake_runtime, argv)
    assert first.startswith("-XX:ArchiveClassesAtExit=") and first.endswith(".tmp")
    tmp = Path(first.split("=", 1)[1])
    assert tmp.is_relative_to(tmp_path / "cache" / "hpc-hadoop" / "cds") and tmp.name.startswith("client-")
    _real_archive(runtime, tmp)  # what the JVM writes at exit
    assert publish_client_archive([*argv[:1], first, *argv[1:]], 0)
    (again,) = client_archive_flags(fake_runtime, argv)
    assert again == f"-XX:SharedArchiveFile={tmp.with_name(tmp.name.rsplit('.', 2)[0])}"
    # Another main class, or a rebuilt job jar on the classpath, is another archive.
    other = client_archive_flags(fake_runtime, [*argv[:-2], "org.apache.hadoop.fs.TestDFSIO", "-write"])
    assert other[0].startswith("-XX:ArchiveClassesAtExit=")
    jar = tmp_path / "job.jar"
    jar.write_bytes(b"v1")
    with_jar = [*argv[:4], f"{argv[4]}:{jar}", *argv[5:]]
    _real_archive(runtime, Path(client_archive_flags(fake_runtime, with_jar)[0].split("=", 1)[1]))
    (before,) = [f for f in tmp.parent.glob("client-*.tmp")]
    assert publish_client_archive(with_jar[:1] + [f"-XX:ArchiveClassesAtExit={before}"] + with_jar[1:], 0)
    assert client_archive_flags(fake_runtime, with_jar)[0].startswith("-XX:SharedArchiveFile=")
    jar.write_bytes(b"version 2")
    assert client_archive_flags(fake_runtime, with_jar)[0].startswith("-XX:ArchiveClassesAtExit=")


def test_a_failed_job_client_leaves_no_archive(fake_runtime: HadoopRuntime) -> None:
    argv = [str(fake_runtime.java), "-cp", f"{fake_runtime.home}/lib/*", "Main"]
    (flag,) = client_archive_flags(fake_runtime, argv)
    tmp = Path(flag.split("=", 1)[1])
    tmp.write_bytes(b"written at exit")
    assert not publish_client_archive([argv[0], flag, *argv[1:]], 1) and not tmp.exists()
    assert client_archive_flags(fake_runtime, [str(fake_runtime.java), "-version"]) == []


def test_the_first_application_master_writes_the_archive_and_later_ones_use_it(fake_runtime: HadoopRuntime) -> None:
    """One AM is asked to write the archive (the others in the next 10 minutes start as before); a file the JDK
    cannot map (an AM killed while writing) is dropped; a real one is published at the next submission."""
    runtime = _real_java(fake_runtime)
    jars = ":".join(jar_entries(runtime))
    first = am_archive_option(runtime)
    assert first.startswith(f"-cp {jars}:$CLASSPATH -XX:ArchiveClassesAtExit=")
    assert am_archive_option(runtime) == f"-cp {jars}:$CLASSPATH"  # one AM writes it
    tmp = Path(first.rsplit("=", 1)[1])
    tmp.write_bytes(b"\0" * 4096)  # cut short: the JVM would crash on it (SIGBUS), even with -Xshare:auto
    assert not publish_am_archives(runtime, settle_s=0.0) and not tmp.exists()
    done = subprocess.run([str(runtime.java), f"-XX:ArchiveClassesAtExit={tmp}", "-cp", jars, "-version"],
                          capture_output=True, check=False)
    assert done.returncode == 0 and tmp.stat().st_size > 0
    assert not publish_am_archives(runtime)  # written just now: an AM may still be writing it
    assert publish_am_archives(runtime, settle_s=0.0) and not tmp.exists()
    assert am_archive_option(runtime) == f"-cp {jars}:$CLASSPATH -XX:SharedArchiveFile={am_archive_path(runtime)}"


def test_one_clusters_teardown_leaves_the_archive_another_clusters_am_is_writing(fake_runtime: HadoopRuntime) -> None:
    """Two clusters of one user (two runs at once): the one whose teardown comes first publishes its own AMs' files
    at once and leaves the other's, which its AM may be writing at exit this very moment (a file cut short, here), for
    that cluster's own teardown; that one then drops it (the JDK does not map it)."""
    runtime = _real_java(fake_runtime)
    theirs = Path(am_archive_option(runtime, "racer2-1").rsplit("=", 1)[1])
    assert theirs.name.startswith("mrappmaster.jsa.racer2-1-") and theirs.name.endswith(".tmp")
    theirs.write_bytes(b"\0" * 4096)  # being written
    assert not publish_am_archives(runtime, ended="racer1-1") and theirs.exists()
    assert not publish_am_archives(runtime, ended="racer2-1") and not theirs.exists()
