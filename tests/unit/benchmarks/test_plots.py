"""The benchmark plots render to non-empty PNGs with the paper's axes (checked on the matplotlib objects)."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from benchmarks.plots import (
    per_process_vs_files,
    plot_all,
    throughput_vs_files,
    time_vs_files,
    time_vs_nodes,
    time_vs_stripes,
)
from benchmarks.results import summarize_rows

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rows() -> list[dict]:
    rows = []
    for files in (2, 4, 8):
        for repeat, jitter in enumerate((0.9, 1.0, 1.1), start=1):
            base = {"profile": "tiny", "nodes": 1, "fs_mode": "rawfs", "stripe_count": None, "files": files,
                    "file_size": 8 << 20, "repeat": repeat, "state": "succeeded"}
            rows.append({**base, "workload": "dfsio", "wall_s": 20.0 * jitter, "write_mb_s": files * jitter,
                         "read_mb_s": 2 * files * jitter, "dd_write_mb_s": 100.0 * jitter,
                         "dd_read_mb_s": 300.0 * jitter})
    for nodes in (1, 2, 4):
        for stripes in (1, 4, 16):
            for repeat, jitter in enumerate((0.95, 1.05), start=1):
                rows.append({"workload": "terasort", "profile": "tiny", "nodes": nodes, "fs_mode": "rawfs",
                             "stripe_count": stripes, "files": None, "file_size": None, "repeat": repeat,
                             "state": "succeeded", "wall_s": 100.0 / nodes * jitter + stripes})
    return rows


def test_throughput_vs_files_has_dd_and_testdfsio_lines() -> None:
    fig = throughput_vs_files(summarize_rows(_rows()))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "number of files" and ax.get_ylabel() == "aggregate throughput (MiB/s)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["dd write", "dd read", "TestDFSIO write", "TestDFSIO read"]
    assert list(ax.lines[0].get_xdata()) == [2.0, 4.0, 8.0]
    plt.close(fig)


def test_time_vs_nodes_and_stripes_have_error_bars() -> None:
    """A line per workload and per value of what else varies (dfsio's data size, terasort's stripes or nodes)."""
    summaries = summarize_rows(_rows())
    for make, xlabel, legend in (
            (time_vs_nodes, "number of nodes", ["dfsio, 2 × 8 MiB", "dfsio, 4 × 8 MiB", "dfsio, 8 × 8 MiB",
                                                "terasort, 1 stripe", "terasort, 4 stripes", "terasort, 16 stripes"]),
            (time_vs_stripes, "stripe count", ["terasort, 1 node", "terasort, 2 nodes", "terasort, 4 nodes"])):
        fig = make(summaries)
        ax = fig.axes[0]
        assert ax.get_xlabel() == xlabel and ax.get_ylabel() == "running time (s)"
        assert ax.containers, "no error bars"
        assert [t.get_text() for t in ax.get_legend().get_texts()] == legend
        plt.close(fig)


def test_plot_all_writes_non_empty_pngs(tmp_path: Path) -> None:
    paths = plot_all(_rows(), tmp_path)
    assert sorted(p.name for p in paths) == ["throughput_vs_files.png", "time_vs_nodes.png", "time_vs_stripes.png"]
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000


def test_no_rows_no_plots(tmp_path: Path) -> None:
    assert plot_all([], tmp_path) == []


def test_without_matplotlib_the_summary_is_written_and_plots_skipped(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 item 8: a bench on an install without matplotlib ended in ModuleNotFoundError after every run
    had succeeded. Now the CSV and HiBench report are written, and the plots skipped with a note."""
    from io import StringIO

    from rich.console import Console

    from benchmarks.harness import write_outputs

    monkeypatch.setitem(sys.modules, "benchmarks.plots", None)  # `import benchmarks.plots` raises ImportError
    out = StringIO()
    assert write_outputs(tmp_path, _rows(), Console(file=out, width=200)) == []
    assert (tmp_path / "summary.csv").stat().st_size > 0 and (tmp_path / "hibench.report").stat().st_size > 0
    assert "plots skipped" in out.getvalue() and f"hpc-hadoop bench plot {tmp_path}" in out.getvalue()
    assert not list(tmp_path.glob("*.png"))


