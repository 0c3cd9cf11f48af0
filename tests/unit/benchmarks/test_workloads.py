"""The dd baseline (benchmarks/workloads/base.py) reaches the nodes through the allocation's launcher
(``launcher.fanout``'s ``wrap``): the same code on the local backend, Slurm, Torque, PBS Pro and Grid Engine.

Stand-ins for ``srun`` and ``qrsh`` (written here) and the PBS ones (tests/standins/pbs) record their arguments
and run the command on this machine, so every dd really runs and reports the host it ran on.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.history import spark_events, spark_jobs_s, spark_task_totals
from benchmarks.profiles import PROFILES
from benchmarks.results import hibench_type
from benchmarks.workloads import WORKLOADS, Context
from benchmarks.workloads import base as workloads
from benchmarks.workloads.base import _on_node, dd_pair, dd_seconds, drop_page_cache, parallel_dd
from benchmarks.workloads.terasort import SortWorkload, SparkTeraSort, TeraSort
from launcher.util.errors import ClusterError
from tests.conftest import REPO

PBS_STANDINS = REPO / "tests" / "standins" / "pbs"
DD = ["sh", "-c", 'uname -n && exec "$@"', "sh", "dd", "if=/dev/zero", "of=/pfs/dd-0001", "bs=1M", "count=4"]

#: ``srun [--option=value...] ARGV...``: records ``srun ARGS...``, runs ARGV here.
SRUN = """#!/bin/bash
echo "srun $*" >> "$STANDIN_CALLS"
while [[ $1 == --* ]]; do shift; done
exec "$@"
"""
#: ``qrsh -inherit -nostdin -V HOST WORDS...``: records them, joins the words and runs them with ``sh -c``.
QRSH = """#!/bin/bash
echo "qrsh $*" >> "$STANDIN_CALLS"
shift 4  # -inherit -nostdin -V HOST
exec sh -c "$*"
"""


def test_dd_command_for_each_launcher() -> None:
    quoted = [shlex.quote(w) for w in DD]
    assert _on_node("n2", "local", DD) == DD
    assert _on_node("n2", "srun", DD) == ["srun", "--overlap", "--export=ALL", "--nodes=1", "--ntasks=1",
                                          "--ntasks-per-node=1", "--nodelist=n2", *DD]
    assert _on_node("n2", "pbsdsh", DD) == ["pbsdsh", "-h", "n2", *DD]
    assert _on_node("n2", "pbs_tmrsh", DD) == ["pbs_tmrsh", "n2", *quoted]
    assert _on_node("n2", "qrsh", DD) == ["qrsh", "-inherit", "-nostdin", "-V", "n2", *quoted]
    assert _on_node("n2", "srun", workloads.DROP_CACHES)[-3:] == ["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"]


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-in ``srun``, ``qrsh``, ``pbsdsh`` and ``pbs_tmrsh`` first on PATH, inside a (stand-in) PBS job;
    returns the directory where they record their calls (``calls`` for srun/qrsh, ``<cmd>.args`` for PBS)."""
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name, script in (("srun", SRUN), ("qrsh", QRSH)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(PBS_STANDINS), os.environ["PATH"]]))
    monkeypatch.setenv("STANDIN_CALLS", str(state / "calls"))
    monkeypatch.setenv("PBS_STANDIN_DIR", str(state))
    monkeypatch.setenv("PBS_JOBID", "1.standin")
    return state


def calls(state: Path, fanout: str) -> list[str]:
    """The recorded calls of ``fanout``'s command, each as its arguments (the PBS stand-ins omit the name)."""
    path = state / (f"{fanout}.args" if fanout.startswith("pbs") else "calls")
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.removeprefix(f"{fanout} ") for line in lines]


def node_of(fanout: str, call: str) -> str:
    """The node a recorded call was for."""
    words = call.split()
    if fanout == "srun":
        return next(w for w in words if w.startswith("--nodelist=")).split("=", 1)[1]
    return {"pbsdsh": words[1], "pbs_tmrsh": words[0], "qrsh": words[3]}[fanout]


