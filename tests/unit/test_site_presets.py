"""The site presets in site-configs/: each one loads through the real layered loader, sets what its source
(paper table, Hadoop default, site documentation) says, sizes a cluster on its own nodes, and is listed by
`hpc-hadoop sites` with a one-line description."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.config.spec import JobSpec, load_spec, site_presets
from launcher.plan.cluster_plan import ClusterPlan
from launcher.schedulers.base import Allocation
from launcher.util.units import GiB, MiB

#: The presets the documentation promises (docs/admin-guide.md, "Choosing a preset").
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
