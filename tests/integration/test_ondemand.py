"""The Open OnDemand app (``ondemand/``, issue 40 item 2) as OnDemand runs it, on the REAL 3-node Slurm test cluster
(``tests/cluster/slurm-up.sh``) over the GlusterFS mount, as a user who is not root.

OnDemand itself cannot be installed here: ``tests/standins/ondemand/batch_connect.rb`` stands in for what it does with
the app (stage ``template/`` and render its ERB files with Ruby's ERB, render ``submit.yml.erb``, write the job script
of ood_core's "basic" batch-connect template, render ``view.html.erb`` with ``connection.yml``), written from
OnDemand's source (the paths are in its header). Everything else is real: the job is submitted with ``sbatch`` as
ood_core's Slurm adapter submits it (the script on stdin, ``--export NONE``, the submit file's ``native`` options),
``hpc-hadoop`` starts the cluster on the job's 2 nodes, its ``ui`` proxy serves the YARN UI on the node's address,
and the requests go there as OnDemand's ``/rnode/<host>/<port>/`` proxy sends them (the base path taken off, the
browser's cookie passed on).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import httpx
import psutil
import pytest
import yaml

from tests.conftest import REPO, fresh_pfs_dir, processes_of, read_http_head, slurm_cluster  # noqa: F401 - the fixture
from tests.jobs import SMALL, wait_until
from tests.users import PASSED_ON, TestUser, make_user, shared_base, user_dir

pytestmark = [pytest.mark.hadoop, pytest.mark.slurm]

#: The app as it ships, and OnDemand's stand-in.
APP = REPO / "ondemand"
STANDIN = REPO / "tests" / "standins" / "ondemand" / "batch_connect.rb"
#: What the session's form sent (the smallest cluster of the suite: 2 nodes; Spark and JupyterLab on).
FORM = {"bc_num_hours": "1", "bc_num_slots": "2", "hadoop_spark": "1", "hadoop_jupyter": "1"}
#: The portal's host as the browser names it (mod_proxy's ``X-Forwarded-Host``), reached over https.
PORTAL = "ood.example.org"
#: The line of ``template/script.sh.erb`` a centre edits (docs/admin-guide.md).
SETUP_LINE = 'setup = "module load hpc-hadoop"'


@pytest.fixture(scope="module")
def ood_user() -> TestUser:
    """A user of the portal, not root, with no cluster of hers yet (her index emptied)."""
    user = make_user("hhood")
    shutil.rmtree(user.home / ".local" / "state" / "hpc-hadoop", ignore_errors=True)
    return user


@pytest.fixture
def portal() -> Iterator[Path]:
    """A directory every user may read (0755, under /tmp) for the app's copy and the form's values; removed after."""
    base = shared_base("ood")
    yield base
    shutil.rmtree(base, ignore_errors=True)


def as_the_centre_edits_it(portal: Path) -> Path:
    """A copy of ``ondemand/`` (readable by everyone, as ``/var/www/ood/apps/sys/<name>``) with script.sh.erb's setup
    line as a centre edits it: hpc-hadoop from this checkout's ``.venv`` (no module system on the test nodes), and the
    variables that make a git worktree's code the one that runs (:data:`tests.users.PASSED_ON`)."""
    app = portal / "hpc-hadoop"
    shutil.copytree(APP, app)
    script = app / "template" / "script.sh.erb"
    text = script.read_text()
    assert text.count(SETUP_LINE) == 1, "the setup line docs/admin-guide.md names is not in script.sh.erb"
    exports = " ".join([f"PATH={REPO / '.venv' / 'bin'}:$PATH"]
                       + [f"{name}={shlex.quote(os.environ[name])}" for name in PASSED_ON if name in os.environ])
    script.write_text(text.replace(SETUP_LINE, f"setup = %q{{export {exports}}}"))
    for path in [app, *app.rglob("*")]:
        path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return app


