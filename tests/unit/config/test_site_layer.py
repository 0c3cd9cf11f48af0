"""The site's layer (launcher/config/site.py, issue 39) and ``hpc-hadoop config`` (launcher/config/explain.py,
launcher/cli/layers.py): a directory of the site's, read between the preset and the user's config, refused when others
can change it; the layers and each value's origin shown; ``$HPC_HADOOP_CONFIG`` hiding the user's own file said."""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import launcher.config.load
from launcher.cli.main import main
from launcher.config.explain import BUILT_IN, explain, select
from launcher.config.load import load_spec, preset_listing, site_presets, user_config_warning
from launcher.util.errors import UserError
from launcher.util.units import MiB

WriteYaml = Callable[..., Path]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_yaml: WriteYaml) -> dict[str, Path]:
    """A site layer (``config.yaml``, a preset of its own and one that replaces a shipped one), shipped presets, a
    user config and a job file, each setting some of the same fields."""
    shipped = tmp_path / "shipped"
    write_yaml(shipped / "common.yaml", {"hadoop": {"daemon_heap": "1g"}})
    write_yaml(shipped / "only-shipped.yaml", {"nodes": 1})
    monkeypatch.setattr(launcher.config.load, "SITE_DIR", shipped)
    site_dir = tmp_path / "etc-hpc-hadoop"
    write_yaml(site_dir / "site-configs" / "common.yaml", {"hadoop": {"daemon_heap": "3g", "am_memory": "2g"}})
    write_yaml(site_dir / "site-configs" / "ours.yaml", {"nodes": 1})
    write_yaml(site_dir / "config.yaml", {"site": "common", "filesystem": {"root": str(tmp_path / "lustre")},
                                          "hadoop": {"map_memory": "1024m", "am_memory": "1536m",
                                                     "reduce_memory": "2g"}})
    for path in (site_dir, site_dir / "site-configs", *site_dir.rglob("*")):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(site_dir))
    user = write_yaml(tmp_path / "user.yaml", {"hadoop": {"map_memory": "768m"}})
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(user))
    job = write_yaml(tmp_path / "job.yaml", {"name": "layered", "hadoop": {"reduce_memory": "3g"},
                                             "steps": [{"example": "pi"}]})
    return {"dir": site_dir, "config": site_dir / "config.yaml", "shipped": shipped, "user": user, "job": job,
            "preset": site_dir / "site-configs" / "common.yaml"}


def test_the_layers_in_order_each_value_from_the_highest(site: dict[str, Path]) -> None:
    spec, sources = load_spec(site["job"], sets=["nodes=1"])
    assert sources == [str(site["preset"]), str(site["config"]), str(site["user"]), str(site["job"]), "command line"]
    h = spec.hadoop
    assert h.daemon_heap == 3072 * MiB     # the site's preset, not the shipped one of its name
    assert h.am_memory == 1536 * MiB       # site config > preset
    assert h.map_memory == 768 * MiB       # user config > site config
    assert h.reduce_memory == 3072 * MiB   # job file > site config
    assert spec.filesystem.root == str(site["dir"].parent / "lustre")  # the site's root, the job says none
    assert h.heap_ratio == 0.8             # built-in


def test_provenance_names_the_layer_and_file_of_each_value(site: dict[str, Path]) -> None:
    layers, values = explain(site["job"], sets=["hadoop.map_memory=2g"])
    assert [(layer.kind, layer.state) for layer in layers] == [
        (BUILT_IN, "read"), ("site preset", "read"), ("site config", "read"), ("user config", "read"),
        ("job file", "read"), ("command line", "read"), ("-D", "empty")]
    assert layers[2].file == str(site["config"])
    got = {key: (o.value, o.layer, o.file) for key, o in values.items()}
    assert got["hadoop.map_memory"] == ("2g", "command line", "command line")
    assert got["hadoop.daemon_heap"] == ("3g", "site preset", str(site["preset"]))
    assert got["hadoop.am_memory"] == ("1536m", "site config", str(site["config"]))
    assert got["hadoop.reduce_memory"] == ("3g", "job file", str(site["job"]))
    assert got["hadoop.heap_ratio"] == (0.8, BUILT_IN, None)
    assert got["steps"][1] == "job file"  # a list is one leaf
    assert values["hadoop.map_memory"].effective == 2048  # MiB, as the job uses it


def test_a_property_name_with_dots_is_one_quoted_part(site: dict[str, Path]) -> None:
    _, values = explain(site["job"], sets=['hadoop.properties.yarn-site."yarn.a.b"=5'])
    assert values['hadoop.properties.yarn-site."yarn.a.b"'].layer == "command line"
    assert select(values, ["hadoop.properties"]).keys() == {'hadoop.properties.yarn-site."yarn.a.b"'}


def test_a_site_preset_shadows_a_shipped_one_and_the_listing_says_so(site: dict[str, Path]) -> None:
    assert site_presets() == {"common": site["preset"], "only-shipped": site["shipped"] / "only-shipped.yaml",
                              "ours": site["dir"] / "site-configs" / "ours.yaml"}
    listed = {p.name: (p.origin, p.shadows) for p in preset_listing()}
    assert listed["common"] == ("site", site["shipped"] / "common.yaml")
    assert listed["ours"] == ("site", None) and listed["only-shipped"] == ("shipped", None)
    result = CliRunner().invoke(main, ["sites"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith("common "))
    assert f"[site: {site['preset']}; replaces the shipped one]" in line


def test_no_site_dir_is_no_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_yaml: WriteYaml) -> None:
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(tmp_path / "absent"))
    job = write_yaml(tmp_path / "job.yaml", {"name": "plain", "steps": [{"example": "pi"}]})
    _, sources = load_spec(job)
    assert sources == [str(job)]
    layers, _ = explain(job)
    assert [(layer.kind, layer.state) for layer in layers][2] == ("site config", "missing")


