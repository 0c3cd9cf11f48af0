"""The reaper (launcher/node/reaper.py, issue 37 item 7): when a node's agent is killed before it stops its daemons
(Torque's ``qdel`` kills the job's session and tasks), what the node's containers left running in sessions of their
own is ended. Real processes: an "agent" and a "container" in a session of its own whose command line names the
node's log directory, as a YARN container's does (``-Dyarn.app.container.log.dir=<run dir>/logs/<node>/userlogs/...``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

from launcher.node.reaper import left_behind

SLEEPER = "import sys, time; time.sleep(600)"


def sleeper(*words: str, session: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", SLEEPER, *words], start_new_session=session)


def gone(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    try:
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def test_what_a_killed_agent_left_is_ended_and_nothing_else(tmp_path: Path) -> None:
    log_dir = tmp_path / "run" / "logs" / "n2"
    agent = sleeper()
    container = sleeper(f"-Dyarn.app.container.log.dir={log_dir}/userlogs/application_1_0001/container_1_0001_01_01",
                        session=True)
    other_node = sleeper(f"-Dyarn.app.container.log.dir={tmp_path}/run/logs/n20/userlogs/x", session=True)
    reaper = subprocess.Popen([sys.executable, "-m", "launcher.node.reaper", str(agent.pid), str(log_dir)],
                              start_new_session=True, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # the reaper watches; nothing is ended while the agent runs
        assert container.poll() is None and reaper.poll() is None
        # seen from here, the reaper (it names the directory) too; the reaper leaves itself out
        assert {p.pid for p in left_behind(str(log_dir))} == {container.pid, reaper.pid}
        agent.kill()
        agent.wait()
        assert gone(container, 10), "the container the agent left was not ended"
        _, said = reaper.communicate(timeout=10)
        assert reaper.returncode == 0 and "ended 1 process(es)" in said, said
        assert other_node.poll() is None  # another node's (logs/n20) is not this node's (logs/n2)
    finally:
        for proc in (agent, container, other_node, reaper):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not psutil.pid_exists(container.pid) or psutil.Process(container.pid).status() == psutil.STATUS_ZOMBIE
