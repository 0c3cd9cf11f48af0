"""``hpc-hadoop runtime install`` (launcher/runtime/install.py): issue 26 item 5, the Hadoop runtime of an install
from a wheel. The real Maven build is run by hand (it downloads ~100 MB on a first run); here a fake ``mvn`` that
lays out what the pom's ``package`` does, and complete prefixes that must be left untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.runtime import install as runtime_install
from launcher.util.errors import UserError
from launcher.util.resources import shim_project_dir
from tests.conftest import REPO

VERSION = runtime_install.pinned_version(shim_project_dir() / "pom.xml")
JARS = (f"hadoop-common-{VERSION}.jar", f"hadoop-mapreduce-examples-{VERSION}.jar",
        f"hadoop-mapreduce-client-jobclient-{VERSION}-tests.jar", f"hadoop-streaming-{VERSION}.jar",
        "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar")


def _complete(home: Path) -> Path:
    """A runtime at ``home`` with the files :func:`runtime_install.missing` checks (empty jars)."""
    (home / "lib").mkdir(parents=True)
    (home / "extra-classpath" / "webapps").mkdir(parents=True)
    (home / "VERSION").write_text(f"{VERSION}\n")
    for name in JARS:
        (home / "lib" / name).write_bytes(b"")
    return home


def _tree(root: Path) -> dict[str, float]:
    """Every path under ``root`` with its modification time (ns)."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


def test_the_pinned_version_is_the_checkouts_runtime() -> None:
    built = REPO / "hadoop-fs-shim" / "target" / "hadoop-runtime"
    assert VERSION == (built / "VERSION").read_text().strip()
    assert runtime_install.missing(built, VERSION) == []  # what install.sh built counts as complete


def test_missing_names_what_an_incomplete_runtime_lacks(tmp_path: Path) -> None:
    home = _complete(tmp_path / "hadoop")
    (home / "lib" / JARS[3]).unlink()
    (home / "VERSION").write_text("3.3.6\n")
    assert runtime_install.missing(home, VERSION) == [f"VERSION {VERSION}", f"lib/hadoop-streaming-{VERSION}.jar"]


def test_a_complete_runtime_is_up_to_date_and_nothing_is_rewritten(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    _complete(prefix / "hadoop")
    before = _tree(prefix)
    result = runtime_install.install(prefix, mvn=str(tmp_path / "no-mvn"))  # Maven is not even looked for
    assert result == runtime_install.InstallResult(home=prefix / "hadoop", version=VERSION, changed=False)
    assert _tree(prefix) == before


def test_cli_says_up_to_date(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    _complete(prefix / "hadoop")
    before = _tree(prefix)
    result = CliRunner().invoke(main, ["runtime", "install", "--prefix", str(prefix), "--no-spark", "--no-archives"])
    assert result.exit_code == 0, result.output
    assert f"Hadoop {VERSION} runtime in {prefix / 'hadoop'}: up to date" in result.output
    assert f"Spark 4.1.1 in {prefix / 'spark' / 'pyspark'}: skipped (--no-spark; not there)" in result.output
    assert _tree(prefix) == before


def _fake_mvn(tmp_path: Path, body: str) -> Path:
    """An ``mvn`` script: ``$runtime`` is the ``-Druntime.dir=`` it was given, ``$pom`` its ``-f``."""
    mvn = tmp_path / "bin" / "mvn"
    mvn.parent.mkdir(parents=True, exist_ok=True)
    mvn.write_text("#!/bin/sh\nfor a in \"$@\"; do case $a in -Druntime.dir=*) runtime=${a#-Druntime.dir=};; esac; "
                   "done\n" + body)
    mvn.chmod(0o755)
    return mvn


def test_an_incomplete_runtime_is_rebuilt_and_replaced_whole(tmp_path: Path) -> None:
    body = (f"mkdir -p $runtime/lib $runtime/extra-classpath && echo {VERSION} > $runtime/VERSION && "
            f"cd $runtime/lib && touch {' '.join(JARS)}\n")
    prefix = tmp_path / "prefix"
    (prefix / "hadoop" / "lib").mkdir(parents=True)
    (prefix / "hadoop" / "lib" / "stale.jar").write_bytes(b"")
    result = runtime_install.install(prefix, mvn=str(_fake_mvn(tmp_path, body)))
    assert result.changed and result.home == prefix / "hadoop"
    assert sorted(os.listdir(prefix / "hadoop" / "lib")) == sorted(JARS)
    assert os.listdir(prefix) == ["hadoop"]  # the build directory and the old runtime are gone


def test_a_failed_build_leaves_no_runtime_and_shows_mavens_output(tmp_path: Path) -> None:
    body = "mkdir -p $runtime/lib; echo 'Could not resolve dependencies: network is unreachable'; exit 1\n"
    prefix = tmp_path / "prefix"
    with pytest.raises(UserError, match="network is unreachable") as info:
        runtime_install.install(prefix, mvn=str(_fake_mvn(tmp_path, body)))
    assert "Maven Central" in str(info.value.fix)
    assert os.listdir(prefix) == []


def test_no_maven_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found on PATH") as info:
        runtime_install.install(tmp_path / "prefix", mvn=str(tmp_path / "no-mvn"))
    assert "apt-get install maven" in str(info.value.fix)
