"""``hpc-hadoop notebook [ID]``: JupyterLab on a running cluster's master node, and ``--execute NB.ipynb`` (issue 40
item 1).

Both are requests to the master node's agent through the cluster directory (:mod:`launcher.render.notebook`): the
server request (``notebook/server.json``), which the agent answers by starting JupyterLab (its state, port and exit in
``agents/<master>.json``), and one execution request per ``--execute`` (``notebook/run-<id>.json``), answered by the
nbclient run's result (``notebook/run-<id>.result.json``). This command writes the request and waits for the answer;
the browser reaches JupyterLab through ``hpc-hadoop ui`` (one tunnel, one token).
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from launcher.cli.clusters import _plan_of, id_argument
from launcher.cli.common import console, reports_errors
from launcher.util.errors import HpcHadoopError, UserError
from launcher.util.states import State

if TYPE_CHECKING:
    from launcher.plan.cluster_plan import ClusterPlan

#: Seconds ``notebook`` waits for JupyterLab to listen (its start: ~5 s on the test machine).
SERVER_WAIT_S = 120.0
#: Seconds between two looks at the agent's state or a result.
LOOK_S = 0.5


class NotebookFailed(HpcHadoopError):
    """A notebook's cell failed (exit code 1: not bad input, the notebook's own error)."""

    exit_code = 1


def _master_record(plan: ClusterPlan) -> Any:
    from launcher.util.records import AgentRecord

    return AgentRecord.read_or_none(plan.path("agents", f"{plan.master.name}.json"))


class ServerState(State):
    """JupyterLab as the master's agent reports it (:func:`server_state`)."""

    STARTING = "starting"
    RUNNING = "running"
    EXITED = "exited"
    REFUSED = "refused"


def server_state(plan: ClusterPlan) -> tuple[ServerState, str]:
    """What the master's agent says of JupyterLab: running once its process listens on the notebook port, exited (and
    why), refused (the agent's note), else starting."""
    from launcher.render.notebook import DAEMON

    record = _master_record(plan)
    if record is None:
        return ServerState.STARTING, ""
    daemon = record.daemons.get(DAEMON)
    if daemon is None:
        return (ServerState.REFUSED, record.notebook_note) if record.notebook_note else (ServerState.STARTING, "")
    if daemon.returncode is not None:
        return ServerState.EXITED, f"exit code {daemon.returncode}; its log: {daemon.out}"
    if any(seen.process == "JupyterLab" and seen.port == plan.ports.notebook_web for seen in record.listening):
        return ServerState.RUNNING, ""
    return ServerState.STARTING, ""


def start_server(plan: ClusterPlan, directory: Path, timeout: float = SERVER_WAIT_S, base: str = "/") -> bool:
    """Ask for JupyterLab over ``directory`` under the base path ``base`` (behind a portal:
    :func:`launcher.render.notebook.base_url`) unless one runs, and wait until it listens. Returns True when it was
    started now, False when it ran already.

    Raises:
        UserError: the directory or ``base`` refused, or JupyterLab runs already under another base path.
        HpcHadoopError: the agent refused to start it (its line), it exited, or did not listen within ``timeout``
            seconds.
    """
    from launcher.render.notebook import request_server, server_base
    from launcher.util.network import base_path

    if server_state(plan)[0] is ServerState.RUNNING:
        running = server_base(plan)
        try:
            wanted = base_path(base)
        except ValueError as exc:
            raise UserError(str(exc), field="--base-url", fix="give a path such as /rnode/<host>/<port>/") from None
        if running != wanted:
            raise UserError(f"JupyterLab of {plan.cluster_id} runs under the base path {running}, not {wanted}",
                            field="--base-url", fix=f"serve it with `hpc-hadoop ui {plan.cluster_id} --base-url "
                            f"{running}`, or stop the cluster and start JupyterLab again")
        return False
    request_server(plan, directory, base)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(LOOK_S)
        state, why = server_state(plan)
        if state is ServerState.RUNNING:
            return True
        if state is ServerState.REFUSED:  # the agent's line names what and the fix
            raise HpcHadoopError(why)
        if state is ServerState.EXITED:
            raise HpcHadoopError(f"JupyterLab exited: {why}")
    raise HpcHadoopError(f"JupyterLab did not listen on {plan.master.name}:{plan.ports.notebook_web} within "
                         f"{timeout:.0f} s (hpc-hadoop logs {plan.cluster_id} --daemon jupyterlab)")


def execute(plan: ClusterPlan, notebook: Path, output: Path, *, timeout: float,
            wait: float | None = None) -> dict[str, Any]:
    """Execute ``notebook`` on the master node into ``output`` (a request to its agent) and wait for the result.

    Raises:
        HpcHadoopError: no result within ``wait`` seconds (default: no limit while the cluster is up).
    """
    from launcher.render.notebook import request_run

    _, result = request_run(plan, notebook, output, timeout=timeout, run_id=secrets.token_hex(6))
    deadline = None if wait is None else time.monotonic() + wait
    while not result.exists():
        if deadline is not None and time.monotonic() > deadline:
            raise HpcHadoopError(f"no result of {notebook} within {wait:.0f} s ({result})")
        record = _master_record(plan)
        if record is not None and record.state.terminal:
            raise HpcHadoopError(f"the cluster stopped before {notebook} was executed")
        time.sleep(LOOK_S)
    answer: dict[str, Any] = json.loads(result.read_text())
    return answer