def test_without_matplotlib_itself_the_plots_are_skipped_in_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 item 7: matplotlib is the optional extra ``plots``. With it gone (``import matplotlib`` raises
    ImportError) the summary, CSV and report are written even though ``benchmarks.plots`` was imported before, and
    one line says the plots were skipped and how to get them."""
    from io import StringIO

    from rich.console import Console

    from benchmarks.harness import write_outputs

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = StringIO()
    assert write_outputs(tmp_path, _rows(), Console(file=out, width=80)) == []
    assert (tmp_path / "summary.csv").stat().st_size > 0 and (tmp_path / "hibench.report").stat().st_size > 0
    assert not list(tmp_path.glob("*.png"))
    (line,) = [line for line in out.getvalue().splitlines() if "plots skipped" in line]
    assert "pip install 'hpc-hadoop[plots]'" in line and f"hpc-hadoop bench plot {tmp_path}" in line, line


#: A program that blocks matplotlib (as a venv without the ``plots`` extra has none) and then runs the command line.
NO_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None; from launcher.cli.main import main; main()"


def test_a_venv_without_matplotlib_runs_the_command_line_and_bench_plot(tmp_path: Path) -> None:
    """The whole command line (``--help``, ``examples``, ``bench plot``) imports without matplotlib; ``bench plot``
    writes the CSV and the report and says the plots were skipped."""
    import json
    import os
    import subprocess

    from tests.conftest import REPO

    with (tmp_path / "results.jsonl").open("w") as rows:
        rows.writelines(json.dumps(row) + "\n" for row in _rows())
    env = {**os.environ, "PYTHONPATH": str(REPO), "HPC_HADOOP_SHARE": str(REPO)}
    for args in (["--help"], ["examples"], ["bench", "--help"]):
        proc = subprocess.run([sys.executable, "-c", NO_MATPLOTLIB, *args], capture_output=True, text=True, env=env,
                              timeout=120, check=False)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
    proc = subprocess.run([sys.executable, "-c", NO_MATPLOTLIB, "bench", "plot", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "plots skipped" in proc.stdout and "hpc-hadoop[plots]" in proc.stdout, proc.stdout
    assert (tmp_path / "summary.csv").stat().st_size > 0 and not list(tmp_path.glob("*.png"))


# -- issue 29 item 4: plots worth printing, checked from their matplotlib objects ---------------------------------

def _times(x_key: str, xs: tuple[int, ...], walls: tuple[float, ...], workload: str = "terasort") -> list[dict]:
    """Rows of ``workload`` at each ``x_key`` value, one per wall time (each a repeat)."""
    return [{"workload": workload, "profile": "tiny", "nodes": 1, "fs_mode": "rawfs", "stripe_count": None,
             "files": None, "file_size": None, x_key: x, "repeat": r, "state": "succeeded", "wall_s": w * x}
            for x in xs for r, w in enumerate(walls, start=1)]


def _bar_bounds(ax) -> list[tuple[float, float]]:  # noqa: ANN001 - a matplotlib Axes
    """(low, high) of every vertical error bar of the axes (of a line plot or a bar chart)."""
    from matplotlib.container import ErrorbarContainer

    bounds = []
    for container in [c for c in ax.containers if isinstance(c, ErrorbarContainer)]:
        _, _, (bars, *_) = container.lines
        bounds += [(min(seg[0][1], seg[1][1]), max(seg[0][1], seg[1][1])) for seg in bars.get_segments()]
    return bounds


def _note(fig) -> str:  # noqa: ANN001 - a matplotlib Figure
    (note,) = [t.get_text() for t in fig.texts if t.get_gid() == "note"]
    return note


def test_count_axes_have_integer_ticks_at_the_swept_values() -> None:
    """The issue's 0.96-1.04 nodes and 1.900-2.100 files: ticks are the swept counts, nothing in between."""
    fig = time_vs_nodes(summarize_rows(_times("nodes", (1, 2), (10.0, 11.0, 12.0))))
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [1, 2] and [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    assert ax.xaxis.get_minor_locator().tick_values(0, 3) == []
    plt.close(fig)
    fig = time_vs_stripes(summarize_rows(_times("stripe_count", (1, 4, 16, 64), (10.0, 11.0, 12.0))))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [1, 4, 16, 64]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "4", "16", "64"]
    plt.close(fig)
    rows = [{**r, "workload": "dd", "files": r["files"], "dd_write_mb_s": 100.0, "dd_read_mb_s": 200.0}
            for r in _times("files", (2, 3), (1.0, 1.1, 1.2))]
    fig = throughput_vs_files(summarize_rows(rows))
    assert list(fig.axes[0].get_xticks()) == [2, 3]
    plt.close(fig)


