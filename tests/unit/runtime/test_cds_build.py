"""The site's static class-data-sharing archives (launcher.runtime.cds_build, issue 39): in class-list mode every JVM
that would get an archive records its classes and the recipe of its archive (the flags its key covers, the jar classpath
the runtime starts it with); the dump of each is the real JDK's, from a real class list, and lands where the runtime
looks for site archives; what is missing gets one more training run, then is a failure. The training run itself (real
daemons) is made by install.sh and by hand; here it is replaced by one that writes what a real run records."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.daemons import client_command, daemon_classpath, daemon_command
from launcher.runtime import cds_build
from launcher.runtime.cds import (
    CLASSLIST_ENV,
    Recipe,
    am_archive_option,
    cds_flags,
    client_archive_flags,
    jar_entries,
    maps,
    record_classes,
    site_archive_path,
)
from launcher.runtime.cds_build import (
    BuildResult,
    CdsBuildError,
    build,
    dump,
    dump_command,
    expected,
    main,
    merge_class_lists,
    recipes,
    remove_old_keys,
    summary,
    up_to_date,
)
from launcher.runtime.hadoop import QUICK_JIT, HadoopRuntime
from launcher.steps.commands import RUN_JAR


def _real_java(fake_runtime: HadoopRuntime) -> HadoopRuntime:
    """The fake runtime run by this machine's real JDK 17 (its jars are empty files: only the JDK's classes load)."""
    java = Path(shutil.which("java") or "java").resolve()
    return HadoopRuntime(**{**fake_runtime.__dict__, "java_home": java.parent.parent})


def _recipe_of(flag: str) -> tuple[Path, Recipe]:
    """The class list a ``-XX:DumpLoadedClassList=<list>`` flag names, and the recipe saved beside it."""
    assert flag.startswith("-XX:DumpLoadedClassList="), flag
    path = Path(flag.split("=", 1)[1])
    return path, Recipe.load(path.parent / f"{path.name.split('.', 1)[0]}.json")


def _classpath(argv: list[str]) -> str:
    return argv[argv.index("-cp") + 1]


def test_in_class_list_mode_every_jvm_records_its_classes_and_the_recipe_of_its_archive(
        make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan], fake_runtime: HadoopRuntime,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The training run's JVMs neither use an archive (not even the site's) nor write one at exit: each records a class
    list, and its recipe's classpath is exactly the jars the runtime puts first on that JVM's command line, its key the
    one the runtime looks the site archive up with (:func:`expected`)."""
    (fake_runtime.home / "extra-classpath").mkdir()
    plan = make_test_plan(make_spec())
    site = fake_runtime.home / "cds"
    for path in expected(fake_runtime, site):  # a site archive of every JVM: class-list mode must ignore it
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"site")
    lists = tmp_path / "lists"
    monkeypatch.setenv(CLASSLIST_ENV, str(lists))
    wanted = {path.name: path for path in expected(fake_runtime, site)}
    for name in ("resourcemanager", "nodemanager", "historyserver"):
        command = daemon_command(plan, plan.nodes[0], name)
        (flag,) = [a for a in command.argv if "Archive" in a or "ClassList" in a]
        assert command.archive_tmp is None and not any(a.startswith("-Xshare") for a in command.argv)
        class_list, recipe = _recipe_of(flag)
        assert class_list.parent == lists / wanted[f"{name}.jsa"].parent.name and class_list.name.startswith(name)
        assert recipe.key == wanted[f"{name}.jsa"].parent.name and recipe.archive == f"{name}.jsa"
        assert daemon_classpath(plan).startswith(f"{recipe.classpath}:") and _classpath(command.argv).startswith(
            f"{recipe.classpath}:")
        assert recipe.classpath == ":".join(jar_entries(fake_runtime))
        # The archive's flags are the daemon's, but for the ResourceManager's JIT under Kerberos (compiler
        # directives in place of C1 only: resourcemanager_jit_flags), which no archive depends on.
        jit = {QUICK_JIT} if name == "resourcemanager" and plan.security.kerberos else set()
        assert recipe.flags == fake_runtime.daemon_flags() and set(recipe.flags) - jit <= set(command.argv)
        dump_argv = dump_command(fake_runtime, recipe, tmp_path / "l", tmp_path / "a.jsa")
        assert dump_argv == [fake_runtime.java, *fake_runtime.daemon_flags(), "-Xshare:dump",
                             f"-XX:SharedClassListFile={tmp_path / 'l'}", f"-XX:SharedArchiveFile={tmp_path / 'a.jsa'}",
                             "-XX:ErrorFile=/dev/null", "-cp", recipe.classpath]
    # Two NodeManagers (two nodes) never write one list.
    second = daemon_command(plan, plan.nodes[1], "nodemanager").argv
    assert len({a for a in second if "ClassList" in a} | {a for a in command.argv if "ClassList" in a}) == 2

    option = am_archive_option(fake_runtime)
    jars = ":".join(jar_entries(fake_runtime))
    assert option.startswith(f"-cp {jars}:$CLASSPATH -XX:DumpLoadedClassList=") and "SharedArchiveFile" not in option
    _, recipe = _recipe_of(option.rsplit(" ", 1)[1])
    assert recipe.classpath == jars and recipe.flags == () and f"{recipe.key}/{recipe.archive}" == (
        f"{wanted['mrappmaster.jsa'].parent.name}/mrappmaster.jsa")
    assert am_archive_option(fake_runtime) != option  # every AM records (no one-AM-asked marker): its own list
    assert not list(tmp_path.glob("cache/**/*.requested"))

    for argv in (client_command(plan, RUN_JAR, [str(fake_runtime.examples_jar), "wordcount", "in", "out"]),
                 client_command(plan, "org.apache.hadoop.mapreduce.SleepJob", ["-m", "1"],
                                extra_classpath=[fake_runtime.tests_jar])):
        (flag,) = client_archive_flags(fake_runtime, argv)
        _, recipe = _recipe_of(flag)
        entries = _classpath(argv).split(":")
        runtime_jars = [e for e in entries if e.endswith("/*") or Path(e).is_file()]
        assert recipe.classpath == ":".join(runtime_jars) and _classpath(argv).startswith(f"{recipe.classpath}:")
        assert not any(Path(e).is_dir() for e in recipe.classpath.split(":"))  # the JDK dumps no directory
        assert recipe.name.startswith("client-") and set(recipe.flags) <= set(argv)
        assert all(f.startswith(("-XX:", "--add-")) for f in recipe.flags) and recipe.flags
    assert len(recipes(lists)) == 6  # three daemons, the AM, two job clients


