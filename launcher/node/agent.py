"""The per-node agent: starts this node's Hadoop daemons, supervises them, stops them.

Run on every node by the fan-out launcher (``srun``, ``pbsdsh``, ``qrsh`` or a local process)::

    python -m launcher.node.agent RUN_DIR [--node NAME] [--watch-pid PID]

It reads ``plan.json`` from the cluster directory, finds its node (``--node``, ``$HPC_HADOOP_NODE``,
``$SLURMD_NODENAME``, else the hostname), starts the daemons of that node's roles and stays in the
foreground, so the batch system tracks and kills everything it started. It becomes a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``), so containers that the NodeManager started in sessions of their own
still end up as its children and are killed at the end. SIGTERM, SIGINT, SIGHUP and SIGUSR1 stop the
node: SIGTERM to every daemon, SIGKILL after the grace period, then SIGKILL to every process left; the whole stop
takes at most :data:`STOP_BUDGET_SECONDS`, whatever a daemon writing its class-data-sharing archive at exit needs (an
archive not written by then is dropped), and a second signal during the stop cuts it short (SIGKILL now).

A daemon that dies while it maps a class-data-sharing archive the JDK no longer maps (a file cut short: every JVM
mapping it dies with SIGSEGV, issue 25) gets that archive set aside (:func:`launcher.runtime.cds.set_aside`) and is
started again without it, once; ``archive_notes`` in the state file says so, and the run report repeats it.

The daemons run from a node-local working directory (:attr:`launcher.plan.cluster_plan.NodePlan.work_dir`: a copy of
``conf/`` and the JVMs' temporary files), which the agent makes private to the user at start and deletes at
the end; when it cannot be made, the daemons use the cluster directory and the status file says why. Under Kerberos
(``security: per-cluster`` or ``site``) it also holds ``krb/`` (0700): the keytab the daemons log in from and their
cookie secrets (0600 from their creation), opened from the node's sealed file on the shared filesystem
(:func:`launcher.security.keytabs.open_node_keys`), which they find by ``-Dhpc.node.krb`` and ``-Dhpc.http.secret``;
without a working directory they have no keys (they are never on the shared filesystem in the clear), and the note
says so.

State goes to ``agents/<node>.json`` (``starting``, ``running``, ``stopping``, ``stopped``, ``failed``)
with each daemon's pid, exit code and log file. Exit code 0 when stopped on request, 1 when a daemon died.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from launcher.node.listeners import Listener, of_descendants
from launcher.plan.cluster_plan import LOCAL_DIR_MIN_FREE, ClusterPlan, NodePlan
from launcher.render.daemons import (
    DaemonCommand,
    daemon_command,
    datanode_dir,
    format_command,
    needs_format,
    work_paths,
)
from launcher.runtime.cds import CDS_FLAG_PREFIXES, jar_entries, maps, publish, set_aside
from launcher.security.keytabs import open_node_keys
from launcher.util.errors import UserError
from launcher.util.files import replace_private
from launcher.util.network import interface_address
from launcher.util.polling import poll
from launcher.util.processes import end
from launcher.util.records import LOSABLE, AgentRecord, DaemonRecord, ListeningRecord
from launcher.util.safedirs import PRIVATE_UMASK, make_private_dir
from launcher.util.sealed import SealError
from launcher.util.sockets import listeners
from launcher.util.states import AgentState

#: Seconds ``NameNode -format`` may take (hdfs mode).
FORMAT_TIMEOUT = 300.0
#: Seconds the NameNode may take to accept RPC connections before the JobHistoryServer starts anyway.
NAMENODE_TIMEOUT = 180.0
#: Seconds between SIGTERM and SIGKILL for daemons (the NodeManager stops its containers in that time).
GRACE_SECONDS = 8.0
#: Extra seconds for a daemon that writes its class-data-sharing archive at exit (first run only; measured
#: 2-7 s for a 40-65 MB archive on 2 busy cores), within :data:`STOP_BUDGET_SECONDS`.
DUMP_GRACE_SECONDS = 12.0
#: Seconds the agent's whole stop may take (every daemon's grace, the archives written at exit, the wait for the other
#: nodes): then every daemon left is SIGKILLed, its archive dropped, the node-local directory removed. Below the
#: launcher's stop timeout (45 s, :meth:`launcher.fanout.processes.AgentGroup.stop`), which SIGKILLs the agent itself
#: (issue 25: the agent killed at 45 s while its daemons wrote archives, its node-local directory left behind).
STOP_BUDGET_SECONDS = 30.0
POLL_SECONDS = 0.2
#: How often the agent reads the listening sockets of its daemons and containers (:mod:`launcher.node.listeners`):
#: a task's ports live as long as the task (seconds), so this is a sample, and the run report says so.
LISTEN_SAMPLE_SECONDS = 1.0
#: Daemons stopped after every other one, and after the other nodes' agents: the NodeManagers unregister from
#: the ResourceManager as they stop (DataNodes report to the NameNode).
STOPPED_LAST = ("resourcemanager", "namenode")
#: Seconds the master's agent waits for the other nodes' agents to stop before it stops the ResourceManager.
PEER_WAIT_SECONDS = GRACE_SECONDS
PR_SET_CHILD_SUBREAPER = 36
#: Seconds an agent that has stopped its daemons waits for its last state to be written before it exits (a
#: stalled filesystem must not keep it: the launcher's teardown waits for the agents).
STATUS_FLUSH_SECONDS = 30.0


class StatusWriter:
    """Writes an agent's state file on a daemon thread: the latest text only, atomically (a temporary file, then
    ``os.replace``). On a stalled filesystem the write waits there, not in the agent's loop, which goes on
    supervising and, when asked, stopping the daemons (:mod:`launcher.cluster.watch`).

    Args:
        path: ``agents/<node>.json``.
        node: the node's name (for the error line on stderr).
    """

    def __init__(self, path: Path, node: str) -> None:
        self.path = path
        self.node = node
        self._pending: str | None = None
        self._written = 0  # how many texts were put and then written (or failed)
        self._put = 0
        self._cond = threading.Condition()
        threading.Thread(target=self._loop, name="status-writer", daemon=True).start()

    def put(self, text: str) -> None:
        """Write ``text`` soon, instead of any text still waiting (returns at once)."""
        with self._cond:
            self._pending = text
            self._put += 1
            self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until the last text put is written (at most ``timeout`` seconds); True if it was."""
        with self._cond:
            target = self._put
            return self._cond.wait_for(lambda: self._written >= target, timeout=timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending is not None)
                text, self._pending, count = self._pending, None, self._put
            try:  # mode 0600 from its creation (replace_private), whatever the umask
                replace_private(self.path, text or "", tmp=self.path.with_suffix(f".tmp{os.getpid()}"))
            except OSError as err:  # a full or failing filesystem must not stop the agent from stopping its daemons
                say(f"agent {self.node}: cannot write {self.path}: {err}")
            with self._cond:
                self._written = count
                self._cond.notify_all()


