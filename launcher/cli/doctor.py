"""``hpc-hadoop doctor``: check what a run needs before spending queue time on it.

Each check gives ``ok``, ``warn`` or ``fail`` and, when not ok, what to do.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from launcher.config.spec import JobSpec
from launcher.filesystems import check_shared_root, check_striping, current_layout, decide, filesystem_of
from launcher.filesystems.operations import DIRECTORY_MODES, FILE_MODES, NEVER_TRIED, try_operations
from launcher.plan.cluster_plan import PORT_BLOCK, FilesystemPlan, choose_ports, expand_root, spec_offsets
from launcher.runtime.hadoop import HadoopRuntime, discover
from launcher.schedulers.allocation import Allocation
from launcher.util import resources
from launcher.util.errors import UserError
from launcher.util.resources import HADOOP_SUBDIR, SPARK_SUBDIR
from launcher.util.safedirs import check_root
from launcher.util.units import format_size


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
    checks.append(_shadowed("hadoop runtime", f"Hadoop {runtime.version}", runtime.home, HADOOP_SUBDIR,
                            "class-data-sharing archives")
                  or Check("hadoop runtime", "ok", f"Hadoop {runtime.version} at {runtime.home}"))
    checks.append(Check("examples", "ok", f"{runtime.examples_jar.name}, {runtime.tests_jar.name}"))
    checks.append(_archives(runtime))
    return checks


def _shadowed(name: str, what: str, home: Path, subdir: str, loses: str) -> Check | None:
    """A ``warn`` when the ``name`` in use (``what`` at ``home``) is the user's own (``hpc-hadoop runtime install``:
    ``subdir`` of the user prefix) while the site's (of the site prefix) is there too: the user's wins the search
    (:func:`launcher.runtime.hadoop.runtime_candidates`, :func:`launcher.render.spark.discover_spark`) and, with it,
    what the site's has goes unused (``loses``: the runtime's class-data-sharing archives; issue 39: ``doctor`` said
    ``ok``); ``None`` otherwise."""
    mine, site = resources.user_prefix() / subdir, resources.site_prefix() / subdir
    if not site.is_dir() or not Path(os.path.realpath(home)).is_relative_to(os.path.realpath(mine)):
        return None
    return Check(name, "warn", f"{what} at {home}: your own (`hpc-hadoop runtime install`) is used, not the site's "
                 f"at {site}" + (f" with its {loses}" if loses else ""),
                 f"remove yours, `rm -rf {mine}`, to use the site's")


def _install_command(home: Path) -> str:
    """The command that completes the prefix ``home`` (a runtime's or Spark's directory) is in, else ``python -m
    launcher.runtime.cds_build`` (a checkout's runtime, a site's Hadoop)."""
    for flag, prefix in (("", resources.user_prefix()), (" --site", resources.site_prefix())):
        if Path(os.path.realpath(home)).is_relative_to(os.path.realpath(prefix)):
            return f"hpc-hadoop runtime install{flag}"
    return "python -m launcher.runtime.cds_build (./install.sh does it in a checkout)"


def _archives(runtime: HadoopRuntime) -> Check:
    """The class-data-sharing archives of the runtime in use (:func:`launcher.runtime.install.archives_of`): a
    ``warn`` when some are missing (each user's first run then writes their own and starts slower: 18-73 s of
    bring-up instead of 9 s on the 3-node test cluster, :mod:`launcher.runtime.cds_build`)."""
    from launcher.runtime.install import archives_mib, archives_of

    found = archives_of(runtime)
    if isinstance(found, str):
        return Check("cds archives", "ok", f"none used: {found}")
    site, state = found
    if not state.missing:
        return Check("cds archives", "ok", f"{len(state.archives)} ({archives_mib(state.archives)} MiB) in {site} "
                     f"for Hadoop {runtime.version} on Java {runtime.java_version}")
    return Check("cds archives", "warn", f"{', '.join(state.missing)} not in {site} (or not for this runtime and JDK): "
                 "each user's first run writes their own and starts slower", _install_command(runtime.home))


def _spark(spec: JobSpec) -> list[Check]:
    """The Spark a ``spark:`` or ``pyspark:`` step would use (:func:`launcher.render.spark.discover_spark`) and its
    examples jar (``${spark_examples_jar}``): a ``warn`` when there is none (a job without Spark steps needs
    neither), a ``fail`` when ``spark.home`` or ``$SPARK_HOME`` names no Spark."""
    from launcher.render.spark import NO_EXAMPLES_JAR_FIX, discover_spark

    try:
        spark = discover_spark(spec)
    except UserError as exc:
        status = "warn" if exc.message.startswith("no Spark runtime found") else "fail"
        detail = exc.message + (": spark: and pyspark: steps cannot run" if status == "warn" else "")
        return [Check("spark", status, detail, exc.fix)]
    checks = [_shadowed("spark", f"Spark {spark.version}", spark.home, SPARK_SUBDIR, "")
              or Check("spark", "ok", f"Spark {spark.version} at {spark.home}")]
    if spark.examples_jar is None:
        checks.append(Check("spark examples", "warn", f"no Spark examples jar beside {spark.home}: "
                            "${spark_examples_jar} is empty", NO_EXAMPLES_JAR_FIX))
    else:
        checks.append(Check("spark examples", "ok", str(spark.examples_jar)))
    return [*checks, _jupyter(spec)]


def _jupyter(spec: JobSpec) -> Check:
    """The JupyterLab ``hpc-hadoop notebook`` would run (:func:`launcher.render.notebook.discover_jupyter`): a ``fail``
    when there is none and the job has ``notebook:``, a ``warn`` when it has not (only notebooks need it)."""
    from launcher.render.notebook import discover_jupyter

    try:
        jupyter = discover_jupyter()
    except UserError as exc:
        return Check("jupyterlab", "fail" if spec.notebook is not None else "warn",
                     exc.message + ("" if spec.notebook is not None else ": hpc-hadoop notebook cannot run"), exc.fix)
    return Check("jupyterlab", "ok", f"JupyterLab at {jupyter.home}")


def _filesystem(spec: JobSpec) -> list[Check]:
    """The filesystem under the root (:func:`launcher.filesystems.decide`), ``flock``, the operations a run makes
    there (:func:`launcher.filesystems.operations.try_operations`) and striping (:func:`check_striping`)."""
    try:
        root = expand_root(spec.filesystem.root)
    except UserError as exc:
        return [Check("filesystem", "fail", exc.message, exc.fix)]
    try:
        probe = check_root(root)  # the line every other command refuses such a root with (launcher.lifecycle.front)
    except UserError as exc:
        return [Check("filesystem", "fail", exc.message, exc.fix)]
    found = decide(spec.filesystem, check_flock=True, check=False)
    status = "ok" if found.free_bytes > 10 << 30 else "warn"
    checks = [Check("filesystem", status, f"{root} on {found.label} (statfs magic {found.magic}), mounted at "
                    f"{found.mount_point} from {found.source}: {format_size(found.free_bytes)} free of "
                    f"{format_size(found.total_bytes)}",
                    None if status == "ok" else "free space or choose another root")]
    if found.flock:
        checks.append(Check("flock", "ok", f"works on {probe}"))
    else:
        checks.append(Check("flock", "warn", f"flock fails on {probe}: {found.flock_error}",
                            "fine for rawfs mode (LevelDB stores are off); ask your admins for the flock mount option"))
    lengths = _path_lengths(spec, found)
    return [*checks, _operations(probe), *([lengths] if lengths else []), _striping(spec, found, probe)]


def _operations(probe: Path) -> Check:
    """What a run does in its cluster directory, tried in ``probe``: each refusal named. No ``chmod`` a run does not
    make is tried (:data:`launcher.filesystems.operations.NEVER_TRIED`)."""
    tried = try_operations(probe)
    refused = [f"{t.operation} ({t.error})" for t in tried if t.error]
    if refused:
        return Check("operations", "fail", f"{probe}: the filesystem refuses what a run does: {'; '.join(refused)}",
                     "set filesystem.root to a filesystem that allows them")
    return Check("operations", "ok", f"create, chmod to {len(DIRECTORY_MODES)} directory and {len(FILE_MODES)} file "
                 f"modes a run sets, rename, symlink work in {probe}; never tried: {NEVER_TRIED}")


def _striping(spec: JobSpec, found: FilesystemPlan, probe: Path) -> Check:
    """Whether the job's ``filesystem.striping`` can be honoured here (:func:`check_striping`)."""
    fs = filesystem_of(found)
    if not fs.striping:
        return Check("striping", "ok", f"striping not applicable: {fs.why_not}")
    try:
        check_striping(spec.filesystem, found)
    except UserError as exc:
        return Check("striping", "fail", f"{exc.field}: {exc.message}", exc.fix)
    if found.striping_error:
        return Check("striping", "warn", f"{fs.name}: stripe layouts can be neither set nor read here: "
                     f"{found.striping_error}; a job that asks for none runs", fs.unusable_fix)
    layout = current_layout(fs, probe)
    shown = ", ".join(f"{k} {v}" for k, v in (layout or {}).items() if v is not None) or "none reported"
    return Check("striping", "ok", f"{fs.name}: per-directory striping; layout of {probe}: {shown}")


