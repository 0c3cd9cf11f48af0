"""Shared by the stand-in executables of this directory that replace a tool (Lustre's ``lfs``).

They replace tools whose filesystem cannot run here (Lustre needs kernel modules this machine does not load).
Each one appends its argv to ``$HPC_STANDIN_DIR/calls.jsonl`` and keeps the layouts it was given in
``$HPC_STANDIN_DIR/state.json``, keyed by absolute path, so that the read-back commands answer with what was
set, in the real tool's output format. (OrangeFS is stood in for by a whole FUSE file system,
``orangefs_fuse.py``, against which the real ``setfattr``/``getfattr`` run.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def state_dir() -> Path:
    directory = os.environ.get("HPC_STANDIN_DIR")
    if not directory:
        sys.stderr.write(f"{Path(sys.argv[0]).name} (stand-in): HPC_STANDIN_DIR is not set\n")
        sys.exit(99)
    return Path(directory)


def record(tool: str) -> None:
    with open(state_dir() / "calls.jsonl", "a") as log:
        log.write(json.dumps({"tool": tool, "argv": sys.argv[1:]}) + "\n")


def load() -> dict:
    path = state_dir() / "state.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(state: dict) -> None:
    (state_dir() / "state.json").write_text(json.dumps(state, indent=1, sort_keys=True))
