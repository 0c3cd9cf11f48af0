"""What a run tells the terminal: :class:`Observer`, the interface the parts of a run report to (the CLI's rich display,
:class:`launcher.lifecycle.progress.ConsoleObserver`, subclasses it). Imports only the steps' result type."""

from __future__ import annotations

from launcher.steps.jobs import StepResult


class Observer:
    """What the runner tells the terminal; the CLI subclasses it with a rich progress display."""

    def phase(self, text: str) -> None:
        """A new phase began (``bring-up``, ``step 1/3 wordcount``, ``teardown``)."""

    def event(self, text: str) -> None:
        """Something happened within a phase, said once (``n1: NodeManager registered (1/3)`` during bring-up)."""

    def progress(self, result: StepResult) -> None:
        """A step's progress, ids or state changed (called from a reader thread)."""

    def output(self, result: StepResult, line: str) -> None:
        """A line a step's program printed (a Spark driver's standard output; called from a reader thread)."""

    def warn(self, text: str) -> None:
        """Something the user should know now (the shared filesystem stalled)."""

    def close(self) -> None:
        """The run is over."""
