"""The one polling loop: ask something until it says done, sleeping with back-off, tolerating a few failures.

Every wait of the launcher goes through :func:`poll`: a batch job's state (:meth:`launcher.schedulers.base.
BatchScheduler.wait`, which ``submit --wait`` follows), a starting cluster (``start``), a stopping one and its
released allocation (``stop``), a step's job client (:mod:`launcher.steps.jobs`), the node agent's supervision, its wait
for the NameNode and for the other nodes' agents (:mod:`launcher.node.agent`), a job's history file
(:mod:`launcher.steps.jobhistory`). A wait that must end early on something else (a daemon that died, a second signal)
says so in its probe's value, which ``done`` accepts. Imports only the standard library.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

#: Why :func:`poll` returned: the value was done, the timeout passed, or too many polls in a row failed.
Outcome = Literal["done", "timeout", "failed"]


@dataclass(frozen=True)
class Polled(Generic[T]):
    """What :func:`poll` ended with.

    Attributes:
        value: the last value the probe returned.
        outcome: ``done`` (``done(value)`` held), ``timeout`` (the timeout passed first) or ``failed`` (more than
            ``tolerate`` polls in a row returned a failed value).
        polls: how many times the probe was called.
    """

    value: T
    outcome: Outcome
    polls: int

    @property
    def done(self) -> bool:
        """True when the value was done."""
        return self.outcome == "done"

    @property
    def timed_out(self) -> bool:
        """True when the timeout passed before the value was done."""
        return self.outcome == "timeout"


_UNSET = object()


def poll(probe: Callable[[], T], *, done: Callable[[T], bool], interval: float = 0.5, max_interval: float = 5.0,
         backoff: float = 1.5, backoff_while: Callable[[T], bool] | None = None,
         key: Callable[[T], object] | None = None, timeout: float | None = None, tolerate: int = 3,
         failed: Callable[[T], bool] | None = None,
         errors: tuple[type[Exception], ...] = (), on_change: Callable[[T], None] | None = None,
         clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None) -> Polled[T]:
    """Call ``probe()`` until ``done(value)``, the timeout passes, or too many polls in a row fail.

    Args:
        probe: asks the current value (a job state, a cluster status...).
        done: ``True`` for a final value.
        interval, max_interval, backoff: seconds between polls: ``interval`` after the first value, a changed value
            or a failed poll; while the value (its ``key``) stays the same and ``backoff_while(value)`` holds
            (``None``: always), ``backoff`` times the last sleep, at most ``max_interval``. Never past the timeout.
        key: what must change for a value to count as changed (``None``: the value itself).
        timeout: seconds after which the wait ends, with a last poll at that time (``None``: never).
        tolerate: failed polls in a row that are tolerated; one more ends the wait. A poll fails when the probe
            raises one of ``errors`` or returns a value for which ``failed(value)`` holds.
        on_change: called with the first value and each value whose key differs from the previous value's.
        clock, sleep: seconds clock and sleep function (default ``time.monotonic``, ``time.sleep``; for tests).

    Returns:
        The last value with the outcome (``done``, ``timeout`` or ``failed``) and the number of polls.

    Raises:
        Exception: one of ``errors`` when it ends the wait (more than ``tolerate`` in a row, or the timeout passed
            with no value yet); any other exception of ``probe``, ``done`` or ``on_change`` at once.
    """
    clock, sleep = clock or time.monotonic, sleep or time.sleep
    began = clock()
    polls = failures = 0
    value: object = _UNSET
    last_key: object = _UNSET
    pause = interval
    while True:
        polls += 1
        try:
            current = probe()
        except errors:
            failures += 1
            if failures > tolerate or (_passed(clock() - began, timeout) and value is _UNSET):
                raise
            pause = interval
        else:
            value, current_key = current, (key(current) if key else current)
            changed, last_key = current_key != last_key, current_key
            if changed and on_change is not None:
                on_change(current)
            patient = not changed and (backoff_while is None or backoff_while(current))
            pause = min(pause * backoff, max(max_interval, interval)) if patient else interval
            if done(current):
                return Polled(current, "done", polls)
            failures = failures + 1 if failed is not None and failed(current) else 0
            if failures > tolerate:
                return Polled(current, "failed", polls)
        elapsed = clock() - began
        if _passed(elapsed, timeout):
            return Polled(value, "timeout", polls)  # type: ignore[arg-type]
        sleep(pause if timeout is None else min(pause, timeout - elapsed))


def _passed(elapsed: float, timeout: float | None) -> bool:
    return timeout is not None and elapsed >= timeout
