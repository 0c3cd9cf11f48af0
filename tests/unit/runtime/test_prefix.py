"""Every part of a runtime prefix (issue 39): ``hpc-hadoop runtime install`` and ``runtime status``
(launcher/runtime/install.py, launcher/runtime/spark_install.py).

pip is a stand-in (a Python file run as ``<python> -m pip install --target DIR pyspark==V`` would be: it lays out the
files the launcher reads), since a real install downloads ~450 MB; the examples jar is built by the real ``javac``
and ``jar`` of the JDK against the checkout's real Spark (``spark-runtime/pyspark``, from ``install.sh``). The real
Maven build, pip download and training run together are run by hand (the issue's closing note) and by the EasyBuild
test. The archives' training run is not made here: ``--no-archives`` or a prefix whose runtime has none.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.runtime import jupyter_install, spark_install, staging
from launcher.runtime.install import pinned_version
from launcher.util.errors import UserError
from launcher.util.resources import SPARK_EXAMPLES_JAR, SPARK_VERSION, shim_project_dir, spark_examples_sources
from tests.conftest import REPO

VERSION = pinned_version(shim_project_dir() / "pom.xml")
CHECKOUT_SPARK = Path(os.environ.get("HPC_HADOOP_SHARE") or REPO) / "spark-runtime" / "pyspark"
SPARK_FILES = ("bin/spark-submit", f"jars/spark-core_2.13-{SPARK_VERSION}.jar", "python/lib/pyspark.zip")


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its modification time (ns) and mode."""
    return {str(p.relative_to(root)): (p.lstat().st_mtime_ns, p.lstat().st_mode) for p in sorted(root.rglob("*"))}


def _hadoop(home: Path) -> None:
    """A runtime with the files ``missing`` checks (empty jars; ``discover`` reads it, nothing runs it)."""
    (home / "lib").mkdir(parents=True)
    (home / "extra-classpath").mkdir()
    (home / "VERSION").write_text(f"{VERSION}\n")
    for name in (f"hadoop-common-{VERSION}.jar", f"hadoop-mapreduce-examples-{VERSION}.jar",
                 f"hadoop-mapreduce-client-jobclient-{VERSION}-tests.jar", f"hadoop-streaming-{VERSION}.jar",
                 "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar"):
        (home / "lib" / name).write_bytes(b"")


def _spark(home: Path) -> None:
    for name in SPARK_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")


def _stamped_jar(jar: Path) -> None:
    """A jar whose stamp says it was built from today's sources for the pinned Spark."""
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr(spark_install.STAMP, spark_install.sources_stamp(spark_examples_sources(), SPARK_VERSION))


def _fake_pip(tmp_path: Path, body: str) -> Path:
    """A ``python`` whose ``-m pip install ... --target DIR SPEC`` runs ``body`` (shell) with ``$target`` and ``$spec``;
    it records its arguments and ``$PIP_INDEX_URL`` in ``pip.args``."""
    python = tmp_path / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f"#!/bin/sh\necho \"$@\" \"index=$PIP_INDEX_URL\" > {tmp_path}/pip.args\n"
                      "while [ $# -gt 1 ]; do case $1 in --target) target=$2;; esac; shift; done; spec=$1\n" + body)
    python.chmod(0o755)
    return python


LAYOUT = "".join(f"mkdir -p $target/pyspark/{Path(name).parent} && touch $target/pyspark/{name} && "
                 for name in SPARK_FILES) + "mkdir -p $target/py4j $target/bin && touch $target/bin/spark-submit\n"