def _execute_paths(notebook: Path, output: Path | None, in_place: bool) -> tuple[Path, Path]:
    """The notebook to run and where the executed one goes (:func:`launcher.render.notebook.default_output`).

    Raises:
        UserError: the notebook is not a file, or ``--output`` names it without ``--in-place``.
    """
    from launcher.render.notebook import default_output

    source = notebook.expanduser().absolute()
    if not source.is_file():
        raise UserError(f"{source} is not a file", field="--execute", fix="give the path of a .ipynb notebook")
    if in_place and output is not None:
        raise UserError("--in-place and --output both say where the result goes", field="--output",
                        fix="give one of them")
    target = source if in_place else (output.expanduser().absolute() if output else default_output(source))
    if target == source and not in_place:
        raise UserError(f"--output {target} is the notebook itself", field="--output",
                        fix="give another file, or --in-place to overwrite it")
    return source, target


def _cell_error(result: dict[str, Any]) -> str:
    error = result.get("error") or {}
    where = f"cell {error['cell']}" if error.get("cell") else "the notebook"
    tail = "\n".join(error.get("traceback") or [])
    return f"{where} failed: {error.get('ename', '')}: {error.get('evalue', '')}" + (f"\n{tail}" if tail else "")


@click.command()
@id_argument
@click.option("--dir", "directory", type=click.Path(path_type=Path, file_okay=False),
              help="Where the notebooks are kept (JupyterLab's root).  [default: the job file's directory]")
@click.option("--execute", "notebook", type=click.Path(path_type=Path, dir_okay=False), metavar="NB.ipynb",
              help="Execute this notebook on the master node with nbclient (the server is not needed) and write the "
                   "executed one beside it (NB.executed.ipynb); exit 1 with the failing cell's error.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="With --execute: where the executed notebook goes.")
@click.option("--in-place", is_flag=True, help="With --execute: overwrite the notebook itself.")
@click.option("--timeout", type=float, default=600.0, show_default=True,
              help="With --execute: seconds one cell may run.")
@click.option("--base-url", metavar="PATH", default="/", show_default=True,
              help="The path the `ui` proxy is served under behind a portal (Open OnDemand: /rnode/<host>/<port>/, "
                   "as `ui --base-url`): JupyterLab's links are made under it.")
@reports_errors
def notebook(cluster: str | None, directory: Path | None, notebook: Path | None, output: Path | None,
             in_place: bool, timeout: float, base_url: str) -> None:
    """JupyterLab on a running cluster's master node, its kernel's `spark` a SparkSession on the cluster's YARN (as
    `exec -- pyspark` has it); open it through `hpc-hadoop ui ID`. With --execute, run one notebook there instead."""
    plan = _plan_of(cluster, need_up=True)
    if notebook is not None:
        source, target = _execute_paths(notebook, output, in_place)
        console.print(f"executing {source} on {plan.master.name} (kernel hpc-hadoop: spark on {plan.cluster_id})",
                      soft_wrap=True)
        result = execute(plan, source, target, timeout=timeout)
        if not result.get("ok"):
            if result.get("output"):
                console.print(f"written with the error: {result['output']}", soft_wrap=True)
            raise NotebookFailed(_cell_error(result))
        console.print(f"executed {result.get('cells')} cells; written to {result['output']}", soft_wrap=True)
        return
    where = directory or _job_dir(plan)
    started = start_server(plan, where, base=base_url)
    console.print(f"JupyterLab {'started' if started else 'is running'} on {plan.master.name} "
                  f"(port {plan.ports.notebook_web}); notebooks in {_server_dir(plan) or where}\n"
                  f"open it:  hpc-hadoop ui {plan.cluster_id}"
                  + (f" --base-url {base_url}" if base_url not in ("", "/") else "")
                  + "   (it prints JupyterLab's URL)\n"
                  f"it stops with the cluster: hpc-hadoop stop {plan.cluster_id}", soft_wrap=True)


def _job_dir(plan: ClusterPlan) -> Path:
    """The default notebooks' directory: ``notebook.dir`` of the job file when it has one, else the job file's
    directory (:func:`launcher.lifecycle.submit.job_file_of`), else the current one."""
    from launcher.lifecycle.submit import job_file_of

    if plan.spec.notebook is not None and plan.spec.notebook.dir:
        return Path(plan.spec.notebook.dir)
    job_file = job_file_of(Path(plan.run_dir))
    return job_file.parent if job_file is not None else Path.cwd()


def _server_dir(plan: ClusterPlan) -> str | None:
    from launcher.render.notebook import NOTEBOOK_SUBDIR, SERVER_REQUEST

    try:
        return str(json.loads(plan.path(NOTEBOOK_SUBDIR, SERVER_REQUEST).read_text())["dir"])
    except (OSError, ValueError, KeyError):
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(notebook())
