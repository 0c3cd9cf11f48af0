"""The interactive commands: ``start``, ``list``, ``status``, ``env``, ``exec``, ``logs``, ``results``, ``ui``,
``stop``, ``clean``, and ``completion`` (shell completion scripts from Click).

``ID`` is a cluster id, a unique prefix of one, or its batch job id; with exactly one cluster running it may be
left out, in every command (:func:`launcher.lifecycle.clusters.status.find`); shell completion offers the ids of the
index (:func:`complete_ids`). The logic lives in :mod:`launcher.lifecycle.clusters` and
:mod:`launcher.lifecycle.start`; these are thin wrappers. Each command that looks at clusters keeps what the looks
learned (:func:`_keep`: :func:`launcher.lifecycle.clusters.index.record`), as the derivation itself writes nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from launcher.cli.common import console, detect_scheduler, job_options, load, reports_errors
from launcher.util.errors import UserError
from launcher.util.states import ClusterState, RunState, StepState, exit_code_of

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from launcher.cli.webproxy import WebProxy
    from launcher.config.spec import JobSpec
    from launcher.lifecycle.clusters.results import StepOutputs
    from launcher.lifecycle.clusters.status import ClusterStatus
    from launcher.lifecycle.report import RunReport
    from launcher.plan.cluster_plan import ClusterPlan


def _age(seconds: float | None) -> str:
    """``3m``, ``2h05m``, ``4d03h`` (``-`` when unknown)."""
    if seconds is None:
        return "-"
    seconds = max(0, int(seconds))
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s" if seconds < 600 else f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


#: The colour ``status`` shows each state in.
STATE_COLORS: dict[ClusterState, str] = {
    ClusterState.READY: "green", ClusterState.RUNNING: "green", ClusterState.STARTING: "cyan",
    ClusterState.PENDING: "cyan", ClusterState.STOPPING: "yellow", ClusterState.STOPPED: "dim",
    ClusterState.SUCCEEDED: "dim", ClusterState.LOST: "red", ClusterState.FAILED: "red",
    ClusterState.BRINGUP_FAILED: "red", ClusterState.TIMED_OUT: "red", ClusterState.INTERRUPTED: "yellow",
    ClusterState.CANCELLED: "dim", ClusterState.GONE: "dim", ClusterState.UNREACHABLE: "yellow",
    ClusterState.UNKNOWN: "yellow"}


def complete_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Shell completion of an ``ID`` argument: the cluster ids of the user's index that start with what is typed,
    newest first, each with its directory as help (read from the index only: no batch system is asked); for
    ``exec``, only as its first word."""
    from click.shell_completion import CompletionItem

    from launcher.lifecycle.clusters.index import index_entries

    if param.nargs == -1 and param.name == "args" and ctx.params.get("args"):
        return []  # `exec ID -- COMMAND...`: only the first word is an ID
    return [CompletionItem(e.cluster_id, help=e.run_dir) for e in reversed(index_entries())
            if e.cluster_id.startswith(incomplete)]


def _keep(status: ClusterStatus) -> None:
    """Keep what a look at a cluster learned (:func:`launcher.lifecycle.clusters.index.record`: an end the batch
    system told, since when it has not answered, a final record kept on this node written back), so that the next
    command need not ask again."""
    from launcher.lifecycle.clusters.index import record

    record(status.observed)


def find_cluster(cluster: str | None, *, announce: bool = True) -> ClusterStatus:
    """The cluster ``cluster`` names (:func:`launcher.lifecycle.clusters.status.find`, what the looks learned kept:
    :func:`_keep`); without an ID, the one running cluster, named on stderr unless not ``announce`` (stdout stays the
    command's own: ``eval "$(hpc-hadoop env)"``; ``stop`` names it in its question or its first line).

    Raises:
        UserError: see :func:`~launcher.lifecycle.clusters.status.find`.
    """
    from launcher.lifecycle.clusters.status import find

    found = find(cluster, seen=_keep)
    if cluster is None and announce:
        click.echo(f"cluster {found.cluster_id} ({found.state}: the only one running)", err=True)
    return found


#: The ``[ID]`` argument of the commands about one cluster, with completion of the ids.
id_argument = click.argument("cluster", metavar="[ID]", required=False, shell_complete=complete_ids)


