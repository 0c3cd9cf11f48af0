"""The Hadoop runtime: where its jars are, which JDK runs it, and how a JVM is started.

Two layouts are understood:

* ours, assembled from Maven Central by ``hadoop-fs-shim/`` (``mvn package``):
  ``<home>/lib/*.jar`` + ``<home>/extra-classpath`` + ``<home>/VERSION``;
* a site's standard Hadoop install: ``<home>/share/hadoop/{common,hdfs,yarn,mapreduce,tools}/``, to which
  the shim jar built in ``hadoop-fs-shim/target`` (or shipped in the package) is appended (:func:`shim_jar`).

Ours is found in a checkout's ``hadoop-fs-shim/target/hadoop-runtime`` or where ``hpc-hadoop runtime install``
put it (a user or site prefix, :mod:`launcher.util.resources`).

Daemons and clients are started with ``java`` and the computed classpath (never Hadoop's ssh-based
start scripts). One JDK serves the client, the daemons and the containers (docs/architecture.md, Hadoop runtime).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from launcher.util.errors import UserError
from launcher.util.resources import (
    HADOOP_SUBDIR,
    SHIM_JAR_GLOB,
    checkout,
    checkout_hadoop_runtime,
    packaged_shim_jar,
    prefixes,
)

#: Flags Hadoop 3.4 daemons need on Java 17 (docs/architecture.md, Hadoop runtime); MR containers get theirs from
#: ``mapreduce.jvm.add-opens-as-default=true``; the job client needs none.
JAVA17_DAEMON_FLAGS = (
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
)
#: IPv4 only, as Hadoop's own scripts start every command ("We don't support IPv6 yet/still, so by default the
#: preference is set to IPv4", hadoop-env.sh; and ``mapreduce.admin.map.child.java.opts``' default): Hadoop 3.4.2's
#: ``DNS.reverseDns`` splits an address on ``.`` and throws on an interface's IPv6 one, which kills a NodeManager that
#: names itself by its interface (``hadoop.security.dns.interface``, set under ``interface:`` and Kerberos).
PREFER_IPV4 = "-Djava.net.preferIPv4Stack=true"
#: Every JVM we start gets an explicit heap, so the JDK's own cgroup detection is not needed; on nodes whose
#: cgroup v1 mounts have a root of ``/..`` (cgroup namespaces, some container runtimes) JDK 17's detection
#: throws a NullPointerException that kills the NodeManager at start.
NO_CONTAINER_SUPPORT = "-XX:-UseContainerSupport"
#: C1 code only: the JIT half of :data:`QUICK_JIT_GC_FLAGS`, which the ResourceManager trades for compiler directives
#: under Kerberos (:func:`launcher.render.daemons.resourcemanager_jit_flags`).
QUICK_JIT = "-XX:TieredStopAtLevel=1"
#: JIT and GC flags that cut a JVM's start-up: C1 code only (no C2 compile threads competing for the node's cores)
#: and the serial collector (no parallel GC threads). What ``hadoop.fast_start`` gives the daemons too: they serve RPCs
#: and HTTP and compute little, and three of them starting at once on a 2-core node had the ResourceManager active
#: 8-9 s after exec with G1 and C2, 4-5 s with these (bring-up of examples/wordcount.yaml 9.6-12.6 s, now 7.0-8.3 s).
QUICK_JIT_GC_FLAGS = (QUICK_JIT, "-XX:+UseSerialGC")
#: JIT/GC flags that cut JVM start-up for short-lived JVMs (client, AM, tasks).
FAST_START_FLAGS = (*QUICK_JIT_GC_FLAGS, "-Xshare:auto")

#: The runtime ``install.sh`` builds in a checkout. The shim's jar (``pfs://``, and ``file://`` without ``.crc``
#: files, the default; name pattern :data:`launcher.util.resources.SHIM_JAR_GLOB`) is in its ``lib/``, next to it in
#: ``hadoop-fs-shim/target/``, and in the package (:func:`launcher.util.resources.packaged_shim_jar`).
BUILT_RUNTIME = checkout_hadoop_runtime()
#: The fix named when no runtime is found (a one-line error).
INSTALL_FIX = ("run `hpc-hadoop runtime install` (or ./install.sh in a checkout), or set hadoop.home to a site's "
               "Hadoop 3 install")


def shim_jar() -> Path | None:
    """The built shim jar, for a site install's classpath: ``fs.file.impl`` names one of its classes unless
    ``filesystem.checksums`` is true, so daemons, containers and clients all need it. The checkout's build first,
    then the jar shipped in the package; ``None`` if neither has one."""
    for directory in (BUILT_RUNTIME / "lib", BUILT_RUNTIME.parent):
        found = sorted(p for p in directory.glob(SHIM_JAR_GLOB) if "sources" not in p.name)
        if found:
            return found[-1]
    return packaged_shim_jar()


def runtime_candidates() -> list[tuple[str, Path]]:
    """Where our runtime is looked for when neither ``hadoop.home`` nor the environment names one, in order, each
    with a label: the checkout's :data:`BUILT_RUNTIME` (when running from a checkout), then ``<prefix>/hadoop`` of
    the user and the site prefix (:func:`launcher.util.resources.prefixes`)."""
    built = [("checkout", BUILT_RUNTIME)] if checkout() is not None else []
    return [*built, *((label, prefix / HADOOP_SUBDIR) for label, prefix in prefixes())]


@dataclass(frozen=True)
class HadoopRuntime:
    """A located Hadoop install and JDK.

    Attributes:
        home: the install directory.
        version: Hadoop version, e.g. ``"3.4.2"``.
        classpath: classpath entries (jar globs ``dir/*`` and directories), conf dir not included.
        examples_jar: ``hadoop-mapreduce-examples-<v>.jar``.
        tests_jar: ``hadoop-mapreduce-client-jobclient-<v>-tests.jar`` (TestDFSIO, SleepJob).
        streaming_jar: ``hadoop-streaming-<v>.jar``.
        java_home: the JDK's home (``$JAVA_HOME`` of daemons and containers).
        java_version: the JDK's major version (int).
    """

    home: Path
    version: str
    classpath: tuple[str, ...]
    examples_jar: Path
    tests_jar: Path
    streaming_jar: Path
    java_home: Path
    java_version: int

    @property
    def java(self) -> str:
        """Path of the ``java`` executable."""
        return str(self.java_home / "bin" / "java")

    def daemon_flags(self, fast_start: bool = True) -> tuple[str, ...]:
        """JVM flags of every daemon on this JDK: :data:`NO_CONTAINER_SUPPORT`, with ``fast_start``
        (``hadoop.fast_start``, whose default is True) :data:`QUICK_JIT_GC_FLAGS`, :data:`PREFER_IPV4`, the Java 17
        ``--add-opens`` set from 9 on. They are part of a class-data-sharing archive's key
        (:func:`launcher.runtime.cds.archive_key`): the site's
        archives are built for the default."""
        return (NO_CONTAINER_SUPPORT, *(QUICK_JIT_GC_FLAGS if fast_start else ()), PREFER_IPV4,
                *(JAVA17_DAEMON_FLAGS if self.java_version >= 9 else ()))

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form, written into the cluster plan for the per-node agents."""
        return {"home": str(self.home), "version": self.version, "classpath": list(self.classpath),
                "examples_jar": str(self.examples_jar), "tests_jar": str(self.tests_jar),
                "streaming_jar": str(self.streaming_jar), "java_home": str(self.java_home),
                "java_version": self.java_version}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> HadoopRuntime:
        """Inverse of :meth:`to_dict`."""
        return cls(home=Path(str(data["home"])), version=str(data["version"]),
                   classpath=tuple(str(e) for e in data["classpath"]),  # type: ignore[attr-defined]
                   examples_jar=Path(str(data["examples_jar"])),
                   tests_jar=Path(str(data["tests_jar"])), streaming_jar=Path(str(data["streaming_jar"])),
                   java_home=Path(str(data["java_home"])), java_version=int(str(data["java_version"])))


def _first(pattern_dirs: list[Path], pattern: str, what: str, home: Path) -> Path:
    for directory in pattern_dirs:
        found = sorted(p for p in directory.glob(pattern) if "sources" not in p.name)
        if found:
            return found[0]
    raise UserError(f"no {what} ({pattern}) in the Hadoop install", file=str(home), field="hadoop.home",
                    fix="point hadoop.home at a complete Hadoop 3 install or rebuild the runtime "
                        "(mvn -f hadoop-fs-shim/pom.xml package)")


def find_java_home(explicit: str | None = None) -> Path:
    """Locate the JDK: ``hadoop.java_home``, then ``$JAVA_HOME``, then ``java`` on ``PATH``.

    A ``hadoop.java_home`` or ``$JAVA_HOME`` without ``bin/java`` is an error, as in Hadoop's own scripts
    ("JAVA_HOME ... does not exist"): falling back to another JDK would run a different Java than the user
    named (one JDK for client, daemons and containers, docs/architecture.md, Hadoop runtime).

    Raises:
        UserError: the named JDK has no ``bin/java``, or no ``java`` is found at all, with the fix.
    """
    for candidate, origin in ((explicit, "hadoop.java_home"), (os.environ.get("JAVA_HOME"), "$JAVA_HOME")):
        if candidate:
            home = Path(os.path.expandvars(os.path.expanduser(candidate)))
            if (home / "bin" / "java").is_file():
                return home
            fix = ("set it to a JDK 11 or 17 home, e.g. /usr/lib/jvm/java-17-openjdk-amd64"
                   if origin == "hadoop.java_home" else
                   "point $JAVA_HOME at a JDK 11 or 17 home (or unset it to use java on PATH), or set hadoop.java_home")
            raise UserError(f"{origin} {home}: {home}/bin/java does not exist", field="hadoop.java_home", fix=fix)
    java = shutil.which("java")
    if not java:
        raise UserError("no Java found ($JAVA_HOME unset, no java on PATH)", field="hadoop.java_home",
                        fix="install a JDK (apt-get install openjdk-17-jdk-headless) or `module load java`")
    return Path(java).resolve().parent.parent


def java_major_version(java_home: Path) -> int:
    """Return the JDK's major version (8, 11, 17...) from ``java -version``.

    Raises:
        UserError: ``java -version`` fails or prints no version.
    """
    try:
        proc = subprocess.run([str(java_home / "bin" / "java"), "-version"], capture_output=True,
                              text=True, timeout=60, check=False)
    except OSError as exc:
        raise UserError(f"cannot run {java_home}/bin/java: {exc.strerror}", field="hadoop.java_home") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr)
    if not match:
        raise UserError(f"{java_home}/bin/java -version printed no version", field="hadoop.java_home")
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def find_hadoop_home(explicit: str | None = None) -> Path:
    """Locate the Hadoop install: ``hadoop.home``, ``$HPC_HADOOP_HOME``, ``$HADOOP_HOME``, then our runtime in
    the checkout, the user prefix and the site prefix (:func:`runtime_candidates`).

    Raises:
        UserError: none of them exists; one line naming the fix (``hpc-hadoop runtime install``).
    """
    for source, value in (("hadoop.home", explicit), ("$HPC_HADOOP_HOME", os.environ.get("HPC_HADOOP_HOME")),
                          ("$HADOOP_HOME", os.environ.get("HADOOP_HOME"))):
        if value:
            home = Path(os.path.expandvars(os.path.expanduser(value)))
            if not home.is_dir():
                raise UserError(f"{home} is not a directory", field=source,
                                fix="point it at a Hadoop 3 install")
            return home
    candidates = runtime_candidates()
    for _, home in candidates:
        if home.is_dir():
            return home
    raise UserError("no Hadoop runtime found (none in " + ", ".join(str(home) for _, home in candidates) + ")",
                    field="hadoop.home", fix=INSTALL_FIX)


def discover(home: str | None = None, java_home: str | None = None) -> HadoopRuntime:
    """Locate Hadoop and Java and compute the classpath.

    Args:
        home: ``hadoop.home`` from the job file, or ``None`` for the search order of
            :func:`find_hadoop_home`.
        java_home: ``hadoop.java_home`` from the job file, or ``None``.

    Raises:
        UserError: Hadoop or Java is missing or incomplete.
    """
    hadoop_home = find_hadoop_home(home)
    jdk = find_java_home(java_home)
    share = hadoop_home / "share" / "hadoop"
    if (share / "common").is_dir():
        parts = ["common", "common/lib", "hdfs", "hdfs/lib", "yarn", "yarn/lib", "mapreduce", "tools/lib"]
        classpath = [f"{share / part}/*" for part in parts if (share / part).is_dir()]
        if (share / "hdfs").is_dir():
            classpath.append(str(share / "hdfs"))
        shim = shim_jar()
        if shim is not None:  # our runtime has it in lib/; a site install does not
            classpath.append(str(shim))
        search = [share / "mapreduce", share / "tools" / "lib"]
        common_jar = _first([share / "common"], "hadoop-common-[0-9]*.jar", "hadoop-common jar", hadoop_home)
        version = common_jar.name.removeprefix("hadoop-common-").removesuffix(".jar")
    elif (hadoop_home / "lib").is_dir():
        # first/: jars that must come before Hadoop's (the pure-Java SecureIOUtils of secure mode, hadoop-fs-shim)
        classpath = [f"{hadoop_home / 'first'}/*"] if (hadoop_home / "first").is_dir() else []
        classpath.append(f"{hadoop_home / 'lib'}/*")
        if (hadoop_home / "extra-classpath").is_dir():
            classpath.append(str(hadoop_home / "extra-classpath"))
        search = [hadoop_home / "lib"]
        version_file = hadoop_home / "VERSION"
        if version_file.is_file():
            version = version_file.read_text().strip()
        else:
            common_jar = _first(search, "hadoop-common-[0-9]*.jar", "hadoop-common jar", hadoop_home)
            version = common_jar.name.removeprefix("hadoop-common-").removesuffix(".jar")
    else:
        raise UserError(f"{hadoop_home} is neither a Hadoop install (share/hadoop/) nor our runtime (lib/)",
                        field="hadoop.home", fix="point it at a Hadoop 3 install")
    return HadoopRuntime(
        home=hadoop_home, version=version, classpath=tuple(classpath),
        examples_jar=_first(search, "hadoop-mapreduce-examples-*.jar", "examples jar", hadoop_home),
        tests_jar=_first(search, "hadoop-mapreduce-client-jobclient-*-tests.jar", "jobclient tests jar",
                         hadoop_home),
        streaming_jar=_first(search, "hadoop-streaming-*.jar", "streaming jar", hadoop_home),
        java_home=jdk, java_version=java_major_version(jdk))
