"""The code base stays ``ruff`` clean (rules in pyproject.toml), its imports follow the data flow (the layers
contract of ``[tool.importlinter]``), and ``mypy`` in strict mode (``strict = true`` in ``[tool.mypy]``: the same as
``mypy --strict``) finds no type error in ``launcher/`` and ``benchmarks/``: the checks CI would otherwise forget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

BIN = Path(sys.executable).parent


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a checker from this interpreter's environment in the repository."""
    return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=300, check=False)


def test_ruff_check_is_clean() -> None:
    proc = run([sys.executable, "-m", "ruff", "check", "--no-cache", "launcher", "benchmarks", "tests", "setup.py"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_imports_follow_the_layers() -> None:
    proc = run([str(BIN / "lint-imports"), "--no-cache"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_finds_no_type_error() -> None:
    proc = run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_every_integration_module_is_outside_the_fast_tier() -> None:
    """The fast tier (``pytest -m "not hadoop"``, docs/architecture.md#tests) must never start a daemon: every module
    of tests/integration marks all its tests ``hadoop`` (issue 26 item 6)."""
    unmarked = [path.name for path in sorted((REPO / "tests" / "integration").glob("test_*.py"))
                if not any(line.startswith("pytestmark") and "pytest.mark.hadoop" in line
                           for line in path.read_text().splitlines())]
    assert unmarked == [], f"add `pytestmark = pytest.mark.hadoop` to {unmarked}"


def test_no_module_imports_itself_through_others() -> None:
    """Issue 26 item 4: no import cycle between two modules of ``launcher`` or ``benchmarks``, counting imports inside
    functions, not those for type hints only (a layers contract allows a cycle inside one folder; the old
    ``spec -> properties -> runtime -> spec`` was one). grimp is import-linter's own graph of the package."""
    import grimp

    graph = grimp.build_graph("launcher", "benchmarks", exclude_type_checking_imports=True)
    cycles = sorted(
        f"{a} <-> {b}" for a in graph.modules for b in graph.find_modules_directly_imported_by(a)
        if a < b and graph.chain_exists(importer=b, imported=a))
    assert cycles == []
