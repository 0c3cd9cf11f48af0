"""What ``security:`` means for a cluster, in one place (issue 27).

``security: per-cluster`` gives each cluster a Kerberos realm of its own: a KDC on the master node (``ClusterKdc`` of
``hadoop-fs-shim``, started by :mod:`launcher.security.kdc` before the daemons), whose database, ``krb5.conf``,
keytabs and the owner's ticket cache are in the realm's directory on the master node, node-local (``_realm`` beside the
nodes' working directories, 0700, files 0600), never on the shared filesystem: a shared FUSE mount may let another
user past file modes (issue 36 item 5). The other nodes get what their daemons need sealed
(:mod:`launcher.util.sealed`): the cluster directory's ``krb/`` holds only the realm's ``krb5.conf`` and those sealed
files, which each node's agent opens into its node-local ``<work dir>/krb``. Hadoop in
secure mode (``hadoop.security.authentication=kerberos``, service-level authorization naming the owner). A client
that only claims the owner's name (``HADOOP_USER_NAME``) is refused.

``security: site`` uses the site's own realm instead (:class:`launcher.config.spec.KerberosSpec`): no KDC is started;
every daemon logs in as the service principal the centre gave the user (``name/instance@REALM``: Hadoop's RPC needs
an instance part), from a copy of its keytab in the realm's directory (0600, removed at teardown; sealed to the other
nodes); the user's clients use the user's own ticket cache; the realm's ``krb5.conf`` is the site's. Only that
service principal and the user's own principal map to the owner.

``security: simple`` is Hadoop's simple authentication: the ResourceManager believes the user name a client claims,
so anyone who reaches its port can run code as the owner; the run report says so (:data:`SIMPLE_WARNING`).

Imports only :mod:`launcher.config` and the standard library, so that plan, render, lifecycle and the CLI may ask it.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launcher.config.spec import KerberosSpec

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


#: The file name of the copy of the site's keytab in ``krb/`` (``security: site``).
SITE_KEYTAB = "site.keytab"
#: The JVM system property that names the directory of a daemon's keytab: ``<work_dir>/krb`` (the node-local copy the
#: agent makes, :meth:`launcher.node.agent.Agent.prepare_work_dir`), else the cluster directory's ``krb/``. Hadoop's
#: ``Configuration`` reads system properties first when it expands ``${...}`` (3.4.2, ``substituteVars``).
NODE_KRB_PROPERTY = "hpc.node.krb"
#: The JVM system property naming a daemon's own cookie secret (:meth:`SecurityPlan.http_secret_of`).
HTTP_SECRET_PROPERTY = "hpc.http.secret"
#: The glob of every cookie secret in ``krb/`` (the shared one and each daemon's), removed with the keys.
HTTP_SECRETS_GLOB = "http-*.secret"
#: The site's ``krb5.conf`` when neither ``kerberos.krb5_conf`` nor ``KRB5_CONFIG`` names one (MIT's default).
DEFAULT_KRB5_CONF = "/etc/krb5.conf"


def default_krb5_conf(env: Mapping[str, str] | None = None) -> Path:
    """The site's ``krb5.conf``: the first file of ``KRB5_CONFIG`` (a colon-separated list, as MIT reads it), else
    :data:`DEFAULT_KRB5_CONF`."""
    env = os.environ if env is None else env
    first = (env.get("KRB5_CONFIG") or "").split(":")[0]
    return Path(first) if first else Path(DEFAULT_KRB5_CONF)


def user_ccache(env: Mapping[str, str] | None = None, uid: int | None = None) -> str:
    """The user's ticket cache, as ``KRB5CCNAME`` names it (``FILE:/tmp/krb5cc_1000``): ``KRB5CCNAME`` when set,
    else MIT's and Java's default ``FILE:/tmp/krb5cc_<uid>``. A bare path gets ``FILE:``."""
    env = os.environ if env is None else env
    name = env.get("KRB5CCNAME") or f"/tmp/krb5cc_{os.getuid() if uid is None else uid}"
    return name if ":" in name.split("/")[0] else f"FILE:{name}"


def ccache_principal(ccache: str) -> str | None:
    """The default principal of a ``FILE:`` ticket cache (MIT's format, versions 1-4, as ``klist`` shows it on its
    first line), or ``None``: another cache type (``KCM:``, ``KEYRING:``, which Java cannot read), no file, or not a
    ticket cache."""
    import struct

    kind, _, path = ccache.partition(":") if ":" in ccache.split("/")[0] else ("FILE", "", ccache)
    if kind != "FILE":
        return None
    try:
        data = Path(path).read_bytes()
        (version,) = struct.unpack_from(">H", data, 0)
        if version not in (0x0503, 0x0504):
            return None
        at = 2
        if version == 0x0504:
            (length,) = struct.unpack_from(">H", data, at)
            at += 2 + length
        _, count = struct.unpack_from(">II", data, at)
        at += 8
        parts = []
        for _ in range(count + 1):  # the realm, then each component
            (length,) = struct.unpack_from(">I", data, at)
            parts.append(data[at + 4:at + 4 + length].decode())
            at += 4 + length
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return "/".join(parts[1:]) + "@" + parts[0]


def _principal_rule(principal: str, user: str) -> str:
    """The ``auth_to_local`` rule that maps exactly ``principal`` (``name@REALM`` or ``name/instance@REALM``) to
    ``user``."""
    name, _, realm = principal.rpartition("@")
    components = name.count("/") + 1
    form = "$1@$0" if components == 1 else "$1/$2@$0"
    return f"RULE:[{components}:{form}]({re.escape(principal)})s/.*/{user}/"


@dataclass(frozen=True)
class SecurityPlan:
    """The cluster's ``security:`` decided: its realm and where its Kerberos files are.

    Attributes:
        mode: ``per-cluster``, ``site`` or ``simple``.
        user: the cluster's owner (its one user principal, ``<user>@<realm>`` under ``per-cluster``).
        realm: the per-cluster realm (:func:`realm_of`), or the site's (the service principal's realm).
        krb_dir: ``<cluster directory>/krb`` (mode 0700), on the shared filesystem: the realm's ``krb5.conf`` (a copy,
            ``per-cluster``) and ``sealed/<node>.bin``, each node's keys sealed for it (:meth:`sealed_file`); no key
            in the clear.
        realm_dir: the realm's private directory, node-local on the master node (``$TMPDIR/hpc-hadoop-<user>/<cluster
            id>/_realm``, 0700): ``krb5.conf``, ``services.keytab``, ``<user>.keytab``, ``<user>.ccache`` (the owner's
            ticket cache), the cookie secrets ``http-*.secret`` and the KDC's database ``kdc/``; under ``site`` only
            ``site.keytab`` (the copy of the site's keytab) and the secrets.
        client_dir: where clients on other nodes (``env``/``exec``/``ui`` on a login node) find the owner's ticket
            cache and the cookie secrets: ``$XDG_STATE_HOME/hpc-hadoop/clusters/<cluster id>.krb`` (0700, in the
            user's home, not the shared filesystem of the cluster directory); ``None``: nowhere.
        site: ``security: site``'s settings (``kerberos:`` of the job file), else ``None``.
        env: the environment the site's defaults are read from (``KRB5_CONFIG``, ``KRB5CCNAME``): the process's
            when ``None``.
    """

    mode: str
    user: str
    realm: str
    krb_dir: Path
    realm_dir: Path
    client_dir: Path | None = None
    site: KerberosSpec | None = None
    env: Mapping[str, str] | None = None

    @property
    def kerberos(self) -> bool:
        """True when Hadoop runs in secure mode (``per-cluster`` or ``site``)."""
        return self.mode in ("per-cluster", "site")

    @property
    def runs_kdc(self) -> bool:
        """True when the launcher starts a KDC of the cluster's own (``per-cluster``); ``site`` uses the site's."""
        return self.mode == "per-cluster"

    @property
    def is_site(self) -> bool:
        """True under ``security: site`` (with its ``kerberos:`` settings)."""
        return self.mode == "site" and self.site is not None

    @property
    def krb5_conf(self) -> Path:
        """The realm's ``krb5.conf`` every node reads: the launcher's copy in :attr:`krb_dir` of what the KDC writes
        once it listens (:attr:`kdc_krb5_conf`; ``per-cluster``: nothing secret in it), or the site's
        (``kerberos.krb5_conf``, else :func:`default_krb5_conf`)."""
        if self.is_site:
            assert self.site is not None
            return Path(self.site.krb5_conf) if self.site.krb5_conf else default_krb5_conf(self.env)
        return self.krb_dir / "krb5.conf"

    @property
    def kdc_krb5_conf(self) -> Path:
        """The ``krb5.conf`` the KDC writes into :attr:`realm_dir` (``per-cluster``)."""
        return self.realm_dir / "krb5.conf"

    @property
    def services_keytab(self) -> Path:
        """The keytab the daemons log in from: every service principal of every host (``rm/<host>``, ``nm/<host>``,
        ``jhs/<host>``, ``HTTP/<host>``), or under ``site`` the copy of the site's keytab (:data:`SITE_KEYTAB`)."""
        return self.realm_dir / (SITE_KEYTAB if self.is_site else "services.keytab")

    @property
    def daemon_keytab(self) -> str:
        """The daemons' keytab properties' value: ``${hpc.node.krb}/<name of services_keytab>`` (Hadoop expands it
        to each daemon's node-local copy, :data:`NODE_KRB_PROPERTY`; a process without the property reads the
        default in core-site, :attr:`realm_dir`)."""
        return f"${{{NODE_KRB_PROPERTY}}}/{self.services_keytab.name}"

    def node_krb_dir(self, work_dir: Path | None) -> Path:
        """Where a node's daemons find their keys: ``<work_dir>/krb`` (node-local, opened by the node's agent from its
        :meth:`sealed_file`), or :attr:`realm_dir` when the node has no working directory (only the master node has
        one then)."""
        return work_dir / "krb" if work_dir is not None else self.realm_dir

    def node_secret(self, work_dir: Path | None, daemon: str, node: str) -> Path:
        """The cookie secret of one web server where its daemon reads it: in :meth:`node_krb_dir` under the name of
        :meth:`http_secret_of`."""
        return self.node_krb_dir(work_dir) / self.http_secret_of(daemon, node).name

    def sealed_file(self, node: str) -> Path:
        """``krb/sealed/<node>.bin`` in the cluster directory: the keys of ``node``'s daemons (the services keytab,
        their cookie secrets and the ApplicationMasters' one), sealed for that node (:mod:`launcher.util.sealed`,
        context ``<cluster id>/<node>``)."""
        return self.krb_dir / "sealed" / f"{node}.bin"

    def _private(self, name: str) -> Path:
        """``realm_dir/name`` when it is on this node, else the client copy in :attr:`client_dir` (a login node)."""
        own = self.realm_dir / name
        if self.client_dir is None or own.parent.is_dir():
            return own
        return self.client_dir / name

    @property
    def site_keytab(self) -> Path | None:
        """The user's own keytab under ``site`` (copied, never changed), else ``None``."""
        return Path(self.site.keytab) if self.is_site and self.site is not None else None

    @property
    def owner_keytab(self) -> Path:
        """The owner's principal's keytab (``per-cluster``)."""
        return self.realm_dir / f"{self.user}.keytab"

    @property
    def ccache(self) -> Path:
        """The owner's ticket cache (``KRB5CCNAME`` of every client the launcher runs or ``env`` exports): the
        realm's ``<user>.ccache`` under ``per-cluster`` (in :attr:`realm_dir` on the master node, else its copy in
        :attr:`client_dir`), the user's own (:func:`user_ccache`, a ``FILE:`` cache) under ``site``."""
        if self.is_site:
            return Path(user_ccache(self.env).partition(":")[2])
        return self._private(f"{self.user}.ccache")

    @property
    def http_secret(self) -> Path:
        """The secret that signs the web servers' ``hadoop.auth`` cookies (``hadoop.http.authentication.signature.
        secret.file``; written by the launcher, :func:`launcher.security.webauth.write_secret`; removed with the
        keys)."""
        return self.realm_dir / "http-signature.secret"

    def http_secret_of(self, daemon: str, node: str) -> Path:
        """The cookie secret of one web server: ``http-<daemon>-<node>.secret`` in :attr:`realm_dir` (0600; written
        with the others by :func:`launcher.security.webauth.write_secrets`; the daemon reads its node-local copy,
        :meth:`node_secret`, through ``-D``:data:`HTTP_SECRET_PROPERTY`; a client signs with :meth:`signing_secret`).
        A cookie signed with it opens that one daemon's pages, none of the others' (issue 36)."""
        return self.realm_dir / f"http-{daemon}-{node}.secret"

    def signing_secret(self, daemon: str, node: str) -> Path:
        """Where a client on this node reads :meth:`http_secret_of`: in :attr:`realm_dir` on the master node, else
        its copy in :attr:`client_dir`."""
        return self._private(self.http_secret_of(daemon, node).name)

    @property
    def http_secret_property(self) -> str:
        """``hadoop.http.authentication.signature.secret.file``'s value: ``${hpc.http.secret}``, which each daemon's
        ``-D`` sets to its own secret (:meth:`http_secret_of`); a process without it (an ApplicationMaster) reads the
        default in core-site, :attr:`http_secret`."""
        return f"${{{HTTP_SECRET_PROPERTY}}}"

    @property
    def user_principal(self) -> str:
        """The owner's principal: ``<user>@<realm>`` (``per-cluster``); under ``site`` ``kerberos.principal``, else
        the principal of the user's ticket cache (:func:`ccache_principal`), else ``<user>@<realm>``."""
        if self.is_site:
            assert self.site is not None
            return (self.site.principal or ccache_principal(user_ccache(self.env))
                    or f"{self.user}@{self.realm}")
        return f"{self.user}@{self.realm}"

    def principal(self, service: str) -> str:
        """``<service>/_HOST@<realm>``: Hadoop puts the host in place of ``_HOST``; under ``site`` the service
        principal of ``kerberos:`` for every service (web servers included: the cookie is what they accept)."""
        if self.is_site:
            assert self.site is not None
            return self.site.service_principal
        return f"{service}/_HOST@{self.realm}"

    @property
    def auth_to_local(self) -> str:
        """``hadoop.security.auth_to_local``: the service principals of this realm are the owner (every daemon runs
        as the owner), the owner's principal is the owner, nothing else maps (another realm's name is refused).
        Under ``site`` exactly two principals map: the service principal and the user's own (no other user of the
        site's realm, and no other instance of the user's name)."""
        if self.is_site:
            mapped = dict.fromkeys([self.principal("rm"), self.user_principal])
            return "\n".join(_principal_rule(principal, self.user) for principal in mapped)
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


def security_plan(mode: str, user: str, cluster_id: str, run_dir: str | Path, site: KerberosSpec | None = None,
                  env: Mapping[str, str] | None = None, *, node_root: str | Path | None = None,
                  client_root: Path | None = None) -> SecurityPlan:
    """The :class:`SecurityPlan` of a cluster (``security:`` of its job file; ``site``: its ``kerberos:`` section,
    whose service principal names the realm). ``node_root``: the node-local parent of the nodes' working directories
    (``$TMPDIR/hpc-hadoop-<user>/<cluster id>``), where the realm's own directory goes (``_realm``: no host is named
    with an underscore); without one, the cluster directory's ``krb/realm``. ``client_root``: the user's index of
    clusters (:func:`launcher.util.userdirs.clusters_dir`), for :attr:`SecurityPlan.client_dir`."""
    realm = site.service_principal.rpartition("@")[2] if mode == "site" and site is not None else realm_of(cluster_id)
    krb_dir = Path(run_dir) / "krb"
    realm_dir = Path(node_root) / "_realm" if node_root else krb_dir / "realm"
    client_dir = client_root / f"{cluster_id}.krb" if client_root is not None else None
    return SecurityPlan(mode=mode, user=user, realm=realm, krb_dir=krb_dir, realm_dir=realm_dir,
                        client_dir=client_dir, site=site, env=env)
