"""The one polling loop (launcher/util/polling.py): back-off, tolerated failures, timeout; on an injected clock, so
nothing here sleeps."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from launcher.util.polling import poll


class FakeTime:
    """A monotonic clock that only ``sleep`` advances; records every sleep (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def answers(values: Iterable[Any]) -> Callable[[], Any]:
    """A probe answering ``values`` in turn; an exception instance among them is raised instead."""
    queue = list(values)

    def probe() -> Any:
        value = queue.pop(0)
        if isinstance(value, Exception):
            raise value
        return value

    return probe


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


def test_backs_off_while_unchanged_and_resets_on_change(clock: FakeTime) -> None:
    probe = answers(["q", "q", "q", "q", "r", "r", "done"])
    polled = poll(probe, done=lambda v: v == "done", clock=clock.monotonic, sleep=clock.sleep)
    assert polled.done and polled.value == "done" and polled.polls == 7
    assert clock.sleeps == [0.5, 0.75, 1.125, 1.6875, 0.5, 0.75]


def test_back_off_is_capped_and_only_while_asked(clock: FakeTime) -> None:
    probe = answers(["q"] * 8 + ["r"] * 3 + ["done"])
    poll(probe, done=lambda v: v == "done", max_interval=2.0, backoff=2.0, backoff_while=lambda v: v == "q",
         clock=clock.monotonic, sleep=clock.sleep)
    assert clock.sleeps == [0.5, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5]


def test_constant_interval_with_backoff_one(clock: FakeTime) -> None:
    poll(answers([1, 1, 1, 2]), done=lambda v: v == 2, interval=0.2, backoff=1.0, clock=clock.monotonic,
         sleep=clock.sleep)
    assert clock.sleeps == [0.2, 0.2, 0.2]


def test_failed_values_are_tolerated_up_to_the_limit(clock: FakeTime) -> None:
    # two failed values in a row, then a good one, resets the count: the wait goes on
    polled = poll(answers(["?", "?", "ok", "?", "?", "?", "done"]), done=lambda v: v == "done", tolerate=3,
                  failed=lambda v: v == "?", clock=clock.monotonic, sleep=clock.sleep)
    assert polled.done and polled.polls == 7
    # one more than tolerated ends it, with the last value
    polled = poll(answers(["ok"] + ["?"] * 6 + ["done"]), done=lambda v: v == "done", tolerate=5,
                  failed=lambda v: v == "?", clock=clock.monotonic, sleep=clock.sleep)
    assert polled.outcome == "failed" and polled.value == "?" and polled.polls == 7


def test_errors_are_tolerated_then_raised(clock: FakeTime) -> None:
    polled = poll(answers(["a", OSError("x"), OSError("y"), "a", "done"]), done=lambda v: v == "done",
                  errors=(OSError,), tolerate=2, clock=clock.monotonic, sleep=clock.sleep)
    assert polled.done and polled.polls == 5
    assert clock.sleeps == [0.5, 0.5, 0.5, 0.75]  # a failed poll starts the back-off again
    with pytest.raises(OSError, match="third"):
        poll(answers([OSError("first"), OSError("second"), OSError("third"), "done"]), done=lambda v: v == "done",
             errors=(OSError,), tolerate=2, clock=clock.monotonic, sleep=clock.sleep)


def test_other_exceptions_pass_through_at_once(clock: FakeTime) -> None:
    with pytest.raises(KeyError):
        poll(answers([KeyError("boom"), "done"]), done=lambda v: v == "done", errors=(OSError,),
             clock=clock.monotonic, sleep=clock.sleep)
    assert clock.sleeps == []


def test_timeout_returns_the_last_value_and_never_sleeps_past_it(clock: FakeTime) -> None:
    polled = poll(lambda: "pending", done=lambda v: False, timeout=3.0, clock=clock.monotonic, sleep=clock.sleep)
    assert polled.timed_out and polled.value == "pending"
    assert clock.sleeps == [0.5, 0.75, 1.125, 0.625]  # the last sleep ends at the timeout, where one more poll is
    assert clock.now == 103.0 and polled.polls == 5


def test_timeout_with_no_value_yet_raises_the_error(clock: FakeTime) -> None:
    def probe() -> str:
        raise OSError("no answer")

    with pytest.raises(OSError, match="no answer"):
        poll(probe, done=lambda v: True, errors=(OSError,), tolerate=100, timeout=1.0, clock=clock.monotonic,
             sleep=clock.sleep)


def test_on_change_sees_each_new_key_once(clock: FakeTime) -> None:
    seen: list[tuple[str, int]] = []
    values = [("pending", 1), ("pending", 2), ("starting", 3), ("starting", 4), ("ready", 5)]
    polled = poll(answers(values), done=lambda v: v[0] == "ready", key=lambda v: v[0], on_change=seen.append,
                  clock=clock.monotonic, sleep=clock.sleep)
    assert seen == [("pending", 1), ("starting", 3), ("ready", 5)] and polled.value == ("ready", 5)
    assert clock.sleeps == [0.5, 0.75, 0.5, 0.75]  # the key decides what is unchanged


def test_done_at_once_does_not_sleep(clock: FakeTime) -> None:
    polled = poll(lambda: 42, done=lambda v: v == 42, timeout=0.0, clock=clock.monotonic, sleep=clock.sleep)
    assert polled.done and polled.polls == 1 and clock.sleeps == []