def _show(status: ClusterStatus) -> None:
    """Print one cluster's status as ``key: value`` lines; a cluster that is over shows no web addresses (nothing
    answers there any more) but where its logs and job history are kept."""
    color = STATE_COLORS.get(status.state, "white")
    lines = [("cluster", status.cluster_id), ("state", f"[{color}]{status.state}[/]"),
             ("scheduler", f"{status.scheduler}" + (f" job {status.job_id}" if status.job_id else "")),
             ("nodes", ", ".join(status.nodes or []) or "-"), ("head node", status.head or "-"),
             ("age", _age(time.time() - status.created if status.created else None))]
    if status.active:
        lines += [("walltime left", _age(status.walltime_left_s)), ("ResourceManager", status.rm_web or "-"),
                  ("JobHistory", status.jhs_web or "-"), ("run directory", status.run_dir)]
    else:
        lines += [("run directory", status.run_dir)]
        if status.state is not ClusterState.GONE:
            lines += [("logs", f"{status.run_dir}/logs (hpc-hadoop logs {status.cluster_id})"),
                      ("job history", f"{status.run_dir}/history")]
    if status.detail:
        lines.append(("detail", status.detail))
    for key, value in lines:
        console.print(f"{key + ':':<16} {value}", soft_wrap=True)


@click.command()
@job_options
@click.option("--overwrite", is_flag=True, help="Replace step output directories that already exist.")
@click.option("--timeout", type=float, help="Give up waiting after this many seconds (the cluster stays "
              "queued or starting; `hpc-hadoop stop` cancels it).")
@reports_errors
def start(job_file: Path, scheduler: str | None, nodes: int | None, walltime: str | None, site: str | None,
          sets: tuple[str, ...], defines: tuple[str, ...], overwrite: bool, timeout: float | None) -> None:
    """Bring a cluster up for interactive use and return once it is ready.

    Outside an allocation the job is submitted to the batch system; on the local backend or inside an
    allocation (salloc, a batch script) the cluster starts here, detached. The job file's steps, if any,
    run once it is up; it then stays up until `hpc-hadoop stop` or the walltime.
    """
    from launcher.lifecycle.start import failure_tail, start_batch, start_detached, wait_until_up

    detected = detect_scheduler()
    spec = _start_spec(job_file, detected, scheduler, nodes, walltime, site, sets, defines)
    if spec.scheduler == "local" or spec.scheduler == detected:
        run_dir = start_detached(spec, job_file, overwrite=overwrite)
        console.print(f"starting cluster {run_dir.name} here ({spec.scheduler}); output: {run_dir}/start.out",
                      soft_wrap=True)
    else:
        run_dir = start_batch(spec, job_file, overwrite=overwrite, console=console)
    try:
        status = wait_until_up(run_dir, console, timeout=timeout)
    except KeyboardInterrupt:
        console.print(f"\nnot waiting any more: cluster {run_dir.name} is still starting "
                      f"(`hpc-hadoop stop {run_dir.name}` cancels it)")
        sys.exit(130)
    if status.state is ClusterState.CANCELLED:
        console.print(f"cluster {status.cluster_id}: cancelled ({status.detail}); nothing ran", soft_wrap=True)
        sys.exit(exit_code_of(RunState.CANCELLED))  # 143, as submit --wait
    if not status.state.up:
        if status.state is ClusterState.UNKNOWN:
            console.print(f"cluster {status.cluster_id} is in an unknown state: {status.detail}; "
                          f"`hpc-hadoop status {status.cluster_id}` follows it, `hpc-hadoop stop` stops it",
                          soft_wrap=True)
            sys.exit(1)
        if status.active:
            console.print(f"cluster {status.cluster_id} is still {status.state} after {timeout:.0f} s; "
                          f"`hpc-hadoop status {status.cluster_id}` follows it, `hpc-hadoop stop` cancels it")
            sys.exit(1)
        console.print(f"[red]cluster {status.cluster_id} did not come up: {status.state}[/] "
                      f"{status.detail}\n{failure_tail(run_dir)}", soft_wrap=True)
        sys.exit(1)
    cid = status.cluster_id
    console.print(
        f"[green]cluster {cid} is up[/] on {len(status.nodes or [])} node(s): {', '.join(status.nodes or [])}"
        + (f" ({status.scheduler} job {status.job_id})" if status.job_id else "")
        + f"\nResourceManager: {status.rm_web}\nJobHistory:      {status.jhs_web}"
        + f"\nuse it:   eval \"$(hpc-hadoop env {cid})\"   then yarn node -list, hadoop jar ..."
        + f"\n     or   hpc-hadoop exec {cid} -- yarn node -list"
        + (f"\nJupyterLab (notebooks in {spec.notebook.dir}): hpc-hadoop ui {cid} prints its URL"
           if spec.notebook is not None else "")
        + f"\nstop it:  hpc-hadoop stop {cid}", soft_wrap=True)


