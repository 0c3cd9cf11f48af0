"""The dd baseline (benchmarks/workloads.py) reaches the nodes through the allocation's launcher
(``launcher.fanout``'s ``wrap``): the same code on the local backend, Slurm, Torque, PBS Pro and Grid Engine.

Stand-ins for ``srun`` and ``qrsh`` (written here) and the PBS ones (tests/standins/pbs) record their arguments
and run the command on this machine, so every dd really runs and reports the host it ran on.
"""

from __future__ import annotations

import os
import shlex
import socket
from pathlib import Path

import pytest

from benchmarks import workloads
from benchmarks.workloads import Context, _on_node, dd_pair, drop_page_cache, parallel_dd
from tests.conftest import REPO

PBS_STANDINS = REPO / "tests" / "standins" / "pbs"
DD = ["sh", "-c", 'uname -n && exec "$@"', "sh", "dd", "if=/dev/zero", "of=/pfs/dd-0001", "bs=1M", "count=4"]

#: ``srun [--option=value...] ARGV...``: records ``srun ARGS...``, runs ARGV here.
SRUN = """#!/bin/bash
echo "srun $*" >> "$STANDIN_CALLS"
while [[ $1 == --* ]]; do shift; done
exec "$@"
"""
#: ``qrsh -inherit -nostdin -V HOST WORDS...``: records them, joins the words and runs them with ``sh -c``.
QRSH = """#!/bin/bash
echo "qrsh $*" >> "$STANDIN_CALLS"
shift 4  # -inherit -nostdin -V HOST
exec sh -c "$*"
"""


def test_dd_command_for_each_launcher() -> None:
    quoted = [shlex.quote(w) for w in DD]
    assert _on_node("n2", "local", DD) == DD
    assert _on_node("n2", "srun", DD) == ["srun", "--overlap", "--nodes=1", "--ntasks=1", "--ntasks-per-node=1",
                                          "--nodelist=n2", *DD]
    assert _on_node("n2", "pbsdsh", DD) == ["pbsdsh", "-h", "n2", *DD]
    assert _on_node("n2", "pbs_tmrsh", DD) == ["pbs_tmrsh", "n2", *quoted]
    assert _on_node("n2", "qrsh", DD) == ["qrsh", "-inherit", "-nostdin", "-V", "n2", *quoted]
    assert _on_node("n2", "srun", workloads.DROP_CACHES)[-3:] == ["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"]


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-in ``srun``, ``qrsh``, ``pbsdsh`` and ``pbs_tmrsh`` first on PATH, inside a (stand-in) PBS job;
    returns the directory where they record their calls (``calls`` for srun/qrsh, ``<cmd>.args`` for PBS)."""
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name, script in (("srun", SRUN), ("qrsh", QRSH)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(PBS_STANDINS), os.environ["PATH"]]))
    monkeypatch.setenv("STANDIN_CALLS", str(state / "calls"))
    monkeypatch.setenv("PBS_STANDIN_DIR", str(state))
    monkeypatch.setenv("PBS_JOBID", "1.standin")
    return state


def calls(state: Path, fanout: str) -> list[str]:
    """The recorded calls of ``fanout``'s command, each as its arguments (the PBS stand-ins omit the name)."""
    path = state / (f"{fanout}.args" if fanout.startswith("pbs") else "calls")
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.removeprefix(f"{fanout} ") for line in lines]


def node_of(fanout: str, call: str) -> str:
    """The node a recorded call was for."""
    words = call.split()
    if fanout == "srun":
        return next(w for w in words if w.startswith("--nodelist=")).split("=", 1)[1]
    return {"pbsdsh": words[1], "pbs_tmrsh": words[0], "qrsh": words[3]}[fanout]


@pytest.mark.parametrize("fanout", ["local", "srun", "pbsdsh", "pbs_tmrsh", "qrsh"])
def test_parallel_dd_runs_through_each_launcher(fanout: str, standins: Path, tmp_path: Path) -> None:
    files = [tmp_path / "pfs dir" / f"dd-{i}" for i in range(3)]  # a space in the path: quoting is exercised
    files[0].parent.mkdir()
    write = parallel_dd(files, 1 << 20, ["n1", "n2"], fanout, "write")
    assert [f.stat().st_size for f in files] == [1 << 20] * 3
    read = parallel_dd(files, 1 << 20, ["n1", "n2"], fanout, "read")
    assert write["total_mb"] == read["total_mb"] == 3 and write["hosts"] == read["hosts"] == [socket.gethostname()] * 3
    made = calls(standins, fanout)
    if fanout == "local":
        assert made == []
    else:
        assert sorted(node_of(fanout, c) for c in made) == ["n1"] * 4 + ["n2"] * 2 and all(" dd " in c for c in made)


@pytest.mark.parametrize("fanout", ["srun", "pbsdsh", "pbs_tmrsh", "qrsh"])
def test_page_cache_dropped_on_each_node_through_the_launcher(fanout: str, standins: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workloads, "DROP_CACHES", ["sh", "-c", "echo refused by $0 >&2; exit 1", "stand-in"])
    note = drop_page_cache(["n1", "n2"], fanout)
    assert note == "page cache not dropped: n1: refused by stand-in; n2: refused by stand-in"
    assert [node_of(fanout, c) for c in calls(standins, fanout)] == ["n1", "n2"]  # one after the other
    monkeypatch.setattr(workloads, "DROP_CACHES", ["true"])
    assert drop_page_cache(["n1", "n2"], fanout) is None


def test_dd_pair_uses_the_context_launcher(standins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workloads, "DROP_CACHES", ["sh", "-c", "echo no >&2; exit 1"])
    ctx = Context(work_dir=tmp_path, params={"files": 2, "file_size": 1 << 20}, nodes=["n1", "n2"],
                  scheduler="sge", fanout="qrsh")
    figures = dd_pair(ctx, tmp_path / "dd")
    assert figures["dd_hosts"] == [socket.gethostname()] and figures["cache_dropped"] is False
    assert ctx.notes == ["page cache not dropped: n1: no; n2: no"]
    assert sorted(node_of("qrsh", c) for c in calls(standins, "qrsh")) == ["n1", "n1", "n1", "n2", "n2", "n2"]
