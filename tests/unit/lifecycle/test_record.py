"""Tests of launcher/lifecycle/record.py: :class:`RunRecord` is the one writer of ``run.json`` (issue 38).

A write of ``run.json`` past it would bypass its lost-filesystem translation (a write that fails because the shared
filesystem went away must be :class:`~launcher.util.errors.FilesystemLost`), so the sources of ``launcher/`` and
``benchmarks/`` are read here and any other write of it fails the test: a run report's own writers
(``report.write()``, ``RunReport.keep_locally``), or any call that writes, copies or moves a file named by a
``run.json`` path (``open(..., "w")``, ``write_text``, ``replace_private``, ``shutil.copy``...).
"""

from __future__ import annotations

import ast
import errno
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from launcher.lifecycle.health import Health
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport
from launcher.util.errors import FilesystemLost
from tests.conftest import REPO

#: Where ``run.json`` may be written: RunRecord, and the report's primitives it calls (qualified names; ``*``: all).
ALLOWED = {"launcher/lifecycle/record.py": {"*"},
           "launcher/lifecycle/report.py": {"RunReport.write", "RunReport.keep_locally"}}

#: A string that names run.json or a node's copy of it (``<id>.run.json``), not ``.room-for-run.json``.
RUN_JSON = re.compile(r"(?<![\w-])run\.json")

#: Calls that write, copy or move the file an argument (or their receiver) names.
WRITERS = {"write", "write_text", "write_bytes", "keep_locally", "replace_private", "create_private", "_replace",
           "copy", "copy2", "copyfile", "copyfileobj", "move", "replace", "rename", "dump", "touch", "symlink_to",
           "hardlink_to", "link", "symlink"}

#: A run report's own writers: called on anything named like a report, they write run.json.
REPORT_WRITERS = {"write", "keep_locally"}


