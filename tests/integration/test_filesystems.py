"""The filesystem layer with real daemons and real filesystems: detection on the GlusterFS test mount (FUSE),
TeraSort through the ``pfs://`` shim (``filesystem.mode: shim``: :func:`check_terasort_through_the_shim`, the first
steps of test_faults.py's GlusterFS stall since issue 38). No mocks. (TestDFSIO on HDFS daemons whose
NameNode/DataNode directories sit in the cluster directory, ``filesystem.mode: hdfs``, is test_bench.py's HDFS
sweep: one cluster for both since issue 38.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.filesystems import detect
from tests.conftest import PFS, hpc_hadoop
from tests.jobs import SMALL

pytestmark = pytest.mark.hadoop

GLUSTER_MOUNT = PFS
#: Small containers: the CI machine has 2 cores.


@pytest.fixture
def gluster_dir(gluster: Path) -> Iterator[Path]:
    """A directory of this test on the GlusterFS volume (removed afterwards; the volume stays up)."""
    directory = gluster / f"hpc-hadoop-fs-test-{os.getpid()}"
    directory.mkdir()
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_detection_on_the_glusterfs_mount(gluster_dir: Path) -> None:
    found = detect(gluster_dir)
    statfs_type = subprocess.run(["stat", "-f", "-c", "%t", str(gluster_dir)], capture_output=True, text=True,
                                 check=True).stdout.strip()
    assert found.magic == hex(int(statfs_type, 16)) == "0x65735546"
    assert (found.type, found.subtype, found.label) == ("fuse", "glusterfs", "fuse.glusterfs")
    assert found.mount_point == str(GLUSTER_MOUNT) and found.mount_type == "fuse.glusterfs"
    assert found.source.endswith(":/hhpfs")
    assert found.total_bytes > 0 and 0 < found.free_bytes <= found.total_bytes
    assert found.flock is True


def test_doctor_shows_the_detected_filesystem(gluster_dir: Path) -> None:
    result = hpc_hadoop("doctor", "--set", f"filesystem.root={gluster_dir}/cluster", timeout=120)
    lines = {line.split()[1]: line for line in result.stdout.splitlines() if len(line.split()) > 2}
    assert "fuse.glusterfs" in lines["filesystem"] and "mounted at /mnt/hhpfs" in lines["filesystem"], result.stdout
    assert "striping not applicable" in lines["striping"] and lines["flock"].split()[0] == "ok"


def records(directory: Path, pattern: str) -> list[bytes]:
    """TeraSort's 100-byte records of the files matching ``pattern`` in ``directory``, file by file."""
    data = b"".join(p.read_bytes() for p in sorted(directory.glob(pattern)))
    assert len(data) % 100 == 0
    return [data[i:i + 100] for i in range(0, len(data), 100)]


#: The ``filesystem`` fields (but ``root``) of a run through the ``pfs://`` shim (``fs.defaultFS=pfs:///``) with 4 MiB
#: splits from ``split_size``, and a stripe setting for the output directory, on a filesystem that has none.
SHIM_FILESYSTEM = {"mode": "shim", "split_size": "4m", "striping": {"output": {"count": 2, "size": "1m"}}}
#: Two reducers a job.
SHIM_HADOOP = {**SMALL, "properties": {"mapred-site": {"mapreduce.job.reduces": 2}}}
#: TeraGen (100000 records, 2 maps) → TeraSort, the first two steps of the run.
SHIM_STEPS = [
    {"example": "teragen", "args": ["-Dmapreduce.job.maps=2", "100000", "${run_dir}/output/gen"]},
    {"example": "terasort", "args": ["${run_dir}/output/gen", "${run_dir}/output/sorted"]},
]


def check_terasort_through_the_shim(run_dir: Path, report: dict) -> None:
    """:data:`SHIM_STEPS` through the shim over the real GlusterFS mount (the stand-in for Lustre), a cluster of its
    own until issue 38, now the first steps of test_faults.py's
    :func:`~tests.integration.test_faults.test_parallel_filesystem_stalling_mid_job`: the output is checked in Python
    (the same 100000 records as TeraGen wrote, in key order across both partitions), and the report says "striping not
    applicable" for the output's stripe setting rather than drop it."""
    assert [s["state"] for s in report["steps"][:2]] == ["succeeded"] * 2, report["steps"]
    assert "<value>pfs:///</value>" in (run_dir / "conf" / "core-site.xml").read_text()
    out = run_dir / "output"
    assert len(list((out / "sorted").glob("part-r-*"))) == 2
    generated, ordered = records(out / "gen", "part-m-*"), records(out / "sorted", "part-r-*")
    assert len(generated) == len(ordered) == 100000
    assert [r[:10] for r in ordered] == sorted(r[:10] for r in generated)  # keys in order, across partitions
    assert sorted(ordered) == sorted(generated)  # the same records, none lost or changed
    # Raw access through pfs://: no .crc side files, which file:// (LocalFileSystem) would write.
    assert not list(out.rglob("*.crc"))
    # Splits follow filesystem.split_size: two 5 MB TeraGen files in 4 MiB blocks = 2 splits each (32 MiB: 1).
    assert "number of splits:4" in (run_dir / "steps" / "02-terasort.log").read_text()
    # Staging and history worked through pfs://: both jobs' history files were written (the JobHistoryServer
    # moves them from intermediate/ to done/ every 2 s, which a cluster torn down at once may not wait for).
    for step in report["steps"][:2]:
        assert list((run_dir / "history").rglob(f"{step['job_id']}*.jhist")), step["job_id"]
    fs = report["filesystem"]
    assert fs["mode"] == "shim" and fs["class"] == "generic"
    output = next(d for d in fs["directories"] if d["role"] == "output")
    assert output["status"] == "striping not applicable" and output["requested"]["count"] == 2