def _start_spec(job_file: Path, detected: str | None, scheduler: str | None, nodes: int | None,
                walltime: str | None, site: str | None, sets: tuple[str, ...], defines: tuple[str, ...]) -> JobSpec:
    """The job file as ``start`` runs it: inside an allocation of ``detected`` (:func:`detect_scheduler`), a job file
    that names no batch system (or ``local``) is the allocation's, checked against it (as ``run`` does), never against
    the ``local`` backend the loader assumes (``nodes: 2`` is refused there).

    Raises:
        UserError: the job file is bad, or it (or ``--scheduler``) names another batch system than the allocation's.
    """
    try:
        spec = load(job_file, scheduler, nodes, walltime, site, sets, require_steps=False, defines=defines)
    except UserError:
        if scheduler is not None or detected is None:
            raise
        spec = load(job_file, detected, nodes, walltime, site, sets, require_steps=False, defines=defines)
    if spec.scheduler != "local" and detected and spec.scheduler != detected:
        raise UserError(f"this process runs inside a {detected} allocation but the job asks for "
                        f"{spec.scheduler}", file=str(job_file), field="scheduler",
                        fix=f"use --scheduler {detected}, or start from a login node")
    if scheduler is None and detected and spec.scheduler == "local":
        spec = load(job_file, detected, nodes, walltime, site, sets, require_steps=False, defines=defines)
    return spec