@pytest.mark.parametrize(("target", "mode", "who"), [("dir", 0o775, "its group"), ("dir", 0o757, "others"),
                                                     ("config", 0o666, "its group and others"),
                                                     ("preset", 0o664, "its group")])
def test_a_site_layer_others_can_write_is_refused_in_one_line(site: dict[str, Path], target: str, mode: int,
                                                               who: str) -> None:
    os.chmod(site[target], mode)
    result = CliRunner().invoke(main, ["render", str(site["job"])])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert f"{site[target]}" in lines[0] and f"writable by {who} (owner " in lines[0] and f"mode {mode:04o}" in lines[0]
    assert f"(fix: `chmod go-w {site[target]}`)" in lines[0]


def test_a_directory_above_the_site_dir_others_can_write_is_refused(site: dict[str, Path]) -> None:
    above = site["dir"].parent
    os.chmod(above, 0o777)
    with pytest.raises(UserError, match=rf"{above}, a directory above this site directory, is writable by its group "
                                        r"and others .*mode 0777"):
        load_spec(site["job"])
    os.chmod(above, 0o1777)  # sticky, as /tmp: no one renames another's entry
    load_spec(site["job"])


@pytest.mark.skipif(os.getuid() != 0, reason="a link of another user's needs root to make")
def test_a_site_dir_that_is_another_users_link_is_refused(site: dict[str, Path], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "link"
    link.symlink_to(site["dir"])
    os.lchown(link, pwd.getpwnam("nobody").pw_uid, -1)
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", str(link))
    with pytest.raises(UserError, match="is a symbolic link of nobody's"):
        load_spec(site["job"])
    os.lchown(link, 0, -1)
    assert load_spec(site["job"])[1][1] == str(link / "config.yaml")  # root's link is fine


def test_a_relative_site_dir_is_refused(site: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPC_HADOOP_SITE_DIR", "etc")
    with pytest.raises(UserError, match=r"\$HPC_HADOOP_SITE_DIR: 'etc' is not an absolute path"):
        load_spec(site["job"])


def test_hpc_hadoop_config_hiding_the_users_own_file_is_one_warning(site: dict[str, Path], tmp_path: Path,
                                                                    write_yaml: WriteYaml,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_config_warning() is None  # the user's own file is not there: nothing hidden
    own = write_yaml(tmp_path / "config" / "hpc-hadoop" / "config.yaml", {"hadoop": {"map_memory": "512m"}})
    warning = user_config_warning()
    assert warning is not None and str(site["user"]) in warning and str(own) in warning
    monkeypatch.setattr(launcher.config.load, "_WARNED", set())
    result = CliRunner().invoke(main, ["config", str(site["job"]), "--explain", "hadoop.map_memory"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"warning: {warning}"]
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(own))  # the same file: nothing hidden
    assert user_config_warning() is None


def test_config_explain_prints_the_layers_and_the_fields_asked(site: dict[str, Path]) -> None:
    result = CliRunner().invoke(main, ["config", str(site["job"]), "--set", "nodes=1", "--explain", "hadoop.map_memory",
                                       "--explain", "filesystem.root"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "layers, lowest first:"
    assert lines[3].split()[:4] == ["3.", "site", "config", "read"] and str(site["config"]) in lines[3]
    values = lines[lines.index("values:") + 1:]
    assert [line.split()[0] for line in values] == ["hadoop.map_memory", "filesystem.root"]
    assert values[0].split() == ["hadoop.map_memory", "768m", "user", "config:", str(site["user"])]
    assert values[1].split()[2:] == ["site", "config:", str(site["config"])]


def test_config_json_and_an_unknown_field(site: dict[str, Path]) -> None:
    result = CliRunner().invoke(main, ["config", "--json", "--explain", "hadoop.daemon_heap"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert [layer["kind"] for layer in data["layers"]] == [BUILT_IN, "site preset", "site config", "user config",
                                                            "command line", "-D"]
    assert data["values"] == {"hadoop.daemon_heap": {"value": "3g", "effective": 3072, "layer": "site preset",
                                                     "file": str(site["preset"])}}
    wrong = CliRunner().invoke(main, ["config", "--explain", "hadoop.mapmemory"])
    assert wrong.exit_code == 2 and wrong.stderr.splitlines() == [
        "error: --explain: 'hadoop.mapmemory' is no field of the job (fix: did you mean 'hadoop.map_memory'? run "
        "`hpc-hadoop config` for every field)"]


def test_an_unknown_preset_named_by_the_site_config_blames_it(site: dict[str, Path], write_yaml: WriteYaml) -> None:
    os.chmod(site["config"], 0o644)
    site["config"].write_text("site: nowhere\n")
    with pytest.raises(UserError) as info:
        load_spec(site["job"])
    assert info.value.file == str(site["config"]) and info.value.field == "site"