def _path_lengths(spec: JobSpec, found: FilesystemPlan) -> Check | None:
    """Whether the filesystem under the root (``found``, as :func:`_filesystem` decided it) takes the longest path a
    run makes there (:func:`launcher.filesystems.pathlength.check_path_lengths`, tried in the root), on a preview plan
    of the job (the batch system's stand-in nodes); ``None`` when no plan can be made (the other checks say why)."""
    from launcher.filesystems.pathlength import check_path_lengths
    from launcher.plan.cluster_plan import make_plan
    from launcher.schedulers import get_scheduler
    from launcher.schedulers.base import BatchScheduler

    try:
        runtime = discover(spec.hadoop.home, spec.hadoop.java_home)
        scheduler = get_scheduler(spec.scheduler)
        allocation = scheduler.preview_allocation(spec) if isinstance(scheduler, BatchScheduler) else \
            scheduler.allocation(spec)
        plan = make_plan(spec, allocation, runtime, filesystem=found)
    except UserError:
        return None
    try:
        longest = check_path_lengths(plan)
    except UserError as exc:
        return Check("path lengths", "fail", f"{exc.field}: {exc.message}", exc.fix)
    return Check("path lengths", "ok", f"a run's longest path, {longest.below_root} bytes below the root "
                 f"({longest.what}), can be made there")


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


