"""Attacks that must fail (issue 27): ``hhmallory`` against the cluster of another user, from wherever she is.

Shared by ``test_security.py`` (mallory on the owner's node, the local backend) and ``test_interactive.py``'s Slurm
life cycle (mallory on a node of the Slurm test cluster that the owner's cluster has not got). What differs between
the two is only *how a command runs as mallory*: :class:`Mallory` carries it (:func:`mallory_here`,
:func:`mallory_on_node`); every attack goes through :attr:`Mallory.run`.

mallory claims to be the owner (``HADOOP_USER_NAME=<owner>``) with a configuration of her own (Hadoop's defaults:
``simple`` authentication) that names the owner's ResourceManager and JobHistoryServer, whose addresses a port scan
would find (:func:`mallory_conf`). :func:`attacks_fail` runs, while the owner's SleepJob runs:

- Hadoop's own clients (``yarn application -list``/``-kill``, ``yarn jar ... pi``, ``mapred job -submit``/``-list``/
  ``-status``, ``mapred hsadmin``): each must exit non-zero with the RPC servers' refusal
  (``SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]``);
- ``cat`` of the realm's keytabs, ticket cache, ``krb5.conf`` and the web secret: ``Permission denied``;
- the web servers (RM REST and proxy, NM pages and REST, JHS REST, a forged ``hadoop.auth`` cookie, the
  ShuffleHandler without and with a forged job-token hash): HTTP 401;

and afterwards the owner's application still runs and the ResourceManager knows no application it did not know
before (had one attack got through, its application would show up under the owner's name). Every attack prints one
line, ``mallory[ on NODE]: <what>: <exit N or HTTP status> <reason>``.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

from launcher.plan.cluster_plan import ClusterPlan
from launcher.security.kerberos import security_plan
from launcher.security.webauth import COOKIE_LIFETIME_S, HadoopAuthCookie, cookie_header, cookie_value, web_client
from tests.conftest import CLUSTER, REPO, RUNTIME
from tests.users import TestUser

#: How a command runs as mallory: ``run(argv, env, timeout_s)``, output captured, never raises on a non-zero exit.
RunAs = Callable[[list[str], dict[str, str], float], "subprocess.CompletedProcess[str]"]

#: What the ResourceManager's and the JobHistoryServer's RPC servers answer a client that offers ``simple``
#: authentication under ``security: per-cluster`` (Hadoop's ``SaslRpcClient``/``Server``).
SIMPLE_REFUSED = "SIMPLE authentication is not enabled"


@dataclass(frozen=True)
class Mallory:
    """The attacker: her account, her own directory (configuration, job file, work) and how to run a command as
    her on the node she attacks from (``where``: ``None`` for this node, else the test cluster's node name)."""

    user: TestUser
    home: Path
    where: str | None
    run: RunAs

    @property
    def label(self) -> str:
        """``mallory`` or ``mallory on n3``: the start of every line the attacks print."""
        return "mallory" if self.where is None else f"mallory on {self.where}"


def mallory_here(user: TestUser, home: Path) -> Mallory:
    """mallory on this node: :meth:`TestUser.run` (her uid and gid, a login-like environment, ``cwd`` = ``home``)."""
    def run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        return user.run(argv, env=env, cwd=home, timeout=timeout)
    return Mallory(user, home, None, run)


def mallory_on_node(user: TestUser, home: Path, node: str) -> Mallory:
    """mallory on ``node`` of the Slurm test cluster (``tests/cluster/on-node.sh``: its network, host name and
    mounts), as her (``setpriv``: her uid and gid, no supplementary groups) with only her login-like environment
    (``env -i``). Checks once that a command there sees host name ``node`` and user ``user.name``.

    Raises:
        AssertionError: the command did not run on ``node`` as ``user`` (e.g. the node is not up: exit 125).
    """
    def run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        login = [f"{key}={value}" for key, value in user.env(env).items()]
        return subprocess.run([str(CLUSTER / "on-node.sh"), node, "setpriv", f"--reuid={user.uid}",
                               f"--regid={user.gid}", "--clear-groups", "--", "env", "-i", *login, *argv],
                              capture_output=True, text=True, timeout=timeout, cwd=home, check=False)
    who = run(["sh", "-c", "hostname; id -un"], {}, 60)
    assert who.returncode == 0 and who.stdout.split() == [node, user.name], (who.returncode, who.stdout, who.stderr)
    return Mallory(user, home, node, run)


def site_property(path: Path, name: str) -> str:
    """The value of property ``name`` in a ``*-site.xml``.

    Raises:
        KeyError: the file has no such property.
    """
    for prop in ET.parse(path).getroot().iter("property"):
        if prop.findtext("name") == name:
            return prop.findtext("value") or ""
    raise KeyError(f"{name} not in {path}")


def _site(properties: dict[str, str]) -> str:
    lines = "".join(f"  <property><name>{key}</name><value>{value}</value></property>\n"
                    for key, value in properties.items())
    return f"<configuration>\n{lines}</configuration>\n"


def mallory_conf(mallory: Mallory, owner_conf: Path, kerberos: str | None = None) -> Path:
    """mallory's own configuration directory (``<her home>/conf``): Hadoop's defaults (``simple`` authentication)
    plus the owner's ResourceManager and JobHistoryServer addresses (read here from the owner's ``conf/``; a port
    scan would find them), ``mapreduce.framework.name=yarn`` (without it a job would run in mallory's own JVM, not on
    the cluster), a staging directory of her own, and at most 10 s of waiting for the ResourceManager. With
    ``kerberos`` (the ResourceManager's principal, which a user of the same realm can learn), ``conf-krb``
    instead: Kerberos authentication, as a client with a ticket of her own in that realm would be set up."""
    conf = mallory.home / ("conf-krb" if kerberos else "conf")
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(_site({
        "yarn.resourcemanager.address": site_property(owner_conf / "yarn-site.xml", "yarn.resourcemanager.address"),
        "yarn.resourcemanager.connect.max-wait.ms": "10000",
        **({"yarn.resourcemanager.principal": kerberos} if kerberos else {})}))
    if kerberos:
        (conf / "core-site.xml").write_text(_site({"hadoop.security.authentication": "kerberos"}))
    mapred = owner_conf / "mapred-site.xml"
    (conf / "mapred-site.xml").write_text(_site({
        "mapreduce.framework.name": "yarn",
        "yarn.app.mapreduce.am.staging-dir": str(mallory.home / "staging"),
        "mapreduce.jobhistory.address": site_property(mapred, "mapreduce.jobhistory.address"),
        "mapreduce.jobhistory.admin.address": site_property(mapred, "mapreduce.jobhistory.admin.address")}))
    for path in [conf, *conf.iterdir()]:
        mallory.user.own(path, 0o700 if path.is_dir() else 0o600)
    return conf


def sleep_job_argv(cluster_id: str) -> tuple[list[str], dict[str, str]]:
    """The owner's SleepJob (one map that sleeps 10 min, no reduce; not in uber mode, so that the map has a
    container of its own on a NodeManager) through ``hpc-hadoop exec``: its command line and the environment it
    needs on top of the owner's (``HADOOP_CLASSPATH``: the job-client tests jar, where SleepJob lives). The caller
    starts it in the background as the owner."""
    tests_jar = next((RUNTIME / "lib").glob("hadoop-mapreduce-client-jobclient-*-tests.jar"))
    return ([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "exec", cluster_id, "--", "yarn",
             "org.apache.hadoop.mapreduce.SleepJob", "-Dmapreduce.job.ubertask.enable=false", "-m", "1", "-r", "0",
             "-mt", "600000"], {"HADOOP_CLASSPATH": str(tests_jar)})


def running_app(owner: httpx.Client, rm_web: str, client: subprocess.Popen[str], timeout: float = 180) -> dict:
    """The owner's RUNNING application once its AM and its map both run (``runningContainers`` >= 2), read with the
    owner's own cookie (the launcher's :func:`launcher.security.webauth.web_client`).

    Raises:
        AssertionError: the client ended, or the application was not running with its map within ``timeout`` s.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert client.poll() is None, client.communicate()
        got = owner.get(f"{rm_web}/ws/v1/cluster/apps", params={"states": "RUNNING"})
        assert got.status_code == 200, (got.status_code, got.text[:500])
        apps = (got.json().get("apps") or {}).get("app") or []
        if apps and int(apps[0].get("runningContainers", 0)) >= 2:
            return dict(apps[0])
        time.sleep(0.5)
    raise AssertionError(f"the owner's SleepJob was not running with its map within {timeout} s")


def end_client(client: subprocess.Popen[str]) -> None:
    """End ``hpc-hadoop exec`` and the job client it runs (its child), if they still run; their output is read."""
    if client.poll() is None:
        try:
            family = [*psutil.Process(client.pid).children(recursive=True), psutil.Process(client.pid)]
        except psutil.NoSuchProcess:
            family = []
        for process in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
    client.communicate(timeout=60)


def _refusal(out: str) -> str:
    """The RPC refusal in a client's output, as ``<ExceptionClass>: SIMPLE authentication ...`` (the bare message
    where the client prints only that, as ``mapred job`` does for an ``AccessControlException``), or ``""``."""
    found = re.search(r"(?:(\w+(?:Exception|Error)): )?(" + SIMPLE_REFUSED + r"[^\n]*)", out)
    if not found:
        return ""
    return f"{found.group(1)}: {found.group(2).strip()}" if found.group(1) else found.group(2).strip()


def java_client(conf: Path) -> list[str]:
    """The start of a Hadoop client's command line as mallory runs it: a small client JVM with her configuration
    ``conf`` and the runtime's jars on its class path (no ``hadoop`` script: she needs none of the cluster's)."""
    return [shutil.which("java") or "java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", f"{conf}:{RUNTIME}/lib/*"]


def cli_attacks_fail(mallory: Mallory, owner: str, conf: Path, app_id: str) -> list[str]:
    """Hadoop's own clients, as mallory with ``HADOOP_USER_NAME=<owner>`` and her :func:`mallory_conf`, against the
    owner's running application ``app_id``: each exits non-zero with :data:`SIMPLE_REFUSED` and prints no
    application of the owner's. The clients run four at a time (each a JVM: ~2 s of start-up). Returns the lines
    printed.

    Raises:
        AssertionError: a client succeeded, was refused otherwise, or listed an application.
    """
    examples = next((RUNTIME / "lib").glob("hadoop-mapreduce-examples-*.jar"))
    job_xml = mallory.home / "job.xml"
    # `mapred job -submit`'s job file: an identity map over her own directory; its output directory must be set
    # (the client checks it before asking the ResourceManager for a job id) and a staging directory of its own
    # (the client refuses an existing staging directory that is not the claimed user's, before the RPC).
    job_xml.write_text(_site({"mapreduce.job.name": "mallory-submit",
                              "mapreduce.input.fileinputformat.inputdir": f"file://{conf}",
                              "mapreduce.output.fileoutputformat.outputdir": f"file://{mallory.home}/submit-out",
                              "yarn.app.mapreduce.am.staging-dir": str(mallory.home / "staging-submit")}))
    mallory.user.own(job_xml, 0o600)
    java = java_client(conf)
    yarn_cli, job_cli = "org.apache.hadoop.yarn.client.cli.ApplicationCLI", "org.apache.hadoop.mapred.JobClient"
    job_id = app_id.replace("application_", "job_", 1)
    attacks = [
        ("yarn application -list", [*java, yarn_cli, "application", "-list", "-appStates", "ALL"]),
        (f"yarn application -kill {app_id}", [*java, yarn_cli, "application", "-kill", app_id]),
        (f"yarn jar {examples.name} pi 1 10", [*java, "org.apache.hadoop.util.RunJar", str(examples), "pi", "1",
                                              "10"]),
        ("mapred job -submit job.xml", [*java, job_cli, "-submit", str(job_xml)]),
        ("mapred job -list", [*java, job_cli, "-list"]),
        (f"mapred job -status {job_id}", [*java, job_cli, "-status", job_id]),
        (f"mapred hsadmin -getGroups {owner} (the JobHistoryServer's RPC)",
         [*java, "org.apache.hadoop.mapreduce.v2.hs.client.HSAdmin", "-getGroups", owner]),
    ]
    claim = {"HADOOP_USER_NAME": owner}
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(lambda attack: mallory.run(attack[1], claim, 120), attacks))
    lines = []
    for (label, _), result in zip(attacks, done, strict=True):
        out = result.stdout + result.stderr
        reason = _refusal(out)
        lines.append(f"{mallory.label}: {label} as HADOOP_USER_NAME={owner}: exit {result.returncode} {reason}")
        print(lines[-1])
        assert result.returncode != 0 and reason, (label, out[-3000:])
        assert not re.search(r"(application|job)_\d", result.stdout), (label, result.stdout[-2000:])
    return lines


def claimed_name_refused(mallory: Mallory, owner: str, conf: Path) -> str:
    """``yarn application -list`` as mallory with ``HADOOP_USER_NAME=<owner>`` and her :func:`mallory_conf`: the
    ResourceManager refuses it with :data:`SIMPLE_REFUSED` (the one client attack where no application of the owner's
    is needed). Returns the line printed.

    Raises:
        AssertionError: the client succeeded, was refused otherwise, or listed an application.
    """
    java = java_client(conf)
    result = mallory.run([*java, "org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", "-list",
                          "-appStates", "ALL"], {"HADOOP_USER_NAME": owner}, 120)
    out = result.stdout + result.stderr
    reason = _refusal(out)
    line = f"{mallory.label}: yarn application -list as HADOOP_USER_NAME={owner}: exit {result.returncode} {reason}"
    print(line)
    assert result.returncode != 0 and reason, out[-3000:]
    assert not re.search(r"application_\d", result.stdout), result.stdout[-2000:]
    return line


def realm_dir(run_dir: Path) -> Path:
    """The realm's own directory of the cluster in ``run_dir``: node-local on its master node (``_realm`` beside the
    nodes' working directories), never in the cluster directory (issue 36 item 5)."""
    return ClusterPlan.load(run_dir).security.realm_dir


