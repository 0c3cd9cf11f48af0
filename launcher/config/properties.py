"""Hadoop property names: which ``*-site.xml`` a key belongs in, and which keys the runtime knows.

The runtime's own ``*-default.xml`` files (inside its jars: ``core-default.xml`` in hadoop-common,
``hdfs-default.xml`` in hadoop-hdfs, ``mapred-default.xml`` in hadoop-mapreduce-client-core,
``yarn-default.xml`` in hadoop-yarn-common) list every property Hadoop reads with a default. ``-D key=value``
on the command line goes to the file whose defaults name the key (else by prefix: :func:`config_file_for`);
a key that no ``*-default.xml`` names gets a warning with the nearest known key (a typo such as
``mapreduce.map.memroy.mb`` is silently ignored by Hadoop), wherever it was given: the ``-D`` option,
``hadoop.properties.<file>``, a Hadoop step's ``properties:`` or a ``-D`` among its ``args:``
(:meth:`launcher.config.spec.JobSpec.property_names`); the warning names that place.

Keys of families that have no defaults file are exempt (:data:`EXEMPT_PREFIXES`): ``hpc.`` (ours),
``yarn.scheduler.capacity.`` (capacity-scheduler.xml), ``fs.pfs.`` (hadoop-fs-shim), per-scheme
``fs.<scheme>.impl`` keys, and ``hadoop.proxyuser.``/``hadoop.security.auth_to_local``-style families.
"""

from __future__ import annotations

import difflib
import functools
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from launcher.config.spec import JobSpec

#: ``*-default.xml`` inside the jars → the ``hadoop.properties`` file its keys belong in.
DEFAULTS_FILES = {"core-default.xml": "core-site", "hdfs-default.xml": "hdfs-site",
                  "mapred-default.xml": "mapred-site", "yarn-default.xml": "yarn-site"}
#: Key prefixes that no ``*-default.xml`` lists but Hadoop or we read; never warned about.
EXEMPT_PREFIXES = ("hpc.", "yarn.scheduler.capacity.", "fs.pfs.", "fs.AbstractFileSystem.", "hadoop.proxyuser.",
                   "mapreduce.job.counters.", "yarn.nodemanager.aux-services.", "dfs.namenode.rpc-address.",
                   "dfs.ha.", "yarn.resourcemanager.ha.", "ipc.")
#: Keys Hadoop 3 reads that no ``*-default.xml`` lists (e.g. ``MRJobConfig.SHUFFLE_FETCH_FAILURES``).
KNOWN_WITHOUT_DEFAULT = frozenset({"mapreduce.reduce.shuffle.maxfetchfailures"})
#: Where a key no ``*-default.xml`` knows goes, by prefix (first match); anything else is ``core-site``.
PREFIX_FILES = (("yarn.scheduler.capacity.", "capacity-scheduler"), ("yarn.", "yarn-site"),
                ("mapreduce.", "mapred-site"), ("mapred.", "mapred-site"), ("dfs.", "hdfs-site"))


def _jars(home: Path) -> list[Path]:
    """The Hadoop jars of a runtime (``lib/``) or a site install (``share/hadoop/*/``), tests jars excluded."""
    dirs = [home / "lib", *(home / "share" / "hadoop" / sub for sub in ("common", "hdfs", "mapreduce", "yarn"))]
    return [jar for d in dirs if d.is_dir() for jar in sorted(d.glob("hadoop-*.jar"))
            if not jar.name.endswith(("-tests.jar", "-sources.jar"))]


@functools.lru_cache(maxsize=4)
def known_properties(home: str) -> dict[str, str]:
    """Every key of the ``*-default.xml`` files in the Hadoop install at ``home``: key → ``*-site`` file.

    Returns an empty mapping when ``home`` has no such jars (nothing is then warned about). Unreadable jars
    are skipped.
    """
    known: dict[str, str] = {}
    for jar in _jars(Path(home)):
        try:
            with zipfile.ZipFile(jar) as archive:
                for name in set(archive.namelist()) & set(DEFAULTS_FILES):
                    root = ElementTree.fromstring(archive.read(name))
                    for prop in root.iter("property"):
                        key = (prop.findtext("name") or "").strip()
                        if key:
                            known.setdefault(key, DEFAULTS_FILES[name])
        except (OSError, zipfile.BadZipFile, ElementTree.ParseError):
            continue
    return known


