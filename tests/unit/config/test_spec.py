"""The job file: validation, error messages and layering (launcher/config/spec.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import launcher.config.load
from launcher.cli.main import main
from launcher.config.load import load_spec, parse_set, site_presets
from launcher.config.spec import ExampleStep, JarStep, JobSpec, StreamingStep, stripe_aligned_block_size
from launcher.plan.cluster_plan import ClusterPlan
from launcher.schedulers.base import Allocation
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError
from launcher.util.units import GiB, MiB
from launcher.util.yamlio import dump_yaml, load_yaml
from tests.conftest import REPO

WriteYaml = Callable[..., Path]
Layers = dict[str, Path]
MINIMAL: dict[str, Any] = {"name": "wc", "steps": [{"example": "pi", "args": [2, 10]}]}


def job_error(tmp_path: Path, data: Any = None, *, text: str | None = None, **kwargs: Any) -> tuple[UserError, Path]:
    """Write a job file, load it, return the UserError it must raise."""
    path = tmp_path / "job.yaml"
    if text is not None:
        path.write_text(text)
    else:
        path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError) as info:
        load_spec(path, **kwargs)
    return info.value, path


# -- valid jobs ------------------------------------------------------------------------------

def test_minimal_job_from_data_gets_builtin_defaults() -> None:
    spec, sources = load_spec(None, data=MINIMAL)
    assert sources == ["<job>"]
    assert spec.name == "wc"
    assert spec.scheduler == "local"
    assert spec.nodes == 1
    assert spec.walltime == 3600
    assert spec.hadoop.map_memory == GiB
    assert spec.filesystem.root == "/tmp/hpc-hadoop-pfs"
    assert spec.batch.signal_lead == 180
    step = spec.steps[0]
    assert isinstance(step, ExampleStep)
    assert step.example == "pi"
    assert step.args == ["2", "10"]  # numbers in args become strings


def test_minimal_job_from_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("name: wc\nwalltime: '00:20:00'\nhadoop:\n  map_memory: 512m\n"
                    "steps:\n  - example: teragen\n    args: [1000, /tmp/x]\n")
    spec, sources = load_spec(path)
    assert sources == [str(path)]
    assert spec.walltime == 20 * 60
    assert spec.hadoop.map_memory == 512 * MiB
    assert spec.steps[0].args == ["1000", "/tmp/x"]


def test_step_kinds_are_told_apart_by_their_key() -> None:
    spec, _ = load_spec(None, data={"name": "k", "steps": [
        {"example": "wordcount", "args": ["/a", "/b"]},
        {"jar": "/x.jar", "class": "org.Main"},
        {"streaming": {"mapper": "cat", "input": "/in", "output": "/out"}},
    ]})
    example, jar, streaming = spec.steps
    assert isinstance(example, ExampleStep)
    assert isinstance(jar, JarStep)
    assert jar.main_class == "org.Main"
    assert isinstance(streaming, StreamingStep)
    assert streaming.streaming.input == ["/in"]  # one input becomes a list


def test_numbers_in_jar_step_args_become_strings() -> None:
    spec, _ = load_spec(None, data={"name": "j", "steps": [{"jar": "/x.jar", "args": ["-nrFiles", 2]}]})
    assert spec.steps[0].args == ["-nrFiles", "2"]


def test_spec_is_frozen() -> None:
    spec, _ = load_spec(None, data=MINIMAL)
    with pytest.raises(Exception, match="frozen"):
        spec.nodes = 2  # type: ignore[misc]


# -- errors: each names the file, the dotted field and a fix ---------------------------------

def test_missing_steps(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {"name": "wc"})
    assert err.file == str(path)
    assert err.field == "steps"
    assert str(err) == f"{path}: steps: required field is missing (fix: add it)"


def test_empty_steps_list(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {"name": "wc", "steps": []})
    assert err.field == "steps"
    assert str(path) in str(err)
    assert "fix: give at least one" in str(err)


@pytest.mark.parametrize("steps", ["1e9", "wordcount", "{jar: x.jar}"])
def test_steps_that_are_not_a_list_get_one_line(tmp_path: Path, steps: str) -> None:
    """Issue 28 item 8: ``steps: 1e9`` raised ``TypeError: 'float' object is not iterable`` in
    ``absolute_paths`` before the model could name the field."""
    err, path = job_error(tmp_path, text=f"name: wc\nsteps: {steps}\n")
    assert err.field == "steps" and "valid list" in str(err) and str(path) in str(err)


def test_unknown_top_level_field_lists_valid_fields(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "nodez": 2})
    text = str(err)
    assert text.startswith(f"{path}: nodez: unknown field 'nodez'")
    valid = text.split("valid fields here:", 1)[1]
    for field in ("name", "nodes", "walltime", "steps", "hadoop", "filesystem", "batch", "scheduler", "site"):
        assert field in valid


def test_unknown_nested_field_lists_that_sections_fields(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "hadoop": {"map_mem": "2g"}})
    assert err.field == "hadoop.map_mem"
    assert "map_memory" in err.fix and "reduce_memory" in err.fix and "nodes" not in err.fix


@pytest.mark.parametrize(("step", "field", "valid"), [
    ({"example": "pi", "bogus": 1}, "steps.1.bogus", "args, example, name, output, properties"),
    ({"jar": "/x.jar", "bogus": 1}, "steps.1.bogus", "args, class, jar, name, output, properties"),
    ({"streaming": {"mapper": "cat", "input": "/a", "output": "/b", "bogus": 1}}, "steps.1.streaming.bogus",
     "files, input, mapper, output, reducer, reducers"),
])
def test_unknown_field_in_a_step_lists_that_step_kinds_fields(tmp_path: Path, step: dict[str, Any], field: str,
                                                              valid: str) -> None:
    err, path = job_error(tmp_path, {"name": "wc", "steps": [step]})
    assert err.file == str(path)
    assert err.field == field
    assert f"valid fields here: {valid}" in str(err)


@pytest.mark.parametrize(("data", "field", "meant"), [
    ({**MINIMAL, "walltme": "1:00:00"}, "walltme", "walltime"),
    ({**MINIMAL, "hadoop": {"map_memroy": "2g"}}, "hadoop.map_memroy", "map_memory"),
    ({"name": "wc", "steps": [{"streaming": {"mapper": "cat", "input": "/a", "output": "/b", "reducr": "wc"}}]},
     "steps.1.streaming.reducr", "reducer"),
])
def test_an_unknown_field_says_which_valid_one_it_was_likely_meant_to_be(tmp_path: Path, data: dict[str, Any],
                                                                         field: str, meant: str) -> None:
    """Issue 40: ``walltme`` listed all 17 names and no "did you mean", as ``-D`` properties already had."""
    err, _ = job_error(tmp_path, data)
    assert err.field == field and err.fix is not None and err.fix.startswith(f"did you mean {meant!r}? valid fields")


@pytest.mark.parametrize(("text", "field", "names"), [
    ("filesystem: [a]\n", "filesystem", "root"),
    ("hadoop: 5\n", "hadoop", "map_memory"),
])
def test_a_section_given_as_a_list_or_a_number_names_its_fields(tmp_path: Path, text: str, field: str,
                                                                 names: str) -> None:
    """Issue 40: ``Input should be a valid dictionary or instance of FilesystemSpec``: a class name and no fix."""
    err, _ = job_error(tmp_path, text="name: wc\nsteps: [{example: pi, args: [1, 10]}]\n" + text)
    assert err.field == field and "this is a section, a mapping of its own fields" in str(err)
    assert "Spec" not in str(err) and err.fix is not None and err.fix.startswith("use key: value lines of its fields:")
    assert names in err.fix


def test_unknown_field_in_second_step_is_numbered_from_one(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {"name": "wc", "steps": [{"example": "pi"}, {"example": "pi", "oops": 1}]})
    assert err.field == "steps.2.oops"


def test_step_without_a_kind(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {"name": "wc", "steps": [{"program": "pi"}]})
    assert str(err).startswith(f"{path}: steps: step 1 has none of `example`, `jar`, `streaming`, `spark`, `pyspark`")


def test_wrong_type(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "nodes": "many"})
    assert err.file == str(path)
    assert err.field == "nodes"
    assert "'many'" in str(err)
    assert err.fix == "use a whole number"


def test_bad_size_names_field_and_accepted_forms(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "hadoop": {"map_memory": "lots"}})
    assert str(err).startswith(f"{path}: hadoop.map_memory: 'lots' is not a size")
    assert "512m, 2g" in str(err)


def test_bad_walltime(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "walltime": "soon"})
    assert str(err).startswith(f"{path}: walltime: 'soon' is not a walltime")
    assert "HH:MM:SS" in str(err)


def test_zero_walltime(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {**MINIMAL, "walltime": "00:00:00"})
    assert err.field == "walltime"
    assert "positive" in str(err)


def test_bad_example_name_lists_the_examples(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {"name": "wc", "steps": [{"example": "wordcnt"}]})
    assert err.field == "steps.1.example"
    assert "'wordcount'" in err.fix and "'terasort'" in err.fix


def test_bad_scheduler_lists_the_schedulers(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {**MINIMAL, "scheduler": "lsf"})
    assert err.field == "scheduler"
    assert "'slurm'" in err.fix and "'local'" in err.fix


def test_several_problems_are_counted(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {"name": "wc", "nodes": "x", "walltime": "y", "steps": [{"example": "pi"}]})
    assert "(and 1 more problem)" in str(err)


@pytest.mark.parametrize(("text", "line"), [
    ("name: j\nsteps:\n  - example: pi\n   args: x\n", 4),
    ("name: j\nsteps:\n\t- example: pi\n", 3),
    ("name: j\nsteps:\n  - example: pi\n    args: [1, 2\nnodes: 1\n", 5),
])
def test_invalid_yaml_names_the_line(tmp_path: Path, text: str, line: int) -> None:
    err, path = job_error(tmp_path, text=text)
    assert err.file == str(path)
    assert err.field == f"line {line}"
    assert "not valid YAML" in str(err)
    assert err.fix


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, text="- a\n- b\n")
    assert err.file == str(path)
    assert "mapping" in str(err)


def test_missing_job_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="job file not found") as info:
        load_spec(tmp_path / "nope.yaml")
    assert info.value.file == str(tmp_path / "nope.yaml")


def test_unknown_site_preset_lists_presets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          write_yaml: WriteYaml) -> None:
    sites = tmp_path / "sites"
    write_yaml(sites / "mysite.yaml", {"nodes": 1})
    write_yaml(sites / "other.yaml", {"nodes": 1})
    monkeypatch.setattr(launcher.config.load, "SITE_DIR", sites)
    err, path = job_error(tmp_path, {**MINIMAL, "site": "nosuch"})
    assert err.file == str(path)
    assert err.field == "site"
    assert "'nosuch'" in str(err)
    assert err.fix == "use one of: mysite, other"


def test_unknown_properties_file_name_lists_valid_files(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "hadoop": {"properties": {"yarn_site": {"a": 1}}}})
    assert str(err).startswith(f"{path}: hadoop.properties: unknown configuration file 'yarn_site'")
    assert "core-site, yarn-site, mapred-site, capacity-scheduler, hdfs-site" in str(err)


def test_local_scheduler_with_three_nodes(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "scheduler": "local", "nodes": 3})
    assert err.file == str(path)
    assert "nodes: 1" in str(err)
    assert "slurm" in str(err)


def test_local_scheduler_with_three_nodes_via_override_blames_the_command_line(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, MINIMAL, overrides={"nodes": 3})
    assert err.file == "command line"


def test_local_scheduler_error_names_the_layer_and_field_that_set_nodes(tmp_path: Path) -> None:
    err, path = job_error(tmp_path, {**MINIMAL, "nodes": 3}, sets=["hadoop.map_memory=2g"])
    assert err.file == str(path)
    assert err.field == "nodes"


def test_unknown_capitalised_field_is_a_user_error(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, {**MINIMAL, "Nodes": 2})
    assert "Nodes" in str(err)


def test_empty_key_is_a_user_error(tmp_path: Path) -> None:
    err, _ = job_error(tmp_path, text="name: wc\n'': 1\nsteps:\n  - example: pi\n")
    assert err.field is not None


# -- layering --------------------------------------------------------------------------------

@pytest.fixture
def layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_yaml: WriteYaml) -> dict[str, Path]:
    """A site preset, a user config and a job file that each set some of the same fields."""
    sites = tmp_path / "site-configs"
    site = write_yaml(sites / "mysite.yaml", {
        "scheduler": "pbs",
        "walltime": "02:00:00",
        "nodemanager_on_master": False,
        "hadoop": {"map_memory": "2g", "reduce_memory": "2g", "am_memory": "2g", "daemon_heap": "2g",
                   "properties": {"yarn-site": {"a": "site", "b": "site", "c": "site"},
                                  "core-site": {"s": "site"}}},
        "batch": {"extra_directives": ["--site-1", "--site-2"], "partition": "sitepart"},
    })
    monkeypatch.setattr(launcher.config.load, "SITE_DIR", sites)
    user = write_yaml(tmp_path / "home" / "config.yaml", {
        "site": "mysite",
        "scheduler": "slurm",
        "walltime": "03:00:00",
        "hadoop": {"reduce_memory": "3g", "properties": {"yarn-site": {"b": "user", "c": "user"}}},
        "batch": {"extra_directives": ["--user"], "account": "useracct"},
    })
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(user))
    job = write_yaml(tmp_path / "job.yaml", {
        "name": "layered",
        "nodes": 2,
        "walltime": "04:00:00",
        "hadoop": {"am_memory": "1536m", "properties": {"yarn-site": {"c": "job"}}},
        "steps": [{"example": "pi", "args": [1, 1]}],
    })
    return {"site": site, "user": user, "job": job}


def test_layer_precedence_and_merging(layers: Layers) -> None:
    spec, sources = load_spec(layers["job"], sets=["hadoop.map_memory=3g"], overrides={"nodes": 4, "walltime": None})
    assert sources == [str(layers["site"]), str(layers["user"]), str(layers["job"]), "command line"]
    h = spec.hadoop
    assert h.heap_ratio == 0.8                      # built-in (nobody sets it)
    assert h.daemon_heap == 2 * GiB                 # site > built-in
    assert h.reduce_memory == 3 * GiB               # user > site
    assert h.am_memory == 1536 * MiB                # job > site
    assert h.map_memory == 3 * GiB                  # --set > site
    assert spec.nodes == 4                          # override > job
    assert spec.walltime == 4 * 3600                # job > user > site; a None override is ignored
    assert spec.scheduler == "slurm"                # user > site
    assert spec.nodemanager_on_master is False      # site > built-in
    assert spec.site == "mysite"                    # chosen in the user config
    # mappings merge key by key across layers
    assert h.properties == {"yarn-site": {"a": "site", "b": "user", "c": "job"}, "core-site": {"s": "site"}}
    assert spec.batch.partition == "sitepart" and spec.batch.account == "useracct"
    # lists are replaced whole, not concatenated
    assert spec.batch.extra_directives == ["--user"]


def test_set_beats_overrides(layers: Layers) -> None:
    spec, _ = load_spec(layers["job"], sets=["nodes=5"], overrides={"nodes": 4})
    assert spec.nodes == 5


def test_later_set_beats_earlier_set(layers: Layers) -> None:
    spec, _ = load_spec(layers["job"], sets=["hadoop.map_memory=3g", "hadoop.map_memory=5g"])
    assert spec.hadoop.map_memory == 5 * GiB


def test_site_can_be_chosen_on_the_command_line(layers: Layers, write_yaml: WriteYaml) -> None:
    write_yaml(layers["site"].parent / "bigsite.yaml", {"hadoop": {"daemon_heap": "4g"}})
    spec, sources = load_spec(layers["job"], overrides={"site": "bigsite"})
    assert sources[0] == str(layers["site"].parent / "bigsite.yaml")
    assert spec.hadoop.daemon_heap == 4 * GiB


def test_bad_value_in_user_config_names_the_user_config(layers: Layers, write_yaml: WriteYaml) -> None:
    write_yaml(layers["user"], {"scheduler": "slurm", "hadoop": {"reduce_memory": "lots"}})
    with pytest.raises(UserError) as info:
        load_spec(layers["job"])
    assert info.value.file == str(layers["user"])
    assert str(info.value).startswith(f"{layers['user']}: hadoop.reduce_memory: 'lots' is not a size")


def test_bad_value_in_site_preset_names_the_preset(layers: Layers, write_yaml: WriteYaml) -> None:
    write_yaml(layers["site"], {"hadoop": {"containers_per_node": "several"}})
    with pytest.raises(UserError) as info:
        load_spec(layers["job"])
    assert info.value.file == str(layers["site"])
    assert info.value.field == "hadoop.containers_per_node"


def test_bad_lower_layer_value_is_harmless_when_a_higher_layer_wins(layers: Layers, write_yaml: WriteYaml) -> None:
    write_yaml(layers["user"], {"scheduler": "slurm", "hadoop": {"reduce_memory": "lots"}})
    spec, _ = load_spec(layers["job"], sets=["hadoop.reduce_memory=1g"])
    assert spec.hadoop.reduce_memory == GiB


def test_bad_set_value_names_the_command_line(layers: Layers) -> None:
    with pytest.raises(UserError) as info:
        load_spec(layers["job"], sets=["hadoop.map_memory=lots"])
    assert info.value.file == "command line"
    assert info.value.field == "hadoop.map_memory"


def test_unknown_site_in_user_config_names_the_user_config(layers: Layers, write_yaml: WriteYaml) -> None:
    write_yaml(layers["user"], {"site": "gone"})
    with pytest.raises(UserError) as info:
        load_spec(layers["job"])
    assert info.value.file == str(layers["user"])
    assert info.value.fix == "use one of: mysite"


def test_invalid_yaml_in_user_config_names_it(layers: Layers) -> None:
    layers["user"].write_text("hadoop:\n  map_memory: [2g\n")
    with pytest.raises(UserError, match="not valid YAML") as info:
        load_spec(layers["job"])
    assert info.value.file == str(layers["user"])


def test_absent_user_config_is_not_a_layer(tmp_path: Path, write_yaml: WriteYaml) -> None:
    job = write_yaml(tmp_path / "job.yaml", MINIMAL)
    _, sources = load_spec(job)
    assert sources == [str(job)]


# -- --set ------------------------------------------------------------------------------------

def test_parse_set_nests_and_reads_yaml_scalars() -> None:
    assert parse_set("hadoop.map_memory=2g") == {"hadoop": {"map_memory": "2g"}}
    assert parse_set("nodes=3") == {"nodes": 3}
    assert parse_set("nodemanager_on_master=false") == {"nodemanager_on_master": False}
    assert parse_set("name=") == {"name": ""}
    assert parse_set("interface=a=b") == {"interface": "a=b"}


def test_parse_set_quoted_dotted_property_name() -> None:
    assert parse_set('hadoop.properties.yarn-site."yarn.x.y"=5') == {
        "hadoop": {"properties": {"yarn-site": {"yarn.x.y": 5}}}}


def test_set_quoted_property_reaches_the_spec() -> None:
    spec, _ = load_spec(None, data=MINIMAL, sets=['hadoop.properties.yarn-site."yarn.x.y"=5'])
    assert spec.hadoop.properties == {"yarn-site": {"yarn.x.y": 5}}


@pytest.mark.parametrize("bad", ["nodes", "=3", "  =3"])
def test_parse_set_without_key_or_equals(bad: str) -> None:
    with pytest.raises(UserError, match="not key=value") as info:
        parse_set(bad)
    assert info.value.file == "--set"
    assert info.value.fix


# -- dump / validate round trip ---------------------------------------------------------------

def test_dumped_spec_validates_back_to_an_equal_spec() -> None:
    spec, _ = load_spec(None, data={
        "name": "rt", "scheduler": "slurm", "nodes": 2, "walltime": "1-02:03:04",
        "filesystem": {"root": "/scratch", "split_size": "256m", "local_dirs": "$TMPDIR"},
        "hadoop": {"map_memory": "1.5g", "containers_per_node": 4, "fast_start": False,
                   "properties": {"mapred-site": {"a.bool": True, "a.int": 2, "a.float": 0.5, "a.str": "x"}}},
        "batch": {"signal_lead": "00:01:30", "extra_directives": ["--constraint=ib"], "memory_per_node": "64g"},
        "steps": [{"example": "teragen", "args": [10, "/o"], "properties": {"k": "v"}},
                  {"jar": "/x.jar", "class": "org.Main", "args": ["a"], "output": "/out"},
                  {"streaming": {"mapper": "cat", "reducer": "wc -l", "input": ["/a", "/b"], "output": "/c",
                                 "reducers": 2}}],
    })
    dumped = spec.model_dump(mode="json", by_alias=True)
    assert dumped["walltime"] == "26:03:04"
    assert dumped["batch"]["signal_lead"] == 90  # seconds field: dumped as seconds
    assert dumped["steps"][1]["class"] == "org.Main"
    again = JobSpec.model_validate(dumped)
    assert again == spec
    assert again.walltime == 26 * 3600 + 3 * 60 + 4
    assert again.batch.signal_lead == 90


@pytest.mark.parametrize("mode", ["json", "python"])
def test_default_walltime_and_signal_lead_survive_a_round_trip(mode: str) -> None:
    spec, _ = load_spec(None, data=MINIMAL)
    again = JobSpec.model_validate(spec.model_dump(mode=mode, by_alias=True))
    assert again == spec
    assert (again.walltime, again.batch.signal_lead) == (3600, 180)


def test_split_size_from_the_stripe_size_is_aligned_and_at_least_32_mib() -> None:
    assert stripe_aligned_block_size(1 << 20) == 32 << 20
    assert stripe_aligned_block_size(64 << 10) == 32 << 20
    assert stripe_aligned_block_size(3 << 20) == 33 << 20
    assert stripe_aligned_block_size(64 << 20) == 64 << 20
    assert stripe_aligned_block_size(4 << 20, floor=128 << 20) == 128 << 20
    with pytest.raises(ValueError):
        stripe_aligned_block_size(0)


# -- issue 11, folded from tests/unit/test_job_file_mistakes.py: Issue #11: the mistakes people make in job
# files, one row each, through the real CLI (`hpc-hadoop render`).


HEADER = "name: mistakes\nfilesystem:\n  root: ROOT\n  shared: SHARED\n"


STEPS = "steps:\n  - example: pi\n    args: [2, 10]\n"


@dataclass(frozen=True)
class Case:
    """``yaml``: the fragment (``STEPS`` is appended unless it has ``steps:``). ``field`` and ``error``: the error
    line names the field and contains ``error``. ``renders``: texts the output (stdout) contains. ``warns``: text
    on stderr of a successful render."""

    yaml: str
    field: str | None = None
    error: str | None = None
    renders: tuple[str, ...] = ()
    warns: str | None = None
    shared: str = "true"


SLURM = "scheduler: slurm\n"


CASES: dict[str, Case] = {
    # -- walltimes
    "unquoted-hh-mm-ss": Case(SLURM + "walltime: 1:30:00\n", renders=("#SBATCH --time=01:30:00",)),
    "unquoted-mm-ss": Case(SLURM + "walltime: 45:00\n", renders=("#SBATCH --time=00:45:00",)),
    "bare-minutes": Case(SLURM + "walltime: 90\n", renders=("#SBATCH --time=01:30:00",)),
    "hours-unit": Case(SLURM + "walltime: 2h\n", renders=("#SBATCH --time=02:00:00",)),
    "days-hours": Case(SLURM + "walltime: 1-12\n", renders=("#SBATCH --time=36:00:00",)),
    "walltime-1h30": Case("walltime: 1h30\n", "walltime", "'1h30' is not a walltime"),
    "walltime-negative": Case("walltime: -5\n", "walltime", "not a positive walltime"),
    "walltime-words": Case("walltime: two hours\n", "walltime", "is not a walltime"),
    "signal-lead-minutes": Case(SLURM + "batch:\n  signal_lead: 5m\n", renders=("#SBATCH --signal=B:USR1@300",)),
    # -- YAML itself
    "tab-indent": Case("hadoop:\n\tmap_memory: 2g\n", "line 6", "indent with spaces"),
    "yes-is-a-string": Case(SLURM + "batch:\n  qos: yes\n", renders=("#SBATCH --qos=yes",)),
    # -- typos in keys and names
    "typo-top-level": Case("nodez: 2\n", "nodez", "unknown field 'nodez'"),
    "typo-nested": Case("hadoop:\n  map_memroy: 2g\n", "hadoop.map_memroy", "unknown field 'map_memroy'"),
    "typo-example": Case("steps:\n  - example: wordcont\n", "steps.1.example", "did you mean 'wordcount'?"),
    "jar-and-example": Case("steps:\n  - example: pi\n    jar: my.jar\n", "steps", "both `example` and `jar`"),
    "no-program": Case("steps:\n  - args: [1]\n", "steps", "none of `example`, `jar`, `streaming`, `spark`, `pyspark`"),
    "scheduler-case": Case("scheduler: SLURM\n", "scheduler", "'SLURM' is not allowed"),
    "nodes-word": Case("nodes: two\n", "nodes", "'two'"),
    "wrong-config-file": Case("hadoop:\n  properties:\n    mapred:\n      mapreduce.job.reduces: 8\n",
                              "hadoop.properties", "unknown configuration file 'mapred'"),
    # -- memory sizes
    "memory-2GB": Case("hadoop:\n  map_memory: 2GB\n", renders=("<name>mapreduce.map.memory.mb</name>\n"
                                                                 "    <value>2048</value>",)),
    "memory-2-space-G": Case("hadoop:\n  reduce_memory: 2 G\n", renders=("<name>mapreduce.reduce.memory.mb</name>\n"
                                                                         "    <value>2048</value>",)),
    "memory-bare-mib": Case("hadoop:\n  map_memory: 2048\n", renders=("<name>mapreduce.map.memory.mb</name>\n"
                                                                      "    <value>2048</value>", "-Xmx1638m")),
    "memory-2048MiB": Case("hadoop:\n  am_memory: 2048MiB\n", renders=("<name>yarn.app.mapreduce.am.resource.mb"
                                                                       "</name>\n    <value>2048</value>",)),
    "shuffle-typo": Case("hadoop:\n  shuffle: sharedfs\n", "hadoop.shuffle", "'sharedfs' is not allowed"),
    "shuffle-auto-shared": Case("filesystem:\n  local_dirs: shared\n", renders=(
        "<name>mapreduce.job.reduce.shuffle.consumer.plugin.class</name>\n"
        "    <value>org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle</value>",)),
    "memory-too-small": Case("hadoop:\n  map_memory: 64\n", "hadoop.map_memory", "below the 128 MiB minimum"),
    "heap-too-small": Case("hadoop:\n  daemon_heap: 100m\n", "hadoop.daemon_heap", "below the 256 MiB minimum"),
    "memory-words": Case("hadoop:\n  map_memory: lots\n", "hadoop.map_memory", "'lots' is not a size"),
    "node-memory-bare-mib": Case(SLURM + "batch:\n  memory_per_node: 64000\n", renders=("#SBATCH --mem=64000M",)),
    "node-memory-too-small-for-container": Case(
        SLURM + "batch:\n  memory_per_node: 4g\nhadoop:\n  map_memory: 4g\n", "batch.memory_per_node",
        "less than one 4096 MiB container"),
    # -- batch values
    "newline-in-partition": Case(SLURM + 'batch:\n  partition: "debug\\n#SBATCH --exclusive"\n', "batch.partition",
                                 "control character"),
    "newline-in-hadoop-home": Case('hadoop:\n  home: "/opt/hadoop\\nexport X=1"\n', "hadoop.home",
                                   "control character"),
    "space-in-account": Case(SLURM + "batch:\n  account: my project\n", "batch.account", "not a scheduler name"),
    "newline-in-directive": Case(SLURM + 'batch:\n  extra_directives: ["--exclusive\\necho hi"]\n',
                                 "batch.extra_directives", "control character"),
    # -- Hadoop properties
    "misspelt-property": Case("hadoop:\n  properties:\n    mapred-site:\n      mapreduce.map.memroy.mb: 2048\n",
                              warns="did you mean mapreduce.map.memory.mb?"),
    # -- a shared root (tmp_path is on ext4/xfs/tmpfs/overlay here: node-local)
    "local-root-on-slurm": Case(SLURM, "filesystem.root", "which the compute nodes do not share", shared="null"),
    "local-root-declared-shared": Case(SLURM, renders=("#SBATCH --nodes=1",)),
    "local-root-on-local-backend": Case("scheduler: local\n", renders=("==> steps <==",), shared="null"),
    # -- whole nodes by default (issue #11: one core per node before)
    "whole-nodes": Case(SLURM, renders=("#SBATCH --exclusive\n", "#SBATCH --mem=0\n")),
    "shared-nodes": Case(SLURM + "batch:\n  exclusive: false\n  cores_per_node: 2\n",
                         renders=("#SBATCH --cpus-per-task=2\n",)),
    # -- render makes every check submit makes
    "existing-output": Case("steps:\n  - example: teragen\n    args: [100, ROOT]\n", "steps.1", "already exists"),
    "output-inside-input": Case("steps:\n  - example: wordcount\n    args: [ROOT, ROOT/counts]\n", "steps.1",
                                "is inside input"),
    "relative-jar": Case("steps:\n  - jar: lib/nope.jar\n", "steps.1.jar", "/lib/nope.jar does not exist"),
    "missing-jar": Case("steps:\n  - jar: ROOT/nope.jar\n", "steps.1.jar", "does not exist"),
    "reducers-without-reducer": Case("steps:\n  - streaming:\n      mapper: cat\n      input: ROOT\n"
                                     "      output: ROOT-out\n      reducers: 4\n", "steps.1.streaming.reducers",
                                     "without a reducer would run a map-only job"),
    "container-larger-than-node": Case(SLURM + "batch:\n  memory_per_node: 8g\nhadoop:\n  map_memory: 16g\n",
                                       "batch.memory_per_node", "less than one 16384 MiB container"),
    "no-steps": Case("steps: []\n", renders=("==> steps <==",)),
    "dotted-property": Case("hadoop:\n  properties:\n    mapred-site:\n      mapreduce.job.reduces: 8\n",
                            renders=("<name>mapreduce.job.reduces</name>\n    <value>8</value>",)),
}


def _render(tmp_path: Path, case: Case) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path / "pfs"
    root.mkdir()
    text = (HEADER + case.yaml + ("" if "steps:" in case.yaml else STEPS)).replace("ROOT", str(root))
    text = text.replace("SHARED", case.shared)
    path = tmp_path / "job.yaml"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "launcher.cli", "render", str(path)], capture_output=True,
                          text=True, cwd=REPO, timeout=120, check=False)
    return path, proc


def test_there_are_at_least_twenty_cases() -> None:
    """Issue 11 (was ``tests/unit/test_job_file_mistakes.py``)."""
    assert len(CASES) >= 20


@pytest.mark.parametrize("name", sorted(CASES))
def test_job_file_mistake(tmp_path: Path, name: str) -> None:
    """Issue 11 (was ``tests/unit/test_job_file_mistakes.py``)."""
    case = CASES[name]
    path, proc = _render(tmp_path, case)
    assert "Traceback" not in proc.stderr
    if case.error is not None:
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"error: {path}: {case.field}"), lines[0]
        assert case.error in lines[0], lines[0]
        assert proc.stdout == ""
    else:
        assert proc.returncode == 0, proc.stderr
        for text in case.renders:
            assert text in proc.stdout, text
        if case.warns:
            assert case.warns in proc.stderr
        else:
            assert "warning:" not in proc.stderr


# -- issue 11, folded from tests/unit/test_relative_paths.py: Issue #11: relative paths in a job file mean the
# job file's directory, and the submitted job.yaml holds them absolute (launcher/config/spec.py
# ``absolute_paths``): the run happens in the cluster directory, not where `submit` ran.


def test_relative_paths_resolve_against_the_job_files_directory(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_relative_paths.py``)."""
    monkeypatch.chdir(tmp_path)  # not the job file's directory
    spec, _ = load_spec(project / "job.yaml")
    jar, wordcount, pi, streaming = spec.steps
    assert spec.filesystem.root == str(project / "pfs")
    assert jar.jar == str(project / "target" / "myjob-1.0.jar") and jar.output == str(project / "results" / "jar")
    assert jar.args == ["in", "out"]  # a jar's own arguments are passed as they are
    assert wordcount.args == ["-D", "x=1", str(project / "data" / "words.txt"), str(project / "results" / "wc")]
    assert pi.args == ["2", "10"]
    assert streaming.streaming.files == [str(project / "mapper.py")]
    assert streaming.streaming.input == [str(project / "data")]
    assert streaming.streaming.output == str(tmp_path / "elsewhere" / "out")
    assert streaming.streaming.mapper == "python3 mapper.py"