def test_error_bars_never_reach_below_zero_and_are_the_log_interval() -> None:
    """The issue's bar reaching -160 s: two runs of 10 s and 300 s have an arithmetic 95% CI of 155 ± 1843 s. The
    bar is the t-interval of the logs, back-transformed, around the geometric mean."""
    import math

    fig = time_vs_nodes(summarize_rows(_times("nodes", (1, 2), (10.0, 300.0))))
    ax = fig.axes[0]
    bounds = _bar_bounds(ax)
    assert len(bounds) == 2 and all(low > 0 for low, _ in bounds)
    for x, (low, high) in zip((1, 2), bounds, strict=True):
        logs = [math.log(10.0 * x), math.log(300.0 * x)]
        mean, half = sum(logs) / 2, 12.706 * abs(logs[1] - logs[0]) / math.sqrt(2) / math.sqrt(2)
        assert (low, high) == pytest.approx((math.exp(mean - half), math.exp(mean + half)), rel=1e-6)
    assert list(ax.lines[0].get_ydata()) == pytest.approx([math.sqrt(3000.0), 2 * math.sqrt(3000.0)])
    plt.close(fig)


def test_every_figure_has_a_note_with_n_and_a_warning_below_three_runs() -> None:
    fig = time_vs_nodes(summarize_rows(_times("nodes", (1, 2), (10.0, 12.0))))
    note = _note(fig)
    assert note.startswith("n = 2 runs per point; points: geometric mean; bars: 95% t-interval of log values")
    assert "warning: n < 3 at some points" in note
    plt.close(fig)
    fig = time_vs_nodes(summarize_rows(_times("nodes", (1, 2), (10.0, 11.0, 12.0))))
    assert _note(fig).startswith("n = 3 runs per point") and "warning" not in _note(fig)
    plt.close(fig)
    fig = throughput_vs_files(summarize_rows(_rows()))
    assert "n = 3 runs per point" in _note(fig) and "file size 8 MiB" in _note(fig)
    plt.close(fig)


def test_axis_labels_have_units() -> None:
    summaries = summarize_rows(_rows())
    for make in (throughput_vs_files, time_vs_nodes, time_vs_stripes):
        fig = make(summaries)
        label = fig.axes[0].get_ylabel()
        assert label.endswith(("(s)", "(MiB/s)")), label
        plt.close(fig)


def test_a_plot_only_for_what_was_swept(tmp_path: Path) -> None:
    """The issue's empty `time_vs_stripes.png` when nothing swept stripes: no figure for a variable with one value,
    and each figure written has a line with data."""
    rows = _times("nodes", (1, 2), (10.0, 11.0))
    assert [p.name for p in plot_all(rows, tmp_path)] == ["time_vs_nodes.png"]
    assert plot_all(_times("nodes", (1,), (10.0, 11.0)), tmp_path / "none") == []
    stripes = [{**r, "stripe_count": s} for s in (1, 4) for r in _times("nodes", (2,), (10.0 * s, 11.0))]
    tmp = tmp_path / "stripes"
    tmp.mkdir()
    assert [p.name for p in plot_all(stripes, tmp)] == ["time_vs_stripes.png"]
    fig = time_vs_stripes(summarize_rows(stripes))
    assert len(fig.axes[0].lines[0].get_xdata()) == 2
    plt.close(fig)


