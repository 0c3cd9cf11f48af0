"""Class data sharing (JDK AppCDS dynamic archives) for the Hadoop daemons: a faster bring-up.

A ResourceManager loads ~6,000 classes from ~180 jars at start; parsing and verifying them is most of its
start-up CPU. The JDK (13+) can write the classes a run loaded into an archive when the JVM exits
(``-XX:ArchiveClassesAtExit``) and map that archive at the next start (``-XX:SharedArchiveFile``). Measured
here (2 cores, JDK 17, Hadoop 3.4.2): ResourceManager start to ``STARTED`` 10.3 s → 5.2 s, CPU 6.9 s → 4.3 s.

Rules the JDK sets, which shape the daemons' classpath (:func:`launcher.render.daemons.daemon_classpath`): the
archive records the jar classpath it was made with (paths, sizes, modification times) and is used only when
the run's classpath starts with the same jars; directories (``conf/``, ``webapps``) must come after the jars.
A mismatched or unreadable archive is ignored by the JVM (``-Xshare:auto``): never an error.

Archives live in ``$XDG_CACHE_HOME/hpc-hadoop/cds/<key>/<daemon>.jsa`` (default ``~/.cache``), ``<key>``
being a digest of the JDK and of every jar (name, size, mtime), so a changed runtime gets new archives. The
first run of a daemon writes ``<daemon>.jsa.<node>.<token>.tmp`` at exit; the per-node agent renames it into
place once the daemon has exited cleanly (so concurrent nodes on a shared home never see a partial file).
``hadoop.class_data_sharing: false`` turns it off.

An archive is published only once the JDK has mapped it (:func:`maps`: ``java -Xshare:on
-XX:SharedArchiveFile=<file> -version``): a file cut short (a JVM killed while writing it; 126,976 bytes of a
ResourceManager's 64 MB, issue 25) makes every JVM that maps it die with SIGSEGV in ``MetaspaceShared::map_archive``,
``-Xshare:auto`` or not. An archive a daemon died on is set aside (:func:`set_aside`) by the agent.

**Site archives.** ``install.sh`` builds the archives once for every user of an install
(:mod:`launcher.runtime.cds_build`) into ``<runtime>/cds/<key>/`` (:func:`site_root`, read-only for the users); a JVM
uses the site's archive when one has its key, else the user's own cache as above. ``$HPC_HADOOP_CDS_SITE`` names another
site directory; empty, none (each user's first run writes the archives). Site archives are *static* ones, made by the
JDK from a recorded class list (``java -Xshare:dump -XX:SharedClassListFile=<list>``), not at a daemon's exit: during
the build's training run ``$HPC_HADOOP_CDS_CLASSLIST`` names a directory, and every JVM that would get an archive
(daemons, ApplicationMaster, job client) records the classes it loads there instead (``-XX:DumpLoadedClassList``,
:func:`record_classes`), beside a :class:`Recipe` saying which JVM flags and jar classpath its archive is made with.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import stat
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from launcher.runtime.hadoop import HadoopRuntime
from launcher.util.files import replace_private
from launcher.util.userdirs import cache_dir

#: JVM flags that select an archive or record a class list; removed from commands that must not make one (``NameNode
#: -format``).
CDS_FLAG_PREFIXES = ("-XX:SharedArchiveFile=", "-XX:ArchiveClassesAtExit=", "-XX:DumpLoadedClassList=")
#: Exit codes after which a just-written archive may be complete (0, or SIGTERM's 143 from the JVM's handler); it is
#: published only if the JDK also maps it (:func:`maps`).
CLEAN_EXITS = (0, 143, -15)
#: The environment variable naming the site's archive directory (:func:`site_root`); empty: no site archives.
SITE_ENV = "HPC_HADOOP_CDS_SITE"
#: Suffix of the marker a user's cache keeps for a site archive a daemon died on (:func:`set_aside`): the site's file
#: is not the user's to move, so later runs skip it and write the user's own.
SITE_REFUSED = ".site-refused"
#: The environment variable naming the directory where every JVM that would get an archive records the classes it loads
#: instead of using or writing one (:func:`record_classes`; set by :mod:`launcher.runtime.cds_build`'s training run);
#: unset or empty: archives as usual.
CLASSLIST_ENV = "HPC_HADOOP_CDS_CLASSLIST"
#: Seconds :func:`maps` may take (measured 0.05-0.07 s for a 64 MB ResourceManager archive, 2 cores, JDK 17).
MAPS_TIMEOUT = 60.0


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/hpc-hadoop/cds`` (default ``~/.cache/hpc-hadoop/cds``:
    :func:`launcher.util.userdirs.cache_dir`)."""
    return cache_dir() / "cds"


