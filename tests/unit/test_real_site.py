"""Issue #11, "right on a real site": YAML 1.2 reading, memory in MiB, one teardown lead, our own walltime
exception, batch names checked before they reach a batch script."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from launcher.config.spec import JobSpec, load_spec, parse_set
from launcher.plan.cluster_plan import size_memory
from launcher.schedulers.base import teardown_lead
from launcher.schedulers.sge import SgeScheduler
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError, WalltimeExpired
from launcher.util.units import GiB, parse_memory, parse_walltime
from launcher.util.yamlio import dump_yaml, load_yaml

SpecFactory = Callable[..., JobSpec]
RUN_DIR = Path("/scratch/me/hpc-hadoop/x")


def _job(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text("name: wc\nsteps:\n  - example: pi\n" + text)
    return path


# -- 1. YAML 1.2 and walltimes ------------------------------------------------------------------

def test_unquoted_walltime_is_hours_minutes_seconds_not_base60(tmp_path: Path) -> None:
    spec, _ = load_spec(_job(tmp_path, "scheduler: slurm\nwalltime: 1:30:00\n"))
    assert spec.walltime == 90 * 60
    assert "--time=01:30:00" in SlurmScheduler().directives(spec, RUN_DIR)


def test_yaml_1_2_has_no_yes_no_booleans_and_no_sexagesimal() -> None:
    data = load_yaml("a: 1:30:00\nb: yes\nc: off\nd: 0o17\ne: true\nf: 2048\ng:\nh: 2024-01-01\n")
    assert data == {"a": "1:30:00", "b": "yes", "c": "off", "d": 15, "e": True, "f": 2048, "g": None,
                    "h": "2024-01-01"}


def test_no_and_on_stay_strings_in_string_fields(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("name: no\nsteps:\n  - example: pi\nbatch:\n  qos: on\n  partition: off\n")
    spec, _ = load_spec(path)
    assert (spec.name, spec.batch.qos, spec.batch.partition) == ("no", "on", "off")


def test_set_values_are_yaml_1_2() -> None:
    assert parse_set("walltime=1:30:00") == {"walltime": "1:30:00"}


def test_dump_yaml_quotes_what_either_yaml_version_would_misread() -> None:
    data = {"a": "1:30:00", "b": "yes", "c": "0o17", "d": 2048, "e": True}
    text = dump_yaml(data)
    assert "'1:30:00'" in text and "'yes'" in text and "'0o17'" in text
    assert load_yaml(text) == data


@pytest.mark.parametrize(("value", "seconds"), [
    ("90m", 5400), ("2h", 7200), ("1d", 86400), ("30s", 30), ("1-12:30", 86400 + 45000), ("1-02:03:04", 93784),
    (90, 5400), ("45:30", 2730),
])
def test_walltime_accepts_slurm_forms_and_units(value: object, seconds: int) -> None:
    assert parse_walltime(value) == seconds


def test_site_preset_and_user_config_are_read_as_yaml_1_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user.yaml"
    user.write_text("walltime: 2:00:00\n")
    monkeypatch.setenv("HPC_HADOOP_CONFIG", str(user))
    spec, _ = load_spec(_job(tmp_path, ""))
    assert spec.walltime == 2 * 3600


# -- 2. memory: a bare number is MiB -------------------------------------------------------------

@pytest.mark.parametrize("value", [2048, "2048", "2g", "2G", "2GB", "2 G", "2048m", "2048M", "2048MiB", "2 GiB"])
def test_memory_forms_all_mean_2_gib(value: object) -> None:
    assert parse_memory(value) == 2 * GiB


def test_bare_map_memory_is_mib_in_the_rendered_properties(make_spec: SpecFactory,
                                                           make_allocation: Callable[..., Any]) -> None:
    spec = make_spec(hadoop={"map_memory": 2048})
    mem = size_memory(spec, make_allocation())
    assert (mem.map_mb, mem.map_heap_mb) == (2048, 1638)


def test_set_daemon_heap_bare_number_is_mib(tmp_path: Path) -> None:
    spec, _ = load_spec(_job(tmp_path, ""), sets=["hadoop.daemon_heap=2048"])
    assert spec.hadoop.daemon_heap == 2 * GiB


def test_memory_per_node_bare_number_is_mib_in_sbatch(make_spec: SpecFactory) -> None:
    spec = make_spec(batch={"memory_per_node": 64000})
    assert "--mem=64000M" in SlurmScheduler().directives(spec, RUN_DIR)


@pytest.mark.parametrize(("field", "value", "bound"), [
    ("hadoop.map_memory", "64m", "128 MiB"), ("hadoop.am_memory", 100, "128 MiB"),
    ("hadoop.daemon_heap", "128m", "256 MiB"), ("batch.memory_per_node", "512m", "1 GiB"),
    ("hadoop.nodemanager_memory", "1k", "128 MiB"),
])
def test_memory_below_its_bound_names_the_bound(tmp_path: Path, field: str, value: object, bound: str) -> None:
    section, key = field.split(".")
    with pytest.raises(UserError) as info:
        load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], section: {key: value}})
    assert info.value.field == field
    assert f"below the {bound} minimum" in str(info.value)


def test_small_node_blames_memory_per_node(make_spec: SpecFactory) -> None:
    spec = make_spec(batch={"memory_per_node": "4g"}, hadoop={"map_memory": "4g"})
    with pytest.raises(UserError) as info:
        size_memory(spec, SlurmScheduler().preview_allocation(spec))
    assert info.value.field == "batch.memory_per_node"
    assert "hadoop.map_memory" in str(info.value)


def test_small_nodemanager_memory_blames_itself(make_spec: SpecFactory, make_allocation: Callable[..., Any]) -> None:
    spec = make_spec(hadoop={"nodemanager_memory": "512m"})
    with pytest.raises(UserError) as info:
        size_memory(spec, make_allocation())
    assert info.value.field == "hadoop.nodemanager_memory"


def test_dumped_memory_reads_back_the_same(make_spec: SpecFactory) -> None:
    spec = make_spec(hadoop={"map_memory": "1.5g", "daemon_heap": 2048}, batch={"memory_per_node": "64g"})
    dumped = spec.model_dump(mode="json", by_alias=True)
    assert dumped["hadoop"]["map_memory"] == 1536
    assert JobSpec.model_validate(load_yaml(dump_yaml(dumped))) == spec


# -- 4. one teardown lead, our own walltime exception -------------------------------------------

@pytest.mark.parametrize(("walltime", "lead"), [("00:10:00", 60), ("01:00:00", 180), ("10:00:00", 180)])
def test_teardown_lead_is_the_same_on_every_backend(make_spec: SpecFactory, walltime: str, lead: int) -> None:
    slurm = make_spec(walltime=walltime)
    sge = make_spec(walltime=walltime, scheduler="sge")
    assert teardown_lead(slurm) == lead
    assert f"--signal=B:USR1@{lead}" in SlurmScheduler().directives(slurm, RUN_DIR)
    wall = parse_walltime(walltime)
    soft = f"-l s_rt={(wall - lead) // 3600:02d}:{(wall - lead) % 3600 // 60:02d}:{(wall - lead) % 60:02d}"
    assert soft in SgeScheduler().directives(sge, RUN_DIR)


def test_walltime_expired_is_not_a_timeout_error() -> None:
    stalled_mount = OSError(errno.ETIMEDOUT, "Connection timed out")
    assert isinstance(stalled_mount, TimeoutError)
    assert not isinstance(stalled_mount, WalltimeExpired)
    assert not issubclass(WalltimeExpired, TimeoutError)
    assert not issubclass(WalltimeExpired, OSError)


def test_runner_and_jobs_use_walltime_expired_not_timeout_error() -> None:
    root = Path(__file__).resolve().parents[2] / "launcher"
    for path in root.rglob("*.py"):
        code = [line for line in path.read_text().splitlines() if not line.lstrip().startswith(("#", "``", "Our"))]
        assert not any("TimeoutError" in line and "``" not in line for line in code), path


# -- 5. batch names ------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["partition", "account", "qos"])
def test_newline_in_a_batch_name_is_refused_naming_the_field(tmp_path: Path, field: str) -> None:
    path = _job(tmp_path, f'batch:\n  {field}: "debug\\n#SBATCH --exclusive"\n')
    with pytest.raises(UserError) as info:
        load_spec(path)
    assert info.value.field == f"batch.{field}"
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}: batch.{field}: ")


@pytest.mark.parametrize("value", ["debug partition", "a;rm -rf", "$(id)", "x`y`"])
def test_odd_characters_in_a_batch_name_are_refused(value: str) -> None:
    with pytest.raises(UserError) as info:
        load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], "batch": {"partition": value}})
    assert info.value.field == "batch.partition"


@pytest.mark.parametrize("value", ["debug", "gpu,cpu", "batch@pbs01", "proj-42_x", "normal.q"])
def test_usual_batch_names_pass(value: str) -> None:
    spec, _ = load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], "batch": {"partition": value}})
    assert spec.batch.partition == value


def test_newline_in_an_extra_directive_or_sge_pe_is_refused() -> None:
    for data, field in (({"batch": {"extra_directives": ["--exclusive\nrm -rf ~"]}}, "batch.extra_directives"),
                        ({"sge": {"pe": "mpi\n#$ -l x"}}, "sge.pe")):
        with pytest.raises(UserError) as info:
            load_spec(None, data={"name": "wc", "steps": [{"example": "pi"}], **data})
        assert info.value.field == field
