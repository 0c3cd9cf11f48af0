"""``security: per-cluster`` (issue 27, first slice): a Kerberos realm of the cluster's own, real Hadoop 3.4.2 daemons
on the local backend, as two ordinary users.

``hhalice`` starts an interactive cluster with ``security: per-cluster`` (the launcher starts the cluster's KDC before
the daemons) and runs a word count through ``hpc-hadoop exec``: her clients get their ticket by themselves (the ticket
cache that ``env``/``exec`` name in ``KRB5CCNAME``), twice: with the shared-filesystem shuffle, and with Hadoop's HTTP
shuffle, where the ShuffleHandler opens map outputs through the runtime's pure-Java ``SecureIOUtils`` (Hadoop's needs
``libhadoop.so`` in secure mode). ``hhmallory``, on the same node, while alice's SleepJob runs, writes a configuration
of her own that points at alice's cluster and claims to be alice (``HADOOP_USER_NAME``), and tries every attack of
``tests/integration/attacks.py``: Hadoop's clients (``yarn application -list``/``-kill``, ``yarn jar``, ``mapred job
-submit``/``-list``/``-status``, ``mapred hsadmin``) are refused by the RPC servers (``SIMPLE authentication is not
enabled``), the web servers and the ShuffleHandler answer 401, she cannot read the realm's keytabs or alice's ticket
cache, and alice's application runs on, with no application of mallory's beside it. When alice stops the cluster,
nothing of it runs, the KDC included, and its keys are gone.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from launcher.plan.cluster_plan import ClusterPlan
from launcher.runtime.hadoop import discover
from launcher.security.kerberos import KDC_CLASS
from launcher.security.webauth import web_client
from tests.conftest import REPO, RUNTIME, processes_of, run_report
from tests.integration.attacks import (
    HANDOFF,
    SQUATTER,
    Mallory,
    attacks_fail,
    claimed_name_refused,
    java_client,
    krb_files_unreadable,
    mallory_conf,
    mallory_here,
    realm_dir,
    site_property,
    sleep_job_argv,
)
from tests.jobs import SMALL
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop



def check_krb_files(run_dir: Path, owner: TestUser) -> None:
    """The realm's own directory is node-local (issue 36 item 5), the owner's, mode 0700, and every file in it 0600
    (MiniKdc writes 0644); the cluster directory's ``krb/`` holds only ``krb5.conf`` and the nodes' sealed files."""
    realm = realm_dir(run_dir)
    assert not realm.is_relative_to(run_dir) and realm.stat().st_mode & 0o777 == 0o700
    names = {p.name for p in realm.iterdir() if p.is_file()}
    assert {"krb5.conf", "services.keytab", f"{owner.name}.keytab", f"{owner.name}.ccache",
            "http-signature.secret"} <= names, names
    shared = sorted(str(p.relative_to(run_dir / "krb")) for p in (run_dir / "krb").rglob("*") if p.is_file())
    assert shared == ["krb5.conf", "sealed/localhost.bin"], shared
    for path in [*realm.rglob("*"), *(run_dir / "krb").rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert path.stat().st_uid == owner.uid and mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


@pytest.mark.own_cluster("a realm of its own")
def test_per_cluster_realm_runs_the_owners_job_and_refuses_a_claimed_name(hadoop_runtime: Path) -> None:
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    base = shared_base("hh-krb")
    try:
        home, mallory_home = user_dir(base, alice), user_dir(base, mallory)
        env = {"XDG_STATE_HOME": str(home / "state")}
        words = home / "words.txt"
        words.write_text("to be or not to be\nthat is the question\n")
        alice.own(words, 0o600)
        run_dir = alice.start_cluster(home, "secure", {
            "name": "secure", "scheduler": "local", "walltime": "00:20:00", "security": "per-cluster",
            "filesystem": {"root": str(base)}, "hadoop": {**SMALL, "shuffle": "shared-fs"}}, env)
        cid = run_dir.name
        try:
            check_krb_files(run_dir, alice)
            exported = alice.hpc_hadoop("env", cid, env=env)
            assert f"export KRB5CCNAME=FILE:{realm_dir(run_dir)}/{alice.name}.ccache" in exported.stdout, \
                exported.stdout
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
            # While alice's SleepJob runs, mallory on this node tries everything of tests/integration/attacks.py.
            argv, extra = sleep_job_argv(cid)
            attacks_fail(mallory_here(mallory, mallory_home), alice.name, run_dir,
                         alice.popen(argv, env={**env, **extra}))
        finally:
            stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert processes_of(run_dir) == []
        report = run_report(run_dir)
        assert report["state"] == "stopped" and report["leftover_processes"] == 0
        assert any(re.match(r"security: per-cluster: realm SECURE-\S+\.HPC-HADOOP, KDC ready in", note)
                   for note in report["notes"]), report["notes"]
        assert [p.name for p in (run_dir / "krb").iterdir()] == ["krb5.conf"]  # nothing sealed left
        copies = home / "state" / "hpc-hadoop" / "clusters" / f"{cid}.krb"  # the clients' copies on other nodes
        assert not realm_dir(run_dir).exists() and not copies.exists()
        print(f"bring-up with security: per-cluster: {report['bringup_s']:.1f} s")
    finally:
        shutil.rmtree(base, ignore_errors=True)


#: The service principal the test's centre gives alice for her daemons: ClusterKdc names its service principals
#: ``<service>/<host>``; a real centre would more likely write ``hhalice/hadoop@SITE.TEST``. Any ``name/instance``
#: does (Hadoop's RPC needs the instance); ``hadoop`` resolves to nothing here, so Java keeps it as it is.
SITE_SERVICE = "rm/hadoop@SITE.TEST"


def start_site_kdc(alice: TestUser, centre: Path, other: TestUser) -> subprocess.Popen[str]:
    """The centre's KDC, realm ``SITE.TEST``, run by the runtime's ClusterKdc as alice (so that her keytabs and
    ticket cache are hers, 0600; its log in ``centre-kdc.log`` beside it): ``hhalice@SITE.TEST`` with
    ``hhalice.keytab`` and the ticket cache ``hhalice.ccache``, ``rm/hadoop``, ``nm/hadoop``, ``jhs/hadoop``,
    ``HTTP/hadoop`` in ``services.keytab``, and ``other`` as another user of the centre's realm: their ticket cache
    and the realm's ``krb5.conf`` are copied into their home (theirs; a centre's ``krb5.conf`` is public). It serves
    until its standard input closes. Returns once it printed its ready line."""
    runtime = discover()
    with (centre.parent / "centre-kdc.log").open("w") as log:  # Kerby's log; a pipe nobody reads could fill
        kdc = subprocess.Popen([runtime.java, "-Xmx128m", "-cp", ":".join(runtime.classpath), KDC_CLASS, "--lifetime",
                                "7200", "--user", other.name, str(centre), "SITE.TEST", "127.0.0.1", alice.name,
                                "hadoop"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=alice.env(),
                               cwd=alice.home, user=alice.uid, group=alice.gid, extra_groups=[])
    assert kdc.stdout is not None
    ready = json.loads(kdc.stdout.readline() or "{}")
    assert ready.get("realm") == "SITE.TEST", (ready, kdc.poll())
    for name, mode in ((f"{other.name}.ccache", 0o600), ("krb5.conf", 0o644)):
        shutil.copyfile(centre / name, other.home / name)
        other.own(other.home / name, mode)
    return kdc


def own_site_ticket_refused(mallory: Mallory, owner: str, owner_conf: Path) -> str:
    """mallory with a ticket of her own in the centre's realm (``hhmallory@SITE.TEST``: every user of a centre's realm
    has one) and a Kerberos configuration of her own runs ``yarn application -list`` against the owner's
    ``security: site`` cluster: the ResourceManager knows who she is, and refuses her: ``auth_to_local`` maps only
    the owner's principal and the service principal (its log: ``No rules applied to hhmallory@SITE.TEST``; the
    client sees the connection closed). Returns the line printed.

    Raises:
        AssertionError: the client succeeded, listed an application, or was refused for another reason.
    """
    java = java_client(mallory_conf(mallory, owner_conf, kerberos=SITE_SERVICE))
    java.insert(1, f"-Djava.security.krb5.conf={mallory.user.home / 'krb5.conf'}")
    ccache = mallory.user.home / f"{mallory.user.name}.ccache"
    result = mallory.run([*java, "org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", "-list",
                          "-appStates", "ALL"], {"KRB5CCNAME": f"FILE:{ccache}"}, 120)
    out = result.stdout + result.stderr
    said = [line for line in out.splitlines() if re.search(r"Exception|rror|denied|not authorized", line)]
    line = (f"{mallory.label}: yarn application -list with her own ticket, {mallory.user.name}@SITE.TEST: exit "
            f"{result.returncode} {said[-1].strip() if said else out[-300:]!r}")
    print(line)
    assert result.returncode != 0, out[-3000:]
    assert not re.search(r"application_\d", result.stdout), result.stdout[-2000:]
    # Why: the ResourceManager's own words (the client sees the connection closed, an EOFException)
    refusal = f"No rules applied to {mallory.user.name}@SITE.TEST"
    (rm_log,) = owner_conf.parent.glob("logs/*/resourcemanager.log")
    seen = [text for text in rm_log.read_text(errors="replace").splitlines() if refusal in text]
    assert seen, f"the ResourceManager's log does not say {refusal!r}"
    print(f"  the ResourceManager: {seen[0].strip()[:300]}")
    return line


def site_cluster_serves_alice_only(alice: TestUser, mallory: TestUser, homes: tuple[Path, Path], run_dir: Path,
                                   kerberos: dict[str, str], env: dict[str, str]) -> None:
    """alice's running ``security: site`` cluster: ``krb/`` holds only the keytab's copy and the secret (0600, no
    KDC); her word count runs through ``exec``; her web request without the cookie gets 401, with the launcher's 200;
    mallory, claiming alice's name, is refused by the ResourceManager and cannot read ``krb/``
    (``claimed_name_refused``, ``krb_files_unreadable`` of ``tests/integration/attacks.py``)."""
    (home, mallory_home), cid = homes, run_dir.name
    words = home / "words.txt"
    words.write_text("to be or not to be\nthat is the question\n")
    alice.own(words, 0o600)
    krb = realm_dir(run_dir)
    web = {f"http-{daemon}-localhost.secret": "0o600" for daemon in ("resourcemanager", "historyserver", "nodemanager")}
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in krb.iterdir()} == {
        "site.keytab": "0o600", "http-signature.secret": "0o600", **web}  # one cookie secret per web server
    assert oct(krb.stat().st_mode & 0o777) == "0o700" and not list(run_dir.rglob("kdc.log"))
    shared = [str(p.relative_to(run_dir)) for p in (run_dir / "krb").rglob("*")]
    assert shared == ["krb/sealed", "krb/sealed/localhost.bin"], shared
    conf = run_dir / "conf"
    assert site_property(conf / "yarn-site.xml", "yarn.resourcemanager.principal") == SITE_SERVICE
    examples = next((RUNTIME / "lib").glob("hadoop-mapreduce-examples-*.jar"))
    counted = alice.hpc_hadoop("exec", cid, "--", "yarn", "jar", str(examples), "wordcount", str(words),
                               str(home / "out"), env=env, timeout=300)
    assert counted.returncode == 0, (counted.stdout + counted.stderr)[-3000:]
    counts = dict(line.split("\t") for line in (home / "out" / "part-r-00000").read_text().splitlines())
    assert counts["be"] == "2" and counts["question"] == "1", counts
    rm_web = "http://" + site_property(conf / "yarn-site.xml", "yarn.resourcemanager.webapp.address")
    anonymous = httpx.get(f"{rm_web}/ws/v1/cluster/apps", timeout=20, trust_env=False)
    print(f"alice without the cookie: HTTP {anonymous.status_code} {anonymous.reason_phrase}, "
          f"WWW-Authenticate: {anonymous.headers.get('WWW-Authenticate')}")
    assert anonymous.status_code == 401, anonymous.text[:500]
    with web_client(ClusterPlan.load(run_dir), uid=alice.uid, timeout=20) as web:
        apps = web.get(f"{rm_web}/ws/v1/cluster/apps")
    assert apps.status_code == 200, apps.text[:500]
    assert {a["user"] for a in apps.json()["apps"]["app"]} == {alice.name}
    attacker = mallory_here(mallory, mallory_home)
    claimed_name_refused(attacker, alice.name, mallory_conf(attacker, conf))
    own_site_ticket_refused(attacker, alice.name, conf)
    krb_files_unreadable(attacker, alice.name, run_dir, names=("site.keytab", "http-signature.secret"))


@pytest.mark.own_cluster("the site's realm")
def test_site_realm_runs_the_owners_job_as_her_principals_and_refuses_a_claimed_name(hadoop_runtime: Path) -> None:
    """``security: site`` (issue 27 item 4): a realm the test stands up (``SITE.TEST``) plays the centre's; alice's
    cluster starts no KDC, its daemons log in as the service principal from a copy of her keytab, her word count runs
    with her own ticket cache (``KRB5CCNAME``; her principal read from it); the web servers take the launcher's
    cookie and refuse a request without one; mallory claiming alice's name is refused, and so is mallory with a
    ticket of her own in the centre's realm (:func:`own_site_ticket_refused`); she cannot read ``krb/``;
    after ``stop`` the copy and the secret are gone and alice's own keytab is as it was."""
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    base = shared_base("hh-site")
    kdc = None
    try:
        home, mallory_home = user_dir(base, alice), user_dir(base, mallory)
        centre = home / "centre"
        kdc = start_site_kdc(alice, centre, mallory)
        keytab = centre / "services.keytab"
        before = keytab.stat()
        env = {"XDG_STATE_HOME": str(home / "state"), "KRB5CCNAME": f"FILE:{centre / (alice.name + '.ccache')}"}
        kerberos = {"service_principal": SITE_SERVICE, "keytab": str(keytab), "krb5_conf": str(centre / "krb5.conf")}
        run_dir = alice.start_cluster(home, "site", {
            "name": "site", "scheduler": "local", "walltime": "00:20:00", "security": "site", "kerberos": kerberos,
            "filesystem": {"root": str(base)}, "hadoop": SMALL}, env)
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


