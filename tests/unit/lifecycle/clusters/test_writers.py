"""Issue 38: the index of clusters has one writer, and a look at a cluster writes nothing.

* No module of ``launcher/`` or ``benchmarks/`` but launcher/lifecycle/clusters/index.py writes an index entry
  (``<state dir>/<cluster id>.json``) or ``ended.json``: a scan of the source (:func:`index_writes`) finds every call
  that writes, removes or renames a path made from the index's names (``state_dir``, ``clusters_dir``,
  ``IndexEntry``, ``EndedRecord``, ``ENDED_FILE``, ``"ended.json"``), also through a local variable.
* launcher/lifecycle/clusters/status.py calls nothing that writes and imports none of the index's writers; and
  :func:`status_of` over cluster directories of every kind (lost, cancelled while queued, unknown, a final record kept
  on this node, ready, stopping) writes nothing, with every writer made to raise and the files compared before and
  after.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.lifecycle.clusters import index, status
from launcher.lifecycle.clusters.status import STOP_FILE, BatchAnswer, status_of
from launcher.lifecycle.report import RunReport
from launcher.util.records import Record
from tests.conftest import REPO
from tests.unit.lifecycle.clusters.test_status import batch, make_dir

INDEX_MODULE = REPO / "launcher" / "lifecycle" / "clusters" / "index.py"
STATUS_MODULE = REPO / "launcher" / "lifecycle" / "clusters" / "status.py"
#: Names that make a path the index's (its directory, its records, ``ended.json``).
INDEX_NAMES = frozenset({"state_dir", "clusters_dir", "IndexEntry", "EndedRecord", "ENDED_FILE", "_entry_path"})
#: Callees (the last part of their name) that write, remove or rename what they are given or called on.
WRITERS = frozenset({"write", "write_text", "write_bytes", "create_private", "unlink", "remove", "rename", "replace",
                     "touch", "mkdir", "makedirs", "rmdir", "rmtree", "chmod", "chown", "symlink_to", "hardlink_to",
                     "copy", "copyfile", "copy2", "copytree", "move", "truncate", "utime"})
#: The index's writers, which status.py must not import.
INDEX_WRITERS = frozenset({"register", "record", "record_end", "unregister", "check_index", "_write_entry",
                           "_remember", "_write_ended", "_write_back"})


def _callee(call: ast.Call) -> str:
    """The last part of a call's callee: ``write`` of ``path.write(...)``, ``open`` of ``open(...)``."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _opens_to_write(call: ast.Call) -> bool:
    """``open(path, "w")``, ``path.open("a")``, ``os.open(path, os.O_WRONLY...)``: a mode or flags that write."""
    if _callee(call) != "open":
        return False
    modes = [a.value for a in [*call.args, *(k.value for k in call.keywords)]
             if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    flags = {n.attr for a in call.args for n in ast.walk(a) if isinstance(n, ast.Attribute)}
    return any(set(mode) & set("wax+") for mode in modes) or bool(flags & {"O_WRONLY", "O_RDWR", "O_CREAT"})


def _mentions(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` names the index: one of :data:`INDEX_NAMES`, ``"ended.json"``, or a tainted variable."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and (sub.id in INDEX_NAMES or sub.id in tainted):
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in INDEX_NAMES:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "ended.json" in sub.value:
            return True
    return False


def _targets(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _scopes(tree: ast.Module) -> Iterator[list[ast.AST]]:
    """The nodes of the module's top level and of each function, each without the functions defined in it: a
    variable's taint stays in its scope."""
    for owner in [tree, *(n for n in ast.walk(tree) if isinstance(n, FUNCTIONS))]:
        own: list[ast.AST] = []
        todo = list(ast.iter_child_nodes(owner))
        while todo:
            node = todo.pop()
            own.append(node)
            if not isinstance(node, FUNCTIONS):
                todo.extend(ast.iter_child_nodes(node))
        yield own


def _tainted(scope: list[ast.AST]) -> set[str]:
    """The variables of ``scope`` assigned (or looped over, or opened) from the index's names, to a fixed point."""
    tainted: set[str] = set()
    while True:
        before = len(tainted)
        for node in scope:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value and \
                    _mentions(node.value, tainted):
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    tainted.update(_targets(target))
            elif isinstance(node, (ast.For, ast.comprehension)) and _mentions(node.iter, tainted):
                tainted.update(_targets(node.target))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None and \
                    _mentions(node.context_expr, tainted):
                tainted.update(_targets(node.optional_vars))
        if len(tainted) == before:
            return tainted


def index_writes(source: str) -> list[str]:
    """The calls of ``source`` that write, remove or rename the index's files (:data:`INDEX_NAMES`, also through a
    variable assigned from them), as ``line: code``."""
    found: set[tuple[int, str]] = set()
    for scope in _scopes(ast.parse(source)):
        tainted = _tainted(scope)
        for node in scope:
            if isinstance(node, ast.Call) and (_callee(node) in WRITERS or _opens_to_write(node)) and \
                    _mentions(node, tainted):
                found.add((node.lineno, ast.get_source_segment(source, node) or _callee(node)))
    return [f"{line}: {code}" for line, code in sorted(found)]


def sources() -> Iterator[Path]:
    """Every module of ``launcher/`` and ``benchmarks/``."""
    for root in ("launcher", "benchmarks"):
        yield from sorted((REPO / root).rglob("*.py"))


def test_only_the_index_module_writes_the_index_or_ended_json() -> None:
    writers = {str(path.relative_to(REPO)): found for path in sources() if path != INDEX_MODULE
               for found in [index_writes(path.read_text())] if found}
    assert writers == {}, "write the index and ended.json through launcher.lifecycle.clusters.index"
    assert index_writes(INDEX_MODULE.read_text()), "the scan sees the index module's own writes"


@pytest.mark.parametrize("code", [
    '(state_dir() / f"{cid}.json").unlink()',
    'path = clusters_dir() / "c.json"\npath.write_text("{}")',
    'IndexEntry(cluster_id="c", run_dir="r", scheduler="local").write(p)',
    'entry = IndexEntry.read(p)\nentry.model_copy(update={}).write(p)',
    'EndedRecord(state=s).write(Path(run_dir, "ended.json"))',
    'create_private(run_dir / ENDED_FILE, "{}")',
    'with open(run_dir / "ended.json", "w") as f:\n    f.write("{}")',
    'for p in state_dir().glob("*.json"):\n    p.unlink()',
    'def f(run_dir):\n    ended = run_dir / index.ENDED_FILE\n    os.replace(tmp, ended)',
    'fd = os.open(state_dir() / "c.json", os.O_WRONLY | os.O_CREAT)',
    'shutil.rmtree(clusters_dir())',
])
def test_the_scan_finds_a_write_of_the_index(code: str) -> None:
    assert index_writes(code), code


@pytest.mark.parametrize("code", [
    'recorded = EndedRecord.read_or_none(run_dir / ENDED_FILE)\nprint(recorded.detail)',
    '(run_dir / STOP_FILE).write_text("x")',
    'RunReport(cluster_id="c").write(run_dir / "run.json")',
    'entry = IndexEntry(cluster_id="c", run_dir="r", scheduler="local")\nstatus_of(entry)',
    'with open(state_dir() / "c.json") as f:\n    f.read()',
    'def f():\n    path = state_dir()\ndef g(path):\n    path.unlink()',
])
def test_the_scan_leaves_reads_and_other_files_alone(code: str) -> None:
    assert not index_writes(code), code


def test_the_status_module_calls_no_writer() -> None:
    """status.py: no call of a writer (:data:`WRITERS` but ``dataclasses.replace``, ``open`` to write, ``os.*``
    that writes) on anything, and none of the index's writers imported."""
    source = STATUS_MODULE.read_text()
    tree = ast.parse(source)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    writes = [ast.get_source_segment(source, c) for c in calls
              if (_callee(c) in WRITERS and not (isinstance(c.func, ast.Name) and c.func.id == "replace"))
              or _opens_to_write(c)]
    assert writes == []
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert imported & INDEX_WRITERS == set()
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in INDEX_WRITERS]


def _snapshot(root: Path) -> dict[str, tuple[int, float, str]]:
    """Every file and directory below ``root``: its mode, mtime and content's digest."""
    shot = {}
    for parent, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(parent, name)
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            shot[str(path.relative_to(root))] = (info.st_mode, info.st_mtime, digest)
    return shot


@contextlib.contextmanager
def nothing_written(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Within it every writer of files raises (and is listed): :meth:`Record.write`, :class:`Path`'s, ``os``'s and
    ``shutil``'s, and ``open`` to write."""
    tried: list[str] = []

    def refuse(name: str) -> object:
        def refused(*args: object, **kwargs: object) -> None:
            tried.append(f"{name}{args[:2]}")
            raise AssertionError(f"status_of wrote: {name}{args[:2]}")
        return refused

    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if set(mode) & set("wax+"):
            return refuse("open")(file, mode)
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    def guarded_os_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse("os.open")(path, flags)
        return real_os_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(Record, "write", refuse("Record.write"))
        for name in ("write_text", "write_bytes", "unlink", "mkdir", "touch", "rename", "replace", "chmod", "rmdir",
                     "symlink_to"):
            patch.setattr(Path, name, refuse(f"Path.{name}"))
        for name in ("replace", "rename", "remove", "unlink", "mkdir", "makedirs", "rmdir", "chmod"):
            patch.setattr(os, name, refuse(f"os.{name}"))
        patch.setattr(shutil, "rmtree", refuse("shutil.rmtree"))
        patch.setattr(builtins, "open", guarded_open)
        patch.setattr(os, "open", guarded_os_open)
        yield tried


def test_status_of_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind of look that today has something to keep (and some that have not) writes nothing; what it learned
    is in :attr:`ClusterStatus.observed`, and :func:`index.record` writes it."""
    running = {"state": "running", "bringup_s": 3.0, "hold": True}
    lost = make_dir(tmp_path, "lost", report=running)
    queued = make_dir(tmp_path, "queued", plan=False)
    silent = make_dir(tmp_path, "silent", report=running)
    ready = make_dir(tmp_path, "ready", report=running)
    stopping = make_dir(tmp_path, "stopping", report=running)
    (stopping / STOP_FILE).write_text("x")
    gone_holder = make_dir(tmp_path, "holder", report=running)
    remounted = make_dir(tmp_path, "remounted", report=running)
    (remounted / "krb").mkdir()
    (remounted / "krb" / "services.keytab").write_text("x")
    kept = tmp_path / "var-tmp" / "remounted.run.json"
    kept.parent.mkdir()
    RunReport(cluster_id="remounted", run_dir=str(remounted), scheduler="local", state="failed",
              error="the filesystem is gone", kept_at=str(kept)).write(kept)
    monkeypatch.setattr(status, "local_record_paths", lambda cluster_id: [kept] if cluster_id == "remounted" else [])
    for cid, run_dir, job in (("lost", lost, "1"), ("queued", queued, "2"), ("silent", silent, "3"),
                              ("ready", ready, "4"), ("stopping", stopping, "5")):
        index.register(cid, run_dir, "slurm", job)
    index.register("holder", gone_holder, "local")  # no holder process: lost
    index.register("remounted", remounted, "local")
    answers = {"1": batch("completed"), "2": batch("cancelled"), "3": batch("no_answer"), "4": batch("running"),
               "5": batch("running")}

    def job_state(scheduler: str, job_id: str, run_dir: object = None) -> BatchAnswer:
        return answers[job_id](scheduler, job_id)

    monkeypatch.setattr(status, "batch_state", job_state)  # for statuses(), as `list` asks
    entries = index.index_entries()
    before = _snapshot(tmp_path)
    with nothing_written(monkeypatch) as tried:
        looked = {entry.cluster_id: status_of(entry, job_state=job_state) for entry in entries}
        listed = {s.cluster_id: s.state for s in status.statuses()}
    assert tried == [] and _snapshot(tmp_path) == before
    assert listed == {cid: s.state for cid, s in looked.items()}
    assert {cid: s.state for cid, s in looked.items()} == {
        "lost": "lost", "queued": "cancelled", "silent": "unknown", "ready": "ready", "stopping": "stopping",
        "holder": "lost", "remounted": "failed"}
    for look in looked.values():
        index.record(look.observed)
    assert {p.parent.name for p in tmp_path.glob("pfs/*/ended.json")} == {"lost", "queued", "holder"}
    assert [e.cluster_id for e in index.index_entries() if e.no_answer_since] == ["silent"]
    assert RunReport.read(remounted / "run.json").state == "failed" and not kept.exists()
    assert list((remounted / "krb").iterdir()) == []
