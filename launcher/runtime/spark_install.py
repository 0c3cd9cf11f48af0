"""Spark and our Spark examples jar in a runtime prefix: two parts of ``hpc-hadoop runtime install``
(:func:`launcher.runtime.install.install_prefix`).

* **Spark**: PyPI's ``pyspark`` of the pinned version (:data:`launcher.util.resources.SPARK_VERSION`, Spark built for
  Hadoop 3: ``bin/spark-submit``, ``jars/``, ``python/lib``), installed with the running interpreter's pip
  (``python -m pip install --target``, as ``install.sh`` does into a checkout's ``spark-runtime/``) into
  ``<prefix>/spark``, so that Spark is ``<prefix>/spark/pyspark`` (where :func:`launcher.render.spark.discover_spark`
  looks). pip reads its own configuration and environment (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``:
  a site's mirror); no option of ours changes where it downloads from. About 450 MB on a first run.
* **The examples jar** (:data:`launcher.util.resources.SPARK_EXAMPLES_JAR`, beside ``pyspark/``): the sources shipped
  as package data (:func:`launcher.util.resources.spark_examples_sources`) compiled with the JDK's ``javac`` against
  that Spark's ``jars/*`` and packed with its ``jar``. The jar carries :data:`STAMP`, the digest of the sources and the
  Spark version it was compiled against, so a new hpc-hadoop with changed sources, or another Spark, rebuilds it, and
  nothing else does.

Each is built in a temporary directory inside the prefix (:mod:`launcher.runtime.staging`: modes for every user, then
renamed into place), so an interrupted install leaves no half Spark and no half jar.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

from launcher.runtime.staging import PartResult, pip_part, publish, run_tool
from launcher.util.errors import UserError
from launcher.util.resources import SPARK_EXAMPLES_JAR, SPARK_SUBDIR, SPARK_VERSION, spark_examples_sources

#: Seconds ``javac`` and ``jar`` may take (3 small classes: ~5 s on 2 cores).
JAVAC_TIMEOUT_S = 600
#: The entry of our examples jar that says what it was built from: ``sources sha256 <hex>`` and ``spark <version>``.
STAMP = "META-INF/hpc-hadoop-build.txt"


def spark_home(prefix: Path) -> Path:
    """Spark's home in ``prefix``: ``<prefix>/spark/pyspark``."""
    return prefix / SPARK_SUBDIR / "pyspark"


def examples_jar(prefix: Path) -> Path:
    """Our examples jar in ``prefix``: ``<prefix>/spark/hpc-hadoop-spark-examples.jar``."""
    return prefix / SPARK_SUBDIR / SPARK_EXAMPLES_JAR


def spark_missing(home: Path, version: str = SPARK_VERSION) -> list[str]:
    """What the Spark at ``home`` lacks to be Spark ``version`` as the launcher uses it (empty when complete):
    ``bin/spark-submit``, ``jars/spark-core_2.13-<version>.jar``, ``python/lib/pyspark.zip``."""
    return [name for name in ("bin/spark-submit", f"jars/spark-core_2.13-{version}.jar", "python/lib/pyspark.zip")
            if not (home / name).is_file()]


def install_spark(prefix: Path, *, python: str | None = None, version: str = SPARK_VERSION) -> PartResult:
    """Put PyPI's ``pyspark==version`` into ``<prefix>/spark`` unless a complete one is there.

    Args:
        prefix: the runtime prefix.
        python: the interpreter whose pip installs it; default: the running one (``sys.executable``).
        version: Spark's version.

    Raises:
        UserError: pip failed or timed out (the end of its output in the message), or what it installed is not a
            complete Spark.
        OSError: the prefix cannot be written.
    """
    home = spark_home(prefix)
    if not spark_missing(home, version):
        return PartResult(path=home, changed=False)
    pip_part(prefix, SPARK_SUBDIR, [f"pyspark=={version}"], what=f"Spark {version}", python=python,
             lacking=lambda stage: spark_missing(stage / "pyspark", version))
    return PartResult(path=home, changed=True)