def ruby(user: TestUser, *args: str) -> str:
    """The stand-in, run as ``user`` (OnDemand renders as the user, in her per-user server)."""
    done = user.run(["ruby", str(STANDIN), *args], timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


class Form(HTMLParser):
    """The first ``<form>`` of a page: its ``action`` and its hidden inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.inputs: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action = values.get("action")
        elif tag == "input" and values.get("type") == "hidden":
            self.inputs[values.get("name", "")] = values.get("value", "")


#: The ``Location`` edit of OnDemand's ``/rnode/`` location (OSC/ondemand
#: ``ood-portal-generator/templates/ood-portal.conf.erb``: ``Header edit Location "^([^/]+//[^/]+)|(?=/)|^([\./]{1,}
#: (?<!/))" "<rnode_uri>/%{MATCH_HOST}e/%{MATCH_PORT}e"``): Apache's ``Header edit`` replaces the first match.
RNODE_LOCATION = re.compile(r"^([^/]+//[^/]+)|(?=/)|^([\./]{1,}(?<!/))")


class RNode:
    """A browser's requests as OnDemand's ``/rnode/<host>/<port>/`` location sends them to the app and its answers as
    the browser gets them back, from OnDemand's source (OSC/ondemand ``ood-portal-generator/templates/
    ood-portal.conf.erb`` and ``mod_ood_proxy/lib/node_proxy.lua``, ``lib/ood/proxy.lua``): the request's path
    without the base (``MATCH_URI``), ``X-Forwarded-Proto: https`` and ``X-Forwarded-User`` (proxy.lua),
    ``X-Forwarded-Host`` (Apache's mod_proxy: the browser's ``Host``); the answer's ``Location`` with the base put in
    front of it (:data:`RNODE_LOCATION`) and each ``Set-Cookie`` without ``Domain`` and with ``Path=/rnode/<host>/
    <port>`` whatever it said. The browser sends back the cookies of that path (``Cookie``)."""

    def __init__(self, host: str, port: int, user: str) -> None:
        self.root = f"/rnode/{host}/{port}"
        self.base = self.root + "/"
        self.address = socket.gethostbyname(host)
        self.port = port
        self.forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": PORTAL, "X-Forwarded-User": user}
        self.http = httpx.Client(base_url=f"http://{self.address}:{port}", trust_env=False,
                                 follow_redirects=False, timeout=60)
        self.cookies: dict[str, str] = {}

    def path(self, full: str) -> str:
        """The path the app gets for the browser's ``full`` one (a link or ``Location`` the browser follows): what
        follows the base (OnDemand's ``MATCH_URI``), the query kept."""
        assert full.startswith(self.base), f"{full} is not under OnDemand's {self.base}"
        return "/" + full[len(self.base):]

    def cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def send(self, method: str, full: str, **kwargs: object) -> httpx.Response:
        headers = {**self.forwarded, **self.cookie_header()}
        answer = self.http.request(method, self.path(full), headers=headers, **kwargs)  # type: ignore[arg-type]
        if "location" in answer.headers:
            answer.headers["Location"] = RNODE_LOCATION.sub(self.root, answer.headers["location"], count=1)
        for cookie in answer.headers.get_list("set-cookie"):
            name, _, value = cookie.split(";", 1)[0].partition("=")
            self.cookies[name] = value  # the Path OnDemand sets is the base: sent back to every page under it
        return answer

    def websocket(self, full: str, origin: str) -> bytes:
        """A WebSocket handshake of a page with ``origin`` for ``full``, as OnDemand sends it on (proxy.lua's
        ``ws://``: the path without the base, the forwarded headers, the browser's ``Origin`` and cookie); the head of
        the answer."""
        lines = [f"GET {self.path(full)} HTTP/1.1", f"Host: {self.address}:{self.port}", "Upgrade: websocket",
                 "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
                 f"Origin: {origin}", *(f"{k}: {v}" for k, v in {**self.forwarded, **self.cookie_header()}.items())]
        with socket.create_connection((self.address, self.port), timeout=30) as sock:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            return read_http_head(sock).split(b"\r\n\r\n", 1)[0]


def queued(job_id: str) -> bool:
    return job_id in subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()


@pytest.fixture
def users_root(slurm_cluster: list[str], ood_user: TestUser) -> Iterator[Path]:  # noqa: F811 - the conftest fixture
    """A fresh scratch root on the GlusterFS mount (0755) with the user's own directory (0700), set as her
    ``filesystem.root`` in her ``~/.config/hpc-hadoop/config.yaml`` with the suite's small memory presets (``sbatch
    --export NONE`` passes no variable of the test on: her own layer is what reaches the job)."""
    root = fresh_pfs_dir("ondemand")
    root.chmod(0o755)
    user_dir(root, ood_user)
    config = ood_user.home / ".config" / "hpc-hadoop"
    config.mkdir(parents=True, exist_ok=True)
    for level in (ood_user.home / ".config", config):
        ood_user.own(level, 0o700)
    (config / "config.yaml").write_text(yaml.safe_dump({"filesystem": {"root": str(root)}, "hadoop": SMALL}))
    ood_user.own(config / "config.yaml", 0o600)
    yield root
    (config / "config.yaml").unlink()


def stage_and_submit(user: TestUser, app: Path, portal: Path) -> tuple[Path, str]:
    """Stage the app for a session (:data:`FORM`) in the user's OnDemand data directory and submit its job script as
    ood_core's Slurm adapter does: the script on stdin, the session's directory, its ``output.log``, the walltime from
    ``bc_num_hours``, ``--export NONE``, then the submit file's ``native`` options. Returns the session's directory
    and the job id."""
    staged = user.home / "ondemand" / "data" / "sys" / "dashboard" / "batch_connect" / "sys" / "hpc-hadoop" / \
        "output" / str(uuid.uuid4())
    context = portal / "context.json"
    context.write_text(json.dumps(FORM))
    context.chmod(0o644)
    submit = json.loads(ruby(user, "stage", str(app), str(staged), str(context)))
    assert submit["batch_connect"] == {"template": "basic", "conn_params": ["hadoop_cluster", "hadoop_jupyter"]}, submit
    native = submit["script"]["native"]
    assert native == ["--nodes=2", "--ntasks-per-node=1", "--exclusive", "--mem=0"], native
    script = (staged / "script.sh").read_text()
    assert os.access(staged / "script.sh", os.X_OK)
    assert 'hpc-hadoop start --scheduler "${scheduler}" hadoop.yaml' in script
    assert 'hpc-hadoop notebook "${job}" --base-url "/rnode/${host}/${port}/" --dir "${HOME}"' in script
    lines = script.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("hpc-hadoop start"))
    print("\nrendered script.sh (from the setup line to the notebook):\n" + "\n".join(lines[12:start + 5]))
    assert "nodes: 2\nwalltime: \"1h\"\nspark: {}\n" in (staged / "before.sh").read_text()
    argv = ["sbatch", "--parsable", "-D", str(staged), "-J", "sys/dashboard/sys/hpc-hadoop", "-o",
            str(staged / "output.log"), "-t", "01:00:00", "--export", "NONE", *native]
    done = subprocess.run(argv, input=(staged / "job_script_content.sh").read_text(), capture_output=True, text=True,
                          timeout=60, cwd=staged, env=user.env(), user=user.uid, group=user.gid, extra_groups=[],
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return staged, done.stdout.strip().split(";")[0]


def connection_of(staged: Path, job_id: str, began: float) -> dict[str, str]:
    """``connection.yml`` once the job script wrote it (after.sh saw the proxy listen), checked: 0600, the first
    node, a port, a password of 32 letters and digits, the same as the proxy's password file."""
    connection = staged / "connection.yml"
    wait_until(lambda: connection.exists() or not queued(job_id), 600, "connection.yml", interval=1)
    output = (staged / "output.log").read_text(errors="replace") if (staged / "output.log").exists() else ""
    assert connection.exists(), f"the job ended without connection.yml:\n{output[-4000:]}"
    print(f"connection.yml after {time.monotonic() - began:.0f} s:\n{connection.read_text()}")
    assert connection.stat().st_mode & 0o777 == 0o600  # umask 077
    conn = yaml.safe_load(connection.read_text())
    assert conn["host"] == "n1" and 2000 <= int(conn["port"]) <= 65535, conn
    assert re.fullmatch(r"[A-Za-z0-9]{32}", conn["password"]), conn
    assert (staged / "ui.password").read_text() == conn["password"] + "\n"
    assert (staged / "ui.password").stat().st_mode & 0o777 == 0o600
    return {key: str(value) for key, value in conn.items()}


def forms_of(page: str) -> list[Form]:
    """Every ``<form>`` of a page, in order (:class:`Form` reads the first of what it is fed)."""
    forms = []
    for chunk in page.split("</form>")[:-1]:
        form = Form()
        form.feed(chunk)
        forms.append(form)
    return forms


def jupyterlab_answers(user: TestUser, form: Form, conn: dict[str, str]) -> None:
    """JupyterLab through OnDemand's proxy, as the view's second button opens it: 403 without the password (and
    JupyterLab itself, asked directly without its token, 403); the password's login redirects to JupyterLab's page,
    which is served under the base (its page configuration's ``baseUrl``) with no token in it; its REST API answers;
    a WebSocket from the portal's pages is relayed (101), one from another site's refused."""
    base = f"/rnode/{conn['host']}/{conn['port']}/"
    lab = conn["hadoop_jupyter"]
    assert re.fullmatch(rf"{re.escape(base)}_/[\d.]+:\d+/lab", lab), lab
    assert form.action == f"{base}login?next={quote(lab, safe='')}" and form.inputs == {"password": conn["password"]}
    root = lab.removesuffix("lab")
    stranger = RNode(conn["host"], int(conn["port"]), user.name)
    refused = {"the page without the cookie": stranger.send("GET", lab),
               "the API without the cookie": stranger.send("GET", f"{root}api/kernels"),
               "the login without the password": stranger.send("POST", form.action, data={})}
    address = root.removeprefix(f"{base}_/").rstrip("/")
    direct = httpx.get(f"http://{address}{root}api/kernels", trust_env=False, timeout=30)
    refused["JupyterLab itself without its token"] = direct
    for what, answer in refused.items():
        print(f"JupyterLab, {what}: {answer.status_code} {answer.text.strip()[:100]}")
        assert answer.status_code == 403, what
    browser = RNode(conn["host"], int(conn["port"]), user.name)
    login = browser.send("POST", form.action, data=form.inputs)
    print(f"JupyterLab, with the password: {login.status_code} Location: {login.headers.get('Location')}")
    assert (login.status_code, login.headers["Location"]) == (303, lab)
    page = browser.send("GET", lab)
    assert page.status_code == 200 and "jupyter-config-data" in page.text, page.text[-2000:]
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                  page.text, re.S).group(1))  # type: ignore[union-attr]
    print(f"JupyterLab's page ({len(page.text)} bytes): baseUrl {config['baseUrl']}, token {config.get('token')!r}")
    assert config["baseUrl"] == root and not config.get("token"), config
    kernels = browser.send("GET", f"{root}api/kernels")
    specs = browser.send("GET", f"{root}api/kernelspecs").json()
    print(f"JupyterLab's API: kernels {kernels.status_code} {kernels.text.strip()}, kernel specs "
          f"{sorted(specs['kernelspecs'])}")
    assert kernels.status_code == 200 and kernels.json() == [] and list(specs["kernelspecs"]) == ["hpc-hadoop"]
    events = f"{root}api/events/subscribe"
    portal, other = browser.websocket(events, f"https://{PORTAL}"), browser.websocket(events, "https://evil.example")
    print(f"a WebSocket from https://{PORTAL}: {portal.splitlines()[0]!r}; from https://evil.example: "
          f"{other.splitlines()[0]!r}")
    assert portal.startswith(b"HTTP/1.1 101") and other.startswith(b"HTTP/1.1 403")


