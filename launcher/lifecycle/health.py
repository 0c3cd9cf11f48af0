"""The cluster's health while it runs: the shared filesystem lost or stalled, NodeManagers lost and their nodes
decommissioned.

Owns: :class:`Health`, which reads only the cluster's :class:`~launcher.cluster.watch.FilesystemWatch` and the agents'
state (never waits on a stalled filesystem) and notes what it found in the run report. Imports the cluster, the
filesystems and the steps' types; nothing of the rest of the life cycle.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator

from launcher.cluster.cluster import Cluster
from launcher.cluster.watch import Stall
from launcher.filesystems import GONE_ERRNOS, gone
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.report import LostNodeRecord, RunReport, StallRecord
from launcher.plan.cluster_plan import ClusterPlan
from launcher.steps.commands import ResolvedStep
from launcher.steps.jobs import StepRunner
from launcher.util.errors import FilesystemLost


class Health:
    """Health checks of a running cluster: filesystem loss (:meth:`lost`, :meth:`check_filesystem`), stall warnings
    (:meth:`stalled`, :meth:`note_stalls`), lost NodeManagers and decommissioning (:meth:`during_step`,
    :meth:`note_lost_nodes`).

    Args:
        plan: the run's plan.
        cluster: its cluster (with its watch).
        observer: where a stall is shown.
        report: the run report its findings go into (``stalls``, ``lost_nodes``, notes).

    Attributes:
        refreshes: the ``yarn rmadmin -refreshNodes`` processes of lost nodes (ended at teardown).
    """

    def __init__(self, plan: ClusterPlan, cluster: Cluster, observer: Observer, report: RunReport) -> None:
        self.plan = plan
        self.cluster = cluster
        self.observer = observer
        self.report = report
        self.refreshes: list[subprocess.Popen[bytes]] = []  # `yarn rmadmin -refreshNodes` of lost nodes
        self._warned: Stall | None = None  # the stall already shown on the terminal
        self._decommissioned: set[str] = set()  # lost nodes already written to conf/nodes.exclude

    @property
    def mount(self) -> str:
        """The mount point of the cluster directory's filesystem (the root itself when the plan found none)."""
        return self.plan.filesystem.mount_point or self.plan.filesystem.path

    def filesystem_gone(self) -> OSError | None:
        """The error with which a read of the cluster's :class:`~launcher.cluster.watch.FilesystemWatch` last found the
        shared filesystem gone (an errno of :data:`launcher.filesystems.GONE_ERRNOS`), or ``None``; never touches
        the filesystem."""
        return self.cluster.watch.failed_with(GONE_ERRNOS)

    def check_filesystem(self, when: str) -> None:
        """Raise :class:`~launcher.util.errors.FilesystemLost` when a read of the cluster's
        :class:`~launcher.cluster.watch.FilesystemWatch` last answered with an errno of
        :data:`launcher.filesystems.GONE_ERRNOS` (never touches the filesystem)."""
        error = self.filesystem_gone()
        if error is not None:
            raise FilesystemLost(self.mount, error, when)

    def lost(self, exc: BaseException | None = None, when: str = "") -> FilesystemLost | None:
        """The shared filesystem's :class:`~launcher.util.errors.FilesystemLost` error when it is gone
        (:func:`launcher.filesystems.gone`: ``exc`` came from ``ENOTCONN``..., and the mount point says so), else
        ``None``; ``exc`` itself when it is one."""
        if isinstance(exc, FilesystemLost):
            return exc
        return gone(self.mount, exc, when)

    @contextlib.contextmanager
    def raising_lost(self, when: str = "") -> Iterator[None]:
        """Turn an ``OSError`` of the block into :class:`~launcher.util.errors.FilesystemLost` (raised from it) when the
        shared filesystem is gone (:meth:`lost`); any other ``OSError`` goes through as it is."""
        try:
            yield
        except OSError as err:
            lost = self.lost(err, when)
            if lost is None:
                raise
            raise lost from err

    def stalled(self) -> Stall | None:
        """The shared filesystem's stall in progress (:meth:`launcher.cluster.watch.FilesystemWatch.stall`), shown on
        the terminal once; ``None`` when it answers."""
        stall = self.cluster.watch.stall()
        if stall is not None and stall is not self._warned:
            self._warned = stall
            self.observer.warn(f"{stall.describe()}; the run goes on, and ends at the walltime if it must")
        return stall

    def during_step(self, when: str, runner: StepRunner) -> None:
        """Each second while a step runs: raise if the cluster is no longer whole (a lost NodeManager is tolerated,
        the master's too, and its node decommissioned at once: :meth:`Cluster.decommission`); note the fewest
        bytes free on the filesystem root (``min_free_bytes``). What it reads of the shared filesystem comes from
        the cluster's :class:`~launcher.cluster.watch.FilesystemWatch`: it never waits on a stalled filesystem."""
        lost = self.cluster.raise_if_failed(when, tolerate_lost=True)
        if set(lost) - self._decommissioned:
            refresh = self.cluster.decommission(sorted(lost))
            self._decommissioned |= set(lost)
            if refresh is not None:
                self.refreshes.append(refresh)
        free, current = self.cluster.watch.get("free"), runner.current
        if isinstance(free, int) and current is not None:
            current.min_free_bytes = free if current.min_free_bytes is None else min(free, current.min_free_bytes)

    def note_lost_nodes(self, step: ResolvedStep) -> None:
        """Record the nodes that lost their NodeManager during ``step`` (:meth:`Cluster.lost_nodes`) in
        ``run.json`` (``lost_nodes``) and as a note with how long the step ran on after the loss."""
        ended = time.time()
        for node, lost in self.cluster.lost_nodes().items():
            if any(entry.node == node for entry in self.report.lost_nodes):
                continue
            self.report.lost_nodes.append(LostNodeRecord(node=node, step=step.index, **lost))
            after = f"; the step ran on for {ended - lost['at']:.1f} s after it" if lost["at"] else ""
            self.report.notes.append(f"{lost['daemon']} on {node} lost during step {step.index} ({step.name}), exit "
                                     f"{lost['exit']}: YARN re-ran that node's work on the others{after}")

    def note_stalls(self) -> None:
        """Record the shared filesystem's stalls seen while the cluster ran in ``run.json`` (``stalls``) and as
        notes; a run that ended during one says so in its error."""
        stalls = self.cluster.watch.stalls
        self.report.stalls = [StallRecord(**stall.to_dict()) for stall in stalls]
        self.report.notes += [stall.describe() for stall in stalls]
        ongoing = [stall for stall in stalls if stall.ongoing]
        if ongoing and self.report.error:
            self.report.error += f" (the shared filesystem was not answering: a read of {ongoing[-1].path})"
