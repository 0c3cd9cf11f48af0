"""The nbclient run's pure parts (:mod:`launcher.node.notebook_exec`), and that it imports nothing of ``launcher``
(it runs in the kernel's Python, whose path holds only the JupyterLab runtime)."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from types import SimpleNamespace

from launcher.node import notebook_exec
from launcher.render.notebook import KERNEL_NAME, KERNEL_STARTUP_S, execute_script


def test_the_first_error_output_names_its_cell_without_colours() -> None:
    nb = SimpleNamespace(cells=[
        {"cell_type": "markdown", "source": "# title"},
        {"cell_type": "code", "source": "x = 1", "outputs": [{"output_type": "stream", "text": "ok"}]},
        {"cell_type": "code", "source": "1/0", "outputs": [
            {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
             "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]}]},
    ])
    assert notebook_exec.first_error(nb) == {"cell": 3, "ename": "ZeroDivisionError", "evalue": "division by zero",
                                             "traceback": ["ZeroDivisionError: division by zero"], "source": "1/0"}
    assert notebook_exec.first_error(SimpleNamespace(cells=[])) is None


def test_results_are_written_private_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    notebook_exec.write_private(path, "{}\n")
    assert path.read_text() == "{}\n" and path.stat().st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["r.json"]


def test_the_script_imports_nothing_of_launcher_and_agrees_with_render() -> None:
    script = execute_script()
    assert script == Path(notebook_exec.__file__).resolve()
    tree = ast.parse(script.read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.startswith("launcher")], imported
    assert (notebook_exec.KERNEL_NAME, notebook_exec.KERNEL_STARTUP_S) == (KERNEL_NAME, KERNEL_STARTUP_S)