@click.command("list")
@click.option("--active", is_flag=True, help="Only clusters that are queued, starting or up.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of a table.")
def list_clusters(active: bool, as_json: bool) -> None:
    """List your clusters (from ~/.local/state/hpc-hadoop): id, job, state, nodes, head, age, walltime
    left, web addresses. Clusters whose batch job ended without a final report show as `lost`."""
    from launcher.lifecycle.clusters.status import statuses

    shown = [s for s in statuses(seen=_keep) if s.active or not active]
    if as_json:
        for status in shown:
            click.echo(json.dumps(status.to_dict()))
        return
    if not shown:
        console.print("no clusters" + (" running" if active else ""))
        return
    now = time.time()
    rows = [("ID", "JOB", "STATE", "NODES", "HEAD", "AGE", "LEFT", "RESOURCEMANAGER", "JOBHISTORY")]
    for s in shown:
        rows.append((s.cluster_id, f"{s.scheduler}:{s.job_id}" if s.job_id else s.scheduler, s.state,
                     str(len(s.nodes)) if s.nodes else "-", s.head or "-",
                     _age(now - s.created if s.created else None), _age(s.walltime_left_s) if s.active else "-",
                     s.rm_web if s.active and s.rm_web else "-", s.jhs_web if s.active and s.jhs_web else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:  # plain columns, like squeue: nothing truncated, easy to grep
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


@click.command()
@id_argument
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
@reports_errors
def status(cluster: str | None, as_json: bool) -> None:
    """Show one cluster's state, nodes, walltime left and web addresses (a cluster that is over: where its logs
    and job history are)."""
    found = find_cluster(cluster)
    if as_json:
        click.echo(json.dumps(found.to_dict(), indent=2))
    else:
        _show(found)


@click.command("env")
@id_argument
@reports_errors
def env_command(cluster: str | None) -> None:
    """Print the `export` lines that point `hadoop`, `yarn` and `mapred` at a cluster:
    eval "$(hpc-hadoop env ID)"."""
    from launcher.render.clients import client_environment, export_lines

    plan = _plan_of(cluster)
    for line in export_lines(client_environment(plan)):
        click.echo(line)


@click.command("exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, required=True, type=click.UNPROCESSED, metavar="[ID --] COMMAND...",
                shell_complete=complete_ids)
@reports_errors
def exec_command(args: tuple[str, ...]) -> None:
    """Run a command (yarn, hadoop, mapred, java -cp $HPC_HADOOP_CLASSPATH ...) with a cluster's
    environment; exits with the command's exit code. `hpc-hadoop exec ID -- yarn node -list`."""
    from launcher.render.clients import apply_environment, client_environment

    cluster, command = None, list(args)
    if "--" in command:
        split = command.index("--")
        if split > 1:
            raise UserError(f"expected at most one ID before `--`, got {' '.join(command[:split])}",
                            field="ID", fix="hpc-hadoop exec ID -- COMMAND...")
        cluster, command = (command[0] if split else None), command[split + 1:]
    if not command:
        raise UserError("no command to run", field="COMMAND", fix="hpc-hadoop exec ID -- yarn node -list")
    plan = _plan_of(cluster, need_up=True)
    env = apply_environment(client_environment(plan))
    try:
        code = subprocess.call(command, env=env)
    except FileNotFoundError:
        raise UserError(f"command not found: {command[0]}", field="COMMAND",
                        fix="hadoop, yarn and mapred are provided; give a path for others") from None
    sys.exit(code)


@click.command()
@id_argument
@click.option("--node", help="Only this node's logs.")
@click.option("--daemon", help="Only this daemon: resourcemanager, nodemanager, historyserver, namenode, "
              "datanode, agent, fanout.")
@click.option("-n", "--lines", type=int, help="Last lines of each log (with --app: of each container log file); "
              "0 = all.  [default: 40; with --app: all]")
@click.option("--list", "list_only", is_flag=True, help="Only list the log files.")
@click.option("--app", metavar="APP|STEP", help="The container logs of one application instead (an id "
              "application_..., or a step's name or number from run.json), as YARN aggregated them.")
@reports_errors
def logs(cluster: str | None, node: str | None, daemon: str | None, lines: int | None, list_only: bool,
         app: str | None) -> None:
    """Show a cluster's daemon logs (logs/<node>/<daemon>.log in its run directory), running or not; with
    --app, the container logs (stdout, stderr, syslog of the ApplicationMaster and every task) of one
    application or job step."""
    from launcher.plan.cluster_plan import check_cluster_directory

    found = find_cluster(cluster)
    check_cluster_directory(found.run_dir, field="ID", missing_ok=True)  # no other user's files shown as its logs
    if app is not None:
        sys.exit(show_container_logs(_plan_of(found.cluster_id), app, lines=lines or 0,
                                     running=found.state.up))
    files = daemon_logs(Path(found.run_dir), node=node, daemon=daemon)
    if not files:
        raise UserError(f"no logs match in {found.run_dir}/logs", field="--node/--daemon",
                        fix="see `hpc-hadoop logs ID --list`")
    for path in files:
        if list_only:
            click.echo(f"{path}  {path.stat().st_size} bytes")
            continue
        text = path.read_text(errors="replace").splitlines()
        click.echo(f"==> {path} <==")
        last = 40 if lines is None else lines
        click.echo("\n".join(text[-last:] if last > 0 else text))


@click.command("results")
@id_argument
@click.argument("step", metavar="[STEP]", required=False)
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=20, show_default=True,
              help="First lines of each step's output; 0 = all.")
@reports_errors
def results_command(cluster: str | None, step: str | None, count: int) -> None:
    """Show where a cluster's step outputs are and their first lines: text parts (part-r-00000, part-*) merged in
    order, SequenceFiles and compressed files through Hadoop's `hadoop fs -text`; running or stopped. STEP: a step's
    number or name (as `logs --app`); without it, every step. Exits 1 when an output is not there (yet)."""
    from launcher.lifecycle.clusters.results import choose_step, steps_of

    found = find_cluster(cluster)
    plan = _plan_of(found.cluster_id)  # its directory checked as yours: its bin/hadoop reads SequenceFiles
    steps = steps_of(plan, _read_report(Path(found.run_dir)))
    chosen = [choose_step(steps, step, where=f"{found.run_dir}/run.json")] if step is not None else steps
    if not chosen:
        click.echo(f"cluster {found.cluster_id} has no steps ({found.state})")
        sys.exit(1)
    codes = [_show_results(plan, s, count, active=found.active) for s in chosen]
    sys.exit(max(codes))


def _show_results(plan: ClusterPlan, step: StepOutputs, count: int, *, active: bool) -> int:
    """Print one step's outputs: a ``==> step N name: PATH (files, size) <==`` line and its first ``count`` lines
    (:func:`launcher.lifecycle.clusters.results.first_lines`), each output in turn; or one line saying it declares
    none, has not ended (``active``: the cluster is up, so it runs or is still to come) or left nothing there.

    Returns:
        0 when every output was shown (or it declares none), 1 when one is not there (yet).
    """
    from launcher.lifecycle.clusters.results import first_lines, output_files
    from launcher.util.units import format_size

    head = f"==> step {step.number} {step.name}:"
    if not step.outputs:
        click.echo(f"{head} no output; what it printed: {step.log} <==")
        return 0
    if step.state is None:
        started = Path(step.log).exists()
        click.echo(f"{head} {', '.join(step.outputs)}: "
                   + ("still running: its output is not complete yet" if started and active else
                      "has not started yet" if active else
                      "did not end: the run ended while it ran" if started else
                      "never ran: the run ended before it") + " <==")
        return 1
    shown = 0
    for output in step.outputs:
        path = Path(output)
        files = output_files(path) if path.exists() else []
        if not files:
            click.echo(f"{head} {output}: " + ("holds no part files" if path.exists() else "does not exist")
                       + f" (the step {step.state}) <==")
            continue
        size = sum(f.stat().st_size for f in files)
        parts = f"{len(files)} file{'s' if len(files) != 1 else ''}, " if path.is_dir() else ""
        partial = "" if step.state == StepState.SUCCEEDED else f"; the step {step.state}: it may be partial"
        click.echo(f"{head} {output} ({parts}{format_size(size)}{partial}) <==")
        lines, more = first_lines(plan, files, count)
        for line in lines:
            click.echo(line)
        if more:
            click.echo(f"... (the first {count} lines; -n 0 shows all)")
        shown += 1
    return 0 if shown == len(step.outputs) else 1
#: Seconds between two looks at the cluster's state by ``ui --while-up``.
UI_WATCH_S = 10.0


@click.command()
@id_argument
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default="a free one",
              help="Port of the proxy on 127.0.0.1 (the same on the laptop's end of the tunnel).")
