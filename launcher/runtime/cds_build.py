"""Build the site's class-data-sharing archives at install time (``install.sh``; issues 25 item 5 and 39).

A user's first run writes the daemons' archives (:mod:`launcher.runtime.cds`) while it tears down, and starts without
them: on the 3-node Slurm test cluster a cold cache made bring-up 18-73 s instead of 9 s and teardown 16-19 s instead of
2 s. A site installs hpc-hadoop once for all its users, so the installer makes the archives once, for everyone::

    python -m launcher.runtime.cds_build [--force]

**How.** Archives written by the daemons as they exit (``-XX:ArchiveClassesAtExit``) depend on the teardown's grace
windows, which a loaded build host outlasts (issue 39: three of the daemons' archives missing after 149 s at load 7-20,
and the install reported ``ready``). So the archives are *static* ones, made by the JDK from a recorded class list:

1. A training run (:func:`train`): a word count of one line, then a SleepJob of one 1 s map, on the ``local`` backend
   with a throw-away cache (``XDG_CACHE_HOME`` in a temporary directory, no site archive) and
   ``$HPC_HADOOP_CDS_CLASSLIST`` set (:data:`launcher.runtime.cds.CLASSLIST_ENV`): the ResourceManager, the
   NodeManager, the JobHistoryServer, the MapReduce ApplicationMasters and the two job clients (``RunJar`` on the
   runtime's jars, the ``example:`` step; on the jobclient tests jar, the ``jar:`` step) each record the classes they
   load (``-XX:DumpLoadedClassList``, written as classes load: no exit to wait for) and a
   :class:`launcher.runtime.cds.Recipe` (the JVM flags its archive key covers, the jar classpath it starts with).
2. For each archive, a standalone dump (:func:`dump_command`): ``java <flags> -Xshare:dump
   -XX:SharedClassListFile=<list> -XX:SharedArchiveFile=<staged .jsa> -cp <jars>``, measured 4-13 s a JVM (47 s for
   the six one after another after a 24 s training run; 2 cores, ``nice -n 19``, load ~1), now :data:`DUMP_WORKERS`
   at a time; load makes it slower, never missing (:data:`DUMP_TIMEOUT`). The staged archive, once the JDK maps it
   (:func:`launcher.runtime.cds.maps`), goes to ``<site>/<key>/<name>.jsa`` (0644 in 0755 directories), where
   :func:`launcher.runtime.cds.cds_flags` and the others look for site archives; key directories of an older runtime or
   JDK are removed.
3. An archive still missing (no class list, a dump that failed or does not map) gets one more training run; then it is
   an install failure.

Nothing is rebuilt when every archive of :func:`expected` for the current key is there and maps (re-running
``install.sh``); ``--force`` rebuilds. The API for other modules is :func:`build` (:class:`BuildResult`).

Exit code 0 when the archives are in place (or were already), 1 with one line on stderr naming each missing archive
and the fix (``install.sh`` then fails), 2 when the site directory cannot be used (a symbolic link, another owner's).
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from launcher.runtime.cds import (
    AM_ARCHIVE,
    AM_KEY_FLAGS,
    CDS_FLAG_PREFIXES,
    CLASSLIST_ENV,
    SITE_ENV,
    Recipe,
    archive_key,
    jar_entries,
    maps,
    site_root,
)
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.runtime.staging import make_shared_dir
from launcher.util.errors import HpcHadoopError

#: The daemons of a ``yarn``-mode cluster (the archives a site always gets).
DAEMONS = ("resourcemanager", "nodemanager", "historyserver")
#: Seconds the training run may take (measured ~40-50 s on 2 idle cores, cold: room for a host at load 10 and more).
TRAINING_TIMEOUT = 900.0
#: Seconds one dump may take: measured 4-13 s (2 cores, load ~1); a standalone process, which load only slows down.
DUMP_TIMEOUT = 1800.0
#: Training runs at most: the first, and one more for what is still missing (issue 39).
ATTEMPTS = 2
#: Dumps run at once: each is one busy JVM thread for most of its time (the JDK's static dump loads and links the
#: class list on one thread), so up to the host's CPUs, at most 4 (a login node's build leaves the rest of it alone).
DUMP_WORKERS = max(1, min(4, os.cpu_count() or 1))
#: Milliseconds the SleepJob's one map lasts (the step is there for its job client's archive: the suite's and the
#: benchmarks' SleepJob and TestDFSIO client on the jobclient tests jar).
SLEEP_MS = 1000
#: The one-line fix a failed build names.
FIX = (f"re-run python -m launcher.runtime.cds_build --force (or ./install.sh) on a host where Hadoop runs; "
       f"{SITE_ENV}= ./install.sh installs without them")


class CdsBuildError(HpcHadoopError):
    """The archives could not be built at all: both training runs failed (the run's last line), or the site directory
    cannot be written (the ``OSError``). Exit code 1."""


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build` did.

    Attributes:
        installed: the site archives this call put in place (empty when they were up to date).
        missing: the file names (``resourcemanager.jsa``...) of the archives still not in place after
            :data:`ATTEMPTS` training runs; empty on success.
        seconds: wall time of the call (s).
        up_to_date: nothing was built: every archive was there and mapped (or the JDK is older than 13, which makes
            none).
        reasons: why each missing archive is missing (``no class list``, ``the dump exited with 1: ...``), by name.
        training_runs: how many training runs it took (0 when up to date; 2 when something was retried).
    """

    installed: list[Path]
    missing: list[str]
    seconds: float
    up_to_date: bool
    reasons: dict[str, str] = field(default_factory=dict)
    training_runs: int = 0

    @property
    def size_bytes(self) -> int:
        """The installed archives' total size (bytes; a file gone since counts 0)."""
        return sum(path.stat().st_size for path in self.installed if path.is_file())


def expected(runtime: HadoopRuntime, site: Path) -> list[Path]:
    """The site archives every cluster uses: the daemons' and the ApplicationMaster's, for this runtime and JDK (the job
    clients' are built too, named by what the training run recorded, but not required to call the archives up to
    date). The daemons' are keyed by their flags with ``hadoop.fast_start`` at its default, on, as in the training
    run."""
    flags = runtime.daemon_flags()
    return [*(site / archive_key(runtime, flags) / f"{name}.jsa" for name in DAEMONS),
            site / archive_key(runtime, AM_KEY_FLAGS) / AM_ARCHIVE]


def up_to_date(runtime: HadoopRuntime, site: Path) -> bool:
    """True when every archive of :func:`expected` is there and the JDK maps it."""
    jars = ":".join(jar_entries(runtime))
    return all(path.is_file() and maps(runtime.java, path, jars) for path in expected(runtime, site))


def training_job(work: Path) -> Path:
    """Write the training job (a word count of one line and a one-map SleepJob, ``local`` backend, filesystem root in
    ``work``)."""
    text = work / "in.txt"
    text.write_text("class data sharing for every user\n")
    job = {"name": "cds-build", "scheduler": "local", "walltime": "00:15:00",
           "filesystem": {"root": str(work / "root")},
           "steps": [{"example": "wordcount", "args": [str(text), "${run_dir}/out"]},
                     {"jar": "${tests_jar}", "class": "org.apache.hadoop.mapreduce.SleepJob",
                      "args": ["-m", "1", "-r", "0", "-mt", str(SLEEP_MS)]}]}
    path = work / "cds-build.yaml"
    path.write_text(yaml.safe_dump(job))
    return path


def train(runtime: HadoopRuntime, work: Path) -> Path:
    """Run the training job with a cache in ``work``, every JVM recording its class list; returns the class-list
    directory (``work/classlists``: ``<key>/<name>.json`` recipes, ``<key>/<name>.<token>.classlist`` lists).

    Raises:
        RuntimeError: the run failed or took more than :data:`TRAINING_TIMEOUT` (its output's last line says why);
            what it recorded before may still be used.
    """
    lists = work / "classlists"
    # The installer's own ~/.config/hpc-hadoop/config.yaml is not read (a file that is not there): the archives are
    # made with the defaults every user starts from; the runtime is the one found here.
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), SITE_ENV: "", CLASSLIST_ENV: str(lists),
           "TMPDIR": str(work), "XDG_STATE_HOME": str(work / "state"),
           "HPC_HADOOP_CONFIG": str(work / "no-config.yaml"), "HPC_HADOOP_HOME": str(runtime.home)}
    argv = [sys.executable, "-m", "launcher.cli", "submit", str(training_job(work))]
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TRAINING_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False, cwd=work)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the training run took more than {TRAINING_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"the training run failed (exit {done.returncode}): {last[0]}")
    return lists


