"""An install from a wheel, outside the checkout, used by an ordinary user (issue 26 item 5): real ``pip wheel``,
a fresh venv from Debian's ``/usr/bin/python3``, the non-root user ``hhcarol``.

The wheel must carry the templates, the site presets and the shim (``launcher/resources.py``): with no runtime,
``render`` fails in one line naming ``hpc-hadoop runtime install``; with the checkout's runtime put in carol's user
prefix (where ``runtime install`` puts one; its Maven build is not run here, it downloads ~100 MB; nor Spark's pip
install, ~450 MB), ``render``,
``doctor`` and ``sites`` run, and nothing ``render`` writes names the checkout but the runtime's jars.

Its word count (a cluster of its own until issue 38) is tests/integration/test_site.py's: the EasyBuild install is
this wheel too, outside the checkout, and an ordinary user counts words with it, exactly, nothing left running.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop

TEXT = "the quick brown fox jumps over the lazy dog\nthe dog sleeps\n" * 50


def _ok(proc: subprocess.CompletedProcess[str], what: str) -> str:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _venv_with_the_wheel(base: Path, runtime: Path) -> Path:
    """Build the wheel from a copy of the checkout (setuptools leaves ``build/`` in the tree it builds) with the
    built shim jar, and install it into a new venv under ``base``; returns the venv."""
    source = base / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "target", "spark-runtime", "build", "*.egg-info", "__pycache__", ".*_cache", "runs"))
    (jar,) = (p for p in (runtime / "lib").glob("hpc-hadoop-fs-shim-*.jar"))
    (source / "hadoop-fs-shim" / "target").mkdir()
    shutil.copy2(jar, source / "hadoop-fs-shim" / "target" / jar.name)
    wheels = base / "wheels"
    _ok(subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "-w", str(wheels), "--no-deps", "-q"],
                       capture_output=True, text=True, timeout=300, check=False), "pip wheel")
    (wheel,) = wheels.glob("hpc_hadoop-*.whl")
    venv = base / "venv"
    _ok(subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120,
                       check=False), "python3 -m venv")
    _ok(subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                       capture_output=True, text=True, timeout=600, check=False), "pip install <wheel>")
    return venv


def _runtime_install_is_up_to_date(user: TestUser, hpc_hadoop: str, env: dict[str, str], prefix: Path) -> None:
    """``runtime install`` in ``user``'s prefix holding a complete Hadoop runtime says it is up to date; ``status``
    says Spark is missing (exit 1, one line). Spark (~450 MB from PyPI) and the archives' training run are left
    out: the EasyBuild test installs every part for real; the runtime here is the checkout's, whose archives are not
    the user's to build."""
    up_to_date = _ok(user.run([hpc_hadoop, "runtime", "install", "--no-spark", "--no-archives"], env=env),
                     "runtime install")
    said = " ".join(up_to_date.split())
    assert "Hadoop 3.4.2 runtime in " + str(prefix / "hadoop") + ": up to date" in said
    assert "Spark 4.1.1 in " + str(prefix / "spark" / "pyspark") + ": skipped (--no-spark; not there)" in said
    status = user.run([hpc_hadoop, "runtime", "status"], env=env)
    assert status.returncode == 1 and status.stderr.count("\n") == 1, status
    assert status.stderr.startswith(f"error: {prefix} lacks Spark, Spark examples jar"), status.stderr


def test_wheel_outside_the_checkout_renders_and_checks(hadoop_runtime: Path) -> None:
    carol = make_user("hhcarol")
    base = shared_base("hh-wheel")
    try:
        venv = _venv_with_the_wheel(base, hadoop_runtime)
        home = user_dir(base, carol)
        env = {"XDG_DATA_HOME": str(home / "data"), "XDG_STATE_HOME": str(home / "state"),
               "XDG_CACHE_HOME": str(home / "cache")}
        hpc_hadoop = str(venv / "bin" / "hpc-hadoop")
        # The package and its data come from the venv, not from the checkout.
        where = carol.run([str(venv / "bin" / "python"), "-c", "from launcher.util import resources as r; "
                           "print(r.__file__, r.templates_dir(), r.site_configs_dir(), r.packaged_shim_jar(), "
                           "r.checkout(), r.spark_examples_sources())"], env=env)
        module, templates, sites, jar, checkout, spark_sources = _ok(where, "launcher.util.resources").split()
        package = Path(module).parents[1]
        assert package.is_relative_to(venv) and checkout == "None"
        assert (templates, sites) == (str(package / "_data" / "templates"), str(package / "_data" / "site_configs"))
        # what `runtime install` compiles the Spark examples jar from
        assert Path(spark_sources) == package / "_data" / "spark_examples" / "src" and \
            Path(spark_sources, "org/hpchadoop/spark/examples/SparkPi.java").is_file()
        assert Path(jar).parent == package / "_data" / "shim" / "target" and Path(jar).is_file()
        words = home / "words.txt"
        words.write_text(TEXT)
        carol.own(words, 0o600)
        job = home / "wc.yaml"
        job.write_text(yaml.safe_dump({
            "name": "wheel-wc", "scheduler": "local", "walltime": "00:20:00", "filesystem": {"root": str(home)},
            "hadoop": SMALL,
            "steps": [{"example": "wordcount", "args": [str(words), "${run_dir}/output/wordcount"]}]}))
        carol.own(job, 0o600)

        # No runtime anywhere: one line naming the fix; the places looked in are carol's and the venv's only.
        missing = carol.run([hpc_hadoop, "render", str(job)], env=env)
        assert missing.returncode == 2
        assert missing.stderr.count("\n") == 1 and "fix: run `hpc-hadoop runtime install`" in missing.stderr
        assert str(home / "data" / "hpc-hadoop" / "runtime" / "hadoop") in missing.stderr
        assert str(venv / "share" / "hpc-hadoop" / "runtime" / "hadoop") in missing.stderr
        assert "site-packages" not in missing.stderr

        # The runtime provided in carol's user prefix, where `hpc-hadoop runtime install` puts it.
        prefix = home / "data" / "hpc-hadoop" / "runtime"
        prefix.mkdir(parents=True)
        (prefix / "hadoop").symlink_to(hadoop_runtime)
        shutil.chown(home / "data", carol.uid, carol.gid)
        for part in (prefix.parent, prefix):
            shutil.chown(part, carol.uid, carol.gid)
        _runtime_install_is_up_to_date(carol, hpc_hadoop, env, prefix)

        rendered = _ok(carol.run([hpc_hadoop, "render", str(job)], env=env), "render")
        assert "==> conf/core-site.xml <==" in rendered and "==> conf/yarn-site.xml <==" in rendered
        doctor = _ok(carol.run([hpc_hadoop, "doctor", str(job)], env=env), "doctor")
        assert "ok hadoop runtime" in " ".join(doctor.split())
        sites = _ok(carol.run([hpc_hadoop, "sites"], env=env), "sites")
        assert "generic-lustre" in sites

        # Nothing rendered names the checkout but the runtime's jars (a template or preset read from it would).
        assert str(REPO) not in rendered.replace(str(hadoop_runtime), ""), [
            line for line in rendered.splitlines() if str(REPO) in line.replace(str(hadoop_runtime), "")][:5]
    finally:
        shutil.rmtree(base, ignore_errors=True)
