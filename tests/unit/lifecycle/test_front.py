"""Tests of launcher/lifecycle/front.py (issue 38 item 1): every command's front half goes through one door, each
command through its own entrance, and the rows of the table do what its docstring says."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.lifecycle import front as front_module
from launcher.lifecycle.front import ENTRANCES, Check, Seen, Settle, front_door
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers.base import MissingCommand
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError

SOURCES = Path(__file__).resolve().parents[3]
#: What only the front door calls: settling, the stand-in allocation, run's rule, validation and the plan.
FRONT_HALF = re.compile(r"\.settle\(|\.preview_allocation\(|take_allocation\(|(?<![\w.])prepare\(")
#: Modules allowed a part of it: the schedulers define them; doctor's path-length check plans on the stand-in
#: allocation without the other checks, so that each problem is reported by one check only.
ALLOWED = {"launcher/lifecycle/front.py", "launcher/cli/doctor.py"}


def modules() -> list[Path]:
    return sorted([*(SOURCES / "launcher").rglob("*.py"), *(SOURCES / "benchmarks").rglob("*.py")])


def commands_of(node: ast.expr) -> list[str]:
    """The commands a ``front_door`` call's first argument names: a constant, or both of ``"a" if c else "b"``."""
    if isinstance(node, ast.Constant):
        return [str(node.value)]
    if isinstance(node, ast.IfExp):
        return commands_of(node.body) + commands_of(node.orelse)
    raise AssertionError(f"front_door called with a command not written out: {ast.unparse(node)}")


def entrances_called() -> dict[str, list[str]]:
    """``front_door("<command>", ...)`` calls in launcher/ and benchmarks/: command → the modules calling it."""
    called: dict[str, list[str]] = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "front_door" and node.args:
                for command in commands_of(node.args[0]):
                    called.setdefault(command, []).append(path.relative_to(SOURCES).as_posix())
    return called


def test_every_entrance_has_exactly_one_call_site() -> None:
    """One call site per command (``submit`` and ``start`` on a batch system share ``submit_batch``'s, its command
    chosen by ``hold``), and every entrance is used."""
    called = entrances_called()
    print("\n".join(f"{command}: {', '.join(where)}" for command, where in sorted(called.items())))
    assert {command: len(where) for command, where in called.items()} == dict.fromkeys(ENTRANCES, 1), called


def test_no_module_but_the_front_door_makes_a_front_half() -> None:
    """Settling, the stand-in allocation, ``run``'s rule and ``prepare`` are called in front.py only (and where
    :data:`ALLOWED` says why)."""
    callers = {path.relative_to(SOURCES).as_posix() for path in modules()
               if FRONT_HALF.search(re.sub(r"(?m)^\s*(def |#).*$", "", path.read_text()))}
    assert {path for path in callers - ALLOWED if not path.startswith("launcher/schedulers/")} == set(), callers


def test_the_submit_entrance_plans_a_new_directory_on_the_stand_in_and_writes_nothing(
        make_spec: Callable[..., JobSpec], pfs_root: Path, fake_runtime: HadoopRuntime,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)
    checked: list[str] = []
    monkeypatch.setattr(SlurmScheduler, "check", lambda self, spec: checked.append(spec.name))
    front = front_door("submit", make_spec(filesystem={"root": str(pfs_root), "shared": True}))
    assert checked == ["t"] and front.allocation.preview and front.taken is None and not front.submitted
    run_dir = Path(front.plan.run_dir)
    assert run_dir.parent.parent.parent == pfs_root and not run_dir.exists()
    assert list(pfs_root.iterdir()) == []  # nothing written: the directory is submit's to make
    assert [step.name for step in front.steps] == ["pi"]


def test_render_tolerates_a_batch_system_not_installed_and_submit_does_not(
        make_spec: Callable[..., JobSpec], pfs_root: Path, fake_runtime: HadoopRuntime,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(front_module, "discover", lambda home, java: fake_runtime)

    def missing(self: SlurmScheduler, spec: JobSpec) -> None:
        raise MissingCommand("sinfo: not installed")

    monkeypatch.setattr(SlurmScheduler, "check", missing)
    spec = make_spec(filesystem={"root": str(pfs_root), "shared": True})
    assert front_door("render", spec).plan.nodes
    assert front_door("doctor", spec).plan.nodes
    with pytest.raises(UserError, match="not installed"):
        front_door("submit", spec)


def test_run_on_the_local_backend_takes_this_machine_and_a_submitted_directory(make_spec: Callable[..., JobSpec],
                                                                               pfs_root: Path) -> None:
    """``run``'s entrance: the allocation this process is in (the local backend: this machine), what was taken from
    it in one line, and the plan in the directory ``submit`` made (``--run-dir``)."""
    spec = make_spec(scheduler="local", nodes=1)
    fresh = front_door("run", spec)
    assert fresh.taken is not None and fresh.taken.startswith("allocation: this machine (local backend)")
    assert not fresh.submitted and fresh.allocation.scheduler == "local"
    run_dir = pfs_root / "made" / "c-1"
    given = front_door("run", spec, run_dir=run_dir)
    assert given.submitted and Path(given.plan.run_dir) == run_dir.resolve() and given.plan.cluster_id == "c-1"
    said: list[str] = []
    front_door("run", spec, taken=said.append)
    assert said == []  # the line goes to the log only for a batch system's allocation


def test_a_benchmark_point_takes_the_first_nodes_and_one_larger_than_the_allocation_is_refused(
        make_spec: Callable[..., JobSpec]) -> None:
    """``bench``'s ``nodes``: the first ``nodes`` of the allocation; more than it has is one line naming
    ``sweep.nodes`` (before any cluster starts: the harness opens every cluster's front door first)."""
    spec = make_spec(scheduler="local", nodes=1)
    assert len(front_door("bench", spec, nodes=1).allocation.nodes) == 1
    with pytest.raises(UserError, match=r"the allocation has 1 node\(s\); the bench asks for up to 2") as err:
        front_door("bench", spec, nodes=2)
    assert err.value.field == "sweep.nodes"


def test_the_table_says_which_rows_settle_check_take_and_make_a_directory() -> None:
    assert {name for name, e in ENTRANCES.items() if e.new_dir} == {"submit", "start", "start-here"}
    assert {name for name, e in ENTRANCES.items() if e.take} == {"run", "render-run"}
    assert {name for name, e in ENTRANCES.items() if e.settle is Settle.PREVIEW} == {"render", "doctor"}
    assert {name for name, e in ENTRANCES.items() if e.seen is Seen.STAND_IN} == {"submit", "start", "render",
                                                                                 "doctor"}
    assert {name: e.check for name, e in ENTRANCES.items() if e.check} == {
        "submit": Check.ALWAYS, "start": Check.ALWAYS, "render": Check.INSTALLED, "doctor": Check.INSTALLED}
