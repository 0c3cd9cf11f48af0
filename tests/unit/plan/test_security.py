"""What ``security:`` means for a cluster (launcher/plan/security.py)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.security import principal_hosts, realm_of, security_plan


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
    plan = security_plan("per-cluster", "alice", "wc-20261127-112300-ab12", tmp_path)
    assert plan.kerberos and plan.krb_dir == tmp_path / "krb"
    assert plan.principal("rm") == "rm/_HOST@WC-20261127-112300-AB12.HPC-HADOOP"
    assert plan.jvm_flags() == [f"-Djava.security.krb5.conf={tmp_path}/krb/krb5.conf"]
    assert plan.client_env() == {"KRB5CCNAME": f"FILE:{tmp_path}/krb/alice.ccache",
                                 "KRB5_CONFIG": f"{tmp_path}/krb/krb5.conf"}
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