def the_proxy_answers(user: TestUser, form: Form, conn: dict[str, str]) -> None:
    """The proxy, as OnDemand's proxy reaches it: 403 without the password, with a wrong one, for a page without the
    cookie; the password the button posts sets the cookie (its own token, not the password), with which the
    ResourceManager's nodes page lists both nodes with links under the base path and a NodeManager's page opens."""
    base = f"/rnode/{conn['host']}/{conn['port']}/"
    assert form.action is not None
    browser = RNode(conn["host"], int(conn["port"]), user.name)
    refused = {"without a password": browser.send("POST", form.action, data={}),
               "with a wrong password": browser.send("POST", form.action,
                                                     data={"password": conn["password"][:-1] + "x"}),
               "a page without the cookie": browser.send("GET", base)}
    for what, answer in refused.items():
        print(f"{what}: {answer.status_code} {answer.text.strip()}")
        assert answer.status_code == 403 and "Set-Cookie" not in answer.headers, what
    assert browser.cookies == {}
    login = browser.send("POST", form.action, data=form.inputs)
    print(f"with the password: {login.status_code} Location: {login.headers.get('Location')}")
    assert login.status_code == 303 and login.headers["Location"] == base
    assert "; Secure" in login.headers["Set-Cookie"]  # the portal is https (X-Forwarded-Proto): never sent over http
    assert list(browser.cookies) == [f"hpc-hadoop-ui-{conn['port']}"], browser.cookies
    assert conn["password"] not in str(browser.cookies)  # the cookie is the proxy's own token
    home = browser.send("GET", login.headers["Location"])
    assert home.status_code == 302 and home.headers["Location"].endswith("/cluster"), home.headers
    nodes = browser.send("GET", home.headers["Location"] + "/nodes")
    assert nodes.status_code == 200, nodes.text[-2000:]
    assert f"Logged in as: {user.name}" in nodes.text  # the proxy signs each request for her (per-cluster)
    links = {node: re.findall(rf"{re.escape(base)}_/({node}[\w.-]*:\d+)", nodes.text) for node in ("n1", "n2")}
    print(f"the ResourceManager's nodes page through the proxy ({len(nodes.text)} bytes): node links {links}")
    assert all(links.values()), links
    assert "http://n2:" not in nodes.text and "http://n1:" not in nodes.text  # every link stays under the base
    nodemanager = browser.send("GET", f"{base}_/{links['n2'][0]}/node")
    if nodemanager.status_code in (301, 302, 307):
        nodemanager = browser.send("GET", nodemanager.headers["Location"])
    assert nodemanager.status_code == 200 and "NodeManager information" in nodemanager.text, nodemanager.text[-800:]


