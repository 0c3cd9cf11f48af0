"""Hadoop properties from the command line (``-D``), warnings for unknown names, timeouts clamped to the walltime
(launcher/config/properties.py, launcher/render/config.py)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from launcher.config.load import load_spec, parse_set
from launcher.config.properties import config_file_for, known_properties, unknown_property_warnings
from launcher.config.spec import JobSpec
from launcher.render.config import render_config, timeout_limit_ms
from launcher.util.errors import UserError
from launcher.util.yamlio import dump_yaml
from tests.conftest import REPO


def _props(xml: str) -> dict[str, str]:
    return {p.findtext("name") or "": p.findtext("value") or "" for p in ET.fromstring(xml.strip()).iter("property")}


def _render(tmp_path: Path, job: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "job.yaml"
    path.write_text(dump_yaml({"name": "p", "filesystem": {"root": str(tmp_path)},
                                    "steps": [{"example": "pi", "args": [2, 10]}], **job}))
    return subprocess.run([sys.executable, "-m", "launcher.cli", "render", str(path), *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120, check=False)


# -- which file a key belongs in ------------------------------------------------------------------

def test_known_properties_come_from_the_runtimes_default_xml(built_runtime: Path) -> None:
    known = known_properties(str(built_runtime))
    assert known["mapreduce.job.reduces"] == "mapred-site"
    assert known["yarn.nodemanager.resource.memory-mb"] == "yarn-site"
    assert known["fs.defaultFS"] == "core-site"
    assert known["dfs.replication"] == "hdfs-site"


@pytest.mark.parametrize(("key", "file"), [("mapreduce.foo", "mapred-site"), ("yarn.bar", "yarn-site"),
                                           ("yarn.scheduler.capacity.x", "capacity-scheduler"),
                                           ("dfs.x", "hdfs-site"), ("io.x", "core-site")])
def test_unknown_keys_go_by_prefix(key: str, file: str) -> None:
    assert config_file_for(key, {}) == file


def test_define_goes_into_the_file_that_knows_the_key(built_runtime: Path) -> None:
    spec, _ = load_spec(None, data={"name": "d", "steps": [{"example": "pi"}]},
                        defines=["mapreduce.job.reduces=8", "yarn.nodemanager.vmem-check-enabled=false",
                                 "fs.trash.interval=5"])
    assert spec.hadoop.properties == {"mapred-site": {"mapreduce.job.reduces": "8"},
                                      "yarn-site": {"yarn.nodemanager.vmem-check-enabled": "false"},
                                      "core-site": {"fs.trash.interval": "5"}}


def test_define_wins_over_the_job_file() -> None:
    spec, _ = load_spec(None, data={"name": "d", "steps": [{"example": "pi"}],
                                    "hadoop": {"properties": {"mapred-site": {"mapreduce.job.reduces": 2}}}},
                        defines=["mapreduce.job.reduces=8"])
    assert spec.hadoop.properties["mapred-site"]["mapreduce.job.reduces"] == "8"


def test_bad_define_is_one_line_naming_the_option() -> None:
    with pytest.raises(UserError) as info:
        load_spec(None, data={"name": "d", "steps": [{"example": "pi"}]}, defines=["mapreduce.job.reduces"])
    assert str(info.value).startswith("-D: ") and "-D mapreduce.job.reduces=8" in str(info.value)


def test_set_hadoop_properties_with_a_dotted_key_works() -> None:
    assert parse_set("hadoop.properties.mapred-site.mapreduce.job.reduces=8") == {
        "hadoop": {"properties": {"mapred-site": {"mapreduce.job.reduces": 8}}}}
    spec, _ = load_spec(None, data={"name": "d", "steps": [{"example": "pi"}]},
                        sets=["hadoop.properties.mapred-site.mapreduce.job.reduces=8"])
    assert spec.hadoop.properties["mapred-site"]["mapreduce.job.reduces"] == 8


def test_set_hadoop_properties_without_a_file_names_the_d_spelling() -> None:
    with pytest.raises(UserError) as info:
        parse_set("hadoop.properties.mapreduce.job.reduces=8")
    assert info.value.file == "--set"
    assert "-D mapreduce.job.reduces=8" in str(info.value)
    assert "\n" not in str(info.value)


def test_cli_define_on_render(tmp_path: Path) -> None:
    proc = _render(tmp_path, {}, "-D", "mapreduce.job.reduces=8", "-Dyarn.nodemanager.vmem-check-enabled=false")
    assert proc.returncode == 0, proc.stderr
    mapred = proc.stdout.split("==> conf/mapred-site.xml <==")[1].split("==>")[0]
    yarn = proc.stdout.split("==> conf/yarn-site.xml <==")[1].split("==>")[0]
    assert _props(mapred)["mapreduce.job.reduces"] == "8"
    assert _props(yarn)["yarn.nodemanager.vmem-check-enabled"] == "false"


# -- unknown names ----------------------------------------------------------------------------------

def test_misspelt_property_warns_with_the_nearest_key(built_runtime: Path) -> None:
    known = known_properties(str(built_runtime))
    keys = ["mapreduce.map.memroy.mb", "mapreduce.job.reduces", "hpc.anything", "yarn.scheduler.capacity.root.q"]
    warnings = unknown_property_warnings({"hadoop.properties.mapred-site": keys}, known)
    assert warnings == ["hadoop.properties.mapred-site: unknown Hadoop property mapreduce.map.memroy.mb "
                        "(no *-default.xml of the runtime names it): did you mean mapreduce.map.memory.mb?"]


def test_cli_warns_about_a_misspelt_property_and_still_renders(tmp_path: Path, built_runtime: Path) -> None:
    proc = _render(tmp_path, {"hadoop": {"properties": {"mapred-site": {"mapreduce.map.memroy.mb": 2048}}}},
                   "-D", "yarn.nodemanager.resource.memroy-mb=4096")
    assert proc.returncode == 0, proc.stderr
    assert "did you mean mapreduce.map.memory.mb?" in proc.stderr
    assert "did you mean yarn.nodemanager.resource.memory-mb?" in proc.stderr


def test_every_property_name_is_checked_and_the_warning_names_where_it_was_given(tmp_path: Path,
                                                                                 built_runtime: Path) -> None:
    """Issue 28 item 6: a step's ``properties:`` and a ``-D`` in its ``args:`` were not checked, and a ``-D`` typo
    was blamed on ``hadoop.properties.yarn-site``."""
    (tmp_path / "in").mkdir()
    steps = [{"example": "pi", "args": ["-D", "mapreduce.job.mpas=2", "-Dmapreduce.job.reduces=1", 2, 10]},
             {"streaming": {"mapper": "cat", "input": [str(tmp_path / "in")], "output": str(tmp_path / "out")},
              "properties": {"mapreduce.job.reduce.slowstrat.completedmaps": 0.9, "mapreduce.job.reduces": 1}},
             {"jar": "${examples_jar}", "args": ["pi", "-Dmapreduce.map.memroy.mb=1024", 1, 1]}]
    proc = _render(tmp_path, {"steps": steps, "hadoop": {"properties": {"mapred-site": {"mapreduce.task.timout": 9}}}},
                   "-D", "yarn.nodemanager.resource.memroy-mb=4096")
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    why = "(no *-default.xml of the runtime names it): did you mean"
    assert warnings == [
        f"warning: -D: unknown Hadoop property yarn.nodemanager.resource.memroy-mb {why} "
        "yarn.nodemanager.resource.memory-mb?",
        f"warning: hadoop.properties.mapred-site: unknown Hadoop property mapreduce.task.timout {why} "
        "mapreduce.task.timeout?",
        f"warning: steps.1.args: unknown Hadoop property mapreduce.job.mpas {why} mapreduce.job.maps?",
        f"warning: steps.2.properties: unknown Hadoop property mapreduce.job.reduce.slowstrat.completedmaps {why} "
        "mapreduce.job.reduce.slowstart.completedmaps?",
        f"warning: steps.3.args: unknown Hadoop property mapreduce.map.memroy.mb {why} mapreduce.map.memory.mb?"]


def test_shipped_presets_use_only_known_names(built_runtime: Path) -> None:
    from launcher.config.load import site_presets
    from launcher.config.properties import property_warnings

    for site in site_presets():
        spec, _ = load_spec(None, data={"name": "s", "site": site, "steps": [{"example": "pi"}]})
        assert property_warnings(spec) == [], site


# -- timeouts clamped to the walltime ----------------------------------------------------------------

def test_timeout_limit_is_half_the_walltime_at_least_a_minute() -> None:
    assert timeout_limit_ms(3600) == 1_800_000
    assert timeout_limit_ms(60) == 60_000


def test_smoky_timeouts_are_clamped_to_half_the_walltime(make_spec: Callable[..., JobSpec],
                                                         make_test_plan: Callable[..., Any]) -> None:
    spec = make_spec(site="ornl-smoky", scheduler="pbs", walltime="02:00:00", interface=None)
    notes: list[str] = []
    files = render_config(make_test_plan(spec), notes)
    mapred, yarn = _props(files["mapred-site.xml"]), _props(files["yarn-site.xml"])
    assert mapred["mapreduce.task.timeout"] == "3600000"
    assert mapred["mapreduce.reduce.shuffle.connect.timeout"] == "3600000"
    assert mapred["mapreduce.reduce.shuffle.read.timeout"] == "3600000"
    assert yarn["yarn.nm.liveness-monitor.expiry-interval-ms"] == "3600000"
    assert len(notes) == 4 and all("half the walltime" in n for n in notes)
    assert any(n.startswith("mapreduce.reduce.shuffle.read.timeout clamped from 72000000") for n in notes)


def test_short_walltime_clamps_hadoop_defaults_too(make_spec: Callable[..., JobSpec],
                                                   make_test_plan: Callable[..., Any]) -> None:
    spec = make_spec(walltime="00:10:00")
    notes: list[str] = []
    files = render_config(make_test_plan(spec), notes)
    mapred, yarn = _props(files["mapred-site.xml"]), _props(files["yarn-site.xml"])
    assert mapred["mapreduce.task.timeout"] == "300000"          # template's 30 min
    assert yarn["yarn.nm.liveness-monitor.expiry-interval-ms"] == "60000"  # the template's 60 s: below the limit
    assert yarn["yarn.am.liveness-monitor.expiry-interval-ms"] == "300000"  # Hadoop's 10 min, now written
    assert "mapreduce.reduce.shuffle.read.timeout" not in mapred  # Hadoop's 3 min is below the limit
    assert len(notes) == 2


def test_default_walltime_clamps_nothing(make_spec: Callable[..., JobSpec],
                                         make_test_plan: Callable[..., Any]) -> None:
    notes: list[str] = []
    render_config(make_test_plan(make_spec()), notes)
    assert notes == []


def test_render_prints_the_clamps_under_notes(tmp_path: Path) -> None:
    proc = _render(tmp_path, {"walltime": "00:20:00"})
    assert proc.returncode == 0, proc.stderr
    notes = proc.stdout.split("==> notes <==\n")[1].split("==>")[0]
    assert "mapreduce.task.timeout clamped from 1800000 to 600000 ms (half the walltime)" in notes