def site_root(runtime: HadoopRuntime) -> Path | None:
    """The site's archive directory: ``$HPC_HADOOP_CDS_SITE`` when set (empty: ``None``), else ``<runtime>/cds``
    (what ``install.sh`` builds, :mod:`launcher.runtime.cds_build`)."""
    value = os.environ.get(SITE_ENV)
    if value is not None:
        return Path(value) if value else None
    return Path(runtime.home) / "cds"


def classlist_root() -> Path | None:
    """The class-list directory (``$HPC_HADOOP_CDS_CLASSLIST``), ``None`` when it is unset or empty."""
    value = os.environ.get(CLASSLIST_ENV)
    return Path(value) if value else None


@dataclass(frozen=True)
class Recipe:
    """How the static archive ``<key>/<name>.jsa`` is made from the class lists ``<key>/<name>.<token>.classlist``
    that the JVMs of that name recorded (:func:`record_classes`).

    Attributes:
        key: the archive's key directory (:func:`archive_key` of the JVM's flags), as the runtime looks it up.
        name: ``resourcemanager``, ``mrappmaster``, ``client-<digest>``...: the archive is ``<name>.jsa``.
        flags: the JVM flags that key covers (a daemon's ``--add-opens`` set, a job client's ``-XX:`` flags; none for
            the ApplicationMaster, keyed by name only).
        classpath: the jar classpath the JVM starts with (globs such as ``lib/*`` as the runtime writes them), up to its
            first directory: the JDK uses an archive only when the classpath starts with the one it was made with, and
            refuses to make one with a non-empty directory on it.
    """

    key: str
    name: str
    flags: tuple[str, ...]
    classpath: str

    @property
    def archive(self) -> str:
        """The archive's file name, ``<name>.jsa``."""
        return f"{self.name}.jsa"

    def path(self, root: Path) -> Path:
        """Where this recipe is kept below the class-list directory ``root``: ``<key>/<name>.json``."""
        return root / self.key / f"{self.name}.json"

    def save(self, root: Path) -> Path:
        """Write the recipe below ``root`` (replacing an earlier one of the same JVM: the same content).

        Raises:
            OSError: ``root`` cannot be written.
        """
        path = self.path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_private(path, json.dumps({"key": self.key, "name": self.name, "flags": list(self.flags),
                                          "classpath": self.classpath}),
                        tmp=path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}"))  # two threads, one pid
        return path

    @classmethod
    def load(cls, path: Path) -> Recipe:
        """Read a recipe :meth:`save` wrote.

        Raises:
            OSError: it cannot be read. ValueError: it is not a recipe.
        """
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("flags"), list):
            raise ValueError(f"{path}: not a class-list recipe")
        return cls(key=str(data["key"]), name=str(data["name"]), flags=tuple(str(f) for f in data["flags"]),
                   classpath=str(data["classpath"]))

    def class_lists(self, root: Path) -> list[Path]:
        """The class lists the JVMs of this recipe recorded below ``root``, oldest name first."""
        return sorted((root / self.key).glob(f"{self.name}.*.classlist"))


def record_classes(key: str, name: str, flags: Sequence[str], classpath: str) -> Path | None:
    """In class-list mode (:func:`classlist_root`): save the :class:`Recipe` of the JVM ``name`` and return the class
    list it records to (``<root>/<key>/<name>.<token>.classlist``, for ``-XX:DumpLoadedClassList``; one per JVM, so that
    two ApplicationMasters, or two nodes, never write one file).

    Returns:
        The class list's path; ``None`` outside class-list mode or when the directory cannot be written (the JVM then
        starts without sharing, and the build finds its list missing).
    """
    root = classlist_root()
    if root is None:
        return None
    recipe = Recipe(key=key, name=name, flags=tuple(flags), classpath=classpath)
    try:
        recipe.save(root)
    except OSError:
        return None
    return root / key / f"{name}.{uuid.uuid4().hex[:12]}.classlist"


