"""JupyterLab on a cluster's master node (``hpc-hadoop notebook``, the job file's ``notebook:``; issue 40 item 1): the
runtime it runs from, its command line and environment, the kernel whose ``spark`` is a SparkSession on the cluster's
YARN, the nbclient run of ``notebook --execute``, and the requests that ask the master's agent for them.

How it fits (docs/architecture.md, Notebooks):

* **A process of the master's agent.** ``hpc-hadoop notebook`` (on a login node) and ``materialize`` (a job file with
  ``notebook:``) write a request into the cluster directory's ``notebook/`` (0700): :data:`SERVER_REQUEST` for the
  server, ``run-<id>.json`` for one ``--execute``. The agent on the master node (:mod:`launcher.node.agent`) looks
  there every second on a thread of its own, starts JupyterLab beside the daemons (a JupyterLab that exits does not
  stop the cluster) and the executions, and stops them with the daemons: SIGTERM, SIGKILL after the grace, then every
  descendant killed (the kernels, their Spark drivers), so that teardown leaves no process.
* **Its own files node-local.** ``JUPYTER_RUNTIME_DIR`` (connection files with the kernels' keys, the server's
  cookie secret, ``jpserver-*.json`` holding the token), ``JUPYTER_DATA_DIR`` (our kernel spec), ``JUPYTER_CONFIG_DIR``
  and ``IPYTHONDIR`` are below the agent's working directory (:func:`jupyter_paths`: made and checked 0700 by the agent,
  deleted with it), never on the shared filesystem. The token is passed in the environment (``JUPYTER_TOKEN``, which
  only the owner reads in ``/proc``), never on a command line; the ``ui`` proxy on the login node reads its copy from
  the owner's state directory (:func:`token_path`: ``$XDG_STATE_HOME/hpc-hadoop/clusters/<id>.krb/jupyterlab.token``,
  0600 in 0700, where the web servers' cookie secrets have their clients' copies,
  :func:`launcher.security.kdc.publish_keys`), never in the cluster directory: a shared FUSE client may cache a
  permission answer across users (real OrangeFS does), so modes there keep no secret.
* **Reached through ``ui`` only.** The server listens on the master's address at ``ports.notebook_web`` (the port
  block's offset 17, :data:`launcher.plan.cluster_plan.DAEMON_PORTS`), with ``base_url`` ``<base>_/<address>:<port>/``
  (:func:`base_url`): the path under which the proxy forwards it, so every link JupyterLab makes stays inside the proxy
  and none needs rewriting. ``<base>`` is ``/``, or the path a portal serves the proxy under (``hpc-hadoop notebook
  --base-url /rnode/<host>/<port>/``, the Open OnDemand app's), which the request records (:func:`server_base`) for
  the proxy to forward under. ``port_retries=0``: a port another user took first is a failure the agent records,
  never another port.
* **Notebooks where the user says** (``--dir``, ``notebook.dir``; default: the job file's directory), never inside a
  cluster directory (:func:`check_notebooks_dir`).

Imports :mod:`launcher.render.clients`, :mod:`launcher.render.spark` and below.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from launcher.plan.cluster_plan import ClusterPlan, NodePlan
from launcher.render.clients import apply_environment, client_environment
from launcher.render.daemons import DaemonCommand
from launcher.render.spark import SparkRuntime
from launcher.runtime.jupyter_install import jupyter_missing
from launcher.util.errors import UserError
from launcher.util.resources import JUPYTER_SUBDIR, checkout_jupyter, prefixes

#: The agent's name of the JupyterLab process (its ``agents/<node>.json`` ``daemons`` key; the proxy's
#: :data:`launcher.plan.daemon_sockets.WEB_DAEMONS` key).
DAEMON = "jupyterlab"
#: ``notebook/`` in the cluster directory: the requests, the token the proxy sends, the executions' results.
NOTEBOOK_SUBDIR = "notebook"
#: The request for the server: ``{"dir": <notebooks directory>, "base": <base path>}``; rewritten to start a server
#: that has exited again.
SERVER_REQUEST = "server.json"
#: The JupyterLab token's copy for the ``ui`` proxy (0600), in the owner's state directory (:func:`token_path`).
TOKEN_FILE = "jupyterlab.token"
#: An execution's request: ``run-<id>.json``; its result: ``run-<id>.result.json``.
RUN_PREFIX = "run-"
RESULT_SUFFIX = ".result.json"
#: The kernel spec's name (``JUPYTER_DATA_DIR/kernels/<name>``), the server's default and only kernel.
KERNEL_NAME = "hpc-hadoop"
#: Seconds a kernel may take to start: its SparkSession is made at start, a YARN application whose executors must
#: register (about 20 s on the 3-node test cluster).
KERNEL_STARTUP_S = 300

#: The kernel's start-up file (IPython's ``exec_files``): ``spark`` and ``sc`` on the cluster's YARN, from the
#: cluster's ``spark-conf/`` (``SPARK_CONF_DIR``), as ``hpc-hadoop exec ID -- pyspark`` makes them.
KERNEL_STARTUP = '''"""hpc-hadoop: `spark` (a SparkSession) and `sc` on the YARN of cluster {cluster}."""
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("notebook {cluster}").getOrCreate()
sc = spark.sparkContext
'''


@dataclass(frozen=True)
class JupyterRuntime:
    """A JupyterLab runtime directory (``pip install --target``): ``home`` goes first on ``PYTHONPATH``;
    ``app_dir`` is JupyterLab's application directory in it (``share/jupyter/lab``)."""

    home: Path

    @property
    def app_dir(self) -> Path:
        """``share/jupyter/lab`` (JupyterLab's static files: ``--LabApp.app_dir``)."""
        return self.home / "share" / "jupyter" / "lab"

    @property
    def data_path(self) -> Path:
        """``share/jupyter`` (labextensions, nbconvert templates: on ``JUPYTER_PATH``)."""
        return self.home / "share" / "jupyter"


