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
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from launcher.runtime.cds import SITE_ENV, jar_entries, maps, site_root
from launcher.runtime.hadoop import HadoopRuntime, discover, find_java_home
from launcher.runtime.staging import make_shared_dir, publish, replace_dir, run_tool
from launcher.util.errors import HpcHadoopError, UserError
from launcher.util.resources import HADOOP_SUBDIR, SHIM_JAR_GLOB, SPARK_VERSION, shim_project_dir
from launcher.util.states import State

#: The pom's XML namespace (``<project xmlns=...>``).
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
#: A build downloads about 180 jars (~100 MB) on its first run; seconds before it is given up.
MVN_TIMEOUT_S = 3600


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
    make_shared_dir(prefix, field="--prefix")
    with tempfile.TemporaryDirectory(prefix=".hadoop-install-", dir=prefix) as tmp:
        work = Path(tmp)
        built = _build(maven, project, work)
        lacking = missing(built, version)
        if lacking:
            raise UserError(f"the built runtime in {built} lacks {', '.join(lacking)}", fix="report this as a bug")
        publish(built)
        replace_dir(home, built, work)
    return InstallResult(home=home, version=version, changed=True)


def _build(maven: str, project: Path, work: Path) -> Path:
    """Run ``mvn package`` on a copy of the shim project (``pom.xml`` + ``src/main``) in ``work``; returns the
    assembled runtime, ``work/hadoop``.

    Raises:
        UserError: Maven failed or timed out (the last lines of its output in the message: :func:`run_tool`).
    """
    copy = work / "project"
    (copy / "src").mkdir(parents=True)
    shutil.copy2(project / "pom.xml", copy / "pom.xml")
    shutil.copytree(project / "src" / "main", copy / "src" / "main")
    runtime = work / HADOOP_SUBDIR
    argv = [maven, "-B", "-q", "-f", str(copy / "pom.xml"), "package", "-DskipTests", f"-Druntime.dir={runtime}"]
    run_tool(argv, work / "mvn.log", MVN_TIMEOUT_S, what="building the Hadoop runtime",
             fix="check access to Maven Central (or a mirror in ~/.m2/settings.xml) and the JDK")
    return runtime


# -- every part of a prefix: ``runtime install`` and ``runtime status`` ----------------------------------------------

class PartState(State):
    """A part of a runtime prefix (:class:`Part`): in place (``installed``, ``built`` now, or ``up to date``),
    ``skipped`` (not asked for and not there), ``not applicable`` (archives under a JDK < 13 or with
    ``$HPC_HADOOP_CDS_SITE`` empty), or not in place (``missing``, ``failed``: the prefix is incomplete)."""

    INSTALLED = "installed"
    BUILT = "built"
    UP_TO_DATE = "up to date"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "not applicable"
    MISSING = "missing"
    FAILED = "failed"

    @property
    def complete(self) -> bool:
        """False for ``missing`` and ``failed``."""
        return self not in (PartState.MISSING, PartState.FAILED)

    @property
    def present(self) -> bool:
        """The part is there: ``installed``, ``built`` or ``up to date``."""
        return self in (PartState.INSTALLED, PartState.BUILT, PartState.UP_TO_DATE)