@pytest.mark.parametrize("fanout", ["local", "srun", "pbsdsh", "pbs_tmrsh", "qrsh"])
def test_parallel_dd_runs_through_each_launcher(fanout: str, standins: Path, tmp_path: Path) -> None:
    files = [tmp_path / "pfs dir" / f"dd-{i}" for i in range(3)]  # a space in the path: quoting is exercised
    files[0].parent.mkdir()
    write = parallel_dd(files, 1 << 20, ["n1", "n2"], fanout, "write")
    assert [f.stat().st_size for f in files] == [1 << 20] * 3
    read = parallel_dd(files, 1 << 20, ["n1", "n2"], fanout, "read")
    assert write["total_mb"] == read["total_mb"] == 3 and write["hosts"] == read["hosts"] == [socket.gethostname()] * 3
    for done in (write, read):  # each dd's own seconds; the per-process figure is TestDFSIO's: MiB ÷ their sum
        assert len(done["proc_s"]) == 3 and all(s is not None and s >= 0 for s in done["proc_s"])
        assert done["proc_mb_s"] == pytest.approx(3 / sum(done["proc_s"]))
    made = calls(standins, fanout)
    if fanout == "local":
        assert made == []
    else:
        assert sorted(node_of(fanout, c) for c in made) == ["n1"] * 4 + ["n2"] * 2 and all(" dd " in c for c in made)


@pytest.mark.parametrize("fanout", ["srun", "pbsdsh", "pbs_tmrsh", "qrsh"])
def test_page_cache_dropped_on_each_node_through_the_launcher(fanout: str, standins: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workloads, "DROP_CACHES", ["sh", "-c", "echo refused by $0 >&2; exit 1", "stand-in"])
    note = drop_page_cache(["n1", "n2"], fanout, tmp_path)
    assert note == "page cache not dropped: n1: refused by stand-in; n2: refused by stand-in"
    assert [node_of(fanout, c) for c in calls(standins, fanout)] == ["n1", "n2"]  # one after the other
    monkeypatch.setattr(workloads, "DROP_CACHES", ["true"])
    assert drop_page_cache(["n1", "n2"], fanout, tmp_path) is None


def test_dd_pair_uses_the_context_launcher(standins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workloads, "DROP_CACHES", ["sh", "-c", "echo no >&2; exit 1"])
    ctx = Context(work_dir=tmp_path, params={"files": 2, "file_size": 1 << 20}, nodes=["n1", "n2"],
                  scheduler="sge", fanout="qrsh")
    figures = dd_pair(ctx, tmp_path / "dd")
    assert figures["dd_hosts"] == [socket.gethostname()] and figures["cache_dropped"] is False
    assert ctx.notes == ["page cache not dropped: n1: no; n2: no"]
    assert sorted(node_of("qrsh", c) for c in calls(standins, "qrsh")) == ["n1", "n1", "n1", "n2", "n2", "n2"]


# -- from tests/unit/test_bench_sort.py: The sort workloads (``terasort``, ``spark-terasort``) without a
# cluster: TeraGen's checksum kept by ``prepare``, TeraValidate's report judged by ``validate``, and the Spark
# event log's figures (benchmarks/history.py). The real jobs run in tests/integration/test_spark.py and
# test_bench.py.


TERAGEN_LOG = """\t\tMap output records=1000
\torg.apache.hadoop.examples.terasort.TeraGen$Counters
\t\tCHECKSUM=2147630218301
"""


def _context(tmp_path: Path, mode: str = "rawfs") -> Context:
    plan = SimpleNamespace(runtime=SimpleNamespace(examples_jar=tmp_path / "ex.jar"),
                           spec=SimpleNamespace(filesystem=SimpleNamespace(mode=mode)))
    session: Any = SimpleNamespace(plan=plan)
    return Context(work_dir=tmp_path, params={"rows": 1000, "maps": 2, "reduces": 2}, nodes=["n1"], session=session)


def _fake_hadoop(monkeypatch: pytest.MonkeyPatch, report_text: str) -> list[list[str]]:
    """``Workload.hadoop`` replaced: TeraGen prints :data:`TERAGEN_LOG`; TeraValidate writes ``report_text``."""
    calls: list[list[str]] = []

    def hadoop(ctx: Context, name: str, args: list[str], **_: Any) -> dict[str, Any]:
        calls.append(args)
        if name == "teravalidate":
            Path(args[-1]).mkdir(parents=True, exist_ok=True)
            (Path(args[-1]) / "part-r-00000").write_text(report_text)
        return {"wall_s": 1.5, "log": TERAGEN_LOG if name == "teragen" else ""}

    monkeypatch.setattr(SortWorkload, "hadoop", staticmethod(hadoop))
    return calls


