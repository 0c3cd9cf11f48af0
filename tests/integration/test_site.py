"""The site path, walked as a site walks it (issue 39): a software account installs hpc-hadoop with EasyBuild from
the wheel built from this checkout, into an empty prefix; EasyBuild writes the Lmod module; the account puts a site
config and a preset in the site layer and renders the template module too (``hpc-hadoop runtime module``); two users
who are not root load the module through Lmod (one EasyBuild's, one the template) and copy the examples; the first runs
the word count, her first run, and the second ``doctor``, which finds the same install and the site's archives (his
word count was the same run as hers: issue 38 took its bring-up).

Nothing is simulated: Debian's Lmod, EasyBuild 5.4 from PyPI (``tests/cluster/site-up.sh`` installs both, and a
download cache outside the checkout that pip and Maven read through their own mechanisms: ``PIP_FIND_LINKS`` +
``PIP_NO_INDEX`` over a wheelhouse, a ``file://`` mirror in the account's ``~/.m2/settings.xml``), the real Maven
build of the runtime and the class-data-sharing archives (the easyconfig's ``postinstallcmds``), real Hadoop daemons
on the ``local`` backend. Every account has a fresh home of its own under the test's directory (``HOME``), so each run
is a first one: no ``~/.cache`` before, and none after, since the site's archives serve every JVM.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import CLUSTER, REPO, processes_of, run_report
from tests.integration.test_local_end_to_end import hadoop_output, python_wordcount
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base

pytestmark = pytest.mark.hadoop

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
LMOD_CMD = Path("/usr/share/lmod/lmod/libexec/lmod")
EB = Path("/opt/easybuild-venv/bin/eb")
#: site-up.sh's download cache (wheelhouse/, m2/).
CACHE = Path("/var/cache/hh-site")
EASYCONFIG = REPO / "site-configs" / "easybuild" / "hpc-hadoop-0.1.0.eb"
#: The installed hpc-hadoop runs its own code: not the checkout's, which the test process may name
#: (tests/users.py PASSED_ON).
CLEAN_ENV = ["env", "-u", "PYTHONPATH", "-u", "HPC_HADOOP_SHARE"]
#: The field whose layers the test lists: the preset's (SMALL), the site config's, one user's own.
FIELD = "hadoop.am_memory"


def _ok(proc: subprocess.CompletedProcess[str], what: str) -> str:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def _bash(user: TestUser, home: Path, script: str, *, env: dict[str, str] | None = None,
          timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``script`` in ``bash -c`` as ``user`` with ``HOME=home`` (``set -e``; stderr into stdout)."""
    return user.run([*CLEAN_ENV, "bash", "-c", f"set -e\nexec 2>&1\n{script}"],
                    env={"HOME": str(home), **(env or {})}, cwd=home, timeout=timeout)


def _home(base: Path, user: TestUser) -> Path:
    home = base / f"home-{user.name}"
    home.mkdir()
    return user.own(home, 0o700)


def _wheel(base: Path, runtime: Path) -> Path:
    """The wheel of this checkout (with the built shim jar), built from a copy (setuptools writes into the tree)."""
    source = base / "source"
    shutil.copytree(REPO, source, symlinks=False, ignore=shutil.ignore_patterns(
        ".git", ".venv", "target", "spark-runtime", "build", "*.egg-info", "__pycache__", ".*_cache", "runs"))
    (jar,) = (runtime / "lib").glob("hpc-hadoop-fs-shim-*.jar")
    (source / "hadoop-fs-shim" / "target").mkdir()
    shutil.copy2(jar, source / "hadoop-fs-shim" / "target" / jar.name)
    _ok(subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "-w", str(base / "dist"), "--no-deps", "-q"],
                       capture_output=True, text=True, timeout=300, check=False), "pip wheel")
    (wheel,) = (base / "dist").glob("hpc_hadoop-*.whl")
    return wheel


def _own_tree(user: TestUser, top: Path) -> None:
    for path in (top, *top.rglob("*")):
        os.chown(path, user.uid, user.gid, follow_symlinks=False)