@dataclass(frozen=True)
class Part:
    """One part of a runtime prefix and its state, one line of ``runtime install`` and ``runtime status``.

    Attributes:
        name: the part, as the closing line names it: ``Hadoop runtime``, ``Spark``, ``Spark examples jar``,
            ``class-data-sharing archives``.
        label: the start of its line, naming where it is, e.g. ``Hadoop 3.4.2 runtime in /p/hadoop``.
        path: where it is (or goes).
        state: its :class:`PartState`.
        detail: what is missing, why it failed, was skipped or does not apply; ``""`` when nothing is to be said.
        fix: what to do about a missing or failed part.
    """

    name: str
    label: str
    path: Path
    state: PartState
    detail: str = ""
    fix: str | None = None

    @property
    def complete(self) -> bool:
        """False when the part is missing or failed."""
        return self.state.complete

    def line(self) -> str:
        """The terminal line: ``<label>: <state>``, the detail after it (a failure's may span lines: a tool's
        output)."""
        if not self.detail:
            return f"{self.label}: {self.state}"
        return f"{self.label}: {self.state}: {self.detail}" if self.state is PartState.FAILED else \
            f"{self.label}: {self.state} ({self.detail})"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form (``runtime status --json``)."""
        return {"name": self.name, "path": str(self.path), "state": str(self.state), "complete": self.complete,
                "detail": self.detail, "fix": self.fix}


def prefix_parts(prefix: Path, *, build: bool, spark: bool = True, archives: bool = True, command: str,
                 say: Callable[[str], None] = lambda line: None) -> list[Part]:
    """Every part of ``prefix``, in order: the Hadoop runtime, Spark, our Spark examples jar, JupyterLab
    (:mod:`launcher.runtime.jupyter_install`: ``hpc-hadoop notebook``), the class-data-sharing archives of that
    runtime; each one installed first when ``build`` is true and it is not complete (a part that is complete is not
    touched: a second run writes nothing). A part that fails does not stop the ones that do not need
    it (the archives need the runtime; the jar needs Spark).

    Args:
        prefix: the runtime prefix.
        build: install what is missing (``runtime install``); otherwise only look (``runtime status``).
        spark: Spark, the examples jar and JupyterLab are wanted (``--no-spark``: looked at, not installed,
            ``skipped`` when not there).
        archives: the archives are wanted (``--no-archives``: likewise).
        command: the command that installs the missing parts, for the fixes (``hpc-hadoop runtime install --site``).
        say: called with each part's :meth:`Part.line` as soon as it is known, and with a note before a long build.

    Raises:
        UserError: the package is broken (the shim's pom pins no version; no Spark examples sources).
    """
    from launcher.runtime import spark_install

    def settle(part: Part, why: str | None, *, wanted: bool, flag: str, needs: str | None, note: str | None,
               action: Callable[[], bool], made: PartState) -> Part:
        """``part`` up to date (``why`` is None), else missing or skipped (not built, or what it ``needs`` is not
        there), else built by ``action`` (True: it changed; then its state is ``made``)."""
        if why is None:
            result = part
        elif not (build and wanted) or needs:
            detail = f"{why}; needs {needs}" if needs else why
            result = replace(part, state=PartState.MISSING, detail=detail, fix=command) if wanted else \
                replace(part, state=PartState.SKIPPED, detail=f"{flag}; {detail}")
        else:
            if note:
                say(note)
            try:
                result = replace(part, state=made if action() else PartState.UP_TO_DATE)
            except (UserError, OSError) as exc:
                result = _failed(part, exc, prefix)
        say(result.line())
        return result

    version = pinned_version(shim_project_dir() / "pom.xml")
    home = prefix / HADOOP_SUBDIR
    lacking = missing(home, version) if home.is_dir() else ["not there"]
    hadoop = settle(Part("Hadoop runtime", f"Hadoop {version} runtime in {home}", home, PartState.UP_TO_DATE),
                    ", ".join(lacking) or None, wanted=True, flag="", needs=None,
                    note=f"building the Hadoop runtime into {home} (mvn package; a first run downloads ~100 MB)",
                    action=lambda: install(prefix).changed, made=PartState.INSTALLED)
    spark_home = spark_install.spark_home(prefix)
    lacking = spark_install.spark_missing(spark_home) if spark_home.is_dir() else ["not there"]
    spark_part = settle(Part("Spark", f"Spark {SPARK_VERSION} in {spark_home}", spark_home, PartState.UP_TO_DATE),
                        ", ".join(lacking) or None, wanted=spark, flag="--no-spark", needs=None,
                        note=f"installing Spark {SPARK_VERSION} into {spark_home.parent} (pip install --target; a "
                             "first run downloads ~450 MB)",
                        action=lambda: spark_install.install_spark(prefix).changed, made=PartState.INSTALLED)
    jar = spark_install.examples_jar(prefix)
    jar_part = settle(Part("Spark examples jar", f"Spark examples jar {jar}", jar, PartState.UP_TO_DATE),
                      spark_install.jar_missing(prefix), wanted=spark, flag="--no-spark",
                      needs=None if spark_part.state.present else "Spark", note=None,
                      action=lambda: spark_install.install_examples_jar(prefix, find_java_home()).changed,
                      made=PartState.BUILT)
    from launcher.runtime import jupyter_install

    jupyter = jupyter_install.jupyter_home(prefix)
    lacking = jupyter_install.jupyter_missing(jupyter, pinned=True) if jupyter.is_dir() else ["not there"]
    jupyter_part = settle(Part("JupyterLab", f"JupyterLab ({jupyter_install.pins()}) in {jupyter}", jupyter,
                               PartState.UP_TO_DATE),
                          ", ".join(lacking) or None, wanted=spark, flag="--no-spark", needs=None,
                          note=f"installing JupyterLab into {jupyter} (pip install --target; a first run downloads "
                               "~60 MB)",
                          action=lambda: jupyter_install.install_jupyter(prefix).changed, made=PartState.INSTALLED)
    cds = _archives_part(prefix, hadoop, build=build, wanted=archives, command=command, say=say)
    say(cds.line())
    return [hadoop, spark_part, jar_part, jupyter_part, cds]


def _failed(part: Part, exc: UserError | OSError, prefix: Path) -> Part:
    """``part`` failed with ``exc``: a tool's error (its message and fix), or a file of the prefix that cannot be
    written."""
    if isinstance(exc, UserError):
        return replace(part, state=PartState.FAILED, detail=exc.message, fix=exc.fix)
    where = exc.filename if exc.filename is not None else prefix
    return replace(part, state=PartState.FAILED, detail=f"{where}: {exc.strerror or exc}",
                   fix=f"run it as the account that owns {prefix}, or choose a prefix you can write")


def _archives_part(prefix: Path, hadoop: Part, *, build: bool, wanted: bool, command: str,
                   say: Callable[[str], None]) -> Part:
    """The class-data-sharing archives of the prefix's runtime (:func:`launcher.runtime.cds.site_root`:
    ``<prefix>/hadoop/cds``, or ``$HPC_HADOOP_CDS_SITE``), built when ``build`` and ``wanted`` and not up to date."""
    site = prefix / HADOOP_SUBDIR / "cds"
    part = Part("class-data-sharing archives", f"class-data-sharing archives in {site}", site, PartState.MISSING,
                fix=command)
    skipped = replace(part, state=PartState.SKIPPED, detail="--no-archives")
    if not hadoop.state.present:
        return replace(part, detail="needs the Hadoop runtime") if wanted else skipped
    try:
        runtime = discover(str(hadoop.path))
    except UserError as exc:
        return replace(part, state=PartState.FAILED, detail=exc.message, fix=exc.fix) if wanted else skipped
    looked = archives_of(runtime)
    if isinstance(looked, str):
        return replace(part, state=PartState.NOT_APPLICABLE, detail=looked, fix=None)
    found, state = looked
    part = replace(part, label=f"class-data-sharing archives in {found}", path=found)
    if not state.missing:
        return replace(part, label=_archives_label(state.archives, found), state=PartState.UP_TO_DATE)
    if not (build and wanted):
        detail = "not built yet" if not state.archives else f"{', '.join(state.missing)} not there or not mapped"
        return replace(part, detail=detail) if wanted else replace(skipped, detail=f"--no-archives; {detail}")
    say(f"building the class-data-sharing archives into {found} (a training run on the local backend, ~1 min)")
    try:
        state = _cds_archives(runtime, found, build=True)
    except (OSError, RuntimeError) as exc:
        return replace(part, state=PartState.FAILED, detail=str(exc), fix=f"retry: {command}")
    if state.missing:
        return replace(part, label=_archives_label(state.archives, found), state=PartState.FAILED,
                       detail=f"the training run made no {', '.join(state.missing)}", fix=f"retry: {command}")
    return replace(part, label=_archives_label(state.archives, found), state=PartState.BUILT)


def _archives_label(archives: tuple[Path, ...], site: Path) -> str:
    """``class-data-sharing archives: N (M MiB) in SITE``."""
    return f"class-data-sharing archives: {len(archives)} ({archives_mib(archives)} MiB) in {site}"


def archives_mib(archives: tuple[Path, ...]) -> int:
    """The archives' size, MiB (rounded down)."""
    return sum(path.stat().st_size for path in archives) >> 20


