"""The commands about one cluster (launcher/cli/clusters.py) on a real index of clusters: one rule for a missing
ID (issue 28 item 4: only running clusters count), ``stop`` without an ID asks, ``status`` of a cluster that is over,
completion of the ids, and what ``clean`` deletes and keeps (item 5). No daemons: a running cluster is a local one
whose holder process is alive (as ``hpc-hadoop start`` leaves it); the life cycle on real daemons is in
tests/integration/test_interactive.py."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.lifecycle.clusters.index import index_entries, register
from launcher.lifecycle.clusters.status import status_of
from launcher.lifecycle.report import RunReport
from launcher.util.states import RunState
from tests.conftest import REPO

FINISHED = ("wc-20261101-080000-aaaa", "wc-20261102-080000-bbbb", "ts-20261103-080000-cccc")


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """``make_cluster(cid, running=False)``: a cluster directory with a daemon log and ``run.json``, registered in
    the index (``XDG_STATE_HOME`` of the test); a running one is held by a live process, a finished one is
    ``stopped``."""
    holders: list[subprocess.Popen[bytes]] = []

    def make(cid: str, *, running: bool = False) -> Path:
        run_dir = tmp_path / "pfs" / cid
        (run_dir / "logs" / "n1").mkdir(parents=True)
        (run_dir / "logs" / "n1" / "resourcemanager.log").write_text(f"log of {cid}\n")
        RunReport(cluster_id=cid, run_dir=str(run_dir), scheduler="local", nodes=["n1"], bringup_s=2.0, hold=True,
                  state=RunState.RUNNING if running else RunState.STOPPED, rm_web="http://10.0.0.1:11268",
                  jhs_web="http://10.0.0.1:11274").write(run_dir / "run.json")
        holder = None
        if running:
            holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
            holders.append(holder)
        register(cid, run_dir, "local", holder_pid=holder.pid if holder else None, interactive=True)
        return run_dir

    yield make
    for holder in holders:
        holder.kill()
        holder.wait()


def _states() -> dict[str, str]:
    return {e.cluster_id: status_of(e).state for e in index_entries()}


def test_logs_without_an_id_counts_only_running_clusters(make_cluster: Callable[..., Path]) -> None:
    """``logs`` said "N clusters are running" counting finished ones; now finished ones never count."""
    for cid in FINISHED:
        make_cluster(cid)
    result = CliRunner().invoke(main, ["logs"])
    assert result.exit_code == 2
    assert result.output == "error: ID: no running cluster (3 finished) (fix: give an ID: hpc-hadoop list)\n"
    make_cluster("live-20261127-100000-dddd", running=True)
    result = CliRunner().invoke(main, ["logs"])
    assert result.exit_code == 0, result.output
    assert "cluster live-20261127-100000-dddd (ready: the only one running)" in result.stderr
    assert "log of live-20261127-100000-dddd" in result.stdout and "log of wc-" not in result.stdout
    result = CliRunner().invoke(main, ["logs", FINISHED[0]])  # a finished one by its ID, as before
    assert result.exit_code == 0 and f"log of {FINISHED[0]}" in result.stdout


@pytest.mark.parametrize("command", [["status"], ["env"], ["logs"], ["stop", "--yes"], ["exec", "--", "true"]])
def test_every_command_has_the_same_rule_for_a_missing_id(make_cluster: Callable[..., Path],
                                                          command: list[str]) -> None:
    make_cluster(FINISHED[0])
    make_cluster("a-20261127-100000-aaaa", running=True)
    make_cluster("b-20261127-100001-bbbb", running=True)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2
    assert result.output == ("error: ID: 2 clusters are running: a-20261127-100000-aaaa, b-20261127-100001-bbbb "
                             "(fix: give an ID: hpc-hadoop list)\n")


def test_stop_without_an_id_and_without_a_terminal_refuses_unless_yes(make_cluster: Callable[..., Path]) -> None:
    """``stop`` used to tear the one running cluster down without a word; a script must name it or say --yes."""
    make_cluster(FINISHED[0])
    make_cluster("live-20261127-100000-dddd", running=True)
    result = CliRunner().invoke(main, ["stop"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "error: ID: no ID given, and no terminal to ask whether to stop live-20261127-100000-dddd (ready) "
        "(fix: hpc-hadoop stop live-20261127-100000-dddd, or hpc-hadoop stop --yes)")
    assert _states()["live-20261127-100000-dddd"] == "ready"
    # --yes stops it (the holder here is a plain process that never tears down: cut short by --timeout)
    result = CliRunner().invoke(main, ["stop", "--yes", "--timeout", "1"])
    assert result.exit_code == 0, result.output
    assert "stopping cluster live-20261127-100000-dddd (ready)" in result.stdout
    assert _states()["live-20261127-100000-dddd"] == "lost"


def test_stop_without_an_id_asks_on_a_terminal(make_cluster: Callable[..., Path]) -> None:
    make_cluster("live-20261127-100000-dddd", running=True)
    primary, secondary = pty.openpty()
    try:
        os.write(primary, b"n\n")
        proc = subprocess.run([sys.executable, "-m", "launcher.cli", "stop"], stdin=secondary, capture_output=True,
                              text=True, cwd=REPO, timeout=120, check=False)
    finally:
        os.close(secondary)
        os.close(primary)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "stop cluster live-20261127-100000-dddd (ready, 1 node(s))? [y/N]: nothing stopped\n"
    assert _states()["live-20261127-100000-dddd"] == "ready"


def test_status_of_a_stopped_cluster_shows_no_dead_addresses(make_cluster: Callable[..., Path]) -> None:
    run_dir = make_cluster(FINISHED[0])
    result = CliRunner().invoke(main, ["status", FINISHED[0]])
    assert result.exit_code == 0, result.output
    assert "http://" not in result.output and "ResourceManager" not in result.output
    assert f"logs:            {run_dir}/logs (hpc-hadoop logs {FINISHED[0]})" in result.output
    assert f"job history:     {run_dir}/history" in result.output


@pytest.mark.parametrize(("state", "error"), [
    ("cancelled", "stopped by SIGTERM"),    # qdel, scancel, kill of a running cluster (issue 37 item 8)
    ("interrupted", "stopped by SIGINT"),   # Ctrl-C; also an older release's run.json for a SIGTERM
    ("stopped", ""), ("timed_out", "walltime nearly over")])
def test_list_and_status_show_the_word_run_json_records(tmp_path: Path, state: str, error: str) -> None:
    """Issue 37 item 8: one word per way a run ends: ``list`` (text and ``--json``) and ``status`` (text and
    ``--json``) show ``run.json``'s ``state``, ``cancelled`` for a SIGTERM too (was not a state a run could
    record)."""
    import json

    cid = "q-20261127-100000-eeee"
    run_dir = tmp_path / "pfs" / cid
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"cluster_id": cid, "run_dir": str(run_dir), "scheduler": "pbs",
                                                  "job_id": "10.pbshost", "state": state, "error": error,
                                                  "bringup_s": 2.0, "nodes": ["n1"]}))
    register(cid, run_dir, "pbs", "10.pbshost")
    listed = CliRunner().invoke(main, ["list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["state"] == state
    table = CliRunner().invoke(main, ["list"])
    assert table.exit_code == 0 and table.output.split("\n")[1].split()[2] == state, table.output
    shown = CliRunner().invoke(main, ["status", "--json", cid])
    assert shown.exit_code == 0 and json.loads(shown.output)["state"] == state, shown.output
    text = CliRunner().invoke(main, ["status", cid])
    assert text.exit_code == 0 and text.output.split("\n")[1].split() == ["state:", state], text.output


def _complete(words: str) -> list[str]:
    """What bash completion offers for the last word of ``words`` (Click's ``bash_complete`` protocol)."""
    env = {**os.environ, "_HPC_HADOOP_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    out = subprocess.run([sys.executable, "-c", "from launcher.cli.main import main; main(prog_name='hpc-hadoop')"],
                         capture_output=True, text=True, env=env, cwd=REPO, check=True)
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line]