def test_outside_class_list_mode_nothing_is_recorded(fake_runtime: HadoopRuntime, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv(CLASSLIST_ENV, "")
    flags, tmp, _ = cds_flags(fake_runtime, "resourcemanager", "n1", "c")
    assert flags[0].startswith("-XX:ArchiveClassesAtExit=") and tmp is not None
    assert record_classes("k", "x", (), "") is None and not (tmp_path / "k").exists()


def test_class_lists_merge_once_each_without_a_line_cut_short(tmp_path: Path) -> None:
    """Two ApplicationMasters' lists make one archive; a JVM killed mid-line leaves a partial last line, left out."""
    header = "# NOTE: Do not modify this file.\n#\n"
    (tmp_path / "a").write_text(f"{header}java/lang/Object\norg/x/A\n")
    (tmp_path / "b").write_text(f"{header}org/x/A\norg/x/B\norg/x/Cu")
    assert merge_class_lists([tmp_path / "a", tmp_path / "b", tmp_path / "gone"], tmp_path / "m") == 3
    assert (tmp_path / "m").read_text() == "java/lang/Object\norg/x/A\norg/x/B\n"
    (tmp_path / "empty").write_text(header)
    assert merge_class_lists([tmp_path / "empty"], tmp_path / "m") == 0


def _record(runtime: HadoopRuntime, lists: Path, key: str, name: str) -> Recipe:
    """What a training run's JVM records: the recipe, and a real class list (the classes ``java -version`` loads with
    the runtime's jars as classpath)."""
    jars = ":".join(jar_entries(runtime))
    recipe = Recipe(key=key, name=name, flags=("-XX:-UseContainerSupport",), classpath=jars)
    recipe.save(lists)
    done = subprocess.run([runtime.java, f"-XX:DumpLoadedClassList={lists / key / f'{name}.t1.classlist'}", "-cp", jars,
                           "-version"], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    return recipe


def test_a_real_dump_lands_where_the_runtime_looks_for_the_site_archive(
        fake_runtime: HadoopRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = _real_java(fake_runtime)
    site = tmp_path / "site"
    target = expected(runtime, site)[1]  # the NodeManager's
    target.parent.mkdir(parents=True)
    lists, work = tmp_path / "lists", tmp_path / "work"
    work.mkdir()
    recipe = _record(runtime, lists, target.parent.name, "nodemanager")
    assert dump(runtime, recipe, recipe.class_lists(lists), target, work) is None
    assert oct(target.stat().st_mode & 0o777) == "0o644" and maps(runtime.java, target, recipe.classpath)
    assert [p.name for p in target.parent.iterdir()] == ["nodemanager.jsa"]  # no staged file left
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", str(site))
    assert site_archive_path(runtime, "nodemanager", runtime.daemon_flags()) == target
    assert cds_flags(runtime, "nodemanager", "n1", "c", runtime.daemon_flags())[0] == [
        f"-XX:SharedArchiveFile={target}"]
    # No list, or a list the JDK cannot dump from (an unknown class-list directive): a reason, no archive.
    assert dump(runtime, recipe, [], target, work) == "no class list"
    (lists / recipe.key / "nodemanager.t2.classlist").write_text("@bogus-directive x\n")
    why = dump(runtime, recipe, [lists / recipe.key / "nodemanager.t2.classlist"], target.with_name("x.jsa"), work)
    assert why is not None and why.startswith("the dump exited with ")
    assert not target.with_name("x.jsa").exists() and not list(target.parent.glob(".x.jsa.*"))


class _FakeTraining:
    """Stands in for the training run: records what each run's JVMs record (a real class list), except the archives
    the test says a run misses; and a dump that fails for the archives the test says, per run."""

    def __init__(self, runtime: HadoopRuntime, site: Path, *, unrecorded: dict[int, set[str]] | None = None,
                 bad_dumps: dict[int, set[str]] | None = None, failing_runs: set[int] | None = None) -> None:
        self.runtime, self.site = runtime, site
        self.unrecorded, self.bad_dumps = unrecorded or {}, bad_dumps or {}
        self.failing_runs = failing_runs or set()
        self.runs = 0
        self.dumped: list[tuple[int, str]] = []

    def train(self, runtime: HadoopRuntime, work: Path) -> Path:
        self.runs += 1
        lists = work / "classlists"
        client = expected(runtime, self.site)[0].parent / "client-0123456789abcdef.jsa"
        for path in [*expected(runtime, self.site), client]:
            if path.name not in self.unrecorded.get(self.runs, set()):
                _record(runtime, lists, path.parent.name, path.name.removesuffix(".jsa"))
        if self.runs in self.failing_runs:
            raise RuntimeError("the training run failed (exit 1): hpc-hadoop: the ResourceManager died")
        return lists

    def dump(self, runtime: HadoopRuntime, recipe: Recipe, lists: list[Path], target: Path, work: Path) -> str | None:
        self.dumped.append((self.runs, recipe.archive))
        if recipe.archive in self.bad_dumps.get(self.runs, set()):
            return "it does not map"
        return dump(runtime, recipe, lists, target, work)


def _fake(monkeypatch: pytest.MonkeyPatch, fake: _FakeTraining) -> _FakeTraining:
    monkeypatch.setattr(cds_build, "train", fake.train)
    monkeypatch.setattr(cds_build, "dump", fake.dump)
    return fake


def test_what_is_missing_gets_one_more_training_run_then_is_a_failure(
        fake_runtime: HadoopRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    runtime = _real_java(fake_runtime)
    site = tmp_path / "site"
    fake = _fake(monkeypatch, _FakeTraining(runtime, site, unrecorded={1: {"resourcemanager.jsa"}},
                                            bad_dumps={1: {"historyserver.jsa"}, 2: {"nodemanager.jsa"}}))
    fake.bad_dumps[1].add("nodemanager.jsa")
    result = build(runtime, site, force=True)
    assert fake.runs == 2 == result.training_runs
    # The second run dumps only what the first left missing.
    assert sorted(a for run, a in fake.dumped if run == 2) == ["historyserver.jsa", "nodemanager.jsa",
                                                               "resourcemanager.jsa"]
    assert result.missing == ["nodemanager.jsa"] and result.reasons == {"nodemanager.jsa": "it does not map"}
    assert sorted(p.name for p in result.installed) == ["client-0123456789abcdef.jsa", "historyserver.jsa",
                                                        "mrappmaster.jsa", "resourcemanager.jsa"]
    assert not result.up_to_date and result.size_bytes == sum(p.stat().st_size for p in result.installed) > 0
    assert not up_to_date(runtime, site)
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", str(site))
    monkeypatch.setattr(cds_build, "discover", lambda: runtime)
    fake.runs, fake.bad_dumps = 0, {1: {"nodemanager.jsa"}, 2: {"nodemanager.jsa"}}
    assert main([]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert "built in " in err and " s (2 training runs); missing after 2 training runs: nodemanager.jsa (it does not " \
        "map); fix: re-run" in err


def test_a_build_that_succeeds_is_one_training_run_and_then_up_to_date(
        fake_runtime: HadoopRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    runtime = _real_java(fake_runtime)
    site = tmp_path / "site"
    (site / "0123456789abcdef").mkdir(parents=True)  # the archives of an older runtime
    fake = _fake(monkeypatch, _FakeTraining(runtime, site))
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", str(site))
    monkeypatch.setattr(cds_build, "discover", lambda: runtime)
    assert main([]) == 0 and fake.runs == 1
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("hpc-hadoop cds_build: 5 archives (") and f"in {site}, built in" in out
    assert out.endswith(" s (1 training run)\n")
    assert up_to_date(runtime, site) and not (site / "0123456789abcdef").exists()
    modes = {oct(p.stat().st_mode & 0o777) for p in site.glob("*/*.jsa")}
    assert modes == {"0o644"} and {oct(p.stat().st_mode & 0o777) for p in [site, *site.glob("*")]} == {"0o755"}
    assert main([]) == 0 and fake.runs == 1  # nothing rebuilt
    assert capsys.readouterr().out == f"hpc-hadoop cds_build: the archives in {site} are up to date\n"
    result = build(runtime, site)
    assert result.up_to_date and result.installed == [] and result.size_bytes == 0
    assert not build(runtime, site, force=True).up_to_date and fake.runs == 2


def test_training_runs_that_fail_twice_are_one_error_line(fake_runtime: HadoopRuntime, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    runtime = _real_java(fake_runtime)
    site = tmp_path / "site"
    every = {p.name for p in expected(runtime, site)} | {"client-0123456789abcdef.jsa"}
    fake = _fake(monkeypatch, _FakeTraining(runtime, site, unrecorded={1: every, 2: every}, failing_runs={1, 2}))
    with pytest.raises(CdsBuildError, match="the ResourceManager died .2 training runs failed; missing: "):
        build(runtime, site)
    # A run that fails after its JVMs recorded everything (its teardown, say) still gives the archives.
    fake = _fake(monkeypatch, _FakeTraining(runtime, site, failing_runs={1}))
    assert build(runtime, site, force=True).missing == [] and fake.runs == 1
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", str(site))
    monkeypatch.setattr(cds_build, "discover", lambda: runtime)
    _fake(monkeypatch, _FakeTraining(runtime, site, unrecorded={1: every, 2: every}, failing_runs={1, 2}))
    assert main(["--force"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "; fix: re-run python -m launcher.runtime.cds_build --force" in err


def test_a_site_directory_that_is_a_link_is_refused_in_one_line(fake_runtime: HadoopRuntime, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    runtime = _real_java(fake_runtime)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "site")
    fake = _fake(monkeypatch, _FakeTraining(runtime, tmp_path / "site"))
    monkeypatch.setenv("HPC_HADOOP_CDS_SITE", str(tmp_path / "site"))
    monkeypatch.setattr(cds_build, "discover", lambda: runtime)
    assert main([]) == 2 and fake.runs == 0
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "symbolic link" in err and not list((tmp_path / "elsewhere").iterdir())


def test_old_key_directories_go_and_the_summary_says_what_is_missing(fake_runtime: HadoopRuntime,
                                                                     tmp_path: Path) -> None:
    site = tmp_path / "site"
    keep = expected(fake_runtime, site)
    for directory in (site / "0123456789abcdef", site / "notakey", keep[0].parent):
        directory.mkdir(parents=True, exist_ok=True)
    remove_old_keys(fake_runtime, site, [])
    assert sorted(p.name for p in site.iterdir()) == sorted(["notakey", keep[0].parent.name])
    line = summary(BuildResult(installed=[], missing=["a.jsa", "b.jsa"], seconds=3.2, up_to_date=False,
                               reasons={"a.jsa": "no class list"}), site)
    assert ("built in 3 s (0 training runs); missing after 2 training runs: a.jsa (no class list); b.jsa (not built); "
            "fix:") in line


def test_the_dumps_run_side_by_side_each_its_own_and_every_answer_is_kept(fake_runtime: HadoopRuntime, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A training run's dumps run :data:`DUMP_WORKERS` at a time (each is one busy JVM thread: six one after another
    took 47 s on 2 cores); every dump gets its own recipe and target, and each answer (done, or why not) lands on its
    own archive."""
    import threading
    import time

    from launcher.runtime.cds import Recipe

    running, most, lock = [0], [0], threading.Lock()
    seen: list[tuple[str, Path]] = []

    def dump(runtime: HadoopRuntime, recipe: Recipe, lists: object, target: Path, work: Path) -> str | None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            seen.append((recipe.name, target))
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return "it does not map" if recipe.name == "historyserver" else None

    monkeypatch.setattr(cds_build, "dump", dump)
    monkeypatch.setattr(cds_build, "DUMP_WORKERS", 2)
    key = "0123456789abcdef"
    names = ["resourcemanager", "nodemanager", "historyserver", "client-fedcba9876543210"]
    todo: dict[str, Recipe | None] = {f"{key}/{n}.jsa": Recipe(key=key, name=n, flags=(), classpath="lib/*")
                                      for n in names}
    todo[f"{key}/mrappmaster.jsa"] = None
    installed: dict[str, Path] = {}
    reasons: dict[str, str] = {}
    cds_build._dump_missing(fake_runtime, tmp_path / "site", tmp_path / "lists", tmp_path, todo, installed, reasons)
    assert most[0] == 2  # two at a time, never more
    assert sorted(name for name, _ in seen) == sorted(names)
    assert all(target == tmp_path / "site" / key / f"{name}.jsa" for name, target in seen)
    assert sorted(installed) == sorted(f"{key}/{n}.jsa" for n in names if n != "historyserver")
    assert reasons == {f"{key}/historyserver.jsa": "it does not map", f"{key}/mrappmaster.jsa": "no class list"}
