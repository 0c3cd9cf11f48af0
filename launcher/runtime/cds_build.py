"""Build the site's class-data-sharing archives at install time (``install.sh``; issue 25 item 5).

A user's first run writes the daemons' archives (:mod:`launcher.runtime.cds`) while it tears down, and starts without
them: on the 3-node Slurm test cluster a cold cache made bring-up 18-73 s instead of 9 s and teardown 16-19 s instead of
2 s. A site installs hpc-hadoop once for all its users, so the installer makes the archives once, for everyone::

    python -m launcher.runtime.cds_build [--force]

It runs a tiny job (a word count of one line, then a 15 s SleepJob) on the ``local`` backend with a throw-away cache
(``XDG_CACHE_HOME`` in a temporary directory, no site archive used), so that the ResourceManager, the NodeManager,
the JobHistoryServer, the MapReduce ApplicationMaster and the job client (``RunJar`` on the runtime's jars: the
``example:`` steps) write their archives as on any first run; each one the JDK maps (:func:`launcher.runtime.cds.maps`)
is then moved into ``<runtime>/cds/<key>/`` (:func:`launcher.runtime.cds.site_root`), readable by every user (files
0644, directories 0755), and key directories of an older runtime or JDK are removed. Nothing is rebuilt when every
daemon's archive for the current key is there and maps (re-running ``install.sh``); ``--force`` rebuilds.

Exit code 0 when the archives are in place (or were already), 1 with one line on stderr saying why not (the
installer then warns: runs still work, each user's first run writes their own archives, as before).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from launcher.runtime.cds import AM_ARCHIVE, AM_KEY_FLAGS, SITE_ENV, archive_key, jar_entries, maps, site_root
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.util.errors import HpcHadoopError

#: The daemons of a ``yarn``-mode cluster (the archives a site always gets).
DAEMONS = ("resourcemanager", "nodemanager", "historyserver")
#: Seconds the training run may take (measured ~40-50 s on 2 cores, cold).
TRAINING_TIMEOUT = 600.0
#: Milliseconds the second step of the training run lasts: the first ApplicationMaster's exit and archive (seen to be
#: missing when the second step was another word count, ~8 s).
AM_EXIT_WAIT_MS = 15000


def expected(runtime: HadoopRuntime, site: Path) -> list[Path]:
    """The site archives every cluster uses: the daemons' and the ApplicationMaster's, for this runtime and JDK."""
    flags = runtime.daemon_flags()
    return [*(site / archive_key(runtime, flags) / f"{name}.jsa" for name in DAEMONS),
            site / archive_key(runtime, AM_KEY_FLAGS) / AM_ARCHIVE]


def up_to_date(runtime: HadoopRuntime, site: Path) -> bool:
    """True when every archive of :func:`expected` is there and the JDK maps it."""
    jars = ":".join(jar_entries(runtime))
    return all(path.is_file() and maps(runtime.java, path, jars) for path in expected(runtime, site))


def training_job(work: Path) -> Path:
    """Write the training job (two word counts of one line, ``local`` backend, filesystem root in ``work``)."""
    text = work / "in.txt"
    text.write_text("class data sharing for every user\n")
    job = {"name": "cds-build", "scheduler": "local", "walltime": "00:10:00",
           "filesystem": {"root": str(work / "root")},
           # The first ApplicationMaster writes its archive as it exits, some 5-10 s after its job (the teardown
           # would stop its container before): the second step, a 15 s SleepJob (the suite's and benchmarks' job
           # client), gives it that time.
           "steps": [{"example": "wordcount", "args": [str(text), "${run_dir}/out"]},
                     {"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                      "args": ["-m", "1", "-r", "0", "-mt", str(AM_EXIT_WAIT_MS)]}]}
    path = work / "cds-build.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


def train(runtime: HadoopRuntime, work: Path) -> Path:
    """Run the training job with a cache in ``work``; returns that cache's ``hpc-hadoop/cds``.

    Raises:
        RuntimeError: the run failed (its output's last line says why).
    """
    cache = work / "cache"
    # The installer's own ~/.config/hpc-hadoop/config.yaml is not read (a file that is not there): the archives are
    # made with the defaults every user starts from; the runtime is the one found here.
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), SITE_ENV: "", "TMPDIR": str(work),
           "XDG_STATE_HOME": str(work / "state"), "HPC_HADOOP_CONFIG": str(work / "no-config.yaml"),
           "HPC_HADOOP_HOME": str(runtime.home)}
    argv = [sys.executable, "-m", "launcher.cli", "submit", str(training_job(work))]
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TRAINING_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the training run took more than {TRAINING_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"the training run failed (exit {done.returncode}): {last[0]}")
    return cache / "hpc-hadoop" / "cds"


def install(runtime: HadoopRuntime, built: Path, site: Path) -> list[Path]:
    """Move every archive of ``built`` (``<key>/<name>.jsa``) that the JDK maps into ``site/<key>/``, world-readable,
    and remove ``site``'s key directories that are not the current ones. Returns the archives installed."""
    jars = ":".join(jar_entries(runtime))
    installed = []
    for archive in sorted(built.glob("*/*.jsa")):
        if not maps(runtime.java, archive, jars):
            print(f"hpc-hadoop cds_build: {archive.name} does not map: not installed", file=sys.stderr)
            continue
        target = site / archive.parent.name / archive.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.parent.chmod(0o755)
        staged = target.with_name(f".{archive.name}.{os.getpid()}")
        shutil.copyfile(archive, staged)
        staged.chmod(0o644)
        os.replace(staged, target)
        installed.append(target)
    site.chmod(0o755)
    keys = {path.parent.name for path in installed} | {path.parent.name for path in expected(runtime, site)}
    for old in site.iterdir():
        if old.is_dir() and re.fullmatch(r"[0-9a-f]{16}", old.name) and old.name not in keys:
            shutil.rmtree(old, ignore_errors=True)
    return installed


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m launcher.runtime.cds_build``."""
    parser = argparse.ArgumentParser(prog="python -m launcher.runtime.cds_build", description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when the archives are up to date")
    args = parser.parse_args(argv)
    try:
        runtime = discover()
    except HpcHadoopError as exc:
        print(f"hpc-hadoop cds_build: no runtime: {exc}", file=sys.stderr)
        return 1
    site = site_root(runtime)
    if site is None or runtime.java_version < 13:
        why = f"${SITE_ENV} is empty" if site is None else "JDK < 13"
        print(f"hpc-hadoop cds_build: nothing to build ({why})")
        return 0
    if not args.force and up_to_date(runtime, site):
        print(f"hpc-hadoop cds_build: the archives in {site} are up to date")
        return 0
    began = time.monotonic()
    try:
        site.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="hpc-hadoop-cds-") as tmp:
            installed = install(runtime, train(runtime, Path(tmp)), site)
    except (OSError, RuntimeError) as exc:
        print(f"hpc-hadoop cds_build: {exc}", file=sys.stderr)
        return 1
    missing = [p.name for p in expected(runtime, site) if not p.is_file()]
    size = sum(p.stat().st_size for p in installed) >> 20
    print(f"hpc-hadoop cds_build: {len(installed)} archives ({size} MiB) in {site}, built in "
          f"{time.monotonic() - began:.0f} s" + (f"; missing: {', '.join(missing)}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