def discover_jupyter() -> JupyterRuntime:
    """The JupyterLab runtime: the checkout's ``jupyter-runtime/`` (``install.sh``), then ``<prefix>/jupyter`` in the
    user and the site prefix (:func:`launcher.util.resources.prefixes`), the first that is complete.

    Raises:
        UserError: none is (the fix: ``hpc-hadoop runtime install``).
    """
    candidates = [checkout_jupyter(), *(prefix / JUPYTER_SUBDIR for _, prefix in prefixes())]
    for home in candidates:
        if home is not None and home.is_dir() and not jupyter_missing(home):
            return JupyterRuntime(home)
    looked = ", ".join(str(h) for h in candidates if h is not None)
    raise UserError(f"no JupyterLab runtime found (looked in {looked})", field="notebook",
                    fix="run `hpc-hadoop runtime install` (or ./install.sh in a checkout)")


def notebook_state_dir(plan: ClusterPlan) -> Path:
    """``notebook/`` in the cluster directory."""
    return plan.path(NOTEBOOK_SUBDIR)


def token_path(plan: ClusterPlan) -> Path:
    """Where the master's agent writes JupyterLab's token for the ``ui`` proxy and the proxy reads it:
    :data:`TOKEN_FILE` in :attr:`launcher.security.kerberos.SecurityPlan.client_dir` (the owner's state directory,
    beside the cookie secrets' copies; not the shared filesystem of the cluster directory).

    Raises:
        UserError: the plan names no such directory.
    """
    client = plan.security.client_dir
    if client is None:
        raise UserError("no private state directory for JupyterLab's token", field="notebook",
                        fix="set $XDG_STATE_HOME (or $HOME) to a directory of your own")
    return client / TOKEN_FILE


def write_token(plan: ClusterPlan, token: str) -> Path:
    """Write ``token`` to :func:`token_path` (its directory made one level at a time below the state directory's
    parent and checked ours, 0700, no link: :func:`launcher.util.safedirs.make_private_dir`; the file 0600 from its
    creation). Returns the path.

    Raises:
        UserError: a level of the directory is refused; OSError: it cannot be written.
    """
    from launcher.util.files import replace_private
    from launcher.util.safedirs import make_private_dir

    path = token_path(plan)
    make_private_dir(path.parent.parent, path.parent, field="notebook")
    replace_private(path, token)
    return path


