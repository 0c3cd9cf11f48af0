"""Tests of launcher/cli/doctor.py."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli import doctor
from launcher.cli.main import main
from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import PORT_OFFSETS
from tests.ports import eligible, every_base, in_own_network, listening

# -- issue 11, folded from tests/unit/test_shared_root.py: Issue #11: a batch job's cluster directory must be
# on a filesystem every node shares (launcher/filesystems/__init__.py ``check_shared_root``,
# launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued.


def test_doctor_reports_a_local_root_as_a_fail_line(tmp_path: Path, pfs_root: Path,
                                                    write_yaml: Callable[..., Path]) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    job = write_yaml(tmp_path / "job.yaml", {"name": "loc", "scheduler": "slurm", "filesystem": {"root": str(pfs_root)},
                                             "steps": [{"example": "pi", "args": [1, 10]}]})
    result = CliRunner().invoke(main, ["doctor", str(job)])
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "shared root" in line]
    assert line.split()[0] == "fail" and "which the compute nodes do not share" in line, line
    assert not any("job file" in line and "do not share" in line for line in result.stdout.splitlines())


# -- issue 36 item 4: doctor's free-port check is start's rule (launcher/plan/cluster_plan.py choose_ports)

def test_doctors_port_check_needs_free_only_the_ports_the_daemons_use() -> None:
    """In a network namespace of its own (tests/ports.py): with +20 of every block taken (no daemon's port) the check
    is ok, as ``start`` would find a block; with the ResourceManager's web port taken in every block it fails, with
    the blocks tried and who holds the busy ports (this test process: root)."""

    def ports_line() -> str:
        result = CliRunner().invoke(main, ["doctor"])
        [line] = [line for line in result.stdout.splitlines() if line.split()[1:2] == ["ports"]]
        return line

    def body() -> tuple[str, str]:
        with listening(base + 20 for base in every_base()):
            unused = ports_line()
        with listening(base + PORT_OFFSETS["rm_web"] for base in every_base()):
            used = ports_line()
        return unused, used

    unused, used = in_own_network(body)
    assert unused.split()[0] == "ok", unused
    assert used.split()[0] == "fail", used
    assert f"tried all {len(eligible(every_base()))} blocks" in used and "listened on by root (uid 0)" in used, used


def test_doctor_says_the_realms_keys_stay_off_every_shared_filesystem(
        tmp_path: Path, make_spec: Callable[..., JobSpec], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 item 5: ``doctor`` names the filesystems it treats as ones whose modes another user may slip past
    (every shared one) and where the keys are instead; nothing under ``security: simple``; a warning when the
    node-local root is not known to be node-local."""
    spec = make_spec(filesystem={"root": str(tmp_path)})
    check = doctor._realm_keys(spec)
    assert check is not None and check.status == "ok", check
    assert f"never on {tmp_path}" in check.detail and "hpc-hadoop-" in check.detail and "sealed" in check.detail
    assert doctor._realm_keys(make_spec(filesystem={"root": str(tmp_path)}, security="simple")) is None
    monkeypatch.setattr(importlib.import_module("launcher.filesystems.detect"), "node_local_type",
                        lambda path, **_: None)
    warned = doctor._realm_keys(spec)
    assert warned is not None and warned.status == "warn" and warned.fix and "TMPDIR" in warned.fix


# -- issue 39 item 7: a user's own runtime that shadows the site's is a warning -----------------------------------

def _runtime_at(home: Path) -> Path:
    """Our runtime's layout (``lib/``, ``VERSION``) with empty jars: what ``discover`` reads; nothing runs it."""
    (home / "lib").mkdir(parents=True)
    (home / "VERSION").write_text("3.4.2\n")
    for name in ("hadoop-mapreduce-examples-3.4.2.jar", "hadoop-mapreduce-client-jobclient-3.4.2-tests.jar",
                 "hadoop-streaming-3.4.2.jar"):
        (home / "lib" / name).write_bytes(b"")
    return home


@pytest.fixture
def prefixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """No checkout runtime; the user prefix (``$XDG_DATA_HOME``, tests/unit/conftest.py) and a site prefix in
    ``tmp_path``, neither with a runtime yet."""
    from launcher.runtime import hadoop
    from launcher.util import resources

    monkeypatch.setattr(hadoop, "BUILT_RUNTIME", tmp_path / "no-checkout" / "hadoop-runtime")
    monkeypatch.setattr(resources, "site_prefix", lambda: tmp_path / "venv" / "share" / "hpc-hadoop" / "runtime")
    return {"user": resources.user_prefix() / "hadoop", "site": resources.site_prefix() / "hadoop"}


def _runtime_line(tmp_path: Path) -> list[str]:
    result = CliRunner().invoke(main, ["doctor", "--set", f"filesystem.root={tmp_path}"])
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[1:3] == ["hadoop", "runtime"])
    return lines[at:at + 2]