def _nodes_to_ask(spec: JobSpec) -> tuple[list[tuple[str, str]], str, str | None, str] | Check:
    """The nodes doctor asks what secure mode needs: ``(name, address)`` of each, the fan-out launcher and its
    program, and a remark for the lines (``""``, or that only this host was asked); or a failed :class:`Check` when
    the allocation doctor runs in cannot be read."""
    from launcher.schedulers import get_scheduler
    from launcher.schedulers.base import BatchScheduler
    from launcher.util.errors import HpcHadoopError

    scheduler = get_scheduler(spec.scheduler)
    try:
        if isinstance(scheduler, BatchScheduler):
            scheduler.job_in(os.environ)
        # Under interface: every node, the first too, finds its own address on it (doctor may run on a login node,
        # salloc's shell, which is not the first node and may lack the interface): the names stand in.
        allocation = scheduler.allocation(spec.model_copy(update={"interface": None}) if spec.interface else spec)
    except KeyError as exc:  # interface: names no IPv4 interface here
        return Check("krb nodes", "fail", str(exc.args[0] if exc.args else exc),
                     "set interface: to an interface of every node")
    except UserError as exc:
        if exc.field != "scheduler":  # inside an allocation that cannot be used: say why
            return Check("krb nodes", "fail", f"{exc.field}: {exc.message}" if exc.field else exc.message, exc.fix)
        name = socket.gethostname()
        try:
            address = socket.gethostbyname(name)
        except OSError:
            address = name
        return [(name, address)], "local", None, " (this host only: run doctor inside an allocation to ask every node)"
    except HpcHadoopError as exc:  # a command that reads the allocation failed
        return Check("krb nodes", "fail", str(exc), "see that the batch system's commands work here")
    nodes = [(n.name, n.name if spec.interface else n.address) for n in allocation.nodes]
    return nodes, allocation.fanout, allocation.fanout_program, ""


@contextlib.contextmanager
def _answers_dir(spec: JobSpec, fanout: str, program: str | None) -> Iterator[Path | None]:
    """Where the nodes write their answers to the secure-mode probe (:func:`launcher.security.kdc.probe_nodes`): a new
    private directory (``mkdtemp``: mode 0700, a name nobody could make first) in the filesystem root, which every
    node shares; removed afterwards. ``None`` when the fan-out runs here (no node writes anything).

    Raises:
        OSError: the root cannot be written.
        UserError: the root does not expand, or the fan-out is unknown.
    """
    from launcher.fanout import get_launcher

    if get_launcher(fanout, program=program).runs_here:
        yield None
        return
    answers = Path(tempfile.mkdtemp(prefix=".hpc-hadoop-doctor-", dir=expand_root(spec.filesystem.root)))
    try:
        yield answers
    finally:
        shutil.rmtree(answers, ignore_errors=True)