def recipes(lists: Path) -> dict[str, Recipe]:
    """The recipes a training run saved below ``lists``, by ``<key>/<name>.jsa``; unreadable ones are left out."""
    found: dict[str, Recipe] = {}
    for path in sorted(lists.glob("*/*.json")) if lists.is_dir() else []:
        try:
            recipe = Recipe.load(path)
        except (OSError, ValueError, KeyError):
            continue
        found[f"{recipe.key}/{recipe.archive}"] = recipe
    return found


def merge_class_lists(lists: Sequence[Path], out: Path) -> int:
    """Write the lines of every class list of ``lists`` to ``out`` once each, in first-seen order, without the JDK's
    comment header and without a last line cut short (no newline: the JVM was killed while writing it).

    Returns:
        The number of lines written (0: nothing recorded).
    """
    seen: dict[str, None] = {}
    for path in lists:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        lines = text.split("\n")[:-1]  # the last element is "" or a line cut short
        for line in lines:
            if line.strip() and not line.startswith("#"):
                seen.setdefault(line)
    out.write_text("".join(f"{line}\n" for line in seen))
    return len(seen)


def dump_command(runtime: HadoopRuntime, recipe: Recipe, class_list: Path, archive: Path) -> list[str]:
    """The JDK's static dump of ``recipe``'s archive: ``java <recipe.flags> -Xshare:dump
    -XX:SharedClassListFile=<class_list> -XX:SharedArchiveFile=<archive> -cp <recipe.classpath>`` (flags that select
    another archive or sharing mode are left out; a crash report goes nowhere)."""
    flags = [f for f in recipe.flags if not f.startswith((*CDS_FLAG_PREFIXES, "-Xshare:"))]
    return [runtime.java, *flags, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}",
            f"-XX:SharedArchiveFile={archive}", "-XX:ErrorFile=/dev/null", "-cp", recipe.classpath]