def base_url(address: str, port: int, base: str = "/") -> str:
    """JupyterLab's ``base_url``: ``<base>_/<address>:<port>/`` (``/_/10.77.0.11:10317/``; under a portal's base
    ``/rnode/n1/53458/``: ``/rnode/n1/53458/_/10.77.0.11:10317/``), the path the ``ui`` proxy serves it under
    (:data:`launcher.cli.webproxy.PREFIX` below its ``--base-url``), so its links stay inside the proxy. ``base`` is a
    base path (:func:`launcher.cli.webproxy.base_path`)."""
    return f"{base}_/{address}:{port}/"


def server_base(plan: ClusterPlan) -> str:
    """The base path of the server request (:data:`SERVER_REQUEST`'s ``base``): ``/`` when it names none or there is
    no request (a request written by the release before has no ``base``).

    Raises:
        UserError: the request's ``base`` is not a base path.
    """
    from launcher.util.network import base_path

    try:
        request = json.loads(notebook_state_dir(plan).joinpath(SERVER_REQUEST).read_text())
    except (OSError, ValueError):
        return "/"
    value = request.get("base", "/") if isinstance(request, dict) else "/"
    try:
        return base_path(str(value))
    except ValueError as exc:
        raise UserError(str(exc), field="notebook --base-url",
                        fix="give a path such as /rnode/<host>/<port>/") from None


def check_notebooks_dir(plan: ClusterPlan, directory: str | Path, *, field: str = "--dir") -> Path:
    """``directory`` as the notebooks' directory of ``plan``'s cluster: absolute, an existing directory, and not inside
    the cluster directory nor the clusters' directory above it (``<root>/<user>/hpc-hadoop``, what ``hpc-hadoop
    clean`` deletes).

    Raises:
        UserError: it is not a directory, or lies inside a cluster directory.
    """
    path = Path(os.path.abspath(os.path.expanduser(str(directory))))
    clusters = Path(plan.run_dir).parent
    if path == clusters or path.is_relative_to(clusters):
        raise UserError(f"{path} is inside {clusters}, the cluster directories `hpc-hadoop clean` deletes",
                        field=field, fix="keep notebooks elsewhere, e.g. beside the job file")
    if not path.is_dir():
        raise UserError(f"{path} is not a directory", field=field,
                        fix="give an existing directory for the notebooks (mkdir it first)")
    return path


@dataclass(frozen=True)
class JupyterPaths:
    """JupyterLab's private directories on the master node, below its agent's working directory (:func:`jupyter_paths`).

    Attributes:
        root: ``<work dir>/jupyter`` (0700).
        runtime: ``JUPYTER_RUNTIME_DIR`` (connection files, cookie secret, ``jpserver-*.json``).
        data: ``JUPYTER_DATA_DIR`` (``kernels/hpc-hadoop/``).
        config: ``JUPYTER_CONFIG_DIR`` (empty: no user configuration is read).
        ipython: ``IPYTHONDIR``.
    """

    root: Path

    @property
    def runtime(self) -> Path:
        return self.root / "runtime"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def ipython(self) -> Path:
        return self.root / "ipython"

    @property
    def kernel_dir(self) -> Path:
        """``data/kernels/hpc-hadoop``: ``kernel.json`` and the start-up file."""
        return self.data / "kernels" / KERNEL_NAME

    @property
    def notification_settings(self) -> Path:
        """JupyterLab's user setting of its notifications (``config/lab/user-settings/@jupyterlab/
        apputils-extension/notification.jupyterlab-settings``: JupyterLab's user settings are below
        ``JUPYTER_CONFIG_DIR``)."""
        return self.config / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension" / \
            "notification.jupyterlab-settings"

    def all(self) -> list[Path]:
        """Every directory, parents first."""
        settings = self.notification_settings.parent
        return [self.root, self.runtime, self.data, self.data / "kernels", self.kernel_dir, self.config,
                *reversed([settings, *settings.parents][:4]), self.ipython]


def jupyter_paths(work_dir: Path) -> JupyterPaths:
    """The :class:`JupyterPaths` below an agent's node-local working directory."""
    return JupyterPaths(Path(work_dir) / "jupyter")