def _secure_mode(spec: JobSpec) -> list[Check]:
    """What ``security: per-cluster`` needs (:mod:`launcher.security.checks`), asked through the fan-out
    (:func:`launcher.security.kdc.probe_nodes`) of every node of the allocation doctor runs in (the ``local``
    backend: this machine), else of this host alone (a login node: the nodes are checked again at bring-up); under
    ``interface:`` each node's address on it, as the node and this host resolve it. Under another ``security:`` a
    failure is a warning."""
    from launcher.security.checks import check_clock_skew, check_kdc_port, check_names, resolve_bound
    from launcher.security.kdc import probe_nodes
    from launcher.util.errors import HpcHadoopError

    asked = _nodes_to_ask(spec)
    if isinstance(asked, Check):
        return [asked]
    nodes, fanout, program, alone = asked
    try:
        with _answers_dir(spec, fanout, program) as answers:
            probes, before, after = probe_nodes(nodes, fanout, program, answers=answers, interface=spec.interface)
    except OSError as exc:
        return [Check("krb nodes", "fail", f"no directory for the nodes' answers under {spec.filesystem.root}: {exc}",
                      "set filesystem.root to a directory you can write that every node shares")]
    except HpcHadoopError as exc:
        return [Check("krb nodes", "fail", str(exc), "see that the batch system can run a task on every node, and "
                      "that filesystem.root is shared by every node")]
    names = check_names(probes, resolve_bound(probes), socket.gethostname())
    master = probes[0].bound.address if probes[0].bound is not None else nodes[0][1]
    found = [names, check_kdc_port(probes[0], master), check_clock_skew(probes, before, after)]
    checks = []
    for check in found:
        # security: site needs only the clocks (no KDC here, no _HOST principal)
        needed = spec.security == "per-cluster" or (spec.security == "site" and check.name == "krb clock skew")
        if check.ok:
            checks.append(Check(check.name, "ok", check.detail + alone))
        elif needed:
            checks.append(Check(check.name, "fail", check.detail + alone, check.fix))
        else:
            checks.append(Check(check.name, "warn", f"{check.detail} (needed by security: per-cluster only; this job "
                                f"has security: {spec.security})", check.fix))
    return checks


def _realm_keys(spec: JobSpec) -> Check | None:
    """Where the realm's keys go (issue 36 item 5) and which filesystems are treated as ones whose modes another user
    may slip past: every shared one, the cluster directory's under ``filesystem.root`` included (real OrangeFS's FUSE
    client caches permission answers across users); the keys are node-local, and the only files of the realm on
    the shared filesystem are sealed. The copies for clients on a login node go to the user's state directory: a
    warning when that is a FUSE mount too. ``None`` under ``security: simple``."""
    from launcher.filesystems.detect import detect, node_local_type
    from launcher.util.userdirs import clusters_dir, node_work_root

    if spec.security == "simple":
        return None
    try:
        root = detect(expand_root(spec.filesystem.root), check_flock=False)
    except (UserError, OSError):
        return None
    shown = root.type + (f" ({root.via or root.subtype})" if root.via or root.subtype else "")
    work = node_work_root(getpass.getuser())
    local = node_local_type(work)
    detail = (f"never on {spec.filesystem.root} ({shown}): every shared filesystem is treated as one whose file modes "
              f"another user's process may slip past (a FUSE client that caches permission answers across users, as "
              f"OrangeFS's pvfs2fuse does); node-local in {work} ({local or 'type not known to be node-local'}) on "
              f"each node, and on the shared filesystem only sealed (AES-GCM, a key in the agents' environment)")
    if local is None:
        return Check("krb keys", "warn", detail, "set TMPDIR to a node-local directory (a local disk or RAM disk)")
    state = detect(clusters_dir(), check_flock=False)
    if state.mount_type and state.mount_type.startswith("fuse"):
        return Check("krb keys", "warn", f"{detail}; but the copies for clients on a login node go to "
                     f"{clusters_dir()}, on a FUSE mount ({state.mount_type})",
                     "set XDG_STATE_HOME to a directory of yours on a kernel filesystem (NFS home, local disk)")
    return Check("krb keys", "ok", detail)


def _ports(spec: JobSpec) -> Check:
    """Whether this node has a port block for a cluster of ``spec`` as ``start`` would choose it
    (:func:`launcher.plan.cluster_plan.choose_ports`: any block whose ports the cluster's daemons use are free)."""
    offsets = spec_offsets(spec, spec.nodes)
    try:
        ports = choose_ports(offsets)
    except UserError as exc:
        return Check("ports", "fail", exc.message, exc.fix)
    return Check("ports", "ok", f"a block of {PORT_BLOCK} ports with the {len(offsets)} the daemons use free, e.g. "
                 f"{ports.base}-{ports.base + PORT_BLOCK - 1}")


