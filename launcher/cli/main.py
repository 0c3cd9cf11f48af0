"""The ``hpc-hadoop`` command line (Click).

User errors print one line (``error: <file>: <field>: <what> (fix: ...)``) and exit with code 2;
cluster failures exit 1; a run exits with its report's exit code (0 succeeded or stopped, the failed step's code,
124 timed out, 130 interrupted, 143 cancelled: :data:`launcher.util.states.EXIT_CODES`).
"""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from launcher import __version__
from launcher.cli.common import (
    console,
    define_option,
    detect_scheduler,
    job_options,
    load,
    reports_errors,
    warn_properties,
)
from launcher.schedulers import SCHEDULERS

if TYPE_CHECKING:  # the job-file model (pydantic) is imported by the commands that load one, not by `--help`
    from launcher.config.spec import JobSpec
    from launcher.plan.cluster_plan import ClusterPlan
    from launcher.steps.commands import ResolvedStep

#: Commands defined in modules that ``submit``, ``run`` and ``render`` do not need: name -> ``"module:attribute"``,
#: imported when the command is run, listed (``--help``) or completed (:class:`LazyGroup`).
LAZY_COMMANDS = {
    **{name: f"launcher.cli.clusters:{attribute}" for name, attribute in (
        ("start", "start"), ("list", "list_clusters"), ("status", "status"), ("env", "env_command"),
        ("exec", "exec_command"), ("logs", "logs"), ("stop", "stop"), ("clean", "clean"),
        ("completion", "completion"), ("ui", "ui"), ("results", "results_command"))},
    "runtime": "launcher.cli.runtime:runtime",
    "config": "launcher.cli.layers:config_command",
    "examples": "launcher.cli.examples:examples_command",
}


