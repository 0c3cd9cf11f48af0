"""Terminal progress for a run: a live rich display on a terminal, plain lines otherwise (CI, batch logs)."""

from __future__ import annotations

import queue
import threading
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from launcher.config.spec import SPARK_KINDS
from launcher.lifecycle.observer import Observer
from launcher.steps.jobs import StepResult
from launcher.util.states import StepState


class ConsoleObserver(Observer):
    """Shows phases and map/reduce progress.

    On a terminal: one rich progress bar per step (map %, reduce %). Otherwise: a timestamped line per
    phase and per 10% of progress, which reads well in a batch job's output file. That file is often on the
    shared filesystem (``batch-<job>.out`` in the cluster directory), which can stall: the lines are written by
    a thread of their own, so that the run's thread never waits on it (:mod:`launcher.cluster.watch`); :meth:`close`
    waits at most :data:`FLUSH_SECONDS` for the last ones.
    """

    #: Seconds :meth:`close` waits for the lines still to be written.
    FLUSH_SECONDS = 10.0
    #: Lines of a step's program's own output (:meth:`output`) shown on the terminal; the step log has them all.
    OUTPUT_LINES = 200

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.lock = threading.Lock()
        self.began = time.time()
        self.last: dict[str, tuple[object, ...]] = {}
        self.printed: dict[str, int] = {}  # lines of each step's own output seen (:meth:`output`), by its log
        self.bars: Progress | None = None
        self.tasks: dict[str, TaskID] = {}
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.writer: threading.Thread | None = None
        if self.live:
            self.bars = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                                     TimeElapsedColumn(), console=console, transient=False)
        else:
            self.writer = threading.Thread(target=self._write_lines, name="progress-lines", daemon=True)
            self.writer.start()

    def _write_lines(self) -> None:
        for text in iter(self.lines.get, None):
            try:
                self.console.print(text, highlight=False, soft_wrap=True)  # one line each, paths unbroken: greppable
            except OSError:  # the output file's filesystem is gone: the run goes on, its record says the rest
                continue

    def _line(self, text: str) -> None:
        line = f"[{time.time() - self.began:7.1f}s] {text}"
        if self.writer is not None and self.writer.is_alive():
            self.lines.put(line)
        else:  # after close()
            self.console.print(line, highlight=False, soft_wrap=True)

    def warn(self, text: str) -> None:
        """Print a warning line (above the live display on a terminal)."""
        with self.lock:
            if self.bars is not None and self.bars.live.is_started:
                self.bars.console.print(f"[yellow]warning:[/yellow] {text}", highlight=False)
            elif self.bars is not None:
                self.console.print(f"warning: {text}", highlight=False)
            else:
                self._line(f"warning: {text}")

    def phase(self, text: str) -> None:
        """Print the phase; start the live display at the first step."""
        with self.lock:
            if self.bars is not None and text.startswith("step") and not self.bars.live.is_started:
                self.bars.start()
            if self.bars is not None and self.bars.live.is_started:
                self.bars.console.print(f"[bold]{text}[/bold]")
            else:
                self._line(text)

    def event(self, text: str) -> None:
        """Print an event's line (a daemon started, a NodeManager registered): above the live display once it runs,
        else a timestamped line as a phase's."""
        with self.lock:
            if self.bars is not None and self.bars.live.is_started:
                self.bars.console.print(text, highlight=False, markup=False)
            else:
                self._line(text)

    def output(self, result: StepResult, line: str) -> None:
        """Print a line a step's program printed (a Spark driver's standard output, issue 40) as ``name> line``:
        above the live display on a terminal, else a timestamped line; after :data:`OUTPUT_LINES` of a step, one line
        saying the rest is in its log (it always has all of them)."""
        with self.lock:
            shown = self.printed.get(result.log, 0)
            self.printed[result.log] = shown + 1
            if shown > self.OUTPUT_LINES:
                return
            text = (f"{result.name}> {line}" if shown < self.OUTPUT_LINES
                    else f"{result.name}> ... (the rest of what it prints: {result.log})")
            if self.bars is not None and self.bars.live.is_started:
                self.bars.console.print(text, highlight=False, markup=False, soft_wrap=True)
            elif self.bars is not None:
                self.console.print(text, highlight=False, markup=False, soft_wrap=True)
            else:
                self._line(text)

    def progress(self, result: StepResult) -> None:
        """Update the step's bar, or print a line (:func:`step_line`) when its progress moved by a tenth
        (:func:`progress_key`), its Spark stage or its state changed. A step that ended without submitting a job (no
        application, no job id: a jar that failed before it reached YARN) shows no progress, only how it ended:
        ``name: failed (exit code 1, no job submitted)``."""
        with self.lock:
            detail, ended = step_detail(result)
            if self.bars is not None and self.bars.live.is_started:
                task = self.tasks.get(result.log)
                if task is None:
                    task = self.tasks[result.log] = self.bars.add_task(result.name, total=200, detail=detail)
                done = 2 * result.map_pct if result.kind in SPARK_KINDS else result.map_pct + result.reduce_pct
                self.bars.update(task, completed=done, detail=f"{detail}  {ended}" if detail else ended)
                return
            key = progress_key(result)
            if self.last.get(result.log) != key:
                self.last[result.log] = key
                self._line(f"{result.name}: {detail} ({ended})" if detail else f"{result.name}: {ended}")

    def close(self) -> None:
        """Stop the live display, or write the lines still queued (waiting at most :data:`FLUSH_SECONDS`)."""
        with self.lock:
            if self.bars is not None and self.bars.live.is_started:
                self.bars.stop()
            if self.writer is not None and self.writer.is_alive():
                self.lines.put(None)
                self.writer.join(timeout=self.FLUSH_SECONDS)


