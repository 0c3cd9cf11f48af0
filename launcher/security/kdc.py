"""The per-cluster KDC of ``security: per-cluster``: started on the master node before the daemons, ended after them.

Owns: :class:`Kdc`. Runs ``org.hpchadoop.security.ClusterKdc`` (hadoop-fs-shim; Hadoop's MiniKdc, i.e. Apache Kerby)
with the runtime's JDK and jars; it writes ``krb5.conf``, the keytabs and the owner's ticket cache into the realm's
node-local directory (:attr:`launcher.security.kerberos.SecurityPlan.realm_dir`), never the shared filesystem; the
launcher then seals for each node what its daemons need (:func:`publish_keys`). The KDC prints one JSON line when it
answers, and serves
until its standard input closes: if the launcher dies, the KDC ends with it. Before it starts,
:func:`secure_mode_checks` asks every node, through the fan-out, what ``security: per-cluster`` needs
(:mod:`launcher.security.checks`): a site that cannot meet it gets one line naming the fix before any daemon
starts. Imports the plan, the fan-out's launchers and :func:`launcher.util.processes.end`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import selectors
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from launcher.fanout import get_launcher
from launcher.fanout.processes import start_client
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.daemon_sockets import DaemonSockets
from launcher.runtime.hadoop import NO_CONTAINER_SUPPORT
from launcher.security.checks import (
    KerberosCheck,
    NodeProbe,
    check_clock_skew,
    check_kdc_port,
    check_names,
    first_failure,
    probe,
    probed_addresses,
    resolve_bound,
)
from launcher.security.kerberos import KDC_CLASS, principal_hosts
from launcher.security.webauth import write_secrets
from launcher.util.errors import ClusterError, UserError
from launcher.util.files import replace_private
from launcher.util.processes import end
from launcher.util.safedirs import make_private_dir
from launcher.util.sealed import JOB_COOKIE_ENV, KEY_ENV, job_cookie_key, new_key, seal

#: The longest wait for the KDC's ready line, seconds (measured here: 0.8-1.5 s with a cold JVM).
READY_TIMEOUT = 60.0
#: The KDC's heap, MiB (MiniKdc measured at 55-100 MB RSS in issue 27's trial).
KDC_HEAP_MB = 128
#: Seconds the KDC has to end after its standard input closes, before SIGTERM, then SIGKILL.
STOP_GRACE = 5.0


#: The cluster directory's subdirectory where each node writes its answer to the secure-mode probe.
PROBES_DIR = "probes"
#: The longest wait for every node's answer to the secure-mode probe (:func:`probe_nodes`), seconds.
PROBE_TIMEOUT = 60.0


def probe_argv(nodes: Sequence[tuple[str, str]], node: str | None = None, answers: Path | None = None,
               interface: str | None = None) -> list[str]:
    """``python -m launcher.security.checks [--node NODE] [--answer-dir ANSWERS] [--interface IF]
    NAME=ADDRESS...`` with this interpreter."""
    return [sys.executable, "-m", "launcher.security.checks", *(["--node", node] if node else []),
            *(["--answer-dir", str(answers)] if answers is not None else []),
            *(["--interface", interface] if interface else []),
            *(f"{name}={address}" for name, address in nodes)]


def probe_nodes(nodes: Sequence[tuple[str, str]], fanout: str, program: str | None = None,
                timeout: float = PROBE_TIMEOUT, answers: Path | None = None,
                interface: str | None = None) -> tuple[list[NodeProbe], float, float]:
    """Every node's :class:`~launcher.security.checks.NodeProbe`, got through the launcher ``fanout`` (run as
    ``program`` when given), as the agents are: in this process when the launcher runs here (``local``: every node
    is this machine), one command per node for a per-node launcher (``pbsdsh``, ``qrsh``...), else one command for
    all (``srun``: each task finds its node as the agent does). Each node answers with a file, ``answers/<node>.json``,
    as the agents report through ``agents/<node>.json``: a batch system's task launcher need not relay its task's
    output (OpenPBS's ``pbs_tmrsh`` and Torque's ``pbsdsh`` send it to the job's output file: issue 37 item 5).

    Args:
        nodes: ``(name, address)`` of every node, the master's first (under ``interface``, the others' name stands
            in for their address: each finds its own, :attr:`NodeProbe.bound`).
        answers: a private directory every node shares (the cluster directory's ``probes/``; ``doctor``: one it
            makes under the filesystem root), emptied first; required unless the launcher runs here.
        interface: the job file's ``interface`` (``None``: the daemons bind to the node names' addresses).

    Returns:
        The probes in the order of ``nodes``, and this host's clock (epoch seconds) before and after them.

    Raises:
        UserError: unknown launcher name.
        ClusterError: a probe failed, printed no answer, a node did not answer, or they took more than ``timeout``
            seconds.
    """
    launcher = get_launcher(fanout, program=program)
    names = [name for name, _ in nodes]
    before = time.time()
    if launcher.runs_here:
        probes = [probe(name, nodes, interface=interface) for name in names]
        return probes, before, time.time()
    if answers is None:
        raise ClusterError("the secure-mode checks need a directory every node shares for their answers")
    for old in answers.glob("*.json"):  # an earlier attempt's answers are not this one's
        old.unlink()
    if launcher.per_node:
        commands = [launcher.wrap(probe_argv(nodes, name, answers, interface), [name]) for name in names]
    else:
        commands = [launcher.wrap(probe_argv(nodes, answers=answers, interface=interface), names)]
    # As the agents' launchers: in the job's process tree, SIGTERM if we die (output and errors on one pipe).
    procs = [start_client(argv, subprocess.PIPE) for argv in commands]
    deadline = time.monotonic() + timeout
    for argv, proc in zip(commands, procs, strict=True):
        try:
            out, _ = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            end(procs, grace=STOP_GRACE)
            raise ClusterError(f"the nodes did not answer the secure-mode checks within {timeout:.0f} s: "
                               f"{' '.join(argv[:6])} ...") from None
        text = out.decode(errors="replace")
        if proc.returncode != 0:
            raise ClusterError(f"the secure-mode checks failed on a node (exit {proc.returncode}): "
                               f"{text.strip()[-300:] or '(no output here: a task launcher may send it elsewhere)'}")
    after = time.time()
    found = read_answers(answers, names)
    missing = [name for name in names if name not in found]
    if missing:
        raise ClusterError(f"no answer to the secure-mode checks from {', '.join(missing)}: the check ran and exited "
                           f"0, but wrote no {answers}/<node>.json (is {answers} on a filesystem every node shares?)")
    return [found[name] for name in names], before, after


def read_answers(answers: Path, names: Sequence[str]) -> dict[str, NodeProbe]:
    """The probes the nodes ``names`` wrote into ``answers`` (``<node>.json``), by node; a node without a file is left
    out.

    Raises:
        ClusterError: a file cannot be read or is not a probe.
    """
    found: dict[str, NodeProbe] = {}
    for name in names:
        try:
            node_probe = NodeProbe.from_json((answers / f"{name}.json").read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            raise ClusterError(f"the secure-mode checks: {name}'s answer {answers / name}.json: {exc}") from None
        found[node_probe.node] = node_probe
    return found


def secure_mode_probe(plan: ClusterPlan, timeout: float = PROBE_TIMEOUT) -> tuple[list[KerberosCheck], dict[str, str]]:
    """What ``security: per-cluster`` needs, asked of every node of ``plan`` through its fan-out
    (:func:`probe_nodes`): host names forward and back (under ``interface:``, each node's address on it, seen by
    the node and by this host: :func:`launcher.security.checks.resolve_bound`), a port for the KDC on the
    master's address, clocks (the reference is this host's: the launcher runs on the master, beside the KDC).

    Returns:
        The checks, and ``{node: address}`` where each node's daemons bind as the nodes reported it under
        ``interface:`` (:func:`launcher.security.checks.probed_addresses`; empty without it).

    Raises:
        ClusterError: as :func:`probe_nodes`.
    """
    nodes = [(node.name, node.address) for node in plan.nodes]
    answers = plan.path(PROBES_DIR)
    answers.mkdir(mode=0o700, exist_ok=True)  # inside the private cluster directory, made by us
    interface = plan.spec.interface
    probes, before, after = probe_nodes(nodes, plan.fanout, plan.fanout_program, timeout, answers, interface)
    names = check_names(probes, resolve_bound(probes), plan.master.name)
    checks = [names, check_kdc_port(probes[0], plan.master.address), check_clock_skew(probes, before, after)]
    return checks, probed_addresses(probes)


def secure_mode_checks(plan: ClusterPlan, timeout: float = PROBE_TIMEOUT) -> list[KerberosCheck]:
    """The checks of :func:`secure_mode_probe`.

    Raises:
        ClusterError: as :func:`probe_nodes`.
    """
    return secure_mode_probe(plan, timeout)[0]


def require_secure_mode(plan: ClusterPlan) -> dict[str, str]:
    """:func:`secure_mode_probe` under ``security: per-cluster`` (nothing otherwise), before any daemon starts.

    Returns:
        ``{node: address}`` where each node's daemons bind under ``interface:``, as the nodes reported it (the
        KDC's principals are made for their names: :meth:`Kdc.start`); empty without it or outside Kerberos.

    Raises:
        UserError: a check failed: one line naming what is wrong, on which node, and the fix (or ``security:
            simple``).
        ClusterError: as :func:`probe_nodes`.
    """
    if not plan.security.kerberos:
        return {}
    checks, addresses = secure_mode_probe(plan)
    if not plan.security.runs_kdc:  # security: site: no KDC here, no _HOST principal; only the clocks matter
        checks = [check for check in checks if check.name == "krb clock skew"]
    failed = first_failure(checks)
    if failed is not None:
        raise UserError(failed.detail, field="security", fix=failed.fix)
    return addresses


#: Seconds tickets live past the walltime's end: the teardown after it (its lead, the daemons' stop) must not meet
#: an expired ticket.
TICKET_MARGIN_S = 3600
#: Seconds tickets live when the cluster has no walltime (``ClusterKdc.DEFAULT_LIFETIME``: 24 h, Kerby's client
#: default and MIT's ``max_life``).
DEFAULT_TICKET_LIFETIME_S = 24 * 3600


def ticket_lifetime(plan: ClusterPlan, now: float | None = None) -> int:
    """Seconds every ticket of the realm lives (``ClusterKdc --lifetime``): until the walltime's end
    (``plan.deadline``) plus :data:`TICKET_MARGIN_S`, rounded up, counted from ``now`` (epoch seconds; default:
    the current time); :data:`DEFAULT_TICKET_LIFETIME_S` without a walltime."""
    if plan.deadline is None:
        return DEFAULT_TICKET_LIFETIME_S
    now = time.time() if now is None else now
    return max(TICKET_MARGIN_S, math.ceil(plan.deadline - now) + TICKET_MARGIN_S)


def _counted(data: bytes, at: int, size: str = ">I") -> tuple[bytes, int]:
    (length,) = struct.unpack_from(size, data, at)
    at += struct.calcsize(size)
    return data[at:at + length], at + length


def _principal(data: bytes, at: int) -> tuple[str, int]:
    _, count = struct.unpack_from(">II", data, at)
    realm, at = _counted(data, at + 8)
    parts = []
    for _ in range(count):
        part, at = _counted(data, at)
        parts.append(part.decode())
    return "/".join(parts) + "@" + realm.decode(), at


def ticket_end_times(ccache: Path) -> dict[str, float]:
    """The end time (epoch seconds) of every ticket in a ticket cache, by server principal (``krbtgt/REALM@REALM``
    for the ticket-granting ticket): what ``klist`` shows as "Expires", read from MIT's file format (version 3,
    ``0x0503``, which Kerby 2.0.3 writes, or 4;
    https://web.mit.edu/kerberos/krb5-devel/doc/formats/ccache_file_format.html).

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not a ticket cache of version 3 or 4.
    """
    data = ccache.read_bytes()
    try:
        (version,) = struct.unpack_from(">H", data, 0)
        if version not in (0x0503, 0x0504):
            raise ValueError(f"{ccache}: not a ticket cache of version 3 or 4 (starts with {data[:2].hex()})")
        at = 2
        if version == 0x0504:
            _, at = _counted(data, at, ">H")  # header (e.g. the KDC time offset)
        _, at = _principal(data, at)  # the default principal
        ends: dict[str, float] = {}
        while at < len(data):
            _, at = _principal(data, at)  # client
            server, at = _principal(data, at)
            # The key: its type (16 bits; twice in version 3), then its bytes.
            _, at = _counted(data, at + (4 if version == 0x0503 else 2))
            _auth, _start, end, _renew = struct.unpack_from(">IIII", data, at)
            at += 16 + 1 + 4  # the times, is_skey, the ticket flags
            for _ in range(2):  # addresses, then authorization data: each a type (16 bits) and bytes
                (count,) = struct.unpack_from(">I", data, at)
                at += 4
                for _ in range(count):
                    _, at = _counted(data, at + 2)
            _, at = _counted(data, at)  # the ticket
            _, at = _counted(data, at)  # the second ticket
            ends[server] = float(end)
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"{ccache}: not a readable ticket cache ({exc})") from None
    return ends


def kdc_log(plan: ClusterPlan) -> Path:
    """The KDC's output: ``logs/kdc.log`` in the cluster directory."""
    return plan.path("logs", "kdc.log")