@click.option("--bind", metavar="ADDRESS", default="127.0.0.1", show_default=True,
              help="Address or host name to listen on: this node's, for Open OnDemand's proxy (the ondemand/ app); "
                   "the default is reached only through ssh.")
@click.option("--base-url", metavar="PATH", default="/", show_default=True,
              help="Path to serve under (Open OnDemand: /rnode/<host>/<port>/): every link, redirect and cookie "
                   "the proxy writes stays under it.")
@click.option("--password-file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="A 0600 file of yours whose first line is the password a browser POSTs to <base-url>login "
                   "(Open OnDemand's connection password), instead of the printed token.")
@click.option("--while-up", is_flag=True, help="Stop serving once the cluster is no longer up (its teardown "
              "began or it ended): a batch job that serves the UIs ends with its cluster.")
@reports_errors
def ui(cluster: str | None, port: int, bind: str, base_url: str, password_file: Path | None,
       while_up: bool) -> None:
    """Serve every web UI of a running cluster (ResourceManager, NodeManagers, JobHistoryServer, the applications'
    UIs) on one port of this login node, for the browser of your laptop: prints the one `ssh -L` command to run
    there and the URL to open (it carries a secret token, once), and JupyterLab's when the cluster has one
    (`hpc-hadoop notebook`), then serves until Ctrl-C.

    Inside an Open OnDemand job (the ondemand/ app): --bind this node, --base-url /rnode/<host>/<port>/,
    --password-file the session's password, --while-up."""
    import errno

    from launcher.cli.webproxy import (
        WebProxy,
        cluster_endpoints,
        login_host,
        notebook_headers,
        read_password_file,
        ssh_command,
        upstream_auth,
    )
    from launcher.util.network import base_path

    try:
        base = base_path(base_url)
    except ValueError as exc:
        raise UserError(str(exc), field="--base-url", fix="e.g. --base-url /rnode/$host/$port/") from None
    password = read_password_file(password_file) if password_file is not None else None
    address = _bind_address(bind)
    plan = _plan_of(cluster, need_up=True)
    endpoints = cluster_endpoints(plan)
    try:
        proxy = WebProxy(endpoints, f"{plan.master.address}:{plan.ports.rm_web}", port=port,
                         auth=upstream_auth(plan), notebook=notebook_headers(plan), bind=address, base=base,
                         password=password)
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
            raise
        raise UserError(f"port {port} of {address} is taken" if exc.errno == errno.EADDRINUSE else
                        f"{address} is not an address of this node", field="--port" if exc.errno == errno.EADDRINUSE
                        else "--bind", fix="leave --port out (a free port is chosen) or pick another"
                        if exc.errno == errno.EADDRINUSE else "give this node's name or address") from None
    notebook = proxy.notebook_url
    lab = f"JupyterLab:           {notebook}\n" if notebook else ""
    mismatch = proxy.notebook_mismatch()
    if mismatch:
        console.print(f"[yellow]warning:[/] {mismatch}", soft_wrap=True)
    if password is not None:
        click.echo(f"cluster {plan.cluster_id}: its web UIs on {address}:{proxy.port} under {base} (only with the "
                   f"password of {password_file})" + (f"\nJupyterLab: {notebook}" if notebook else ""), nl=True)
    elif address == "127.0.0.1":
        login = login_host()
        click.echo(f"cluster {plan.cluster_id}: its web UIs on 127.0.0.1:{proxy.port} of {login} (only with the "
                   f"token)\non your laptop, run:  {ssh_command(proxy.port, login)}\n{lab}"
                   f"then open:            {proxy.url}", nl=True)
    else:
        click.echo(f"cluster {plan.cluster_id}: its web UIs on {address}:{proxy.port} (only with the token)\n{lab}"
                   f"open:  {proxy.url}", nl=True)
    sys.stdout.flush()
    if while_up:
        _serve_while_up(proxy, plan.cluster_id)
    try:
        proxy.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        proxy.close()