def dump(runtime: HadoopRuntime, recipe: Recipe, lists: Sequence[Path], target: Path, work: Path) -> str | None:
    """Make ``recipe``'s archive from the class lists ``lists`` (:func:`dump_command`, output in
    ``work/<name>.dump.log``) and, once the JDK maps it with the recipe's classpath, move it to ``target`` (0644).

    Returns:
        ``None`` when ``target`` now holds the archive, else why not (``no class list``, ``the dump exited with 1:
        <its last line>``, ``it does not map``).

    Raises:
        OSError: ``target``'s directory or ``work`` cannot be written.
    """
    merged = work / f"{recipe.name}.classlist"
    if merge_class_lists(lists, merged) == 0:
        return "no class list"
    staged = target.with_name(f".{recipe.archive}.{os.getpid()}")
    staged.unlink(missing_ok=True)
    log = work / f"{recipe.name}.dump.log"
    argv = dump_command(runtime, recipe, merged, staged)
    try:
        with open(log, "wb") as out:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=DUMP_TIMEOUT, check=False, cwd=work)
        if done.returncode != 0:
            last = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            return f"the dump exited with {done.returncode}: {last[0]}"
        if not staged.is_file() or staged.stat().st_size == 0:
            return "the dump wrote no archive"
        if not maps(runtime.java, staged, recipe.classpath):
            return "it does not map"
        staged.chmod(0o644)
        os.replace(staged, target)
    except subprocess.TimeoutExpired:
        return f"the dump took more than {DUMP_TIMEOUT:.0f} s"
    finally:
        staged.unlink(missing_ok=True)
    return None


def _site_dir(path: Path) -> None:
    """Make the site directory (or a key directory in it) 0755, one level at a time, each checked to be ours
    (:func:`launcher.runtime.staging.make_shared_dir`).

    Raises:
        UserError: a level is a symbolic link, not ours or writable by others.
        OSError: it cannot be made.
    """
    make_shared_dir(path, field=SITE_ENV)
    path.chmod(0o755)


def remove_old_keys(runtime: HadoopRuntime, site: Path, keep: Sequence[Path]) -> None:
    """Remove the key directories of ``site`` that hold neither an archive of ``keep`` nor one :func:`expected` names
    (an older runtime or JDK's)."""
    keys = {path.parent.name for path in keep} | {path.parent.name for path in expected(runtime, site)}
    for old in site.iterdir():
        if old.is_dir() and not old.is_symlink() and re.fullmatch(r"[0-9a-f]{16}", old.name) and old.name not in keys:
            shutil.rmtree(old, ignore_errors=True)


def _dump_missing(runtime: HadoopRuntime, site: Path, lists: Path, work: Path, todo: dict[str, Recipe | None],
                  installed: dict[str, Path], reasons: dict[str, str]) -> None:
    """One training run's dumps: each archive of ``todo`` (``<key>/<name>.jsa`` → its recipe, ``None`` when the run
    recorded none) dumped from the class lists below ``lists`` (:func:`dump`) into ``site``, :data:`DUMP_WORKERS` at
    a time; adds what is in place to ``installed`` and why the others are not to ``reasons``.

    Raises:
        OSError: ``site`` or ``work`` cannot be written. UserError: a key directory is not ours.
    """
    from concurrent.futures import ThreadPoolExecutor

    ready: dict[str, Recipe] = {}
    for rel, recipe in sorted(todo.items()):
        if recipe is None:
            reasons[rel] = "no class list"
            continue
        _site_dir(site / recipe.key)
        ready[rel] = recipe
    with ThreadPoolExecutor(max_workers=DUMP_WORKERS, thread_name_prefix="cds-dump") as pool:
        # Each dump has its own class list, log and staged file (named after its recipe): none shares a path.
        answers = {rel: pool.submit(dump, runtime, recipe, recipe.class_lists(lists), site / rel, work)
                   for rel, recipe in ready.items()}
    for rel, answer in answers.items():
        why = answer.result()
        if why is None:
            installed[rel] = site / rel
            reasons.pop(rel, None)
        else:
            reasons[rel] = why