def step_detail(result: StepResult) -> tuple[str, str]:
    """What a step's progress line says, and how it stands: ``("map  50% reduce   0%  application_1_0001",
    "running")``; for a Spark step its stage and tasks (:class:`~launcher.steps.jobs.StepResult`'s ``stage`` fields):
    ``("stage 2: 3/8 tasks, 2 stages done  application_1_0002", "running")``; before the first stage what it waits
    for (issue 40): ``waiting for executors: 1/2`` once YARN has its application and while fewer executors than it
    asked for have registered with the driver (``executors``/``executors_wanted``), else ``no stage started yet``;
    for a step that ended without submitting a job, ``("", "failed (exit code 1, no job submitted)")``."""
    if result.kind in SPARK_KINDS:
        plural = "s" if result.stages_done != 1 else ""
        done = f", {result.stages_done} stage{plural} done" if result.stages_done else ""
        wanted = result.executors_wanted
        if result.stage is not None:
            detail = f"stage {result.stage}: {result.stage_done}/{result.stage_tasks} tasks{done}"
        elif result.application_id and wanted and result.executors < wanted:
            detail = f"waiting for executors: {result.executors}/{wanted}"
        else:
            detail = "no stage started yet"
    else:
        detail = f"map {result.map_pct:3d}% reduce {result.reduce_pct:3d}%"
    if result.application_id:
        detail += f"  {result.application_id}"
    if StepState(result.state).terminal and not (result.application_id or result.job_id):
        code = f"exit code {result.returncode}, " if result.returncode is not None else ""
        return "", f"{result.state} ({code}no job submitted)"
    return detail, str(result.state)


def progress_key(result: StepResult) -> tuple[object, ...]:
    """What must change for a batch log to get a new line of a step: its state, its application, and its progress
    in tenths (map and reduce; for a Spark step, its stage, the stages done and the tenth of the stage's tasks, and
    before its first stage the executors registered)."""
    if result.kind in SPARK_KINDS:
        tenth = 10 * result.stage_done // max(1, result.stage_tasks)
        executors = result.executors if result.stage is None else None
        return str(result.state), result.application_id, result.stage, result.stages_done, tenth, executors
    return str(result.state), result.application_id, result.map_pct // 10, result.reduce_pct // 10
