"""Issue 29 item 5: a striping sweep that cannot take effect is refused before anything runs, and
``bench run --dry-run`` shows the points, clusters, striping commands and number of runs, starting nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from launcher.cli.main import main
from launcher.filesystems.detect import detect


def _bench(tmp_path: Path, sweep: dict, fs: dict | None = None, workloads: tuple[str, ...] = ("dd",)) -> Path:
    root = tmp_path / "root"
    path = tmp_path / "stripes.yaml"
    path.write_text(yaml.safe_dump({
        "name": "stripes", "workloads": list(workloads), "profile": "tiny", "repeats": 2, "sweep": sweep,
        "job": {"scheduler": "local", "filesystem": {"root": str(root), **(fs or {})}}}))
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["bench", "run", *args])


def _nothing_made(tmp_path: Path) -> None:
    assert not (tmp_path / "out").exists(), "the output directory was made"
    assert not (tmp_path / "root").exists() or not any((tmp_path / "root").rglob("hpc-hadoop-bench")), \
        "a run's work directory was made"


def test_stripe_sweep_on_a_filesystem_without_striping_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """The issue's run: `sweep: {stripe_count: [1, 2, 4]}` on an ext4 (or tmpfs) root exited 0 with three rows of
    noise labelled 1 / 2 / 4 stripes. Now: exit 2, one line naming the file, the field, the filesystem and the fix,
    and not a run made."""
    bench = _bench(tmp_path, {"stripe_count": [1, 2, 4]})
    result = _run(str(bench), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    label = detect(tmp_path, check_flock=False).label  # ext4, tmpfs, xfs... whatever holds tmp_path here
    assert lines[0].startswith(f"error: {bench}: sweep.stripe_count: stripe counts [1, 2, 4] cannot take effect")
    assert f"on {label} at " in lines[0] and "no per-directory striping" in lines[0]
    assert "(fix: put job.filesystem.root (or --root) on Lustre" in lines[0] and "remove sweep.stripe_count" in lines[0]
    _nothing_made(tmp_path)


def test_stripe_sweep_from_the_command_line_is_refused_too(tmp_path: Path) -> None:
    result = _run("--workload", "dd", "--stripe-count", "4", "--root", str(tmp_path / "root"),
                  "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "command line (--stripe-count): sweep.stripe_count: stripe counts [4] cannot take effect" in result.output
    _nothing_made(tmp_path)


def test_a_null_stripe_count_alone_is_no_striping_sweep(tmp_path: Path) -> None:
    """`stripe_count: [null]` (leave the layout alone) asks no layout: nothing to refuse (dry run, exit 0)."""
    result = _run(str(_bench(tmp_path, {"stripe_count": [None]})), "--dry-run", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "no striping" in result.output


def test_stripe_sweep_without_the_capability_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`filesystem.type: lustre` where `lfs` is not installed: layouts can be neither set nor read (as on an
    OrangeFS FUSE mount without extended attributes): refused, with the class's fix."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # no lfs anywhere on PATH
    bench = _bench(tmp_path, {"stripe_count": [1, 4]}, fs={"type": "lustre"})
    result = _run(str(bench), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert f"{bench}: sweep.stripe_count: stripe counts [1, 4] cannot take effect: layouts can be neither set nor " \
           "read on " in line
    assert "lfs: command not found" in line and "(fix: install the Lustre client tools (lfs)" in line
    _nothing_made(tmp_path)


def test_a_count_the_filesystem_refuses_is_refused_with_the_sweep_field(tmp_path: Path) -> None:
    """`-1` ("all servers") has no meaning on OrangeFS (`filesystem.type: orangefs`; getfattr reads this directory's
    attributes, so the capability is there): refused by the class's own check, under the sweep's field."""
    bench = _bench(tmp_path, {"stripe_count": [-1, 4]}, fs={"type": "orangefs"})
    result = _run(str(bench), "--dry-run")
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {bench}: sweep.stripe_count: stripe count -1 on OrangeFS (fix: use the " \
        "number of data files per file, at least 1 (a file gets at most one per data server))"


def test_dry_run_prints_points_clusters_striping_commands_and_runs(tmp_path: Path, lfs_standin: Path) -> None:
    """On a Lustre root (stand-in `lfs`): every point, the cluster of each node count, each point's `lfs
    setstripe` for each workload's work directory, the number of runs; no setstripe run, no directory made."""
    bench = _bench(tmp_path, {"stripe_count": [1, 4], "files": [2, 4]}, fs={"type": "lustre"},
                   workloads=("dd", "terasort"))
    result = _run(str(bench), "--dry-run", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"bench stripes ({bench}): profile tiny, 2 repeat(s) of each point, workloads dd, terasort"
    assert lines[1].startswith("cluster 1: 1 node(s), fs_mode rawfs, scheduler local, one Hadoop cluster") \
        and "(class lustre)" in lines[1]
    # files × stripes = 4 points; TeraSort has no `files`: it runs once per stripe count, at the first files value.
    assert [line for line in lines if line.startswith("  point ")] == [
        "  point stripe_count=1 files=2: dd, terasort × 2 run(s)", "  point stripe_count=1 files=4: dd × 2 run(s)",
        "  point stripe_count=4 files=2: dd, terasort × 2 run(s)", "  point stripe_count=4 files=4: dd × 2 run(s)"]
    root = tmp_path / "root"
    setstripes = [line.strip() for line in lines if "lfs setstripe" in line]
    assert len(setstripes) == 6
    assert setstripes[0].startswith("dd: lfs setstripe -c 1 " + str(root) + "/") \
        and setstripes[0].endswith("/dd-n1-s1-f2-r<repeat>")
    assert "/hpc-hadoop-bench/stripes-<date>-<time>-<hex>/" in setstripes[0]
    assert setstripes[-2].startswith("terasort: lfs setstripe -c 4 ")
    assert setstripes[-2].endswith("/terasort-n1-s4-fNone-r<repeat>")
    assert lines[-1] == "12 run(s) on 1 cluster configuration(s); nothing started (--dry-run)"
    log = lfs_standin / "calls.jsonl"
    made = [json.loads(c)["argv"] for c in log.read_text().splitlines()] if log.exists() else []
    assert all(argv[0] == "getstripe" for argv in made), made  # the capability was read, nothing was set
    _nothing_made(tmp_path)


def test_dry_run_of_nodes_and_fs_modes_lists_one_cluster_each(tmp_path: Path) -> None:
    bench = _bench(tmp_path, {"fs_mode": ["rawfs", "shim"]}, workloads=("dd", "latency"))
    result = _run(str(bench), "--dry-run")
    assert result.exit_code == 0, result.output
    clusters = [line for line in result.output.splitlines() if line.startswith("cluster ")]
    assert [c.split(";")[0] for c in clusters] == [
        "cluster 1: 1 node(s), fs_mode rawfs, scheduler local, one Hadoop cluster for its points",
        "cluster 2: 1 node(s), fs_mode shim, scheduler local, one Hadoop cluster for its points"]
    assert result.output.splitlines()[-1] == "8 run(s) on 2 cluster configuration(s); nothing started (--dry-run)"


def test_a_local_dirs_sweep_is_one_cluster_per_value(tmp_path: Path) -> None:
    """The Clemson comparison: node-local RAM disk vs disk vs the shared filesystem, one cluster each."""
    bench = _bench(tmp_path, {"local_dirs": [None, "shared", str(tmp_path / "ram")]}, workloads=("terasort",))
    result = _run(str(bench), "--dry-run")
    assert result.exit_code == 0, result.output
    clusters = [line.split(", scheduler")[0] for line in result.output.splitlines() if line.startswith("cluster ")]
    assert clusters == ["cluster 1: 1 node(s), fs_mode rawfs",
                        "cluster 2: 1 node(s), fs_mode rawfs, local_dirs shared",
                        f"cluster 3: 1 node(s), fs_mode rawfs, local_dirs {tmp_path / 'ram'}"]
    assert result.output.splitlines()[-1] == "6 run(s) on 3 cluster configuration(s); nothing started (--dry-run)"


@pytest.mark.parametrize("value", ["ram", "./local"])
def test_a_local_dirs_value_that_is_no_directory_is_refused_before_anything_runs(tmp_path: Path, value: str) -> None:
    bench = _bench(tmp_path, {"local_dirs": [None, value]})
    for args in ((str(bench), "--dry-run"), (str(bench), "--out", str(tmp_path / "out"))):
        result = _run(*args)
        assert result.exit_code == 2, result.output
        line = result.output.strip().splitlines()[-1]
        assert "stripes.yaml" in line and "local_dirs" in line and "absolute" in line, line
    _nothing_made(tmp_path)


# -- issue 29 item 1: one bench file per figure of the paper, checked by the dry run (not run) ---------------------

EXAMPLES = Path(__file__).resolve().parents[3] / "benchmarks" / "examples"
PAPER = {"spider-fig5": "Figure 5", "spider-fig6": "Figure 6", "spider-fig7": "Figure 7",
         "spider-fig8-9": "Figures 8-9", "spider-fig10": "Figure 10", "spider-sec3": "Section 3",
         "spider-table1": "Table 1"}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_each_figure_of_the_paper_has_a_bench_file_that_validates(name: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    lfs_standin: Path) -> None:
    """Named by the paper's numbering, its header names the figure and says the scale; the dry run validates
    every field and job-spec setting (Figure 10 on a Lustre root: the stand-in `lfs`)."""
    path = EXAMPLES / f"{name}.yaml"
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert f"The Spider paper's {PAPER[name]}" in header[0] and any("Scale" in line for line in header)
    assert yaml.safe_load(path.read_text())["name"] == name
    monkeypatch.setenv("SCRATCH", str(tmp_path / "scratch"))
    extra = ["--set", "filesystem.type=lustre"] if name == "spider-fig10" else []
    result = _run(str(path), "--dry-run", *extra)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith("nothing started (--dry-run)")
    if name == "spider-fig10":
        assert [line.split(" -c ")[1].split()[0] for line in result.output.splitlines()
                if "lfs setstripe" in line] == ["1", "4", "16", "64"]
        refused = _run(str(path), "--dry-run")  # the same file on this machine's own filesystem
        assert refused.exit_code == 2 and "spider-fig10.yaml: sweep.stripe_count" in refused.output


@pytest.mark.parametrize("name", ["related-clemson", "related-clustera"])
def test_each_related_result_has_a_bench_file_that_validates(name: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Clemson's intermediates (RAM disk, disk, shared filesystem: a local_dirs sweep) and Clustera's job
    throughput: headers name the result and the scale; the dry run validates every field."""
    path = EXAMPLES / f"{name}.yaml"
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert header[0].startswith("# A related result") and any("Scale" in line for line in header)
    monkeypatch.setenv("SCRATCH", str(tmp_path / "scratch"))
    result = _run(str(path), "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].endswith("nothing started (--dry-run)")
    if name == "related-clemson":
        assert [line.split("local_dirs ")[1].split(",")[0] for line in result.output.splitlines()
                if line.startswith("cluster ") and "local_dirs" in line] == ["/dev/shm", "shared"]


def test_figures_8_9_are_task_flows_not_the_nodes_scaling() -> None:
    """The old spider-fig8.yaml drew TeraSort and KMeans vs nodes: that is Figure 7 (renamed); 8-9 are task flows."""
    assert not (EXAMPLES / "spider-fig8.yaml").exists()
    fig7 = yaml.safe_load((EXAMPLES / "spider-fig7.yaml").read_text())
    assert fig7["workloads"] == ["terasort", "kmeans"] and len(fig7["sweep"]["nodes"]) >= 2
    assert "task flow" in (EXAMPLES / "spider-fig8-9.yaml").read_text().splitlines()[0]


def test_a_local_dirs_value_the_job_spec_refuses_names_the_sweep_field_and_another_error_the_job(
        tmp_path: Path) -> None:
    """The job spec refuses a directory with a space (``filesystem.local_dirs``): the bench names ``sweep.local_dirs``;
    a bad ``job`` field in the same bench is blamed on ``job``, even though a local_dirs value is swept and the
    error's text holds the words ``local_dirs``."""
    bench = _bench(tmp_path, {"local_dirs": [str(tmp_path / "a b")]})
    result = _run(str(bench), "--dry-run")
    assert result.exit_code == 2, result.output
    assert "sweep.local_dirs" in result.output.strip().splitlines()[-1], result.output
    data = yaml.safe_load(bench.read_text())
    data["job"]["name"] = "local_dirs?"  # a job error whose text names local_dirs
    data["sweep"]["local_dirs"] = [str(tmp_path / "ram")]
    bench.write_text(yaml.safe_dump(data))
    result = _run(str(bench), "--dry-run")
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert ": job: " in line and "sweep.local_dirs" not in line, line
    _nothing_made(tmp_path)