def test_variables_and_absolute_paths_are_kept(tmp_path: Path, write_yaml: Callable[..., Path]) -> None:
    """Issue 11 (was ``tests/unit/test_relative_paths.py``)."""
    job = write_yaml(tmp_path / "j.yaml", {"name": "keep", "filesystem": {"root": "$HOME/pfs"},
                                           "steps": [{"jar": "${examples_jar}", "output": "/abs/out"},
                                                     {"example": "wordcount", "args": ["file:///in", "~/out"]}]})
    spec, _ = load_spec(job)
    assert spec.filesystem.root == "$HOME/pfs" and spec.steps[0].jar == "${examples_jar}"
    assert spec.steps[0].output == "/abs/out" and spec.steps[1].args == ["file:///in", str(Path.home() / "out")]


def test_a_step_path_with_a_tilde_is_the_users_home_and_the_root_keeps_its_own(
        tmp_path: Path, write_yaml: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: ``input: [~/data/x]`` in a streaming step was "input ~/data/x does not exist" (``filesystem.root``
    expanded ``~``, step paths did not). ``filesystem.root`` is kept as written (expanded where it is used, with its
    ``$VAR``s: ``config --explain`` shows both)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "data").mkdir(parents=True)
    (tmp_path / "home" / "data" / "x").write_text("a b\n")
    job = write_yaml(tmp_path / "j.yaml", {"name": "tilde", "filesystem": {"root": "~/pfs"}, "steps": [
        {"streaming": {"input": ["~/data/x"], "output": "~/out", "mapper": "cat"}}]})
    spec, _ = load_spec(job)
    assert spec.filesystem.root == "~/pfs"
    assert spec.steps[0].streaming.input == [str(tmp_path / "home" / "data" / "x")]
    assert spec.steps[0].streaming.output == str(tmp_path / "home" / "out")


# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


SpecFactory = Callable[..., JobSpec]


RUN_DIR = Path("/scratch/me/hpc-hadoop/x")


def _job(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text("name: wc\nsteps:\n  - example: pi\n" + text)
    return path


def test_unquoted_walltime_is_hours_minutes_seconds_not_base60(tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec, _ = load_spec(_job(tmp_path, "scheduler: slurm\nwalltime: 1:30:00\n"))
    assert spec.walltime == 90 * 60
    assert "--time=01:30:00" in SlurmScheduler().directives(spec, RUN_DIR)


def test_no_and_on_stay_strings_in_string_fields(tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    path = tmp_path / "job.yaml"
    path.write_text("name: no\nsteps:\n  - example: pi\nbatch:\n  qos: on\n  partition: off\n")
    spec, _ = load_spec(path)
    assert (spec.name, spec.batch.qos, spec.batch.partition) == ("no", "on", "off")


def test_set_values_are_yaml_1_2() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    assert parse_set("walltime=1:30:00") == {"walltime": "1:30:00"}


def test_site_preset_and_user_config_are_read_as_yaml_1_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    user = tmp_path / "user.yaml"
    user.write_text("walltime: 2:00:00\n")
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(user))
    spec, _ = load_spec(_job(tmp_path, ""))
    assert spec.walltime == 2 * 3600


def test_set_daemon_heap_bare_number_is_mib(tmp_path: Path) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec, _ = load_spec(_job(tmp_path, ""), sets=["hadoop.daemon_heap=2048"])
    assert spec.hadoop.daemon_heap == 2 * GiB


@pytest.mark.parametrize(("field", "value", "bound"), [
    ("hadoop.map_memory", "64m", "128 MiB"), ("hadoop.am_memory", 100, "128 MiB"),
    ("hadoop.daemon_heap", "128m", "256 MiB"), ("batch.memory_per_node", "512m", "1 GiB"),
    ("hadoop.nodemanager_memory", "1k", "128 MiB"),
])
def test_memory_below_its_bound_names_the_bound(tmp_path: Path, field: str, value: object, bound: str) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    section, key = field.split(".")
    with pytest.raises(UserError) as info:
        load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], section: {key: value}})
    assert info.value.field == field
    assert f"below the {bound} minimum" in str(info.value)


