"""The sweep: points × repeats over workloads, one cluster per (node count, filesystem mode).

A bench file (YAML)::

    name: spider-fig5
    workloads: [dd, dfsio]         # dd, dfsio, terasort, spark-terasort, kmeans, spark-kmeans, latency, throughput
    profile: tiny                  # tiny | small | large | huge (benchmarks/profiles.py)
    repeats: 3
    sweep:                         # lists; every combination is a point
      stripe_count: [1, 4, 16, 64]  # Lustre, OrangeFS (kernel client): refused before anything runs elsewhere
      nodes: [1]
      files: [2, 4, 8]             # overrides the profile's value (dd, dfsio, kmeans)
      file_size: [8M]              # bytes, or with a unit
      fs_mode: [rawfs]
      local_dirs: [null, /dev/shm]  # filesystem.local_dirs (one cluster each): null = the cluster's default,
                                   # `shared` = on the shared filesystem, or an absolute node-local directory
      rows: [10000000]             # TeraSort's (and spark-terasort's) input in 100-byte rows (1 GB)
      shuffle: [http, shared-fs]   # TeraSort's shuffle per job (hadoop.shuffle); null = the cluster's
    keep_data: false               # true: keep each run's input and output (the row's work_dir)
    job:                           # job-file fields for the cluster (scheduler, filesystem.root, hadoop...)
      scheduler: local
      filesystem: {root: /tmp/hpc-hadoop-pfs}
"""

from __future__ import annotations

import contextlib
import getpass
import itertools
import platform
import secrets
import time
import traceback
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.console import Console
from rich.markup import escape

from benchmarks.profiles import PROFILES, profile
from benchmarks.results import append_row, print_summary, read_rows, summarize_rows, write_csv, write_hibench_report
from benchmarks.taskflow import keep_histories
from benchmarks.workloads import WORKLOADS, Context, get_workload
from launcher import __version__
from launcher.config.load import load_spec
from launcher.config.spec import JobSpec, StripeSpec
from launcher.filesystems.detect import detect
from launcher.lifecycle.compose import open_cluster
from launcher.lifecycle.front import Front, front_door
from launcher.lifecycle.progress import ConsoleObserver
from launcher.lifecycle.runner import ClusterRun
from launcher.plan.cluster_plan import FilesystemPlan, expand_root
from launcher.plan.hdfs import hdfs_mode
from launcher.schedulers.allocation import Allocation
from launcher.util.errors import HpcHadoopError, UserError
from launcher.util.units import parse_size
from launcher.util.yamlio import YAMLError, load_yaml

#: The step a bench cluster's job spec carries (a spec needs one; the harness submits its own steps).
PLACEHOLDER_STEP = {"example": "pi", "args": ["1", "10"]}
SWEEP_KEYS = ("stripe_count", "nodes", "files", "file_size", "fs_mode", "local_dirs", "shuffle", "rows")
#: Sweep fields each of whose values needs a cluster of its own (a cluster-wide setting of the job file).
CLUSTER_KEYS = ("nodes", "fs_mode", "local_dirs")
#: Sweep fields that set a stripe layout on each run's work directory (:func:`apply_stripe`): refused before anything
#: runs where no layout can be set (:meth:`Harness.check_striping`).
STRIPING_SWEEPS = ("stripe_count",)
#: Workloads whose runs a ``shuffle`` sweep varies (their reducers shuffle map outputs).
SHUFFLING = ("terasort",)


def _unset() -> list[int | None]:
    """A sweep list of one ``null``: the profile's value (or the layout left alone)."""
    return [None]


def _default_local_dirs() -> list[str | None]:
    """A ``local_dirs`` sweep of one ``null``: the cluster's default."""
    return [None]


#: A ``shuffle`` sweep value: ``null`` = the cluster's ``hadoop.shuffle``.
ShuffleChoice = Literal["http", "shared-fs"] | None


def _no_shuffle() -> list[ShuffleChoice]:
    """A ``shuffle`` sweep of one ``null``: the cluster's shuffle."""
    return [None]


