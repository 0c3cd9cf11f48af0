"""Runs on an OrangeFS-like mount, with real Hadoop daemons: the stand-in of an OrangeFS volume behind its FUSE
client ``pvfs2fuse`` (tests/standins/orangefs_fuse.py; OrangeFS cannot be installed on the test machine). It
refuses the sticky and setgid bits, mounts as plain ``fuse`` from ``pvfs2fuse#tcp://...``, keeps the
``user.pvfs2.*`` attributes of directories and gives each new file at most 4 data files (4 data servers).

Data is tiny: a Python FUSE passthrough is slow.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import hpc_hadoop, only_run_dir, orangefs_standin, processes_of, run_report

pytestmark = pytest.mark.hadoop

#: Small containers: the CI machine has 2 cores.
SMALL = {"daemon_heap": "512m", "map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m"}
TEXT = "the quick brown fox jumps over the lazy dog\nthe dog sleeps\n" * 200


@pytest.fixture(scope="module")
def orangefs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The OrangeFS stand-in, mounted once for this module (4 data servers, ``user.pvfs2.*`` kept)."""
    with orangefs_standin(tmp_path_factory.mktemp("orangefs")) as mountpoint:
        yield mountpoint


@pytest.fixture
def ofs_root(orangefs: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of this test on the mount."""
    root = orangefs / re.sub(r"[^A-Za-z0-9]+", "-", request.node.name)[:40]
    root.mkdir()
    return root


def write_job(directory: Path, job: dict) -> Path:
    path = directory / f"{job['name']}.yaml"
    path.write_text(yaml.safe_dump({"scheduler": "local", **job}))
    return path


def test_wordcount_on_orangefs(hadoop_runtime: Path, ofs_root: Path, tmp_path: Path) -> None:
    """Issue 17 items 1 and 2: bring-up makes no sticky-bit directory (the JobHistoryServer's intermediate done
    dir failed with EINVAL), and the mount is recognised as OrangeFS from its source."""
    corpus = ofs_root / "corpus.txt"
    corpus.write_text(TEXT)
    job = write_job(tmp_path, {"name": "wc", "filesystem": {"root": str(ofs_root)}, "hadoop": SMALL,
                               "steps": [{"example": "wordcount", "args": [str(corpus), "${run_dir}/output/wc"]}]})
    result = hpc_hadoop("submit", str(job))
    run_dir = only_run_dir(ofs_root)
    report = run_report(run_dir)
    assert result.returncode == 0, (report.get("error"), result.stdout[-3000:], result.stderr[-3000:])
    counts: Counter[str] = Counter()
    for part in (run_dir / "output" / "wc").glob("part-r-*"):
        for line in part.read_text().splitlines():
            word, _, count = line.rpartition("\t")
            counts[word] += int(count)
    assert counts == Counter(TEXT.split())
    assert report["filesystem"]["type"] == "orangefs (fuse)" and report["filesystem"]["class"] == "orangefs"
    assert report["filesystem"]["source"] == "pvfs2fuse#tcp://ofs-server:3334/ofs"
    modes = {p: os.stat(p).st_mode for p in run_dir.rglob("*") if not p.is_symlink()}
    assert not [p for p, m in modes.items() if m & 0o3000], "a sticky or setgid bit in the cluster directory"
    assert list((run_dir / "history").rglob("job_*.jhist"))
    assert processes_of(run_dir) == []
