"""``hpc-hadoop doctor``: check what a run needs before spending queue time on it.

Each check gives ``ok``, ``warn`` or ``fail`` and, when not ok, what to do.
"""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from launcher.errors import UserError
from launcher.filesystems.detect import filesystem_type
from launcher.plan import PORT_BLOCK, choose_ports, expand_root
from launcher.runtime import discover
from launcher.spec import JobSpec
from launcher.units import format_size


@dataclass(frozen=True)
class Check:
    """One check's outcome: ``status`` is ``ok``, ``warn`` or ``fail``; ``fix`` says what to do."""

    name: str
    status: str
    detail: str
    fix: str | None = None


def _java_and_hadoop(spec: JobSpec) -> list[Check]:
    try:
        runtime = discover(spec.hadoop.home, spec.hadoop.java_home)
    except UserError as exc:
        return [Check("hadoop runtime", "fail", exc.message, exc.fix)]
    checks = [Check("java", "ok", f"Java {runtime.java_version} at {runtime.java_home}")]
    if runtime.java_version > 17:
        checks[0] = Check("java", "warn", f"Java {runtime.java_version}: Hadoop 3.4 supports 8, 11 and 17",
                          "set hadoop.java_home to a JDK 17")
    checks.append(Check("hadoop runtime", "ok", f"Hadoop {runtime.version} at {runtime.home}"))
    checks.append(Check("examples", "ok", f"{runtime.examples_jar.name}, {runtime.tests_jar.name}"))
    return checks


def _filesystem(spec: JobSpec) -> list[Check]:
    try:
        root = expand_root(spec.filesystem.root)
    except UserError as exc:
        return [Check("filesystem", "fail", exc.message, exc.fix)]
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not os.access(probe, os.W_OK):
        return [Check("filesystem", "fail", f"{probe} is not writable", "set filesystem.root to a directory you own")]
    usage = shutil.disk_usage(probe)
    fs_type = filesystem_type(probe)
    status = "ok" if usage.free > 10 << 30 else "warn"
    checks = [Check("filesystem", status, f"{root} on {fs_type}: {format_size(usage.free)} free of "
                    f"{format_size(usage.total)}", None if status == "ok" else "free space or choose another root")]
    checks.append(_flock(probe))
    return checks


def _flock(directory: Path) -> Check:
    import fcntl
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".hpc-hadoop-flock-") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError as exc:
        return Check("flock", "warn", f"flock fails on {directory}: {exc.strerror}",
                     "fine for rawfs mode (LevelDB stores are off); ask your admins for the flock mount option")
    return Check("flock", "ok", f"works on {directory}")


def _hostname() -> Check:
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError:
        return Check("hostname", "fail", f"{name} does not resolve", "add it to /etc/hosts or DNS")
    if address.startswith("127."):
        return Check("hostname", "warn", f"{name} resolves to {address} (loopback)",
                     "fine for the local backend; on a cluster, daemons on other nodes could not reach this one: "
                     "fix /etc/hosts or set interface:")
    return Check("hostname", "ok", f"{name} → {address}")


def _ports() -> Check:
    try:
        ports = choose_ports(f"doctor-{os.getpid()}")
    except UserError as exc:
        return Check("ports", "fail", exc.message, exc.fix)
    return Check("ports", "ok", f"a free block of {PORT_BLOCK} ports, e.g. {ports.base}-{ports.base + PORT_BLOCK - 1}")


def _batch_systems() -> Check:
    found = [name for name, cmd in (("slurm", "sbatch"), ("pbs", "qsub"), ("sge", "qconf")) if shutil.which(cmd)]
    return Check("batch system", "ok", ", ".join(found) if found else "none found (the local backend works)")


def run_checks(spec: JobSpec) -> list[Check]:
    """Every check, in order: Java and Hadoop, filesystem, flock, hostname, ports, batch systems."""
    return [*_java_and_hadoop(spec), *_filesystem(spec), _hostname(), _ports(), _batch_systems()]