def _task_end(stage: int, **metrics: Any) -> dict[str, Any]:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Task Metrics": metrics}


@pytest.mark.parametrize("workload", [TeraSort, SparkTeraSort])
def test_validate_passes_a_sorted_output_with_the_inputs_checksum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  workload: type[SortWorkload]) -> None:
    calls = _fake_hadoop(monkeypatch, f"checksum\t{2147630218301:x}\n")
    sort = workload()
    ctx = _context(tmp_path)
    figures = sort.prepare(ctx)
    assert figures == {"teragen_s": 1.5, "input_bytes": 100_000, "input_checksum": 2147630218301}
    assert calls[0][1:] == ["teragen", "-Dmapreduce.job.maps=2", "1000", str(tmp_path / "gen")]
    checked = sort.validate(ctx, tmp_path / "sorted", tmp_path / "validate")
    assert checked == {"validate_s": 1.5, "valid": True, "checksum": f"{2147630218301:x}"}
    assert calls[1][1:] == ["teravalidate", str(tmp_path / "sorted"), str(tmp_path / "validate")]


@pytest.mark.parametrize(("report", "message"), [
    ("error\tmisorder in part-r-00000 between 61 62 and 61 61\nchecksum\t1f3f\n", "out of order: misorder in part"),
    ("error\tbad key partitioning:\n  file part-r-00000:end key 7a\n  file part-r-00001:begin key 61\n"
     f"checksum\t{2147630218301:x}\n", "out of order: bad key partitioning"),
    (f"checksum\t{2147630218301 + 1:x}\n", "records lost, duplicated or changed"),
    ("", "wrote no checksum"),
])
def test_validate_fails_loudly_on_a_wrong_sort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: str,
                                               message: str) -> None:
    _fake_hadoop(monkeypatch, report)
    sort = SparkTeraSort()
    ctx = _context(tmp_path)
    sort.prepare(ctx)
    with pytest.raises(ClusterError, match=message):
        sort.validate(ctx, tmp_path / "sorted", tmp_path / "validate")