def kdc_command(plan: ClusterPlan, hosts: list[str], now: float | None = None) -> list[str]:
    """``java ... ClusterKdc --lifetime <seconds> <krb dir> <realm> <master address> <owner> <host>...``: the KDC
    listens on the master's address, on a port it picks (``kdc.port=0``); its tickets (the owner's ticket cache, the
    daemons' keytab logins) live until the walltime's end plus an hour (:func:`ticket_lifetime` from ``now``)."""
    security = plan.security
    return [plan.runtime.java, f"-Xmx{KDC_HEAP_MB}m", NO_CONTAINER_SUPPORT, "-cp", ":".join(plan.runtime.classpath),
            KDC_CLASS, "--lifetime", str(ticket_lifetime(plan, now)), str(security.realm_dir), security.realm,
            plan.master.address, plan.user, *hosts]


def _read_line(stream: IO[bytes], timeout: float) -> bytes:
    """One line of ``stream`` within ``timeout`` seconds (``b""``: none, or the stream closed)."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return b""
    return stream.readline()


def seal_key(plan: ClusterPlan, env: dict[str, str] | None = None) -> str:
    """The key the nodes' keys are sealed with (:mod:`launcher.util.sealed`): a new random one when the plan's
    fan-out launcher passes its caller's environment on (the agents get it as :data:`KEY_ENV`); else (PBS's
    ``tm_spawn``, whose tasks get the job's environment) the one every task of the job derives from the job's
    ``PBS_JOBCOOKIE`` (:func:`launcher.util.sealed.job_cookie_key`).

    Raises:
        ClusterError: the launcher passes no environment on and this process has no ``PBS_JOBCOOKIE``.
    """
    if get_launcher(plan.fanout).passes_environment:
        return new_key()
    cookie = (os.environ if env is None else env).get(JOB_COOKIE_ENV)
    if not cookie:
        raise ClusterError(f"security: {plan.spec.security} under {plan.fanout}: this process has no "
                           f"{JOB_COOKIE_ENV}, from which the nodes' agents open their keys (run hpc-hadoop inside "
                           f"the PBS job, as its batch script does)")
    return job_cookie_key(cookie, plan.cluster_id)


def make_realm_dir(plan: ClusterPlan) -> Path:
    """Make the realm's node-local directory (:attr:`SecurityPlan.realm_dir`, 0700, every level checked:
    :func:`launcher.util.safedirs.make_private_dir`) and the cluster directory's ``krb/`` (the shared one, for the
    realm's ``krb5.conf`` and the sealed files), and return the first.

    Raises:
        UserError: a level is refused (another user's, a link, writable by others).
        OSError: it cannot be made.
    """
    security = plan.security
    realm = security.realm_dir
    make_private_dir(realm.parents[2] if plan.am_tmp_dir else plan.run_dir, realm)  # from $TMPDIR, one level at a time
    make_private_dir(plan.run_dir, security.krb_dir)
    return realm


def node_keys(plan: ClusterPlan, node: str) -> dict[str, bytes]:
    """What ``node``'s daemons need of the realm, by file name: the services keytab (or the copy of the site's), the
    cookie secret of each of its web servers and the ApplicationMasters' shared one (read from the realm's
    directory).

    Raises:
        OSError: one of them cannot be read.
    """
    security = plan.security
    paths = [security.services_keytab, security.http_secret]
    paths += [security.http_secret_of(e.daemon, e.node) for e in DaemonSockets(plan).endpoints.values()
              if e.node == node]
    return {path.name: path.read_bytes() for path in paths}


def publish_keys(plan: ClusterPlan, key: str) -> str | None:
    """Hand the nodes and the owner's other clients what they need of the realm, never a key in the clear on the
    cluster directory's filesystem (issue 36 item 5):

    * the realm's ``krb5.conf`` (``per-cluster``; nothing secret) copied to the cluster directory's ``krb/``;
    * for each node, ``krb/sealed/<node>.bin``: :func:`node_keys` sealed with ``key`` for ``<cluster id>/<node>``
      (its agent opens it into ``<work_dir>/krb``);
    * for clients on another node (a login node's ``env``, ``exec``, ``ui``): the owner's ticket cache and the
      cookie secrets in :attr:`SecurityPlan.client_dir` (the user's state directory, 0700, files 0600).

    Returns:
        Why the clients' copies were not made (their directory refused or not writable), else ``None``.

    Raises:
        OSError: the realm's files cannot be read, or ``krb/`` cannot be written.
    """
    security = plan.security
    if security.runs_kdc:
        replace_private(security.krb5_conf, security.kdc_krb5_conf.read_bytes())
    sealed = security.krb_dir / "sealed"
    sealed.mkdir(mode=0o700, exist_ok=True)
    for node in plan.nodes:
        blob = seal(node_keys(plan, node.name), key, f"{plan.cluster_id}/{node.name}")
        replace_private(security.sealed_file(node.name), blob)
    client = security.client_dir
    if client is None:
        return None
    copies = [path for path in security.realm_dir.iterdir() if path.suffix in (".ccache", ".secret")]
    try:
        make_private_dir(client.parent.parent, client)
        for path in copies:
            replace_private(client / path.name, path.read_bytes())
    except (OSError, UserError) as exc:
        return f"no copy of the ticket cache for clients on other nodes in {client}: {exc}"
    return None


def copy_site_keytab(source: Path, copy: Path) -> None:
    """Copy the user's keytab (``security: site``) to ``copy`` (in the realm's directory, 0700), mode 0600 from
    its creation; ``source`` is only read.

    Raises:
        UserError: ``source`` cannot be read (names the field ``kerberos.keytab`` and the fix).
    """
    copy.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    copy.parent.chmod(0o700)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the keytab {source}: {exc.strerror or exc}", field="kerberos.keytab",
                        fix="give a keytab you can read (chmod 600)") from None
    replace_private(copy, data)


def prepare_site(plan: ClusterPlan) -> None:
    """What ``security: site`` needs before the daemons, instead of a KDC: the site's ``krb5.conf`` is there, the
    user's keytab is copied into the realm's directory (:func:`copy_site_keytab`) and the web servers' cookie secrets
    are written.

    Raises:
        UserError: no ``krb5.conf``, or the keytab cannot be read.
    """
    security = plan.security
    if not security.krb5_conf.is_file():
        raise UserError(f"the site's krb5.conf {security.krb5_conf} is not a file", field="kerberos.krb5_conf",
                        fix="set kerberos.krb5_conf (or KRB5_CONFIG) to the site's krb5.conf")
    assert security.site_keytab is not None
    copy_site_keytab(security.site_keytab, security.services_keytab)
    write_secrets(plan)


class Kdc:
    """The KDC of one cluster; does nothing unless ``security: per-cluster``. Under ``security: site`` it starts no
    KDC: :meth:`start` copies the user's keytab and writes the cookie secret (:func:`prepare_site`), :meth:`stop`
    removes both.

    Attributes:
        ready: the KDC's ready line (``realm``, ``port``, ``krb5_conf``, ``services_keytab``, ``owner_keytab``,
            ``ccache``), or ``None`` before :meth:`start`.
        start_s: seconds :meth:`start` took (``None`` before).
        tickets_until: when the owner's ticket-granting ticket ends, epoch seconds (:func:`ticket_end_times` of its
            ticket cache: the walltime's end plus :data:`TICKET_MARGIN_S`), ``None`` before :meth:`start`.
        keys_left: after :meth:`stop`, why the realm's keys could not be removed (``"<krb dir>: <strerror>"``: its
            filesystem is gone, say), else ``None``.
        key: the key the nodes' keys are sealed with (:func:`seal_key`), ``None`` before :meth:`start`.
        client_note: why clients on other nodes get no copy of the owner's ticket cache and cookie secrets
            (:func:`publish_keys`), else ``None``.
    """

    def __init__(self, plan: ClusterPlan) -> None:
        self.plan = plan
        self.process: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] | None = None
        self.start_s: float | None = None
        self.tickets_until: float | None = None
        self.keys_left: str | None = None
        self.key: str | None = None
        self.client_note: str | None = None

    def start(self, timeout: float = READY_TIMEOUT, addresses: Mapping[str, str] | None = None) -> float:
        """Make the realm's node-local directory (:attr:`SecurityPlan.realm_dir`), start the KDC there and wait until
        it has written the realm's files and answered the owner's first ticket; then write the web servers' cookie
        secrets (``http-*.secret``, :func:`launcher.security.webauth.write_secrets`) beside them and hand the nodes what
        their daemons need (:func:`publish_keys`), all before any daemon starts.

        The realm holds the service principals of every node's name and of the name its daemons' address resolves
        back to (:func:`launcher.security.kerberos.principal_hosts`): that address is ``addresses``' entry for the node
        (under ``interface:``, as the nodes reported it: :func:`require_secure_mode`), else its plan's.

        Returns:
            Seconds taken (0.0 outside ``security: per-cluster``).

        Raises:
            ClusterError: the KDC ended or was not ready within ``timeout`` seconds (names ``logs/kdc.log``), or the
                nodes' key cannot be had (:func:`seal_key`).
            UserError: ``security: site`` and its ``krb5.conf`` or keytab is missing (:func:`prepare_site`); the
                realm's directory is refused (another user's, a link, writable by others).
        """
        if not self.plan.security.kerberos:
            return 0.0
        began = time.monotonic()
        self.key = seal_key(self.plan)
        make_realm_dir(self.plan)
        if not self.plan.security.runs_kdc:
            prepare_site(self.plan)
            self.client_note = publish_keys(self.plan, self.key)
            self.start_s = time.monotonic() - began
            return self.start_s
        bound = addresses or {}
        hosts = principal_hosts((node.name, bound.get(node.name, node.address)) for node in self.plan.nodes)
        log = kdc_log(self.plan)
        with log.open("ab") as output:
            self.process = subprocess.Popen(kdc_command(self.plan, hosts), stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=output, start_new_session=True)
        assert self.process.stdout is not None
        line = _read_line(self.process.stdout, timeout)
        if not line:
            self.stop()
            raise ClusterError(f"the cluster's KDC (security: per-cluster) was not ready within {timeout:.0f} s: "
                               f"see {log}")
        self.ready = json.loads(line)
        tgt = f"krbtgt/{self.plan.security.realm}@{self.plan.security.realm}"
        try:
            self.tickets_until = ticket_end_times(self.plan.security.ccache).get(tgt)
        except (OSError, ValueError):
            self.tickets_until = None  # the note leaves it out; Hadoop's clients read the cache themselves
        write_secrets(self.plan)  # the web servers' cookie secrets, before any daemon starts
        self.client_note = publish_keys(self.plan, self.key)
        self.start_s = time.monotonic() - began
        return self.start_s

    @property
    def agent_env(self) -> dict[str, str]:
        """What the agents' fan-out command must carry for them to open their sealed keys: :data:`KEY_ENV` when
        the launcher passes its caller's environment on (else the agents derive the key from the PBS job's cookie:
        :func:`seal_key`); empty outside Kerberos or before :meth:`start`."""
        if self.key is None or not get_launcher(self.plan.fanout).passes_environment:
            return {}
        return {KEY_ENV: self.key}

    def stop(self) -> None:
        """End the KDC (its standard input closed, then SIGTERM, then SIGKILL) and remove the realm's keys: its
        directory (:attr:`SecurityPlan.realm_dir`: keytabs, the ticket cache, the cookie secrets, the database), the
        sealed files of ``krb/sealed`` and the copies for clients on other nodes (:attr:`SecurityPlan.client_dir`).
        Nothing is left running. Under ``security: site`` the user's own keytab and ticket cache are not among them
        and stay. The agents' node-local copies (``<work_dir>/krb``) go too where this host reaches them (each agent
        removes its own when it ends). A filesystem error while removing the keys is not raised (teardown goes
        on): :attr:`keys_left` says it, and the keys are not taken for removed."""
        process, self.process = self.process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                end([process], grace=STOP_GRACE)
            if process.stdout is not None:
                process.stdout.close()
        if not self.plan.security.kerberos:
            return
        security = self.plan.security
        for directory in (security.realm_dir, security.krb_dir / "sealed", security.client_dir):
            if directory is not None:
                self._remove_tree(directory)
        with contextlib.suppress(OSError):  # the cluster's node-local level, once its agents removed theirs
            security.realm_dir.parent.rmdir()
        for node in self.plan.nodes:  # the agents' node-local copies (each agent removes its own at its end)
            if node.work_dir:
                self._remove_tree(security.node_krb_dir(Path(node.work_dir)))

    def _remove_tree(self, directory: Path) -> None:
        """Remove ``directory`` and what it holds (nothing when it is not there); a filesystem error goes to
        :attr:`keys_left` (the first one), not raised."""
        def note(_function: object, _path: str, excinfo: tuple[type[BaseException], BaseException, object]) -> None:
            exc = excinfo[1]
            if not isinstance(exc, FileNotFoundError):
                err = exc if isinstance(exc, OSError) else OSError(str(exc))
                self.keys_left = self.keys_left or f"{directory}: {err.strerror or err}"

        try:
            if not directory.is_dir():
                return
        except OSError as err:
            self.keys_left = self.keys_left or f"{directory}: {err.strerror or err}"
            return
        shutil.rmtree(directory, onerror=note)