def test_dumped_memory_reads_back_the_same(make_spec: SpecFactory) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec = make_spec(hadoop={"map_memory": "1.5g", "daemon_heap": 2048}, batch={"memory_per_node": "64g"})
    dumped = spec.model_dump(mode="json", by_alias=True)
    assert dumped["hadoop"]["map_memory"] == 1536
    assert JobSpec.model_validate(load_yaml(dump_yaml(dumped))) == spec


@pytest.mark.parametrize("field", ["partition", "account", "qos"])
def test_newline_in_a_batch_name_is_refused_naming_the_field(tmp_path: Path, field: str) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    path = _job(tmp_path, f'batch:\n  {field}: "debug\\n#SBATCH --exclusive"\n')
    with pytest.raises(UserError) as info:
        load_spec(path)
    assert info.value.field == f"batch.{field}"
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}: batch.{field}: ")


@pytest.mark.parametrize("value", ["debug partition", "a;rm -rf", "$(id)", "x`y`"])
def test_odd_characters_in_a_batch_name_are_refused(value: str) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    with pytest.raises(UserError) as info:
        load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], "batch": {"partition": value}})
    assert info.value.field == "batch.partition"


@pytest.mark.parametrize("value", ["debug", "gpu,cpu", "batch@pbs01", "proj-42_x", "normal.q"])
def test_usual_batch_names_pass(value: str) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec, _ = load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], "batch": {"partition": value}})
    assert spec.batch.partition == value


