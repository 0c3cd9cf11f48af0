"""The job file: validation, error messages and layering (launcher/config/spec.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import launcher.config.spec
from launcher.config.spec import (
    ExampleStep,
    JarStep,
    JobSpec,
    StreamingStep,
    load_spec,
    parse_set,
    stripe_aligned_block_size,
)
from launcher.util.errors import UserError
from launcher.util.units import GiB, MiB

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
    assert spec.filesystem.root == "/tmp"
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
    monkeypatch.setattr(launcher.config.spec, "SITE_DIR", sites)
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
    monkeypatch.setattr(launcher.config.spec, "SITE_DIR", sites)
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
