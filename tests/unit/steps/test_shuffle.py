"""Issue 15: ``hadoop.shuffle`` rendered into mapred-site.xml, and each step's shuffle read from real job
histories (``tests/data/jhist/terasort-*.jhist``: TeraSort of 10 MB, 4 maps, 2 reducers, on the 3-node Slurm test
cluster over GlusterFS, ``shared-fs`` and ``http``, from tests/integration/test_shuffle.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.harness import load_bench, points, relevant
from benchmarks.results import shuffle_lines, summarize_rows
from benchmarks.workloads.base import shuffle_options
from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.config import render_config
from launcher.steps import shuffle
from launcher.util.errors import UserError
from tests.unit.render.test_config import single

DATA = Path(__file__).resolve().parents[2] / "data" / "jhist"
SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]


def mapred(plan: ClusterPlan) -> dict[str, str]:
    return single(render_config(plan)["mapred-site.xml"])


def test_auto_is_shared_fs_exactly_when_the_local_dirs_are_shared(make_spec: SpecFactory,
                                                                 make_test_plan: PlanFactory) -> None:
    shared = make_test_plan(make_spec(filesystem={"root": str(make_spec().filesystem.root), "local_dirs": "shared"}))
    assert shared.shuffle == "shared-fs"
    props = mapred(shared)
    assert props["mapreduce.job.reduce.shuffle.consumer.plugin.class"] == shuffle.PLUGIN_CLASS
    entries = dict(e.split("=", 1) for e in props[shuffle.LOCAL_DIRS_PROPERTY].split(","))
    for node in shared.nodes:  # every NodeManager by address and by name, its nm-local/<host>
        assert entries[node.address] == entries[node.name] == node.nm_local_dir == \
            str(Path(shared.run_dir, "nm-local", node.name))
    local = make_test_plan(make_spec())  # node-local dirs (the default): Hadoop's shuffle, nothing rendered
    assert local.shuffle == "http"
    assert "mapreduce.job.reduce.shuffle.consumer.plugin.class" not in mapred(local)
    assert shuffle.LOCAL_DIRS_PROPERTY not in mapred(local)


def test_explicit_choices(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    root = str(make_spec().filesystem.root)
    http = make_test_plan(make_spec(filesystem={"root": root, "local_dirs": "shared"}, hadoop={"shuffle": "http"}))
    assert http.shuffle == "http" and "mapreduce.job.reduce.shuffle.consumer.plugin.class" not in mapred(http)
    # shared-fs with node-local dirs: only a node whose agent fell back to nm-local/<host> is read directly, so
    # the dirs named are those fallbacks, never the node-local ones.
    forced = make_test_plan(make_spec(hadoop={"shuffle": "shared-fs"}))
    props = mapred(forced)
    assert props["mapreduce.job.reduce.shuffle.consumer.plugin.class"] == shuffle.PLUGIN_CLASS
    for node in forced.nodes:
        assert f"{node.address}={node.nm_shared_dir}" in props[shuffle.LOCAL_DIRS_PROPERTY]
        assert node.nm_local_dir not in props[shuffle.LOCAL_DIRS_PROPERTY]
    with pytest.raises(UserError, match="hadoop.shuffle"):
        make_spec(hadoop={"shuffle": "rdma"})


def test_a_shared_fs_terasort_history() -> None:
    found = shuffle.step_shuffle(DATA / "terasort-shared-fs.jhist")
    assert found is not None
    assert found.used == "shared-fs"
    assert found.direct_bytes == found.shuffle_bytes == 10_400_048 and found.http_bytes == 0
    assert found.direct_maps == 8 and found.http_maps == 0
    assert [r.task[-8:] for r in found.reducers] == ["r_000000", "r_000001"]
    assert {r.host for r in found.reducers} <= {"n1", "n2", "n3"}
    assert all(r.direct_bytes == r.shuffle_bytes and r.shuffle_bytes and r.shuffled_maps == 4 for r in found.reducers)
    phases = [r.shuffle_s for r in found.reducers if r.shuffle_s is not None]
    assert found.shuffle_s == max(phases) and 0 < found.shuffle_s < 60
    assert shuffle.describe(found) == "shared-fs, 10400048 bytes read directly, 0 over HTTP"


def test_an_http_terasort_history() -> None:
    found = shuffle.step_shuffle(DATA / "terasort-http.jhist")
    assert found is not None
    assert found.used == "http" and found.http_bytes == found.shuffle_bytes == 10_400_048
    assert found.direct_bytes == 0 and found.http_maps == 8
    assert found.reducers[0].direct_bytes is None and "direct_bytes" not in found.dump()["reducers"][0]
    assert shuffle.describe(found) == "http, 10400048 bytes"


def test_no_reducers_no_shuffle() -> None:
    assert shuffle.step_shuffle(DATA / "sleep-one-map.jhist") is None
    assert shuffle.step_shuffle(None) is None and shuffle.describe(None) == "-"


def test_the_shuffle_sweep_runs_terasort_once_per_shuffle_and_the_rest_once(make_spec: SpecFactory,
                                                                          make_test_plan: PlanFactory) -> None:
    bench = load_bench(None, workloads=("dd", "terasort"), shuffle=("http", "shared-fs"))
    combos = points(bench)
    assert [p["shuffle"] for p in combos] == ["http", "shared-fs"]
    assert relevant("terasort", "tiny", combos[0]) != relevant("terasort", "tiny", combos[1])
    assert relevant("dd", "tiny", combos[0]) == relevant("dd", "tiny", combos[1])
    assert points(load_bench(None, workloads=("terasort",)))[0]["shuffle"] is None
    sized = points(load_bench(None, workloads=("dd", "terasort"), rows=(1000, 2000)))
    assert relevant("terasort", "tiny", sized[0]) != relevant("terasort", "tiny", sized[1])
    assert relevant("dd", "tiny", sized[0]) == relevant("dd", "tiny", sized[1])
    with pytest.raises(UserError, match="shuffle"):
        load_bench(None, workloads=("terasort",), shuffle=("rdma",))
    plan = make_test_plan(make_spec())
    assert shuffle_options(plan, None) == []
    assert shuffle_options(plan, "http") == [f"-Dmapreduce.job.reduce.shuffle.consumer.plugin.class="
                                             f"{shuffle.HADOOP_SHUFFLE}"]
    forced = shuffle_options(plan, "shared-fs")
    assert forced[0].endswith(shuffle.PLUGIN_CLASS) and forced[1].startswith(f"-D{shuffle.LOCAL_DIRS_PROPERTY}=")


def test_the_shuffle_figures_of_a_sweep() -> None:
    rows = [{"workload": "terasort", "profile": "tiny", "nodes": 3, "fs_mode": "rawfs", "shuffle": shuffle_choice,
             "state": "succeeded", "wall_s": wall, "shuffle_s": phase, "pfs_io_ratio": ratio,
             "direct_bytes": direct, "http_bytes": http}
            for shuffle_choice, wall, phase, ratio, direct, http in (
                ("http", 40.0, 9.0, 1.1, 0, 100), ("http", 42.0, 10.0, 1.1, 0, 100),
                ("shared-fs", 30.0, 4.0, 1.1, 100, 0), ("shared-fs", 32.0, 5.0, 1.1, 100, 0))]
    lines = shuffle_lines(summarize_rows(rows))
    assert len(lines) == 2
    assert lines[0].startswith("TeraSort 3 node(s) rawfs shuffle http: wall 41.0 ±12.7")
    assert "phase 9.5 ±6.4" in lines[0]
    assert "shuffle shared-fs" in lines[1] and "directly 100 " in lines[1] and "over HTTP 0 " in lines[1]