class LazyGroup(click.Group):
    """A Click group some of whose commands are imported only when asked for (Click's documented lazy-loading
    pattern): ``hpc-hadoop submit`` does not import the interactive commands' module (:mod:`launcher.cli.clusters`)
    nor the ``runtime`` group's.

    Args:
        lazy_commands: name -> ``"module:attribute"`` of a :class:`click.Command`.
    """

    def __init__(self, *args: object, lazy_commands: dict[str, str] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, sorted (as :class:`click.Group` lists them), the lazy ones included."""
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing its module first if it is a lazy one; ``None`` if unknown."""
        if cmd_name in self.lazy_commands and cmd_name not in self.commands:
            module_name, _, attribute = self.lazy_commands[cmd_name].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            assert isinstance(command, click.Command), f"{self.lazy_commands[cmd_name]} is not a click command"
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, lazy_commands=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hpc-hadoop")
def main() -> None:
    """On-demand Hadoop (YARN + MapReduce) inside HPC batch allocations, on the parallel filesystem."""


def _run_here(spec: JobSpec, job_file: Path, overwrite: bool, run_dir: Path | None = None,
              hold: bool = False) -> int:
    from launcher.lifecycle.compose import run_here
    from launcher.lifecycle.progress import ConsoleObserver
    from launcher.lifecycle.report import summary

    report = run_here(spec, job_file, overwrite=overwrite, run_dir=run_dir, hold=hold,
                      observer=ConsoleObserver(console),
                      announce=lambda plan: console.print(f"cluster {plan.cluster_id}: {len(plan.nodes)} node(s), "
                                                          f"run directory {plan.run_dir}"),
                      taken=lambda line: console.print(line, soft_wrap=True, markup=False, highlight=False))
    try:
        summary(report, console)
    except OSError:  # standard output's file is on a filesystem that is gone (a batch job's): run.json has it all
        if not report.lost_filesystem:
            raise
    return report.exit_code


def _render_submitted(loaded: JobSpec, job_file: Path, overwrite: bool,
                      notes: list[str]) -> tuple[ClusterPlan, list[ResolvedStep]]:
    """``render``'s plan of a submitted job: every check ``submit`` makes, on the batch system's stand-in allocation
    (``render``'s entrance of :func:`launcher.lifecycle.front.front_door`: the dialect ``submit`` would settle,
    assumed with a note in ``notes`` where it cannot be asked), and the batch script it would write (printed); the
    YARN sizes the allocation decides are added to ``notes``."""
    from launcher.lifecycle.front import front_door

    front = front_door("render", loaded, job_file, overwrite=overwrite, notes=notes)  # errors before any output
    if front.spec.scheduler != "local":
        from launcher.lifecycle.submit import preview_notes, preview_script

        click.echo(f"==> batch script <==\n{preview_script(front.spec)}")
        notes += preview_notes(front.plan)  # the YARN sizes the allocation decides when the job runs
    return front.plan, front.steps


def _render_inside(loaded: JobSpec, job_file: Path, overwrite: bool) -> tuple[ClusterPlan, list[ResolvedStep]]:
    """``render --run``'s plan (its entrance of :func:`launcher.lifecycle.front.front_door`): the allocation this
    process is in, read as ``run`` reads it, what ``run`` takes from it (printed:
    :func:`launcher.schedulers.inside.take_allocation`) and ``run``'s checks on its real nodes.

    Raises:
        UserError: not inside an allocation of the job's batch system, or what ``run`` would refuse.
    """
    from launcher.lifecycle.front import front_door

    front = front_door("render-run", loaded, job_file, overwrite=overwrite)
    click.echo(f"==> allocation <==\n{front.taken}")
    return front.plan, front.steps


@main.command()
@job_options
@click.option("--overwrite", is_flag=True, help="Replace step output directories that already exist.")
@click.option("--wait/--no-wait", default=False, help="Follow a batch job to its end and exit with its status.")
@reports_errors
def submit(job_file: Path, scheduler: str | None, nodes: int | None, walltime: str | None, site: str | None,
           sets: tuple[str, ...], defines: tuple[str, ...], overwrite: bool, wait: bool) -> None:
    """Run JOB_FILE on a new allocation (the local backend runs it here and now)."""
    spec = load(job_file, scheduler, nodes, walltime, site, sets, defines=defines)
    if spec.scheduler == "local":
        sys.exit(_run_here(spec, job_file, overwrite))
    from launcher.lifecycle.submit import submit_batch

    code, _, _ = submit_batch(spec, job_file, overwrite=overwrite, wait=wait, console=console)
    sys.exit(code)


@main.command()
@job_options
@click.option("--overwrite", is_flag=True, help="Replace step output directories that already exist.")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Use this cluster directory (made by `submit`/`start`) instead of a new one.")
@click.option("--hold", is_flag=True, help="After the steps, keep the cluster up until `hpc-hadoop stop`.")
@reports_errors
def run(job_file: Path, scheduler: str | None, nodes: int | None, walltime: str | None, site: str | None,
        sets: tuple[str, ...], defines: tuple[str, ...], overwrite: bool, run_dir: Path | None, hold: bool) -> None:
    """Run JOB_FILE on the allocation this process is in (call it from your batch script).

    The scheduler is detected from the environment (SLURM_JOB_ID, PBS_JOBID, JOB_ID + PE_HOSTFILE), over the job
    file's; --scheduler wins over both. Every node of the allocation is used (the job file's nodes is a minimum)
    and the allocation's walltime replaces the job file's: the first line says what was taken.
    """
    if run_dir is not None:  # before its job.yaml is read: it and every level above it must be yours
        from launcher.plan.cluster_plan import check_cluster_directory

        check_cluster_directory(run_dir, field="--run-dir", missing_ok=True)
    elif hold:  # a held cluster is reached only through the index (`list`, `env`, `stop`)
        from launcher.lifecycle.clusters.index import check_index

        check_index()
    spec = load(job_file, scheduler or detect_scheduler(), nodes, walltime, site, sets, require_steps=not hold,
                defines=defines)
    sys.exit(_run_here(spec, job_file, overwrite, run_dir, hold=hold))


@main.command()
@job_options
@click.option("--overwrite", is_flag=True, help="Check as `submit --overwrite`: existing outputs are replaced.")
@click.option("--run", "inside", is_flag=True, help="Show what `run` would do in the allocation this process is in "
              "(detected as `run` detects it), instead of the batch script `submit` would write.")
@reports_errors
def render(job_file: Path, scheduler: str | None, nodes: int | None, walltime: str | None, site: str | None,
           sets: tuple[str, ...], defines: tuple[str, ...], overwrite: bool, inside: bool) -> None:
    """Print every file a run of JOB_FILE would generate, what it will do to each striped directory, and its
    steps; start nothing.

    Every check `submit` makes comes first (a job file with no steps, as `start` takes, is rendered too). With
    --run, inside a batch job: what `run` takes from the allocation, then the files on its real nodes.
    """
    from launcher.config.spec import uses_spark
    from launcher.filesystems import striping_plan
    from launcher.render.config import render_config

    notes: list[str] = []
    if inside:
        plan, steps = _render_inside(load(job_file, scheduler or detect_scheduler(), nodes, walltime, site, sets,
                                          require_steps=False, defines=defines), job_file, overwrite)
    else:
        plan, steps = _render_submitted(load(job_file, scheduler, nodes, walltime, site, sets, require_steps=False,
                                             defines=defines), job_file, overwrite, notes)
    spec = plan.spec
    for name, text in render_config(plan, notes).items():
        click.echo(f"==> conf/{name} <==\n{text}")
    if uses_spark(plan.spec):
        from launcher.render.spark import discover_spark, render_spark_defaults

        click.echo(f"==> spark-conf/spark-defaults.conf <==\n{render_spark_defaults(plan, discover_spark(spec))}")
    click.echo("==> filesystem <==\n" + "\n".join(striping_plan(plan)))
    if notes:
        click.echo("==> notes <==\n" + "\n".join(notes))
    click.echo("==> steps <==")
    for step in steps:
        click.echo(f"{step.index}. {step.name}: {shlex.join(step.argv)}")


@main.command()
@click.argument("job_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--nodes", type=int, help="Number of nodes (as `render`, `submit` and `start` take it).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a job-file field.")
@click.option("--overwrite", is_flag=True, help="Check as `submit --overwrite`: existing outputs are replaced.")
@define_option
@reports_errors
def doctor(job_file: Path | None, nodes: int | None, sets: tuple[str, ...], overwrite: bool,
           defines: tuple[str, ...]) -> None:
    """Check Java, the Hadoop runtime, the filesystem, hostname and ports; with JOB_FILE also everything
    `submit` checks (a root the nodes share, jars, inputs, outputs, memory), as `fail` lines."""
    from launcher.cli.doctor import run_checks
    from launcher.config.load import load_spec

    if job_file is not None:
        spec, _ = load_spec(job_file, sets=list(sets), defines=list(defines), require_steps=False,
                            overrides={"nodes": nodes})
    else:
        spec, _ = load_spec(None, sets=list(sets), data={"name": "doctor", "steps": [{"example": "pi"}]},
                            defines=list(defines), overrides={"nodes": nodes})
    warn_properties(spec, defines)
    checks = run_checks(spec, job_file, overwrite=overwrite)
    colors = {"ok": "green", "warn": "yellow", "fail": "red"}
    for check in checks:
        line = f"[{colors[check.status]}]{check.status:>4}[/] {check.name:<15} {check.detail}"
        if check.fix:
            line += f"\n     {'':<15} fix: {check.fix}"
        console.print(line, soft_wrap=True)
    sys.exit(1 if any(c.status == "fail" for c in checks) else 0)


@main.command()
def reference() -> None:
    """Print the job-file reference (Markdown, generated from the schema)."""
    from launcher.config.docgen import reference as generate

    click.echo(generate(), nl=False)


@main.command()
@reports_errors
def sites() -> None:
    """List the site presets: the site's own (site-configs/ of $HPC_HADOOP_SITE_DIR, else /etc/hpc-hadoop) and the
    shipped ones; a site's preset named as a shipped one replaces it, and the list says so."""
    from launcher.config.load import preset_listing

    for preset in preset_listing():
        lines = preset.path.read_text().splitlines()
        first = next((line.lstrip("# ").strip() for line in lines if line.startswith("#")), "")
        if preset.origin == "site":
            first = f"[site: {preset.path}{'; replaces the shipped one' if preset.shadows else ''}] {first}"
        click.echo(f"{preset.name:<28} {first}".rstrip())


@main.group()
def bench() -> None:
    """Benchmarks: dd, TestDFSIO, TeraSort and KMeans on MapReduce and on Spark, latency, throughput; sweeps,
    repeats, 95% CIs, plots."""


@bench.command("run")
@click.argument("bench_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--workload", "workloads", multiple=True, help="dd, dfsio, terasort, spark-terasort, kmeans, "
              "spark-kmeans, latency, throughput (repeatable).")
@click.option("--profile", help="Scale profile: tiny, small, large, huge.")
@click.option("--repeats", type=int, help="Runs of each point (default 3).")
@click.option("--nodes", "nodes", type=int, multiple=True, help="Node counts to sweep (repeatable).")
@click.option("--stripe-count", "stripe_count", type=int, multiple=True, help="Stripe counts to sweep.")
@click.option("--files", "files", type=int, multiple=True, help="Numbers of files to sweep (dd, dfsio).")
@click.option("--file-size", "file_size", multiple=True, help="File sizes to sweep, e.g. 8M (dd, dfsio).")
@click.option("--shuffle", "shuffle", multiple=True, type=click.Choice(["http", "shared-fs"]),
              help="TeraSort shuffles to sweep (hadoop.shuffle; repeatable).")
@click.option("--root", help="Filesystem root for the clusters and the data (filesystem.root).")
@click.option("--scheduler", type=click.Choice(list(SCHEDULERS)), help="Batch system.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a cluster job-spec field.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("bench-results"),
              show_default=True, help="Directory for results.jsonl, summary.csv, hibench.report, PNGs.")
@click.option("--dry-run", is_flag=True, help="Print the points, clusters, striping commands and number of runs; "
              "start nothing.")
@reports_errors
def bench_run(bench_file: Path | None, workloads: tuple[str, ...], profile: str | None, repeats: int | None,
              nodes: tuple[int, ...], stripe_count: tuple[int, ...], files: tuple[int, ...],
              file_size: tuple[str, ...], shuffle: tuple[str, ...], root: str | None, scheduler: str | None,
              sets: tuple[str, ...], out_dir: Path, dry_run: bool) -> None:
    """Run BENCH_FILE (or the workloads given as options); exit 1 if a run failed, 2 if the bench is refused
    (e.g. a stripe_count sweep on a filesystem that cannot stripe) before anything runs."""
    from benchmarks.harness import Harness, load_bench

    extra = [f"filesystem.root={root}"] if root else []
    extra += [f"scheduler={scheduler}"] if scheduler else []
    spec = load_bench(bench_file, workloads=workloads, profile=profile, repeats=repeats, nodes=nodes,
                      stripe_count=stripe_count, files=files, file_size=file_size, shuffle=shuffle)
    harness = Harness(spec, out_dir, console=console, sets=(*extra, *sets), bench_file=bench_file)
    if dry_run:
        for line in harness.dry_run():
            click.echo(line)
        return
    harness.run()
    sys.exit(1 if harness.failures else 0)


@bench.command("plot")
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@reports_errors
def bench_plot(results_dir: Path) -> None:
    """Summary, CSV, hibench.report and PNG plots again from RESULTS_DIR/results.jsonl."""
    from benchmarks.harness import write_outputs
    from benchmarks.results import read_rows

    write_outputs(results_dir, read_rows(results_dir), console)


if __name__ == "__main__":
    main()