def krb_files_unreadable(mallory: Mallory, owner: str, run_dir: Path,
                         names: Sequence[str] | None = None) -> list[str]:
    """mallory ``cat``s ``names`` in the realm's own directory (:func:`realm_dir`; by default what ``per-cluster``
    keeps there: the realm's keytabs, the owner's ticket cache, ``krb5.conf`` and the web secret), and the realm's
    ``krb5.conf`` and the sealed files in the cluster directory's ``krb/``: each ``Permission denied``. Returns the
    lines printed.

    Raises:
        AssertionError: a file was read, or refused for another reason (e.g. missing).
    """
    lines = []
    default = ("services.keytab", f"{owner}.keytab", f"{owner}.ccache", "krb5.conf", "http-signature.secret")
    realm = realm_dir(run_dir)
    shared = [run_dir / "krb" / "krb5.conf"] if names is None else []
    shared += sorted((run_dir / "krb" / "sealed").glob("*.bin"))  # as root: what she would try
    for path in [*(realm / name for name in (names if names is not None else default)), *shared]:
        read = mallory.run(["cat", str(path)], {}, 60)
        lines.append(f"{mallory.label}: cat {path}: exit {read.returncode} {read.stderr.strip().split(': ')[-1]}")
        print(lines[-1])
        assert read.returncode != 0 and "Permission denied" in read.stderr and not read.stdout, (path, read)
    return lines