def _refused_marker(key: str, name: str) -> Path:
    """The marker in the user's cache that a daemon died on the site's archive ``name`` of ``key``
    (:func:`set_aside`)."""
    return cache_root() / key / f"{name}{SITE_REFUSED}"


def _site_archive(runtime: HadoopRuntime, key: str, name: str) -> Path | None:
    """The site's archive ``name`` of ``key`` when it exists, is readable, and no daemon of this user died on it."""
    site = site_root(runtime)
    if site is None:
        return None
    path = site / key / name
    if not path.is_file() or not os.access(path, os.R_OK):
        return None
    if _refused_marker(key, name).exists():
        return None
    return path


def jar_entries(runtime: HadoopRuntime) -> list[str]:
    """The runtime's classpath entries that are jar globs (``dir/*``), in order."""
    return [entry for entry in runtime.classpath if entry.endswith("/*")]


def archive_key(runtime: HadoopRuntime, flags: tuple[str, ...] = ()) -> str:
    """A digest (16 hex digits) of the JDK, the JVM flags and every jar of the runtime (path, size, mtime)."""
    digest = hashlib.sha256()
    java = Path(runtime.java).resolve()
    digest.update(f"{java}|{java.stat().st_mtime_ns if java.exists() else 0}|{runtime.java_version}".encode())
    digest.update("|".join(flags).encode())
    for entry in jar_entries(runtime):
        for jar in sorted(glob.glob(entry[:-1] + "*.jar")):
            info = os.stat(jar)
            digest.update(f"{jar}|{info.st_size}|{info.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def archive_path(runtime: HadoopRuntime, daemon: str, flags: tuple[str, ...] = ()) -> Path:
    """Where the archive of ``daemon`` (``resourcemanager``...) for this runtime and JDK lives in the user's cache."""
    return cache_root() / archive_key(runtime, flags) / f"{daemon}.jsa"


def site_archive_path(runtime: HadoopRuntime, daemon: str, flags: tuple[str, ...] = ()) -> Path | None:
    """Where the site's archive of ``daemon`` goes (:func:`site_root`); ``None`` without a site directory."""
    site = site_root(runtime)
    return None if site is None else site / archive_key(runtime, flags) / f"{daemon}.jsa"


def cds_flags(runtime: HadoopRuntime, daemon: str, node: str, token: str,
              flags: tuple[str, ...] = ()) -> tuple[list[str], Path | None, Path]:
    """The JVM flags for ``daemon`` on ``node``: use the site's archive (:func:`site_root`) or the user's if there is
    one, else write one at exit.

    Args:
        token: makes the temporary archive's name unique (the cluster id).
        flags: the daemon's other JVM flags (part of the key: ``--add-opens`` changes what may be archived).

    In class-list mode (:func:`classlist_root`, the site build's training run) the daemon neither uses nor writes an
    archive: it records the classes it loads (``-XX:DumpLoadedClassList``, :func:`record_classes`; its jar classpath is
    :func:`jar_entries`, which :func:`launcher.render.daemons.daemon_classpath` puts first).

    Returns:
        ``(flags, temporary archive or None, archive)``: the agent publishes the temporary archive with
        :func:`publish` after the daemon exited; without a temporary archive, ``archive`` is the one used (in
        class-list mode, the class list). Empty flags when the JDK is older than 13 or the cache directory (the
        class-list directory) cannot be made.
    """
    if runtime.java_version < 13:
        return [], None, Path()
    key = archive_key(runtime, flags)
    if classlist_root() is not None:
        recorded = record_classes(key, daemon, flags, ":".join(jar_entries(runtime)))
        return ([f"-XX:DumpLoadedClassList={recorded}"], None, recorded) if recorded else ([], None, Path())
    site = _site_archive(runtime, key, f"{daemon}.jsa")
    if site is not None:
        return [f"-XX:SharedArchiveFile={site}"], None, site
    archive = cache_root() / key / f"{daemon}.jsa"
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"], None, archive
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return [], None, archive
    for stale in archive.parent.glob("*.tmp"):  # left by daemons killed while writing (older than an hour)
        try:
            if stale.stat().st_mtime < time.time() - 3600:
                stale.unlink()
        except OSError:
            pass
    tmp = archive.with_name(f"{archive.name}.{node}.{token}.tmp")
    return [f"-XX:ArchiveClassesAtExit={tmp}"], tmp, archive


def publish(tmp: Path, archive: Path, returncode: int | None, *, java: str, classpath: str) -> bool:
    """Move a daemon's freshly written archive into place (first writer wins) once the JDK maps it (:func:`maps`
    with ``java`` and ``classpath``: the jars the JVM ran with); drop it after an unclean exit or when it does not
    map (a JVM killed while writing it, issue 25).

    Returns:
        True when ``archive`` now holds this daemon's archive.
    """
    if not tmp.exists():
        return False
    if returncode in CLEAN_EXITS and tmp.stat().st_size > 0 and not archive.exists() and maps(java, tmp, classpath):
        os.replace(tmp, archive)
        return True
    tmp.unlink(missing_ok=True)
    return False


def set_aside(archive: Path) -> Path | None:
    """Put away an archive a JVM died on, never deleting it: the user's own is renamed
    ``<name>.refused-<YYYYmmdd-HHMMSS>`` (the JDK and the launcher no longer see it; the file stays for a bug
    report); for a site's archive, which is not the user's to move, a marker ``<name>.site-refused`` in the user's
    cache makes later runs skip it (:func:`cds_flags`).

    Returns:
        Where the archive went (or the marker), ``None`` when neither could be done (another node's agent set it
        aside first, a read-only cache).
    """
    if archive.is_relative_to(cache_root()):
        moved = archive.with_name(f"{archive.name}.refused-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.rename(archive, moved)
        except OSError:
            return None
        return moved
    marker = _refused_marker(archive.parent.name, archive.name)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{archive}\n")
    except OSError:
        return None
    return marker


def client_archive_flags(runtime: HadoopRuntime, argv: Sequence[str]) -> list[str]:
    """Class-data-sharing flags for a job client's command line ``argv`` (``java <flags> -cp <classpath> <main
    class> <args>``, :func:`launcher.render.daemons.client_command`): use its archive, or write one when the JVM exits.

    A job client loads ~3,000 classes (about 2.3 CPU-seconds of a one-map job's 7.5 on 2 cores, issue 12). Its
    archive is keyed, within the runtime's key (:func:`archive_key` with the client's JVM flags), by its main class
    and its classpath's jars, with the size and mtime of each jar file (a user's job jar, rebuilt, gets a new
    archive); directories, which come last (each cluster's ``conf/``), are left out, so one archive serves every
    cluster. The classpath must start with the runtime's jars (the JDK's rule). The archive is written to
    ``<archive>.<token>.tmp`` and moved into place by :func:`publish_client_archive` after a clean exit. In class-list
    mode (:func:`classlist_root`) the client records the classes it loads instead (:func:`record_classes`), its recipe
    naming the classpath's entries up to the first directory.

    Returns:
        The flags to put after ``java`` (empty before JDK 13, when ``argv`` has no ``-cp`` and main class, or when
        the cache directory cannot be made).
    """
    args = list(argv)
    if runtime.java_version < 13 or "-cp" not in args[:-2]:
        return []
    at = args.index("-cp")
    classpath, main_class = args[at + 1], args[at + 2]
    flags = tuple(a for a in args[1:at] if a.startswith(("-XX:", "--add-")))
    digest, jars = _client_digest(main_class, classpath)
    key, name = archive_key(runtime, flags), f"client-{digest}.jsa"
    if classlist_root() is not None:
        recorded = record_classes(key, name.removesuffix(".jsa"), flags, ":".join(jars))
        return [f"-XX:DumpLoadedClassList={recorded}"] if recorded else []
    site = _site_archive(runtime, key, name)
    if site is not None:
        return [f"-XX:SharedArchiveFile={site}"]
    archive = cache_root() / key / name
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"]
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return []
    return [f"-XX:ArchiveClassesAtExit={archive}.{uuid.uuid4().hex[:12]}.tmp"]


def _client_digest(main_class: str, classpath: str) -> tuple[str, list[str]]:
    """A job client's archive name digest (16 hex digits: its main class and classpath, each file entry's size and
    mtime, directories left out) and its classpath's jars up to the first entry that is neither a jar glob (``lib/*``)
    nor a file (a directory, a missing entry): what its static archive is made with (:class:`Recipe`)."""
    digest = hashlib.sha256(main_class.encode())
    jars: list[str] = []
    prefix = True
    for entry in classpath.split(":"):
        try:
            info = os.stat(entry)
        except OSError:  # a jar glob (``lib/*``: its jars are in the runtime's key) or a missing entry
            digest.update(f"|{entry}".encode())
            prefix = prefix and entry.endswith("/*")
        else:
            if stat.S_ISDIR(info.st_mode):  # directories (conf/) hold no archived class: not part of the key
                prefix = False
                continue
            digest.update(f"|{entry}|{info.st_size}|{info.st_mtime_ns}".encode())
        if prefix:
            jars.append(entry)
    return digest.hexdigest()[:16], jars


def publish_client_archive(argv: Sequence[str], returncode: int | None) -> bool:
    """After a job client ended: move the archive it wrote (``-XX:ArchiveClassesAtExit=<archive>.<token>.tmp`` in
    ``argv``) into place when it exited with 0 and the JDK maps it with the client's classpath, else drop it
    (:func:`publish`).

    Returns:
        True when the client's archive is now in place.
    """
    args = list(argv)
    classpath = args[args.index("-cp") + 1] if "-cp" in args[:-1] else ""
    for arg in args:
        if arg.startswith("-XX:ArchiveClassesAtExit=") and arg.endswith(".tmp"):
            tmp = Path(arg.split("=", 1)[1])
            return publish(tmp, tmp.with_name(tmp.name.rsplit(".", 2)[0]), 0 if returncode == 0 else -1,
                           java=args[0], classpath=classpath)
    return False


#: The ApplicationMaster's archive (``<key>/mrappmaster.jsa``) and the JVM flags it is keyed with: the AM's JVM runs
#: with the job's ``yarn.app.mapreduce.am.command-opts`` and Java 17's ``--add-opens`` set (MapReduce adds it).
AM_ARCHIVE = "mrappmaster.jsa"
AM_KEY_FLAGS = ("mrappmaster",)
#: While this marker is younger than this (seconds), no other ApplicationMaster is asked to write the archive: the
#: first one writes it when it exits, and the next job clients publish it.
AM_DUMP_WINDOW_S = 600.0
#: An AM's archive file is complete this long (seconds) after it was last written (the JVM writes it at exit).
AM_SETTLE_S = 20.0
#: ``hpc.am.cds`` without an archive: the JDK's default, a no-op (the value is never empty; ``mapred-site.xml``'s
#: default is the same, for job clients that do not set it).
AM_NO_ARCHIVE = "-Xshare:auto"


def am_archive_path(runtime: HadoopRuntime) -> Path:
    """Where the MapReduce ApplicationMaster's archive for this runtime and JDK lives in the user's cache."""
    return cache_root() / archive_key(runtime, AM_KEY_FLAGS) / AM_ARCHIVE


def am_archive_option(runtime: HadoopRuntime, cluster_id: str = "") -> str:
    """The value of ``hpc.am.cds`` for a job client about to submit: the ApplicationMaster's extra JVM options.

    The container's classpath starts with ``$PWD`` (its own directory), which no archive can match; the option puts
    the runtime's jars first (``-cp <jars>:$CLASSPATH``: ``$CLASSPATH`` is the container's, expanded by the
    container's launch script) and then uses the archive (``-XX:SharedArchiveFile``) or, when there is none and no
    other AM was asked in the last :data:`AM_DUMP_WINDOW_S` seconds, asks this AM to write it at exit
    (``-XX:ArchiveClassesAtExit=<archive>.<cluster_id>-<token>.tmp``, named after the asking cluster so that its
    teardown knows its own: :func:`publish_am_archives` moves it into place). In
    class-list mode (:func:`classlist_root`) every AM records the classes it loads instead (:func:`record_classes`,
    the jars above as its classpath, no JVM flag in its key). Measured
    on a one-map job (2 cores, JDK 17): the AM's CPU time 3.5–3.7 s without, 2.1–2.4 s with the archive.

    Returns:
        :data:`AM_NO_ARCHIVE` before JDK 13 or when the cache directory cannot be made (the AM then starts as Hadoop
        starts it). Never empty: Hadoop's ``Configuration`` leaves ``${hpc.am.cds}`` unexpanded when its value is
        empty, and the container's shell fails on it ("bad substitution").
    """
    if runtime.java_version < 13:
        return AM_NO_ARCHIVE
    jars = ":".join(jar_entries(runtime))
    if classlist_root() is not None:  # the site build's training run: record the AM's classes (record_classes)
        recorded = record_classes(archive_key(runtime, AM_KEY_FLAGS), AM_ARCHIVE.removesuffix(".jsa"), (), jars)
        return f"-cp {jars}:$CLASSPATH -XX:DumpLoadedClassList={recorded}" if recorded else AM_NO_ARCHIVE
    site = _site_archive(runtime, archive_key(runtime, AM_KEY_FLAGS), AM_ARCHIVE)
    if site is not None:
        return f"-cp {jars}:$CLASSPATH -XX:SharedArchiveFile={site}"
    archive = am_archive_path(runtime)
    if archive.is_file():
        return f"-cp {jars}:$CLASSPATH -XX:SharedArchiveFile={archive}"
    marker = archive.with_name(f"{AM_ARCHIVE}.requested")
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        if marker.exists() and time.time() - marker.stat().st_mtime < AM_DUMP_WINDOW_S:
            return f"-cp {jars}:$CLASSPATH"
        marker.touch()
    except OSError:
        return AM_NO_ARCHIVE
    token = f"{cluster_id}-{uuid.uuid4().hex[:12]}" if cluster_id else uuid.uuid4().hex[:12]
    return f"-cp {jars}:$CLASSPATH -XX:ArchiveClassesAtExit={archive}.{token}.tmp"


def publish_am_archives(runtime: HadoopRuntime, settle_s: float = AM_SETTLE_S, *, ended: str | None = None) -> bool:
    """Move an archive an ApplicationMaster wrote at exit into place, once it has not changed for ``settle_s``
    seconds and the JVM maps it (``java -Xshare:on -XX:SharedArchiveFile=<file> -version``: a file cut short by a
    SIGKILL is refused, and dropped).

    Args:
        ended: a cluster whose ApplicationMasters have all ended (its teardown): its own files (named after it by
            :func:`am_archive_option`) are complete now, with no wait. Another cluster of the same user may still
            run an AM that is writing its file at exit: that file keeps the ``settle_s`` wait, so that one teardown
            never drops what another cluster's AM is writing.

    Returns:
        True when the ApplicationMaster's archive is in place (this call's or another publisher's: two clusters'
        teardowns may publish at once; the first move wins, the other finds the file gone and moves on). Never
        raises ``OSError`` for a file it cannot read, move or remove: it stays for a later call, as before.
    """
    archive = am_archive_path(runtime)
    own = f"{AM_ARCHIVE}.{ended}-" if ended else None
    for tmp in sorted(archive.parent.glob(f"{AM_ARCHIVE}.*.tmp")) if archive.parent.is_dir() else []:
        wait = 0.0 if own is not None and tmp.name.startswith(own) else settle_s
        try:
            if time.time() - tmp.stat().st_mtime < wait:
                continue
            if not archive.exists() and maps(runtime.java, tmp, ":".join(jar_entries(runtime))):
                os.replace(tmp, archive)
                archive.with_name(f"{AM_ARCHIVE}.requested").unlink(missing_ok=True)
            else:
                tmp.unlink(missing_ok=True)
        except OSError:  # gone (another publisher moved or dropped it first) or unreadable: leave it
            continue
    return archive.is_file()


def maps(java: str, archive: Path, classpath: str) -> bool:
    """True when the JDK ``java`` maps ``archive`` with ``classpath`` (``java -Xshare:on
    -XX:SharedArchiveFile=<archive> -cp <classpath> -version``; with ``-Xshare:on`` a mismatched archive is an error,
    and a truncated one crashes the JVM, exit 134). The crash report goes nowhere (``-XX:ErrorFile=/dev/null``), not
    into the current directory. Takes 0.05-0.07 s for a 64 MB archive (2 cores, JDK 17)."""
    argv = [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-XX:ErrorFile=/dev/null",
            "-XX:-CreateCoredumpOnCrash", "-cp", classpath, "-version"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=MAPS_TIMEOUT, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