def _easybuild(soft: TestUser, home: Path, work: Path, wheel: Path) -> tuple[Path, Path, str, float]:
    """The software account's install: the wheel in its source path, the easyconfig's checksum injected, ``eb``
    with checksums enforced, Lmod modules in Lua. Returns the install directory, the module path, ``eb``'s output
    and its seconds."""
    sources = work / "sources" / "h" / "hpc-hadoop"
    sources.mkdir(parents=True)
    shutil.copy2(wheel, sources / wheel.name)
    easyconfig = work / EASYCONFIG.name
    shutil.copy2(EASYCONFIG, easyconfig)
    (home / ".m2").mkdir()
    (home / ".m2" / "settings.xml").write_text(
        "<settings>\n"
        f"  <localRepository>{work / 'm2-repository'}</localRepository>\n"
        "  <mirrors><mirror><id>site-cache</id><mirrorOf>*</mirrorOf>"
        f"<url>file://{CACHE / 'm2'}</url></mirror></mirrors>\n"
        "</settings>\n")
    _own_tree(soft, work)
    _own_tree(soft, home / ".m2")
    env = {"EB_PYTHON": str(EB.parent / "python"), "LMOD_CMD": str(LMOD_CMD),
           "PIP_FIND_LINKS": str(CACHE / "wheelhouse"), "PIP_NO_INDEX": "1"}
    eb = (f"{EB} --prefix={work / 'eb'} --tmpdir={work / 'tmp'} --sourcepath={work / 'sources'} "
          f"--installpath={work / 'prefix'} --modules-tool=Lmod --module-syntax=Lua")
    _ok(_bash(soft, home, f"cd {work}\n{eb} {easyconfig.name} --inject-checksums", env=env), "eb --inject-checksums")
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() in easyconfig.read_text()
    started = time.monotonic()
    out = _ok(_bash(soft, home, f"cd {work}\n{eb} {easyconfig.name} --enforce-checksums", env=env, timeout=900),
              "eb --enforce-checksums")
    seconds = time.monotonic() - started
    assert "COMPLETED: Installation ended successfully" in out, out[-3000:]
    return work / "prefix" / "software" / "hpc-hadoop" / "0.1.0", work / "prefix" / "modules" / "all", out, seconds


def _site_layer(soft: TestUser, site: Path, root: Path) -> None:
    """The software account's site layer: a preset (local backend, the tests' small containers) and the config
    that chooses it, names the shared root and sets :data:`FIELD` over the preset's value."""
    (site / "site-configs" / "hhsite.yaml").write_text(
        "# hhsite: the site-install test's preset (local backend, small containers)\n"
        + yaml.safe_dump({"scheduler": "local", "hadoop": SMALL}))
    (site / "config.yaml").write_text(yaml.safe_dump({"site": "hhsite", "filesystem": {"root": str(root)},
                                                      "hadoop": {"am_memory": "640m"}}))
    for path in (site / "config.yaml", site / "site-configs" / "hhsite.yaml"):
        soft.own(path, 0o644)


class ArchiveWatch:
    """``hpc-hadoop submit`` as a user, with the ``-XX:SharedArchiveFile`` of every JVM of that user seen while it
    runs (its daemons', its ApplicationMaster's and job client's command lines in ``/proc``)."""

    def __init__(self, user: TestUser, home: Path, script: str) -> None:
        self.user = user
        self.proc = user.popen([*CLEAN_ENV, "bash", "-c", f"set -e\nexec 2>&1\n{script}"], env={"HOME": str(home)})
        self.archives: set[str] = set()

    def wait(self, timeout: float = 600) -> str:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            for proc in psutil.process_iter(["uids", "cmdline"]):
                try:
                    if proc.info["uids"] and proc.info["uids"].real == self.user.uid:
                        self.archives.update(arg.split("=", 1)[1] for arg in proc.info["cmdline"] or []
                                             if arg.startswith("-XX:SharedArchiveFile="))
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            time.sleep(0.3)
        if self.proc.poll() is None:
            self.proc.kill()
        out, _ = self.proc.communicate()
        assert self.proc.returncode == 0, f"submit exited {self.proc.returncode}:\n{out[-4000:]}"
        return out


def _kill_leftovers(users: list[TestUser], base: Path) -> None:
    """End what the test's users left running under ``base`` (none, when the launcher did its job)."""
    uids = {user.uid for user in users}
    for proc in psutil.process_iter(["uids", "cmdline"]):
        try:
            mine = proc.info["uids"] and proc.info["uids"].real in uids
            if mine and str(base) in " ".join(proc.info["cmdline"] or []):
                proc.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue


