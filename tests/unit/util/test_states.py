"""The states' vocabulary, typed end to end (issue 38 item 3): ``ClusterState`` holds every end of a run with
:class:`RunState`'s own string, the files and ``list --json`` keep the same strings, and no code under launcher/
compares or assigns a state as a bare string literal (the enums of launcher/util/states.py and
launcher/schedulers/allocation.py name them)."""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from launcher.lifecycle.clusters.index import EndedRecord
from launcher.lifecycle.clusters.status import BatchAnswer, ClusterStatus
from launcher.schedulers.allocation import JobState
from launcher.util.states import AgentState, ClusterState, RunState, State, StepState

LAUNCHER = Path(__file__).resolve().parents[3] / "launcher"
#: The two files that define the states (and so spell them out).
DEFINING = (LAUNCHER / "util" / "states.py", LAUNCHER / "schedulers" / "allocation.py")
KINDS: tuple[type[State] | type[JobState], ...] = (RunState, ClusterState, AgentState, StepState, JobState)


def test_every_end_of_a_run_is_a_cluster_state_with_the_same_name_and_string() -> None:
    """``ClusterState`` repeats ``RunState``'s members, its values taken from them (a Python enum cannot extend
    another with members, and one built by the functional API hides its members from ``mypy --strict``): a terminal
    run state added to ``RunState`` alone fails here."""
    for state in RunState:
        shown = ClusterState.of_run(state)
        assert shown.name == state.name and shown.value == state.value and shown == state
    assert {s.value for s in RunState if s.terminal} <= {s.value for s in ClusterState if s.terminal}


@pytest.mark.parametrize(("kind", "values"), [
    (RunState, "running succeeded stopped failed bringup_failed interrupted cancelled timed_out"),
    (ClusterState, "pending starting running ready stopping unknown unreachable lost cancelled gone succeeded "
                   "stopped failed bringup_failed interrupted timed_out"),
    (AgentState, "starting running stopping stopped failed"),
    (StepState, "pending running succeeded failed killed"),
    (JobState, "pending running completed failed cancelled timed_out unknown no_answer"),
])
def test_the_strings_on_disk_do_not_change(kind: type[State] | type[JobState], values: str) -> None:
    """``run.json``, ``ended.json``, ``agents/<node>.json`` and ``list --json`` of every release hold these."""
    assert [s.value for s in kind] == values.split()


def test_list_json_and_ended_json_hold_plain_strings(tmp_path: Path) -> None:
    status = ClusterStatus(cluster_id="c", run_dir=str(tmp_path), scheduler="slurm", job_id="7",
                           state=ClusterState.READY)
    for form in (status.to_dict(), dataclasses.asdict(status)):
        assert json.loads(json.dumps(form))["state"] == "ready"
    assert status.to_dict()["state"].__class__ is str and f"{status.state}" == "ready"
    # what the batch system answered the look is not shown (stop 53's first run of `list --json` failed on it)
    status.batch = BatchAnswer(JobState.NO_ANSWER, "squeue: error: Unable to contact slurm controller")
    assert "batch" not in json.loads(json.dumps(status.to_dict()))
    EndedRecord(state=ClusterState.LOST, detail="gone", at=1.0).write(tmp_path / "ended.json")
    assert json.loads((tmp_path / "ended.json").read_text())["state"] == "lost"
    assert EndedRecord.read(tmp_path / "ended.json").state is ClusterState.LOST


# -- no state as a bare string literal above the enums --------------------------------------------------------------