@pytest.mark.own_cluster("a squatter ends its bring-up")
def test_a_squatter_on_the_resourcemanagers_web_port_gets_no_cookie(hadoop_runtime: Path) -> None:
    """Issue 36 item 1: mallory binds the ResourceManager's web port (read from the rendered ``yarn-site.xml``) before
    the ResourceManager does. The owner's bring-up sends her nothing that authenticates (the launcher checks the
    kernel's owner of the listening socket first) and ends in one line naming the port and mallory; nothing of the
    cluster is left running. (The code before this issue sent her the owner's signed cookie with its first readiness
    poll, valid 600 s on every web server.)"""
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    base = shared_base("hh-squat")
    squatter = None
    try:
        home, mallory_home = user_dir(base, alice), user_dir(base, mallory)
        (home / "handoff").mkdir()
        handoff = alice.own(home / "handoff")
        (home / "handoff.py").write_text(HANDOFF)
        script = alice.own(home / "handoff.py", 0o600)
        prop = "yarn.resourcemanager.webapp.address"
        env = {"XDG_STATE_HOME": str(home / "state")}
        job = home / "squat.yaml"
        job.write_text(yaml.safe_dump({
            "name": "squat", "scheduler": "local", "walltime": "00:10:00", "security": "per-cluster",
            "filesystem": {"root": str(base)}, "hadoop": SMALL,
            "setup": [f"/usr/bin/python3 {script} {handoff} {prop}"],
            "steps": [{"example": "pi", "args": [1, 10]}]}))
        alice.own(job, 0o600)
        submit = alice.popen([str(REPO / ".venv" / "bin" / "python"), "-m", "launcher.cli", "submit", str(job)],
                             env=env)
        deadline = time.monotonic() + 120
        while not (handoff / "address").exists():
            assert submit.poll() is None and time.monotonic() < deadline, submit.communicate()
            time.sleep(0.05)
        host, _, port = (handoff / "address").read_text().rpartition(":")
        log = mallory_home / "squatter.json"
        squatter = mallory.popen(["/usr/bin/python3", "-c", SQUATTER, host, port, str(log)])
        assert squatter.stdout is not None and squatter.stdout.readline().startswith("up "), squatter.communicate()
        (handoff / "bound").touch()
        out, err = submit.communicate(timeout=300)
        errors = [line for line in (out + err).splitlines() if line.startswith("error:")]
        print(f"mallory listens on {host}:{port} (the ResourceManager's web port) before the ResourceManager; "
              f"alice's submit: exit {submit.returncode}")
        for line in errors:
            print(f"  {line}")
        seen = json.loads(log.read_text()) if log.exists() else []
        print(f"mallory's squatter read {len(seen)} request(s): {[s.splitlines()[0] if s else '' for s in seen]}")
        assert submit.returncode != 0 and len(errors) == 1, out[-3000:] + err[-3000:]
        assert str(port) in errors[0] and f"held by another user's process ({mallory.name} (uid {mallory.uid}))" \
            in errors[0], errors
        assert not any("hadoop.auth" in request or "cookie:" in request.lower() for request in seen), seen
        (run_dir,) = (home / "hpc-hadoop").iterdir()
        assert processes_of(run_dir) == []
        assert not list((run_dir / "krb").glob("*.keytab"))
    finally:
        if squatter is not None:
            squatter.kill()
            squatter.wait()
        shutil.rmtree(base, ignore_errors=True)