#: Run as mallory with the repository's Python: each request of ``argv[1]`` (JSON: method, url, headers, body and
#: ``verify``: false to take any server certificate), one
#: JSON list of answers (status, reason, the first 2000 characters of the body, ``WWW-Authenticate``) on stdout.
MALLORY_HTTP = r"""
import json, sys
import httpx
answers = []
for r in json.loads(sys.argv[1]):
    try:
        got = httpx.request(r["method"], r["url"], headers=r.get("headers") or {}, content=r.get("body"),
                            timeout=20, trust_env=False, verify=r.get("verify", True))
        answers.append({"status": got.status_code, "reason": got.reason_phrase, "body": got.text[:2000],
                        "www": got.headers.get("WWW-Authenticate", "")})
    except httpx.HTTPError as error:
        answers.append({"status": None, "reason": repr(error), "body": "", "www": ""})
print(json.dumps(answers))
"""


def mallory_http(mallory: Mallory, requests: Sequence[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    """``requests`` (method, url, headers, body, verify) made by mallory where she is (:data:`MALLORY_HTTP`); one
    answer each, in order (status, reason, body, ``WWW-Authenticate``; status ``None`` when no HTTP answer came).

    Raises:
        AssertionError: mallory's Python itself failed.
    """
    done = mallory.run([str(REPO / ".venv" / "bin" / "python"), "-c", MALLORY_HTTP, json.dumps(list(requests))],
                       {}, timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


def stray_cookie_buys_nothing(mallory: Mallory, run_dir: Path, owner_uid: int) -> list[str]:
    """Issue 36: what the owner's ``hadoop.auth`` cookie buys mallory had it reached her all the same (the launcher
    sends it only to the owner's daemons: :mod:`launcher.plan.daemon_sockets`). A cookie the launcher signs for the
    ResourceManager, sent by her: within its lifetime it opens the ResourceManager's read-only pages (the positive
    control: it is a valid cookie) but no other daemon (each has a secret of its own), neither REST application
    submission (``yarn.webapp.enable-rest-app-submissions=false``: 403) nor a delegation token (the shim's
    ``NoWebDelegationTokens``: 403); expired, it opens nothing. Returns the lines printed.

    Raises:
        AssertionError: a request got another answer.
    """
    plan = ClusterPlan.load(run_dir)
    signer = HadoopAuthCookie(plan, uid=owner_uid)
    rm = signer.sockets.endpoint(plan.master.address, plan.ports.rm_web)
    jhs = signer.sockets.endpoint(plan.master.address, plan.ports.jhs_web)
    nm = signer.sockets.endpoint(plan.nodemanagers[-1].address, plan.ports.nm_web)
    assert rm is not None and jhs is not None and nm is not None
    caught, expired = signer.header_for(rm), signer.header_for(rm, now_s=time.time() - COOKIE_LIFETIME_S - 5)
    assert caught is not None and expired is not None
    rm_web, other = f"http://{rm.address}:{rm.port}", {"Cookie": caught}
    json_body = {"Content-Type": "application/json", **other}
    attacks: list[tuple[str, dict[str, Any], tuple[int, str]]] = [
        ("the RM's cookie on the RM, read-only (control)", {"method": "GET", "url": f"{rm_web}/ws/v1/cluster/info",
                                                           "headers": other}, (200, "clusterInfo")),
        ("the RM's cookie on the NodeManager", {"method": "GET", "url": f"http://{nm.address}:{nm.port}/ws/v1/node",
                                                "headers": other}, (401, "")),
        ("the RM's cookie on the JobHistoryServer", {"method": "GET", "url": f"http://{jhs.address}:{jhs.port}"
                                                     "/ws/v1/history/mapreduce/jobs", "headers": other}, (401, "")),
        ("the RM's cookie, expired", {"method": "GET", "url": f"{rm_web}/ws/v1/cluster/apps",
                                      "headers": {"Cookie": expired}}, (401, "")),
        ("the RM's cookie: REST new-application", {"method": "POST", "headers": other,
                                                   "url": f"{rm_web}/ws/v1/cluster/apps/new-application"},
         (403, "App submission via REST is disabled")),
        ("the RM's cookie: REST delegation token", {"method": "POST", "url": f"{rm_web}/ws/v1/cluster/delegation-token",
                                                    "headers": json_body, "body": json.dumps({"renewer": "x"})},
         (403, "delegation tokens are not handed out")),
        ("the RM's cookie: ?op=GETDELEGATIONTOKEN", {"method": "GET", "headers": other,
                                                     "url": f"{rm_web}/ws/v1/cluster/info?op=GETDELEGATIONTOKEN"},
         (403, "delegation tokens are not handed out")),
    ]
    answers = mallory_http(mallory, [request for _, request, _ in attacks], timeout=120)
    lines = []
    for (what, _, (status, text)), got in zip(attacks, answers, strict=True):
        said = f" {text!r}" if text and text in got["body"] else ""  # of an error page, the words that matter
        lines.append(f"{mallory.label}: {what}: HTTP {got['status']} {got['reason']}{said}")
        print(lines[-1])
        assert got["status"] == status and text in got["body"], (what, got)
    return lines


#: mallory's squatter (issue 36 item 1): binds ``argv[1]:argv[2]``, prints ``up <pid>``, then answers every connection
#: 503 and keeps what it read in the JSON list ``argv[3]`` (hers), until killed.
SQUATTER = r"""
import json, os, socket, sys
host, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
server.bind((host, port))
server.listen()
print("up", os.getpid(), flush=True)
seen = []
while True:
    conn, _ = server.accept()
    conn.settimeout(5)
    try:
        seen.append(conn.recv(65536).decode(errors="replace"))
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    except OSError as error:
        seen.append(repr(error))
    conn.close()
    with open(log + ".tmp", "w") as out:
        json.dump(seen, out)
    os.replace(log + ".tmp", log)
"""

#: The owner's ``setup:`` line (run in the cluster directory after the configuration is rendered, before the KDC and
#: the daemons start): writes the value of property ``argv[2]`` of the rendered ``conf/*-site.xml`` to
#: ``argv[1]/address`` and the plan's node names to ``argv[1]/nodes``, then waits (at most 120 s) for
#: ``argv[1]/bound``: the test's way to let mallory bind a daemon's port first, as she did by watching ``/proc``.
HANDOFF = r"""
import json, pathlib, sys, time
import xml.etree.ElementTree as ET
handoff, name = pathlib.Path(sys.argv[1]), sys.argv[2]
for site in sorted(pathlib.Path("conf").glob("*-site.xml")):
    for prop in ET.parse(site).getroot().iter("property"):
        if prop.findtext("name") == name:
            value = prop.findtext("value")
nodes = [node["name"] for node in json.loads(pathlib.Path("plan.json").read_text())["nodes"]]
# Each file whole or not there: the test polls for it and reads it at once (a write_text seen between its create and
# its write read "" in the CI of 2026-12-02: `invalid literal for int() with base 10: ''`).
for entry, text in (("nodes", json.dumps(nodes)), ("address", value)):
    (handoff / f".{entry}").write_text(text)
    (handoff / f".{entry}").rename(handoff / entry)
deadline = time.time() + 120
while not (handoff / "bound").exists() and time.time() < deadline:
    time.sleep(0.05)
"""


def am_container(app: dict) -> str:
    """The id of ``app``'s ApplicationMaster container (the last part but one of the RM's ``amContainerLogs``,
    ``http://<nm host:port>/node/containerlogs/<container>/<user>``)."""
    return str(app["amContainerLogs"]).rstrip("/").split("/")[-2]


def web_attacks_fail(mallory: Mallory, owner: str, run_dir: Path, app: dict, map_host: str) -> list[str]:
    """mallory against the owner's web servers (issue 27 item 2), the owner's running application ``app`` (the RM's
    JSON of it) as the target: each request claims the owner's name (``user.name``), or carries a cookie she signed
    with a secret of her own, or fetches a map output without the job's token from the ShuffleHandler of
    ``map_host`` (where the map runs, so that the job's token is registered there); each gets HTTP 401. Returns the
    lines printed.

    Raises:
        AssertionError: a request got another answer than 401, the forged cookie not "Invalid signature", or the
            forged hash was not checked against the job's token.
    """
    security = security_plan("per-cluster", owner, run_dir.name, run_dir)
    conf = run_dir / "conf"
    rm_web = "http://" + site_property(conf / "yarn-site.xml", "yarn.resourcemanager.webapp.address")
    jhs_web = "http://" + site_property(conf / "mapred-site.xml", "mapreduce.jobhistory.webapp.address")
    shuffle_port = site_property(conf / "mapred-site.xml", "mapreduce.shuffle.port")
    app_id = app["id"]
    job_id = app_id.replace("application_", "job_", 1)
    am_logs = app["amContainerLogs"]  # http://<nm host:port>/node/containerlogs/<container>/<user>
    nm_web = am_logs.split("/node/")[0]
    container = am_container(app)
    claim = f"user.name={owner}"
    forged = cookie_header(cookie_value(b"mallory's own secret", owner, security.user_principal,
                                        int(time.time() * 1000) + 600_000))
    shuffle = f"http://{map_host}:{shuffle_port}/mapOutput?job={job_id}&reduce=0&map=" \
              f"{app_id.replace('application_', 'attempt_', 1)}_m_000000_0"
    shuffle_headers = {"name": "mapreduce", "version": "1.0.0"}
    attacks = [
        ("RM REST new-application", {"method": "POST", "url": f"{rm_web}/ws/v1/cluster/apps/new-application?{claim}"}),
        ("RM REST submit", {"method": "POST", "url": f"{rm_web}/ws/v1/cluster/apps?{claim}",
                            "headers": {"Content-Type": "application/json"},
                            "body": json.dumps({"application-id": app_id, "application-name": "pwn",
                                                "am-container-spec": {"commands": {
                                                    "command": "touch /tmp/hh-mallory-was-here"}},
                                                "application-type": "YARN"})}),
        ("RM REST PUT state KILLED", {"method": "PUT", "url": f"{rm_web}/ws/v1/cluster/apps/{app_id}/state?{claim}",
                                      "headers": {"Content-Type": "application/json"},
                                      "body": json.dumps({"state": "KILLED"})}),
        ("RM proxy to the AM", {"method": "GET", "url": f"{rm_web}/proxy/{app_id}/?{claim}"}),
        ("NM container log page", {"method": "GET", "url": f"{am_logs}/syslog?{claim}"}),
        ("NM REST container logs", {"method": "GET",
                                    "url": f"{nm_web}/ws/v1/node/containers/{container}/logs?{claim}"}),
        ("JHS REST jobs", {"method": "GET", "url": f"{jhs_web}/ws/v1/history/mapreduce/jobs?{claim}"}),
        ("NM /node, cookie signed with another secret", {"method": "GET", "url": f"{nm_web}/node",
                                                         "headers": {"Cookie": forged}}),
        ("ShuffleHandler mapOutput, no job token", {"method": "GET", "url": shuffle, "headers": shuffle_headers}),
        ("ShuffleHandler mapOutput, forged UrlHash", {"method": "GET", "url": shuffle,
                                                       "headers": {**shuffle_headers, "UrlHash": "bWFsbG9yeQ=="}}),
    ]
    answers = mallory_http(mallory, [request for _, request in attacks], 300)
    lines = []
    for (label, _), answer in zip(attacks, answers, strict=True):
        body = " ".join(answer["body"].split())
        said = f" ({body[:160]})" if label.startswith("ShuffleHandler") and body else ""
        lines.append(f"{mallory.label}: {label}: HTTP {answer['status']} {answer['reason']}{said}")
        print(lines[-1])
        assert answer["status"] == 401, (label, answer)
    assert "Invalid signature" in answers[7]["reason"] + answers[7]["body"], answers[7]
    assert "Verification of the hashReply failed" in answers[9]["body"], answers[9]
    return lines


def am_web_address(run_dir: Path, app: dict) -> str:
    """``host:port`` of the web server of ``app``'s MapReduce ApplicationMaster: the host of the NodeManager that
    runs the AM container, the port its log names (``WebApps: Web app mapreduce started at <port>``, in its
    ``syslog`` in the cluster's ``logs/<node>/userlogs/``: the port is Hadoop's pick, in no record of YARN's; a
    port scan of the node would find it as well).

    Raises:
        AssertionError: the AM's syslog does not name the port.
    """
    container = am_container(app)
    host = str(app["amHostHttpAddress"]).rsplit(":", 1)[0]
    for syslog in run_dir.glob(f"logs/*/userlogs/{app['id']}/{container}/syslog"):
        started = re.search(r"Web app mapreduce started at (\d+)", syslog.read_text(errors="replace"))
        if started:
            return f"{host}:{started.group(1)}"
    raise AssertionError(f"no AM syslog of {container} names its web port under {run_dir}/logs")


def am_web_port_refused(mallory: Mallory, run_dir: Path, app: dict) -> list[str]:
    """mallory straight to the running MapReduce ApplicationMaster's own web server, past the ResourceManager's
    proxy: Hadoop's ``AmIpFilter`` lets through any request from the ResourceManager's host, which is where
    mallory is in ``test_security.py``. Under ``per-cluster`` the AM serves HTTPS to no one but the ResourceManager's
    proxy (``yarn.resourcemanager.application-https.policy=LENIENT``, ``yarn.app.mapreduce.am.webapp.https.*``):
    an HTTPS request without the ResourceManager's client certificate (mallory takes any server certificate) must
    end in the AM's TLS alert (``bad certificate``, or ``certificate required``), a plain HTTP one in no answer.
    Returns the lines printed.

    Raises:
        AssertionError: a request got an HTTP answer (the AM's pages, or its redirect to the proxy).
    """
    address = am_web_address(run_dir, app)
    job = app["id"].replace("application_", "job_", 1)
    attacks = [("AM web port, HTTPS without the RM's certificate",
                {"method": "GET", "url": f"https://{address}/ws/v1/mapreduce/jobs/{job}/conf", "verify": False}),
               ("AM web port, plain HTTP", {"method": "GET", "url": f"http://{address}/ws/v1/mapreduce/jobs/{job}/conf"})]
    answers = mallory_http(mallory, [request for _, request in attacks], 120)
    lines = []
    for (label, _), answer in zip(attacks, answers, strict=True):
        lines.append(f"{mallory.label}: {label} ({address}): HTTP {answer['status']} {answer['reason']}")
        print(lines[-1])
        assert answer["status"] is None, (label, answer)
    assert re.search(r"BAD_CERTIFICATE|CERTIFICATE_REQUIRED", answers[0]["reason"]), answers[0]
    return lines


def map_host(owner: httpx.Client, rm_web: str, app: dict) -> str:
    """The host of the NodeManager that runs ``app``'s map (a container of the application other than the AM's),
    asked of every NodeManager's REST API with the owner's cookie.

    Raises:
        AssertionError: no NodeManager runs such a container.
    """
    app_key = app["id"].removeprefix("application_")
    am_id = am_container(app)
    for node in owner.get(f"{rm_web}/ws/v1/cluster/nodes").json()["nodes"]["node"]:
        got = owner.get(f"http://{node['nodeHTTPAddress']}/ws/v1/node/containers")
        assert got.status_code == 200, (node, got.status_code, got.text[:500])
        containers = (got.json().get("containers") or {}).get("container") or []
        if any(app_key in c["id"] and c["id"] != am_id for c in containers):
            return str(node["nodeHTTPAddress"]).rsplit(":", 1)[0]
    raise AssertionError(f"no NodeManager runs a container of {app['id']} besides its AM's")


def attacks_fail(mallory: Mallory, owner: str, run_dir: Path, client: subprocess.Popen[str]) -> list[str]:
    """Every attack of this module, by ``mallory`` against the cluster of ``owner`` in ``run_dir`` while the owner's
    SleepJob runs (``client``: its ``hpc-hadoop exec``, started by the caller as the owner with
    :func:`sleep_job_argv`). Then: the owner's application is still RUNNING, the ResourceManager has the same
    applications as before the attacks, all the owner's; the owner's cookie gets 200 where mallory got 401; the
    owner kills the application (``PUT .../state``) and the client ends. Returns every line printed.

    Raises:
        AssertionError: an attack was not refused, or something of mallory's ran, or the owner's app was touched.
    """
    conf = run_dir / "conf"
    rm_web = "http://" + site_property(conf / "yarn-site.xml", "yarn.resourcemanager.webapp.address")
    jhs_web = "http://" + site_property(conf / "mapred-site.xml", "mapreduce.jobhistory.webapp.address")
    started = time.monotonic()
    with web_client(ClusterPlan.load(run_dir), uid=run_dir.stat().st_uid, timeout=10) as owners_web:
        try:
            app = running_app(owners_web, rm_web, client)
            app_id = app["id"]
            before = {a["id"] for a in owners_web.get(f"{rm_web}/ws/v1/cluster/apps").json()["apps"]["app"]}
            began = time.monotonic()
            lines = cli_attacks_fail(mallory, owner, mallory_conf(mallory, conf), app_id)
            cli_s = time.monotonic() - began
            lines += krb_files_unreadable(mallory, owner, run_dir)
            lines += web_attacks_fail(mallory, owner, run_dir, app, map_host(owners_web, rm_web, app))
            lines += am_web_port_refused(mallory, run_dir, app)
            lines += stray_cookie_buys_nothing(mallory, run_dir, run_dir.stat().st_uid)
            print(f"({mallory.label}'s attacks: {time.monotonic() - began:.1f} s, Hadoop's clients {cli_s:.1f} s of "
                  f"it; the owner's SleepJob was running {began - started:.1f} s after its client started)")
            # what mallory was refused, the owner's cookie is granted: the same servers answer the owner
            nm_web = app["amContainerLogs"].split("/node/")[0]
            container = am_container(app)
            for url in (f"{nm_web}/node", f"{nm_web}/ws/v1/node/containers/{container}/logs",
                        f"{jhs_web}/ws/v1/history/mapreduce/jobs",
                        f"{rm_web}/proxy/{app_id}/ws/v1/mapreduce/jobs"):  # the AM, over HTTPS from the proxy
                got = owners_web.get(url)
                assert got.status_code == 200, (url, got.status_code, got.text[:500])
            after = owners_web.get(f"{rm_web}/ws/v1/cluster/apps").json()["apps"]["app"]
            assert [(a["id"], a["state"]) for a in after if a["id"] == app_id] == [(app_id, "RUNNING")], after
            assert {a["id"] for a in after} == before, (before, after)
            assert {a["user"] for a in after} == {owner}, after
            apps = f"{len(after)} application{'s' if len(after) != 1 else ''}"
            lines.append(f"{owner}: {app_id} still RUNNING after {mallory.label}'s attacks; {apps}, the same as "
                         f"before, all {owner}'s")
            print(lines[-1])
            killed = owners_web.put(f"{rm_web}/ws/v1/cluster/apps/{app_id}/state", json={"state": "KILLED"})
            assert killed.status_code in (200, 202), (killed.status_code, killed.text[:500])
            client.wait(120)
        finally:
            end_client(client)
    return lines


# -- directories (issue 36 items 2 and 3): what mallory makes before the owner, and the link farm ---------------------

def mallory_makes(mallory: Mallory, root: Path, path: Path, mode: int = 0o777) -> list[Path]:
    """mallory makes ``path`` below ``root`` (a root every user writes to: a 1777 scratch, ``/tmp``, a node-local disk)
    herself, each missing level with ``mkdir`` in her own process (her uid), each then given ``mode``: what she can
    do before the owner's first run. Returns the levels she made, parents first.

    Raises:
        AssertionError: a ``mkdir`` or ``chmod`` of hers failed.
    """
    made = []
    for level in [path, *path.parents][:len(path.relative_to(root).parts)][::-1]:
        if level.exists():
            continue
        done = mallory.run(["sh", "-c", 'mkdir "$1" && chmod "$2" "$1"', "sh", str(level), f"{mode:o}"], {}, 60)
        assert done.returncode == 0, (level, done.stderr)
        made.append(level)
    print(f"{mallory.label}: made {', '.join(str(level) for level in made)} (mode {mode:04o}) before the owner")
    return made


#: What a cluster directory holds (``runner.materialize``, ``submit.make_cluster_dir``, a run): the names mallory's
#: link farm points back to the owner's moved directory (she cannot list it: it is 0700), ``bin/`` left out.
CLUSTER_ENTRIES = ("job.yaml", "plan.json", "run.json", "submit.json", "conf", "logs", "agents", "steps", "staging",
                   "history", "app-logs", "krb", "spark-conf", "spark-events", ".room-for-run.json")

#: mallory's ``bin/hadoop``, ``bin/yarn`` and ``bin/mapred`` in her link farm: they append who ran them to ``$1`` (a
#: file in her directory, which the owner can write) and print what ``yarn node -list`` prints.
FARM_CLIENT = """#!/bin/sh
echo "$(id -un) ran $0 $*" >> {mark}
echo "Total Nodes:1"
"""


def link_farm(mallory: Mallory, run_dir: Path, *, links: Sequence[str] = CLUSTER_ENTRIES, clients: bool = True,
              job_yaml: str | None = None) -> Path:
    """mallory, who owns the directory above the owner's cluster directory ``run_dir``, renames the owner's directory
    to ``<id>.moved`` and leaves in its place a directory of hers (mode 0777) in which each of ``links`` is a symbolic
    link back into the owner's, but for ``bin/``, whose clients are hers (:data:`FARM_CLIENT`; none without
    ``clients``), and, with ``job_yaml``, a ``job.yaml`` of hers (the ``setup:`` lines the owner's held run would run).
    Returns the file her clients append to, in the directory above ``run_dir``: it exists once one of them ran.

    Raises:
        AssertionError: one of her commands failed.
    """
    mark = run_dir.parent / f"ran-{run_dir.name}"
    moved = run_dir.with_name(run_dir.name + ".moved")
    script = ['set -e', f'mv "{run_dir}" "{moved}"', f'mkdir "{run_dir}"', f'chmod 777 "{run_dir}"',
              *(f'ln -s "{moved}/{name}" "{run_dir}/{name}"' for name in links if name != "bin"),
              *([f'mkdir "{run_dir}/bin"'] if clients else [])]
    done = mallory.run(["sh", "-c", "\n".join(script)], {}, 60)
    assert done.returncode == 0, done.stderr
    for name in ("hadoop", "yarn", "mapred") if clients else ():
        client = mallory.home / f"farm-{name}"
        client.write_text(FARM_CLIENT.format(mark=mark))
        copied = mallory.run(["sh", "-c", f'cp "{client}" "{run_dir}/bin/{name}" && chmod 755 "{run_dir}/bin/{name}"'],
                             {}, 60)
        assert copied.returncode == 0, copied.stderr
    if job_yaml is not None:
        mine = mallory.home / "farm-job.yaml"
        mine.write_text(job_yaml)
        copied = mallory.run(["cp", str(mine), str(run_dir / "job.yaml")], {}, 60)
        assert copied.returncode == 0, copied.stderr
    print(f"{mallory.label}: moved {run_dir} to {moved} and left a directory of hers in its place"
          + (" (links back, her bin/)" if clients else "") + (" (her job.yaml)" if job_yaml is not None else ""))
    return mark


__all__ = ["CLUSTER_ENTRIES", "FARM_CLIENT", "HANDOFF", "KEY_MAGIC", "READ_LOOP", "SQUATTER", "Mallory", "RunAs",
           "SIMPLE_REFUSED", "keys_in", "realm_dir",
           "am_container", "am_web_address", "am_web_port_refused", "attacks_fail", "cli_attacks_fail", "end_client",
           "java_client", "krb_files_unreadable", "link_farm", "mallory_conf", "mallory_makes", "map_host",
           "mallory_here", "mallory_http", "mallory_on_node", "running_app", "site_property", "sleep_job_argv",
           "stray_cookie_buys_nothing", "web_attacks_fail"]


#: Run as mallory with the repository's Python: ``argv[1]`` the directory to read, ``argv[2]`` a file whose appearance
#: ends the loop. Again and again, as fast as it can: finds the owner's cluster directories below it from every
#: process's command line (the agents' name theirs), reads every file a walk of the directory reaches (skipping what
#: it cannot enter) and the realm's files by their names in ``krb/`` (the layout is no secret: the keytabs, the
#: owner's ticket cache, the cookie secrets of each web server on this host), then prints one JSON object:
#: ``passes``, ``clusters`` (the directories found), and ``read``: for each file it ever read, its path below
#: ``argv[1]``, its first two bytes (hex) and its length. On a FUSE mount that caches permission answers across users
#: (real OrangeFS's ``pvfs2fuse``; the stand-in's ``--permission-cache``) she reads what the owner touched a moment
#: before, whatever its mode (issue 36 item 5).
READ_LOOP = r"""
import json, os, socket, sys
root, stop = sys.argv[1], sys.argv[2]
read, passes, clusters = {}, 0, set()
hosts = {"localhost", socket.gethostname()}
daemons = ("resourcemanager", "nodemanager", "historyserver")

def clusters_now():
    found = set()
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
        except OSError:
            continue
        for word in words:
            path = word.decode(errors="replace")
            if path.startswith(root + "/") and "/hpc-hadoop/" in path:
                head, _, rest = path.partition("/hpc-hadoop/")
                found.add(os.path.join(head, "hpc-hadoop", rest.split("/")[0]))
    return found

def take(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:
        return
    read[os.path.relpath(path, root)] = [data[:2].hex(), len(data)]

while not os.path.exists(stop):
    passes += 1
    if passes % 20 == 1:
        clusters |= clusters_now()
    for cluster in sorted(clusters):
        owner = os.path.basename(os.path.dirname(os.path.dirname(cluster)))
        names = ["services.keytab", "site.keytab", f"{owner}.keytab", f"{owner}.ccache", "http-signature.secret",
                 *(f"http-{d}-{h}.secret" for d in daemons for h in hosts)]
        for name in names:
            take(os.path.join(cluster, "krb", name))
        for directory, _dirs, files in os.walk(cluster, onerror=lambda err: None):
            for name in files:
                take(os.path.join(directory, name))
print(json.dumps({"passes": passes, "clusters": sorted(clusters), "read": read}))
"""

#: First bytes of what the realm must never give her: a keytab (``0x0502``), a ticket cache (``0x0503``/``0x0504``).
KEY_MAGIC = ("0502", "0503", "0504")


def keys_in(loot: dict[str, list[Any]]) -> list[str]:
    """The files of a :data:`READ_LOOP` answer that hold the realm's keys: a keytab or ticket cache by name or by its
    first bytes, or a cookie secret (``*.secret``)."""
    return sorted(path for path, (head, size) in loot.items()
                  if size and (path.endswith((".keytab", ".ccache", ".secret")) or head in KEY_MAGIC))