#: Every state word, longest first.
WORDS = "|".join(sorted({s.value for kind in KINDS for s in kind}, key=len, reverse=True))
#: One of them, quoted.
WORD = rf"""["'](?:{WORDS})["']"""
#: A name that holds a state (``state``, ``self.report.state``, ``job_state``, ``STATE_COLORS``).
STATEFUL = r"(?i:[\w.]*state\w*)"
#: Code that uses a state word as a state. One pattern each:
PATTERNS = {
    # x == "failed", batch != "no_answer", "lost" == status.state (never polling's outcome == "failed": its own word)
    "compared": re.compile(rf"(?P<left>[\w.\])]+)\s*(?:==|!=)\s*{WORD}|{WORD}\s*(?:==|!=)\s*(?P<right>[\w.]+)"),
    # state in ("ready", "running"), s.state not in ["lost", x]
    "in a literal": re.compile(rf"\bin\s*[(\[{{][^)\]}}]*?{WORD}"),
    # state = "pending", state="pending" (a keyword), .state = x if y else "running"
    "assigned": re.compile(rf"{STATEFUL}\s*=(?!=)[^\n]*?{WORD}"),
    # status.state, status.detail = "lost", why
    "assigned with others": re.compile(rf"\.state\s*,[^=\n]*=(?!=)\s*{WORD}"),
    # STATE_COLORS = {"ready": "green", ...}
    "a key": re.compile(rf"{STATEFUL}\s*(?::[^=\n]*)?=\s*\{{[^}}]*?{WORD}\s*:"),
    # RELEASED = ("completed", "failed", ...): a collection of state words only
    "a collection": re.compile(rf"[(\[{{]\s*{WORD}(?:\s*,\s*{WORD})+\s*,?\s*[)\]}}]"),
}


def code_of(source: str) -> str:
    """``source`` with its comments and bare string statements (docstrings) blanked: only code is searched."""
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for number in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[number] = "\n"
    for token in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col].rstrip() + "\n"
    return "".join(lines)


def literal_states(source: str) -> list[tuple[int, str, str]]:
    """Where ``source`` uses a state word as a bare string literal: ``(line, the patterns it matched, line's text)``,
    one per line."""
    code = code_of(source)
    found: dict[int, list[str]] = {}
    for name, pattern in PATTERNS.items():
        for match in pattern.finditer(code):
            operand = match.groupdict().get("left") or match.groupdict().get("right") or ""
            if name == "compared" and operand.endswith("outcome"):
                continue  # launcher.util.polling.Outcome: "done", "timeout", "failed" of a poll, not a state
            names = found.setdefault(code.count("\n", 0, match.start()) + 1, [])
            if name not in names:
                names.append(name)
    lines = code.splitlines()
    return [(line, ", ".join(names), lines[line - 1].strip()) for line, names in sorted(found.items())]


def statement(line: str) -> str:
    """``line`` made a whole statement (an ``if ...:`` given a body)."""
    return line + ("\n    pass\n" if line.endswith(":") else "\n")


@pytest.mark.parametrize("line", [
    'if self.state == "stopping":',
    'if batch == "no_answer":',
    'if "lost" == status.state:',
    'if status.state not in ("ready", "running"):',
    'if self.failed:\n    pass\nelif self.report.state == "running":',
    'status = ClusterStatus(cluster_id=c, state="pending")',
    'status.state = "ready" if report.hold else "running"',
    'status.state, status.detail = "lost", gone_why',
    'STATE_COLORS = {"ready": "green",\n    "lost": "red"}',
    'RELEASED = ("completed", "failed", "cancelled")',
    'return state in (*RELEASED, "no_answer")',
])
def test_the_search_finds_a_state_literal(line: str) -> None:
    assert literal_states(statement(line)), line


@pytest.mark.parametrize("line", [
    'Outcome = Literal["done", "timeout", "failed"]',
    'return Polled(current, "failed", polls)',
    'return self.outcome == "failed"',
    'if acct.get("failed", "0").split()[0] != "0":',
    'return 0, "unknown"',
    'fs_type = entry.fstype or "unknown"',
    'DirectoryRecord(role=role, status="failed")',
    'self.observer.phase("ready")',
    'gone = status.state is ClusterState.GONE  # not "gone" == state',
    'def f() -> None:\n    """state == "running" in a docstring"""',
    'state = "installed" if changed else "up to date"',
])
def test_the_search_leaves_other_words_alone(line: str) -> None:
    assert not literal_states(statement(line)), line


def test_no_state_is_a_bare_string_literal_above_the_enums() -> None:
    """Every comparison, membership test and assignment of a run, cluster, agent, step or batch job state under
    launcher/ names an enum member (``ClusterState.LOST``, not ``"lost"``); only the two files that define the
    enums spell the strings out."""
    offenders = [f"{path.relative_to(LAUNCHER.parent)}:{line}: {text}  ({name})"
                 for path in sorted(LAUNCHER.rglob("*.py")) if path not in DEFINING
                 for line, name, text in literal_states(path.read_text())]
    assert not offenders, "state literals (use the enum members):\n" + "\n".join(offenders)
