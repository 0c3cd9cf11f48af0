"""What ``security:`` means for a cluster (launcher/security/kerberos.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.security.kerberos import principal_hosts, realm_of, security_plan


def test_the_realm_is_the_cluster_id_in_upper_case() -> None:
    assert realm_of("wc_1.x-20261127-112300-ab12") == "WC-1-X-20261127-112300-AB12.HPC-HADOOP"


def test_principal_hosts_are_each_nodes_name_and_its_reverse_name(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {"10.0.0.1": "node1.cluster.example.org"}

    def reverse(address: str) -> tuple[str, list[str], list[str]]:
        if address in names:
            return names[address], [], [address]
        raise socket.herror(1, "Unknown host")

    monkeypatch.setattr(socket, "gethostbyaddr", reverse)
    hosts = principal_hosts([("node1", "10.0.0.1"), ("Node2", "10.0.0.2"), ("node1", "10.0.0.1")])
    assert hosts == ["node1", "node1.cluster.example.org", "node2", "10.0.0.2"]


def test_per_cluster_names_the_realms_files_and_the_clients_ticket_cache(tmp_path: Path) -> None:
    node = tmp_path / "node-tmp" / "hpc-hadoop-alice" / "wc-20261127-112300-ab12"
    plan = security_plan("per-cluster", "alice", "wc-20261127-112300-ab12", tmp_path, node_root=node,
                         client_root=tmp_path / "state")
    assert plan.kerberos and plan.krb_dir == tmp_path / "krb"
    assert plan.realm_dir == node / "_realm"  # node-local, never the shared filesystem (issue 36 item 5)
    assert plan.principal("rm") == "rm/_HOST@WC-20261127-112300-AB12.HPC-HADOOP"
    assert plan.jvm_flags() == [f"-Djava.security.krb5.conf={tmp_path}/krb/krb5.conf"]  # the public copy
    assert plan.services_keytab == node / "_realm" / "services.keytab"
    # A client on another node (no realm directory there: a login node) reads the copy in the state directory
    assert plan.client_env() == {"KRB5CCNAME": f"FILE:{tmp_path}/state/wc-20261127-112300-ab12.krb/alice.ccache",
                                 "KRB5_CONFIG": f"{tmp_path}/krb/krb5.conf"}
    assert plan.signing_secret("resourcemanager", "n1").parent == tmp_path / "state" / "wc-20261127-112300-ab12.krb"
    (node / "_realm").mkdir(parents=True)  # on the master node: the realm's own
    assert plan.client_env()["KRB5CCNAME"] == f"FILE:{node}/_realm/alice.ccache"
    assert plan.signing_secret("resourcemanager", "n1") == plan.http_secret_of("resourcemanager", "n1")
    rules = plan.auth_to_local.splitlines()
    assert rules[0] == r"RULE:[2:$1@$0](rm@WC-20261127-112300-AB12\.HPC-HADOOP)s/.*/alice/"
    assert rules[-1] == r"RULE:[1:$1@$0](alice@WC-20261127-112300-AB12\.HPC-HADOOP)s/@.*//"
    assert "DEFAULT" not in plan.auth_to_local  # a principal of another realm maps to no one


def test_simple_adds_nothing_to_the_jvms_or_the_clients(tmp_path: Path) -> None:
    plan = security_plan("simple", "alice", "wc-1", tmp_path)
    assert not plan.kerberos and plan.jvm_flags() == [] and plan.client_env() == {}


def test_a_plan_answers_for_its_jobs_security(make_spec: Callable[..., JobSpec],
                                              make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(make_spec(security="per-cluster"))
    assert plan.security.kerberos and plan.security.realm == "T-20240101-000000-ABCD.HPC-HADOOP"
    assert plan.security.krb_dir == Path(plan.run_dir) / "krb"
    assert make_test_plan(make_spec()).security.kerberos  # the default
    assert not make_test_plan(make_spec(security="simple")).security.kerberos


# -- security: site (issue 27 item 4) ---------------------------------------------------------------------

def ccache_bytes(principal: str) -> bytes:
    """A ticket cache of MIT's format version 4 (https://web.mit.edu/kerberos/krb5-devel/doc/formats/
    ccache_file_format.html) holding only its default principal, as ``kinit`` starts one."""
    import struct

    name, _, realm = principal.rpartition("@")
    parts = name.split("/")
    counted = b"".join(struct.pack(">I", len(p)) + p.encode() for p in [realm, *parts])
    return struct.pack(">HH", 0x0504, 0) + struct.pack(">II", 1, len(parts)) + counted


def site_spec(tmp_path: Path, make_spec: Callable[..., JobSpec], **kerberos: str) -> JobSpec:
    keytab = tmp_path / "me.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    return make_spec(security="site", kerberos={"service_principal": "alice/hadoop@HPC.EXAMPLE.ORG",
                                                "keytab": str(keytab), **kerberos})


def test_site_uses_the_sites_realm_principal_keytab_and_the_users_ticket_cache(
        tmp_path: Path, make_spec: Callable[..., JobSpec]) -> None:
    spec = site_spec(tmp_path, make_spec, principal="alice@HPC.EXAMPLE.ORG")
    env = {"KRB5CCNAME": "FILE:/home/alice/cc", "KRB5_CONFIG": "/site/krb5.conf:/etc/krb5.conf"}
    plan = security_plan("site", "alice", "wc-1", tmp_path / "run", spec.kerberos, env=env)
    assert plan.kerberos and plan.is_site and not plan.runs_kdc
    assert plan.realm == "HPC.EXAMPLE.ORG"  # the service principal's, not the cluster's
    assert plan.principal("rm") == plan.principal("HTTP") == "alice/hadoop@HPC.EXAMPLE.ORG"  # no _HOST
    assert plan.services_keytab == tmp_path / "run" / "krb" / "realm" / "site.keytab"  # the copy, not the user's
    assert plan.site_keytab == tmp_path / "me.keytab"
    assert plan.krb5_conf == Path("/site/krb5.conf")
    assert plan.jvm_flags() == ["-Djava.security.krb5.conf=/site/krb5.conf"]
    assert plan.client_env() == {"KRB5CCNAME": "FILE:/home/alice/cc", "KRB5_CONFIG": "/site/krb5.conf"}
    assert plan.user_principal == "alice@HPC.EXAMPLE.ORG"
    assert plan.http_secret == tmp_path / "run" / "krb" / "realm" / "http-signature.secret"


def test_site_maps_exactly_the_service_principal_and_the_users_own(tmp_path: Path,
                                                                    make_spec: Callable[..., JobSpec]) -> None:
    spec = site_spec(tmp_path, make_spec, principal="ALICE.SMITH@HPC.EXAMPLE.ORG")
    plan = security_plan("site", "alice", "wc-1", tmp_path, spec.kerberos, env={})
    assert plan.auth_to_local.splitlines() == [
        r"RULE:[2:$1/$2@$0](alice/hadoop@HPC\.EXAMPLE\.ORG)s/.*/alice/",
        r"RULE:[1:$1@$0](ALICE\.SMITH@HPC\.EXAMPLE\.ORG)s/.*/alice/",
    ]
    assert "DEFAULT" not in plan.auth_to_local  # bob@HPC.EXAMPLE.ORG maps to no one


def test_site_defaults_read_krb5_config_the_ticket_caches_principal_and_etc_krb5_conf(
        tmp_path: Path, make_spec: Callable[..., JobSpec]) -> None:
    spec = site_spec(tmp_path, make_spec)
    cache = tmp_path / "cc"
    cache.write_bytes(ccache_bytes("asmith@HPC.EXAMPLE.ORG"))
    plan = security_plan("site", "alice", "wc-1", tmp_path, spec.kerberos, env={"KRB5CCNAME": str(cache)})
    assert plan.user_principal == "asmith@HPC.EXAMPLE.ORG" and plan.ccache == cache
    assert plan.krb5_conf == Path("/etc/krb5.conf")
    assert plan.client_env()["KRB5CCNAME"] == f"FILE:{cache}"
    # no readable cache (a KCM: cache, which Java cannot read, or none): <login name>@<realm>
    for env in ({"KRB5CCNAME": "KCM:1000"}, {"KRB5CCNAME": str(tmp_path / "none")}):
        plan = security_plan("site", "alice", "wc-1", tmp_path, spec.kerberos, env=env)
        assert plan.user_principal == "alice@HPC.EXAMPLE.ORG", env


def test_a_plan_under_site_answers_with_the_jobs_kerberos_section(tmp_path: Path, make_spec: Callable[..., JobSpec],
                                                                  make_test_plan: Callable[..., ClusterPlan]) -> None:
    plan = make_test_plan(site_spec(tmp_path, make_spec))
    assert plan.security.is_site and plan.security.realm == "HPC.EXAMPLE.ORG"
    assert plan.security.krb_dir == Path(plan.run_dir) / "krb"


#: Hadoop's own ``auth_to_local`` (hadoop-auth's ``KerberosName``, as ``HadoopKerberosName`` sets it from core-site):
#: ``argv[0]`` the rules, then one line per principal: ``<principal> -> <short name>`` or ``<principal> REFUSED``.
SHORT_NAMES_JAVA = """
import org.apache.hadoop.security.authentication.util.KerberosName;

