"""The benchmark plots render to non-empty PNGs with the paper's axes (checked on the matplotlib objects)."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from benchmarks.plots import plot_all, throughput_vs_files, time_vs_nodes, time_vs_stripes
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
    assert ax.get_xlabel() == "number of files" and ax.get_ylabel() == "throughput (MiB/s)"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["dd write", "dd read", "TestDFSIO write", "TestDFSIO read"]
    assert list(ax.lines[0].get_xdata()) == [2.0, 4.0, 8.0]
    plt.close(fig)


def test_time_vs_nodes_and_stripes_have_error_bars() -> None:
    summaries = summarize_rows(_rows())
    for make, xlabel in ((time_vs_nodes, "number of nodes"), (time_vs_stripes, "stripe count")):
        fig = make(summaries)
        ax = fig.axes[0]
        assert ax.get_xlabel() == xlabel and ax.get_ylabel() == "running time (s)"
        assert ax.containers, "no error bars"
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["dfsio", "terasort"] or \
            [t.get_text() for t in ax.get_legend().get_texts()] == ["terasort"]
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


# -- issue 29 item 4: plots worth printing, checked from their matplotlib objects ---------------------------------

def _times(x_key: str, xs: tuple[int, ...], walls: tuple[float, ...], workload: str = "terasort") -> list[dict]:
    """Rows of ``workload`` at each ``x_key`` value, one per wall time (each a repeat)."""
    return [{"workload": workload, "profile": "tiny", "nodes": 1, "fs_mode": "rawfs", "stripe_count": None,
             "files": None, "file_size": None, x_key: x, "repeat": r, "state": "succeeded", "wall_s": w * x}
            for x in xs for r, w in enumerate(walls, start=1)]


def _bar_bounds(ax) -> list[tuple[float, float]]:  # noqa: ANN001 - a matplotlib Axes
    """(low, high) of every vertical error bar of the axes."""
    bounds = []
    for container in ax.containers:
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