class Sweep(BaseModel):
    """Lists of values; every combination is one point."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    stripe_count: list[int | None] = Field(default_factory=_unset, description="Stripe counts of the run "
                                           "directories (Lustre); `null` = leave the layout alone.")
    nodes: list[int] = Field(default_factory=lambda: [1], description="Node counts (one cluster each).")
    files: list[int | None] = Field(default_factory=_unset, description="Files (dd, dfsio, kmeans); "
                                    "`null` = the profile's.")
    file_size: list[int | None] = Field(default_factory=_unset, description="File size in bytes or "
                                        "with a unit (`8M`); `null` = the profile's.")
    fs_mode: list[str] = Field(default_factory=lambda: ["rawfs"], description="`filesystem.mode` values.")
    local_dirs: list[str | None] = Field(
        default_factory=_default_local_dirs, description="`filesystem.local_dirs` values, one cluster each (where the "
        "NodeManagers keep map outputs and spills: the Clemson study's RAM disk vs disk vs shared filesystem): "
        "`null` = the cluster's default, `shared`, or an absolute node-local directory such as `/dev/shm`.")
    rows: list[int | None] = Field(default_factory=_unset, description="TeraSort's and spark-terasort's input "
                                   "in 100-byte rows; `null` = the profile's.")
    shuffle: list[ShuffleChoice] = Field(
        default_factory=_no_shuffle, description="TeraSort's shuffle (`hadoop.shuffle`), set per job in the one "
        "cluster: `http`, `shared-fs`; `null` = the cluster's.")

    @field_validator("local_dirs")
    @classmethod
    def _local_dirs(cls, value: list[str | None]) -> list[str | None]:
        for v in value:
            if v is not None and v != "shared" and not v.startswith(("/", "$")):
                raise ValueError(f"local_dirs {v!r} is neither `shared` nor an absolute directory: give an absolute "
                                 "node-local directory (e.g. /dev/shm), `shared`, or null for the cluster's default")
        return value

    @field_validator("file_size", mode="before")
    @classmethod
    def _sizes(cls, value: object) -> object:
        if isinstance(value, list):
            return [None if v is None else parse_size(v) if isinstance(v, str) else v for v in value]
        return value


class BenchSpec(BaseModel):
    """A bench file, validated (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field("bench", description="Name of the bench (used in cluster ids).")
    workloads: list[str] = Field(min_length=1, description="Workloads in the order they run.")
    profile: str = Field("tiny", description="Scale profile: " + ", ".join(PROFILES) + ".")
    repeats: int = Field(3, ge=1, description="Runs of each point.")
    sweep: Sweep = Field(default_factory=Sweep)
    job: dict[str, Any] = Field(default_factory=dict, description="Job-file fields for the clusters.")
    keep_data: bool = Field(False, description="Keep each run's input and output in its work directory "
                            "(`<root>/<user>/hpc-hadoop-bench/<bench id>/...`, the row's `work_dir`) to inspect them; "
                            "by default they are removed after each run.")

    @field_validator("workloads")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [w for w in value if w not in WORKLOADS]
        if unknown:
            raise ValueError(f"unknown workload(s) {unknown}: use {', '.join(WORKLOADS)}")
        return value

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        if value not in PROFILES:
            raise ValueError(f"unknown profile {value!r}: use {', '.join(PROFILES)}")
        return value


def load_bench(path: Path | None, **overrides: Any) -> BenchSpec:
    """Read a bench file (or none) and apply the CLI's values (``None`` values are ignored).

    Raises:
        UserError: unreadable YAML or an invalid field (names the field).
    """
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = load_yaml(path.read_text()) or {}
        except (OSError, YAMLError) as exc:
            raise UserError(f"cannot read bench file: {exc}", file=str(path)) from None
    for key, value in overrides.items():
        if value is None or value == ():
            continue
        if key in SWEEP_KEYS:
            data.setdefault("sweep", {})[key] = list(value)
        else:
            data[key] = list(value) if isinstance(value, tuple) else value
    try:
        return BenchSpec.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserError(error["msg"].removeprefix("Value error, "), file=str(path) if path else "command line",
                        field=".".join(str(p) for p in error["loc"]), fix="see `hpc-hadoop bench run --help`") from None


def points(bench: BenchSpec) -> list[dict[str, Any]]:
    """Every combination of the sweep's lists (nodes vary slowest)."""
    s = bench.sweep
    combos = itertools.product(sorted(set(s.nodes)), s.fs_mode, s.local_dirs, s.stripe_count, s.files, s.file_size,
                               s.rows, s.shuffle)
    return [dict(zip(("nodes", "fs_mode", "local_dirs", "stripe_count", "files", "file_size", "rows", "shuffle"), c,
                     strict=True))
            for c in combos]


def relevant(workload: str, profile_name: str, point: dict[str, Any]) -> tuple[Any, ...]:
    """The values of ``point`` that matter to ``workload`` (TeraSort has no ``files``: a files sweep runs it once;
    only :data:`SHUFFLING` workloads have a ``shuffle``)."""
    params = profile(profile_name, workload)
    return tuple(v for k, v in sorted(point.items())
                 if (k not in ("files", "file_size", "rows") or k in params)
                 and (k != "shuffle" or workload in SHUFFLING))


def apply_stripe(directory: Path, count: int | None, spec: JobSpec) -> tuple[dict[str, Any], str | None]:
    """Give ``directory`` the stripe count ``count`` with the filesystem layer (``lfs setstripe -c`` on Lustre,
    ``user.pvfs2.*`` on OrangeFS...).

    Returns:
        ``(outcome, note)``: the layer's outcome as a dict (status, requested, layout read back, commands) and,
        when the count was not applied, why (e.g. "striping not applicable ..."), never silent.
    """
    from launcher.filesystems import choose

    fs = choose(spec.filesystem.type, detect(directory, check_flock=False))
    outcome = fs.stripe("scratch", directory, StripeSpec(count=count))
    note = None
    if count is not None and outcome.status != "applied":
        note = f"stripe count {count}: {outcome.status}" + (f" ({outcome.reason})" if outcome.reason else "")
    return outcome.to_record().dump(), note


def labelled_count(outcome: dict[str, Any], asked: int | None) -> int | None:
    """The stripe count a bench row is labelled with (``stripe_count``, the summary's ``stripes``): the count a new
    file in the work directory really got (the outcome's ``effective``, e.g. 4 for 8 asked on 4 OrangeFS data
    servers), else the one asked for (``stripe_count_requested`` keeps it)."""
    effective = (outcome.get("effective") or {}).get("count")
    return effective if effective is not None else asked


class Harness:
    """Runs a bench: for each (node count, fs mode) one cluster, every point and repeat on it.

    Args:
        bench: the bench spec.
        out_dir: where ``results.jsonl``, ``summary.csv``, ``hibench.report`` and the PNGs go.
        console: the terminal.
        sets: ``--set key=value`` overrides of the clusters' job spec.
    """

    def __init__(self, bench: BenchSpec, out_dir: Path, console: Console | None = None,
                 sets: tuple[str, ...] = (), bench_file: Path | None = None) -> None:
        self.bench = bench
        self.bench_file = bench_file
        self.out_dir = out_dir
        self.console = console or Console(highlight=False)
        self.sets = sets
        self.bench_id = f"{bench.name}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        self.failures = 0

    def job_spec(self, nodes: int, fs_mode: str, local_dirs: str | None = None) -> JobSpec:
        """The clusters' job spec for one node count, filesystem mode and ``filesystem.local_dirs`` (``None``: the
        bench file's ``job``'s, or the default).

        Raises:
            UserError: the job fields with these values are invalid (from :func:`launcher.config.load.load_spec`).
        """
        data = {"name": self.bench.name, **self.bench.job, "steps": [PLACEHOLDER_STEP]}
        data.setdefault("filesystem", {})
        data["filesystem"] = {**data["filesystem"], "mode": fs_mode}
        if local_dirs is not None:
            data["filesystem"]["local_dirs"] = local_dirs
        spec, _ = load_spec(None, data=data, sets=list(self.sets), overrides={"nodes": nodes})
        return spec

    def clusters(self) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
        """The sweep's points grouped by cluster (values of :data:`CLUSTER_KEYS`), each group's job spec checked
        first: a ``local_dirs`` (or ``fs_mode``) value the job file refuses stops the bench before anything runs.

        Raises:
            UserError: one line naming the bench file, the sweep field, the value and the fix.
        """
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for point in points(self.bench):
            groups.setdefault(tuple(point[k] for k in CLUSTER_KEYS), []).append(point)
        for nodes, fs_mode, local_dirs in groups:
            try:
                self.job_spec(nodes, fs_mode, local_dirs)
            except UserError as exc:
                blamed = local_dirs is not None and (exc.field or "").split(".")[-1] == "local_dirs"
                field = "sweep.local_dirs" if blamed else "job"
                raise UserError(f"the clusters of this bench cannot be made with fs_mode {fs_mode}, local_dirs "
                                f"{local_dirs}: {exc.message}",
                                file=str(self.bench_file) if self.bench_file else "command line", field=field,
                                fix=exc.fix or "change that value") from None
        return groups

    def run(self) -> list[dict[str, Any]]:
        """Run every point; rows are appended to ``results.jsonl`` as they finish; then summary and plots.

        Returns:
            The rows of this bench.
        """
        self.check_striping()  # before anything is made
        self.out_dir.mkdir(parents=True, exist_ok=True)
        results = self.out_dir / "results.jsonl"
        rows: list[dict[str, Any]] = []
        all_points = points(self.bench)
        groups = self.clusters()
        total = self.bench.repeats * sum(
            len({relevant(w, self.bench.profile, p) for p in all_points}) for w in self.bench.workloads)
        # Every cluster's front half before the first one starts: a point the allocation cannot hold (more nodes than
        # it has, sweep.nodes) is refused before any cluster or dd runs.
        fronts = {key: front_door("bench", self.job_spec(*key), overwrite=True, nodes=key[0]) for key in groups}
        done = 0
        for (nodes, fs_mode, local_dirs), group in groups.items():
            front = fronts[(nodes, fs_mode, local_dirs)]
            spec, allocation = front.spec, front.allocation
            needs_cluster = any(WORKLOADS[w].needs_cluster for w in self.bench.workloads)
            self.console.print(f"[bold]{nodes} node(s), {fs_mode}"
                               + (f", local_dirs {local_dirs}" if local_dirs is not None else "") + "[/]: "
                               + ("bringing the cluster up" if needs_cluster else "no cluster needed"))
            with contextlib.ExitStack() as stack:  # the cluster tears down on any exit, with the exception
                session = stack.enter_context(self.cluster(front)) if needs_cluster else None
                if session:
                    self.console.print(f"cluster {session.plan.cluster_id} up in {session.bringup_s or 0:.1f} s "
                                       f"({session.plan.run_dir})")
                seen: set[tuple[str, tuple[Any, ...]]] = set()
                for point in group:
                    for workload in self.bench.workloads:
                        key = (workload, relevant(workload, self.bench.profile, point))
                        if key in seen:
                            continue
                        seen.add(key)
                        for repeat in range(1, self.bench.repeats + 1):
                            done += 1
                            row = self.one_run(spec, allocation, session, point, workload, repeat)
                            append_row(results, row)
                            rows.append(row)
                            status = "[green]ok[/]" if row["state"] == "succeeded" else f"[red]{row['error']}[/]"
                            shown = {k: row.get(k) for k in point}
                            self.console.print(f"[{done}/{total}] {workload} {self._describe(shown)} "
                                               f"repeat {repeat}: wall {row.get('wall_s') or 0:.1f} s {status}",
                                               soft_wrap=True)
        self.finish(rows)
        return rows

    def cluster(self, front: Front) -> ClusterRun:
        """A new cluster for ``front`` (the bench's entrance of :func:`launcher.lifecycle.front.front_door`: planned
        and written, not yet up: enter it), its terminal progress on this harness's console."""
        return open_cluster(front, observer=ConsoleObserver(self.console))

    def striping_sweep(self) -> list[int]:
        """The stripe counts the sweep asks for (``null``, "leave the layout alone", left out)."""
        return [c for c in self.bench.sweep.stripe_count if c is not None]

    def decided_filesystem(self, fs_mode: str) -> FilesystemPlan:
        """The filesystem under the clusters' ``filesystem.root`` (:func:`launcher.filesystems.decide`, read-only:
        statfs, ``/proc/mounts``, the class's layout command), where every run's work directory is."""
        from launcher.filesystems import decide

        return decide(self.job_spec(min(self.bench.sweep.nodes), fs_mode).filesystem, check=False)

    def check_striping(self) -> None:
        """Refuse, before any cluster starts or any run is made, a striping sweep (:data:`STRIPING_SWEEPS`) that
        cannot take effect: on a filesystem without per-directory striping (ext4, tmpfs, XFS, NFS, GlusterFS...),
        where layouts can be neither set nor read (OrangeFS's FUSE client, without extended attributes; Lustre
        without ``lfs``), or with a count the filesystem refuses (``-1`` on OrangeFS). Every point would otherwise
        run on the same layout and the sweep would show noise as an effect.

        Raises:
            UserError: one line naming the bench file, ``sweep.stripe_count``, the filesystem found and the fix.
        """
        from launcher.filesystems import filesystem_of

        counts = self.striping_sweep()
        if not counts:
            return
        source = str(self.bench_file) if self.bench_file else "command line (--stripe-count)"
        field = "sweep.stripe_count"
        drop = f"or remove {field}"
        for fs_mode in dict.fromkeys(self.bench.sweep.fs_mode):
            decided = self.decided_filesystem(fs_mode)
            fs = filesystem_of(decided)
            where = f"{decided.label} at {decided.mount_point or decided.path}"
            if not fs.striping:
                raise UserError(f"stripe counts {counts} cannot take effect: filesystem.root is on {where}, which has "
                                f"no per-directory striping (every point would run on the same layout)", file=source,
                                field=field, fix="put job.filesystem.root (or --root) on Lustre or on OrangeFS "
                                f"mounted with its kernel client, {drop}")
            if decided.striping_error:
                raise UserError(f"stripe counts {counts} cannot take effect: layouts can be neither set nor read on "
                                f"{where}: {decided.striping_error}", file=source, field=field,
                                fix=f"{fs.unusable_fix}; {drop}")
            for count in counts:
                try:
                    fs.check(StripeSpec(count=count), field)
                except UserError as exc:
                    raise UserError(exc.message, file=source, field=field, fix=exc.fix) from None

    def dry_run(self) -> list[str]:
        """What :meth:`run` would do, starting nothing: the filesystem, each cluster (node count, fs mode), each
        point with its runs and the striping commands for its work directories, and the number of runs.

        Raises:
            UserError: a striping sweep that cannot take effect (:meth:`check_striping`).
        """
        from launcher.filesystems import filesystem_of

        self.check_striping()
        groups = self.clusters()
        bench_id = f"{self.bench.name}-<date>-<time>-<hex>"
        lines = [f"bench {self.bench.name}" + (f" ({self.bench_file})" if self.bench_file else "")
                 + f": profile {self.bench.profile}, {self.bench.repeats} repeat(s) of each point, workloads "
                 + ", ".join(self.bench.workloads)]
        runs = 0
        for index, ((nodes, fs_mode, local_dirs), group) in enumerate(groups.items(), start=1):
            spec = self.job_spec(nodes, fs_mode, local_dirs)
            decided = self.decided_filesystem(fs_mode)
            fs = filesystem_of(decided)
            root = expand_root(spec.filesystem.root)
            needs_cluster = any(WORKLOADS[w].needs_cluster for w in self.bench.workloads)
            lines.append(f"cluster {index}: {nodes} node(s), fs_mode {fs_mode}"
                         + (f", local_dirs {local_dirs}" if local_dirs is not None else "")
                         + f", scheduler {spec.scheduler}, "
                         + ("one Hadoop cluster for its points" if needs_cluster else "no cluster needed")
                         + f"; root {root} on {decided.label} (class {fs.name})")
            seen: set[tuple[str, tuple[Any, ...]]] = set()
            for point in group:
                todo = []
                for workload in self.bench.workloads:
                    key = (workload, relevant(workload, self.bench.profile, point))
                    if key not in seen:
                        seen.add(key)
                        todo.append(workload)
                if not todo:
                    continue
                runs += len(todo) * self.bench.repeats
                lines.append(f"  point {self._describe(point) or '(profile values)'}: "
                             f"{', '.join(todo)} × {self.bench.repeats} run(s)")
                count = point["stripe_count"]
                for workload in todo:
                    params = self.params(workload, point)
                    work = self.work_dir(root, workload, point, params, "<repeat>").as_posix()
                    work = work.replace(f"/{self.bench_id}/", f"/{bench_id}/")
                    if count is None:
                        lines.append(f"    {workload}: no striping (the work directory keeps the layout it "
                                     "inherits)")
                    else:
                        commands = "; ".join(" ".join(argv) for argv in
                                             fs.stripe_commands(Path(work), StripeSpec(count=count)))
                        lines.append(f"    {workload}: {commands}")
        lines.append(f"{runs} run(s) on {len(groups)} cluster configuration(s); nothing started (--dry-run)")
        return lines

    @staticmethod
    def _describe(point: dict[str, Any]) -> str:
        return " ".join(f"{k}={v}" for k, v in point.items() if v is not None and k not in CLUSTER_KEYS)

    def params(self, workload: str, point: dict[str, Any]) -> dict[str, Any]:
        """The parameters of one ``workload`` run at ``point``: the profile's, with the point's ``files``,
        ``file_size``, ``rows`` (where the workload has them) and ``shuffle`` (:data:`SHUFFLING` workloads)."""
        params = profile(self.bench.profile, workload)
        for key in ("files", "file_size", "rows"):
            if point.get(key) is not None and key in params:
                params[key] = point[key]
        if point.get("shuffle") is not None and workload in SHUFFLING:
            params["shuffle"] = point["shuffle"]
        return params

    def work_dir(self, root: Path, workload: str, point: dict[str, Any], params: dict[str, Any],
                 repeat: int | str) -> Path:
        """One run's work directory, which holds all its data and is what a ``stripe_count`` sweep stripes:
        ``<root>/<user>/hpc-hadoop-bench/<bench id>/<workload>-n<nodes>-s<stripes>-f<files>[-l<i>]-r<repeat>``,
        ``-l<i>`` for the ``i``-th value of a ``local_dirs`` sweep (its clusters' runs never share a directory)."""
        local = point.get("local_dirs")
        tag = f"-l{self.bench.sweep.local_dirs.index(local)}" if local is not None else ""
        return root / getpass.getuser() / "hpc-hadoop-bench" / self.bench_id / \
            f"{workload}-n{point['nodes']}-s{point['stripe_count']}-f{params.get('files')}{tag}-r{repeat}"

    def one_run(self, spec: JobSpec, allocation: Allocation, session: ClusterRun | None, point: dict[str, Any],
                workload: str, repeat: int) -> dict[str, Any]:
        """One workload run at one point; returns its ``results.jsonl`` row (``state`` failed on errors)."""
        params = self.params(workload, point)
        root = expand_root(spec.filesystem.root)
        work = self.work_dir(root, workload, point, params, repeat)
        work.mkdir(parents=True, exist_ok=True)
        fs_type = detect(root, check_flock=False).label  # ``fuse.glusterfs``, ``lustre``, ``ext4``...
        try:
            stripe, stripe_note = apply_stripe(work, point["stripe_count"], spec)
        except HpcHadoopError as exc:
            stripe, stripe_note = {"status": "failed", "reason": str(exc)}, f"striping failed: {exc}"
        runtime = session.plan.runtime if session else None
        row: dict[str, Any] = {
            "bench_id": self.bench_id, "bench": self.bench.name, "workload": workload, "profile": self.bench.profile,
            "repeat": repeat, **point, "files": params.get("files"), "file_size": params.get("file_size"),
            "params": params, "scheduler": spec.scheduler, "node_names": [n.name for n in allocation.nodes],
            "fs_root": str(root), "fs_type": fs_type, "stripe_applied": stripe["status"] == "applied",
            "stripe": stripe, "work_dir": str(work), "stripe_count": labelled_count(stripe, point["stripe_count"]),
            "stripe_count_requested": point["stripe_count"],
            "bringup_s": session.bringup_s if session and WORKLOADS[workload].needs_cluster else None,
            "cluster_id": session.plan.cluster_id if session else None,
            "versions": {"hpc_hadoop": __version__, "python": platform.python_version(),
                         **({"hadoop": runtime.version, "java": str(runtime.java_version)} if runtime else {})},
            "started": time.time(), "state": "running",
        }
        ctx = Context(work_dir=work, params=params, nodes=row["node_names"], scheduler=spec.scheduler,
                      fanout=allocation.fanout, session=session, keep_data=self.bench.keep_data)
        if stripe_note:
            ctx.notes.append(stripe_note)
        if stripe.get("differs"):
            ctx.notes.append(f"stripe count {point['stripe_count']} on {fs_type}: {'; '.join(stripe['differs'])} to a "
                             f"new file; its rows say stripe count {row['stripe_count']}")
        impl = get_workload(workload)
        try:
            row.update({f"prepare_{k}" if k == "wall_s" else k: v for k, v in impl.prepare(ctx).items()})
            row.update(impl.run(ctx))
            row["state"] = "succeeded"
        except (HpcHadoopError, OSError, ValueError, KeyError) as exc:  # our own bugs (AssertionError...) propagate
            self.failures += 1
            row["state"] = "failed"
            row["error"] = str(exc) or type(exc).__name__
            row["traceback"] = traceback.format_exc(limit=3)
        if session and row["state"] == "succeeded" and hdfs_mode(spec.filesystem).history_in_cluster_dir:
            row["jhists"] = keep_histories(Path(session.plan.run_dir, "history"), row, self.out_dir)
        if workload in ("dd", "dfsio") and "input_bytes" not in row:
            row["input_bytes"] = int(params["files"]) * int(params["file_size"])
        row["ended"] = time.time()
        row["notes"] = ctx.notes
        ctx.discard(work)
        return row

    def finish(self, rows: list[dict[str, Any]]) -> None:
        """Write ``summary.csv``, ``hibench.report`` and the plots of everything in ``results.jsonl``; print."""
        all_rows = read_rows(self.out_dir / "results.jsonl") if (self.out_dir / "results.jsonl").exists() else rows
        write_outputs(self.out_dir, all_rows, self.console)


def write_outputs(out_dir: Path, rows: list[dict[str, Any]], console: Console) -> list[Path]:
    """Summary table on ``console``; ``summary.csv``, ``hibench.report`` and PNG plots in ``out_dir``.

    The table, CSV and report are written first and in any case; without matplotlib (the optional extra
    ``plots``, which an install may leave out) the plots are skipped with a one-line note saying how to get them,
    instead of ending a finished benchmark in a traceback.
    """
    summaries = summarize_rows(rows)
    print_summary(console, summaries)
    write_csv(out_dir / "summary.csv", summaries)
    write_hibench_report(out_dir / "hibench.report", rows)
    try:
        import matplotlib  # noqa: F401 - only to know it is there: benchmarks.plots may be imported already

        from benchmarks.plots import plot_all
    except ImportError as exc:
        console.print("[yellow]note:[/] " + escape(f"plots skipped ({exc}): `pip install 'hpc-hadoop[plots]'` "
                                                   f"(matplotlib), then `hpc-hadoop bench plot {out_dir}`"),
                      soft_wrap=True, highlight=False)
        pngs: list[Path] = []
    else:
        pngs = plot_all(rows, out_dir)
    notes = sorted({n for r in rows for n in r.get("notes", [])})
    for note in notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"results: {out_dir}/results.jsonl, summary.csv, hibench.report, "
                  + ", ".join(p.name for p in pngs))
    return pngs