def environment(plan: ClusterPlan, spark: SparkRuntime, jupyter: JupyterRuntime, paths: JupyterPaths,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the server, its kernels and ``--execute``: what ``hpc-hadoop env`` exports
    (:func:`launcher.render.clients.client_environment`: Hadoop's, Spark's, the owner's ticket cache), ``PYTHONPATH``
    with PySpark's archives then the JupyterLab runtime, Jupyter's directories (:class:`JupyterPaths`) and no
    ``JUPYTER_*``/``PYTHON*`` variable of the caller's that would change what is loaded."""
    base = dict(os.environ if base is None else base)
    for name in list(base):
        if name.startswith(("JUPYTER", "PYTHON", "IPYTHON")) or name == "JPY_SESSION_NAME":
            del base[name]
    env = apply_environment(client_environment(plan), base)
    archives = [p for p in env.get("PYTHONPATH", "").split(":") if p]
    env.update({
        "PYTHONPATH": ":".join([*archives, str(jupyter.home)]),
        "PYTHONNOUSERSITE": "1",
        "JUPYTER_RUNTIME_DIR": str(paths.runtime),
        "JUPYTER_DATA_DIR": str(paths.data),
        "JUPYTER_CONFIG_DIR": str(paths.config),
        "JUPYTER_PATH": str(jupyter.data_path),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(paths.ipython),
        "SPARK_HOME": str(spark.home),
    })
    return env


def kernel_spec(plan: ClusterPlan, python: str, startup: Path) -> dict[str, object]:
    """``kernel.json`` of the :data:`KERNEL_NAME` kernel: ``python`` (``spark.python``: the PySpark driver's, one every
    node runs) running ipykernel with ``startup`` (:data:`KERNEL_STARTUP`) as IPython's ``exec_files``; its
    environment is the server's (:func:`environment`), inherited."""
    return {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                 f"--IPKernelApp.exec_files={startup}"],
        "display_name": f"PySpark on {plan.cluster_id}",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False, "hpc-hadoop": {"cluster": plan.cluster_id}},
    }


#: JupyterLab's notification settings on a cluster (schema ``@jupyterlab/apputils-extension:notification``): never
#: fetch the Jupyter news feed nor check for updates, and never ask (its default, ``"none"``, asks every new user in a
#: pop-up whether to fetch news from a website, which a compute node does not reach).
NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}


def write_kernel(plan: ClusterPlan, paths: JupyterPaths, python: str) -> Path:
    """Write the kernel spec and its start-up file into ``paths.kernel_dir`` (made by the caller, 0700), each 0600,
    and JupyterLab's :data:`NOTIFICATION_SETTINGS`; returns ``kernel.json``'s path."""
    from launcher.util.files import replace_private

    replace_private(paths.notification_settings, json.dumps(NOTIFICATION_SETTINGS) + "\n")
    startup = paths.kernel_dir / "hpc_hadoop_startup.py"
    replace_private(startup, KERNEL_STARTUP.format(cluster=plan.cluster_id))
    spec = paths.kernel_dir / "kernel.json"
    replace_private(spec, json.dumps(kernel_spec(plan, python, startup), indent=1) + "\n")
    return spec


def python_of(plan: ClusterPlan) -> str:
    """The Python of the server and its kernel: ``spark.python`` (``/usr/bin/python3`` by default: on every node, for
    every user)."""
    spark = plan.spec.spark
    return spark.python if spark else "/usr/bin/python3"


def server_argv(plan: ClusterPlan, jupyter: JupyterRuntime, address: str, notebooks: Path,
                base: str = "/") -> list[str]:
    """JupyterLab's command line (no secret on it): listening on ``address`` at ``ports.notebook_web`` and nowhere
    else, no other port tried, :func:`base_url` (under ``base``) for the proxy, ``notebooks`` as its root, our kernel
    the only one, no browser; ``allow_root`` only when the owner is root (a test cluster's)."""
    port = plan.ports.notebook_web
    argv = [python_of(plan), "-m", "jupyterlab", "--no-browser",
            f"--ServerApp.ip={address}", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--ServerApp.base_url={base_url(address, port, base)}", f"--ServerApp.root_dir={notebooks}",
            f"--LabApp.app_dir={jupyter.app_dir}",
            f"--KernelSpecManager.allowed_kernelspecs={KERNEL_NAME}", "--KernelSpecManager.ensure_native_kernel=False",
            f"--MappingKernelManager.default_kernel_name={KERNEL_NAME}",
            f"--MappingKernelManager.kernel_info_timeout={KERNEL_STARTUP_S}",
            "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")
    return argv


