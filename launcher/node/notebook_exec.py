"""Execute one notebook with nbclient on the master node: ``hpc-hadoop notebook ID --execute NB.ipynb``.

Started by the master's agent (:mod:`launcher.node.agent`) for a request ``notebook/run-<id>.json`` of the cluster
directory, as ``<spark.python> notebook_exec.py REQUEST``, in the environment of the cluster's JupyterLab
(:func:`launcher.render.notebook.environment`): the kernel is ours (``hpc-hadoop``, whose ``spark`` is a SparkSession
on the cluster's YARN). This file imports nothing of ``launcher``: it runs in the kernel's Python, whose path holds only
the JupyterLab runtime and PySpark.

The request (JSON): ``notebook`` (the file to run), ``output`` (where the executed notebook goes: never the input
unless the user asked, which the CLI checked), ``timeout`` (seconds per cell), ``result`` (the result file). The
executed notebook is written whatever happens (with the failing cell's error in its outputs), through a temporary file
renamed into place; then the result, ``{"ok", "cells", "output", "error": {"cell", "ename", "evalue", "traceback"}}``,
likewise (mode 0600). Exit code 0 when every cell ran, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

#: Seconds the kernel may take to start (its SparkSession is a YARN application whose executors must register);
#: :data:`launcher.render.notebook.KERNEL_STARTUP_S`.
KERNEL_STARTUP_S = 300
#: The kernel: :data:`launcher.render.notebook.KERNEL_NAME`.
KERNEL_NAME = "hpc-hadoop"


def write_private(path: Path, text: str) -> None:
    """``text`` into ``path`` through ``<path>.tmp<pid>`` (mode 0600 from its creation), renamed into place."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)


def first_error(nb: Any) -> dict[str, Any] | None:
    """The first ``error`` output of the executed notebook ``nb``: its cell's number (from 1, code cells and others
    counted as the notebook shows them), ``ename``, ``evalue`` and traceback (ANSI colours kept out)."""
    import re

    for number, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                clean = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in output.get("traceback", [])]
                return {"cell": number, "ename": output.get("ename", ""), "evalue": output.get("evalue", ""),
                        "traceback": clean, "source": cell.get("source", "")}
    return None


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Execute ``request["notebook"]`` and write it to ``request["output"]``; returns the result record."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellControlSignal, CellExecutionError

    source, output = Path(request["notebook"]), Path(request["output"])
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=int(request.get("timeout") or 600),
                            startup_timeout=KERNEL_STARTUP_S, resources={"metadata": {"path": str(source.parent)}})
    error: dict[str, Any] | None = None
    try:
        client.execute()
    except CellExecutionError:
        error = first_error(nb)
    except (CellControlSignal, RuntimeError) as exc:  # a cell's time out; a kernel that died or never started
        error = first_error(nb) or {"cell": None, "ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
    write_private(output, nbformat.writes(nb))
    return {"ok": error is None, "cells": len(nb.cells), "output": str(output), "error": error}


def main(argv: list[str]) -> int:
    """Entry point: ``notebook_exec.py REQUEST``."""
    path = Path(argv[1])
    request = json.loads(path.read_text())
    try:
        result = run(request)
    except Exception as exc:  # noqa: BLE001 - any failure is the result the CLI shows (with its traceback)
        result = {"ok": False, "cells": 0, "output": None,
                  "error": {"cell": None, "ename": type(exc).__name__, "evalue": str(exc),
                            "traceback": traceback.format_exc().splitlines()}}
    write_private(Path(request["result"]), json.dumps(result, indent=1) + "\n")
    print(f"notebook_exec: {request['notebook']}: {'ok' if result['ok'] else 'failed'}", file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