# -- issue 29: the paper's figures as it draws them ----------------------------------------------------------------

MiB = 1 << 20
#: Two runs far apart: their arithmetic 95% CI reaches far below zero (155 ± 1843), the log one never does.
SPREAD = (10.0, 300.0)


def _row(workload: str, repeat: int, **values: object) -> dict:
    """One succeeded row of ``workload`` (1 node, rawfs, no stripes, files/sizes/rows unset unless given)."""
    return {"workload": workload, "profile": "tiny", "nodes": 1, "fs_mode": "rawfs", "stripe_count": None,
            "files": None, "file_size": None, "rows": None, "repeat": repeat, "state": "succeeded", **values}


def _files_rows(metrics: dict[str, float], nodes: tuple[int, ...] = (1, 3), files: tuple[int, ...] = (2, 4, 8),
                jitters: tuple[float, ...] = (0.9, 1.0, 1.1), workload: str = "dfsio") -> list[dict]:
    """``workload`` rows at every (nodes, files) point, one per jitter; each metric = base × files × nodes ×
    jitter, so every point's value is known."""
    return [_row(workload, r, nodes=n, files=f, file_size=64 * MiB,
                 **{m: base * f * n * j for m, base in metrics.items()})
            for n in nodes for f in files for r, j in enumerate(jitters, start=1)]


def _line(ax, label: str):  # noqa: ANN001, ANN202 - matplotlib Axes and Line2D
    """The data line of the error-bar plot labelled ``label``."""
    (line,) = [c.lines[0] for c in ax.containers if c.get_label() == label]
    return line


def _legend(ax) -> list[str]:  # noqa: ANN001 - a matplotlib Axes
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _check_panels(fig, nodes: tuple[int, ...] = (1, 3), files: tuple[int, ...] = (2, 4, 8)) -> None:  # noqa: ANN001
    """One panel per node count, titled ``1 node``/``3 nodes``, y shared, integer ticks at the swept files."""
    assert [ax.get_title() for ax in fig.axes] == [f"{n} node" + ("" if n == 1 else "s") for n in nodes]
    first = fig.axes[0]
    for ax in fig.axes:
        assert ax.get_xlabel() == "number of files"
        assert first.get_shared_y_axes().joined(first, ax)
        assert list(ax.get_xticks()) == list(files)
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(f) for f in files]
        assert ax.xaxis.get_minor_locator().tick_values(0, 10) == []


def test_throughput_vs_files_has_one_panel_per_node_count() -> None:
    """Issue 29: one line zigzagged through the 1-node and 3-node points at the same file count. Now each node
    count has its panel, and each line its node count's points only."""
    rows = _files_rows({"dd_write_mb_s": 100.0, "dd_read_mb_s": 300.0, "write_mb_s": 1.0, "read_mb_s": 2.0})
    fig = throughput_vs_files(summarize_rows(rows))
    assert len(fig.axes) == 2
    _check_panels(fig)
    assert _legend(fig.axes[0]) == ["dd write", "dd read", "TestDFSIO write", "TestDFSIO read"]
    for ax, nodes in zip(fig.axes, (1, 3), strict=True):
        dd_write = ax.lines[0]
        assert list(dd_write.get_xdata()) == [2.0, 4.0, 8.0]
        assert list(dd_write.get_ydata()) == pytest.approx([100.0 * f * nodes * (0.99 ** (1 / 3)) for f in (2, 4, 8)])
    assert fig.axes[0].get_ylabel() == "aggregate throughput (MiB/s)"
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "log"]  # dd 200-2400 MiB/s, TestDFSIO 2-24: one scale
    assert "n = 3 runs per point" in _note(fig) and "file size 64 MiB" in _note(fig) and "warning" not in _note(fig)
    plt.close(fig)