def test_doctor_warns_when_the_users_runtime_shadows_the_sites(tmp_path: Path, prefixes: dict[str, Path]) -> None:
    """The user's ``runtime install`` wins the search over the site's runtime and its archives: ``warn``, naming both
    and the command that removes the user's; ``ok`` when only one of them is there, or when the site's is used."""
    _runtime_at(prefixes["site"])
    ok = _runtime_line(tmp_path)
    assert ok[0].split()[0] == "ok" and str(prefixes["site"]) in ok[0], ok
    _runtime_at(prefixes["user"])
    warned = _runtime_line(tmp_path)
    assert warned[0].split()[0] == "warn", warned
    assert str(prefixes["user"]) in warned[0] and str(prefixes["site"]) in warned[0], warned
    assert "class-data-sharing archives" in warned[0]
    assert warned[1].split() == ["fix:", "remove", "yours,", "`rm", "-rf", f"{prefixes['user']}`,", "to", "use",
                                 "the", "site's"], warned


def test_doctor_is_ok_with_the_users_runtime_alone(tmp_path: Path, prefixes: dict[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _runtime_at(prefixes["user"])
    line = _runtime_line(tmp_path)[0]
    assert line.split()[0] == "ok" and str(prefixes["user"]) in line, line
    _runtime_at(prefixes["site"])
    monkeypatch.setenv("HPC_HADOOP_HOME", str(prefixes["site"]))  # the site's named: the user's shadows nothing
    assert _runtime_line(tmp_path)[0].split()[0] == "ok"


def _lines(tmp_path: Path, *names: str) -> dict[str, str]:
    """doctor's lines whose check is one of ``names`` (a check's name may be two words), with the fix line after."""
    out = CliRunner().invoke(main, ["doctor", "--set", f"filesystem.root={tmp_path}"]).stdout.splitlines()
    found = {}
    for at, line in enumerate(out):
        for name in sorted(names, key=len, reverse=True):  # "spark examples" before "spark"
            if " ".join(line.split()[1:1 + len(name.split())]) == name:
                fix = out[at + 1].strip() if at + 1 < len(out) and out[at + 1].strip().startswith("fix:") else ""
                found[name] = " ".join(line.split()) + (f" | {fix}" if fix else "")
                break
    return found


def _spark_at(home: Path, *, jar: bool) -> None:
    for name in ("bin/spark-submit", "jars/spark-core_2.13-4.1.1.jar"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    if jar:
        (home.parent / "hpc-hadoop-spark-examples.jar").write_bytes(b"")


def test_doctor_names_spark_its_examples_jar_and_the_runtimes_archives(
        tmp_path: Path, prefixes: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: Spark, ``${spark_examples_jar}`` and the class-data-sharing archives of the runtime in use each get a
    line; a user's own Spark that shadows the site's is a warning, as for the Hadoop runtime."""
    from launcher.render import spark

    monkeypatch.setattr(spark, "BUILT_SPARK", tmp_path / "no-checkout" / "pyspark")
    _runtime_at(prefixes["site"])
    found = _lines(tmp_path, "spark", "spark examples", "cds archives")
    assert found["spark"].startswith("warn spark no Spark runtime found: spark: and pyspark: steps cannot run")
    assert "fix: run `hpc-hadoop runtime install`" in found["spark"]
    assert "spark examples" not in found
    cds = prefixes["site"] / "cds"
    assert found["cds archives"].startswith(f"warn cds archives resourcemanager.jsa, nodemanager.jsa, "
                                            f"historyserver.jsa, mrappmaster.jsa not in {cds}")
    assert found["cds archives"].endswith("| fix: hpc-hadoop runtime install --site")

    site_spark = prefixes["site"].parent / "spark" / "pyspark"
    _spark_at(site_spark, jar=False)
    found = _lines(tmp_path, "spark", "spark examples")
    assert found["spark"] == f"ok spark Spark 4.1.1 at {site_spark}"
    assert found["spark examples"] == (f"warn spark examples no Spark examples jar beside {site_spark}: "
                                       "${spark_examples_jar} is empty | fix: hpc-hadoop runtime install, or "
                                       "./install.sh in a checkout")

    mine = prefixes["user"].parent / "spark" / "pyspark"
    _spark_at(mine, jar=True)
    found = _lines(tmp_path, "spark", "spark examples")
    assert found["spark"] == (f"warn spark Spark 4.1.1 at {mine}: your own (`hpc-hadoop runtime install`) is used, "
                              f"not the site's at {site_spark.parent} | fix: remove yours, `rm -rf {mine.parent}`, "
                              "to use the site's")
    assert found["spark examples"] == f"ok spark examples {mine.parent / 'hpc-hadoop-spark-examples.jar'}"