def test_newline_in_an_extra_directive_or_sge_pe_is_refused() -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    for data, field in (({"batch": {"extra_directives": ["--exclusive\nrm -rf ~"]}}, "batch.extra_directives"),
                        ({"sge": {"pe": "mpi\n#$ -l x"}}, "sge.pe")):
        with pytest.raises(UserError) as info:
            load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], **data})
        assert info.value.field == field


# -- from tests/unit/test_site_presets.py: The site presets in site-configs/: each one loads through the real
# layered loader, sets what its source (paper table, Hadoop default, site documentation) says, sizes a cluster
# on its own nodes, and is listed by `hpc-hadoop sites` with a one-line description.


REQUIRED = ("generic-lustre", "generic-gpfs", "generic-nfs", "ornl-smoky", "clemson-palmetto-scaleup",
            "clemson-palmetto-scaleout")


@dataclass(frozen=True)
class Expected:
    """What a preset must set (heaps in MiB, as ``-Xmx``; sizes in bytes; ``None`` = left unset)."""

    scheduler: str
    map_heap_mb: int
    reduce_heap_mb: int
    containers_per_node: int | None
    stripe_size: int | None
    block_size: int
    local_dirs: str | None
    task_timeout_ms: int | None


EXPECTED: dict[str, Expected] = {
    # Spider paper Table 1 (2 GB child heap, 2 h task timeout), Table 2 (1 MB stripes), Table 3 (8 mappers),
    # §5 (32 MB per map task); no local storage on Smoky.
    "ornl-smoky": Expected("pbs", 2048, 2048, 8, 1 * MiB, 32 * MiB, "shared", 7_200_000),
    # Clemson paper §II-C (128 MB stripes, 24 / 8 slots), §II-D (8 GB / 1.5 GB heaps, tmpfs / local disk shuffle).
    "clemson-palmetto-scaleup": Expected("pbs", 8192, 8192, 24, 128 * MiB, 128 * MiB, "/dev/shm", None),
    "clemson-palmetto-scaleout": Expected("pbs", 1536, 1536, 8, 128 * MiB, 128 * MiB, "/local_scratch", None),
    # Generic sites: 2 GB heaps (Spider Table 1), 256 MiB splits (measured, docs/architecture.md, Hadoop runtime),
    # 1 h task timeout; no striping set (Lustre: directory default; GPFS and NFS have none).
    "generic-lustre": Expected("slurm", 2048, 2048, None, None, 256 * MiB, None, 3_600_000),
    "generic-gpfs": Expected("slurm", 2048, 2048, None, None, 256 * MiB, None, 3_600_000),
    "generic-nfs": Expected("slurm", 2048, 2048, None, None, 256 * MiB, "/tmp", 3_600_000),
}