def test_shell_completion_offers_cluster_ids(make_cluster: Callable[..., Path]) -> None:
    for cid in FINISHED:
        make_cluster(cid)
    assert _complete("hpc-hadoop logs wc-") == ["wc-20261102-080000-bbbb", "wc-20261101-080000-aaaa"]
    assert _complete("hpc-hadoop status ") == [*reversed(FINISHED)]
    for command in ("env", "stop", "clean", "exec"):
        assert _complete(f"hpc-hadoop {command} ts") == ["ts-20261103-080000-cccc"], command
    assert _complete("hpc-hadoop exec ts-20261103-080000-cccc -- ya") == []


def test_clean_lists_what_it_deletes_and_keeps_output_unless_all(make_cluster: Callable[..., Path]) -> None:
    """Issue 28 item 5: ``clean`` deleted whole cluster directories, results in ``output/`` included."""
    kept_dir, all_dir = make_cluster(FINISHED[0]), make_cluster(FINISHED[1])
    for run_dir in (kept_dir, all_dir):
        (run_dir / "output" / "wordcount").mkdir(parents=True)
        (run_dir / "output" / "wordcount" / "part-r-00000").write_bytes(b"x" * 2048)
    result = CliRunner().invoke(main, ["clean", FINISHED[0]], input="n\n")
    assert result.exit_code == 1 and "nothing deleted" in result.output and (kept_dir / "run.json").exists()
    lines = result.output.splitlines()
    assert lines[0].startswith(f"  {FINISHED[0]}") and f"{kept_dir}: delete all but output/ (" in lines[0]
    assert lines[0].endswith(f"; keep {kept_dir}/output (2 KiB)")
    assert lines[1].startswith("this cluster directory: delete ") and lines[1].endswith(
        "; keep 1 output/ (2 KiB; --all deletes them too)")
    assert lines[2] == "delete this cluster directory but output/? [y/N]: n"

    result = CliRunner().invoke(main, ["clean", "--yes", FINISHED[0]])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "cleaned 1 directory; kept 1 output/"
    assert sorted(p.name for p in kept_dir.iterdir()) == ["output"]
    assert (kept_dir / "output" / "wordcount" / "part-r-00000").stat().st_size == 2048
    assert FINISHED[0] not in [e.cluster_id for e in index_entries()]

    result = CliRunner().invoke(main, ["clean", "--yes", "--all", FINISHED[1]])
    assert result.exit_code == 0, result.output
    assert f"{all_dir}: delete all (" in result.output and "keep" not in result.output
    assert not all_dir.exists()