def say(text: str) -> None:
    """One line on stderr: the agents' log (``logs/fanout-*.log`` or ``logs/agent-<node>.out``), in the cluster
    directory. Where that cannot be written (the filesystem is gone: ``ENOTCONN``), the line is lost and the agent
    goes on stopping its daemons."""
    try:
        print(text, file=sys.stderr, flush=True)
    except OSError:
        pass


def become_subreaper() -> bool:
    """Make orphaned descendants (containers started with ``setsid``) re-parent to this process."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def find_node(plan: ClusterPlan, name: str | None) -> NodePlan:
    """This node's plan: by ``name``, ``$HPC_HADOOP_NODE``, ``$SLURMD_NODENAME``, the hostname.

    Raises:
        KeyError: no node of the plan matches.
    """
    if len(plan.nodes) == 1 and not name:
        return plan.nodes[0]
    candidates = [name, os.environ.get("HPC_HADOOP_NODE"), os.environ.get("SLURMD_NODENAME"),
                  socket.gethostname(), socket.gethostname().split(".")[0]]
    for candidate in candidates:
        if candidate and any(n.name == candidate for n in plan.nodes):
            return plan.node(candidate)
    raise KeyError(f"this host ({socket.gethostname()}) is not a node of cluster {plan.cluster_id}")


class Agent:
    """Supervises the daemons of one node (see module docstring)."""

    def __init__(self, plan: ClusterPlan, node: NodePlan, watch_pid: int | None = None) -> None:
        self.plan = plan
        self.node = node
        self.watch_pid = watch_pid
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.commands: dict[str, DaemonCommand] = {}
        self.stop_reason: str | None = None
        self.status_file = plan.path("agents", f"{node.name}.json")
        self.status = StatusWriter(self.status_file, node.name)
        self.state = AgentState.STARTING
        self.failed: dict[str, int] = {}
        self.failed_at: dict[str, float] = {}
        self.work_dir: Path | None = None
        self.work_note: str | None = None
        self.nm_local_dir = node.nm_local_dir
        self.nm_note: str | None = None
        self.listening: set[Listener] = set()
        self.foreign_ports: dict[str, int] = {}
        self.address: str | None = None  # under interface:, where the daemons bind (start)
        self._sampled = 0.0
        self.archive_notes: list[str] = []
        self.restarted: set[str] = set()
        self.killed: set[str] = set()  # daemons SIGKILLed at the end of their grace (:meth:`terminate`)
        self.reaper: subprocess.Popen[bytes] | None = None  # :func:`start_reaper`'s (kept when a NodeManager is lost)
        self.hurry = False
        #: JupyterLab and the notebook executions (``hpc-hadoop notebook``), on the master only: their requests are
        #: looked for on a thread of their own (:class:`NotebookRequests`); they exit without stopping the node.
        self.requests = NotebookRequests(plan.path("notebook")) if node.name == plan.master.name else None
        self.runs: dict[str, subprocess.Popen[bytes] | None] = {}  # None: refused (its result says why)
        self.notebook_note: str | None = None
        self._server_request: int | None = None  # the mtime of the server request last started

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self.state is AgentState.STOPPING:  # asked again (the launcher's escalation): no grace, no archive written
            self.hurry = True
        self.stop_reason = self.stop_reason or signal.Signals(signum).name

    def write_status(self) -> None:
        """Write ``agents/<node>.json`` (:class:`StatusWriter`: atomically, on a thread of its own, so that a
        stalled filesystem never holds up the supervision or the stop of the daemons; a failed write, on a full
        filesystem, is reported on stderr, the agents' log, never raised)."""
        daemons = {}
        for name, command in self.commands.items():
            proc = self.procs.get(name)
            daemons[name] = DaemonRecord(pid=proc.pid if proc else None,
                                         returncode=proc.returncode if proc else self.failed.get(name, 0),
                                         log=str(command.log), out=str(command.out))
        record = AgentRecord(node=self.node.name, pid=os.getpid(), state=self.state, updated=time.time(),
                             daemons=daemons, failed=self.failed, failed_at=self.failed_at,
                             stop_reason=self.stop_reason,
                             work_dir=str(self.work_dir) if self.work_dir else None, work_note=self.work_note,
                             nm_local_dir=self.nm_local_dir, nm_note=self.nm_note, archive_notes=self.archive_notes,
                             listening=[ListeningRecord(**entry.to_dict()) for entry in sorted(self.listening)],
                             foreign_ports=self.foreign_ports, address=self.address,
                             notebook_note=self.notebook_note)
        self.status.put(record.to_json(indent=1))

    def start(self) -> None:
        """Create this node's directories and start its daemons (all at once; NodeManagers retry the RM).

        In ``hdfs`` mode the NameNode is formatted first if it never was, and the JobHistoryServer starts
        last, once the NameNode accepts connections.
        """
        os.umask(PRIVATE_UMASK)  # the daemons' logs, pids and scratch: private themselves, not only by their directory
        Path(self.node.log_dir).mkdir(parents=True, exist_ok=True)
        self.status_file.parent.mkdir(parents=True, exist_ok=True)
        spec = self.plan.spec
        address = self.address = interface_address(spec.interface) if spec.interface else None
        self.prepare_work_dir()
        self.nm_local_dir = self.choose_nm_local_dir()
        if "nodemanager" in self.node.roles and not self.make_nm_local_dir():
            self.failed["nodemanager"] = UserError.exit_code  # never started: nm_note says why
            self.state = AgentState.FAILED
            self.write_status()
            return
        if "datanode" in self.node.roles:
            datanode_dir(self.plan, self.node).mkdir(parents=True, exist_ok=True)
        if "namenode" in self.node.roles and needs_format(self.plan) and not self.format_namenode(address):
            self.state = AgentState.FAILED
            self.write_status()
            return
        roles = list(self.node.roles)
        if "namenode" in roles and "historyserver" in roles:  # hdfs mode: history dirs are on HDFS
            roles = [r for r in roles if r != "historyserver"] + ["historyserver"]
        for name in roles:
            if name == "historyserver" and "namenode" in self.procs:
                self.wait_namenode()
            self.spawn(daemon_command(self.plan, self.node, name, address, self.work_dir, self.nm_local_dir))
        self.state = AgentState.RUNNING
        self.write_status()
        if self.requests is not None:
            self.requests.start()

    def spawn(self, command: DaemonCommand) -> None:
        """Start ``command`` (output appended to its ``.out`` file) as the daemon ``command.name``."""
        self.commands[command.name] = command
        with open(command.out, "ab") as out:
            self.procs[command.name] = subprocess.Popen(command.argv, env=command.env, stdout=out,
                                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                        cwd=self.cwd)

    def restart_without_archive(self, name: str) -> bool:
        """After the daemon ``name`` exited on its own: when it ran with a class-data-sharing archive that the JDK
        does not map (:func:`launcher.runtime.cds.maps`: the cause of its death, a SIGSEGV in
        ``MetaspaceShared::map_archive``
        for a file cut short), set that archive aside (:func:`launcher.runtime.cds.set_aside`), say so (stderr, the
        state file's ``archive_notes``) and start the daemon again without any archive. Once per daemon.

        Returns:
            True when the daemon was started again.
        """
        command = self.commands[name]
        archive = command.archive
        if (name in self.restarted or archive is None or command.archive_tmp is not None
                or f"-XX:SharedArchiveFile={archive}" not in command.argv):
            return False
        runtime = self.plan.runtime
        if maps(runtime.java, archive, ":".join(jar_entries(runtime))):
            return False  # the archive maps: the daemon died of something else
        code = self.procs[name].returncode
        moved = set_aside(archive)
        where = f"set aside as {moved}" if moved else "could not be set aside (already moved, or not writable)"
        note = (f"{name} on {self.node.name} died (exit code {code}) mapping the class-data-sharing archive {archive}, "
                f"which the JDK does not map: {where}; {name} started again without it")
        say(f"hpc-hadoop agent: {note}")
        self.archive_notes.append(note)
        self.restarted.add(name)
        self.spawn(DaemonCommand(name=name, argv=[a for a in command.argv if not a.startswith(CDS_FLAG_PREFIXES)],
                                 env=command.env, log=command.log, out=command.out))
        self.write_status()
        return True

    @property
    def cwd(self) -> Path:
        """The daemons' current directory: the node-local working directory, else ``logs/<host>``. A JVM that
        writes a class-data-sharing archive looks up a path relative to it for every generated class
        (``__dynamic_proxy__``, ``__ClassDefiner__``): 66,000 lookups in one bring-up, each a
        round trip when the directory is on the shared filesystem (issue 18)."""
        return self.work_dir or Path(self.node.log_dir)

    def choose_nm_local_dir(self) -> str:
        """The NodeManager's local dir on this node: the plan's, unless it is the node-local default
        (``NodePlan.nm_shared_dir`` set) and the working directory could not be made or has less than
        :data:`launcher.plan.cluster_plan.LOCAL_DIR_MIN_FREE` free: then ``nm_shared_dir`` in the cluster directory,
        with the reason in :attr:`nm_note` (``agents/<node>.json``, the run report)."""
        if not self.node.nm_shared_dir:
            return self.node.nm_local_dir
        if self.work_dir is None:
            self.nm_note = f"no node-local working directory ({self.work_note}): NodeManager local dir on the " \
                           "shared filesystem"
            return self.node.nm_shared_dir
        try:
            free = shutil.disk_usage(self.work_dir).free
        except OSError as exc:
            free, self.nm_note = 0, f"{self.work_dir}: {exc.strerror}"
        if free < LOCAL_DIR_MIN_FREE:
            self.nm_note = (f"{self.work_dir} has {free >> 20} MiB free, less than {LOCAL_DIR_MIN_FREE >> 20} MiB: "
                            "NodeManager local dir on the shared filesystem")
            return self.node.nm_shared_dir
        return self.node.nm_local_dir

    def make_nm_local_dir(self) -> bool:
        """Make the NodeManager's local dir (:attr:`nm_local_dir`) one level at a time below its root
        (:meth:`launcher.plan.cluster_plan.ClusterPlan.nm_local_root`: ``filesystem.local_dirs``, the working
        directory or the cluster directory), each level mode 0700 and checked before use
        (:func:`launcher.util.safedirs.make_private_dir`): ``<local_dirs>/hpc-hadoop-<user>`` made or changeable by
        another user holds ``usercache/``, ``filecache/`` and ``nmPrivate/`` (localized jars, ``launch_container.sh``)
        within her reach, so it is refused, never reused.

        Returns:
            True when it is ready; False when it was refused or could not be made: :attr:`nm_note` holds the line
            (the refusal's, with its fix), said on stderr too, and no daemon of this node is to start.
        """
        try:
            make_private_dir(self.plan.nm_local_root(self.node, self.nm_local_dir), self.nm_local_dir,
                             field="filesystem.local_dirs" if self.plan.spec.filesystem.local_dirs else None)
        except (OSError, UserError) as exc:
            line = str(exc) if isinstance(exc, UserError) else f"cannot make {self.nm_local_dir}: {exc}"
            self.nm_note = f"NodeManager local dir refused: {line}"
            say(f"hpc-hadoop agent {self.node.name}: {self.nm_note}")
            return False
        return True

    def prepare_work_dir(self) -> Path | None:
        """Make this node's working directory (mode 0700) with a copy of the cluster's ``conf/``, an empty ``tmp/``
        and, under Kerberos, ``krb/`` holding the copy of the daemons' keytab
        (:func:`~launcher.security.keytabs.open_node_keys`; the daemons name it by ``-Dhpc.node.krb``), all before any
        daemon starts. ``hpc-hadoop-<user>``, the cluster's directory and the node's below ``$TMPDIR`` (or ``/tmp``)
        are made one level at a time, each checked before use: ours, not a link, not writable by others
        (:func:`launcher.util.safedirs.make_private_dir`).

        Returns:
            The directory (also in :attr:`work_dir`), or ``None`` (reason in :attr:`work_note`) when the plan has
            none or it cannot be made (no space, not writable, the keytab not copied) or is refused (another user's,
            a link, writable by others: the refusal's line): the daemons then use the cluster directory, and log in
            from the keytab there (the note says so).
        """
        if not self.node.work_dir:
            return None
        work = Path(self.node.work_dir)
        try:
            make_private_dir(work.parents[2], work.parent)  # $TMPDIR/hpc-hadoop-<user>/<cluster id>
            conf, tmp = work_paths(work)
            shutil.rmtree(work, ignore_errors=True)
            make_private_dir(work.parent, work, exist_ok=False)
            shutil.copytree(self.plan.conf_dir, conf)
            tmp.mkdir()
            security = self.plan.security
            if security.kerberos:
                open_node_keys(self.plan, self.node.name, security.node_krb_dir(work))
        except (OSError, UserError, SealError) as exc:
            self.work_note = f"node-local working directory {work} not usable ({exc}); using {self.plan.run_dir}"
            if self.plan.security.kerberos:
                self.work_note += ("; the daemons have no keys to log in with: the realm's keys are never on the "
                                   "shared filesystem")
            shutil.rmtree(work, ignore_errors=True)
            return None
        self.work_dir = work
        return work

    def remove_work_dir(self) -> None:
        """Delete this node's working directory (with the node-local keytab copy in its ``krb/``), and the
        cluster's parent of it when it is empty."""
        if self.work_dir is None:
            return
        shutil.rmtree(self.work_dir, ignore_errors=True)
        try:
            self.work_dir.parent.rmdir()
        except OSError:
            pass

    def wait_namenode(self, timeout: float = NAMENODE_TIMEOUT) -> bool:
        """Wait until the NameNode accepts RPC connections (hdfs mode), so the JobHistoryServer, whose done
        dirs are on HDFS, does not start into its 10 s retry loop. False if the NameNode died, was asked to
        stop, or ``timeout`` passed (the supervisor or the readiness check then reports it)."""
        proc = self.procs["namenode"]

        def probe() -> str:  # "up", "waiting", or "over" (the NameNode died, or a stop was asked)
            if proc.poll() is not None or self.stop_reason is not None:
                return "over"
            try:
                with socket.create_connection((self.plan.master.address, self.plan.ports.nn), timeout=1.0):
                    return "up"
            except OSError:
                return "waiting"

        return poll(probe, done=lambda answer: answer != "waiting", interval=POLL_SECONDS, backoff=1.0,
                    timeout=timeout).value == "up"

    def format_namenode(self, address: str | None) -> bool:
        """Run ``NameNode -format -nonInteractive`` (hdfs mode, first start); False (recorded in ``failed``) if
        it fails. Output: ``logs/<host>/namenode-format.out``."""
        command = format_command(self.plan, self.node, self.work_dir)
        if address:
            command.argv[:] = [f"-Dhpc.node.address={address}" if a.startswith("-Dhpc.node.address=") else a
                               for a in command.argv]
        self.commands[command.name] = command
        with open(command.out, "ab") as out:
            try:
                code = subprocess.run(command.argv, env=command.env, stdout=out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.cwd, timeout=FORMAT_TIMEOUT,
                                      check=False).returncode
            except subprocess.TimeoutExpired:
                code = 124
        if code != 0:
            self.failed[command.name] = code
        return code == 0

    def supervise(self) -> int:
        """Wait until asked to stop or a daemon dies; then stop everything. Returns the exit code."""
        if self.failed:
            self.stop_reason = "failed before start: " + ", ".join(f"{n} ({rc})" for n, rc in self.failed.items())
        poll(self.check, done=lambda reason: reason is not None, interval=POLL_SECONDS, backoff=1.0)
        self.stop()
        return 1 if self.failed else 0

    def check(self) -> str | None:
        """One look of :meth:`supervise`: record the daemons that exited (restarting one that died mapping its
        class-data-sharing archive), see whether the launcher process is gone, sample the listeners every
        :data:`LISTEN_SAMPLE_SECONDS`. Returns :attr:`stop_reason` (set here when a daemon exited or the launcher
        is gone; by a signal otherwise), ``None`` while the node runs on: also after its NodeManager alone died on
        a node whose other daemons run (:meth:`runs_on_without_its_nodemanager`)."""
        if self.stop_reason is not None:
            return self.stop_reason
        if self.requests is not None:
            self.serve_notebook_requests()
        exited = self.record_exits()
        runs_on = self.runs_on_without_its_nodemanager()
        if runs_on and exited:
            self.end_lost_containers()
        if self.failed and not runs_on:
            self.note_foreign_ports()
            self.stop_reason = "daemon exited: " + ", ".join(f"{n} ({rc})" for n, rc in self.failed.items())
        elif self.watch_pid and not psutil.pid_exists(self.watch_pid):
            self.stop_reason = f"launcher process {self.watch_pid} is gone"
        elif time.monotonic() - self._sampled >= LISTEN_SAMPLE_SECONDS:
            self.sample_listeners()
        return self.stop_reason

    def record_exits(self) -> set[str]:
        """Record in :attr:`failed` the daemons that exited, but one started again without its class-data-sharing
        archive (:meth:`restart_without_archive`) and JupyterLab (its exit code is in the state file, its
        ``DaemonRecord``; the cluster runs on). A daemon already recorded is not looked at again (a lost NodeManager
        of a node that runs on: its archive is not checked with a JVM each second). Returns the daemons recorded
        now."""
        exited = set()
        for name, proc in list(self.procs.items()):
            if name in self.failed:
                continue
            if proc.poll() is not None and self.stop_reason is None and self.restart_without_archive(name):
                continue
            if proc.poll() is not None and name not in OPTIONAL_DAEMONS:
                self.failed[name] = proc.returncode
                self.failed_at.setdefault(name, time.time())
                exited.add(name)
        return exited

    def runs_on_without_its_nodemanager(self) -> bool:
        """True when nothing but the NodeManager failed here (:data:`launcher.util.records.LOSABLE`) and another of the
        node's daemons still runs: the master's ResourceManager and JobHistoryServer (``nodemanager_on_master``), a
        DataNode. The node is then not stopped: its NodeManager is lost as a worker's is (the launcher decommissions
        it and YARN re-runs its work), its other daemons serve on. A worker with its NodeManager alone stops."""
        return bool(self.failed) and set(self.failed) <= LOSABLE and any(
            proc.poll() is None for name, proc in self.procs.items() if name not in self.failed)

    def end_lost_containers(self) -> None:
        """End the containers of the NodeManager lost while the node runs on, as a lost node's agent does at its stop:
        SIGKILL to every descendant but the daemons still running, the notebook executions and the reaper, with
        theirs (:func:`kill_descendants`); then the state file says the NodeManager failed."""
        keep = [proc for name, proc in self.procs.items() if name not in self.failed]
        keep += [run for run in self.runs.values() if run is not None]
        keep += [self.reaper] if self.reaper is not None else []
        ended = kill_descendants(keep=[proc.pid for proc in keep if proc.poll() is None])
        say(f"hpc-hadoop agent on {self.node.name}: lost " + ", ".join(f"{n} ({rc})" for n, rc in self.failed.items())
            + f"; {ended} of its processes ended, the node's other daemons run on")
        self.write_status()

    def serve_notebook_requests(self) -> None:
        """Start what ``notebook/`` asks for (:class:`NotebookRequests`): JupyterLab when the server request is new (or
        rewritten since the last start) and none runs, an execution for each ``run-<id>.json`` not started yet. What
        cannot be started is said in :attr:`notebook_note` (the state file: ``hpc-hadoop notebook`` prints it)."""
        from launcher.render import notebook

        assert self.requests is not None
        server, runs = self.requests.take()
        running = notebook.DAEMON in self.procs and self.procs[notebook.DAEMON].poll() is None
        if server is not None and server != self._server_request and not running:
            self._server_request = server
            self.start_notebook_server()
        for name in runs:
            if name not in self.runs:
                self.start_notebook_run(name)

    def _notebook_parts(self) -> tuple[Any, Any, Any]:
        """Spark, the JupyterLab runtime and the private directories (made 0700 one level at a time below the working
        directory, each checked) for the notebook's processes.

        Raises:
            UserError: no working directory (JupyterLab's files are never put on the shared filesystem), no Spark or
                no JupyterLab runtime, a directory refused.
            OSError: a directory cannot be made.
        """
        from launcher.render import notebook
        from launcher.render.spark import discover_spark

        if self.work_dir is None:
            raise UserError(f"no node-local working directory on {self.node.name} ({self.work_note}): JupyterLab's "
                            "private files are never put on the shared filesystem", field="notebook",
                            fix="give the master node a writable $TMPDIR")
        spark, jupyter = discover_spark(self.plan.spec), notebook.discover_jupyter()
        paths = notebook.jupyter_paths(self.work_dir)
        for level in paths.all():
            make_private_dir(self.work_dir, level)
        notebook.write_kernel(self.plan, paths, notebook.python_of(self.plan))
        return spark, jupyter, paths

    def start_notebook_server(self) -> None:
        """Start JupyterLab (:func:`launcher.render.notebook.server_command`) with a new token, written first for the
        ``ui`` proxy (:func:`launcher.render.notebook.write_token`: the owner's state directory, 0600, never the
        shared filesystem); a refusal goes to :attr:`notebook_note`."""
        import json
        import secrets

        from launcher.render import notebook

        state = self.plan.path(notebook.NOTEBOOK_SUBDIR)
        try:
            request = json.loads((state / notebook.SERVER_REQUEST).read_text())
            notebooks = notebook.check_notebooks_dir(self.plan, request["dir"], field="notebook.dir")
            base = notebook.server_base(self.plan)
            spark, jupyter, paths = self._notebook_parts()
            token = secrets.token_urlsafe(32)
            notebook.write_token(self.plan, token)
            address = self.address or self.node.address
            self.spawn(notebook.server_command(self.plan, self.node, spark, jupyter, paths, address, notebooks, token,
                                               base))
            self.notebook_note = None
            say(f"hpc-hadoop agent {self.node.name}: JupyterLab started on {address}:{self.plan.ports.notebook_web} "
                f"under {notebook.base_url(address, self.plan.ports.notebook_web, base)} (notebooks in {notebooks})")
        except (OSError, UserError, ValueError, KeyError) as exc:
            self.notebook_note = f"JupyterLab not started: {exc}"
            say(f"hpc-hadoop agent {self.node.name}: {self.notebook_note}")
        self.write_status()

    def start_notebook_run(self, name: str) -> None:
        """Start the execution that ``notebook/<name>`` asks for (:func:`launcher.render.notebook.execute_argv`); its
        output in ``logs/<host>/<name>.log``; a refusal is written as its result, so that the CLI waiting for it
        says why."""
        import json

        from launcher.render import notebook

        state = self.plan.path(notebook.NOTEBOOK_SUBDIR)
        request = state / name
        try:
            spark, jupyter, paths = self._notebook_parts()
            env = notebook.environment(self.plan, spark, jupyter, paths)
            log = Path(self.node.log_dir) / f"{name.removesuffix('.json')}.log"
            with open(log, "ab") as out:
                self.runs[name] = subprocess.Popen(notebook.execute_argv(self.plan, request), env=env, stdout=out,
                                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.cwd)
        except (OSError, UserError) as exc:
            self.runs[name] = None  # never tried again
            result: dict[str, object] = {"ok": False, "cells": 0, "output": None,
                      "error": {"cell": None, "ename": "refused", "evalue": str(exc), "traceback": []}}
            try:
                replace_private(state / (name.removesuffix(".json") + notebook.RESULT_SUFFIX), json.dumps(result))
            except OSError as err:
                say(f"hpc-hadoop agent {self.node.name}: cannot write the result of {name}: {err}")

    def note_foreign_ports(self) -> None:
        """Record the ports of the cluster's block that another user's process holds on this node now
        (:attr:`foreign_ports`, from the kernel's ``/proc/net/tcp*``): why a daemon that exited could not bind, which
        the launcher's error then names (issue 36)."""
        block = set(self.plan.ports.all())
        mine = os.geteuid()
        self.foreign_ports = {str(entry.port): entry.uid for entry in listeners()
                              if entry.port in block and entry.uid != mine}

    def sample_listeners(self) -> None:
        """Add the listening TCP sockets of the daemons and their containers to :attr:`listening`
        (:mod:`launcher.node.listeners`); rewrite ``agents/<node>.json`` when one is new."""
        self._sampled = time.monotonic()
        found = of_descendants()
        if not found <= self.listening:
            self.listening |= found
            self.write_status()

    def stop(self) -> None:
        """Stop this node's daemons, then kill every descendant left; publish the class-data-sharing archives
        the daemons wrote at exit (:mod:`launcher.runtime.cds`).

        Order: every daemon but the ResourceManager and the NameNode first; then, once the other nodes' agents
        have stopped (at most :data:`PEER_WAIT_SECONDS`), those two. A NodeManager that stops unregisters from
        the ResourceManager and retries while it cannot reach it: with the ResourceManager gone first it hung
        until SIGKILL, :data:`GRACE_SECONDS` later, on every other node.

        Everything within :data:`STOP_BUDGET_SECONDS` (or at once after a second signal, :attr:`hurry`): a daemon
        still writing its archive then is SIGKILLed and the archive dropped (``archive_notes``); the node-local
        working directory is removed whatever happens.
        """
        self.state = AgentState.STOPPING
        deadline = time.monotonic() + STOP_BUDGET_SECONDS
        try:
            self.sample_listeners()
            self.write_status()
            self.terminate([n for n in self.procs if n not in STOPPED_LAST], deadline)
            last = [n for n in self.procs if n in STOPPED_LAST]
            if last:
                self.wait_for_peers(min(PEER_WAIT_SECONDS, max(0.0, deadline - time.monotonic())))
                self.terminate(last, deadline)
            kill_descendants()
            self.publish_archives()
        finally:
            self.remove_work_dir()
        self.state = AgentState.FAILED if self.failed else AgentState.STOPPED
        self.write_status()

    def publish_archives(self) -> None:
        """Publish the class-data-sharing archives the daemons wrote at exit (:func:`launcher.runtime.cds.publish`: only
        those the JDK maps); one killed before it finished writing is dropped, with a note in ``archive_notes``."""
        runtime = self.plan.runtime
        for name, command in self.commands.items():
            if command.archive_tmp is None or command.archive is None:
                continue
            proc = self.procs.get(name)
            code = proc.returncode if proc else None
            if not publish(command.archive_tmp, command.archive, code, java=runtime.java,
                           classpath=":".join(jar_entries(runtime))) and name in self.killed:
                self.archive_notes.append(f"{name} on {self.node.name}: its class-data-sharing archive was not written "
                                          f"within the teardown's {STOP_BUDGET_SECONDS:.0f} s: dropped (a later run "
                                          "writes it)")

    def terminate(self, names: list[str], deadline: float) -> None:
        """SIGTERM to the daemons ``names``, SIGKILL to those still running :data:`GRACE_SECONDS` later (plus
        :data:`DUMP_GRACE_SECONDS` for a daemon writing its class-data-sharing archive), at ``deadline`` (monotonic
        seconds) at the latest, or at once when :attr:`hurry` is set."""
        graces = [GRACE_SECONDS + (DUMP_GRACE_SECONDS if (c := self.commands.get(name)) and c.archive_tmp else 0.0)
                  for name in names]
        ended = end([self.procs[name] for name in names], grace=graces, deadline=deadline, hurry=lambda: self.hurry)
        self.killed.update(name for name in names if self.procs[name].pid in ended.killed)

    def wait_for_peers(self, timeout: float) -> bool:
        """Wait until the agent of every other node has stopped (``agents/<node>.json`` says ``stopped`` or
        ``failed``, or it never wrote one); at most ``timeout`` seconds, none after a second signal (:attr:`hurry`).
        True if they all did."""
        others = [n.name for n in self.plan.nodes if n.name != self.node.name]

        def pending() -> list[str]:
            return [n for n in others if not _agent_state(self.plan, n).terminal]

        return poll(pending, done=lambda left: not left or self.hurry, interval=POLL_SECONDS, backoff=1.0,
                    timeout=timeout).value == []


#: Daemons whose exit does not stop the node (their exit code is in the state file): JupyterLab.
OPTIONAL_DAEMONS = ("jupyterlab",)
#: Seconds between two looks at ``notebook/`` (:class:`NotebookRequests`).
REQUEST_POLL_SECONDS = 1.0


class NotebookRequests:
    """The master agent's look at the cluster directory's ``notebook/`` for requests (``hpc-hadoop notebook``), every
    :data:`REQUEST_POLL_SECONDS`, on a daemon thread: a stalled shared filesystem stalls this thread, never the agent's
    supervision or its stop.

    Args:
        directory: ``<run dir>/notebook``.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._server: int | None = None
        self._runs: list[str] = []

    def start(self) -> None:
        """Start looking (a daemon thread)."""
        threading.Thread(target=self._loop, name="notebook-requests", daemon=True).start()

    def look(self) -> None:
        """One look: the server request's mtime (ns), the execution requests' names."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return
        server = None
        if "server.json" in names:
            try:
                server = os.stat(self.directory / "server.json").st_mtime_ns
            except OSError:
                server = None
        runs = [n for n in names if n.startswith("run-") and n.endswith(".json") and not n.endswith(".result.json")]
        with self._lock:
            self._server, self._runs = server, runs

    def take(self) -> tuple[int | None, list[str]]:
        """What the last look found."""
        with self._lock:
            return self._server, list(self._runs)

    def _loop(self) -> None:
        while True:
            self.look()
            time.sleep(REQUEST_POLL_SECONDS)


def _agent_state(plan: ClusterPlan, node: str) -> AgentState:
    """The ``state`` in ``agents/<node>.json``; ``stopped`` when there is none (that agent never started)."""
    record = AgentRecord.read_or_none(plan.path("agents", f"{node}.json"))
    return AgentState.STOPPED if record is None else record.state


def start_reaper(node: NodePlan) -> subprocess.Popen[bytes] | None:
    """Start this agent's reaper (:mod:`launcher.node.reaper`) in a session of its own: should the agent be killed
    before it stops its daemons (Torque's ``qdel`` kills the job's session and tasks), the reaper ends what is left
    of this node's cluster, the containers that ``setsid`` put out of the session's reach among it. When the agent
    stops normally it ends the reaper with its other descendants. ``None`` when it cannot be started (said on
    stderr; the run goes on)."""
    try:
        return subprocess.Popen([sys.executable, "-m", "launcher.node.reaper", str(os.getpid()), node.log_dir],
                                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    except OSError as err:
        say(f"hpc-hadoop agent on {node.name}: no reaper ({err})")
        return None


def kill_descendants(timeout: float = 5.0, keep: list[int] | None = None) -> int:
    """SIGKILL every remaining descendant of this process but the processes ``keep`` (pids) and their descendants,
    and reap them; returns how many there were."""
    kept = set(keep or [])

    def doomed(child: psutil.Process) -> bool:
        try:  # its ancestry as of now: a child a kept process started after the listing below is not in it
            return child.pid not in kept and not kept & {parent.pid for parent in child.parents()}
        except psutil.NoSuchProcess:
            return False

    children = [child for child in psutil.Process().children(recursive=True) if doomed(child)]
    end(children, signum=None, kill_wait=timeout)
    return len(children)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m launcher.node.agent``."""
    parser = argparse.ArgumentParser(prog="python -m launcher.node.agent", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--node")
    parser.add_argument("--watch-pid", type=int)
    args = parser.parse_args(argv)
    plan = ClusterPlan.load(args.run_dir)
    try:
        node = find_node(plan, args.node)
    except KeyError as exc:
        print(f"hpc-hadoop agent: {exc.args[0]}", file=sys.stderr)
        return 2
    become_subreaper()
    agent = Agent(plan, node, args.watch_pid)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(signum, agent._on_signal)
    agent.reaper = start_reaper(node)
    agent.start()
    code = agent.supervise()
    if not agent.status.flush(STATUS_FLUSH_SECONDS):
        say(f"hpc-hadoop agent on {node.name}: {agent.status_file} not written within {STATUS_FLUSH_SECONDS:.0f} s "
            "(the shared filesystem does not answer)")
    say(f"hpc-hadoop agent on {node.name}: stopped ({agent.stop_reason})")
    return code


if __name__ == "__main__":
    sys.exit(main())
