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
