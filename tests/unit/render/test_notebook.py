"""JupyterLab's pure parts (:mod:`launcher.render.notebook`, issue 40 item 1): the kernel spec, the server's command
line and environment, where its private files go, which notebook directories are refused, the requests to the master's
agent."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from launcher.render import notebook
from launcher.render.spark import SparkRuntime
from launcher.util.errors import UserError
from tests.conftest import REPO

if TYPE_CHECKING:
    from launcher.config.spec import JobSpec
    from launcher.plan.cluster_plan import ClusterPlan


def spark_at(tmp_path: Path) -> SparkRuntime:
    home = tmp_path / "spark" / "pyspark"
    lib = home / "python" / "lib"
    lib.mkdir(parents=True)
    archives = (lib / "pyspark.zip", lib / "py4j-0.10.9.9-src.zip")
    for path in archives:
        path.write_text("")
    return SparkRuntime(home=home, version="4.1.1", python_archives=archives, examples_jar=None)


def test_the_kernel_runs_ipykernel_with_the_startup_that_makes_spark(make_spec: Callable[..., JobSpec],
                                                                    make_test_plan: Callable[..., ClusterPlan],
                                                                    tmp_path: Path) -> None:
    plan = make_test_plan(make_spec(notebook=True, spark={"python": "/opt/py/bin/python3"}))
    paths = notebook.jupyter_paths(tmp_path / "work")
    for level in paths.all():
        level.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = notebook.write_kernel(plan, paths, notebook.python_of(plan))
    spec = json.loads(written.read_text())
    startup = paths.kernel_dir / "hpc_hadoop_startup.py"
    assert written == paths.data / "kernels" / "hpc-hadoop" / "kernel.json"
    assert spec["argv"] == ["/opt/py/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}",
                            f"--IPKernelApp.exec_files={startup}"]
    assert spec["language"] == "python" and plan.cluster_id in spec["display_name"]
    text = startup.read_text()
    compile(text, str(startup), "exec")  # valid Python
    assert "SparkSession.builder" in text and "spark = " in text and "sc = spark.sparkContext" in text
    assert plan.cluster_id in text
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (written, startup))
    # No pop-up asking a new user whether to fetch Jupyter's news from a website (the JupyterLab schema's setting,
    # in the user settings JupyterLab reads below JUPYTER_CONFIG_DIR).
    settings = paths.config / "lab/user-settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
    assert json.loads(settings.read_text()) == {"fetchNews": "false", "checkForUpdates": False}
    schema = Path(REPO, "jupyter-runtime/share/jupyter/lab/schemas/@jupyterlab/apputils-extension/notification.json")
    if schema.is_file():  # the checkout's runtime (install.sh): the names are JupyterLab's own
        properties = json.loads(schema.read_text())["properties"]
        assert {"false"} <= {choice["const"] for choice in properties["fetchNews"]["oneOf"]}
        assert properties["checkForUpdates"]["type"] == "boolean"


def test_the_server_command_line_holds_no_secret_and_one_port(make_spec: Callable[..., JobSpec],
                                                              make_test_plan: Callable[..., ClusterPlan],
                                                              tmp_path: Path) -> None:
    """Listening on the master's address at the notebook port, no other port tried, ``base_url`` the proxy's path,
    our kernel the only one; the token in the environment (``JUPYTER_TOKEN``), never on the command line; Jupyter's
    directories under the node-local working directory."""
    plan = make_test_plan(make_spec(notebook=True))
    jupyter = notebook.JupyterRuntime(tmp_path / "jupyter")
    paths = notebook.jupyter_paths(tmp_path / "node-local" / "n1")
    command = notebook.server_command(plan, plan.master, spark_at(tmp_path), jupyter, paths, "10.0.0.1",
                                      tmp_path / "nbs", "t0ken-value")
    argv = command.argv
    port = plan.ports.notebook_web
    assert argv[:4] == ["/usr/bin/python3", "-m", "jupyterlab", "--no-browser"]
    assert "--ServerApp.ip=10.0.0.1" in argv and f"--ServerApp.port={port}" in argv
    assert "--ServerApp.port_retries=0" in argv
    assert f"--ServerApp.base_url={notebook.base_url('10.0.0.1', port)}" in argv
    assert notebook.base_url("10.0.0.1", port) == f"/_/10.0.0.1:{port}/"
    assert f"--ServerApp.root_dir={tmp_path / 'nbs'}" in argv
    assert "--KernelSpecManager.allowed_kernelspecs=hpc-hadoop" in argv
    assert "--MappingKernelManager.default_kernel_name=hpc-hadoop" in argv
    assert not any("t0ken-value" in a for a in argv) and command.env["JUPYTER_TOKEN"] == "t0ken-value"
    assert ("--ServerApp.allow_root=True" in argv) == (os.geteuid() == 0)
    env = command.env
    assert env["JUPYTER_RUNTIME_DIR"] == str(paths.runtime) and env["JUPYTER_DATA_DIR"] == str(paths.data)
    assert env["JUPYTER_CONFIG_DIR"] == str(paths.config) and env["IPYTHONDIR"] == str(paths.ipython)
    assert all(Path(env[k]).is_relative_to(tmp_path / "node-local") for k in
               ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "IPYTHONDIR"))
    assert command.log == command.out == Path(plan.master.log_dir) / "jupyterlab.log"


def test_the_environment_is_the_clusters_with_pyspark_then_jupyterlab(make_spec: Callable[..., JobSpec],
                                                                      make_test_plan: Callable[..., ClusterPlan],
                                                                      tmp_path: Path) -> None:
    """What ``hpc-hadoop env`` exports (the cluster's configuration, Spark's), ``PYTHONPATH`` PySpark's archives
    first, then the JupyterLab runtime; the caller's own Jupyter and Python settings dropped."""
    plan = make_test_plan(make_spec(notebook=True, security="per-cluster"))
    spark = spark_at(tmp_path)
    plan.spark_conf_dir.mkdir(parents=True)
    jupyter = notebook.JupyterRuntime(tmp_path / "jupyter")
    base = {"PATH": "/usr/bin:/bin", "JUPYTER_CONFIG_DIR": "/home/u/.jupyter", "PYTHONSTARTUP": "/x.py",
            "PYTHONPATH": "/home/u/lib", "HOME": "/home/u"}
    env = notebook.environment(plan, spark, jupyter, notebook.jupyter_paths(tmp_path / "w"), base)
    assert env["HADOOP_CONF_DIR"] == str(plan.conf_dir) and env["HPC_HADOOP_CLUSTER"] == plan.cluster_id
    assert env["SPARK_CONF_DIR"] == str(plan.spark_conf_dir) and env["KRB5CCNAME"].startswith("FILE:")
    assert env["PYTHONPATH"].split(":")[-1] == str(jupyter.home)
    assert [Path(p).name for p in env["PYTHONPATH"].split(":")[:2]] == ["pyspark.zip", "py4j-0.10.9.9-src.zip"]
    assert "/home/u/lib" not in env["PYTHONPATH"] and "PYTHONSTARTUP" not in env
    assert env["JUPYTER_CONFIG_DIR"] != "/home/u/.jupyter" and env["PATH"].endswith(":/usr/bin:/bin")
    assert env["PATH"].startswith(f"{plan.path('bin')}:")


