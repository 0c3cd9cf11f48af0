"""The steps of a running cluster: made (numbered after the ones before), run one at a time or several at once, each
recorded in ``run.json``.

Owns: :class:`StepRuns`. Imports the steps, the health checks (each second of a step), the record and the findings
read after a step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from launcher.lifecycle.findings import read_findings
from launcher.lifecycle.health import Health
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.plan.cluster_plan import ClusterPlan
from launcher.steps.commands import RUN_JAR, ResolvedStep, client_step, spark_step
from launcher.steps.jobs import StepResult, StepRunner
from launcher.util.errors import StopRequested


class StepRuns:
    """Steps on a running cluster: :meth:`java_step`, :meth:`spark_step` make them, :meth:`run_step` and
    :meth:`run_steps_at_once` run them (killed at ``deadline``, when the cluster is no longer whole, or on
    ``hpc-hadoop stop``), each recorded in ``run.json`` (:class:`~launcher.lifecycle.record.RunRecord`).

    Args:
        plan: the run's plan.
        observer: terminal progress.
        health: the checks made each second of a step.
        record: ``run.json``.
        check_stop: raises when the run must end (``hpc-hadoop stop``, a lost filesystem), called each second.
        deadline: epoch seconds when teardown must begin, or ``None``.
        count: the steps already made (the job file's), after which new ones are numbered.
    """

    def __init__(self, plan: ClusterPlan, observer: Observer, health: Health, record: RunRecord, *,
                 check_stop: Callable[[str], None], deadline: float | None, count: int = 0) -> None:
        self.plan = plan
        self.observer = observer
        self.health = health
        self.record = record
        self.check_stop = check_stop
        self.deadline = deadline
        self.runner = StepRunner(plan, observer.progress, stalled=health.stalled, gone=health.filesystem_gone,
                                 on_output=observer.output)
        self._count = count

    def java_step(self, name: str, args: Sequence[str], *, main_class: str = RUN_JAR,
                  extra_classpath: Sequence[str | Path] = (), outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """A job client step numbered after the ones already made (:func:`launcher.steps.commands.client_step`)."""
        self._count += 1
        return client_step(self.plan, self._count, name, args, main_class=main_class,
                           extra_classpath=extra_classpath, outputs=outputs)

    def spark_step(self, name: str, application: Sequence[str], *, outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """A ``spark-submit`` step numbered after the ones already made (:func:`launcher.steps.commands.spark_step`);
        writes the cluster's ``spark-conf/`` first if its job did not use Spark (a benchmark's cluster)."""
        if not self.plan.spark_conf_dir.is_dir():
            from launcher.render.spark import write_spark_conf  # only a Spark step needs it

            write_spark_conf(self.plan)
        self._count += 1
        return spark_step(self.plan, self._count, name, application, outputs=outputs)

    def run_step(self, step: ResolvedStep, *, overwrite: bool = True, label: str | None = None) -> StepResult:
        """Run one step to its end on the running cluster (killed at the deadline); it is recorded in ``run.json``.

        Args:
            overwrite: remove the step's existing outputs first.
            label: the phase shown on the terminal (default ``step N name``).

        A step that failed after YARN accepted its application gets the first cause line of its failed container's
        log (``result.cause``, :func:`launcher.steps.diagnosis.diagnose`).

        Raises:
            WalltimeExpired: the deadline passed while it ran (the step was killed).
            ClusterError: a daemon died or the agents stopped while it ran (checked every second; the step was
                killed): names the daemon, its node and its log.
            StopRequested: ``hpc-hadoop stop`` asked the run to end (checked every second; the step was killed).
        """
        self.observer.phase(label or f"step {step.index} {step.name}")
        return self._run_with(self.runner, step, overwrite=overwrite)

    def run_steps_at_once(self, steps: Sequence[ResolvedStep], *, overwrite: bool = True,
                          label: str | None = None) -> list[StepResult]:
        """Run ``steps`` at the same time, each with its own job client (one thread and one
        :class:`~launcher.steps.jobs.StepRunner` each), until every one has ended; each is recorded in ``run.json``.

        Returns:
            The results, in the order of ``steps`` (a failed step is a result with a non-zero ``returncode``).

        Raises:
            WalltimeExpired, ClusterError, StopRequested: as :meth:`run_step`; the steps still running are killed
                first (each checks every second), and the first error is raised once every step has ended.
            Interrupted: a signal arrived while they ran (they are killed first, as above).
        """
        self.observer.phase(label or f"steps {', '.join(str(s.index) for s in steps)} at once")
        cancelled = threading.Event()
        runners = [StepRunner(self.plan, self.observer.progress, stalled=self.health.stalled,
                              gone=self.health.filesystem_gone, on_output=self.observer.output)
                   for _ in steps]
        with ThreadPoolExecutor(max_workers=max(1, len(steps)), thread_name_prefix="step") as pool:
            futures = [pool.submit(self._run_with, runner, step, overwrite=overwrite, cancelled=cancelled)
                       for runner, step in zip(runners, steps, strict=True)]
            try:
                wait(futures)
            except BaseException:  # a signal in this (the main) thread: kill the steps, then raise it
                cancelled.set()
                wait(futures)
                raise
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            raise errors[0]  # type: ignore[misc]
        return [f.result() for f in futures]

    def _run_with(self, runner: StepRunner, step: ResolvedStep, *, overwrite: bool,
                  cancelled: threading.Event | None = None) -> StepResult:
        """:meth:`run_step` with ``runner``; ``cancelled`` set makes the step's health check raise
        :class:`~launcher.util.errors.StopRequested` (the step is killed)."""
        when = f"while step {step.index} ({step.name}) ran"

        def health() -> None:
            if cancelled is not None and cancelled.is_set():
                raise StopRequested(f"during step {step.index} ({step.name}): another step ended the run")
            self.health.during_step(when, runner)
            self.check_stop(f"during step {step.index} ({step.name})")

        try:
            # its log, its claims... on a lost mount
            with self.health.raising_lost(f"during step {step.index} ({step.name})"):
                result = runner.run(step, overwrite=overwrite, deadline=self.deadline, health=health)
            if result.returncode != 0:  # a job client that loses the filesystem fails: say why, read none of it
                lost = self.health.lost(when=f"during step {step.index} ({step.name})")
                if lost is not None:
                    raise lost
            read_findings(self.plan, step, result)
            return result
        finally:
            with self.record.lock:
                self.health.note_lost_nodes(step)
                if runner.current is not None:
                    self.record.add_step(runner.current)
                    runner.current = None
                    if self.health.cluster.watch.stall() is None and self.health.filesystem_gone() is None:
                        self.record.write()  # else teardown, which writes it at the end, comes first