def test_ui_refuses_a_bad_base_url_or_password_file_in_one_line(tmp_path: Path) -> None:
    """Issue 40 item 2: ``ui``'s Open OnDemand options, checked before any cluster is looked up (exit 2, one line
    naming the option and the fix); a password file readable by others is never read."""
    loose = tmp_path / "pw"
    loose.write_text("a-long-enough-password\n")
    loose.chmod(0o644)
    for args, words in ((["--base-url", "/rnode/n1//9/"], "--base-url"),
                        (["--password-file", str(loose)], "chmod 600"),
                        (["--password-file", str(tmp_path / "none")], "does not exist"),
                        (["--bind", "no-such-host.invalid"], "does not resolve")):
        result = CliRunner().invoke(main, ["ui", *args])
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output and "Traceback" not in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output


def test_ui_while_up_stops_the_proxy_once_the_cluster_is_not_up(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``ui --while-up``: the proxy serves while the cluster's state is up and stops at the first look that finds it
    not up (here: stopping), or not found any more."""
    import types

    from launcher.cli import clusters
    from launcher.cli.webproxy import WebProxy
    from launcher.util.errors import UserError
    from launcher.util.states import ClusterState

    monkeypatch.setattr(clusters, "UI_WATCH_S", 0.05)
    for answers, said in (([ClusterState.READY, ClusterState.READY, ClusterState.STOPPING], "is stopping"),
                          ([ClusterState.READY, None, None, None, None], "is not found")):
        looks = iter(answers)

        def look(cluster: str, *, announce: bool, looks: Iterator[ClusterState | None] = looks) -> object:
            state = next(looks, ClusterState.STOPPED)
            if state is None:
                raise UserError(f"no cluster {cluster!r}")
            return types.SimpleNamespace(state=state)

        monkeypatch.setattr(clusters, "find_cluster", look)
        proxy = WebProxy({}, "127.0.0.1:1")
        clusters._serve_while_up(proxy, "c1")
        proxy.serve_forever()  # returns once the watch stopped it
        proxy.close()
        assert f"cluster c1 {said}" in capsys.readouterr().out
        assert next(looks, "none left") == "none left"  # every answer was looked at: not stopped early
