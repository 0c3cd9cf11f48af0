"""Writing ``run.json`` while a cluster runs, at its end, and back from a node's copy.

Owns: :class:`RunRecord`, the one writer of ``run.json`` (``tests/unit/lifecycle/test_record.py`` fails on a write
of it anywhere else): a running cluster's :class:`~launcher.lifecycle.report.RunReport` (the filesystem section,
bring-up, steps recorded one at a time, a failure, the final record kept on the node when the shared filesystem is
gone) and ``status`` writing a record kept on a node back into its cluster directory (:meth:`RunRecord.write_back`).
Imports the report; the health checks (which tell a lost filesystem from any other write error) and the steps'
results only as types, so that ``status`` (:mod:`launcher.lifecycle.clusters.index`) imports it without the cluster.
"""

from __future__ import annotations

import errno
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.lifecycle.report import RunReport, StepRecord
from launcher.util.errors import FilesystemLost
from launcher.util.states import RunState

if TYPE_CHECKING:  # types only: `status` imports this module without the cluster and the steps
    from launcher.lifecycle.health import Health
    from launcher.steps.jobs import StepResult


class RunRecord:
    """The run's ``run.json``: ``report`` written as the run goes on (:meth:`write`), its steps (:meth:`add_step`), a
    failed step (:meth:`fail`), and the final record (:meth:`write_final`).

    Args:
        report: the run report.
        health: tells a lost shared filesystem from other write errors.
    """

    def __init__(self, report: RunReport, health: Health) -> None:
        self.report = report
        self.health = health
        self.lock = threading.Lock()  # steps run at once record themselves one at a time

    def write(self) -> None:
        """Write ``run.json`` while the run goes on.

        Raises:
            FilesystemLost: it could not be written because the shared filesystem is gone (:meth:`Health.lost`).
            OSError: it could not be written otherwise (:meth:`launcher.lifecycle.report.RunReport.write`).
        """
        with self.health.raising_lost():
            self.report.write()

    def add_step(self, result: StepResult) -> None:
        """Add a step's result to the report (the caller writes ``run.json``; holds :attr:`lock`)."""
        _record(self.report, result)

    def fail(self, error: str) -> None:
        """Record that the run failed (a step's non-zero exit): the state stays ``failed`` at teardown.

        Raises:
            FilesystemLost: ``run.json`` could not be written: the shared filesystem is gone.
        """
        self.report.state, self.report.error = RunState.FAILED, error
        self.write()

    def write_final(self, lost: FilesystemLost | None) -> None:
        """Write the final ``run.json``; where the shared filesystem is gone (``lost``, or found so now) or refuses
        the write (:meth:`refused`), keep the record on this node instead
        (:meth:`launcher.lifecycle.report.RunReport.keep_locally`), its place named in the error. Never raises."""
        if lost is None:
            try:
                self.report.write()
                return
            except OSError as err:
                lost = self.health.lost(err, "at teardown")
                if lost is None:
                    self.refused(err)
                    return
            report = self.report
            if report.state in (RunState.SUCCEEDED, RunState.STOPPED):
                report.state, report.error, report.error_exit_code = RunState.FAILED, str(lost), lost.exit_code
            else:
                report.error = f"{report.error}; {lost}"
        self.report.lost_filesystem = lost.to_dict()
        self.report.keep_locally()

    @staticmethod
    def write_back(report: RunReport, run_dir: str | Path) -> Path:
        """Write ``report``, a final record kept on a node (:meth:`RunReport.keep_locally`), back into its cluster
        directory ``run_dir`` as ``run.json`` (``hpc-hadoop status`` once the directory answers again); no running
        cluster, so no lost-filesystem translation: the caller keeps the copy when it fails.

        Returns:
            The path of ``run.json`` written.

        Raises:
            OSError: the cluster directory still refuses the write (:meth:`RunReport.write`).
        """
        return report.write(Path(run_dir, "run.json"))

    def refused(self, err: OSError) -> None:
        """The cluster directory's filesystem answers but refused the final ``run.json`` (``EACCES``, ``EIO``,
        ``ESTALE``, ``ENOSPC`` with no room kept, ``EROFS``...; issue 37 item 4: a real OrangeFS client's cross-user
        permission cache refused the owner): the run's error gets one clause naming the file and the errno, a run
        that had succeeded is ``failed``, and the record is kept on this node (:meth:`RunReport.keep_locally`)."""
        report = self.report
        code = errno.errorcode.get(err.errno or 0, str(err.errno))
        why = (f"the final record {Path(report.run_dir) / 'run.json'} could not be written: {code} "
               f"({err.strerror or err})")
        if report.state in (RunState.SUCCEEDED, RunState.STOPPED):
            report.state, report.error_exit_code = RunState.FAILED, 1
        report.error = f"{report.error}; {why}" if report.error else why
        report.keep_locally()


def _record(report: RunReport, result: StepResult) -> None:
    """Add a step's result to ``report`` (the caller writes ``run.json``)."""
    report.steps.append(StepRecord(**result.model_dump(), errors=result.lines[-5:]))