def load_preset(name: str) -> JobSpec:
    """The preset under a minimal job file, through the real loader (site layer below the job)."""
    spec, sources = load_spec(None, data={"name": "preset-check", "site": name,
                                          "steps": [{"example": "pi", "args": [2, 10]}]})
    assert sources[0] == str(site_presets()[name])
    return spec


def test_every_required_preset_is_shipped() -> None:
    assert set(REQUIRED) <= set(site_presets())


@pytest.mark.parametrize("name", REQUIRED)
def test_preset_sets_what_its_source_says(name: str, make_test_plan: Callable[..., ClusterPlan],
                                          make_allocation: Callable[..., Allocation]) -> None:
    spec = load_preset(name)
    want = EXPECTED[name]
    h, fs = spec.hadoop, spec.filesystem
    assert spec.scheduler == want.scheduler
    assert h.containers_per_node == want.containers_per_node
    assert fs.striping.input.size == want.stripe_size
    assert fs.block_size == want.block_size
    assert fs.local_dirs == want.local_dirs
    assert h.properties.get("mapred-site", {}).get("mapreduce.task.timeout") == want.task_timeout_ms
    cores = spec.batch.cores_per_node or 8
    memory = spec.batch.memory_per_node or 64 * GiB
    plan = make_test_plan(spec, make_allocation(2, cores=cores, memory=memory, scheduler=spec.scheduler))
    assert (plan.memory.map_heap_mb, plan.memory.reduce_heap_mb) == (want.map_heap_mb, want.reduce_heap_mb)
    if want.local_dirs == "shared":  # on the parallel filesystem, in the cluster directory
        assert all(node.nm_local_dir.startswith(plan.run_dir + "/nm-local/") for node in plan.nodes)
    elif want.local_dirs:
        assert all(node.nm_local_dir.startswith(want.local_dirs + "/hpc-hadoop-") for node in plan.nodes)
    else:  # node-local by default, the cluster directory where a node has no room
        assert all(node.nm_local_dir == f"{node.work_dir}/nm-local" and node.nm_shared_dir for node in plan.nodes)


