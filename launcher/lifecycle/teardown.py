"""Tearing a cluster down: the JVMs ended, the daemons stopped, nothing left running, what the run left behind
noted.

Owns: :class:`Teardown`. Imports the cluster, the health checks (their ``refreshNodes`` processes, the stalls), the
AppCDS archives and :func:`launcher.util.processes.end`.
"""

from __future__ import annotations

from launcher.cluster.cluster import Cluster
from launcher.lifecycle.archives import Archives
from launcher.lifecycle.health import Health
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.report import PortRecord, RunReport, ports_line
from launcher.security.kdc import Kdc
from launcher.util.processes import end


class Teardown:
    """The teardown of one cluster (:meth:`run`), whatever ended the run.

    Args:
        cluster: the cluster.
        report: the run report (``teardown_s``, ``leftover_processes``, ``ports``, stalls, notes).
        health: its lost nodes' ``refreshNodes`` processes and the filesystem's stalls.
        archives: the AppCDS archives to note and publish.
        observer: terminal progress.
        kdc: the cluster's KDC (``security: per-cluster``), ended after the daemons, its keys removed.
    """

    def __init__(self, cluster: Cluster, report: RunReport, health: Health, archives: Archives,
                 observer: Observer, kdc: Kdc | None = None) -> None:
        self.cluster = cluster
        self.kdc = kdc
        self.report = report
        self.health = health
        self.archives = archives
        self.observer = observer

    def run(self) -> None:
        """Stop everything the run started and note in the report what is left: the ``refreshNodes`` processes
        (:func:`launcher.util.processes.end`), the cluster (:meth:`Cluster.stop`: ``teardown_s``), processes left
        behind, the AppCDS archives (noted, then published), the filesystem's stalls, the ports still listening
        (a note only where a user must act: :func:`launcher.lifecycle.report.ports_line`).

        Raises:
            OSError, HpcHadoopError: as :meth:`Cluster.stop` (the caller writes ``run.json`` whatever happens).
        """
        self.observer.phase("teardown")
        end(self.health.refreshes, signum=None)  # JVMs that have had seconds to end; never left behind
        try:
            self.report.teardown_s = self.cluster.stop()
        finally:
            if self.kdc is not None:
                self.kdc.stop()
                if self.kdc.keys_left:
                    self.report.notes.append(f"security: per-cluster: the realm's keys could not be removed "
                                             f"({self.kdc.keys_left}); remove that directory's *.keytab, *.ccache "
                                             "and http-signature.secret once the filesystem answers again")
        self.report.leftover_processes = len(self.cluster.leftover_processes())
        self.archives.note()
        self.archives.publish()
        self.health.note_stalls()
        self.report.ports = [PortRecord(**port) for port in self.cluster.listening()]
        plan = self.cluster.plan
        line = ports_line(self.report.ports, interface=plan.spec.interface, block=plan.ports.all(),
                          shuffle_port=plan.ports.shuffle)
        if line:  # only what a user must act on; the full list is run.json's ports
            self.report.notes.append(line)