@pytest.fixture(scope="module")
def site_tools() -> None:
    """Lmod, EasyBuild and the download cache (tests/cluster/site-up.sh: idempotent, ~2 s when ready)."""
    done = subprocess.run(["bash", str(CLUSTER / "site-up.sh")], capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "HH_SITE_META_PYTHON": sys.executable}, check=False)
    if done.returncode != 0:
        pytest.fail(f"site-up.sh failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


@dataclass(frozen=True)
class Site:
    """The installed site: the software account, the install directory, its site layer and archives, the shared
    root."""

    soft: TestUser
    install: Path
    site: Path
    cds: Path
    root: Path


def _first_run(site: Site, user: TestUser, home: Path, modulepath: Path, own_value: str | None,
               expected: Counter[str] | None, figures: dict[str, object]) -> None:
    """``user``'s first steps through the module in ``modulepath``: ``module avail``/``load``, the layers of
    :data:`FIELD` (``own_value`` in the user's config, else the site's), ``examples copy``, the word count (exact, the
    site's archives only, no ``~/.cache``, nothing left running; with ``expected`` ``None``, ``doctor`` instead,
    which must find the install's runtime and the site's archives), and a root another user owns refused in one
    line."""
    if own_value:
        config = home / ".config" / "hpc-hadoop" / "config.yaml"
        config.parent.mkdir(parents=True)
        config.write_text(yaml.safe_dump({"hadoop": {"am_memory": own_value}}))
        _own_tree(user, home / ".config")
    load = f"source {LMOD_INIT}\nmodule use {modulepath}\n"
    shown = _ok(_bash(user, home, load + "module avail hpc-hadoop\nmodule load hpc-hadoop\n"
                      "echo \"hpc-hadoop: $(command -v hpc-hadoop) site: $HPC_HADOOP_SITE_DIR\"\n"
                      f"hpc-hadoop config --explain {FIELD}\nhpc-hadoop examples copy ~/hh-examples\n"),
                f"module load as {user.name}")
    figures[f"{user.name}_module"] = shown
    assert f"hpc-hadoop: {site.install}/bin/hpc-hadoop site: {site.site}" in shown, shown
    assert f"{modulepath}" in shown and "hpc-hadoop/0.1.0" in shown, shown
    value_line = [line for line in shown.splitlines() if line.strip().startswith(FIELD)]
    assert value_line and value_line[0].split()[1:3] == ([own_value, "user"] if own_value else ["640m", "site"]), shown

    if expected is None:
        doctor = _ok(_bash(user, home, f"{load}module load hpc-hadoop\nhpc-hadoop doctor"), f"doctor as {user.name}")
        figures[f"{user.name}_doctor"] = doctor
        runtime = site.cds.parent
        assert f"ok hadoop runtime  Hadoop 3.4.2 at {runtime}" in doctor, doctor
        assert re.search(rf"ok cds archives +4 \(\d+ MiB\) in {re.escape(str(site.cds))} ", doctor), doctor
        assert not (home / ".cache").exists(), sorted(str(p) for p in (home / ".cache").rglob("*"))
    else:
        _count_words(site, user, home, load, expected, figures)
    _refuse_anothers_root(site, user, home, load, figures)


def _count_words(site: Site, user: TestUser, home: Path, load: str, expected: Counter[str],
                 figures: dict[str, object]) -> None:
    """:func:`_first_run`'s word count: ``submit`` of the copied example, exact counts, the site's archives only, no
    ``~/.cache``, nothing left running."""
    started = time.monotonic()
    watch = ArchiveWatch(user, home, f"{load}module load hpc-hadoop\nhpc-hadoop submit ~/hh-examples/wordcount.yaml")
    out = watch.wait()
    figures[f"{user.name}_submit_s"] = round(time.monotonic() - started, 1)
    (run_dir,) = (site.root / user.name / "hpc-hadoop").iterdir()
    report = run_report(run_dir)
    assert report["state"] == "succeeded", out[-3000:]
    figures[f"{user.name}_report"] = {k: round(report[k], 1) for k in ("bringup_s", "teardown_s", "total_s")}
    got = hadoop_output(site.root / user.name / "results" / run_dir.name / "wordcount")
    assert len(got) == len(expected) and got == expected
    assert not (home / ".cache").exists(), sorted(str(p) for p in (home / ".cache").rglob("*"))
    assert watch.archives and all(a.startswith(f"{site.cds}/") for a in watch.archives), watch.archives
    assert processes_of(run_dir) == []


def _refuse_anothers_root(site: Site, user: TestUser, home: Path, load: str, figures: dict[str, object]) -> None:
    """A root another user owns (0755) is refused in one line, before anything is planned."""
    theirs = site.root.parent / "soft-root"
    theirs.mkdir(exist_ok=True)
    site.soft.own(theirs, 0o755)
    other = user.run([*CLEAN_ENV, "bash", "-c", f"{load}module load hpc-hadoop\nhpc-hadoop render "
                      f"~/hh-examples/wordcount.yaml --set filesystem.root={theirs}"], env={"HOME": str(home)})
    assert other.returncode == 2 and other.stderr.count("\n") == 1, other.stdout + other.stderr
    assert str(theirs) in other.stderr and site.soft.name in other.stderr, other.stderr
    figures[f"{user.name}_refusal"] = other.stderr.strip()


@pytest.mark.own_cluster("a site's install (its archives' training run) and a user's first run on it")
def test_site_installs_with_easybuild_and_two_users_load_it_through_lmod_one_counting_words(
        site_tools: None, hadoop_runtime: Path, gcide_corpus: Path) -> None:
    soft, erin, frank = make_user("hhsoft"), make_user("hherin"), make_user("hhfrank")
    base = shared_base("hh-site")
    figures: dict[str, object] = {}
    try:
        wheel = _wheel(base, hadoop_runtime)
        work = base / "soft"
        work.mkdir()
        soft_home = _home(base, soft)
        install, modules, eb_out, figures["eb_install_s"] = _easybuild(soft, soft_home, work, wheel)
        modulefile = (modules / "hpc-hadoop" / "0.1.0.lua").read_text()
        site = Site(soft, install, install / "etc", install / "share" / "hpc-hadoop" / "runtime" / "hadoop" / "cds",
                    base / "scratch")
        assert f'setenv("HPC_HADOOP_SITE_DIR", "{site.site}")' in modulefile, modulefile
        assert 'prepend_path("PATH", pathJoin(root, "bin"))' in modulefile, modulefile
        assert sorted(p.name for p in site.cds.glob("*/*.jsa") if not p.name.startswith("client-")) == [
            "historyserver.jsa", "mrappmaster.jsa", "nodemanager.jsa", "resourcemanager.jsa"]
        site.root.mkdir()
        site.root.chmod(0o1777)
        _site_layer(soft, site.site, site.root)
        # The template module, for a site without EasyBuild: frank's.
        template = work / "modulefiles" / "hpc-hadoop" / "0.1.0.lua"
        template.parent.mkdir(parents=True)
        _own_tree(soft, work / "modulefiles")
        module = f"{install}/bin/hpc-hadoop runtime module"
        _ok(_bash(soft, soft_home, f"{module} --site-dir {site.site} -o {template}"), "runtime module")
        refused = _bash(soft, soft_home, f"{module} -o {template} || echo rc=$?")
        assert refused.stdout.endswith("(fix: give --force to replace it, or name another file)\nrc=2\n"), refused

        expected = python_wordcount(gcide_corpus)
        _first_run(site, erin, _home(base, erin), modules, "768m", expected, figures)
        # frank's module is the template one: the same install, so doctor, not a second word count (issue 38).
        _first_run(site, frank, _home(base, frank), template.parents[1], None, None, figures)
        print(f"\nsite path figures: eb install {figures['eb_install_s']:.1f} s; "
              + "; ".join(f"{k} {v}" for k, v in figures.items()
                        if k != "eb_install_s" and not k.endswith(("module", "doctor"))))
        for name in (erin.name, frank.name):
            print(f"--- {name}: module avail / load / config --explain ---\n{figures[f'{name}_module']}")
        print(f"--- {frank.name}: doctor ---\n{figures[f'{frank.name}_doctor']}")
        print("--- eb (tail) ---\n" + "\n".join(eb_out.splitlines()[-12:]))
    finally:
        _kill_leftovers([soft, erin, frank], base)
        shutil.rmtree(base, ignore_errors=True)