@pytest.mark.parametrize("name", ["ornl-smoky", "clemson-palmetto-scaleup"])
def test_all_slots_of_the_paper_fit_on_its_nodes(name: str, make_test_plan: Callable[..., ClusterPlan],
                                                 make_allocation: Callable[..., Allocation]) -> None:
    """Smoky (32 GB, 8 x 2.5 GiB) and Palmetto scale-up (500 GB, 24 x 10 GiB) hold every slot plus the AM."""
    spec = load_preset(name)
    alloc = make_allocation(2, cores=spec.batch.cores_per_node, memory=spec.batch.memory_per_node, scheduler="pbs")
    memory = make_test_plan(spec, alloc).memory
    assert memory.nodemanager_mb >= spec.hadoop.containers_per_node * memory.map_mb + memory.am_mb


def test_palmetto_scaleout_is_capped_by_its_16_gb_not_overcommitted(
        make_test_plan: Callable[..., ClusterPlan], make_allocation: Callable[..., Allocation]) -> None:
    """The paper's 8 slots x 1.5 GB heaps do not fit in YARN's accounting on 16 GB; the plan caps the NodeManager
    at the node's memory (the preset says so and how to override it)."""
    spec = load_preset("clemson-palmetto-scaleout")
    memory = make_test_plan(spec, make_allocation(2, cores=8, memory=16 * GiB, scheduler="pbs")).memory
    assert memory.nodemanager_mb <= 16 * 1024 - 1024 - 3 * memory.daemon_heap_mb
    assert memory.nodemanager_mb >= 5 * memory.map_mb + memory.am_mb


@pytest.mark.parametrize("name", ["generic-gpfs", "generic-nfs"])
def test_filesystems_without_striping_ask_for_none(name: str) -> None:
    striping = load_preset(name).filesystem.striping
    assert not any(getattr(striping, role).requested for role in ("input", "output", "staging", "scratch"))


@pytest.mark.parametrize("name", REQUIRED)
def test_preset_renders_on_its_preview_allocation(name: str, make_test_plan: Callable[..., ClusterPlan],
                                                  make_allocation: Callable[..., Allocation]) -> None:
    """`hpc-hadoop render` sizes a preset on ``batch.cores_per_node`` (default 1) and ``batch.memory_per_node``
    (default 8 GiB): at least one container must fit there."""
    spec = load_preset(name)
    alloc = make_allocation(1, cores=spec.batch.cores_per_node or 1, memory=spec.batch.memory_per_node or 8 * GiB,
                            scheduler=spec.scheduler)
    assert make_test_plan(spec, alloc).memory.nodemanager_mb >= spec.hadoop.map_memory // MiB


@pytest.mark.parametrize("name", REQUIRED)
def test_preset_documents_itself(name: str) -> None:
    """The first line is the one-line description `hpc-hadoop sites` shows; every number carries a comment
    (its source), on its line or on the comment block just above it."""
    path = site_presets()[name]
    text = path.read_text()
    first = text.splitlines()[0]
    assert first.startswith("# ") and len(first) <= 120 and first.rstrip().endswith("."), first
    data: Any = yaml.safe_load(text)
    assert isinstance(data, dict)
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.lstrip().startswith("#") or ":" not in line:
            continue
        value = line.split("#", 1)[0].split(":", 1)[1]
        if not re.search(r"\d", value):
            continue
        commented = "#" in line or lines[index - 1].lstrip().startswith("#") or "#" in lines[index - 1]
        assert commented, f"{path.name}:{index + 1}: {line.strip()!r} has no source comment"


def test_sites_command_lists_every_preset_with_its_description() -> None:
    result = CliRunner().invoke(main, ["sites"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    for name in REQUIRED:
        assert name in rows, result.output
        description = site_presets()[name].read_text().splitlines()[0].lstrip("# ").strip()
        assert rows[name].split(None, 1)[1] == description


def test_a_number_below_its_bound_gets_a_fix(tmp_path: Path) -> None:
    """Issue 28 item 7: ``nodes: 0`` said "Input should be greater than or equal to 1" with no fix."""
    err, path = job_error(tmp_path, {**MINIMAL, "nodes": 0})
    assert str(err) == f"{path}: nodes: 0: input should be greater than or equal to 1 (fix: give a number >= 1)"


@pytest.mark.parametrize("walltime", ["5s", "0:59", "00:00:30"])
def test_a_walltime_under_a_minute_is_refused(tmp_path: Path, walltime: str) -> None:
    """Issue 28 item 7: a 5 s walltime was accepted silently, though no cluster comes up in 5 s (and Slurm's
    ``--time`` counts minutes); a minute is the floor (60s, 1m, 1:00:00 are fine)."""
    err, _ = job_error(tmp_path, {**MINIMAL, "walltime": walltime})
    assert err.field == "walltime" and "too short" in str(err) and "at least 1 minute" in str(err)
    for fine in ("60s", "1m", "1:00:00"):
        assert load_spec(None, data={**MINIMAL, "walltime": fine})[0].walltime >= 60


def test_a_site_typo_blames_the_flag_that_gave_it(tmp_path: Path) -> None:
    """Issue 28 item 7: ``--site generic-lustr`` was reported as ``--set: site:``; the fix now names the closest."""
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(MINIMAL))
    with pytest.raises(UserError) as info:
        load_spec(job, overrides={"site": "generic-lustr"})
    assert str(info.value).startswith("--site: site: unknown site preset 'generic-lustr' (fix: did you mean "
                                      "'generic-lustre'? use one of: ")
    with pytest.raises(UserError) as info:
        load_spec(job, overrides={"site": "generic-lustre"}, sets=["site=nosuch"])
    assert str(info.value).startswith("--set: site: unknown site preset 'nosuch' (fix: use one of: ")


def test_security_defaults_to_per_cluster(tmp_path: Path) -> None:
    spec, _ = load_spec(None, data={"name": "a", "steps": [{"example": "pi"}]})
    assert spec.security == "per-cluster"
    spec, _ = load_spec(None, data={"name": "a", "security": "simple", "steps": [{"example": "pi"}]})
    assert spec.security == "simple"
    error, path = job_error(tmp_path, {"name": "a", "security": "kerberos", "steps": [{"example": "pi"}]})
    assert error.field == "security" and "simple" in str(error)


def test_hdfs_mode_defaults_to_simple_and_refuses_per_cluster(tmp_path: Path) -> None:
    """Issue 27 item 4: ``filesystem.mode: hdfs`` (comparisons only) stays ``simple``: a secure DataNode needs
    privileged ports or SASL and HTTPS; asking ``per-cluster`` of it is refused with the fix."""
    hdfs = {"name": "a", "filesystem": {"mode": "hdfs"}, "steps": [{"example": "pi"}]}
    spec, _ = load_spec(None, data=hdfs)
    assert spec.security == "simple"
    spec, _ = load_spec(None, data={**hdfs, "filesystem": {"mode": "shim"}})
    assert spec.security == "per-cluster"
    error, path = job_error(tmp_path, {**hdfs, "security": "per-cluster"})
    assert str(error).startswith(f"{path}: ") and "set security: simple" in str(error), str(error)


# -- security: site (issue 27 item 4) ---------------------------------------------------------------------

def site_job(tmp_path: Path, keytab_mode: int = 0o600, **kerberos: Any) -> Path:
    """A job file with ``security: site`` and a keytab ``me.keytab`` of ``keytab_mode`` next to it."""
    keytab = tmp_path / "me.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(keytab_mode)
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump({**MINIMAL, "security": "site", "kerberos": {
        "service_principal": "alice/hadoop@HPC.EXAMPLE.ORG", "keytab": "me.keytab", **kerberos}}))
    return job


