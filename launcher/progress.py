"""Terminal progress for a run: a live rich display on a terminal, plain lines otherwise (CI, batch logs)."""

from __future__ import annotations

import threading
import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from launcher.jobs import StepResult
from launcher.runner import Observer


class ConsoleObserver(Observer):
    """Shows phases and map/reduce progress.

    On a terminal: one rich progress bar per step (map %, reduce %). Otherwise: a timestamped line per
    phase and per 10% of progress, which reads well in a batch job's output file.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.lock = threading.Lock()
        self.began = time.time()
        self.last: dict[str, tuple[int, int, str]] = {}
        self.bars: Progress | None = None
        self.tasks: dict[str, TaskID] = {}
        if self.live:
            self.bars = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                                     TimeElapsedColumn(), console=console, transient=False)

    def _line(self, text: str) -> None:
        self.console.print(f"[{time.time() - self.began:7.1f}s] {text}", highlight=False)

    def phase(self, text: str) -> None:
        """Print the phase; start the live display at the first step."""
        with self.lock:
            if self.bars is not None and text.startswith("step") and not self.bars.live.is_started:
                self.bars.start()
            if self.bars is not None and self.bars.live.is_started:
                self.bars.console.print(f"[bold]{text}[/bold]")
            else:
                self._line(text)

    def progress(self, result: StepResult) -> None:
        """Update the step's bar, or print a line when progress moved by 10% or the state changed."""
        with self.lock:
            detail = f"map {result.map_pct:3d}% reduce {result.reduce_pct:3d}%"
            if result.application_id:
                detail += f"  {result.application_id}"
            if self.bars is not None and self.bars.live.is_started:
                task = self.tasks.get(result.log)
                if task is None:
                    task = self.tasks[result.log] = self.bars.add_task(result.name, total=200, detail=detail)
                self.bars.update(task, completed=result.map_pct + result.reduce_pct,
                                     detail=f"{detail}  {result.state}")
                return
            previous = self.last.get(result.log, (-100, -100, ""))
            if (result.map_pct // 10, result.reduce_pct // 10, result.state) != \
                    (previous[0] // 10, previous[1] // 10, previous[2]) or previous[0] < 0:
                self.last[result.log] = (result.map_pct, result.reduce_pct, result.state)
                self._line(f"{result.name}: {detail} ({result.state})")

    def close(self) -> None:
        """Stop the live display."""
        with self.lock:
            if self.bars is not None and self.bars.live.is_started:
                self.bars.stop()
