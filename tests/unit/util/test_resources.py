"""Package data and where runtimes are found (launcher/util/resources.py, launcher/runtime/hadoop.py,
launcher/render/spark.py): issue 26 item 5, an installable package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from launcher.config.load import load_spec
from launcher.render import spark
from launcher.runtime import hadoop as runtime
from launcher.util import resources
from launcher.util.errors import UserError
from tests.conftest import REPO


def test_package_data_is_the_checkouts_directories_in_an_editable_install() -> None:
    assert resources.templates_dir() == files("launcher._data.templates") == REPO / "templates"
    assert resources.site_configs_dir() == REPO / "site-configs"
    assert resources.shim_project_dir() == REPO / "hadoop-fs-shim"
    assert resources.checkout() == REPO
    assert any(resources.templates_dir().glob("**/core-site.xml.j2"))
    assert (resources.site_configs_dir() / "generic-lustre.yaml").is_file()
    assert (resources.shim_project_dir() / "pom.xml").is_file()
    jar = resources.packaged_shim_jar()
    assert jar is not None and jar.parent == REPO / "hadoop-fs-shim" / "target"


def test_share_directory_overrides_the_package_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(tmp_path))
    assert resources.templates_dir() == tmp_path / "templates"
    assert resources.site_configs_dir() == tmp_path / "site-configs"
    assert resources.checkout() == tmp_path
    assert resources.packaged_shim_jar() is None
    (tmp_path / "hadoop-fs-shim" / "target").mkdir(parents=True)
    jar = tmp_path / "hadoop-fs-shim" / "target" / "hpc-hadoop-fs-shim-0.2.0.jar"
    jar.write_bytes(b"")
    assert resources.packaged_shim_jar() == jar


def test_a_site_install_without_checkout_runtime_gets_the_shipped_shim_jar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "BUILT_RUNTIME", tmp_path / "no-checkout" / "target" / "hadoop-runtime")
    monkeypatch.setenv("HPC_HADOOP_SHARE", str(tmp_path / "share"))
    shipped = tmp_path / "share" / "hadoop-fs-shim" / "target" / "hpc-hadoop-fs-shim-0.1.0-SNAPSHOT.jar"
    shipped.parent.mkdir(parents=True)
    shipped.write_bytes(b"")
    assert runtime.shim_jar() == shipped


def test_user_prefix_follows_xdg_data_home(tmp_path: Path) -> None:
    # tests/unit/conftest.py points XDG_DATA_HOME at tmp_path / "data"
    assert resources.user_prefix() == tmp_path / "data" / "hpc-hadoop" / "runtime"
    assert [label for label, _ in resources.prefixes()] == ["user prefix", "site prefix"]


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The checkout's runtime, the user's and the site's, none of them there yet."""
    checkout = tmp_path / "checkout" / "hadoop-runtime"
    site = tmp_path / "site"
    monkeypatch.setattr(runtime, "BUILT_RUNTIME", checkout)
    monkeypatch.setattr(resources, "site_prefix", lambda: site)
    return {"checkout": checkout, "user": resources.user_prefix() / "hadoop", "site": site / "hadoop"}


def test_runtime_lookup_order(places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    places["site"].mkdir(parents=True)
    assert runtime.find_hadoop_home() == places["site"]
    places["user"].mkdir(parents=True)
    assert runtime.find_hadoop_home() == places["user"]
    places["checkout"].mkdir(parents=True)
    assert runtime.find_hadoop_home() == places["checkout"]
    env = tmp_path / "env-hadoop"
    env.mkdir()
    monkeypatch.setenv("HPC_HADOOP_HOME", str(env))
    assert runtime.find_hadoop_home() == env
    assert runtime.find_hadoop_home(str(tmp_path)) == tmp_path  # hadoop.home first


def test_no_runtime_is_one_line_naming_the_install_command(places: dict[str, Path]) -> None:
    with pytest.raises(UserError) as info:
        runtime.find_hadoop_home()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("hadoop.home: no Hadoop runtime found (none in ")
    assert all(str(path) in message for path in places.values())
    assert "(fix: run `hpc-hadoop runtime install`" in message


def test_spark_in_the_user_prefix(places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark, "BUILT_SPARK", tmp_path / "no-checkout" / "pyspark")
    job = tmp_path / "job.yaml"
    job.write_text("name: wc\nscheduler: local\nspark: {}\nsteps:\n  - example: pi\n")
    spec, _ = load_spec(job)
    with pytest.raises(UserError, match="no Spark runtime found"):
        spark.discover_spark(spec)
    home = resources.user_prefix() / "spark" / "pyspark"
    for name in ("bin/spark-submit", "jars/spark-core_2.13-4.1.1.jar"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    found = spark.discover_spark(spec)
    assert (found.home, found.version) == (home, "4.1.1")
