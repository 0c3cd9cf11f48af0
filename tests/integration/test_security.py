"""``security: per-cluster`` (issue 27, first slice): a Kerberos realm of the cluster's own, real Hadoop 3.4.2 daemons
on the local backend, as two ordinary users.

``hhalice`` starts an interactive cluster with ``security: per-cluster`` (the launcher starts the cluster's KDC before
the daemons) and runs a word count through ``hpc-hadoop exec``: her clients get their ticket by themselves (the ticket
cache that ``env``/``exec`` name in ``KRB5CCNAME``), twice: with the shared-filesystem shuffle, and with Hadoop's HTTP
shuffle, where the ShuffleHandler opens map outputs through the runtime's pure-Java ``SecureIOUtils`` (Hadoop's needs
``libhadoop.so`` in secure mode). ``hhmallory``, on the same node,
writes a configuration of her own that points at alice's ResourceManager and claims to be alice
(``HADOOP_USER_NAME``): the ResourceManager refuses her (``SIMPLE authentication is not enabled``), and she cannot read
the realm's keytabs or alice's ticket cache. When alice stops the cluster, nothing of it runs, the KDC included, and
its keys are gone.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import yaml

from launcher.config.spec import KerberosSpec
from launcher.plan.security import KDC_CLASS, security_plan
from launcher.plan.webauth import cookie_header, cookie_value, web_client
from launcher.runtime.hadoop import discover
from tests.conftest import REPO, RUNTIME, processes_of, run_report
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop

SMALL = {"map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m", "daemon_heap": "512m"}


def site_property(path: Path, name: str) -> str:
    """The value of property ``name`` in a ``*-site.xml``."""
    for prop in ET.parse(path).getroot().iter("property"):
        if prop.findtext("name") == name:
            return prop.findtext("value") or ""
    raise KeyError(f"{name} not in {path}")


def mallory_conf(mallory: TestUser, home: Path, owner_conf: Path) -> Path:
    """A configuration of mallory's own (Hadoop's defaults: simple authentication) that points at the owner's
    ResourceManager, whose address a port scan would find; she waits at most 10 s for it."""
    rm = site_property(owner_conf / "yarn-site.xml", "yarn.resourcemanager.address")
    conf = home / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        "<configuration>\n"
        f"  <property><name>yarn.resourcemanager.address</name><value>{rm}</value></property>\n"
        "  <property><name>yarn.resourcemanager.connect.max-wait.ms</name><value>10000</value></property>\n"
        "</configuration>\n")
    for path in [conf, *conf.iterdir()]:
        mallory.own(path, 0o700 if path.is_dir() else 0o600)
    return conf


#: The files of ``krb/`` under ``security: per-cluster`` that mallory must not read (``{owner}``: the owner's name).
PER_CLUSTER_KEYS = ("services.keytab", "{owner}.keytab", "{owner}.ccache", "krb5.conf", "http-signature.secret")


def mallory_is_refused(mallory: TestUser, owner: TestUser, run_dir: Path, conf: Path,
                       keys: Sequence[str] = PER_CLUSTER_KEYS) -> None:
    """What mallory tries against the owner's secure cluster, and is refused: the ResourceManager as the owner's
    claimed name, and reading each of ``keys`` in ``krb/``."""
    java = shutil.which("java") or "java"
    listing = mallory.run([java, "-Xmx256m", "-cp", f"{conf}:{RUNTIME}/lib/*",
                           "org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", "-list",
                           "-appStates", "ALL"], env={"HADOOP_USER_NAME": owner.name}, timeout=120)
    out = listing.stdout + listing.stderr
    print(f"mallory: yarn application -list as HADOOP_USER_NAME={owner.name}: exit {listing.returncode}")
    print("\n".join(line for line in out.splitlines() if "SIMPLE authentication" in line)[:600])
    assert listing.returncode != 0 and "SIMPLE authentication is not enabled" in out, out[-3000:]
    assert "application_" not in listing.stdout, listing.stdout[-2000:]
    krb = run_dir / "krb"
    for key in keys:
        name = key.format(owner=owner.name)
        read = mallory.run(["cat", str(krb / name)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (name, read.stdout[:200])


#: Run as mallory with the repository's Python: each request of ``argv[1]`` (JSON: method, url, headers, body), one
#: JSON list of answers (status, reason, the first 2000 characters of the body, ``WWW-Authenticate``) on stdout.
MALLORY_HTTP = r"""
import json, sys
import httpx
answers = []
for r in json.loads(sys.argv[1]):
    try:
        got = httpx.request(r["method"], r["url"], headers=r.get("headers") or {}, content=r.get("body"),
                            timeout=20, trust_env=False)
        answers.append({"status": got.status_code, "reason": got.reason_phrase, "body": got.text[:2000],
                        "www": got.headers.get("WWW-Authenticate", "")})
    except httpx.HTTPError as error:
        answers.append({"status": None, "reason": repr(error), "body": "", "www": ""})