def site_error(tmp_path: Path, keytab_mode: int = 0o600, **kerberos: Any) -> UserError:
    with pytest.raises(UserError) as info:
        load_spec(site_job(tmp_path, keytab_mode, **kerberos))
    return info.value


def test_site_reads_the_kerberos_section_with_paths_from_the_job_files_directory(tmp_path: Path) -> None:
    (tmp_path / "krb5.conf").write_text("[libdefaults]\n")
    spec, _ = load_spec(site_job(tmp_path, principal="alice@HPC.EXAMPLE.ORG", krb5_conf="krb5.conf"))
    assert spec.security == "site" and spec.kerberos is not None
    assert spec.kerberos.service_principal == "alice/hadoop@HPC.EXAMPLE.ORG"
    assert spec.kerberos.keytab == str(tmp_path / "me.keytab")
    assert spec.kerberos.krb5_conf == str(tmp_path / "krb5.conf")
    assert spec.kerberos.principal == "alice@HPC.EXAMPLE.ORG"


def test_site_without_a_kerberos_section_names_what_to_add(tmp_path: Path) -> None:
    error, _ = job_error(tmp_path, {**MINIMAL, "security": "site"})
    assert error.field == "kerberos" and "security: site needs this section" in error.message
    assert "service_principal" in error.message and "keytab" in error.message and "\n" not in str(error)


def test_a_kerberos_section_under_another_security_is_refused(tmp_path: Path) -> None:
    job = site_job(tmp_path)
    data = yaml.safe_load(job.read_text())
    job.write_text(yaml.safe_dump({**data, "security": "per-cluster"}))
    with pytest.raises(UserError) as info:
        load_spec(job)
    assert info.value.field == "kerberos" and "security: per-cluster" in info.value.message
    assert "remove `kerberos:` or set security: site" in info.value.message


def test_a_service_principal_without_an_instance_is_refused_with_hadoops_reason(tmp_path: Path) -> None:
    """Hadoop 3.4.2's SaslRpcClient/SaslRpcServer refuse a server principal without a host part."""
    error = site_error(tmp_path, service_principal="alice@HPC.EXAMPLE.ORG")
    assert error.field == "kerberos.service_principal" and "has no instance part" in error.message
    assert "does NOT have the expected hostname part" in error.message
    assert "alice/hadoop@HPC.EXAMPLE.ORG" in error.message


@pytest.mark.parametrize(("principal", "expected"), [
    ("alice/Hadoop@HPC.EXAMPLE.ORG", "Java lower-cases"),
    ("alice/hadoop@hpc.example.org", "is not a Kerberos principal"),
    ("al ice/hadoop@HPC.EXAMPLE.ORG", "is not a Kerberos principal"),
    ("alice/hadoop(x)@HPC.EXAMPLE.ORG", "is not a Kerberos principal"),
])
def test_bad_service_principals_get_one_line(tmp_path: Path, principal: str, expected: str) -> None:
    error = site_error(tmp_path, service_principal=principal)
    assert error.field == "kerberos.service_principal" and expected in error.message and "\n" not in str(error)


def test_a_bad_user_principal_gets_one_line(tmp_path: Path) -> None:
    error = site_error(tmp_path, principal="alice")
    assert error.field == "kerberos.principal" and "name@REALM" in error.message


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
def test_a_keytab_others_may_read_is_refused_with_chmod_600(tmp_path: Path, mode: int) -> None:
    error = site_error(tmp_path, keytab_mode=mode)
    assert error.field == "kerberos.keytab" and f"mode {mode:04o}" in error.message
    assert f"chmod 600 {tmp_path / 'me.keytab'}" in error.message


def test_a_missing_keytab_or_a_directory_is_refused(tmp_path: Path) -> None:
    error = site_error(tmp_path, keytab="nosuch.keytab")
    assert error.field == "kerberos.keytab" and f"{tmp_path / 'nosuch.keytab'} does not exist" in error.message
    (tmp_path / "dir.keytab").mkdir()
    error = site_error(tmp_path, keytab="dir.keytab")
    assert error.field == "kerberos.keytab" and "is not a file" in error.message


def test_a_missing_krb5_conf_is_refused(tmp_path: Path) -> None:
    error = site_error(tmp_path, krb5_conf="nosuch.conf")
    assert error.field == "kerberos.krb5_conf" and "KRB5_CONFIG or /etc/krb5.conf" in error.message


def test_site_refuses_the_hdfs_comparison_mode(tmp_path: Path) -> None:
    job = site_job(tmp_path)
    data = yaml.safe_load(job.read_text())
    job.write_text(yaml.safe_dump({**data, "filesystem": {"mode": "hdfs"}}))
    with pytest.raises(UserError) as info:
        load_spec(job)
    assert info.value.field == "filesystem" and "security: site cannot secure mode: hdfs" in info.value.message
    assert "set security: simple" in info.value.message


def test_notebook_section_flag_fields_and_directory(tmp_path: Path) -> None:
    """Issue 40 item 1: ``notebook: true`` keeps notebooks in the job file's directory, a relative ``dir`` is the job
    file's, ``false`` is none; a notebook implies Spark's defaults; an unknown field is one line naming it."""
    from launcher.config.spec import uses_spark

    def job(**fields: Any) -> JobSpec:
        path = tmp_path / "sub" / "j.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump({"name": "nb", "filesystem": {"root": str(tmp_path)}, **fields}))
        spec, _ = load_spec(path, require_steps=False)
        return spec

    flag = job(notebook=True)
    assert flag.notebook is not None and flag.notebook.dir == str(tmp_path / "sub") and uses_spark(flag)
    assert job(notebook={}).notebook.dir == str(tmp_path / "sub")  # type: ignore[union-attr]
    assert job(notebook={"dir": "nbs"}).notebook.dir == str(tmp_path / "sub" / "nbs")  # type: ignore[union-attr]
    assert job(notebook={"dir": "/abs/nbs"}).notebook.dir == "/abs/nbs"  # type: ignore[union-attr]
    off = job(notebook=False)
    assert off.notebook is None and not uses_spark(off)
    with pytest.raises(UserError, match="dirr") as bad:
        job(notebook={"dirr": "x"})
    assert "dir" in str(bad.value)
