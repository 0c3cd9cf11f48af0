"""A cluster that stays up while a caller submits several steps (the benchmark harness).

:func:`launcher.runner.execute` runs the steps of one job file on one cluster. A benchmark sweep needs
the cluster of one node count for many runs, each built on the fly, so :class:`Session` splits the same
building blocks apart::

    with Session(spec, allocation) as session:          # plan, conf/, daemons up (bring-up timed)
        step = session.java_step("teragen", [...], main_class=..., extra_classpath=[...])
        result = session.run(step)                      # StepRunner: client log, ids, progress
    # daemons stopped, run.json written, nothing left running

Teardown happens on a normal exit, an exception, Ctrl-C, SIGTERM, SIGHUP and SIGUSR1, as in ``execute``.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType, TracebackType

from launcher.cluster import Cluster
from launcher.daemons import classpath
from launcher.jobs import ResolvedStep, StepResult, StepRunner
from launcher.plan import ClusterPlan
from launcher.report import RunReport
from launcher.runner import HANDLED_SIGNALS, Interrupted, Observer, materialize, prepare
from launcher.runtime import FAST_START_FLAGS, NO_CONTAINER_SUPPORT
from launcher.schedulers.base import Allocation
from launcher.spec import JobSpec


class Session:
    """One cluster brought up once, used for many steps, torn down on exit.

    Args:
        spec: the job spec (its ``steps`` are ignored: the caller builds steps with :meth:`java_step`).
        allocation: the nodes to run on.
        observer: terminal progress (phases and step progress).
        ready_timeout: seconds to wait for every NodeManager (default 180 s).

    Attributes:
        plan: the cluster plan (``plan.run_dir`` is the cluster directory).
        report: the run report (``run.json``), with ``bringup_s`` in seconds and one entry per step.
    """

    def __init__(self, spec: JobSpec, allocation: Allocation, *, observer: Observer | None = None,
                 ready_timeout: float = 180.0) -> None:
        self.spec = spec
        self.allocation = allocation
        self.observer = observer or Observer()
        self.ready_timeout = ready_timeout
        self.plan: ClusterPlan | None = None
        self.report: RunReport | None = None
        self.cluster: Cluster | None = None
        self.runner: StepRunner | None = None
        self._count = 0
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    # -- life cycle ----------------------------------------------------------------------------
    def __enter__(self) -> Session:
        plan, _ = prepare(self.spec, self.allocation, overwrite=True)
        materialize(plan)
        self.plan = plan
        runtime = plan.runtime
        self.report = RunReport(cluster_id=plan.cluster_id, name=self.spec.name, run_dir=plan.run_dir,
                                scheduler=plan.scheduler, job_id=plan.job_id, nodes=[n.name for n in plan.nodes],
                                rm_web=plan.rm_web, jhs_web=plan.jhs_web,
                                versions={"hadoop": runtime.version, "java": str(runtime.java_version)})
        self.report.write()
        self.cluster = Cluster(plan)
        self.runner = StepRunner(plan, self.observer.progress)

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            raise Interrupted(signum)

        for signum in HANDLED_SIGNALS:
            self._previous[signum] = signal.signal(signum, on_signal)
        try:
            self.observer.phase("bring-up")
            self.cluster.start()
            self.report.bringup_s = self.cluster.wait_ready(timeout=self.ready_timeout)
            self.report.write()
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self.report is not None and self.cluster is not None
        for signum in HANDLED_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        if exc is None:
            self.report.state = "succeeded"
        else:
            if isinstance(exc, Interrupted):
                self.report.state = "timed_out" if exc.signum == signal.SIGUSR1 else "interrupted"
            elif isinstance(exc, KeyboardInterrupt):
                self.report.state = "interrupted"
            else:
                self.report.state = "bringup_failed" if self.report.bringup_s is None else "failed"
            self.report.error = str(exc) or type(exc).__name__
        try:
            self.observer.phase("teardown")
            self.report.teardown_s = self.cluster.stop()
            self.report.leftover_processes = len(self.cluster.leftover_processes())
        finally:
            self.report.ended = time.time()
            self.report.total_s = self.report.ended - self.report.started
            self.report.write()
            for signum, handler in self._previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            self._previous.clear()
            self.observer.close()

    # -- steps ---------------------------------------------------------------------------------
    @property
    def bringup_s(self) -> float | None:
        """Seconds from starting the agents to every NodeManager RUNNING (``None`` before it is up)."""
        return self.report.bringup_s if self.report else None

    def java_step(self, name: str, args: Sequence[str], *, main_class: str = "org.apache.hadoop.util.RunJar",
                  extra_classpath: Sequence[str | Path] = (), outputs: Sequence[str | Path] = ()) -> ResolvedStep:
        """A job client command (``java -cp conf:<runtime>:<extra> <main_class> args``) ready for :meth:`run`.

        Args:
            name: display name; the client log is ``steps/<NN>-<name>.log``, numbered in submission order.
            args: the program's arguments (generic options such as ``-D k=v`` and ``-libjars`` included).
            main_class: the client's main class (default Hadoop's ``RunJar``: then ``args[0]`` is the jar).
            extra_classpath: jars or directories appended to the client's classpath.
            outputs: output directories the step creates (removed first if they exist).
        """
        assert self.plan is not None, "use Session as a context manager"
        runtime = self.plan.runtime
        java = [runtime.java, "-Xmx512m", NO_CONTAINER_SUPPORT,
                *(FAST_START_FLAGS if self.spec.hadoop.fast_start else ()),
                f"-Dhadoop.log.dir={self.plan.run_dir}/logs/client", "-Dhadoop.root.logger=INFO,console"]
        cp = ":".join([classpath(self.plan), *(str(p) for p in extra_classpath)])
        self._count += 1
        log = self.plan.path("steps", f"{self._count:02d}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.log")
        return ResolvedStep(index=self._count, name=name, kind="jar", argv=[*java, "-cp", cp, main_class, *args],
                            inputs=(), outputs=tuple(str(o) for o in outputs), log=log)

    def run(self, step: ResolvedStep) -> StepResult:
        """Run one step to its end on the running cluster; it is recorded in ``run.json``.

        Returns:
            The step's result (``returncode``, ``wall_s`` in seconds, ``application_id``, ``job_id``...).
        """
        assert self.runner is not None and self.report is not None, "use Session as a context manager"
        self.observer.phase(f"step {step.index} {step.name}")
        try:
            result = self.runner.run(step, overwrite=True, deadline=self.plan.deadline if self.plan else None)
        finally:
            if self.runner.current is not None:
                data = {k: v for k, v in vars(self.runner.current).items() if k != "lines"}
                data["errors"] = self.runner.current.lines[-5:]
                self.report.steps.append(data)
                self.report.write()
                self.runner.current = None
        return result
