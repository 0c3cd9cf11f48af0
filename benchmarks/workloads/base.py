"""What every workload shares: :class:`Context` (the run's cluster and directories), the :class:`Workload`
interface (HiBench's two phases: ``prepare`` makes the input, ``run`` measures), the raw-filesystem ``dd``
baseline that TestDFSIO is compared with, the page-cache drop, and the shuffle options of a MapReduce job.

A workload returns plain dicts of figures; the harness adds the parameters and writes ``results.jsonl``.
Units are in the key names: ``_s`` seconds, ``_mb_s`` MiB/s, ``_bytes`` bytes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.history import (
    job_latency_s,
    rest_latency_s,
)
from launcher.fanout import get_launcher
from launcher.lifecycle.runner import ClusterRun, step_error
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.hdfs import hdfs_mode
from launcher.security.webauth import web_auth
from launcher.steps.shuffle import HADOOP_SHUFFLE, LOCAL_DIRS_PROPERTY, PLUGIN_CLASS
from launcher.util.errors import ClusterError, UserError

MiB = 1 << 20
REPO = Path(__file__).resolve().parents[2]



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
            latency = rest_latency_s(plan.jhs_web, result.job_id, auth=web_auth(plan))
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


# -- the raw baseline: dd on every node -----------------------------------------------------------
#: The page-cache drop run on each node (Linux ``drop_caches``: 3 = page cache, dentries and inodes).
DROP_CACHES = ["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"]


def drop_page_cache(nodes: list[str], fanout: str, answers: Path) -> str | None:
    """Drop the page cache on ``nodes`` (``sync; echo 3 > /proc/sys/vm/drop_caches``), each through the
    launcher ``fanout`` (:func:`_on_node`); in this process when that launcher runs here (``local``). What a node
    says goes to ``answers/drop-caches-<node>.out`` (:func:`_answering`), read here.

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
        said = answers / f"drop-caches-{node}.out"
        proc = subprocess.run(_on_node(node, fanout, _answering(said, DROP_CACHES)), capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            failures.append(f"{node}: {(_read_answer(said) or proc.stderr).strip()[-120:]}")
    return f"page cache not dropped: {'; '.join(failures)}" if failures else None


def _answering(out: Path, argv: list[str]) -> list[str]:
    """``argv`` with its standard output and error sent to the file ``out`` (made anew): what a task on another node
    says is read from a shared file, never from the fan-out command's output, which a batch system's task launcher
    need not relay (OpenPBS's ``pbs_tmrsh`` and Torque's ``pbsdsh`` send it to the job's output file; issue 37
    item 5)."""
    return ["sh", "-c", 'exec >"$0" 2>&1; exec "$@"', str(out), *argv]


def _read_answer(out: Path) -> str:
    """The text a task wrote to ``out`` (:func:`_answering`); empty when there is none."""
    try:
        return out.read_text(errors="replace")
    except OSError:
        return ""


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
    Returns ``wall_s`` (first start → last end), ``throughput_mb_s`` (total MiB ÷ wall_s), ``hosts`` (the
    ``uname -n`` of each process, in file order), ``proc_s`` (each process's own seconds, from the ``copied, S s``
    line ``dd`` prints on stderr, run with ``LC_ALL=C``: :func:`dd_seconds`) and ``proc_mb_s``, the per-process
    throughput computed as TestDFSIO computes its per-map "Throughput mb/sec": total MiB ÷ the sum of the
    processes' seconds (``None`` when a ``dd`` printed no time).

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
        # ``uname -n`` first (the host the scheduler really ran it on), then dd's own lines, into a file beside the
        # data (:func:`_answering`): a batch system's task launcher need not relay them.
        argv = _answering(_dd_answer(path, mode), ["sh", "-c", 'uname -n && LC_ALL=C exec "$@"', "sh", *argv])
        procs.append(subprocess.Popen(_on_node(nodes[i % len(nodes)], fanout, argv), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    errors, hosts, seconds = [], [], []
    for path, proc in zip(files, procs, strict=True):
        relayed, _ = proc.communicate()
        said = _read_answer(_dd_answer(path, mode))
        _dd_answer(path, mode).unlink(missing_ok=True)
        host, _, rest = said.partition("\n")
        hosts.append(host.strip())
        if proc.returncode != 0:
            errors.append((rest or relayed.decode(errors="replace")).strip()[-200:])
        seconds.append(dd_seconds(rest))
    wall = time.monotonic() - began
    if errors:
        raise ClusterError(f"dd {mode} failed: {errors[0]}")
    total_mb = count * len(files)
    known = [s for s in seconds if s is not None]
    proc_total = sum(known) if len(known) == len(seconds) else 0.0
    return {"wall_s": wall, "throughput_mb_s": total_mb / wall if wall > 0 else None, "total_mb": total_mb,
            "hosts": hosts, "proc_s": seconds, "proc_mb_s": total_mb / proc_total if proc_total > 0 else None}


def _dd_answer(path: Path, mode: str) -> Path:
    """Where the ``dd`` of ``path`` writes what it says: ``<path>.dd-<mode>.out`` (the same shared directory)."""
    return path.with_name(f"{path.name}.dd-{mode}.out")


_DD_COPIED = re.compile(r"\bcopied, ([0-9.]+(?:e[-+]?[0-9]+)?) s\b")


def dd_seconds(stderr: str) -> float | None:
    """The seconds one ``dd`` took by its own account: the ``S`` of the ``... copied, S s, R MB/s`` line GNU
    coreutils' ``dd`` prints on stderr at the end (in the C locale: a decimal point); ``None`` when there is none."""
    found = _DD_COPIED.findall(stderr)
    return float(found[-1]) if found else None


def dd_pair(ctx: Context, directory: Path) -> dict[str, Any]:
    """dd write then (page cache dropped where permitted) dd read of ``files`` × ``file_size`` in ``directory``:
    aggregate ``dd_{write,read}_mb_s`` (MiB/s over the wall time), per-process ``dd_{write,read}_proc_mb_s`` (MiB/s,
    as TestDFSIO's per-map figure: :func:`parallel_dd`); ``dd_hosts`` lists the hosts the dd processes ran on."""
    files, size = int(ctx.params["files"]), int(ctx.params["file_size"])
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"dd-{i:04d}" for i in range(files)]
    write = parallel_dd(paths, size, ctx.nodes, ctx.fanout, "write")
    note = drop_page_cache(ctx.nodes, ctx.fanout, directory)
    if note:
        ctx.notes.append(note)
    read = parallel_dd(paths, size, ctx.nodes, ctx.fanout, "read")
    for path in paths:
        path.unlink(missing_ok=True)
    return {"dd_write_s": write["wall_s"], "dd_write_mb_s": write["throughput_mb_s"],
            "dd_read_s": read["wall_s"], "dd_read_mb_s": read["throughput_mb_s"], "cache_dropped": note is None,
            "dd_write_proc_mb_s": write["proc_mb_s"], "dd_read_proc_mb_s": read["proc_mb_s"],
            "dd_hosts": sorted(set(write["hosts"]) | set(read["hosts"]))}


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


def nm_local_dirs(session: ClusterRun) -> list[str]:
    """The NodeManager local dir each node really uses: what its agent chose (``agents/<node>.json``
    ``nm_local_dir``: node-local, or the cluster directory's fallback), else the plan's."""
    states = session.cluster.states()
    return [str((states[node.name].nm_local_dir if node.name in states else None) or node.nm_local_dir)
            for node in session.plan.nodes]