def test_per_process_vs_files_draws_dd_and_testdfsio_per_process() -> None:
    """The paper's Figure 5 draws per-process throughput: dd's total MiB ÷ the sum of its processes' seconds and
    TestDFSIO's per-map figure, per node count."""
    metrics = {"dd_write_proc_mb_s": 120.0, "dd_read_proc_mb_s": 250.0, "write_throughput_mb_s": 100.0,
               "read_throughput_mb_s": 200.0}
    fig = per_process_vs_files(summarize_rows(_files_rows(metrics)))
    _check_panels(fig)
    assert fig.axes[0].get_ylabel() == "per-process throughput (MiB/s)"
    assert _legend(fig.axes[0]) == ["dd write", "dd read", "TestDFSIO write", "TestDFSIO read"]
    tdfsio_read = _line(fig.axes[1], "TestDFSIO read")
    assert list(tdfsio_read.get_ydata()) == pytest.approx([200.0 * f * 3 * (0.99 ** (1 / 3)) for f in (2, 4, 8)])
    plt.close(fig)


def test_per_process_without_the_dd_keys_draws_what_exists(tmp_path: Path) -> None:
    """Older rows have no dd per-process keys: TestDFSIO's lines only; no row has any: no figure."""
    rows = _files_rows({"write_throughput_mb_s": 100.0, "read_throughput_mb_s": 200.0, "wall_s": 30.0})
    fig = per_process_vs_files(summarize_rows(rows))
    assert _legend(fig.axes[0]) == ["TestDFSIO write", "TestDFSIO read"]
    plt.close(fig)
    assert "per_process_vs_files.png" in [p.name for p in plot_all(rows, tmp_path)]
    other = tmp_path / "other"
    other.mkdir()
    names = [p.name for p in plot_all(_files_rows({"write_mb_s": 1.0, "wall_s": 30.0}), other)]
    assert "per_process_vs_files.png" not in names and "time_vs_files.png" not in names
    assert "throughput_vs_files.png" in names


def test_time_vs_files_has_dd_and_testdfsio_times_per_node_count() -> None:
    metrics = {"dd_write_s": 2.0, "dd_read_s": 1.0, "write_exec_s": 20.0, "read_exec_s": 15.0}
    fig = time_vs_files(summarize_rows(_files_rows(metrics)))
    _check_panels(fig)
    assert fig.axes[0].get_ylabel() == "running time (s)"
    assert _legend(fig.axes[0]) == ["dd write", "dd read", "TestDFSIO write", "TestDFSIO read"]
    write = _line(fig.axes[0], "TestDFSIO write")
    assert list(write.get_ydata()) == pytest.approx([20.0 * f * (0.99 ** (1 / 3)) for f in (2, 4, 8)])
    assert all(low > 0 for ax in fig.axes for low, _ in _bar_bounds(ax))
    plt.close(fig)


def test_dd_lines_from_the_dd_workload_when_it_ran() -> None:
    """Figure 5 runs `dd` and `dfsio`: dfsio's dd pair does not draw a second `dd write` line."""
    rows = _files_rows({"dd_write_s": 2.0}, workload="dd") + _files_rows({"dd_write_s": 5.0, "write_exec_s": 20.0})
    fig = time_vs_files(summarize_rows(rows))
    assert _legend(fig.axes[0]) == ["dd write", "TestDFSIO write"]
    dd = _line(fig.axes[0], "dd write")
    assert list(dd.get_ydata()) == pytest.approx([2.0 * f * (0.99 ** (1 / 3)) for f in (2, 4, 8)])
    plt.close(fig)