@dataclass(frozen=True)
class CdsState:
    """The class-data-sharing archives of a site directory (:func:`archives_of`).

    Attributes:
        archives: the expected ones (the daemons' and the MapReduce ApplicationMaster's) in place that the JDK maps.
        missing: the names of the expected ones that are not (``resourcemanager.jsa``...).
        built: they were built now.
    """

    archives: tuple[Path, ...]
    missing: tuple[str, ...]
    built: bool


def archives_of(runtime: HadoopRuntime) -> tuple[Path, CdsState] | str:
    """Where the archives of ``runtime`` are looked for (:func:`launcher.runtime.cds.site_root`: ``<runtime>/cds``
    or ``$HPC_HADOOP_CDS_SITE``) and which are there; or why none are used (``$HPC_HADOOP_CDS_SITE`` empty, a JDK
    below 13, which cannot write them). Starts ``java -Xshare:on -version`` once per archive (~0.06 s each)."""
    site = site_root(runtime)
    if site is None or runtime.java_version < 13:
        return f"${SITE_ENV} is empty" if site is None else f"JDK {runtime.java_version} < 13"
    return site, _cds_archives(runtime, site, build=False)


def _cds_archives(runtime: HadoopRuntime, site: Path, *, build: bool) -> CdsState:
    """The daemons' and the ApplicationMaster's archives of ``runtime`` in ``site``
    (:func:`launcher.runtime.cds_build.expected`) that are there and mapped; with ``build`` (the caller found one
    missing), all of them built first (:func:`launcher.runtime.cds_build.build`: static dumps from a training run's
    class lists, retried once) and what it says is missing (the job clients' archives too).

    Raises:
        RuntimeError: the archives could not be built at all (:class:`launcher.runtime.cds_build.CdsBuildError`:
            both training runs failed; its message says why).
        OSError: ``site`` cannot be written.
    """
    from launcher.runtime import cds_build

    def look(built: bool) -> CdsState:
        jars = ":".join(jar_entries(runtime))
        expected = cds_build.expected(runtime, site)
        present = tuple(path for path in expected if path.is_file() and maps(runtime.java, path, jars))
        return CdsState(present, tuple(path.name for path in expected if path not in present), built)

    if not build:
        return look(False)
    try:  # the caller found one missing: every archive is rebuilt, as build() does whenever one is
        result = cds_build.build(runtime, site, force=True)
    except cds_build.CdsBuildError as exc:
        raise RuntimeError(str(exc)) from None
    present = tuple(path for path in cds_build.expected(runtime, site) if path.name not in result.missing)
    return CdsState(present, tuple(result.missing), True)


class PrefixIncomplete(HpcHadoopError):
    """A runtime prefix lacks parts after ``runtime install``, or at ``runtime status``: exit code 1 (not bad input;
    an install that did not finish)."""

    exit_code = 1


def incomplete(prefix: Path, parts: list[Part]) -> PrefixIncomplete | None:
    """The one-line error for a prefix whose parts (:func:`prefix_parts`) are not all complete (``None`` when they
    are): the missing and failed parts named, and their fixes."""
    bad = [part for part in parts if not part.complete]
    if not bad:
        return None
    fixes = "; ".join(dict.fromkeys(part.fix for part in bad if part.fix))
    return PrefixIncomplete(f"{prefix} lacks {', '.join(part.name for part in bad)}"
                            + (f" (fix: {fixes})" if fixes else ""))