def _batch_systems() -> Check:
    """The batch systems installed here, each with the command it would be asked through: PBS with the ``qstat``
    and flavor ``submit`` would use (:meth:`launcher.schedulers.pbs.PbsScheduler.flavor`; where Grid Engine's
    ``qstat`` comes first on ``PATH``, said, or a warning when no PBS ``qstat`` is found), Grid Engine with its
    ``qstat``: each registered backend's :meth:`~launcher.schedulers.base.Scheduler.doctor_finds`, in order."""
    from launcher.schedulers import SCHEDULERS

    found: list[str] = []
    warning: tuple[str, str] | None = None
    for name in SCHEDULERS:
        seen, trouble = SCHEDULERS[name].doctor_finds()
        if seen:
            found.append(seen)
        warning = warning or trouble
    if warning:
        return Check("batch system", "warn", "; ".join([*found, warning[0]]), warning[1])
    return Check("batch system", "ok", ", ".join(found) if found else "none found (the local backend works)")


def _shared_root(spec: JobSpec) -> Check | None:
    """A batch job's root must be on a filesystem every node sees
    (:func:`launcher.filesystems.check_shared_root`);
    ``None`` on the local backend."""
    if spec.scheduler == "local":
        return None
    stand_in = Allocation(scheduler=spec.scheduler, job_id=None, nodes=(), cores_per_node=1, memory_per_node=0,
                          walltime=None, preview=True)
    try:
        check_shared_root(spec, stand_in)
    except UserError as exc:
        return Check("shared root", "fail", f"{exc.field}: {exc.message}", exc.fix)
    how = "asserted by filesystem.shared" if spec.filesystem.shared else "not a node-local filesystem"
    return Check("shared root", "ok", f"{spec.filesystem.root}: {how}")


def _job_file(spec: JobSpec, job_file: Path, *, overwrite: bool, root_failed: bool, striping_failed: bool,
              paths_failed: bool = False) -> Check:
    """Everything ``submit`` checks (``doctor``'s entrance of :func:`launcher.lifecycle.front.front_door`: ``submit``'s
    checks on the batch system's stand-in allocation, writing and queueing nothing) as one check; after a failed
    shared-root or striping check the rest is checked as if the root were shared and nothing striped (each problem is
    reported once)."""
    from launcher.lifecycle.front import front_door

    update: dict[str, object] = {"shared": True} if root_failed else {}
    if striping_failed:
        update["striping"] = type(spec.filesystem.striping)()
    if update:
        spec = spec.model_copy(update={"filesystem": spec.filesystem.model_copy(update=update)})
    try:
        steps = front_door("doctor", spec, job_file, overwrite=overwrite).steps
    except UserError as exc:
        if paths_failed and exc.field == "filesystem.root" and "bytes below" in exc.message:
            return Check("job file", "fail", f"{job_file}: not checked further, the root is too deep (path lengths)")
        where = ": ".join(part for part in (exc.file, exc.field) if part)
        return Check("job file", "fail", f"{where}: {exc.message}" if where else exc.message, exc.fix)
    return Check("job file", "ok", f"{job_file}: {spec.nodes} node(s), {len(steps)} step(s); jars, inputs, outputs "
                 "and memory as `submit` checks them")


def run_checks(spec: JobSpec, job_file: Path | None = None, *, overwrite: bool = False) -> list[Check]:
    """Every check, in order: Java and Hadoop (the runtime, its examples, its class-data-sharing archives), Spark and
    its examples jar, filesystem, flock, the operations a run makes in the root, striping,
    (a batch job's) shared root, hostname, what ``security: per-cluster`` needs (host names forward and back, a
    port for the KDC, clock skew: :func:`_secure_mode`), ports, batch systems; with ``job_file`` last everything
    ``submit`` checks (``overwrite``: as ``--overwrite``)."""
    shared = _shared_root(spec)
    keys = _realm_keys(spec)
    checks = [*_java_and_hadoop(spec), *_spark(spec), *_filesystem(spec), *([shared] if shared else []), _hostname(),
              *_secure_mode(spec), *([keys] if keys else []), _ports(spec), _batch_systems()]
    if job_file is not None:
        checks.append(_job_file(spec, job_file, overwrite=overwrite,
                                root_failed=shared is not None and shared.status == "fail",
                                striping_failed=any(c.name == "striping" and c.status == "fail" for c in checks),
                                paths_failed=any(c.name == "path lengths" and c.status == "fail" for c in checks)))
    return checks