def test_files_figures_split_lines_by_file_size() -> None:
    """Two file sizes at the same file counts are two lines, never one zigzag."""
    rows = [{**r, "file_size": size} for size in (16 * MiB, 64 * MiB)
            for r in _files_rows({"write_mb_s": 1.0}, nodes=(1,))]
    fig = throughput_vs_files(summarize_rows(rows))
    assert _legend(fig.axes[0]) == ["TestDFSIO write, 16 MiB files", "TestDFSIO write, 64 MiB files"]
    assert [list(c.lines[0].get_xdata()) for c in fig.axes[0].containers] == [[2.0, 4.0, 8.0]] * 2
    assert "file size 16 MiB, 64 MiB" in _note(fig)
    plt.close(fig)


def test_time_vs_nodes_has_a_line_per_data_size() -> None:
    """Figure 6 sweeps 4 and 12 files at 1, 2, 3 nodes: one line per (workload, data size), labelled with it; a
    workload with one size keeps its name."""
    rows = [_row("dfsio", r, nodes=n, files=f, file_size=64 * MiB, wall_s=f * w / n)
            for n in (1, 2, 3) for f in (4, 12) for r, w in enumerate((10.0, 11.0, 12.0), start=1)]
    rows += [_row("terasort", r, nodes=n, rows=rws, wall_s=rws / 1e5 / n * w)
             for n in (1, 2, 3) for rws in (2_000_000, 4_000_000) for r, w in enumerate((1.0, 1.1, 1.2), start=1)]
    rows += [_row("kmeans", r, nodes=n, rows=2_000_000, wall_s=50.0 / n) for n in (1, 2, 3) for r in (1, 2, 3)]
    fig = time_vs_nodes(summarize_rows(rows))
    ax = fig.axes[0]
    assert _legend(ax) == ["dfsio, 4 × 64 MiB", "dfsio, 12 × 64 MiB", "kmeans", "terasort, 200 MB",
                           "terasort, 400 MB"]
    assert [list(c.lines[0].get_xdata()) for c in ax.containers] == [[1.0, 2.0, 3.0]] * 5
    gmean = (10.0 * 11.0 * 12.0) ** (1 / 3)
    assert list(_line(ax, "dfsio, 12 × 64 MiB").get_ydata()) == pytest.approx([12 * gmean / n for n in (1, 2, 3)])
    plt.close(fig)
    one_size = [r for r in rows if r["workload"] != "terasort" or r["rows"] == 2_000_000]
    fig = time_vs_nodes(summarize_rows(one_size))
    assert _legend(fig.axes[0]) == ["dfsio, 4 × 64 MiB", "dfsio, 12 × 64 MiB", "kmeans", "terasort"]
    plt.close(fig)


def _terasort_ratio_rows() -> list[dict]:
    return [_row("terasort", r, nodes=n, rows=3_200_000, shuffle=sh, wall_s=50.0 * w, pfs_io_ratio=ratio * w)
            for n in (1, 3) for sh, ratio in (("http", 0.51), ("shared-fs", 1.03))
            for r, w in enumerate((1.0, 1.05), start=1)]


def test_io_ratio_bars_against_the_themis_bound() -> None:
    """Themis's 2-IO bound: `pfs_io_ratio` per point as bars with interval bars, a dashed line at 1.0, each bar
    labelled by what varies (here nodes and shuffle)."""
    from benchmarks.plots import io_ratio

    fig = io_ratio(summarize_rows(_terasort_ratio_rows()))
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([0.51 * 1.05 ** 0.5, 1.03 * 1.05 ** 0.5] * 2)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 node\nshuffle http", "1 node\nshuffle shared-fs",
                                                            "3 nodes\nshuffle http", "3 nodes\nshuffle shared-fs"]
    assert ax.get_xlabel() == "nodes, shuffle"
    (bound,) = [line for line in ax.lines if line.get_label() == "Themis bound (4 × input)"]
    assert list(bound.get_ydata()) == [1.0, 1.0] and bound.get_linestyle() == "--"
    assert "Themis bound (4 × input)" in _legend(ax)
    assert ax.get_ylabel() == "shared-filesystem bytes ÷ (4 × input bytes)"
    bounds = _bar_bounds(ax)
    assert len(bounds) == 4 and all(low > 0 for low, _ in bounds)
    assert _note(fig).startswith("n = 2 runs per point; bar heights: geometric mean") and "warning: n < 3" in _note(fig)
    plt.close(fig)


