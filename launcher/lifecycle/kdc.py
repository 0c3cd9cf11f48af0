"""The per-cluster KDC of ``security: per-cluster``: started on the master node before the daemons, ended after them.

Owns: :class:`Kdc`. Runs ``org.hpchadoop.security.ClusterKdc`` (hadoop-fs-shim; Hadoop's MiniKdc, i.e. Apache Kerby)
with the runtime's JDK and jars; it writes ``krb5.conf``, the keytabs and the owner's ticket cache into the cluster
directory's ``krb/`` (:class:`launcher.plan.security.SecurityPlan`), prints one JSON line when it answers, and serves
until its standard input closes: if the launcher dies, the KDC ends with it. Imports the plan and
:func:`launcher.util.processes.end`.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.security import KDC_CLASS, principal_hosts
from launcher.plan.webauth import write_secret
from launcher.runtime.hadoop import NO_CONTAINER_SUPPORT
from launcher.util.errors import ClusterError
from launcher.util.processes import end

#: The longest wait for the KDC's ready line, seconds (measured here: 0.8-1.5 s with a cold JVM).
READY_TIMEOUT = 60.0
#: The KDC's heap, MiB (MiniKdc measured at 55-100 MB RSS in issue 27's trial).
KDC_HEAP_MB = 128
#: Seconds the KDC has to end after its standard input closes, before SIGTERM, then SIGKILL.
STOP_GRACE = 5.0


def kdc_log(plan: ClusterPlan) -> Path:
    """The KDC's output: ``logs/kdc.log`` in the cluster directory."""
    return plan.path("logs", "kdc.log")


def kdc_command(plan: ClusterPlan, hosts: list[str]) -> list[str]:
    """``java ... ClusterKdc <krb dir> <realm> <master address> <owner> <host>...``: the KDC listens on the master's
    address, on a port it picks (``kdc.port=0``)."""
    security = plan.security
    return [plan.runtime.java, f"-Xmx{KDC_HEAP_MB}m", NO_CONTAINER_SUPPORT, "-cp", ":".join(plan.runtime.classpath),
            KDC_CLASS, str(security.krb_dir), security.realm, plan.master.address, plan.user, *hosts]


def _read_line(stream: IO[bytes], timeout: float) -> bytes:
    """One line of ``stream`` within ``timeout`` seconds (``b""``: none, or the stream closed)."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return b""
    return stream.readline()


class Kdc:
    """The KDC of one cluster; does nothing unless ``security: per-cluster``.

    Attributes:
        ready: the KDC's ready line (``realm``, ``port``, ``krb5_conf``, ``services_keytab``, ``owner_keytab``,
            ``ccache``), or ``None`` before :meth:`start`.
        start_s: seconds :meth:`start` took (``None`` before).
    """

    def __init__(self, plan: ClusterPlan) -> None:
        self.plan = plan
        self.process: subprocess.Popen[bytes] | None = None
        self.ready: dict[str, Any] | None = None
        self.start_s: float | None = None

    def start(self, timeout: float = READY_TIMEOUT) -> float:
        """Start the KDC and wait until it has written the realm's files and answered the owner's first ticket;
        then write the web servers' cookie secret (``http-signature.secret``, :func:`launcher.plan.webauth.
        write_secret`) into the realm's directory.

        Returns:
            Seconds taken (0.0 outside ``security: per-cluster``).

        Raises:
            ClusterError: the KDC ended or was not ready within ``timeout`` seconds (names ``logs/kdc.log``).
        """
        if not self.plan.security.kerberos:
            return 0.0
        began = time.monotonic()
        hosts = principal_hosts((node.name, node.address) for node in self.plan.nodes)
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
        write_secret(self.plan.security.http_secret)  # the web servers' cookie secret, before any daemon starts
        self.start_s = time.monotonic() - began
        return self.start_s

    def stop(self) -> None:
        """End the KDC (its standard input closed, then SIGTERM, then SIGKILL) and remove the realm's keys: the
        keytabs, the ticket cache and the web servers' cookie secret (the KDC removes its database itself). Nothing is
        left running."""
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
        krb_dir = self.plan.security.krb_dir
        if self.plan.security.kerberos and krb_dir.is_dir():
            for key in [*krb_dir.glob("*.keytab"), *krb_dir.glob("*.ccache"), self.plan.security.http_secret]:
                key.unlink(missing_ok=True)