def runtime_home(explicit: str | None) -> str | None:
    """The Hadoop install whose defaults are read: ``hadoop.home``, else as
    :func:`launcher.runtime.hadoop.find_hadoop_home`;
    ``None`` when there is none (no warnings then)."""
    from launcher.runtime.hadoop import find_hadoop_home
    from launcher.util.errors import UserError

    try:
        home = find_hadoop_home(os.path.expandvars(os.path.expanduser(explicit)) if explicit else None)
    except UserError:
        return None
    return str(home)


def config_file_for(key: str, known: dict[str, str]) -> str:
    """The ``hadoop.properties`` file for ``key``: the one whose ``*-default.xml`` lists it, else by prefix
    (:data:`PREFIX_FILES`), else ``core-site`` (read by every daemon and client)."""
    if key in known:
        return known[key]
    return next((file for prefix, file in PREFIX_FILES if key.startswith(prefix)), "core-site")


def exempt(key: str) -> bool:
    """True for keys of families with no ``*-default.xml`` (:data:`EXEMPT_PREFIXES`, ``fs.<scheme>.impl``) and
    the few keys Hadoop reads without a default entry (:data:`KNOWN_WITHOUT_DEFAULT`)."""
    return (key in KNOWN_WITHOUT_DEFAULT or key.startswith(EXEMPT_PREFIXES)
            or (key.startswith("fs.") and key.endswith(".impl")))


def property_warnings(spec: JobSpec, defines: Sequence[str] = ()) -> list[str]:
    """:func:`unknown_property_warnings` for every Hadoop property name of ``spec``
    (:meth:`launcher.config.spec.JobSpec.property_names`) against the runtime it will use; ``defines``: the
    ``-D KEY=VALUE`` options it was loaded with."""
    home = runtime_home(spec.hadoop.home)
    known = known_properties(home) if home else {}
    return unknown_property_warnings(spec.property_names(defines), known)


def defines_in_args(args: Sequence[str]) -> list[str]:
    """The keys of Hadoop's generic ``-D`` options among a program's arguments, as ``GenericOptionsParser`` reads
    them: ``-D key=value`` (two arguments) and ``-Dkey=value``."""
    keys = []
    for i, arg in enumerate(args):
        if arg == "-D" and i + 1 < len(args):
            keys.append(args[i + 1].partition("=")[0].strip())
        elif arg.startswith("-D") and len(arg) > 2:
            keys.append(arg[2:].partition("=")[0].strip())
    return [key for key in keys if key]


def unknown_property_warnings(properties: Mapping[str, Iterable[str]], known: dict[str, str]) -> list[str]:
    """One warning per key the runtime does not know, with the nearest known key (``difflib``).

    Args:
        properties: ``{where: keys}``: where the keys were given (``-D``, ``hadoop.properties.mapred-site``,
            ``steps.1.properties``...: :meth:`launcher.config.spec.JobSpec.property_names`).
        known: :func:`known_properties` of the runtime (empty: no warnings).

    Returns:
        Lines such as ``hadoop.properties.mapred-site: unknown Hadoop property mapreduce.map.memroy.mb
        (no *-default.xml of the runtime names it): did you mean mapreduce.map.memory.mb?``.
    """
    if not known:
        return []
    warnings = []
    for where, keys in properties.items():
        for key in keys:
            if key in known or exempt(key):
                continue
            close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
            hint = f": did you mean {close[0]}?" if close else ": Hadoop ignores unknown keys; check the spelling"
            warnings.append(f"{where}: unknown Hadoop property {key} "
                            f"(no *-default.xml of the runtime names it){hint}")
    return warnings