def build(runtime: HadoopRuntime, site: Path, *, force: bool = False) -> BuildResult:
    """Build the site's archives into ``site`` (``<site>/<key>/<name>.jsa``, what :func:`launcher.runtime.cds.site_root`
    names for the runtime) unless they are up to date (:func:`up_to_date`) or ``force``.

    One training run (:func:`train`) records every JVM's class list; each archive is dumped from its list
    (:func:`dump`); what is still missing gets one more training run (:data:`ATTEMPTS`). A missing archive is not an
    exception: it is in :attr:`BuildResult.missing` (the caller decides; ``main`` and ``install.sh`` fail).

    Raises:
        CdsBuildError: both training runs failed and an archive is missing (the run's last line), or an ``OSError``
            writing ``site`` or the temporary directory.
        UserError: ``site`` is a symbolic link, not ours or writable by others.
    """
    began = time.monotonic()
    if runtime.java_version < 13:
        return BuildResult(installed=[], missing=[], seconds=0.0, up_to_date=True)
    if not force and up_to_date(runtime, site):
        return BuildResult(installed=[], missing=[], seconds=time.monotonic() - began, up_to_date=True)
    wanted = {f"{path.parent.name}/{path.name}" for path in expected(runtime, site)}
    installed: dict[str, Path] = {}
    reasons: dict[str, str] = {}
    run_errors: list[str] = []
    runs = 0
    try:
        _site_dir(site)
        with tempfile.TemporaryDirectory(prefix="hpc-hadoop-cds-") as tmp:
            for attempt in range(1, ATTEMPTS + 1):
                work = Path(tmp) / f"run{attempt}"
                work.mkdir()
                runs = attempt
                try:
                    lists = train(runtime, work)
                except RuntimeError as exc:  # what it recorded before it failed is used all the same
                    lists = work / "classlists"
                    run_errors.append(str(exc))
                found = recipes(lists)
                if attempt == 1:
                    wanted |= set(found)  # the job clients' archives, named by what they recorded
                _dump_missing(runtime, site, lists, work, {rel: found.get(rel) for rel in wanted - set(installed)},
                              installed, reasons)
                if wanted <= set(installed):
                    break
        remove_old_keys(runtime, site, list(installed.values()))
    except OSError as exc:
        raise CdsBuildError(f"cannot build the archives in {site}: {exc}") from exc
    missing = sorted(wanted - set(installed))
    if missing and len(run_errors) == ATTEMPTS:
        raise CdsBuildError(f"{run_errors[-1]} ({ATTEMPTS} training runs failed; missing: "
                            f"{', '.join(Path(rel).name for rel in missing)})")
    return BuildResult(installed=sorted(installed.values()), missing=[Path(rel).name for rel in missing],
                       seconds=time.monotonic() - began, up_to_date=False,
                       reasons={Path(rel).name: reasons.get(rel, "not built") for rel in missing}, training_runs=runs)


def summary(result: BuildResult, site: Path) -> str:
    """The one line ``main`` prints for ``result`` (stdout on success, stderr when an archive is missing)."""
    if result.up_to_date:
        return f"hpc-hadoop cds_build: the archives in {site} are up to date"
    runs = f"{result.training_runs} training run{'s' if result.training_runs != 1 else ''}"
    line = (f"hpc-hadoop cds_build: {len(result.installed)} archives ({result.size_bytes >> 20} MiB) in {site}, built "
            f"in {result.seconds:.0f} s ({runs})")
    if not result.missing:
        return line
    why = "; ".join(f"{name} ({result.reasons.get(name, 'not built')})" for name in result.missing)
    return f"{line}; missing after {ATTEMPTS} training runs: {why}; fix: {FIX}"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m launcher.runtime.cds_build``: :func:`build` into
    :func:`launcher.runtime.cds.site_root` and its one summary line (:func:`summary`). Exit code 0 when every archive
    is in place, 1 when one is missing or the build failed, 2 for a site directory that must not be used."""
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
    try:
        result = build(runtime, site, force=args.force)
    except HpcHadoopError as exc:
        print(f"hpc-hadoop cds_build: {exc}; fix: {FIX}" if isinstance(exc, CdsBuildError)
              else f"hpc-hadoop cds_build: {exc}", file=sys.stderr)
        return exc.exit_code
    print(summary(result, site), file=sys.stderr if result.missing else sys.stdout)
    return 1 if result.missing else 0


if __name__ == "__main__":
    sys.exit(main())
