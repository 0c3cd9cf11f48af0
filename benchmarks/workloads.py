"""The workloads: one class each, with HiBench's two phases (``prepare`` makes the input, ``run`` measures).

A workload returns plain dicts of figures; the harness adds the parameters and writes ``results.jsonl``.
Units are in the key names: ``_s`` seconds, ``_mb_s`` MiB/s, ``_bytes`` bytes.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import time
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import psutil

from benchmarks.history import (
    LATENCY_PHASES,
    am_launched_ms,
    client_counters,
    dfsio_results,
    file_bytes,
    find_jhist,
    job_latency_s,
    latency_breakdown,
    rest_latency_s,
    spark_events,
    spark_jobs_s,
    spark_task_totals,
    start_events,
)
from benchmarks.seqfile import write_vectors
from launcher.fanout import get_launcher
from launcher.lifecycle.runner import ClusterRun, step_error
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.hdfs import hdfs_mode
from launcher.steps.shuffle import HADOOP_SHUFFLE, LOCAL_DIRS_PROPERTY, PLUGIN_CLASS
from launcher.util.errors import ClusterError, UserError
from launcher.util.registry import Registry
from launcher.util.userdirs import cache_dir

MiB = 1 << 20
REPO = Path(__file__).resolve().parent.parent
MAHOUT_POM = Path(__file__).resolve().parent / "mahout" / "pom.xml"
KMEANS_DRIVER = "org.apache.mahout.clustering.kmeans.KMeansDriver"
TESTDFSIO = "org.apache.hadoop.fs.TestDFSIO"


@dataclass
class Context:
    """Everything a workload needs for one run.

    Attributes:
        work_dir: a fresh directory on the filesystem root for this run's data (absolute path).
        params: the point's parameters (profile sizes merged with the sweep's values).
        nodes: node names the run spreads over (the cluster's nodes).
        scheduler: ``local`` or a batch system (``slurm``, ``pbs``, ``sge``).
        fanout: the allocation's fan-out launcher (``local``, ``srun``, ``pbsdsh``, ``pbs_tmrsh``, ``qrsh``):
            what runs the ``dd`` processes on the nodes (:func:`launcher.fanout.get_launcher`).
        session: the running cluster (``None`` for workloads that need none).
        notes: remarks for the report (e.g. page cache not dropped).
        keep_data: keep the run's input and output in ``work_dir`` (the bench file's ``keep_data``); else
            :meth:`discard` removes them once the run has its figures.
    """

    work_dir: Path
    params: dict[str, Any]
    nodes: list[str]
    scheduler: str = "local"
    fanout: str = "local"
    session: ClusterRun | None = None
    notes: list[str] = field(default_factory=list)
    keep_data: bool = False

    def discard(self, *paths: Path) -> None:
        """Remove the directories ``paths`` (a run's data), unless :attr:`keep_data`; missing ones are fine."""
        if not self.keep_data:
            for path in paths:
                shutil.rmtree(path, ignore_errors=True)


class Workload(ABC):
    """A benchmark: ``prepare`` (input data, not timed as the result) then ``run`` (the measured part)."""

    name: ClassVar[str]
    #: Whether it needs the Hadoop cluster.
    needs_cluster: ClassVar[bool] = True

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """Make the input of :meth:`run` under ``ctx.work_dir``; returns figures of the preparation."""
        return {}

    @abstractmethod
    def run(self, ctx: Context) -> dict[str, Any]:
        """Run the measured part; returns its figures (``wall_s`` at least)."""

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def hadoop(ctx: Context, name: str, args: list[str], *, main_class: str = "org.apache.hadoop.util.RunJar",
               extra_classpath: tuple[str | Path, ...] = (), outputs: tuple[str | Path, ...] = ()) -> dict[str, Any]:
        """Run one job client on the session; returns ``wall_s``, ids, latency and the client log's text.

        Raises:
            ClusterError: the job failed (names its log).
        """
        assert ctx.session is not None
        step = ctx.session.java_step(name, args, main_class=main_class, extra_classpath=extra_classpath,
                                     outputs=outputs)
        result = ctx.session.run_step(step)
        if result.returncode != 0:
            raise ClusterError(step_error(step, result))
        plan = ctx.session.plan
        if not hdfs_mode(plan.spec.filesystem).history_in_cluster_dir:  # on HDFS: ask the JobHistoryServer
            latency = rest_latency_s(plan.jhs_web, result.job_id)
        else:
            latency = job_latency_s(Path(plan.run_dir, "history"), result.job_id)
        return {"wall_s": result.wall_s, "application_id": result.application_id, "job_id": result.job_id,
                "latency_s": latency, "log": step.log.read_text(errors="replace"),
                "shuffle": result.shuffle.dump() if result.shuffle else None}

    @staticmethod
    def spark(ctx: Context, name: str, main_class: str, args: list[str], *,
              outputs: tuple[str | Path, ...] = ()) -> dict[str, Any]:
        """Run ``main_class`` of our Spark examples jar (``spark-examples/``, built by ``install.sh``) with
        ``spark-submit`` on the session's YARN (:meth:`launcher.lifecycle.runner.ClusterRun.spark_step`), ``outputs``
        removed first; returns ``wall_s`` (``spark-submit`` start to end, s), ``application_id`` and the log's text.

        Raises:
            UserError: no Spark examples jar (run ``./install.sh``).
            ClusterError: the application failed (names its log).
        """
        from launcher.render.spark import discover_spark

        assert ctx.session is not None
        jar = discover_spark(ctx.session.plan.spec).examples_jar
        if jar is None:
            raise UserError(f"no Spark examples jar for the {name} workload", field="workload",
                            fix="run ./install.sh (it builds spark-runtime/hpc-hadoop-spark-examples.jar)")
        step = ctx.session.spark_step(name, ["--class", main_class, str(jar), *args], outputs=outputs)
        result = ctx.session.run_step(step)
        if result.returncode != 0:
            raise ClusterError(step_error(step, result))
        return {"wall_s": result.wall_s, "application_id": result.application_id,
                "log": step.log.read_text(errors="replace")}


# -- dd ----------------------------------------------------------------------------------------
#: The page-cache drop run on each node (Linux ``drop_caches``: 3 = page cache, dentries and inodes).
DROP_CACHES = ["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"]


def drop_page_cache(nodes: list[str], fanout: str) -> str | None:
    """Drop the page cache on ``nodes`` (``sync; echo 3 > /proc/sys/vm/drop_caches``), each through the
    launcher ``fanout`` (:func:`_on_node`); in this process when that launcher runs here (``local``).

    Returns:
        ``None`` when it was dropped, else why not (for the report).

    Raises:
        UserError: unknown launcher name.
    """
    if get_launcher(fanout).runs_here:
        try:
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
            return None
        except OSError as exc:
            return f"page cache not dropped: /proc/sys/vm/drop_caches: {exc.strerror}"
    failures = []
    for node in nodes:
        proc = subprocess.run(_on_node(node, fanout, DROP_CACHES), capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            failures.append(f"{node}: {proc.stderr.strip()[-120:]}")
    return f"page cache not dropped: {'; '.join(failures)}" if failures else None


def _on_node(node: str, fanout: str, argv: list[str]) -> list[str]:
    """``argv`` run on ``node`` as a task of the job, through the launcher ``fanout`` (the allocation's:
    ``srun`` one-node step, ``pbsdsh -h``, ``pbs_tmrsh``, ``qrsh -inherit``; as is with ``local``).

    Raises:
        UserError: unknown launcher name.
    """
    return get_launcher(fanout).wrap(argv, [node])


def parallel_dd(files: list[Path], size: int, nodes: list[str], fanout: str, mode: str) -> dict[str, Any]:
    """``len(files)`` parallel ``dd`` processes, file ``i`` on node ``i mod len(nodes)``, each started through
    the launcher ``fanout`` (:func:`_on_node`).

    ``write``: ``dd if=/dev/zero of=F bs=1M count=size/1MiB conv=fdatasync``; ``read``: ``dd if=F of=/dev/null
    bs=1M``. Each runs as ``sh -c 'uname -n && exec dd ...'`` so that the node it really ran on is known.
    Returns ``wall_s`` (first start → last end), ``throughput_mb_s`` (total MiB ÷ wall_s) and ``hosts`` (the
    ``uname -n`` of each process, in file order).

    Raises:
        ClusterError: a dd failed (its stderr).
        UserError: unknown launcher name.
    """
    count = max(1, size // MiB)
    procs = []
    began = time.monotonic()
    for i, path in enumerate(files):
        if mode == "write":
            argv = ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}", "conv=fdatasync"]
        else:
            argv = ["dd", f"if={path}", "of=/dev/null", "bs=1M"]
        # ``uname -n`` first (dd writes nothing on stdout): the host the scheduler really ran it on.
        argv = ["sh", "-c", 'uname -n && exec "$@"', "sh", *argv]
        procs.append(subprocess.Popen(_on_node(nodes[i % len(nodes)], fanout, argv), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, stdin=subprocess.DEVNULL))
    errors, hosts = [], []
    for proc in procs:
        out, err = proc.communicate()
        hosts.append(out.decode(errors="replace").strip())
        if proc.returncode != 0:
            errors.append(err.decode(errors="replace").strip()[-200:])
    wall = time.monotonic() - began
    if errors:
        raise ClusterError(f"dd {mode} failed: {errors[0]}")
    total_mb = count * len(files)
    return {"wall_s": wall, "throughput_mb_s": total_mb / wall if wall > 0 else None, "total_mb": total_mb,
            "hosts": hosts}


def dd_pair(ctx: Context, directory: Path) -> dict[str, Any]:
    """dd write then (page cache dropped where permitted) dd read of ``files`` × ``file_size`` in ``directory``;
    ``dd_hosts`` lists the hosts the dd processes ran on."""
    files, size = int(ctx.params["files"]), int(ctx.params["file_size"])
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"dd-{i:04d}" for i in range(files)]
    write = parallel_dd(paths, size, ctx.nodes, ctx.fanout, "write")
    note = drop_page_cache(ctx.nodes, ctx.fanout)
    if note:
        ctx.notes.append(note)
    read = parallel_dd(paths, size, ctx.nodes, ctx.fanout, "read")
    for path in paths:
        path.unlink(missing_ok=True)
    return {"dd_write_s": write["wall_s"], "dd_write_mb_s": write["throughput_mb_s"],
            "dd_read_s": read["wall_s"], "dd_read_mb_s": read["throughput_mb_s"], "cache_dropped": note is None,
            "dd_hosts": sorted(set(write["hosts"]) | set(read["hosts"]))}


class Dd(Workload):
    """The raw baseline: N parallel ``dd`` writers then readers on the filesystem root (no Hadoop)."""

    name = "dd"
    needs_cluster = False

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``dd_write_mb_s``, ``dd_read_mb_s`` (aggregate MiB/s), their times, ``wall_s`` (both)."""
        figures = dd_pair(ctx, ctx.work_dir / "dd")
        figures["wall_s"] = figures["dd_write_s"] + figures["dd_read_s"]
        figures["write_mb_s"], figures["read_mb_s"] = figures["dd_write_mb_s"], figures["dd_read_mb_s"]
        return figures


# -- TestDFSIO ---------------------------------------------------------------------------------
class DfsIO(Workload):
    """TestDFSIO ``-write`` / ``-read`` (1 MiB buffer) and the dd baseline on the same files count and size."""

    name = "dfsio"

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: Hadoop's per-map ``*_throughput_mb_s``, the aggregate ``write_mb_s`` / ``read_mb_s``
        (total MiB ÷ the job's exec time), dd's, ``*_ratio`` = aggregate ÷ dd, ``write_time_ratio`` /
        ``read_time_ratio`` = the TestDFSIO job's time (its ``Test exec time``: submission to the end of the job) ÷
        the parallel ``dd`` time on the same number and size of files, and ``time_ratio`` = both jobs' time ÷ both
        ``dd`` times (the Spider paper saw more than 10; issue 12's goal is 2 at 4 × 1 GiB)."""
        assert ctx.session is not None
        runtime = ctx.session.plan.runtime
        assert runtime is not None
        files, size = int(ctx.params["files"]), int(ctx.params["file_size"])
        data = ctx.work_dir / "dfsio"
        figures: dict[str, Any] = dd_pair(ctx, ctx.work_dir / "dd")
        wall = 0.0
        for mode in ("write", "read"):
            if mode == "read":
                note = drop_page_cache(ctx.nodes, ctx.fanout)
                if note and note not in ctx.notes:
                    ctx.notes.append(note)
            res_file = ctx.work_dir / f"TestDFSIO-{mode}.log"
            job = self.hadoop(ctx, f"dfsio-{mode}", [
                f"-Dtest.build.data={data}", f"-{mode}", "-nrFiles", str(files),
                "-fileSize", f"{max(1, size // MiB)}MB", "-bufferSize", str(MiB), "-resFile", str(res_file)],
                main_class=TESTDFSIO, extra_classpath=(runtime.tests_jar,))
            blocks = [b for b in dfsio_results(res_file.read_text()) if b.get("mode") == mode]
            if not blocks:
                raise ClusterError(f"TestDFSIO -{mode} wrote no result to {res_file}")
            block = blocks[-1]
            exec_s = float(block.get("exec_time_s") or job["wall_s"])
            total_mb = float(block.get("total_mb") or files * size / MiB)
            figures.update({
                f"{mode}_throughput_mb_s": block.get("throughput_mb_s"),
                f"{mode}_avg_io_rate_mb_s": block.get("avg_io_rate_mb_s"),
                f"{mode}_exec_s": exec_s, f"{mode}_client_s": job["wall_s"],
                f"{mode}_mb_s": total_mb / exec_s if exec_s > 0 else None,
                f"{mode}_latency_s": job["latency_s"], f"{mode}_job_id": job["job_id"],
            })
            dd = figures.get(f"dd_{mode}_mb_s")
            figures[f"{mode}_ratio"] = figures[f"{mode}_mb_s"] / dd if dd and figures[f"{mode}_mb_s"] else None
            dd_s = figures.get(f"dd_{mode}_s")
            figures[f"{mode}_time_ratio"] = exec_s / dd_s if dd_s else None
            wall += job["wall_s"]
        figures["wall_s"] = wall
        dd_total = (figures.get("dd_write_s") or 0.0) + (figures.get("dd_read_s") or 0.0)
        figures["time_ratio"] = (figures["write_exec_s"] + figures["read_exec_s"]) / dd_total if dd_total else None
        figures["latency_s"] = figures["write_latency_s"]
        ctx.discard(data)
        return figures


# -- TeraSort ----------------------------------------------------------------------------------
def shuffle_options(plan: ClusterPlan, choice: str | None) -> list[str]:
    """``-D`` options that give one job the shuffle ``choice`` whatever the cluster's ``hadoop.shuffle``:
    ``http`` Hadoop's own shuffle, ``shared-fs`` the plugin with every NodeManager's local dir from the plan
    (:meth:`launcher.plan.cluster_plan.ClusterPlan.shuffle_dirs`); ``None``: none, the cluster's."""
    if choice == "http":
        return [f"-Dmapreduce.job.reduce.shuffle.consumer.plugin.class={HADOOP_SHUFFLE}"]
    if choice == "shared-fs":
        dirs = ",".join(f"{host}={where}" for host, where in plan.shuffle_dirs().items())
        return [f"-Dmapreduce.job.reduce.shuffle.consumer.plugin.class={PLUGIN_CLASS}",
                f"-D{LOCAL_DIRS_PROPERTY}={dirs}"]
    return []


class SortWorkload(Workload):
    """A sort of TeraGen's records: TeraGen makes the input (prepare), a subclass sorts it (run), TeraValidate checks
    the output (not timed).

    The input's checksum is TeraGen's ``CHECKSUM`` counter (the sum of every record's CRC-32, from its job client's
    output), kept by :meth:`prepare` on this instance for :meth:`validate`: the harness makes one instance per run.
    """

    #: TeraGen's ``CHECKSUM`` counter of the last :meth:`prepare` (``None`` before, or when its client printed none).
    input_checksum: int | None = None

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """TeraGen ``rows`` 100-byte rows with ``maps`` maps into ``work_dir/gen``.

        Returns:
            ``teragen_s`` (its client's wall time, s), ``input_bytes`` (rows × 100) and ``input_checksum``.

        Raises:
            ClusterError: TeraGen failed (names its log).
        """
        assert ctx.session is not None
        examples = ctx.session.plan.runtime.examples_jar
        gen = ctx.work_dir / "gen"
        job = self.hadoop(ctx, "teragen", [str(examples), "teragen", f"-Dmapreduce.job.maps={ctx.params['maps']}",
                                           str(ctx.params["rows"]), str(gen)], outputs=(gen,))
        self.input_checksum = client_counters(job["log"]).get("CHECKSUM")
        return {"teragen_s": job["wall_s"], "input_bytes": int(ctx.params["rows"]) * 100,
                "input_checksum": self.input_checksum}

    def validate(self, ctx: Context, out: Path, report: Path) -> dict[str, Any]:
        """TeraValidate over the sorted ``out`` (its report in ``report``): every file in order, each file's first key
        not below the previous file's last, and the records' checksum (sum of CRC-32s) equal to the input's
        (:attr:`input_checksum`: no record lost, duplicated or changed).

        Returns:
            ``validate_s`` (TeraValidate's client wall time, s), ``valid`` (``True``) and ``checksum`` (TeraValidate's,
            hexadecimal as it prints it); in ``hdfs`` mode, whose report is on HDFS, ``valid`` and ``checksum`` are
            ``None`` and a note says the output was not checked.

        Raises:
            ClusterError: TeraValidate failed, or found the output out of order (its ``error`` lines), or its checksum
                is not the input's: the sort is wrong and the run must not count.
        """
        assert ctx.session is not None
        examples = ctx.session.plan.runtime.examples_jar
        check = self.hadoop(ctx, "teravalidate", [str(examples), "teravalidate", str(out), str(report)],
                            outputs=(report,))
        if hdfs_mode(ctx.session.plan.spec.filesystem).default_fs:  # the report is on HDFS, not a file we read
            note = f"{self.name}: TeraValidate's report is on HDFS ({report}): not read, the output not checked"
            if note not in ctx.notes:
                ctx.notes.append(note)
            return {"validate_s": check["wall_s"], "valid": None, "checksum": None}
        lines = [line.partition("\t") for p in sorted(report.glob("part-*"))
                 for line in p.read_text(errors="replace").splitlines()]
        errors = [value for key, _, value in lines if key == "error"]
        checksums = [value.strip() for key, _, value in lines if key == "checksum"]
        if errors:
            raise ClusterError(f"{self.name}: TeraValidate found the output of {out} out of order: "
                               + "; ".join(errors[:3])[:500])
        if not checksums:
            raise ClusterError(f"{self.name}: TeraValidate wrote no checksum to {report}")
        # the counter is a Java long (a sum of per-map sums): compare modulo 2^64, where it wraps
        if self.input_checksum is not None and int(checksums[0], 16) % (1 << 64) != self.input_checksum % (1 << 64):
            raise ClusterError(f"{self.name}: the output's checksum {checksums[0]} is not the input's "
                               f"{self.input_checksum:x} (TeraGen's CHECKSUM): records lost, duplicated or changed")
        return {"validate_s": check["wall_s"], "valid": True, "checksum": checksums[0]}


class TeraSort(SortWorkload):
    """TeraGen (prepare) → Hadoop's TeraSort (measured) → TeraValidate (checked)."""

    name = "terasort"

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``wall_s`` of TeraSort (its job client, s), ``sort_mb_s`` (input MiB ÷ ``wall_s``), ``latency_s``,
        FILE bytes read/written, ``shuffle_bytes``, ``pfs_bytes`` and the two ratios to Themis's 2-IO bound (each
        record read twice and written twice: 4 × input bytes = 1.0); ``validate_s``, ``valid`` and ``checksum``
        (:meth:`SortWorkload.validate`, not in ``wall_s``).

        * ``io_ratio`` = (FILE read + FILE written) ÷ (4 × input): every byte the tasks read and wrote through
          ``file://``, wherever it lies (input, spills, merges, output).
        * ``shuffle_bytes`` is the job's ``Reduce shuffle bytes``: the map outputs the NodeManagers' ShuffleHandler
          reads from their local dirs and serves to the reducers, outside every task's FILE counters.
        * ``pfs_bytes`` is what went through the shared filesystem. With the NodeManager local dirs on it
          (``filesystem.local_dirs: shared``, or a node's fallback) that is FILE read + FILE written + shuffle;
          with node-local dirs (the default) it is the input read and the output written (the ``Bytes Read`` and
          ``Bytes Written`` counters of the input and output formats), spills and map outputs staying on the
          nodes. ``pfs_io_ratio`` = ``pfs_bytes`` ÷ (4 × input); ``local_dirs_shared`` says which applied.

        ``ctx.params["shuffle"]`` (the ``shuffle`` sweep: ``http`` or ``shared-fs``) sets the job's shuffle
        (:func:`shuffle_options`); ``shuffle`` says which one its reducers used, ``shuffle_s`` the longest
        reducer's shuffle phase in seconds, ``direct_bytes``/``http_bytes`` the map-output bytes read each way,
        ``reducers`` the same per reduce task (:func:`launcher.steps.shuffle.step_shuffle`). Map outputs cross the
        shared filesystem once either way, outside every task's FILE counters (read by the ShuffleHandlers, or by the
        reducers straight from the files), so ``pfs_bytes`` counts them as ``shuffle_bytes`` for both.

        Raises:
            ClusterError: TeraSort failed, or TeraValidate found its output wrong (:meth:`SortWorkload.validate`).
        """
        assert ctx.session is not None
        plan = ctx.session.plan
        examples = plan.runtime.examples_jar
        gen, out, report = ctx.work_dir / "gen", ctx.work_dir / "sorted", ctx.work_dir / "validate"
        job = self.hadoop(ctx, "terasort", [str(examples), "terasort",
                                            f"-Dmapreduce.job.reduces={ctx.params['reduces']}",
                                            *shuffle_options(plan, ctx.params.get("shuffle")), str(gen), str(out)],
                          outputs=(out,))
        counters = client_counters(job["log"])
        read, written = file_bytes(job["log"])
        shuffle = counters.get("Reduce shuffle bytes")
        input_bytes = int(ctx.params["rows"]) * 100
        shared_local = any(Path(directory).is_relative_to(plan.run_dir) for directory in nm_local_dirs(ctx.session))
        if shared_local:
            pfs = None if read is None or written is None or shuffle is None else read + written + shuffle
        else:
            format_read, format_written = counters.get("Bytes Read"), counters.get("Bytes Written")
            pfs = None if format_read is None or format_written is None else format_read + format_written
        moved = job["shuffle"] or {}
        bound = 4 * input_bytes
        figures = {"wall_s": job["wall_s"], "latency_s": job["latency_s"], "job_id": job["job_id"],
                   "sort_mb_s": input_bytes / MiB / job["wall_s"] if job["wall_s"] else None,
                   "file_bytes_read": read, "file_bytes_written": written, "input_bytes": input_bytes,
                   "io_ratio": (read + written) / bound if read is not None and written is not None else None,
                   "shuffle_bytes": shuffle, "local_dirs_shared": shared_local, "pfs_bytes": pfs,
                   "pfs_io_ratio": pfs / bound if pfs is not None else None,
                   "spilled_records": counters.get("Spilled Records"),
                   "output_records": counters.get("Map output records"),
                   "shuffle": moved.get("used"), "shuffle_s": moved.get("shuffle_s"),
                   "direct_bytes": moved.get("direct_bytes"), "http_bytes": moved.get("http_bytes"),
                   "reducers": moved.get("reducers"), **self.validate(ctx, out, report)}
        ctx.discard(gen, out, report)
        return figures



#: The class of the Spark sort in our Spark examples jar (``spark-examples/``, built by ``install.sh``).
SPARK_TERASORT = "org.hpchadoop.spark.examples.TeraSort"


class SparkTeraSort(SortWorkload):
    """TeraGen (prepare, as ``terasort``'s: same rows, same records) → a Spark sort of the records (measured: our
    ``org.hpchadoop.spark.examples.TeraSort``, ``sortByKey`` with a range partitioner into ``reduces`` partitions, on
    the same YARN) → TeraValidate (checked, as ``terasort``'s output), so that one bench compares the two engines on
    one cluster and one input."""

    name = "spark-terasort"

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures comparable with ``terasort``'s: ``wall_s`` (``spark-submit`` start to end, s: the driver's,
        ApplicationMaster's and executors' start included, as TeraSort's job client time includes its AM's),
        ``sort_mb_s`` (input MiB ÷ ``wall_s``), ``input_bytes``, ``shuffle_bytes`` (map-side shuffle bytes
        written), ``pfs_bytes`` and ``pfs_io_ratio`` (÷ 4 × input), ``local_dirs_shared``, ``output_records``,
        ``validate_s``, ``valid`` and ``checksum`` (:meth:`SortWorkload.validate`, not in ``wall_s``); and Spark's
        own: ``spark_jobs`` and ``spark_jobs_s`` (its jobs' summed durations: the sampling job that finds the range
        bounds, then the sort), ``input_read_bytes`` (every byte its tasks read from the input: the sampling job
        reads it all once more), ``shuffle_read_bytes``, ``spilled_bytes``, ``application_id``.

        All bytes are the Spark event log's task metrics (:func:`benchmarks.history.spark_task_totals`). ``pfs_bytes``
        is what crossed the shared filesystem: the input read and the output written, plus, when the NodeManager local
        dirs (the executors' ``spark.local.dir``) are on it, the shuffle written and read and the spills (each written
        once and read back once). ``None`` when the event log is not there.

        Raises:
            UserError: no Spark examples jar (run ``./install.sh``).
            ClusterError: the application failed, or TeraValidate found its output wrong.
        """
        from launcher.render.spark import events_dir

        assert ctx.session is not None
        plan = ctx.session.plan
        gen, out, report = ctx.work_dir / "gen", ctx.work_dir / "sorted", ctx.work_dir / "validate"
        app = self.spark(ctx, self.name, SPARK_TERASORT, [str(gen), str(out), str(ctx.params["reduces"])],
                         outputs=(out,))
        events = spark_events(events_dir(plan), app["application_id"]) if app["application_id"] else []
        totals = spark_task_totals(events)
        jobs, jobs_s = spark_jobs_s(events)
        input_bytes = int(ctx.params["rows"]) * 100
        shared_local = any(Path(directory).is_relative_to(plan.run_dir) for directory in nm_local_dirs(ctx.session))
        read, written = totals["input_read_bytes"], totals["output_bytes"]
        shuffle_written = totals["shuffle_write_bytes"]
        shuffle_read = None if totals["shuffle_remote_bytes"] is None and totals["shuffle_local_bytes"] is None \
            else (totals["shuffle_remote_bytes"] or 0) + (totals["shuffle_local_bytes"] or 0)
        pfs = None if read is None or written is None else read + written
        if pfs is not None and shared_local:
            pfs += (shuffle_written or 0) + (shuffle_read or 0) + 2 * (totals["disk_spilled_bytes"] or 0)
        figures: dict[str, Any] = {
            "wall_s": app["wall_s"], "application_id": app["application_id"], "input_bytes": input_bytes,
            "sort_mb_s": input_bytes / MiB / app["wall_s"] if app["wall_s"] else None,
            "spark_jobs": jobs, "spark_jobs_s": jobs_s, "input_read_bytes": read, "output_bytes": written,
            "output_records": totals["output_records"], "shuffle_bytes": shuffle_written,
            "shuffle_read_bytes": shuffle_read, "spilled_bytes": totals["disk_spilled_bytes"],
            "local_dirs_shared": shared_local, "pfs_bytes": pfs,
            "pfs_io_ratio": pfs / (4 * input_bytes) if pfs is not None else None,
            **self.validate(ctx, out, report)}
        ctx.discard(gen, out, report)
        return figures


def nm_local_dirs(session: ClusterRun) -> list[str]:
    """The NodeManager local dir each node really uses: what its agent chose (``agents/<node>.json``
    ``nm_local_dir``: node-local, or the cluster directory's fallback), else the plan's."""
    states = session.cluster.states()
    return [str((states[node.name].nm_local_dir if node.name in states else None) or node.nm_local_dir)
            for node in session.plan.nodes]


# -- latency ------------------------------------------------------------------------------------
#: The one-map job of the latency workload: Hadoop's SleepJob (jobclient tests jar), one map of 1 ms, no reduce.
SLEEP_JOB = "org.apache.hadoop.mapreduce.SleepJob"


class Latency(Workload):
    """``jobs`` one-map jobs one after another in the live cluster: what an interactive user waits for.

    Each job's start is split into the phases of :data:`benchmarks.history.LATENCY_PHASES` (submission → AM
    container launched, from the ResourceManager; → AM's JVM at ``MRAppMaster``; → job initialised; → first map
    attempt running, from the job's history). The Spider paper measured 6.8 s from submission to the first map.
    """

    name = "latency"

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``latency_s`` (the median of the jobs' submission → first map running), the median of each
        phase (``am_launch_s``, ``am_jvm_s``, ``am_init_s``, ``first_map_s``), ``client_s`` (median job client
        wall time, JVM start to exit), ``jobs_per_min`` (sequential: jobs ÷ their summed client time × 60),
        ``wall_s`` (all jobs), ``jobs_detail`` (each job's figures) and ``input_bytes`` 0 (the jobs read no input)."""
        assert ctx.session is not None
        plan = ctx.session.plan
        history = Path(plan.run_dir, "history")
        details: list[dict[str, Any]] = []
        for number in range(1, int(ctx.params["jobs"]) + 1):
            job = self.hadoop(ctx, f"latency-{number}", ["-m", "1", "-r", "0", "-mt", "1", "-rt", "1"],
                              main_class=SLEEP_JOB, extra_classpath=(plan.runtime.tests_jar,))
            jhist = find_jhist(history, job["job_id"]) if job["job_id"] else None
            events = start_events(jhist) if jhist else {}
            launched = am_launched_ms(plan.rm_web, job["application_id"], plan.user)
            if launched is not None:
                events["am_launched"] = launched
            details.append({"job_id": job["job_id"], "client_s": job["wall_s"], **latency_breakdown(events)})
        figures: dict[str, Any] = {"jobs": len(details), "jobs_detail": details, "input_bytes": 0,
                                   "wall_s": sum(d["client_s"] for d in details)}
        for key in ("latency_s", "client_s", *(phase for phase, _ in LATENCY_PHASES)):
            values = [d[key] for d in details if d.get(key) is not None]
            figures[key] = statistics.median(values) if values else None
        figures["jobs_per_min"] = 60.0 * len(details) / figures["wall_s"] if figures["wall_s"] > 0 else None
        return figures


class Throughput(Workload):
    """One-map jobs through one live cluster: ``jobs`` of them one after another, then ``jobs`` more with
    ``concurrency`` submitted at a time (each batch's clients start together; the next batch when all have
    ended). What a user running many small jobs gets; issue 12's goal is ≥ 20 / ≥ 40 jobs per minute on the local
    backend. The jobs are :data:`SLEEP_JOB`'s (one 1 ms map, no reduce), as in :class:`Latency`.

    ``cpu_s_per_job`` is the machine's CPU time (user + system, all processes: :func:`psutil.cpu_times`) spent
    per job while they ran, in seconds: on a test cluster whose nodes share one machine it says how far the cores
    are the limit (2 cores give at most 120 CPU-seconds a minute).
    """

    name = "throughput"

    def _batch(self, ctx: Context, names: list[str]) -> list[float]:
        """Run one batch of one-map jobs at once; returns each job's client wall time (s).

        Raises:
            ClusterError: a job failed (names its log).
        """
        assert ctx.session is not None
        plan = ctx.session.plan
        steps = [ctx.session.java_step(name, ["-m", "1", "-r", "0", "-mt", "1", "-rt", "1"], main_class=SLEEP_JOB,
                                       extra_classpath=(plan.runtime.tests_jar,)) for name in names]
        results = ctx.session.run_steps_at_once(steps, label=f"{len(steps)} one-map jobs at once")
        for step, result in zip(steps, results, strict=True):
            if result.returncode != 0:
                raise ClusterError(step_error(step, result))
        return [result.wall_s or 0.0 for result in results]

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``jobs_per_min_sequential`` and ``jobs_per_min_concurrent`` (jobs ÷ elapsed wall time × 60),
        ``wall_s_sequential`` / ``wall_s_concurrent`` (s), ``client_s_sequential`` / ``client_s_concurrent``
        (median job client wall time, s), ``cpu_s_per_job_sequential`` / ``cpu_s_per_job_concurrent`` (s),
        ``jobs``, ``concurrency``, ``wall_s`` (both parts) and ``jobs_per_min`` (the concurrent figure)."""
        jobs, concurrency = int(ctx.params["jobs"]), max(1, int(ctx.params["concurrency"]))
        figures: dict[str, Any] = {"jobs": jobs, "concurrency": concurrency, "input_bytes": 0}
        for mode, width in (("sequential", 1), ("concurrent", concurrency)):
            clients: list[float] = []
            cpu_before, began = _cpu_s(), time.monotonic()
            for first in range(0, jobs, width):
                names = [f"{mode}-{n + 1}" for n in range(first, min(jobs, first + width))]
                clients += self._batch(ctx, names)
            wall = time.monotonic() - began
            figures.update({f"wall_s_{mode}": wall, f"jobs_per_min_{mode}": 60.0 * jobs / wall,
                            f"client_s_{mode}": statistics.median(clients),
                            f"cpu_s_per_job_{mode}": (_cpu_s() - cpu_before) / jobs})
        figures["wall_s"] = figures["wall_s_sequential"] + figures["wall_s_concurrent"]
        figures["jobs_per_min"] = figures["jobs_per_min_concurrent"]
        return figures


def _cpu_s() -> float:
    """CPU seconds (user + system + nice) the whole machine has spent since boot (:func:`psutil.cpu_times`)."""
    times = psutil.cpu_times()
    return float(times.user + times.system + times.nice)


# -- KMeans ------------------------------------------------------------------------------------
def mahout_jars(cache: Path | None = None) -> list[Path]:
    """Mahout 0.13.0's MapReduce jars (``mahout-mr`` and what Hadoop 3 lacks), fetched once from Maven Central
    with ``benchmarks/mahout/pom.xml`` into ``cache`` (default ``$XDG_CACHE_HOME/hpc-hadoop/mahout-0.13.0``,
    ``~/.cache/hpc-hadoop/mahout-0.13.0`` when it is unset: :func:`launcher.util.userdirs.cache_dir`).

    Raises:
        UserError: Maven is missing or the download failed (names the command).
    """
    cache = cache or cache_dir() / "mahout-0.13.0"
    jars = sorted(cache.glob("*.jar"))
    if any(j.name.startswith("mahout-mr-") for j in jars):
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise UserError("Maven (mvn) is needed to fetch Mahout 0.13.0 for the kmeans workload",
                        fix="apt-get install maven, or put the jars in " + str(cache))
    tmp = cache.with_name(cache.name + f".tmp{os.getpid()}")
    argv = [mvn, "-B", "-q", "-f", str(MAHOUT_POM), "dependency:copy-dependencies", f"-DoutputDirectory={tmp}",
            "-DincludeScope=runtime"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UserError(f"fetching Mahout failed ({' '.join(argv)}): {(proc.stdout + proc.stderr)[-300:]}",
                        fix="check access to Maven Central")
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(tmp, cache)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return sorted(cache.glob("*.jar"))


def mahout_job_jar(jars: list[Path]) -> Path:
    """One job jar: ``mahout-mr``'s classes plus every other Mahout jar under ``lib/`` (made once, next to them).

    Hadoop puts a job jar's ``lib/*.jar`` on the task classpath in every mode; ``-libjars`` does not reach
    uberized tasks here (``WritableName can't load class: org.apache.mahout.math.VectorWritable``).
    """
    mr = next(j for j in jars if j.name.startswith("mahout-mr-"))
    target = mr.with_name("mahout-mr-job.jar")
    if target.is_file():
        return target
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    with zipfile.ZipFile(mr) as source, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            out.writestr(item, source.read(item.filename))
        for jar in jars:
            if jar not in (mr, target):
                out.write(jar, f"lib/{jar.name}", compress_type=zipfile.ZIP_STORED)
    os.replace(tmp, target)
    return target


def gaussian_points(samples: int, dimensions: int, k: int, std: float, seed: int = 0) -> list[list[float]]:
    """HiBench's KMeans input: ``k`` centres uniform in [-100, 100)^dimensions, ``samples`` points drawn from
    normal distributions (σ = ``std``) around them in turn."""
    rng = random.Random(seed)
    centres = [[rng.uniform(-100.0, 100.0) for _ in range(dimensions)] for _ in range(k)]
    return [[rng.gauss(c, std) for c in centres[i % k]] for i in range(samples)]


#: Writes one input file of the KMeans workloads: ``(index, point)`` pairs (the point's index in
#: :func:`gaussian_points`' list, its coordinates) to a file opened for binary writing.
PointWriter = Callable[[BinaryIO, Iterable[tuple[int, list[float]]]], object]


def vector_file(out: BinaryIO, points: Iterable[tuple[int, list[float]]]) -> None:
    """Mahout's input: a SequenceFile of ``Text`` keys ``p<index>`` and ``VectorWritable`` values
    (:func:`benchmarks.seqfile.write_vectors`)."""
    write_vectors(out, ((f"p{i}", point) for i, point in points))


def text_file(out: BinaryIO, points: Iterable[tuple[int, list[float]]]) -> None:
    """MLlib's input: one point a line, its coordinates as Python's ``repr`` of each float (they read back
    exactly), separated by single spaces; ASCII."""
    out.writelines((" ".join(repr(x) for x in point) + "\n").encode("ascii") for _, point in points)


def write_points(ctx: Context, directory: Path, writer: PointWriter) -> dict[str, Any]:
    """The KMeans workloads' input: ``samples`` points of :func:`gaussian_points` (``dimensions``, ``k``, ``std`` of
    ``ctx.params``; seed 0, so both workloads get the same points) dealt round-robin over ``files`` files
    ``part-00000``... in ``directory`` (made if missing), each written by ``writer``.

    Returns:
        ``generate_s`` (seconds to generate and write) and ``input_bytes`` (bytes of the files).

    Raises:
        OSError: the directory or a file could not be written.
    """
    began = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    p = ctx.params
    points = gaussian_points(int(p["samples"]), int(p["dimensions"]), int(p["k"]), float(p["std"]))
    files = max(1, int(p.get("files", 1)))
    for f in range(files):
        with open(directory / f"part-{f:05d}", "wb") as out:
            writer(out, ((i, points[i]) for i in range(f, len(points), files)))
    return {"generate_s": time.monotonic() - began,
            "input_bytes": sum(x.stat().st_size for x in directory.iterdir())}


class KMeans(Workload):
    """Mahout's KMeans MapReduce driver over generated Gaussian clusters (``iterations`` rounds, 5 in the paper)."""

    name = "kmeans"

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """Write ``samples`` points as ``files`` SequenceFiles of ``VectorWritable`` in ``work_dir/samples``."""
        return write_points(ctx, ctx.work_dir / "samples", vector_file)

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``wall_s`` of the whole driver (all iterations and the clustering pass), ``iterations``
        done, ``latency_s`` of its last MapReduce job (the job id the client printed last)."""
        assert ctx.session is not None
        jars = [j for j in mahout_jars() if j.name != "mahout-mr-job.jar"]
        job_jar = mahout_job_jar(jars)
        p = ctx.params
        out, seeds = ctx.work_dir / "output", ctx.work_dir / "seeds"
        job = self.hadoop(ctx, "kmeans", [
            str(job_jar), KMEANS_DRIVER,
            "-i", str(ctx.work_dir / "samples"), "-c", str(seeds), "-o", str(out), "-k", str(p["k"]),
            "-x", str(p["iterations"]), "-cd", "0.0", "-ow", "-cl",
            "-dm", "org.apache.mahout.common.distance.EuclideanDistanceMeasure"],
            outputs=(out, seeds))
        done = sorted(out.glob("clusters-*"))
        figures = {"wall_s": job["wall_s"], "latency_s": job["latency_s"], "job_id": job["job_id"],
                   "iterations": max((int(d.name.split("-")[1]) for d in done), default=0),
                   "clustered": (out / "clusteredPoints").is_dir()}
        ctx.discard(ctx.work_dir)
        return figures


#: The class of the MLlib KMeans program in our Spark examples jar (``spark-examples/``, built by ``install.sh``).
SPARK_KMEANS = "org.hpchadoop.spark.examples.KMeans"


class SparkKMeans(Workload):
    """MLlib's KMeans (Spark on the same YARN) over the points the ``kmeans`` workload gives Mahout: the same
    :func:`gaussian_points` (same parameters, same seed), as text, ``files`` files; k random points as initial centres
    and exactly ``iterations`` rounds, as Mahout's driver there."""

    name = "spark-kmeans"

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """Write ``samples`` points, one a line (coordinates separated by spaces), as ``files`` files in
        ``work_dir/points``."""
        return write_points(ctx, ctx.work_dir / "points", text_file)

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``wall_s`` of ``spark-submit`` (driver start to end, as the Mahout driver's), ``iterations`` done,
        ``cost`` (sum of squared distances to the nearest centre), ``application_id``.

        Raises:
            ClusterError: the application failed (names its log).
            UserError: no Spark examples jar (run ``./install.sh``).
        """
        p = ctx.params
        app = self.spark(ctx, "spark-kmeans", SPARK_KMEANS, [str(ctx.work_dir / "points"), str(p["k"]),
                                                            str(p["iterations"])])
        figures: dict[str, Any] = {"wall_s": app["wall_s"], "application_id": app["application_id"]}
        for key, kind in (("iterations", int), ("cost", float)):
            found = [line.split()[1] for line in app["log"].splitlines() if line.startswith(f"{key} ")]
            figures[key] = kind(found[-1]) if found else None
        ctx.discard(ctx.work_dir)
        return figures


WORKLOADS: Registry[Workload] = Registry("workload", field="workload", sort_names=False, entries={
    w.name: w for w in (Dd, DfsIO, TeraSort, SparkTeraSort, KMeans, SparkKMeans, Latency, Throughput)})


def get_workload(name: str) -> Workload:
    """A workload by name.

    Raises:
        UserError: unknown name; lists the known ones.
    """
    return WORKLOADS.create(name)