def _bind_address(bind: str) -> str:
    """The IPv4 address ``ui --bind`` names (an address as it is, a host name resolved).

    Raises:
        UserError: the name does not resolve.
    """
    from launcher.util.network import resolve

    try:
        return resolve(bind)
    except OSError:
        raise UserError(f"{bind} does not resolve to an address", field="--bind",
                        fix="give this node's host name or IPv4 address") from None


def _serve_while_up(proxy: WebProxy, cluster_id: str) -> None:
    """Stop ``proxy`` (serving in this thread) once its cluster is no longer up, looked at every :data:`UI_WATCH_S`
    seconds (:func:`launcher.util.polling.poll`) on a thread of its own; what stopped it is printed. A cluster the
    index no longer finds (a few looks in a row) counts as ended."""
    import threading

    from launcher.util import polling

    def watch() -> None:
        try:
            state = str(polling.poll(lambda: find_cluster(cluster_id, announce=False), done=lambda s: not s.state.up,
                                     interval=UI_WATCH_S, max_interval=UI_WATCH_S, errors=(UserError,)).value.state)
        except UserError as gone:
            state = f"not found ({gone})"
        click.echo(f"cluster {cluster_id} is {state}: the proxy stops")
        sys.stdout.flush()
        proxy.server.shutdown()

    threading.Thread(target=watch, name="ui-while-up", daemon=True).start()


@click.command()
@id_argument
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds to wait for the teardown before cancelling the batch job.")
@click.option("--yes", is_flag=True, help="Without an ID: stop the one running cluster without asking.")
@reports_errors
def stop(cluster: str | None, timeout: float, yes: bool) -> None:
    """Stop a cluster: stop its daemons, release the allocation; logs and job history are kept.

    Without an ID, the one running cluster, after asking on a terminal (without a terminal: only with --yes).
    The cluster tears itself down first (a cluster from `submit` as one from `start`); the batch job is cancelled
    only if it is still there afterwards, or if the cluster had already ended while the job had not."""
    from launcher.lifecycle.clusters.stop import cancel_leftover, request_stop

    found = find_cluster(cluster, announce=False)
    if cluster is None and not yes:
        _confirm_stop(found)
    if not found.active:
        was, failure = cancel_leftover(found)
        if failure:
            console.print(f"[red]cluster {found.cluster_id} is {found.state}, but its {found.scheduler} job "
                          f"{found.job_id} may still be there and the batch system did not answer the cancel:[/] "
                          f"{failure}", soft_wrap=True)
            sys.exit(1)
        console.print(f"cluster {found.cluster_id} is already {found.state}"
                      + (f"; its {found.scheduler} job {found.job_id} was still {was.value}: cancelled" if was else ""),
                      soft_wrap=True)
        return
    console.print(f"stopping cluster {found.cluster_id} ({found.state}"
                  + (f": {found.detail}" if found.state is ClusterState.UNKNOWN else "") + ")", soft_wrap=True)
    after = request_stop(found, timeout=timeout, on_wait=lambda text: console.print(f"  {text}", soft_wrap=True))
    if after.active:
        console.print(f"[red]cluster {after.cluster_id} is still {after.state}[/]"
                      + (f": {after.detail}" if after.detail else "")
                      + f"; the teardown is requested in {after.run_dir}; run `hpc-hadoop stop {after.cluster_id}` "
                        "again to cancel its job once the batch system answers", soft_wrap=True)
        sys.exit(1)
    report = _read_report(Path(after.run_dir))
    teardown = report.teardown_s if report else None
    console.print(f"cluster {after.cluster_id}: {after.state}"
                  + (f" (teardown {teardown:.1f} s)" if teardown else "")
                  + f"; logs and history kept in {after.run_dir}", soft_wrap=True)