public class ShortNames {
  public static void main(String[] args) throws Exception {
    KerberosName.setRules(args[0]);
    for (int i = 1; i < args.length; i++) {
      try {
        System.out.println(args[i] + " -> " + new KerberosName(args[i]).getShortName());
      } catch (Exception e) {
        System.out.println(args[i] + " REFUSED");
      }
    }
  }
}
"""


def test_hadoops_own_rules_map_exactly_the_two_site_principals(tmp_path: Path, make_spec: Callable[..., JobSpec],
                                                               built_runtime: Path) -> None:
    """Under ``site`` every other principal of the centre's realm, another instance of the user's name and the same
    names in another realm map to no one (Hadoop's ``NoMatchingRule``: the RPC server refuses them)."""
    spec = site_spec(tmp_path, make_spec, principal="alice@HPC.EXAMPLE.ORG")
    rules = security_plan("site", "alice", "wc-1", tmp_path, spec.kerberos, env={}).auth_to_local
    source = tmp_path / "ShortNames.java"
    source.write_text(SHORT_NAMES_JAVA)
    names = ["alice/hadoop@HPC.EXAMPLE.ORG", "alice@HPC.EXAMPLE.ORG", "bob@HPC.EXAMPLE.ORG",
             "alice/admin@HPC.EXAMPLE.ORG", "bob/hadoop@HPC.EXAMPLE.ORG", "alice@OTHER.ORG",
             "alice/hadoop@OTHER.ORG", "alice@HPCXEXAMPLE.ORG"]
    done = subprocess.run([shutil.which("java") or "java", "-cp", f"{built_runtime}/lib/*", str(source), rules,
                           *names], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "alice/hadoop@HPC.EXAMPLE.ORG -> alice", "alice@HPC.EXAMPLE.ORG -> alice",
        *(f"{name} REFUSED" for name in names[2:])], done.stdout
