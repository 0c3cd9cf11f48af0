"""What ``security:`` means for a cluster, in one place (issue 27).

``security: per-cluster`` gives each cluster a Kerberos realm of its own: a KDC on the master node (``ClusterKdc`` of
``hadoop-fs-shim``, started by :mod:`launcher.lifecycle.kdc` before the daemons), whose database, ``krb5.conf``,
keytabs and the owner's ticket cache are in the cluster directory's ``krb/`` (mode 0700, files 0600); Hadoop in
secure mode (``hadoop.security.authentication=kerberos``, service-level authorization naming the owner). A client
that only claims the owner's name (``HADOOP_USER_NAME``) is refused.

``security: simple`` is Hadoop's simple authentication: the ResourceManager believes the user name a client claims,
so anyone who reaches its port can run code as the owner; the run report says so (:data:`SIMPLE_WARNING`).

Imports only :mod:`launcher.config` and the standard library, so that plan, render, lifecycle and the CLI may ask it.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The run report's warning under ``security: simple`` (one line, ``run.json``'s ``notes``).
SIMPLE_WARNING = ("security: simple: Hadoop believes the user name a client claims: anyone who can reach this "
                  "cluster's ports can run code as you (HADOOP_USER_NAME); use security: per-cluster to close it")
#: The services that get a principal ``<service>/<host>`` on every host (``ClusterKdc.SERVICES``).
SERVICES = ("rm", "nm", "jhs", "HTTP")
#: The Java class of the per-cluster KDC (hadoop-fs-shim).
KDC_CLASS = "org.hpchadoop.security.ClusterKdc"
#: The realm's domain part (a realm is ``<cluster id>.HPC-HADOOP``, upper case).
REALM_DOMAIN = "HPC-HADOOP"


def realm_of(cluster_id: str) -> str:
    """The per-cluster realm: the cluster id in upper case, characters other than letters, digits and ``-``
    replaced by ``-``, then ``.HPC-HADOOP`` (``wc-20261127-112300-ab12`` → ``WC-20261127-112300-AB12.HPC-HADOOP``)."""
    return re.sub(r"[^A-Z0-9-]", "-", cluster_id.upper()) + "." + REALM_DOMAIN


def principal_hosts(names_and_addresses: Iterable[tuple[str, str]]) -> list[str]:
    """The host names Hadoop puts in place of ``_HOST`` on each node, lower case, in order, no duplicates: the
    node's name and the name its address resolves back to (a server names itself by the reverse lookup of its
    bind address; ``127.0.0.1`` is ``localhost``), or the address itself when it does not resolve back."""
    hosts: list[str] = []
    for name, address in names_and_addresses:
        try:
            candidates = [name, socket.gethostbyaddr(address)[0]]
        except OSError:
            candidates = [name, address]  # Java's getHostName() of an address that does not resolve back
        for host in candidates:
            if host.lower() not in hosts:
                hosts.append(host.lower())
    return hosts


@dataclass(frozen=True)
class SecurityPlan:
    """The cluster's ``security:`` decided: its realm and where its Kerberos files are.

    Attributes:
        mode: ``per-cluster``, ``site`` or ``simple``.
        user: the cluster's owner (its one user principal, ``<user>@<realm>``).
        realm: the per-cluster realm (:func:`realm_of`).
        krb_dir: ``<cluster directory>/krb`` (mode 0700): ``krb5.conf``, ``services.keytab``, ``<user>.keytab``,
            ``<user>.ccache`` (the owner's ticket cache), ``http-signature.secret`` (the web servers' cookie secret) and
            the KDC's database ``kdc/``.
    """

    mode: str
    user: str
    realm: str
    krb_dir: Path

    @property
    def kerberos(self) -> bool:
        """True when Hadoop runs in secure mode (``per-cluster``)."""
        return self.mode == "per-cluster"

    @property
    def krb5_conf(self) -> Path:
        """The realm's ``krb5.conf`` (written by the KDC once it listens)."""
        return self.krb_dir / "krb5.conf"

    @property
    def services_keytab(self) -> Path:
        """Every service principal of every host (``rm/<host>``, ``nm/<host>``, ``jhs/<host>``, ``HTTP/<host>``)."""
        return self.krb_dir / "services.keytab"

    @property
    def owner_keytab(self) -> Path:
        """The owner's principal's keytab."""
        return self.krb_dir / f"{self.user}.keytab"

    @property
    def ccache(self) -> Path:
        """The owner's ticket cache (``KRB5CCNAME`` of every client the launcher runs or ``env`` exports)."""
        return self.krb_dir / f"{self.user}.ccache"

    @property
    def http_secret(self) -> Path:
        """The secret that signs the web servers' ``hadoop.auth`` cookies (``hadoop.http.authentication.signature.
        secret.file``; written by the launcher, :func:`launcher.plan.webauth.write_secret`; removed with the keys)."""
        return self.krb_dir / "http-signature.secret"

    @property
    def user_principal(self) -> str:
        """The owner's principal, ``<user>@<realm>``."""
        return f"{self.user}@{self.realm}"

    def principal(self, service: str) -> str:
        """``<service>/_HOST@<realm>``: Hadoop puts the host in place of ``_HOST``."""
        return f"{service}/_HOST@{self.realm}"

    @property
    def auth_to_local(self) -> str:
        """``hadoop.security.auth_to_local``: the service principals of this realm are the owner (every daemon runs
        as the owner), the owner's principal is the owner, nothing else maps (another realm's name is refused)."""
        realm = self.realm.replace(".", "\\.")  # letters, digits, '-', '.'; a pattern holds no parenthesis
        rules = [f"RULE:[2:$1@$0]({service}@{realm})s/.*/{self.user}/" for service in SERVICES]
        rules.append(f"RULE:[1:$1@$0]({re.escape(self.user)}@{realm})s/@.*//")  # user names hold no parenthesis
        return "\n".join(rules)

    def jvm_flags(self) -> list[str]:
        """JVM flags of every daemon and client: the realm's ``krb5.conf``; none outside Kerberos."""
        return [f"-Djava.security.krb5.conf={self.krb5_conf}"] if self.kerberos else []

    def client_env(self) -> dict[str, str]:
        """Environment of the owner's clients: ``KRB5CCNAME`` (the ticket cache) and ``KRB5_CONFIG`` (for MIT
        tools); empty outside Kerberos."""
        if not self.kerberos:
            return {}
        return {"KRB5CCNAME": f"FILE:{self.ccache}", "KRB5_CONFIG": str(self.krb5_conf)}


def security_plan(mode: str, user: str, cluster_id: str, run_dir: str | Path) -> SecurityPlan:
    """The :class:`SecurityPlan` of a cluster (``security:`` of its job file)."""
    return SecurityPlan(mode=mode, user=user, realm=realm_of(cluster_id), krb_dir=Path(run_dir) / "krb")