def test_the_checksum_is_the_sum_of_the_records_crc32s_modulo_a_java_long(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """TeraGen's counter is a Java long and TeraValidate's checksum a 128-bit hexadecimal sum: equal modulo 2^64."""
    records = [bytes([i]) * 100 for i in range(5)]
    total = sum(zlib.crc32(r) for r in records)
    wrapped = total - (1 << 64)  # the same sum as a Java long that wrapped (negative)
    _fake_hadoop(monkeypatch, f"checksum\t{total + (1 << 64):x}\n")
    sort = TeraSort()
    sort.input_checksum = wrapped
    assert sort.validate(_context(tmp_path), tmp_path / "s", tmp_path / "v")["valid"] is True


def test_spark_terasort_is_registered_with_terasorts_sizes() -> None:
    assert WORKLOADS["spark-terasort"] is SparkTeraSort and SparkTeraSort.name == "spark-terasort"
    for scale in PROFILES.values():
        assert scale["spark-terasort"] == scale["terasort"] and scale["spark-terasort"] is not scale["terasort"]
    assert hibench_type("spark-terasort") == "JavaSparkTerasort" and hibench_type("terasort") == "HadoopTerasort"


def test_spark_event_log_figures(tmp_path: Path) -> None:
    """A rolling event log read in its parts' order (``events_10`` after ``events_2``); task metrics summed over
    every task; the jobs' durations summed; a line cut short skipped."""
    app = "application_1_0001"
    rolled = tmp_path / f"eventlog_v2_{app}"
    rolled.mkdir()
    events = [
        {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1_000},
        _task_end(0, **{"Input Metrics": {"Bytes Read": 300, "Records Read": 3}}),
        {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 1_500},
        {"Event": "SparkListenerJobStart", "Job ID": 1, "Submission Time": 2_000},
        _task_end(1, **{"Input Metrics": {"Bytes Read": 300, "Records Read": 3},
                        "Shuffle Write Metrics": {"Shuffle Bytes Written": 120}, "Disk Bytes Spilled": 0}),
        _task_end(2, **{"Shuffle Read Metrics": {"Remote Bytes Read": 20, "Local Bytes Read": 100},
                        "Output Metrics": {"Bytes Written": 300, "Records Written": 3}, "Disk Bytes Spilled": 40}),
        {"Event": "SparkListenerJobEnd", "Job ID": 1, "Completion Time": 4_250},
    ]
    parts = {2: events[:4], 10: events[4:]}
    for index, part in parts.items():
        lines = [json.dumps(e) for e in part]
        if index == 10:
            lines.append('{"Event": "SparkListenerApplicationEnd", "Timest')  # cut short
        (rolled / f"events_{index}_{app}").write_text("\n".join(lines) + "\n")
    read = spark_events(tmp_path, app)
    assert read == events
    assert spark_task_totals(read) == {
        "input_read_bytes": 600, "input_records": 6, "output_bytes": 300, "output_records": 3,
        "shuffle_write_bytes": 120, "shuffle_remote_bytes": 20, "shuffle_local_bytes": 100,
        "disk_spilled_bytes": 40, "memory_spilled_bytes": None}
    assert spark_jobs_s(read) == (2, 2.75)
    (tmp_path / "application_1_0002.inprogress").write_text(json.dumps(events[0]) + "\n")
    assert spark_events(tmp_path, "application_1_0002") == events[:1]
    assert spark_events(tmp_path, "application_1_0003") == [] and spark_jobs_s([]) == (0, None)


def test_keep_data_keeps_a_runs_data(tmp_path: Path) -> None:
    """The bench file's ``keep_data`` (default off) reaches the workloads' clean-up through the context."""
    from benchmarks.harness import BenchSpec

    assert BenchSpec(workloads=["spark-terasort"]).keep_data is False
    assert BenchSpec(workloads=["spark-terasort"], keep_data=True).keep_data is True
    for keep in (True, False):
        data = tmp_path / f"keep-{keep}" / "sorted"
        data.mkdir(parents=True)
        Context(work_dir=tmp_path, params={}, nodes=["n1"], keep_data=keep).discard(data, tmp_path / "missing")
        assert data.is_dir() is keep


def test_in_hdfs_mode_the_report_is_not_read_and_a_note_says_so(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_hadoop(monkeypatch, "")
    ctx = _context(tmp_path, mode="hdfs")
    assert TeraSort().validate(ctx, tmp_path / "s", tmp_path / "v") == {"validate_s": 1.5, "valid": None,
                                                                         "checksum": None}
    assert ctx.notes == ["terasort: TeraValidate's report is on HDFS (" + str(tmp_path / "v")
                         + "): not read, the output not checked"]


@pytest.mark.parametrize(("stderr", "seconds"), [
    ("1+0 records in\n1+0 records out\n1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00201 s, 522 MB/s\n", 0.00201),
    ("64+0 records in\n64+0 records out\n67108864 bytes (67 MB, 64 MiB) copied, 1.5 s, 44.7 MB/s\n", 1.5),
    ("0+0 records in\n0+0 records out\n0 bytes copied, 4.1e-05 s, 0.0 kB/s\n", 4.1e-05),
    ("dd: failed to open 'x': No such file or directory\n", None),
])
def test_dd_seconds_is_dds_own_copied_line(stderr: str, seconds: float | None) -> None:
    """The lines GNU coreutils 9.1's dd prints (Debian 12) in the C locale; no line: unknown, never 0."""
    assert dd_seconds(stderr) == seconds


def test_dd_pair_reports_per_process_throughput(tmp_path: Path) -> None:
    """Real dd processes on this machine: the per-process figure counts each process's own time (so it is at
    least the aggregate ÷ processes, each process within the wall time), and the row keys are those the plots read."""
    ctx = Context(work_dir=tmp_path, params={"files": 2, "file_size": 1 << 20}, nodes=["n1"], scheduler="local",
                  fanout="local", session=None)
    figures = dd_pair(ctx, tmp_path / "dd")
    for mode in ("write", "read"):
        per_process, aggregate = figures[f"dd_{mode}_proc_mb_s"], figures[f"dd_{mode}_mb_s"]
        assert per_process is not None and per_process > 0
        assert per_process >= aggregate / 2 * 0.999
