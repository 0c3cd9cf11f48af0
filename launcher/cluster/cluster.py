"""Cluster life cycle: start the agents, wait until every NodeManager is RUNNING, stop, check nothing is left.

Readiness is active: the ResourceManager's REST API (``/ws/v1/cluster/nodes``) and the JobHistoryServer's
(``/ws/v1/history/info``) are polled every 0.2 s by :func:`launcher.util.polling.poll` (Magpie sleeps a fixed 30 s and
polls every 30 s). A daemon that dies during bring-up is noticed at once through ``agents/<node>.json`` and
reported with its log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

from launcher.cluster.events import BringUpEvents
from launcher.cluster.watch import FilesystemWatch
from launcher.fanout import AgentGroup, get_launcher
from launcher.plan.cluster_plan import ClusterPlan
from launcher.plan.daemon_sockets import bound_addresses
from launcher.render.clients import bin_dir
from launcher.render.config import EXCLUDE_FILE
from launcher.security.webauth import web_auth
from launcher.util.errors import ClusterError
from launcher.util.polling import poll
from launcher.util.processes import end
from launcher.util.records import LOSABLE, AgentRecord
from launcher.util.sockets import user_name

POLL_SECONDS = 0.2
#: Seconds the copy of the job history out of HDFS may take at teardown (``hdfs`` mode).
HISTORY_COPY_TIMEOUT = 120.0
#: Seconds teardown waits for the JobHistoryServer to list every finished MapReduce job (``hdfs`` mode).
HISTORY_WAIT_SECONDS = 20.0


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    interesting = [line for line in text if " ERROR " in line or "Exception" in line or "FATAL" in line]
    return " | ".join((interesting or text)[-lines:])


def agent_argv(plan: ClusterPlan, *extra: str) -> list[str]:
    """``python -m launcher.node.agent RUN_DIR [extra...]`` with this interpreter."""
    return [sys.executable, "-m", "launcher.node.agent", plan.run_dir, *extra]


def agent_group(plan: ClusterPlan, fanout: str | None = None) -> AgentGroup:
    """The agents of ``plan`` (:func:`agent_argv` on each of its nodes, master first), started through the
    launcher ``fanout`` (default: the one the plan names, from its allocation, run as the plan's
    ``fanout_program`` when it has one: the absolute path written at submission).

    Raises:
        UserError: unknown launcher name.
    """
    launcher = get_launcher(fanout) if fanout else get_launcher(plan.fanout, program=plan.fanout_program)
    return AgentGroup(launcher, plan.run_dir, [n.name for n in plan.nodes], agent_argv(plan),
                      cores=plan.cores_per_node)


class Cluster:
    """A Hadoop cluster of one plan.

    Args:
        plan: the cluster plan (``plan.json`` and ``conf/`` must already be written).
        fanout: the agents' processes; default: :func:`agent_group` of the plan (its own launcher).

    Attributes:
        watch: reads ``agents/`` (``"states"``) on a thread of its own from :meth:`start` to :meth:`stop`, so that
            the health checks never wait on a stalled filesystem (:mod:`launcher.cluster.watch`); a caller may add
            reads.
    """

    def __init__(self, plan: ClusterPlan, fanout: AgentGroup | None = None) -> None:
        self.plan = plan
        self.fanout = fanout or agent_group(plan)
        self.auth = web_auth(plan)  # the owner's signed hadoop.auth under Kerberos, to the owner's daemons only
        self.http = httpx.Client(trust_env=False, auth=self.auth, timeout=2.0)
        self.started_at: float | None = None
        self.watch = FilesystemWatch()
        self.watch.add("states", plan.path("agents"), self.agent_states)

    # -- state of the agents ---------------------------------------------------------------
    def agent_states(self) -> dict[str, AgentRecord]:
        """``agents/<node>.json`` of every node that has written one (:class:`AgentRecord`; one that cannot be
        read or is not such a record is left out)."""
        states = {}
        for path in self.plan.path("agents").glob("*.json"):
            record = AgentRecord.read_or_none(path)
            if record is not None:
                states[path.stem] = record
        return states

    def watched_states(self) -> dict[str, AgentRecord]:
        """The agents' states as :attr:`watch` last read them (empty before its first answer, or when that read
        failed); never touches the filesystem."""
        answer = self.watch.get("states", {})
        return answer if isinstance(answer, dict) else {}

    def states(self) -> dict[str, AgentRecord]:
        """The agents' states as :attr:`watch` last read them while it runs (never waits on the filesystem;
        empty before its first answer), else :meth:`agent_states` read now. The agents' pids in them are
        remembered (:meth:`launcher.fanout.AgentGroup.remember`) for a teardown that must not read the files."""
        states = self.agent_states() if not self.watch.running else self.watched_states()
        self.fanout.remember({node: state.pid for node, state in states.items()})
        return states

    def listening(self) -> list[dict[str, Any]]:
        """Every TCP port the cluster's processes were seen listening on, from ``agents/<node>.json``
        (:mod:`launcher.node.listeners`): ``[{"node", "process", "address", "port"}]``, sorted by node and port. Where
        ``agents/`` cannot be read (the filesystem is gone), from the states :attr:`watch` last read."""
        try:
            states = self.agent_states()
        except OSError:
            states = self.watched_states()
        found = [{"node": node, **entry.model_dump()} for node, state in states.items() for entry in state.listening]
        return sorted(found, key=lambda e: (e["node"], e["port"], e["process"], e["address"]))

    def lost_nodes(self, states: dict[str, AgentRecord] | None = None) -> dict[str, dict[str, Any]]:
        """Nodes that lost their NodeManager while a step ran and that YARN can do without: nothing but a NodeManager
        failed there (:data:`~launcher.util.records.LOSABLE`); on the master (``nodemanager_on_master``) its agent
        keeps the ResourceManager and the JobHistoryServer running. ``{node: {"daemon", "exit", "at"}}`` (``at``:
        epoch seconds when its agent saw it exit). ``states``: :meth:`agent_states` when already read."""
        lost = {}
        for node, state in (self.states() if states is None else states).items():
            failed = state.failed
            if failed and set(failed) <= LOSABLE:
                daemon = next(iter(failed))
                at = state.failed_at.get(daemon)
                lost[node] = {"daemon": daemon, "exit": failed[daemon], "at": at}
        return lost

    def decommission(self, nodes: list[str]) -> subprocess.Popen[bytes] | None:
        """Take lost ``nodes`` out of YARN at once: their addresses go into ``conf/nodes.exclude``
        (``yarn.resourcemanager.nodes.exclude-path``) and ``bin/yarn rmadmin -refreshNodes`` (the cluster's own
        wrapper; the owner is the YARN admin) makes the ResourceManager decommission them, so the
        ApplicationMasters re-run their work now rather than after ``yarn.nm.liveness-monitor.expiry-interval-ms``
        (a reducer that fails to fetch from a dead node uses up its attempts within seconds). Returns the
        ``rmadmin`` process (not waited for; output in ``logs/decommission.out``), or ``None`` when nothing is new.
        """
        bound = bound_addresses(self.plan)  # under interface:, the addresses the NodeManagers registered from
        addresses = [bound[n.name] for n in self.plan.nodes if n.name in nodes]
        exclude = self.plan.conf_dir / EXCLUDE_FILE
        known = set(exclude.read_text().split()) if exclude.exists() else set()
        if set(addresses) <= known:
            return None
        exclude.write_text("".join(f"{a}\n" for a in sorted(known | set(addresses))))
        with open(self.plan.path("logs", "decommission.out"), "ab") as out:
            return subprocess.Popen([str(bin_dir(self.plan) / "yarn"), "rmadmin", "-refreshNodes"], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def raise_if_failed(self, when: str = "during bring-up", *,
                        tolerate_lost: bool = False) -> dict[str, dict[str, Any]]:
        """Raise if a daemon exited or the agents are gone.

        Args:
            tolerate_lost: while a step runs: a lost NodeManager (:meth:`lost_nodes`, the master's too) is not an
                error as long as another NodeManager runs; YARN re-runs the lost node's tasks once the
                ResourceManager declares it lost (at once: :meth:`decommission`). The master's agent must still run
                (its ResourceManager); a lost worker's has stopped.

        Returns:
            The tolerated lost nodes (:meth:`lost_nodes`; empty without ``tolerate_lost``).

        Raises:
            ClusterError: names the daemon, its node and its log (with the log's last lines); a daemon its agent did
                not start, with the agent's reason (``nm_note``: a NodeManager local dir refused as not the user's);
                or says every NodeManager is lost.
        """
        states = self.states()
        lost = self.lost_nodes(states) if tolerate_lost else {}
        if lost and len(lost) >= len(self.plan.nodemanagers):
            raise ClusterError(f"every NodeManager is lost {when} ({', '.join(sorted(lost))}); read "
                               "logs/<host>/nodemanager.log")
        for node, state in states.items():
            if node in lost:
                continue
            for daemon, rc in state.failed.items():
                record = state.daemons.get(daemon)
                if record is None:  # never started: its agent refused what it needed (a directory not the user's)
                    why = (state.nm_note if daemon == "nodemanager" else None) or state.stop_reason or f"exit code {rc}"
                    raise ClusterError(f"{daemon} on {node} was not started {when}: {why}")
                held = "".join(f"; port {port} on {node} is held by another user's process ({user_name(uid)})"
                               for port, uid in sorted(state.foreign_ports.items()))
                raise ClusterError(f"{daemon} on {node} exited with code {rc} {when}{held}; read {record.log}"
                                   f" ({_tail(Path(record.log)) or _tail(Path(record.out))})")
        if not self.fanout.running(ignore=set(lost) - {self.plan.master.name}):
            log = self.fanout.log_file
            agents = sorted(self.plan.path("logs").glob("agent-*.out"))
            tail = _tail(log) or next((f"{p.name}: {_tail(p)}" for p in agents if _tail(p)), "")
            raise ClusterError(f"the agents stopped {when}; read {log} and logs/agent-<node>.out ({tail})")
        return lost

    def raise_if_foreign(self) -> None:
        """Raise if another user's process holds the port of a web server the launcher asked (its request went
        without the owner's cookie: :attr:`auth`'s refusals), so that bring-up ends in one line instead of waiting for
        a daemon that cannot bind.

        Raises:
            ClusterError: names the daemon, its address and port, and the holder's uid and user name.
        """
        for endpoint, verdict in self.auth.foreign() if self.auth is not None else []:
            raise ClusterError(f"{endpoint} is not this cluster's daemon: {verdict.why}; no credential was sent "
                               "there. Start again (a new cluster takes another port block) or ask that user "
                               "to free the port")

    # -- REST ------------------------------------------------------------------------------
    def rm_nodemanagers(self) -> list[str] | None:
        """Node ids (``host:port``) the ResourceManager reports RUNNING; ``None`` while it does not answer."""
        try:
            response = self.http.get(f"{self.plan.rm_web}/ws/v1/cluster/nodes", params={"states": "RUNNING"})
            if response.status_code != 200:
                return None
            nodes = (response.json().get("nodes") or {}).get("node") or []
        except (httpx.HTTPError, ValueError):
            return None
        return [n["id"] for n in nodes]

    def history_up(self) -> bool:
        """True when the JobHistoryServer answers."""
        try:
            return self.http.get(f"{self.plan.jhs_web}/ws/v1/history/info").status_code == 200
        except httpx.HTTPError:
            return False

    def histories_pending(self) -> set[str] | None:
        """Job ids of MapReduce applications the ResourceManager reports FINISHED that the JobHistoryServer
        does not list yet (``/ws/v1/cluster/apps``, ``/ws/v1/history/mapreduce/jobs``); ``None`` if either
        does not answer. A job client returns once the ApplicationMaster reports the job done, which can be
        before the AM has written the job's history: this tells when it has. Killed and failed applications
        (RM states KILLED, FAILED) may leave no history and are not waited for."""
        try:
            apps = self.http.get(f"{self.plan.rm_web}/ws/v1/cluster/apps",
                                 params={"applicationTypes": "MAPREDUCE", "states": "FINISHED"})
            jobs = self.http.get(f"{self.plan.jhs_web}/ws/v1/history/mapreduce/jobs")
            if apps.status_code != 200 or jobs.status_code != 200:
                return None
            finished = {a["id"].replace("application_", "job_", 1)
                        for a in (apps.json().get("apps") or {}).get("app") or []}
            listed = {j["id"] for j in (jobs.json().get("jobs") or {}).get("job") or []}
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None
        return finished - listed

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start the agents on every node and :attr:`watch` (returns at once)."""
        self.started_at = time.time()
        self.fanout.start()
        self.watch.start()

    def wait_ready(self, timeout: float = 180.0, check: Callable[[], None] | None = None,
                   tell: Callable[[str], None] | None = None) -> float:
        """Wait until every planned NodeManager is RUNNING and the JobHistoryServer answers.

        Args:
            check: called at every poll (every :data:`POLL_SECONDS`); what it raises ends the wait (the run's
                ``hpc-hadoop stop`` check).
            tell: called with each bring-up event's line once, as it is seen (:class:`BringUpEvents`: a daemon
                started, the ResourceManager up, a NodeManager registered, the JobHistoryServer up).

        Returns:
            Seconds since :meth:`start`.

        Raises:
            ClusterError: a daemon died, the agents stopped, or ``timeout`` seconds passed; names the log.
        """
        expected = len(self.plan.nodemanagers)
        assert self.started_at is not None, "start() first"

        events = BringUpEvents(self.plan)

        def probe() -> tuple[int, bool]:  # (NodeManagers RUNNING, JobHistoryServer answers); raises if one died
            self.raise_if_failed()
            if check is not None:
                check()
            nodemanagers = self.rm_nodemanagers()
            self.raise_if_foreign()
            running = len(nodemanagers or [])
            up = running >= expected and self.history_up()
            if tell is not None:
                for line in events.started(self.states()) + events.answered(nodemanagers, up):
                    tell(line)
            return running, up

        polled = poll(probe, done=lambda value: value[1], interval=POLL_SECONDS, backoff=1.0, timeout=timeout)
        if polled.done:
            return time.time() - self.started_at
        master_log = Path(self.plan.master.log_dir) / "resourcemanager.log"
        raise ClusterError(f"{polled.value[0]} of {expected} NodeManagers RUNNING after {timeout:.0f} s; read "
                           f"{master_log} and logs/<host>/nodemanager.log ({_tail(master_log)})")

    def stop(self) -> float:
        """Stop every daemon on every node and check no process of this cluster is left.

        Returns:
            Seconds the teardown took.
        """
        began = time.time()
        if not self.plan.hdfs.history_in_cluster_dir:
            self.keep_hdfs_history()
        self.fanout.stop()
        end(self.leftover_processes(), signum=None, kill_wait=5)
        self.http.close()
        self.watch.close()
        return time.time() - began

    def keep_hdfs_history(self) -> bool:
        """``hdfs`` mode: copy the job history out of HDFS into ``history/`` of the cluster directory, so that
        it stays readable as files after teardown like in the other modes (there the JobHistoryServer's done
        dirs must be on the default filesystem, HDFS: "Wrong FS" otherwise). Called before the daemons stop.

        First waits (at most :data:`HISTORY_WAIT_SECONDS`) until the JobHistoryServer lists every finished
        job (:meth:`histories_pending`), then one ``bin/hadoop fs -copyToLocal`` (the cluster's own wrapper,
        :mod:`launcher.render.clients`) of ``hdfs://<namenode>/<cluster dir>/history/*``, IPC retries off so that a
        NameNode that is already gone fails at once; at most :data:`HISTORY_COPY_TIMEOUT` seconds. Its output
        goes to ``logs/history-copy.out``. Never raises: teardown goes on whatever happens.

        Returns:
            True when the copy succeeded.
        """
        poll(self.histories_pending, done=lambda pending: not pending, interval=POLL_SECONDS, backoff=1.0,
             timeout=HISTORY_WAIT_SECONDS)
        run = self.plan.run_dir
        argv = [str(bin_dir(self.plan) / "hadoop"), "fs", "-Dipc.client.connect.max.retries=0",
                "-Dipc.client.connect.max.retries.on.timeouts=0", "-copyToLocal",
                self.plan.fs_uri(f"{run}/history/*"), f"{run}/history/"]
        out = self.plan.path("logs", "history-copy.out")
        try:
            with open(out, "ab") as log:
                code = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      timeout=HISTORY_COPY_TIMEOUT, check=False).returncode
        except (OSError, subprocess.TimeoutExpired) as exc:
            try:
                with open(out, "a") as log:
                    log.write(f"hpc-hadoop: copying the job history out of HDFS failed: {exc}\n")
            except OSError:  # the cluster directory's filesystem is gone
                pass
            return False
        return code == 0

    def leftover_processes(self) -> list[psutil.Process]:
        """Processes on this machine whose command line names this cluster's directory."""
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            try:
                if proc.pid != os.getpid() and any(self.plan.run_dir in part for part in proc.info["cmdline"] or ()):
                    found.append(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return found