def test_io_ratio_drawn_for_one_point(tmp_path: Path) -> None:
    """A single TeraSort point with the ratio is drawn (the bound is the comparison); no ratio: no figure."""
    rows = [_row("terasort", r, nodes=3, rows=3_200_000, wall_s=50.0, pfs_io_ratio=0.51) for r in (1, 2, 3)]
    assert [p.name for p in plot_all(rows, tmp_path)] == ["io_ratio.png"]
    fig = __import__("benchmarks.plots", fromlist=["io_ratio"]).io_ratio(summarize_rows(rows))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["3 nodes"]
    plt.close(fig)
    none = tmp_path / "none"
    none.mkdir()
    assert plot_all([{**r, "pfs_io_ratio": None} for r in rows], none) == []


def test_jobs_per_minute_grouped_bars_per_node_count() -> None:
    """Clustera's job throughput: one-map jobs per minute one after another and several at a time, per point."""
    from benchmarks.plots import jobs_per_minute

    rows = [_row("throughput", r, nodes=n, wall_s=60.0, jobs_per_min_sequential=10.0 * n * w,
                 jobs_per_min_concurrent=14.0 * n * w) for n in (1, 2, 3) for r, w in enumerate(SPREAD, start=1)]
    fig = jobs_per_minute(summarize_rows(rows))
    ax = fig.axes[0]
    assert ax.get_ylabel() == "jobs per minute (one-map jobs)" and ax.get_xlabel() == "nodes"
    assert _legend(ax) == ["one after another", "several at a time"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 node", "2 nodes", "3 nodes"]
    g = (10.0 * 300.0) ** 0.5
    assert [p.get_height() for p in ax.patches] == pytest.approx([10 * g, 20 * g, 30 * g, 14 * g, 28 * g, 42 * g])
    assert len(_bar_bounds(ax)) == 6 and all(low > 0 for low, _ in _bar_bounds(ax))
    assert "warning: n < 3" in _note(fig)
    plt.close(fig)


def test_time_by_fs_mode_and_local_dirs(tmp_path: Path) -> None:
    """Clemson's intermediates and §3's modes: running time by `fs_mode` and by `local_dirs` (None: the
    cluster's default), a group per workload, a bar per value; points kept apart by `local_dirs`."""
    from benchmarks.plots import time_by

    rows = [_row(w, r, fs_mode=mode, local_dirs=local, files=8 if w == "dfsio" else None,
                 file_size=64 * MiB if w == "dfsio" else None, rows=3_200_000 if w == "terasort" else None,
                 wall_s=base * factor * (1 + dirs) * j)
            for w, base in (("dfsio", 20.0), ("terasort", 50.0))
            for mode, factor in (("rawfs", 1.0), ("hdfs", 3.0))
            for dirs, local in enumerate((None, "/dev/shm/$USER"))
            for r, j in enumerate((0.9, 1.0, 1.1), start=1)]
    summaries = summarize_rows(rows)
    assert len(summaries) == 8
    paths = plot_all(rows, tmp_path)
    assert sorted(p.name for p in paths) == ["time_by_fs_mode.png", "time_by_local_dirs.png"]
    fig = time_by(summaries, "local_dirs")
    ax = fig.axes[0]
    assert _legend(ax) == ["default", "/dev/shm/$USER"] and ax.get_ylabel() == "running time (s)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["dfsio\nhdfs", "dfsio\nrawfs", "terasort\nhdfs",
                                                            "terasort\nrawfs"]
    g = 0.99 ** (1 / 3)
    assert [p.get_height() for p in ax.patches] == pytest.approx(
        [60 * g, 20 * g, 150 * g, 50 * g, 120 * g, 40 * g, 300 * g, 100 * g])
    assert all(low > 0 for low, _ in _bar_bounds(ax)) and "n = 3 runs per point" in _note(fig)
    plt.close(fig)
    fig = time_by(summaries, "fs_mode")
    assert _legend(fig.axes[0]) == ["hdfs", "rawfs"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
        "dfsio\nlocal dirs default", "dfsio\nlocal dirs /dev/shm/$USER", "terasort\nlocal dirs default",
        "terasort\nlocal dirs /dev/shm/$USER"]
    plt.close(fig)