def sources_stamp(sources: Path, spark_version: str) -> str:
    """The text of :data:`STAMP` for a jar built from the ``*.java`` files under ``sources`` against Spark
    ``spark_version``: the SHA-256 of their paths (relative, sorted) and contents, and the version."""
    digest = hashlib.sha256()
    for path in sorted(sources.rglob("*.java")):
        digest.update(path.relative_to(sources).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"sources sha256 {digest.hexdigest()}\nspark {spark_version}\n"


def jar_stamp(jar: Path) -> str | None:
    """The :data:`STAMP` of ``jar``, or ``None`` when it has none or is not a jar (the checkout's, which
    ``install.sh`` builds without one, a truncated file)."""
    try:
        with zipfile.ZipFile(jar) as archive:
            return archive.read(STAMP).decode()
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def jar_missing(prefix: Path, version: str = SPARK_VERSION) -> str | None:
    """Why ``prefix``'s examples jar is not up to date (``None`` when it is): not there, or built from other sources
    or against another Spark than :data:`STAMP` says it should be.

    Raises:
        UserError: the package has no sources to compare with (:func:`spark_examples_sources`).
    """
    jar = examples_jar(prefix)
    if not jar.is_file():
        return "not there"
    if jar_stamp(jar) != sources_stamp(spark_examples_sources(), version):
        return "built from other sources or for another Spark"
    return None


def install_examples_jar(prefix: Path, java_home: Path, *, version: str = SPARK_VERSION) -> PartResult:
    """Build our examples jar into ``prefix`` (beside its Spark) unless an up-to-date one is there
    (:func:`jar_missing`).

    Args:
        prefix: the runtime prefix; its Spark must be complete.
        java_home: the JDK whose ``javac`` and ``jar`` build it (the Hadoop runtime's,
            :func:`launcher.runtime.hadoop.find_java_home`).
        version: the Spark version it is compiled against.

    Raises:
        UserError: no Spark in the prefix, the JDK has no ``javac`` or ``jar`` (a JRE), or compiling failed.
        OSError: the prefix cannot be written.
    """
    jar = examples_jar(prefix)
    if jar_missing(prefix, version) is None:
        return PartResult(path=jar, changed=False)
    home = spark_home(prefix)
    if spark_missing(home, version):
        raise UserError(f"no Spark {version} in {home} to build the examples jar against",
                        fix=f"install Spark first: hpc-hadoop runtime install --prefix {prefix}")
    tools = {name: java_home / "bin" / name for name in ("javac", "jar")}
    absent = [str(path) for path in tools.values() if not path.is_file()]
    if absent:
        raise UserError(f"{java_home} is not a JDK ({' and '.join(absent)} not there): it cannot build the Spark "
                        "examples jar", fix="install a JDK 17 (apt-get install openjdk-17-jdk-headless) or point "
                                            "$JAVA_HOME at one")
    sources = spark_examples_sources()
    files = sorted(str(p) for p in sources.rglob("*.java"))
    with tempfile.TemporaryDirectory(prefix=".spark-examples-", dir=jar.parent) as tmp:
        work = Path(tmp)
        classes = work / "classes"
        (classes / "META-INF").mkdir(parents=True)
        (classes / STAMP).write_text(sources_stamp(sources, version))
        fix = "report this as a bug (javac of the Spark examples against the installed Spark)"
        run_tool([str(tools["javac"]), "-nowarn", "-d", str(classes), "-cp", f"{home / 'jars'}/*", *files],
             work / "javac.log", JAVAC_TIMEOUT_S, what="compiling the Spark examples", fix=fix)
        staged = work / jar.name
        run_tool([str(tools["jar"]), "cf", str(staged), "-C", str(classes), "."], work / "jar.log", JAVAC_TIMEOUT_S,
             what="packing the Spark examples jar", fix=fix)
        publish(staged)
        os.replace(staged, jar)
    return PartResult(path=jar, changed=True)