def test_spark_is_installed_by_pip_into_a_stage_and_renamed_whole(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """pip's own environment passes through (a site's mirror); what it installed is made readable by all and
    writable by the owner only whatever the umask, then renamed into ``<prefix>/spark``; an old, incomplete Spark
    there goes with the stage."""
    monkeypatch.setenv("PIP_INDEX_URL", "http://mirror.example/simple")
    prefix = tmp_path / "prefix"
    (prefix / "spark" / "pyspark").mkdir(parents=True)
    (prefix / "spark" / "stale").write_text("old\n")
    old_umask = os.umask(0o077)
    try:
        result = spark_install.install_spark(prefix, python=str(_fake_pip(tmp_path, LAYOUT)))
    finally:
        os.umask(old_umask)
    assert result == spark_install.PartResult(path=prefix / "spark" / "pyspark", changed=True)
    args = (tmp_path / "pip.args").read_text().split()
    assert args[:5] == ["-m", "pip", "install", "--no-input", "-q"] and args[-2:] == [
        f"pyspark=={SPARK_VERSION}", "index=http://mirror.example/simple"]
    staged = Path(args[args.index("--target") + 1])
    assert staged.parent.parent == prefix and staged.parent.name.startswith(".spark-install-")
    assert os.listdir(prefix) == ["spark"] and sorted(os.listdir(prefix / "spark")) == ["bin", "py4j", "pyspark"]
    assert spark_install.spark_missing(prefix / "spark" / "pyspark") == []
    for path in (prefix / "spark", *(prefix / "spark").rglob("*")):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o022 == 0 and mode & 0o444 == 0o444, (path, oct(mode))
        assert not path.is_dir() or mode & 0o111 == 0o111, (path, oct(mode))


def test_a_failed_pip_leaves_the_prefix_as_it_was(tmp_path: Path) -> None:
    python = _fake_pip(tmp_path, "mkdir -p $target/pyspark; echo 'ERROR: No matching distribution found'; exit 1\n")
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    with pytest.raises(UserError, match="No matching distribution found") as info:
        spark_install.install_spark(prefix, python=str(python))
    assert info.value.message.startswith(f"installing Spark {SPARK_VERSION} failed (exit 1): {python} -m pip")
    assert "PIP_INDEX_URL" in str(info.value.fix)
    assert os.listdir(prefix) == []


def test_a_complete_spark_is_not_reinstalled(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    _spark(prefix / "spark" / "pyspark")
    before = _tree(prefix)
    result = spark_install.install_spark(prefix, python=str(tmp_path / "no-python"))  # pip is not even run
    assert not result.changed and _tree(prefix) == before


@pytest.mark.skipif(not (CHECKOUT_SPARK / "jars").is_dir(), reason="needs the checkout's Spark (./install.sh)")
def test_the_examples_jar_is_compiled_stamped_and_rebuilt_only_for_new_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real ``javac`` and ``jar`` against the real Spark's jars: the jar holds the three examples and the stamp of
    their sources; a second build writes nothing; changed sources (a new hpc-hadoop) rebuild it."""
    from launcher.runtime.hadoop import find_java_home

    share = tmp_path / "share"
    shutil.copytree(spark_examples_sources(), share / "spark-examples" / "src")
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(share))
    prefix = tmp_path / "prefix"
    (prefix / "spark").mkdir(parents=True)
    (prefix / "spark" / "pyspark").symlink_to(CHECKOUT_SPARK)  # a complete Spark, not copied (477 MB)
    jdk = find_java_home()
    assert spark_install.jar_missing(prefix) == "not there"
    built = spark_install.install_examples_jar(prefix, jdk)
    jar = prefix / "spark" / SPARK_EXAMPLES_JAR
    assert built == spark_install.PartResult(path=jar, changed=True)
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
        stamp = archive.read(spark_install.STAMP).decode()
    assert {f"org/hpchadoop/spark/examples/{name}.class" for name in ("SparkPi", "KMeans", "TeraSort")} <= names
    assert stamp.endswith(f"\nspark {SPARK_VERSION}\n") and spark_install.jar_missing(prefix) is None
    assert sorted(os.listdir(prefix / "spark")) == [SPARK_EXAMPLES_JAR, "pyspark"]  # no build directory left
    before = _tree(prefix)
    assert not spark_install.install_examples_jar(prefix, jdk).changed and _tree(prefix) == before
    pi = share / "spark-examples" / "src" / "org" / "hpchadoop" / "spark" / "examples" / "SparkPi.java"
    pi.write_text(pi.read_text() + "\n// a new version\n")
    assert spark_install.jar_missing(prefix) == "built from other sources or for another Spark"
    assert spark_install.install_examples_jar(prefix, jdk).changed and spark_install.jar_missing(prefix) is None


def test_a_jre_cannot_build_the_jar(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    _spark(prefix / "spark" / "pyspark")
    jre = tmp_path / "jre"
    (jre / "bin").mkdir(parents=True)
    (jre / "bin" / "java").write_bytes(b"")
    with pytest.raises(UserError, match="is not a JDK") as info:
        spark_install.install_examples_jar(prefix, jre)
    assert "openjdk-17-jdk-headless" in str(info.value.fix)


def _jupyter(home: Path) -> None:
    """A JupyterLab directory with the files ``jupyter_missing`` checks and today's pins."""
    for name in jupyter_install.JUPYTER_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    (home / jupyter_install.PINS_FILE).write_text(jupyter_install.pins() + "\n")


def _complete_but_archives(prefix: Path) -> None:
    _hadoop(prefix / "hadoop")
    _spark(prefix / "spark" / "pyspark")
    _stamped_jar(prefix / "spark" / SPARK_EXAMPLES_JAR)
    _jupyter(prefix / "jupyter")


def test_status_names_every_part_and_a_second_install_writes_nothing(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    _complete_but_archives(prefix)
    before = _tree(prefix)
    runner = CliRunner()
    status = runner.invoke(main, ["runtime", "status", "--prefix", str(prefix), "--no-archives"])
    assert status.exit_code == 0, status.output
    cds = prefix / "hadoop" / "cds"
    assert status.stdout.splitlines() == [
        f"Hadoop {VERSION} runtime in {prefix / 'hadoop'}: up to date",
        f"Spark {SPARK_VERSION} in {prefix / 'spark' / 'pyspark'}: up to date",
        f"Spark examples jar {prefix / 'spark' / SPARK_EXAMPLES_JAR}: up to date",
        f"JupyterLab ({jupyter_install.pins()}) in {prefix / 'jupyter'}: up to date",
        f"class-data-sharing archives in {cds}: skipped (--no-archives; not built yet)"]
    again = runner.invoke(main, ["runtime", "install", "--prefix", str(prefix), "--no-archives"])
    assert again.exit_code == 0, again.output
    assert again.stdout == status.stdout  # nothing to do: the same lines, no build notes
    assert _tree(prefix) == before

    # Without --no-archives the archives are a missing part: exit 1, one line naming it and the fix.
    missing = runner.invoke(main, ["runtime", "status", "--prefix", str(prefix)])
    assert missing.exit_code == 1
    assert f"class-data-sharing archives in {cds}: missing (not built yet)" in missing.stdout
    assert missing.stderr == (f"error: {prefix} lacks class-data-sharing archives "
                              f"(fix: hpc-hadoop runtime install --prefix {prefix})\n")
    assert _tree(prefix) == before


def test_status_of_an_empty_prefix_and_its_json(tmp_path: Path) -> None:
    prefix = tmp_path / "empty"
    result = CliRunner().invoke(main, ["runtime", "status", "--prefix", str(prefix), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["prefix"] == str(prefix) and report["complete"] is False
    assert [(p["name"], p["state"], p["detail"]) for p in report["parts"]] == [
        ("Hadoop runtime", "missing", "not there"), ("Spark", "missing", "not there"),
        ("Spark examples jar", "missing", "not there; needs Spark"), ("JupyterLab", "missing", "not there"),
        ("class-data-sharing archives", "missing", "needs the Hadoop runtime")]
    assert result.stderr == (f"error: {prefix} lacks Hadoop runtime, Spark, Spark examples jar, JupyterLab, "
                             f"class-data-sharing archives (fix: hpc-hadoop runtime install --prefix {prefix})\n")
    assert not prefix.exists()  # status makes nothing


def test_install_goes_on_past_a_failed_part_and_exits_1_naming_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """pip fails (here: this interpreter's pip is a stand-in that fails): the Hadoop runtime was there, the jar needs
    Spark, so the closing line names Spark and the jar with pip's fix; the prefix keeps only what it had."""
    prefix = tmp_path / "prefix"
    _hadoop(prefix / "hadoop")
    failing = _fake_pip(tmp_path, "echo 'ERROR: Could not find a version that satisfies pyspark'; exit 1\n")
    monkeypatch.setattr(staging.sys, "executable", str(failing))
    result = CliRunner().invoke(main, ["runtime", "install", "--prefix", str(prefix), "--no-archives"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Hadoop {VERSION} runtime in {prefix / 'hadoop'}: up to date"
    assert lines[1].startswith(f"installing Spark {SPARK_VERSION} into {prefix / 'spark'}")
    assert lines[2].startswith(f"Spark {SPARK_VERSION} in {prefix / 'spark' / 'pyspark'}: failed: installing Spark")
    assert "Could not find a version" in result.stdout
    assert f"Spark examples jar {prefix / 'spark' / SPARK_EXAMPLES_JAR}: missing (not there; needs Spark)" in lines
    assert result.stderr.startswith(f"error: {prefix} lacks Spark, Spark examples jar, JupyterLab (fix: check access "
                                    "to PyPI")
    assert result.stderr.count("\n") == 1
    assert sorted(os.listdir(prefix)) == ["hadoop"]


def test_jupyterlab_is_installed_by_pip_with_its_pins_and_not_again(tmp_path: Path) -> None:
    """JupyterLab's part: pip's ``--target`` with the pins (:data:`launcher.util.resources.JUPYTER_REQUIREMENTS`),
    staged and renamed whole, the pins kept beside it; complete, it is not installed again; other pins reinstall it."""
    from launcher.util.resources import JUPYTER_REQUIREMENTS

    prefix = tmp_path / "prefix"
    layout = "".join(f"mkdir -p $target/{Path(name).parent} && touch $target/{name} && "
                     for name in jupyter_install.JUPYTER_FILES) + "true\n"
    python = _fake_pip(tmp_path, layout)
    result = jupyter_install.install_jupyter(prefix, python=str(python))
    assert result == spark_install.PartResult(path=prefix / "jupyter", changed=True)
    args = (tmp_path / "pip.args").read_text()
    assert "--target" in args and all(pin in args for pin in JUPYTER_REQUIREMENTS)
    assert jupyter_install.jupyter_missing(prefix / "jupyter", pinned=True) == []
    assert sorted(os.listdir(prefix)) == ["jupyter"]  # no stage left
    assert not jupyter_install.install_jupyter(prefix, python=str(tmp_path / "no-python")).changed
    (prefix / "jupyter" / jupyter_install.PINS_FILE).write_text("jupyterlab==0.1\n")
    assert jupyter_install.jupyter_missing(prefix / "jupyter", pinned=True) == ["other pins"]


def test_install_sh_pins_the_same_jupyterlab() -> None:
    """install.sh installs JupyterLab from the same pins into jupyter-runtime/ (what discover_jupyter finds first)."""
    script = (REPO / "install.sh").read_text()
    assert "from launcher.util.resources import JUPYTER_REQUIREMENTS" in script
    assert "--target jupyter-runtime" in script and jupyter_install.PINS_FILE in script


def test_install_sh_pins_the_same_spark_and_jar_name() -> None:
    """A checkout's Spark (install.sh) and a prefix's (runtime install) are one vocabulary: version, layout, jar."""
    script = (REPO / "install.sh").read_text()
    assert f"spark_version={SPARK_VERSION}\n" in script
    assert f"examples_jar=spark-runtime/{SPARK_EXAMPLES_JAR}\n" in script
    assert "--target spark-runtime" in script  # spark-runtime/pyspark, as <prefix>/spark/pyspark


def test_an_interpreter_that_cannot_run_is_a_user_error(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    with pytest.raises(UserError, match="cannot run"):
        spark_install.install_spark(prefix, python=sys.executable + "-no-such-interpreter")
    assert os.listdir(prefix) == []


def test_installing_into_the_user_prefix_warns_when_the_site_has_a_runtime(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: a user's own ``runtime install`` shadows the site's runtime and its archives; it says so."""
    from launcher.util import resources

    site = tmp_path / "venv" / "share" / "hpc-hadoop" / "runtime"
    _hadoop(site / "hadoop")
    monkeypatch.setattr(resources, "site_prefix", lambda: site)
    _complete_but_archives(resources.user_prefix())
    result = CliRunner().invoke(main, ["runtime", "install", "--no-archives"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"warning: the site prefix {site} has a runtime; yours in {resources.user_prefix()} will "
                             "be used instead of it and its class-data-sharing archives (`hpc-hadoop runtime status "
                             "--site` shows it)\n")
    assert CliRunner().invoke(main, ["runtime", "install", "--site", "--no-spark", "--no-archives"]).stderr == ""


def test_a_prefix_is_made_one_level_at_a_time_and_a_level_another_user_made_is_refused(tmp_path: Path) -> None:
    """``runtime install --prefix /tmp/x`` (and the site archive directory): each level made 0755 and checked to be
    ours; one a neighbour made first, or a link, is refused in one line, and nothing is made in it."""
    import os

    import pytest

    from launcher.runtime.staging import make_shared_dir
    from launcher.util.errors import UserError

    made = tmp_path / "a" / "b"
    make_shared_dir(made, field="--prefix")
    assert all(os.stat(p).st_mode & 0o777 == 0o755 for p in (tmp_path / "a", made))
    make_shared_dir(made, field="--prefix")  # there already, ours: fine
    squatted = tmp_path / "squat"
    squatted.mkdir(mode=0o777)
    os.chmod(squatted, 0o777)
    with pytest.raises(UserError, match="squat is writable by others without the sticky bit"):
        make_shared_dir(squatted / "prefix", field="--prefix")
    assert not (squatted / "prefix").exists()
    (squatted / "hers").mkdir()
    os.chown(squatted / "hers", 65534, 65534)  # nobody's: a neighbour's
    with pytest.raises(UserError, match="hers"):
        make_shared_dir(squatted / "hers", field="--prefix")
    os.chmod(squatted, 0o1777)  # a sticky scratch, as /tmp: the levels below it are ours
    make_shared_dir(squatted / "mine" / "prefix", field="--prefix")
    assert os.stat(squatted / "mine").st_uid == os.getuid()
    (tmp_path / "link").symlink_to(made)
    with pytest.raises(UserError, match="link"):  # the prefix itself a link: never followed
        make_shared_dir(tmp_path / "link", field="--prefix")


def test_two_installs_into_one_prefix_take_turns(tmp_path: Path) -> None:
    """Issue 39's leftover: a second ``runtime install`` into a prefix waits for the first (saying so) instead of
    building every part beside it; the lock adds nothing to the prefix."""
    import fcntl
    import threading

    from launcher.runtime.staging import install_lock

    prefix = tmp_path / "prefix"
    said: list[str] = []
    entered = threading.Event()

    def second() -> None:
        with install_lock(prefix, say=said.append):
            entered.set()

    with install_lock(prefix):
        other = threading.Thread(target=second)
        other.start()
        assert not entered.wait(0.5)  # held: the second waits
        assert said == [f"waiting for another runtime install into {prefix} to finish"]
    other.join(timeout=10)
    assert entered.is_set()
    fd = os.open(prefix, os.O_RDONLY)
    try:  # released: free for anyone
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert list(prefix.iterdir()) == []