@pytest.mark.own_cluster("the cluster of an Open OnDemand session, ended by the session's scancel")
def test_the_ondemand_app_serves_the_yarn_ui_through_the_rnode_proxy_with_its_password_and_stops_on_scancel(
        users_root: Path, ood_user: TestUser, portal: Path) -> None:
    """Stage the app for a session of 2 nodes, 1 hour, Spark on, and submit its job script with ``sbatch`` as OnDemand
    does (:func:`stage_and_submit`); once ``connection.yml`` is written (:func:`connection_of`), ``view.html.erb``
    rendered with it posts its password to ``/rnode/<host>/<port>/login``, where the proxy answers
    (:func:`the_proxy_answers`); ``scancel`` (deleting the session) stops the cluster (``stopped``, its final
    ``run.json`` written) and leaves no process of the user's on any node."""
    user = ood_user
    app = as_the_centre_edits_it(portal)
    began = time.monotonic()
    staged, job_id = stage_and_submit(user, app, portal)
    run_dir: Path | None = None
    try:
        conn = connection_of(staged, job_id, began)
        status = json.loads(user.hpc_hadoop("status", job_id, "--json").stdout)
        assert status["cluster_id"] == conn["hadoop_cluster"] and status["state"] == "ready", status
        assert status["nodes"] == ["n1", "n2"], status
        run_dir = Path(status["run_dir"])
        # What the session's card shows: view.html.erb with connection.yml, a button for each web UI.
        yarn, jupyter = forms_of(ruby(user, "view", str(app), str(staged / "connection.yml")))
        assert yarn.action == f"/rnode/{conn['host']}/{conn['port']}/login", yarn.action
        assert yarn.inputs == {"password": conn["password"]}, yarn.inputs
        the_proxy_answers(user, yarn, conn)
        jupyterlab_answers(user, jupyter, conn)
    finally:  # the session deleted: OnDemand cancels its job
        subprocess.run(["scancel", job_id], check=False)
    cancelled = time.monotonic()
    wait_until(lambda: not queued(job_id), 120, f"job {job_id} to end")
    print(f"scancel to the job's end: {time.monotonic() - cancelled:.1f} s ({time.monotonic() - began:.0f} s since "
          "sbatch)")
    assert run_dir is not None
    wait_until(lambda: not processes_of(run_dir), 30, "the cluster's processes to end")

    def left() -> list[str]:
        """Live processes of the user on any node (the nodes share this PID namespace); a zombie is not live."""
        return [f"{p.pid} {' '.join(p.info['cmdline'] or [])[:160]}"
                for p in psutil.process_iter(["username", "cmdline", "status"])
                if p.info["username"] == user.name and p.info["status"] != psutil.STATUS_ZOMBIE]

    wait_until(lambda: not left(), 30, f"the processes of {user.name} to end (left: {left()})")
    ended = json.loads(user.hpc_hadoop("status", job_id, "--json").stdout)
    report = json.loads((run_dir / "run.json").read_text())
    print(f"after scancel: cluster {ended['cluster_id']} {ended['state']}; run.json {report['state']}, teardown "
          f"{report['teardown_s']:.2f} s")
    output = (staged / "output.log").read_text(errors="replace")
    print(output[-3000:])
    # The job script passed the SIGTERM on and waited (before.sh's trap): script.sh asked for the stop, and the held
    # run tore the cluster down and wrote its final run.json before the batch system's KillWait ran out.
    assert "got SIGTERM: script.sh stops the cluster" in output and "got SIGTERM: stopping the cluster" in output
    assert ended["state"] == report["state"] == "stopped", (ended, report["state"])