@click.command()
@click.argument("clusters", metavar="[ID]...", nargs=-1, shell_complete=complete_ids)
@click.option("--yes", is_flag=True, help="Do not ask before deleting.")
@click.option("--all", "everything", is_flag=True, help="Delete each cluster's output/ too (kept by default).")
@reports_errors
def clean(clusters: tuple[str, ...], yes: bool, everything: bool) -> None:
    """Delete finished clusters' directories (logs, job history, configuration, staging), keeping each one's
    output/ unless --all: the named ones, or every finished one. Never a running cluster's. Lists what it deletes
    and keeps, then asks unless --yes."""
    from launcher.lifecycle.clusters.clean import KEPT, cleanup_of
    from launcher.lifecycle.clusters.clean import clean as remove
    from launcher.lifecycle.clusters.status import find, statuses
    from launcher.util.units import format_size

    targets = [find(c, seen=_keep) for c in clusters] if clusters else [s for s in statuses(seen=_keep) if not s.active]
    if not targets:
        console.print("nothing to clean")
        return
    remove([t for t in targets if t.active])  # refuses (raises) before anything is deleted
    cleanups = [cleanup_of(t, everything=everything) for t in targets]
    for c in cleanups:
        what = ("nothing: its directory is gone" if not c.delete else
                f"{'all' if c.keep is None else f'all but {KEPT}/'} ({format_size(c.delete_bytes)})")
        kept = f"; keep {c.keep} ({format_size(c.keep_bytes)})" if c.keep else ""
        click.echo(f"  {c.status.cluster_id:<40} {c.status.state:<15} {c.status.run_dir}: delete {what}{kept}")
    keeping = [c for c in cleanups if c.keep]
    plural = "this cluster directory" if len(targets) == 1 else f"these {len(targets)} cluster directories"
    click.echo(f"{plural}: delete {format_size(sum(c.delete_bytes for c in cleanups))}"
               + (f"; keep {len(keeping)} {KEPT}/ ({format_size(sum(c.keep_bytes for c in keeping))}; "
                  "--all deletes them too)" if keeping else ""))
    if not yes and not click.confirm(f"delete {plural}" + (f" but {KEPT}/" if keeping else "") + "?",
                                     default=False):
        console.print("nothing deleted")
        sys.exit(1)
    removed = remove(targets, everything=everything)
    console.print(f"cleaned {len(removed)} director{'y' if len(removed) == 1 else 'ies'}"
                  + (f"; kept {len(keeping)} {KEPT}/" if keeping else ""))


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(hpc-hadoop completion bash)" (in ~/.bashrc)."""
    from click.shell_completion import get_completion_class

    completion_class = get_completion_class(shell)
    assert completion_class is not None
    root = click.get_current_context().find_root().command
    click.echo(completion_class(root, {}, "hpc-hadoop", "_HPC_HADOOP_COMPLETE").source())


def application_of(run_dir: Path, app: str) -> str:
    """The YARN application id ``app`` names: an id as it is, else a step of ``run.json`` by name or number.

    Raises:
        UserError: no step of that name or number, or the step never reached YARN.
    """
    from launcher.lifecycle.report import RunReport

    if re.fullmatch(r"application_\d+_\d+", app):
        return app
    report = RunReport.read_or_none(Path(run_dir, "run.json"))
    steps = report.steps if report else []
    chosen = [s for i, s in enumerate(steps, start=1) if app in (str(i), s.name)]
    names = ", ".join(f"{i} {s.name}" for i, s in enumerate(steps, start=1)) or "none"
    if not chosen:
        raise UserError(f"no step {app!r} in {run_dir}/run.json (steps: {names})", field="--app",
                        fix="give an application id (application_...) or a step name or number")
    if not chosen[-1].application_id:
        raise UserError(f"step {app!r} has no YARN application (it failed before submitting one)", field="--app",
                        fix=f"read its client log: {chosen[-1].log or 'steps/ in the run directory'}")
    return str(chosen[-1].application_id)


