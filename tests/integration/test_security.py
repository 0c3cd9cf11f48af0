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

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.conftest import RUNTIME, processes_of, run_report
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


def mallory_is_refused(mallory: TestUser, owner: TestUser, run_dir: Path, conf: Path) -> None:
    """What mallory tries against the owner's secure cluster, and is refused."""
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
    for name in ("services.keytab", f"{owner.name}.keytab", f"{owner.name}.ccache", "krb5.conf"):
        read = mallory.run(["cat", str(krb / name)])
        assert read.returncode != 0 and "Permission denied" in read.stderr, (name, read.stdout[:200])


def check_krb_files(run_dir: Path, owner: TestUser) -> None:
    """The realm's directory is the owner's, mode 0700, and every file in it 0600 (MiniKdc writes 0644)."""
    krb = run_dir / "krb"
    assert krb.stat().st_mode & 0o777 == 0o700
    names = {p.name for p in krb.iterdir() if p.is_file()}
    assert {"krb5.conf", "services.keytab", f"{owner.name}.keytab", f"{owner.name}.ccache"} <= names, names
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
        finally:
            stopped = alice.hpc_hadoop("stop", cid, env=env, timeout=180)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert processes_of(run_dir) == []
        report = run_report(run_dir)
        assert report["state"] == "stopped" and report["leftover_processes"] == 0
        assert any(re.match(r"security: per-cluster: realm SECURE-\S+\.HPC-HADOOP, KDC ready in", note)
                   for note in report["notes"]), report["notes"]
        assert not list((run_dir / "krb").glob("*.keytab")) and not list((run_dir / "krb").glob("*.ccache"))
        print(f"bring-up with security: per-cluster: {report['bringup_s']:.1f} s")
    finally:
        shutil.rmtree(base, ignore_errors=True)
