"""Signals during a run: each one that should end it raises :class:`Interrupted` in the main thread; during teardown
they are only noted, so that nothing stops the teardown half way.

Owns: the handlers of :data:`HANDLED_SIGNALS` while a cluster runs (:class:`SignalTrap`), and restoring the ones they
replaced. Imports nothing of the project.
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import Any

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)


class Interrupted(BaseException):
    """A signal asked us to stop (SIGUSR1 is the batch system's walltime warning)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class SignalTrap:
    """The run's handlers of :data:`HANDLED_SIGNALS` (Ctrl-C, SIGTERM, SIGHUP, the walltime warning SIGUSR1), from
    :meth:`trap` until :meth:`restore`; must be used from the main thread (:func:`signal.signal`)."""

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}  # signal number -> the handler it had

    def trap(self) -> None:
        """From now on, each of :data:`HANDLED_SIGNALS` raises :class:`Interrupted` (the main thread's next
        bytecode)."""
        for signum in HANDLED_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)

    @staticmethod
    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    def defer(self) -> list[str]:
        """From now on (teardown), a signal (a second walltime warning, Ctrl-C again) raises nothing: its name is
        appended to the returned list, for a note."""
        late: list[str] = []
        for signum in HANDLED_SIGNALS:  # a signal now (a second walltime warning, Ctrl-C again) must not stop teardown
            signal.signal(signum, lambda number, _frame: late.append(signal.Signals(number).name))
        return late

    def restore(self) -> None:
        """Put back the handlers :meth:`trap` replaced (none when it was not called)."""
        for number, handler in self._previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()
