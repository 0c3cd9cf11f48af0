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

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import RUNTIME, processes_of, run_report
from tests.integration.attacks import attacks_fail, mallory_here, sleep_job_argv
from tests.users import TestUser, make_user, shared_base, user_dir

pytestmark = pytest.mark.hadoop

SMALL = {"map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m", "daemon_heap": "512m"}


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
        assert not list((run_dir / "krb").glob("*.keytab")) and not list((run_dir / "krb").glob("*.ccache"))
        assert not (run_dir / "krb" / "http-signature.secret").exists()
        print(f"bring-up with security: per-cluster: {report['bringup_s']:.1f} s")
    finally:
        shutil.rmtree(base, ignore_errors=True)