def show_container_logs(plan: ClusterPlan, app: str, *, lines: int = 0, running: bool = True) -> int:
    """Print the aggregated container logs of one application with YARN's own reader (``yarn logs``, through
    the cluster's ``bin/yarn`` wrapper, :func:`launcher.render.clients.yarn_logs_command`), each log file cut to
    its last ``lines`` lines (0: all; :func:`launcher.render.clients.tail_logs`). A cluster that is not
    ``running`` has no ResourceManager: the reader reads ``app-logs/`` with no retry and no INFO lines, and its
    note that it does so ("Unable to get ApplicationState...") is left out.

    Returns:
        The exit code of ``yarn logs`` (0 when it printed logs).
    """
    from launcher.render.clients import tail_logs, yarn_logs_command

    argv, env = yarn_logs_command(plan, application_of(Path(plan.run_dir), app), running=running)
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None
        read = (line.rstrip("\n") for line in proc.stdout
                if running or not line.startswith("Unable to get ApplicationState."))
        for line in tail_logs(read, lines):
            click.echo(line)
    return proc.returncode


def daemon_logs(run_dir: Path, *, node: str | None = None, daemon: str | None = None) -> list[Path]:
    """Daemon logs of a cluster directory, ``logs/<node>/<daemon>.log``, filtered by node and daemon name,
    sorted; ``daemon="fanout"`` (or no filter) adds the fan-out launcher's ``logs/fanout-<name>.log`` and
    ``daemon="agent"`` the per-node agents' output (``logs/agent-<node>.out``, srun)."""
    found: list[Path] = []
    if daemon in (None, "fanout") and node is None:
        found += sorted(Path(run_dir, "logs").glob("fanout-*.log"))
    if daemon in (None, "agent"):
        found += sorted(Path(run_dir, "logs").glob(f"agent-{node or '*'}.out"))
    if daemon not in ("fanout", "agent"):
        found += sorted(Path(run_dir, "logs").glob(f"{node or '*'}/{daemon or '*'}.log"))
    return found


def _confirm_stop(found: ClusterStatus) -> None:
    """Ask before ``stop`` without an ID stops the one running cluster; without a terminal (a script, a pipe),
    refuse: a script names the cluster or passes ``--yes``.

    Raises:
        UserError: stdin is not a terminal.
    """
    if not sys.stdin.isatty():
        raise UserError(f"no ID given, and no terminal to ask whether to stop {found.cluster_id} ({found.state})",
                        field="ID", fix=f"hpc-hadoop stop {found.cluster_id}, or hpc-hadoop stop --yes")
    nodes = len(found.nodes or [])
    if not click.confirm(f"stop cluster {found.cluster_id} ({found.state}"
                         + (f", {nodes} node(s)" if nodes else "") + ")?", default=False):
        console.print("nothing stopped")
        sys.exit(1)


def _read_report(run_dir: Path) -> RunReport | None:
    from launcher.lifecycle.report import RunReport

    return RunReport.read_or_none(run_dir / "run.json")


def _plan_of(cluster: str | None, *, need_up: bool = False) -> ClusterPlan:
    """The :class:`ClusterPlan` of the cluster ``cluster`` names, read only once its cluster directory and every level
    above it are found to be the user's own, not links and not writable by others
    (:func:`launcher.plan.cluster_plan.check_cluster_directory`): ``env``, ``exec``, ``ui`` and ``logs --app`` trust
    its ``plan.json``, ``conf/`` and ``bin/`` (another user's ``bin/yarn`` would run as you).

    Raises:
        UserError: unknown cluster; its directory refused; no plan yet (still queued); not up (``need_up``).
    """
    from launcher.plan.cluster_plan import ClusterPlan, check_cluster_directory

    found = find_cluster(cluster)
    check_cluster_directory(found.run_dir, field="ID", missing_ok=True)
    if need_up and not found.state.up:
        raise UserError(f"cluster {found.cluster_id} is {found.state}", field="ID",
                        fix="wait for `hpc-hadoop status` to say ready" if found.active else
                        "start a new one with `hpc-hadoop start JOB_FILE`")
    if not Path(found.run_dir, "plan.json").exists():
        raise UserError(f"cluster {found.cluster_id} is {found.state}: no configuration yet", field="ID",
                        fix="wait until it starts (`hpc-hadoop status`)")
    return ClusterPlan.load(found.run_dir)