def test_notebooks_are_never_kept_in_a_cluster_directory(make_spec: Callable[..., JobSpec],
                                                         make_test_plan: Callable[..., ClusterPlan],
                                                         tmp_path: Path) -> None:
    plan = make_test_plan(make_spec(notebook=True))
    run_dir = Path(plan.run_dir)
    (run_dir / "output").mkdir(parents=True)
    for inside in (run_dir, run_dir / "output", run_dir.parent):
        with pytest.raises(UserError, match="hpc-hadoop clean") as refused:
            notebook.check_notebooks_dir(plan, inside)
        assert refused.value.field == "--dir"
    with pytest.raises(UserError, match="is not a directory"):
        notebook.check_notebooks_dir(plan, tmp_path / "missing")
    (tmp_path / "nbs").mkdir()
    assert notebook.check_notebooks_dir(plan, tmp_path / "nbs") == tmp_path / "nbs"


def test_requests_to_the_masters_agent(make_spec: Callable[..., JobSpec], make_test_plan: Callable[..., ClusterPlan],
                                       tmp_path: Path) -> None:
    """The server request names the checked directory; an execution request its notebook, output and result; all
    0600 in ``notebook/`` (0700)."""
    plan = make_test_plan(make_spec(notebook=True))
    Path(plan.run_dir).mkdir(parents=True)
    (tmp_path / "nbs").mkdir()
    assert notebook.server_base(plan) == "/"  # no request yet
    server = notebook.request_server(plan, tmp_path / "nbs")
    assert json.loads(server.read_text()) == {"dir": str(tmp_path / "nbs"), "base": "/"}
    # Behind a portal (the OnDemand app's `notebook --base-url`): the base the server's base_url is made under.
    notebook.request_server(plan, tmp_path / "nbs", "/rnode/n1/4567")
    assert notebook.server_base(plan) == "/rnode/n1/4567/"
    port = plan.ports.notebook_web
    assert notebook.base_url("10.0.0.1", port, "/rnode/n1/4567/") == f"/rnode/n1/4567/_/10.0.0.1:{port}/"
    with pytest.raises(UserError, match="not a base path") as refused:
        notebook.request_server(plan, tmp_path / "nbs", "/rnode/../x")
    assert refused.value.field == "--base-url"
    server.write_text(json.dumps({"dir": str(tmp_path / "nbs")}))  # a request of the release before: no base
    assert notebook.server_base(plan) == "/"
    server.write_text(json.dumps({"dir": str(tmp_path / "nbs"), "base": "//evil.example/"}))
    with pytest.raises(UserError, match="not a base path"):
        notebook.server_base(plan)
    notebook.request_server(plan, tmp_path / "nbs")
    request, result = notebook.request_run(plan, tmp_path / "nbs" / "a.ipynb", tmp_path / "nbs" / "a.out.ipynb",
                                           timeout=60, run_id="abc")
    assert request.name == "run-abc.json" and result.name == "run-abc.result.json" and not result.exists()
    assert json.loads(request.read_text()) == {"notebook": str(tmp_path / "nbs" / "a.ipynb"),
                                               "output": str(tmp_path / "nbs" / "a.out.ipynb"), "timeout": 60,
                                               "result": str(result)}
    assert server.parent.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (server, request))
    assert notebook.default_output(Path("/d/wc.ipynb")) == Path("/d/wc.executed.ipynb")


def test_no_jupyterlab_runtime_is_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(notebook, "checkout_jupyter", lambda: tmp_path / "jupyter-runtime")
    monkeypatch.setattr(notebook, "prefixes", lambda: [("user prefix", tmp_path / "u")])
    with pytest.raises(UserError, match="no JupyterLab runtime found") as missing:
        notebook.discover_jupyter()
    assert missing.value.fix is not None and "runtime install" in missing.value.fix
