"""``hpc-hadoop notebook`` (:mod:`launcher.cli.notebook`): the option checks of ``--execute`` and the failing cell's
line; the master agent's state read as JupyterLab's (issue 40 item 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from launcher.cli.notebook import ServerState, _cell_error, _execute_paths, server_state
from launcher.util.errors import UserError
from launcher.util.records import AgentRecord, DaemonRecord, ListeningRecord
from launcher.util.states import AgentState

if TYPE_CHECKING:
    from launcher.config.spec import JobSpec
    from launcher.plan.cluster_plan import ClusterPlan


def test_execute_never_overwrites_the_notebook_without_in_place(tmp_path: Path) -> None:
    notebook = tmp_path / "a.ipynb"
    with pytest.raises(UserError, match="is not a file"):
        _execute_paths(notebook, None, False)
    notebook.write_text("{}")
    assert _execute_paths(notebook, None, False) == (notebook, tmp_path / "a.executed.ipynb")
    assert _execute_paths(notebook, tmp_path / "b.ipynb", False) == (notebook, tmp_path / "b.ipynb")
    assert _execute_paths(notebook, None, True) == (notebook, notebook)
    with pytest.raises(UserError, match="is the notebook itself") as same:
        _execute_paths(notebook, notebook, False)
    assert same.value.field == "--output" and "--in-place" in (same.value.fix or "")
    with pytest.raises(UserError, match="both say"):
        _execute_paths(notebook, tmp_path / "b.ipynb", True)


def test_the_failing_cell_is_named_with_its_error_and_traceback() -> None:
    result = {"ok": False, "error": {"cell": 3, "ename": "ZeroDivisionError", "evalue": "division by zero",
                                     "traceback": ["Cell In[3], line 1", "----> 1 1/0"]}}
    assert _cell_error(result) == ("cell 3 failed: ZeroDivisionError: division by zero\nCell In[3], line 1\n"
                                   "----> 1 1/0")
    assert _cell_error({"error": {"cell": None, "ename": "refused", "evalue": "no JupyterLab", "traceback": []}}) \
        == "the notebook failed: refused: no JupyterLab"


def test_jupyterlab_is_running_only_once_its_process_listens(make_spec: Callable[..., JobSpec],
                                                            make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec(notebook=True))
    agents = Path(plan.run_dir, "agents")
    agents.mkdir(parents=True)
    path = agents / f"{plan.master.name}.json"
    assert server_state(plan) == (ServerState.STARTING, "")

    def write(**fields: object) -> None:
        AgentRecord(node=plan.master.name, state=AgentState.RUNNING, **fields).write(path)  # type: ignore[arg-type]

    write(notebook_note="JupyterLab not started: no JupyterLab runtime found")
    assert server_state(plan) == (ServerState.REFUSED, "JupyterLab not started: no JupyterLab runtime found")
    write(daemons={"jupyterlab": DaemonRecord(pid=1, out="/x/jupyterlab.log")})
    assert server_state(plan)[0] is ServerState.STARTING
    port = plan.ports.notebook_web
    write(daemons={"jupyterlab": DaemonRecord(pid=1)},
          listening=[ListeningRecord(process="JupyterLab", address=plan.master.address, port=port)])
    assert server_state(plan)[0] is ServerState.RUNNING
    write(daemons={"jupyterlab": DaemonRecord(pid=1, returncode=1, out="/x/jupyterlab.log")})
    assert server_state(plan) == (ServerState.EXITED, "exit code 1; its log: /x/jupyterlab.log")