def _names_run_json(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` holds a ``run.json`` string, or a name bound to one."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and RUN_JSON.search(sub.value):
            return True
        if isinstance(sub, ast.Name) and sub.id in tainted:
            return True
    return False


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``, not those of the functions and classes defined in it (scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _writes(call: ast.Call, tainted: set[str]) -> bool:
    """Whether ``call`` writes ``run.json``."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    receiver = func.value if isinstance(func, ast.Attribute) else None
    if name in REPORT_WRITERS and receiver is not None and "report" in ast.unparse(receiver).lower():
        return True
    arguments: list[ast.AST] = [*call.args, *(k.value for k in call.keywords)]
    if name == "open":
        modes = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "mode")]
        writing = any(isinstance(m, ast.Constant) and set(str(m.value)) & set("wax+") for m in modes)
        return writing and _names_run_json(call.args[0], tainted) if call.args else False
    if name not in WRITERS:
        return False
    return any(_names_run_json(a, tainted) for a in [*arguments, *([receiver] if receiver is not None else [])])


def run_json_writes(source: str, allowed: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """``<qualified name>:<line>`` of every write of ``run.json`` in ``source``, outside the functions ``allowed``
    (qualified names, ``*`` for all). A name bound to a ``run.json`` path in a function is one in the functions
    defined within it too."""
    found: list[str] = []

    def scan(scope: ast.AST, qualname: str, inherited: set[str]) -> None:
        own = list(_own_nodes(scope))
        tainted = set(inherited)
        for node in own:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None \
                    and _names_run_json(node.value, tainted):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                tainted |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if "*" not in allowed and qualname not in allowed:
            found.extend(f"{qualname or '<module>'}:{n.lineno}" for n in own
                         if isinstance(n, ast.Call) and _writes(n, tainted))
        for node in own:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scan(node, f"{qualname}.{node.name}".lstrip("."), tainted)

    scan(ast.parse(source), "", set())
    return found


def test_run_json_is_written_by_run_record_only() -> None:
    """Issue 38: no module of ``launcher/`` or ``benchmarks/`` but :mod:`launcher.lifecycle.record` (and the
    report's primitives it calls) writes ``run.json``."""
    sources = sorted([*REPO.joinpath("launcher").rglob("*.py"), *REPO.joinpath("benchmarks").rglob("*.py")])
    assert len(sources) > 50
    found = []
    for path in sources:
        relative = path.relative_to(REPO).as_posix()
        found += [f"{relative}:{where}"
                  for where in run_json_writes(path.read_text(), ALLOWED.get(relative, set()))]
    assert found == [], "run.json written past RunRecord (launcher/lifecycle/record.py): " + ", ".join(found)


@pytest.mark.parametrize("source", [
    "def prepare(report):\n    report.write()\n",  # runner.prepare_filesystem before issue 38
    "class Run:\n    def enter(self):\n        self.report.write()\n",  # ClusterRun.__enter__ before
    "def back(kept, run_dir):\n    kept.write(run_dir / 'run.json')\n",  # interactive's write-back before
    "def f(d, t):\n    (d / 'run.json').write_text(t)\n",
    "def f(d, t):\n    path = Path(d, 'run.json')\n    replace_private(path, t)\n",
    "def f(d, t):\n    target = d / 'run.json'\n    def inner():\n        target.write_bytes(t)\n",
    "def f(d, t):\n    with open(f'{d}/run.json', 'w') as out:\n        out.write(t)\n",
    "def f(r, c):\n    r.keep_locally()\n    shutil.copy(c, f'/var/tmp/{c}.run.json')\n",
])
def test_the_check_finds_a_write_of_run_json(source: str) -> None:
    """The check is not blind: each way of writing ``run.json`` it must see, seen."""
    assert run_json_writes(source)


@pytest.mark.parametrize("source", [
    "def f(d):\n    return RunReport.read_or_none(d / 'run.json')\n",
    "def f(d):\n    report = d / 'run.json'\n    return RunReport.read(report) if report.exists() else None\n",
    "def f(d):\n    with open(d / 'run.json') as out:\n        return out.read()\n",
    "def f(d):\n    (d / '.room-for-run.json').write_bytes(b'0')\n",  # the room kept for it is not it
    "def f(record):\n    record.write()\n    RunRecord.write_back(kept, d)\n",
])
def test_the_check_lets_reads_and_run_record_through(source: str) -> None:
    assert run_json_writes(source) == []


def test_write_back_writes_the_kept_record_into_its_cluster_directory(tmp_path: Path) -> None:
    kept = RunReport(cluster_id="c38", name="wc", run_dir=str(tmp_path), scheduler="local", nodes=["n1"],
                     state="failed", error="gone")
    assert RunRecord.write_back(kept, tmp_path) == tmp_path / "run.json"
    assert RunReport.load(tmp_path).error == "gone"


def test_a_write_on_a_lost_filesystem_is_the_lost_filesystem_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statvfs_gone: Callable[[str], None]) -> None:
    """:meth:`RunRecord.write` turns an ``OSError`` of a shared filesystem that is gone into
    :class:`FilesystemLost` (raised from it); another ``OSError`` goes through as it is."""
    report = RunReport(cluster_id="c38", name="wc", run_dir=str(tmp_path), scheduler="local", nodes=["n1"])
    plan = SimpleNamespace(filesystem=SimpleNamespace(mount_point=str(tmp_path), path=str(tmp_path)))
    record = RunRecord(report, Health(plan, None, Observer(), report))
    errors = [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN))]

    def write(*args: object, **kwargs: object) -> Path:
        raise errors[0]

    monkeypatch.setattr(RunReport, "write", write)
    with pytest.raises(OSError) as raised:
        record.write()
    assert raised.value is errors[0]
    errors.pop(0)
    statvfs_gone(str(tmp_path))
    with pytest.raises(FilesystemLost, match="is gone") as lost:
        record.write()
    assert lost.value.__cause__ is errors[0]
