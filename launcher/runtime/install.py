"""``hpc-hadoop runtime install``: the Hadoop runtime for an install from a wheel, in a user or site prefix.

A checkout gets its runtime from ``install.sh`` (``mvn package`` in ``hadoop-fs-shim/``, into
``hadoop-fs-shim/target/hadoop-runtime``). An install from a wheel has no checkout, but the package ships the
shim's Maven project (``pom.xml`` and ``src/main``: :func:`launcher.util.resources.shim_project_dir`), so this runs the
same ``mvn package`` on a copy of it, with the runtime directory (the pom's ``runtime.dir``) pointed into the
prefix: the same pinned jars from Maven Central (or the mirror of ``~/.m2/settings.xml``), the same layout
(``lib/*.jar``, ``extra-classpath/``, ``VERSION``), the shim built from the same sources.

The runtime is assembled in a temporary directory inside the prefix and renamed into place (``<prefix>/hadoop``)
only when complete, so a failed or interrupted build leaves no half runtime that the launcher would pick up
(:func:`launcher.runtime.hadoop.find_hadoop_home` takes any ``<prefix>/hadoop`` directory). A complete runtime of the
pinned version is left untouched ("up to date").
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from launcher.util.errors import UserError
from launcher.util.resources import HADOOP_SUBDIR, SHIM_JAR_GLOB, shim_project_dir

#: The pom's XML namespace (``<project xmlns=...>``).
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
#: A build downloads about 180 jars (~100 MB) on its first run; seconds before it is given up.
MVN_TIMEOUT_S = 3600
#: Lines of Maven's output shown when it fails.
LOG_TAIL = 40


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install` did.

    Attributes:
        home: the runtime's directory (``<prefix>/hadoop``), to use as ``hadoop.home`` or ``$HPC_HADOOP_HOME``.
        version: its Hadoop version, e.g. ``"3.4.2"``.
        changed: ``False`` when a complete runtime of this version was there already (nothing was written).
    """

    home: Path
    version: str
    changed: bool


def pinned_version(pom: Path) -> str:
    """The Hadoop version the shim's pom pins (``<properties><hadoop.version>``), e.g. ``"3.4.2"``.

    Raises:
        UserError: the pom cannot be read or pins no version (a broken package).
    """
    try:
        found = ET.parse(pom).getroot().find("m:properties/m:hadoop.version", POM_NS)
    except (OSError, ET.ParseError) as exc:
        raise UserError(f"cannot read the shim's pom: {exc}", file=str(pom),
                        fix="reinstall hpc-hadoop") from None
    if found is None or not (found.text or "").strip():
        raise UserError("the shim's pom pins no hadoop.version", file=str(pom), fix="reinstall hpc-hadoop")
    return (found.text or "").strip()


def missing(home: Path, version: str) -> list[str]:
    """What the runtime at ``home`` lacks to be complete for Hadoop ``version`` (empty when complete): the
    ``VERSION`` file with that version, ``extra-classpath/``, and in ``lib/`` the jars the launcher looks up
    (:func:`launcher.runtime.hadoop.discover`: hadoop-common, the examples, the jobclient tests and streaming jars) and
    the shim's."""
    lacking = []
    version_file = home / "VERSION"
    if not version_file.is_file() or version_file.read_text().strip() != version:
        lacking.append(f"VERSION {version}")
    if not (home / "extra-classpath").is_dir():
        lacking.append("extra-classpath/")
    lib = home / "lib"
    for pattern in (f"hadoop-common-{version}.jar", f"hadoop-mapreduce-examples-{version}.jar",
                    f"hadoop-mapreduce-client-jobclient-{version}-tests.jar", f"hadoop-streaming-{version}.jar",
                    SHIM_JAR_GLOB):
        if not any(lib.glob(pattern)):
            lacking.append(f"lib/{pattern}")
    return lacking


def install(prefix: Path, *, mvn: str = "mvn") -> InstallResult:
    """Put the pinned Hadoop runtime into ``<prefix>/hadoop`` unless a complete one is there.

    Args:
        prefix: the runtime prefix (:func:`launcher.util.resources.user_prefix` or ``site_prefix``, or any directory).
        mvn: the Maven command.

    Raises:
        UserError: Maven is missing or the build failed (the end of its output included), or the built runtime is
            incomplete.
    """
    project = shim_project_dir()
    version = pinned_version(project / "pom.xml")
    home = prefix / HADOOP_SUBDIR
    if home.is_dir() and not missing(home, version):
        return InstallResult(home=home, version=version, changed=False)
    maven = shutil.which(mvn)
    if maven is None:
        raise UserError(f"{mvn} not found on PATH (it builds the runtime from Maven Central)",
                        fix="install Maven 3 and a JDK 17 (apt-get install maven openjdk-17-jdk-headless)")
    prefix.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".hadoop-install-", dir=prefix) as tmp:
        work = Path(tmp)
        built = _build(maven, project, work)
        lacking = missing(built, version)
        if lacking:
            raise UserError(f"the built runtime in {built} lacks {', '.join(lacking)}", fix="report this as a bug")
        _replace(home, built, work)
    return InstallResult(home=home, version=version, changed=True)


def _build(maven: str, project: Path, work: Path) -> Path:
    """Run ``mvn package`` on a copy of the shim project (``pom.xml`` + ``src/main``) in ``work``; returns the
    assembled runtime, ``work/hadoop``.

    Raises:
        UserError: Maven failed or timed out (the last :data:`LOG_TAIL` lines of its output in the message).
    """
    copy = work / "project"
    (copy / "src").mkdir(parents=True)
    shutil.copy2(project / "pom.xml", copy / "pom.xml")
    shutil.copytree(project / "src" / "main", copy / "src" / "main")
    runtime = work / HADOOP_SUBDIR
    log = work / "mvn.log"
    argv = [maven, "-B", "-q", "-f", str(copy / "pom.xml"), "package", "-DskipTests", f"-Druntime.dir={runtime}"]
    try:
        with log.open("w") as out:
            proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=MVN_TIMEOUT_S, check=False)
        failed = proc.returncode != 0
    except subprocess.TimeoutExpired:
        failed = True
    if failed:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-LOG_TAIL:])
        raise UserError(f"building the Hadoop runtime failed: {' '.join(argv)}\n{tail}",
                        fix="check access to Maven Central (or a mirror in ~/.m2/settings.xml) and the JDK")
    return runtime


def _replace(home: Path, built: Path, work: Path) -> None:
    """Move ``built`` to ``home``; an old (incomplete or other version) runtime there is moved into ``work`` first
    and so removed with it."""
    if home.exists() or home.is_symlink():
        home.rename(work / "old")
    built.rename(home)