print(json.dumps(answers))
"""


def mallory_http(mallory: TestUser, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """mallory's HTTP requests (:data:`MALLORY_HTTP`), made as her from this node; their answers in order."""
    done = mallory.run([str(REPO / ".venv" / "bin" / "python"), "-c", MALLORY_HTTP, json.dumps(requests)],
                       timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    answers: list[dict[str, Any]] = json.loads(done.stdout)
    return answers


def start_sleeping_app(alice: TestUser, cid: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """alice's SleepJob (one map that sleeps 10 min, no reduce; not in uber mode, so that the map has a container
    of its own on the NodeManager), through ``hpc-hadoop exec``, in the background."""
    tests_jar = next((RUNTIME / "lib").glob("hadoop-mapreduce-client-jobclient-*-tests.jar"))
    return alice.popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "exec", cid, "--", "yarn",
                        "org.apache.hadoop.mapreduce.SleepJob",
                        "-Dmapreduce.job.ubertask.enable=false", "-m", "1", "-r", "0", "-mt", "600000"],
                       env={**env, "HADOOP_CLASSPATH": str(tests_jar)})


def running_app(owner: httpx.Client, rm_web: str, client: subprocess.Popen[str], timeout: float = 180) -> dict:
    """The owner's RUNNING application once its AM and its map both run (``runningContainers`` >= 2), read with the
    owner's own cookie (the launcher's :func:`launcher.plan.webauth.web_client`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert client.poll() is None, client.communicate()
        got = owner.get(f"{rm_web}/ws/v1/cluster/apps", params={"states": "RUNNING"})
        assert got.status_code == 200, (got.status_code, got.text[:500])
        apps = (got.json().get("apps") or {}).get("app") or []
        if apps and int(apps[0].get("runningContainers", 0)) >= 2:
            return dict(apps[0])
        time.sleep(0.5)
    raise AssertionError(f"alice's SleepJob was not running with its map within {timeout} s")


def web_attacks_fail(mallory: TestUser, owner: TestUser, run_dir: Path, env: dict[str, str]) -> None:
    """mallory against alice's web servers (issue 27 item 2): each request claims alice's name (``user.name``), or
    carries a cookie she signed with a secret of her own, or fetches a map output without the job's token; each gets
    HTTP 401, and alice's running application is untouched. The owner's own cookie (the launcher's) gets through."""
    security = security_plan("per-cluster", owner.name, run_dir.name, run_dir)
    conf = run_dir / "conf"
    rm_web = "http://" + site_property(conf / "yarn-site.xml", "yarn.resourcemanager.webapp.address")
    jhs_web = "http://" + site_property(conf / "mapred-site.xml", "mapreduce.jobhistory.webapp.address")
    shuffle_port = site_property(conf / "mapred-site.xml", "mapreduce.shuffle.port")
    client = start_sleeping_app(owner, run_dir.name, env)
    with web_client(security, timeout=10) as alice_web:
        try:
            app = running_app(alice_web, rm_web, client)
            app_id = app["id"]
            job_id = app_id.replace("application_", "job_", 1)
            am_logs = app["amContainerLogs"]  # http://<nm host:port>/node/containerlogs/<container>/<user>
            nm_web = am_logs.split("/node/")[0]
            container = am_logs.rstrip("/").split("/")[-2]
            nm_host = nm_web.removeprefix("http://").rsplit(":", 1)[0]
            claim = f"user.name={owner.name}"
            forged = cookie_header(cookie_value(b"mallory's own secret", owner.name, security.user_principal,
                                                int(time.time() * 1000) + 600_000))
            shuffle = f"http://{nm_host}:{shuffle_port}/mapOutput?job={job_id}&reduce=0&map=" \
                      f"{app_id.replace('application_', 'attempt_', 1)}_m_000000_0"
            shuffle_headers = {"name": "mapreduce", "version": "1.0.0"}
            attacks = [
                ("RM REST new-application", {"method": "POST", "url": f"{rm_web}/ws/v1/cluster/apps/new-application?"
                                                                      f"{claim}"}),
                ("RM REST submit", {"method": "POST", "url": f"{rm_web}/ws/v1/cluster/apps?{claim}",
                                    "headers": {"Content-Type": "application/json"},
                                    "body": json.dumps({"application-id": app_id, "application-name": "pwn",
                                                        "am-container-spec": {"commands": {
                                                            "command": "touch /tmp/hh-mallory-was-here"}},
                                                        "application-type": "YARN"})}),
                ("RM REST PUT state KILLED", {"method": "PUT",
                                              "url": f"{rm_web}/ws/v1/cluster/apps/{app_id}/state?{claim}",
                                              "headers": {"Content-Type": "application/json"},
                                              "body": json.dumps({"state": "KILLED"})}),
                ("RM proxy to the AM", {"method": "GET", "url": f"{rm_web}/proxy/{app_id}/?{claim}"}),
                ("NM container log page", {"method": "GET", "url": f"{am_logs}/syslog?{claim}"}),
                ("NM REST container logs", {"method": "GET",
                                            "url": f"{nm_web}/ws/v1/node/containers/{container}/logs?{claim}"}),
                ("JHS REST jobs", {"method": "GET", "url": f"{jhs_web}/ws/v1/history/mapreduce/jobs?{claim}"}),
                ("NM /node, cookie signed with another secret", {"method": "GET", "url": f"{nm_web}/node",
                                                                 "headers": {"Cookie": forged}}),
                ("ShuffleHandler mapOutput, no job token", {"method": "GET", "url": shuffle,
                                                             "headers": shuffle_headers}),
                ("ShuffleHandler mapOutput, forged UrlHash", {"method": "GET", "url": shuffle,
                                                               "headers": {**shuffle_headers,
                                                                           "UrlHash": "bWFsbG9yeQ=="}}),
            ]
            answers = mallory_http(mallory, [request for _, request in attacks])
            for (label, _), answer in zip(attacks, answers, strict=True):
                body = " ".join(answer["body"].split())
                said = f" ({body[:160]})" if label.startswith("ShuffleHandler") and body else ""
                print(f"mallory: {label}: HTTP {answer['status']} {answer['reason']}{said}")
                assert answer["status"] == 401, (label, answer)
            assert "Invalid signature" in answers[7]["reason"] + answers[7]["body"], answers[7]
            # what mallory was refused, the owner's cookie is granted: the same servers answer alice
            for url in (f"{nm_web}/node", f"{nm_web}/ws/v1/node/containers/{container}/logs",
                        f"{jhs_web}/ws/v1/history/mapreduce/jobs"):
                got = alice_web.get(url)
                assert got.status_code == 200, (url, got.status_code, got.text[:500])
            after = alice_web.get(f"{rm_web}/ws/v1/cluster/apps").json()["apps"]["app"]
            assert [(a["id"], a["state"]) for a in after if a["id"] == app_id] == [(app_id, "RUNNING")], after
            assert {a["user"] for a in after} == {owner.name} and all(a["name"] != "pwn" for a in after), after
            print(f"alice: {app_id} still RUNNING after mallory's attacks; {len(after)} applications, all hers")
            killed = alice_web.put(f"{rm_web}/ws/v1/cluster/apps/{app_id}/state", json={"state": "KILLED"})
            assert killed.status_code in (200, 202), (killed.status_code, killed.text[:500])
            client.wait(120)
        finally:
            end_client(client)


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


def check_krb_files(run_dir: Path, owner: TestUser) -> None:
    """The realm's directory is the owner's, mode 0700, and every file in it 0600 (MiniKdc writes 0644)."""
    krb = run_dir / "krb"
    assert krb.stat().st_mode & 0o777 == 0o700
    names = {p.name for p in krb.iterdir() if p.is_file()}
    assert {"krb5.conf", "services.keytab", f"{owner.name}.keytab", f"{owner.name}.ccache",
            "http-signature.secret"} <= names, names
    for path in krb.rglob("*"):
        mode = path.stat().st_mode & 0o777
        assert path.stat().st_uid == owner.uid and mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_per_cluster_realm_runs_the_owners_job_and_refuses_a_claimed_name(hadoop_runtime: Path) -> None:
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    base = shared_base("hh-krb")
    try:
        home, mallory_home = user_dir(base, alice), user_dir(base, mallory)
        env = {"XDG_STATE_HOME": str(home / "state")}
        words = home / "words.txt"
        words.write_text("to be or not to be\nthat is the question\n")
        alice.own(words, 0o600)
        job = home / "secure.yaml"
        job.write_text(yaml.safe_dump({"name": "secure", "scheduler": "local", "walltime": "00:20:00",
                                       "security": "per-cluster", "filesystem": {"root": str(base)},
                                       "hadoop": {**SMALL, "shuffle": "shared-fs"}}))
        alice.own(job, 0o600)
        started = alice.hpc_hadoop("start", str(job), env=env, timeout=300)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        (run_dir,) = (home / "hpc-hadoop").iterdir()
        cid = run_dir.name
        try:
            check_krb_files(run_dir, alice)
            exported = alice.hpc_hadoop("env", cid, env=env)
            assert f"export KRB5CCNAME=FILE:{run_dir}/krb/{alice.name}.ccache" in exported.stdout, exported.stdout
            examples = next((RUNTIME / "lib").glob("hadoop-mapreduce-examples-*.jar"))
            # The cluster's shuffle (hadoop.shuffle: shared-fs: the reducer reads the map output itself), then
            # Hadoop's own over HTTP (the ShuffleHandler opens the map output as the owner's, checked in pure Java).
            for name, shuffle in (("shared", []), ("http", ["-Dmapreduce.job.reduce.shuffle.consumer.plugin.class="
                                                            "org.apache.hadoop.mapreduce.task.reduce.Shuffle"])):
                counted = alice.hpc_hadoop("exec", cid, "--", "yarn", "jar", str(examples), "wordcount", *shuffle,
                                           str(words), str(home / name), env=env, timeout=300)
                out = counted.stdout + counted.stderr
                assert counted.returncode == 0, out[-3000:]
                assert ("DIRECT_MAPS=1" in out) is (name == "shared"), out[-3000:]
                counts = dict(line.split("\t") for line in (home / name / "part-r-00000").read_text().splitlines())
                assert counts["be"] == "2" and counts["question"] == "1", counts
            mallory_is_refused(mallory, alice, run_dir, mallory_conf(mallory, mallory_home, run_dir / "conf"))
            web_attacks_fail(mallory, alice, run_dir, env)
        finally:
            stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert processes_of(run_dir) == []
        report = run_report(run_dir)
        assert report["state"] == "stopped" and report["leftover_processes"] == 0
        assert any(re.match(r"security: per-cluster: realm SECURE-\S+\.HPC-HADOOP, KDC ready in", note)
                   for note in report["notes"]), report["notes"]
        assert not list((run_dir / "krb").glob("*.keytab")) and not list((run_dir / "krb").glob("*.ccache"))
        assert not (run_dir / "krb" / "http-signature.secret").exists()
        print(f"bring-up with security: per-cluster: {report['bringup_s']:.1f} s")
    finally:
        shutil.rmtree(base, ignore_errors=True)


#: The service principal the test's centre gives alice for her daemons: ClusterKdc names its service principals
#: ``<service>/<host>``; a real centre would more likely write ``hhalice/hadoop@SITE.TEST``. Any ``name/instance``
#: does (Hadoop's RPC needs the instance); ``hadoop`` resolves to nothing here, so Java keeps it as it is.
SITE_SERVICE = "rm/hadoop@SITE.TEST"


def start_site_kdc(alice: TestUser, centre: Path) -> subprocess.Popen[str]:
    """The centre's KDC, realm ``SITE.TEST``, run by the runtime's ClusterKdc as alice (so that her keytabs and
    ticket cache are hers, 0600; its log in ``centre-kdc.log`` beside it): ``hhalice@SITE.TEST`` with
    ``hhalice.keytab`` and the ticket cache ``hhalice.ccache``, and ``rm/hadoop``, ``nm/hadoop``, ``jhs/hadoop``,
    ``HTTP/hadoop`` in ``services.keytab``; it serves until its standard input closes. Returns once it printed its
    ready line."""
    runtime = discover()
    with (centre.parent / "centre-kdc.log").open("w") as log:  # Kerby's log; a pipe nobody reads could fill
        kdc = subprocess.Popen([runtime.java, "-Xmx128m", "-cp", ":".join(runtime.classpath), KDC_CLASS, "--lifetime",
                                "7200", str(centre), "SITE.TEST", "127.0.0.1", alice.name, "hadoop"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=alice.env(),
                               cwd=alice.home, user=alice.uid, group=alice.gid, extra_groups=[])
    assert kdc.stdout is not None
    ready = json.loads(kdc.stdout.readline() or "{}")
    assert ready.get("realm") == "SITE.TEST", (ready, kdc.poll())
    return kdc


def site_cluster_serves_alice_only(alice: TestUser, mallory: TestUser, homes: tuple[Path, Path], run_dir: Path,
                                   kerberos: dict[str, str], env: dict[str, str]) -> None:
    """alice's running ``security: site`` cluster: ``krb/`` holds only the keytab's copy and the secret (0600, no
    KDC); her word count runs through ``exec``; her web request without the cookie gets 401, with the launcher's 200;
    mallory is refused (:func:`mallory_is_refused`)."""
    (home, mallory_home), cid = homes, run_dir.name
    words = home / "words.txt"
    words.write_text("to be or not to be\nthat is the question\n")
    alice.own(words, 0o600)
    krb = run_dir / "krb"
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in krb.iterdir()} == {
        "site.keytab": "0o600", "http-signature.secret": "0o600"}
    assert oct(krb.stat().st_mode & 0o777) == "0o700" and not list(run_dir.rglob("kdc.log"))
    conf = run_dir / "conf"
    assert site_property(conf / "yarn-site.xml", "yarn.resourcemanager.principal") == SITE_SERVICE
    examples = next((RUNTIME / "lib").glob("hadoop-mapreduce-examples-*.jar"))
    counted = alice.hpc_hadoop("exec", cid, "--", "yarn", "jar", str(examples), "wordcount", str(words),
                               str(home / "out"), env=env, timeout=300)
    assert counted.returncode == 0, (counted.stdout + counted.stderr)[-3000:]
    counts = dict(line.split("\t") for line in (home / "out" / "part-r-00000").read_text().splitlines())
    assert counts["be"] == "2" and counts["question"] == "1", counts
    rm_web = "http://" + site_property(conf / "yarn-site.xml", "yarn.resourcemanager.webapp.address")
    security = security_plan("site", alice.name, cid, run_dir, KerberosSpec(**kerberos))
    anonymous = httpx.get(f"{rm_web}/ws/v1/cluster/apps", timeout=20, trust_env=False)
    print(f"alice without the cookie: HTTP {anonymous.status_code} {anonymous.reason_phrase}, "
          f"WWW-Authenticate: {anonymous.headers.get('WWW-Authenticate')}")
    assert anonymous.status_code == 401, anonymous.text[:500]
    with web_client(security, timeout=20) as web:
        apps = web.get(f"{rm_web}/ws/v1/cluster/apps")
    assert apps.status_code == 200, apps.text[:500]
    assert {a["user"] for a in apps.json()["apps"]["app"]} == {alice.name}
    mallory_is_refused(mallory, alice, run_dir, mallory_conf(mallory, mallory_home, conf),
                       keys=("site.keytab", "http-signature.secret"))


def test_site_realm_runs_the_owners_job_as_her_principals_and_refuses_a_claimed_name(hadoop_runtime: Path) -> None:
    """``security: site`` (issue 27 item 4): a realm the test stands up (``SITE.TEST``) plays the centre's; alice's
    cluster starts no KDC, its daemons log in as the service principal from a copy of her keytab, her word count runs
    with her own ticket cache (``KRB5CCNAME``; her principal read from it); the web servers take the launcher's
    cookie and refuse a request without one; mallory claiming alice's name is refused and cannot read ``krb/``;
    after ``stop`` the copy and the secret are gone and alice's own keytab is as it was."""
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    base = shared_base("hh-site")
    kdc = None
    try:
        home, mallory_home = user_dir(base, alice), user_dir(base, mallory)
        centre = home / "centre"
        kdc = start_site_kdc(alice, centre)
        keytab = centre / "services.keytab"
        before = keytab.stat()
        env = {"XDG_STATE_HOME": str(home / "state"), "KRB5CCNAME": f"FILE:{centre / (alice.name + '.ccache')}"}
        kerberos = {"service_principal": SITE_SERVICE, "keytab": str(keytab), "krb5_conf": str(centre / "krb5.conf")}
        job = home / "site.yaml"
        job.write_text(yaml.safe_dump({"name": "site", "scheduler": "local", "walltime": "00:20:00",
                                       "security": "site", "kerberos": kerberos, "filesystem": {"root": str(base)},
                                       "hadoop": SMALL}))
        alice.own(job, 0o600)
        started = alice.hpc_hadoop("start", str(job), env=env, timeout=300)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        (run_dir,) = (home / "hpc-hadoop").iterdir()
        cid = run_dir.name
        try:
            site_cluster_serves_alice_only(alice, mallory, (home, mallory_home), run_dir, kerberos, env)
        finally:
            stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert processes_of(run_dir) == []
        report = run_report(run_dir)
        assert report["state"] == "stopped" and report["leftover_processes"] == 0
        note = next(n for n in report["notes"] if n.startswith("security: site:"))
        print(note)
        assert (f"realm SITE.TEST, no KDC started; daemons log in as {SITE_SERVICE}" in note
                and f"clients as {alice.name}@SITE.TEST" in note), note
        assert list((run_dir / "krb").iterdir()) == []
        after = keytab.stat()
        assert (after.st_mode, after.st_size, after.st_mtime_ns) == (before.st_mode, before.st_size,
                                                                     before.st_mtime_ns)
        print(f"bring-up with security: site: {report['bringup_s']:.1f} s")
    finally:
        if kdc is not None:
            kdc.communicate(timeout=30)  # its standard input closes: the centre's KDC stops
        shutil.rmtree(base, ignore_errors=True)
