"""Sorts: Hadoop's TeraSort and our Spark TeraSort (:class:`SortWorkload`: TeraGen for the input, TeraValidate
for the check, untimed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.history import (
    client_counters,
    file_bytes,
    spark_events,
    spark_jobs_s,
    spark_task_totals,
)
from benchmarks.workloads.base import (
    Context,
    MiB,
    Workload,
    nm_local_dirs,
    shuffle_options,
)
from launcher.plan.hdfs import hdfs_mode
from launcher.util.errors import ClusterError


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


