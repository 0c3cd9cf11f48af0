"""The shared-filesystem shuffle (issue 15, ``hadoop.shuffle``) with real daemons: TeraSort + TeraValidate whose
reducers read every map output straight from the NodeManager local dirs on the shared filesystem, an ``http``
step in the same cluster (Hadoop's shuffle through the ShuffleHandler, still running), and the per-map fallback
to HTTP when a map output cannot be found; the run report's counters say which bytes went which way."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import hpc_hadoop, only_run_dir, processes_of, run_report

pytestmark = pytest.mark.hadoop

SMALL = {"daemon_heap": "512m", "map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m"}
PLUGIN = "org.apache.hadoop.mapreduce.task.reduce.SharedFsShuffle"
#: TeraGen rows (100 bytes each) and maps of the tests: 10 MB in 4 map outputs per sort.
ROWS, MAPS = 100_000, 4


def records(directory: Path, pattern: str) -> list[bytes]:
    """TeraSort's 100-byte records of the files matching ``pattern`` in ``directory``, file by file."""
    data = b"".join(p.read_bytes() for p in sorted(directory.glob(pattern)))
    assert len(data) % 100 == 0
    return [data[i:i + 100] for i in range(0, len(data), 100)]


def check_sorted(out: Path, name: str) -> None:
    generated, ordered = records(out / "gen", "part-m-*"), records(out / name, "part-r-*")
    assert len(ordered) == ROWS
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)
    assert sorted(ordered) == sorted(generated)


def sort_steps(fs_root_dir: str) -> list[dict]:
    """TeraGen, TeraSort and TeraValidate with the cluster's shuffle, then TeraSort with Hadoop's own shuffle
    (``http``) and TeraSort with the plugin told a wrong local dir for every node (every map output over HTTP)."""
    out = f"{fs_root_dir}/output"
    return [
        {"example": "teragen", "args": [f"-Dmapreduce.job.maps={MAPS}", str(ROWS), f"{out}/gen"]},
        {"example": "terasort", "args": [f"{out}/gen", f"{out}/sorted"]},
        {"example": "teravalidate", "args": [f"{out}/sorted", f"{out}/validate"]},
        {"example": "terasort", "name": "terasort-http",
         "args": ["-Dmapreduce.job.reduce.shuffle.consumer.plugin.class=org.apache.hadoop.mapreduce.task.reduce"
                  ".Shuffle", f"{out}/gen", f"{out}/sorted-http"]},
        {"example": "terasort", "name": "terasort-fallback",
         "args": ["-Dhpchadoop.shuffle.shared.local-dirs=127.0.0.1=/nonexistent", f"{out}/gen",
                  f"{out}/sorted-fallback"]},
    ]


def check_report(run_dir: Path, reducers: int) -> None:
    """The sorts' outputs and each step's ``shuffle`` in run.json."""
    report = run_report(run_dir)
    steps = report["steps"]
    assert [s["state"] for s in steps] == ["succeeded"] * 5, steps
    out = run_dir / "output"
    for name in ("sorted", "sorted-http", "sorted-fallback"):
        check_sorted(out, name)
    validate = "".join(p.read_text() for p in (out / "validate").glob("part-r-*"))
    assert "checksum" in validate and "error" not in validate.lower(), validate
    assert steps[0]["shuffle"] is None  # TeraGen has no reducers

    direct = steps[1]["shuffle"]
    print("shared-fs:", {k: v for k, v in direct.items() if k != "reducers"})
    assert direct["used"] == "shared-fs" and direct["shuffle_bytes"] > ROWS * 100
    assert direct["direct_bytes"] == direct["shuffle_bytes"] and direct["http_bytes"] == 0
    assert direct["direct_maps"] == MAPS * reducers and direct["http_maps"] == 0
    assert len(direct["reducers"]) == reducers
    for reducer in direct["reducers"]:
        assert reducer["direct_bytes"] == reducer["shuffle_bytes"] > 0 and reducer["http_bytes"] == 0, reducer
        assert reducer["shuffle_s"] is not None and reducer["shuffle_s"] > 0
    assert steps[2]["shuffle"]["used"] == "shared-fs" and steps[2]["shuffle"]["http_bytes"] == 0

    http = steps[3]["shuffle"]
    assert http["used"] == "http" and http["http_bytes"] == http["shuffle_bytes"] == direct["shuffle_bytes"]
    assert http["direct_bytes"] == 0 and http["http_maps"] == MAPS * reducers

    fallback = steps[4]["shuffle"]
    assert fallback["used"] == "shared-fs" and fallback["direct_bytes"] == 0 and fallback["direct_maps"] == 0
    assert fallback["http_bytes"] == fallback["shuffle_bytes"] == direct["shuffle_bytes"]
    assert fallback["http_maps"] == MAPS * reducers
    # The reducers' logs say which map outputs went over HTTP, and why.
    logs = "".join(p.read_text(errors="replace") for d in ("logs", "app-logs") for p in (run_dir / d).rglob("*")
                   if p.is_file())
    assert "shared-fs shuffle: fetching attempt_" in logs and "/nonexistent" in logs


def test_terasort_shared_fs_shuffle_on_the_local_backend(hadoop_runtime: Path, pfs_root: Path,
                                                        tmp_path: Path) -> None:
    """``filesystem.local_dirs: shared`` (``hadoop.shuffle: auto`` = ``shared-fs``), two reducers."""
    job = {"scheduler": "local", "name": "shuffle-local",
           "filesystem": {"root": str(pfs_root), "local_dirs": "shared"},
           "hadoop": {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2}}},
           "steps": sort_steps("${run_dir}")}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    result = hpc_hadoop("submit", str(path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run_dir = only_run_dir(pfs_root)
    assert PLUGIN in (run_dir / "conf" / "mapred-site.xml").read_text()
    check_report(run_dir, reducers=2)
    assert "shared-fs (100% direct)" in result.stdout
    assert processes_of(run_dir) == []