def test_time_by_shuffle_only_for_workloads_it_varies(tmp_path: Path) -> None:
    """`shuffle` varies for TeraSort only: dfsio (no shuffle) has no group; one value anywhere: no figure."""
    rows = [_row("terasort", r, rows=3_200_000, shuffle=sh, wall_s=50.0 + r) for sh in ("http", "shared-fs")
            for r in (1, 2, 3)]
    rows += [_row("dfsio", r, files=8, file_size=64 * MiB, wall_s=20.0 + r) for r in (1, 2, 3)]
    assert [p.name for p in plot_all(rows, tmp_path)] == ["time_by_shuffle.png"]
    fig = __import__("benchmarks.plots", fromlist=["time_by"]).time_by(summarize_rows(rows), "shuffle")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["terasort"]
    assert _legend(fig.axes[0]) == ["http", "shared-fs"]
    plt.close(fig)
    one = tmp_path / "one"
    one.mkdir()
    assert plot_all([r for r in rows if r.get("shuffle") != "shared-fs"], one) == []


def test_every_new_figure_has_units_a_note_and_no_bar_below_zero(tmp_path: Path) -> None:
    """Every figure `plot_all` writes from a bench that swept everything: y label with a unit, the note with n and
    the n < 3 warning, and error bars never below zero (two runs 30× apart)."""
    from benchmarks import plots

    metrics = {m: 1.0 for m in ("dd_write_mb_s", "dd_read_mb_s", "write_mb_s", "read_mb_s", "dd_write_proc_mb_s",
                                "dd_read_proc_mb_s", "write_throughput_mb_s", "read_throughput_mb_s", "dd_write_s",
                                "dd_read_s", "write_exec_s", "read_exec_s", "wall_s")}
    rows = _files_rows(metrics, jitters=SPREAD)
    rows += [{**r, "fs_mode": "hdfs"} for r in _files_rows({"wall_s": 1.0}, nodes=(3,), files=(8,), jitters=SPREAD)]
    rows += [_row("terasort", i, nodes=n, rows=3_200_000, stripe_count=s, wall_s=w, pfs_io_ratio=w / 100)
             for n in (1, 3) for s in (1, 4) for i, w in enumerate(SPREAD, start=1)]
    rows += [_row("throughput", i, wall_s=w, jobs_per_min_sequential=w, jobs_per_min_concurrent=w)
             for i, w in enumerate(SPREAD, start=1)]
    summaries = summarize_rows(rows)
    names = [name for name, _ in plots.figures_for(summaries)]
    assert names == ["throughput_vs_files.png", "per_process_vs_files.png", "time_vs_files.png", "time_vs_nodes.png",
                     "time_vs_stripes.png", "io_ratio.png", "jobs_per_minute.png", "time_by_fs_mode.png"]
    for name, make in plots.figures_for(summaries):
        fig = make()
        assert fig.axes[0].get_ylabel().endswith(("(s)", "(MiB/s)", "bytes)", "jobs)")), name
        assert "runs per point" in _note(fig) and "warning: n < 3" in _note(fig), name
        bounds = [b for ax in fig.axes for b in _bar_bounds(ax)]
        assert bounds and all(low > 0 for low, _ in bounds), name
        plt.close(fig)