def server_command(plan: ClusterPlan, node: NodePlan, spark: SparkRuntime, jupyter: JupyterRuntime,
                   paths: JupyterPaths, address: str, notebooks: Path, token: str, base: str = "/") -> DaemonCommand:
    """The JupyterLab "daemon" of the master's agent: :func:`server_argv` with :func:`environment` and the token in
    ``JUPYTER_TOKEN``; its output (JupyterLab logs to stderr) in ``logs/<host>/jupyterlab.log``."""
    env = environment(plan, spark, jupyter, paths)
    env["JUPYTER_TOKEN"] = token
    log = Path(node.log_dir) / f"{DAEMON}.log"
    return DaemonCommand(name=DAEMON, argv=server_argv(plan, jupyter, address, notebooks, base), env=env, log=log,
                         out=log)


def execute_script() -> Path:
    """``launcher/node/notebook_exec.py``: the nbclient run, a script that imports nothing of ``launcher`` (it runs in
    the kernel's Python, with only the JupyterLab runtime on its path)."""
    return Path(__file__).resolve().parents[1] / "node" / "notebook_exec.py"


def execute_argv(plan: ClusterPlan, request: Path) -> list[str]:
    """The command line of one ``--execute``: :func:`execute_script` with the request file."""
    return [python_of(plan), str(execute_script()), str(request)]


def default_output(notebook: Path) -> Path:
    """Where ``--execute NB.ipynb`` writes the executed notebook by default: ``NB.executed.ipynb`` beside it."""
    return notebook.with_name(f"{notebook.name.removesuffix('.ipynb')}.executed.ipynb")


def request_server(plan: ClusterPlan, notebooks: Path, base: str = "/") -> Path:
    """Ask the master's agent for JupyterLab over ``notebooks`` (checked: :func:`check_notebooks_dir`) under the base
    path ``base`` (:func:`base_url`): write :data:`SERVER_REQUEST` (0600) in ``notebook/`` (made 0700 if missing); a
    rewrite starts a server that has exited again. Returns the request's path.

    Raises:
        UserError: ``notebooks`` refused, or ``base`` not a base path.
        OSError: the cluster directory cannot be written.
    """
    from launcher.util.files import replace_private
    from launcher.util.network import base_path

    directory = check_notebooks_dir(plan, notebooks, field="notebook.dir")
    try:
        base = base_path(base)
    except ValueError as exc:
        raise UserError(str(exc), field="--base-url", fix="give a path such as /rnode/<host>/<port>/") from None
    state = notebook_state_dir(plan)
    state.mkdir(mode=0o700, exist_ok=True)
    path = state / SERVER_REQUEST
    replace_private(path, json.dumps({"dir": str(directory), "base": base}) + "\n")
    return path


def request_run(plan: ClusterPlan, notebook: Path, output: Path, *, timeout: float, run_id: str) -> tuple[Path, Path]:
    """Ask the master's agent to execute ``notebook`` into ``output`` (:mod:`launcher.node.notebook_exec`): write
    ``notebook/run-<run_id>.json`` (0600). Returns the request's and the result's paths.

    Raises:
        OSError: the cluster directory cannot be written.
    """
    from launcher.util.files import replace_private

    state = notebook_state_dir(plan)
    state.mkdir(mode=0o700, exist_ok=True)
    request = state / f"{RUN_PREFIX}{run_id}.json"
    result = state / f"{RUN_PREFIX}{run_id}{RESULT_SUFFIX}"
    replace_private(request, json.dumps({"notebook": str(notebook), "output": str(output), "timeout": timeout,
                                         "result": str(result)}) + "\n")
    return request, result
