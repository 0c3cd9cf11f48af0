"""The job file's model: validated, frozen, typed; :mod:`launcher.config.load` resolves it once from layered sources.

Layers, lowest first (later wins; mappings merge key by key, lists are replaced whole):

1. built-in defaults (the field defaults below);
2. the site preset ``site-configs/<site>.yaml``, chosen by ``site:`` in any higher layer: the site layer's
   (``<site dir>/site-configs/``) or, else, the one shipped in the package;
3. the site's defaults ``<site dir>/config.yaml``, the site dir ``/etc/hpc-hadoop`` unless
   ``$HPC_HADOOP_SITE_DIR`` names another (:mod:`launcher.config.site`);
4. the user's defaults ``~/.config/hpc-hadoop/config.yaml`` (or ``$HPC_HADOOP_CONFIG``, with a warning when it
   hides that file: :func:`launcher.config.load.user_config_warning`);
5. the job file;
6. ``--set key.sub=value`` flags on the command line (the value is read as a YAML 1.2 scalar) and
   ``-D key=value`` (a Hadoop property, put into the ``*-site.xml`` that knows it:
   :func:`launcher.config.load.parse_define`).

``hpc-hadoop config`` shows the layers and where each value came from (:mod:`launcher.config.explain`).

Every YAML file is read with the YAML 1.2 core schema (:mod:`launcher.util.yamlio`): ``1:30:00`` is a string.

Unknown keys are errors that list the valid keys. Every error names the layer (file) the bad value
came from, the dotted field and a fix (:class:`launcher.util.errors.UserError`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from launcher.util.registry import BUILT_IN
from launcher.util.resources import site_configs_dir
from launcher.util.units import MiB, format_memory, format_walltime, parse_memory, parse_size, parse_walltime

#: Where the site presets live (package data: ``site-configs/`` of the checkout, launcher/util/resources.py).
SITE_DIR = site_configs_dir()


def _size(value: object) -> int:
    return parse_size(value)


#: The shortest walltime a job file may ask for, seconds: a cluster takes some seconds to come up and to be torn
#: down, and Slurm's ``--time`` counts whole minutes (issue 28 item 7: a 5 s walltime was accepted silently).
MIN_WALLTIME = 60


def _walltime(value: object) -> int:
    seconds = parse_walltime(value)
    if seconds < MIN_WALLTIME:
        raise ValueError(f"{value!r} is {seconds} s, too short to bring a cluster up, run a step and tear it down "
                         f"(use at least 1 minute: 1m or 1:00)")
    return seconds


#: A size in bytes; accepts ``512m``, ``2g``, ``1MiB`` or an int (bytes).
Size = Annotated[int, BeforeValidator(_size)]

#: Smallest container (map, reduce, ApplicationMaster, and so a NodeManager's offer), bytes: the task JVM
#: gets ``heap_ratio`` × container (~100 MiB at 128 MiB), about the least a MapReduce task or AM starts in
#: (Hadoop's own MiniMRYarnCluster tests run 128-512 MiB containers; YARN's default minimum allocation is 1 GiB).
MIN_CONTAINER = 128 * MiB
#: Smallest daemon heap, bytes: a ResourceManager or JobHistoryServer loads its web UI (Jetty, Jersey, Guice)
#: at start-up and fails with OutOfMemoryError below about 256 MiB.
MIN_DAEMON_HEAP = 256 * MiB
#: Smallest ``batch.memory_per_node``, bytes: the plan keeps 1 GiB for the OS
#: (``launcher.plan.cluster_plan.OS_RESERVE``)
#: and each node runs at least a NodeManager and one container next to it.
MIN_NODE_MEMORY = 1024 * MiB


def _memory(minimum: int, what: str) -> BeforeValidator:
    """The validator of a memory size: bytes inside; a bare number in a file or ``--set`` is MiB; at least
    ``minimum`` bytes."""
    return BeforeValidator(lambda value: parse_memory(value, minimum=minimum, what=what))


_MEMORY_OUT = PlainSerializer(format_memory, return_type=Union[int, str])
#: Memory of one container, bytes (a bare number is MiB; at least :data:`MIN_CONTAINER`).
ContainerMemory = Annotated[int, _memory(MIN_CONTAINER, "a container"), _MEMORY_OUT]
#: A daemon's heap, bytes (a bare number is MiB; at least :data:`MIN_DAEMON_HEAP`).
DaemonHeap = Annotated[int, _memory(MIN_DAEMON_HEAP, "a daemon heap"), _MEMORY_OUT]
#: Memory of a node, bytes (a bare number is MiB; at least :data:`MIN_NODE_MEMORY`).
NodeMemory = Annotated[int, _memory(MIN_NODE_MEMORY, "a node"), _MEMORY_OUT]
#: A duration in seconds; accepts Slurm's ``--time`` formats (a bare number is minutes, as in Slurm);
#: written back as ``HH:MM:SS`` so that a dumped spec reads back the same.
Walltime = Annotated[int, BeforeValidator(_walltime), PlainSerializer(format_walltime, return_type=str)]
def _seconds(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{value} is negative")
        return value
    return parse_walltime(value)


#: A duration in seconds: a bare number is SECONDS (unlike Walltime); strings as ``MM:SS`` / ``HH:MM:SS``.
Seconds = Annotated[int, BeforeValidator(_seconds)]
#: A Hadoop property value: written into the XML as text (``true``/``false`` for booleans).
PropertyValue = Union[str, int, float, bool]

CONFIG_FILES = ("core-site", "yarn-site", "mapred-site", "capacity-scheduler", "hdfs-site")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class StripeSpec(_Model):
    """The stripe layout asked for one directory: on Lustre `lfs setstripe -c COUNT -S SIZE -i INDEX DIR`, on
    OrangeFS the directory's `user.pvfs2.num_dfiles`, `dist_name`, `dist_params` attributes; new files inherit
    it. Checked against the filesystem when the plan is made (`render`, `submit`, `doctor`), before anything is
    written or queued; a filesystem without per-directory striping (GPFS, NFS, GlusterFS, ...) reports it as
    "striping not applicable". The run report gives the layout asked for, the directory's read back and the one a
    new file really got (a filesystem may give less: a count above the OSTs or data servers is clamped)."""

    count: int | None = Field(None, ge=-1, description="Stripe count: Lustre OSTs per file (`-1` = all of them), "
                              "OrangeFS data files per file (at least 1; a file gets at most one per data server). "
                              "`0` is refused: leave `count` out for the filesystem's default.")
    size: Size | None = Field(None, gt=0, description="Stripe size in bytes (`1m`, `4MiB`): Lustre `-S` (a "
                              "multiple of 64 KiB), OrangeFS `strip_size` of the `simple_stripe` distribution. Also "
                              "the default split size (`filesystem.split_size`).")
    index: int | None = Field(None, ge=-1, description="Lustre only: the OST of the first stripe (`-1` = any); "
                              "refused on OrangeFS, which has no such option.")

    @field_validator("count")
    @classmethod
    def _count_not_zero(cls, value: int | None) -> int | None:
        if value == 0:
            raise ValueError("a stripe count of 0 means 'the filesystem's default': leave count out instead")
        return value

    @property
    def requested(self) -> bool:
        """True if any of count, size, index is set."""
        return any(v is not None for v in (self.count, self.size, self.index))


class StripingSpec(_Model):
    """Stripe layout per directory of the cluster, `filesystem.striping.<role>` (each a mapping of `count`,
    `size`, `index`, below); a role left out keeps the layout its directory inherits."""

    input: StripeSpec = Field(default_factory=StripeSpec, description="`filesystem.input_dir` (only if empty when "
                              "the run starts: data already there is never restriped); in `shim` mode also every "
                              "directory Hadoop creates under it.")
    output: StripeSpec = Field(default_factory=StripeSpec, description="`filesystem.output_dir`; in `shim` "
                               "mode also every directory Hadoop creates under it.")
    staging: StripeSpec = Field(default_factory=StripeSpec, description="The MapReduce staging directory "
                                "(`staging/` of the cluster directory; not in `hdfs` mode, where it is on HDFS).")
    scratch: StripeSpec = Field(default_factory=StripeSpec, description="NodeManager local dirs (`nm-local/<host>`) "
                                "when they are on the shared filesystem (not with `filesystem.local_dirs`).")


#: Hadoop's default of ``fs.local.block.size`` (bytes): the least block size derived from a stripe size.
DEFAULT_LOCAL_BLOCK_SIZE = 32 << 20


def stripe_aligned_block_size(stripe: int, floor: int = DEFAULT_LOCAL_BLOCK_SIZE) -> int:
    """The smallest multiple of ``stripe`` that is at least ``floor`` (bytes): the split size derived from a stripe
    size, the rule of the shim's ``PfsFileSystem.alignedBlockSize`` (1 MiB → 32 MiB, 3 MiB → 33 MiB, 64 MiB → 64 MiB).

    Raises:
        ValueError: ``stripe`` or ``floor`` is not positive.
    """
    if stripe <= 0 or floor <= 0:
        raise ValueError(f"stripe and floor must be > 0: {stripe}, {floor}")
    return -(-floor // stripe) * stripe


#: ``filesystem.root`` when no layer sets it: a local directory standing in for the parallel filesystem (the
#: ``local`` backend's); the shipped examples leave the root to the site's layers (issue 39).
DEFAULT_ROOT = "/tmp/hpc-hadoop-pfs"


class FilesystemSpec(_Model):
    """Where the cluster keeps its files: the parallel filesystem (docs/architecture.md, Parallel filesystem decisions).

    The cluster directory is ``<root>/<user>/hpc-hadoop/<cluster-id>`` with ``conf``, ``staging``,
    ``history``, ``app-logs``, ``logs/<host>`` and ``nm-local/<host>`` under it.
    """

    root: str = Field(DEFAULT_ROOT, description="Directory on the shared (parallel) filesystem; "
                      "`$VAR` and `~` are expanded, a relative path means the job file's directory. The `local` "
                      "backend uses a local directory: the default, `/tmp/hpc-hadoop-pfs`, stands in for the "
                      "parallel filesystem on one machine; a site sets its own in its preset or site config (the "
                      "shipped examples leave it to them). Its path (and `local_dirs`'s) may not hold a space, a "
                      "backtick, a backslash or any of `[ ] { } * ? , : % # ^ | \" < >`, which Hadoop writes "
                      "URL-encoded or splits on. `<root>/<user>`, `<root>/<user>/hpc-hadoop` and the cluster "
                      "directory are made one level at a time, mode 0700, and each one already there must be yours, "
                      "not a symbolic link and not writable by group or others, or nothing starts (`root` itself "
                      "is not checked: a 1777 scratch is fine).")
    shared: bool | None = Field(
        None, description="Whether every node sees `root`: by default detected (a batch job whose root is on a "
        "node-local filesystem, ext4, xfs, btrfs, tmpfs, overlay, zfs..., is refused before it is queued); `true` "
        "asserts that it is shared (a node-local type exported to the nodes, or a one-machine stand-in of a "
        "batch system) and skips the check; `false` refuses every batch job on it.")
    mode: Literal["rawfs", "shim", "hdfs"] = Field(
        "rawfs", description="How Hadoop reaches the filesystem: `rawfs` = `fs.defaultFS=file:///` (the paper's "
        "raw access); `shim` = the `pfs://` FileSystem of hadoop-fs-shim (stripe-aware block size, layout of "
        "new directories, block locations on every node); `hdfs` = NameNode + DataNodes whose data dirs sit "
        "in the cluster directory (replication 1), for comparison.")
    type: Literal["auto", "lustre", "orangefs", "gpfs", "generic"] = Field(
        "auto", description="Filesystem class used for striping; `auto` = detected from `statfs` under `root`.")
    local_dirs: str | None = Field(
        None, description="Where the NodeManagers keep their local dirs (localized job files, container working "
        "directories, spills, map outputs). Default: node-local, in each node's working directory under "
        "`$TMPDIR` (else `/tmp`), deleted at teardown; a node where it cannot be made or has less than 2 GiB free "
        "uses the cluster directory instead, and the run report says so. A directory (`$TMPDIR`, an SSD, a "
        "tmpfs): under it on every node, in `hpc-hadoop-<user>/<cluster-id>/<host>`, each level made mode 0700 and "
        "refused (no daemon of the node starts) unless yours, not a symbolic link and not writable by group or "
        "others. `shared`: in the cluster directory on the shared filesystem, as the Spider paper ran (every "
        "container start and every spill then crosses the shared filesystem).")
    split_size: Size | None = Field(
        None, description="Input split size in bytes (`fs.local.block.size`; in `shim` mode `pfs.split.size`, "
        "which then wins over every stripe size). Default: the stripe size rounded up to the smallest multiple "
        "of at least 32 MiB (Hadoop's `file://` default), so splits stay stripe-aligned but a 1 MiB stripe "
        "gives 32 MiB splits, not 1 MiB ones: `striping.input.size` in `rawfs` and `hdfs` modes, each "
        "directory's own stripe size in `shim` mode; 32 MiB when no stripe size is known.")
    checksums: bool = Field(
        False, description="Hadoop's `.crc` side files on `file://`: `false` = none are written or verified "
        "(`fs.file.impl` = the shim's `NoChecksumLocalFileSystem`; the parallel filesystem keeps data integrity "
        "and is spared one extra file per output file); `true` = Hadoop's own `LocalFileSystem`, which writes "
        "a `.NAME.crc` beside every file and verifies it on reads.")
    input_dir: str = Field("${run_dir}/input", description="Input directory striped with `striping.input` "
                           "(created if missing; `${run_dir}`, `${fs_root}` are expanded).")
    output_dir: str = Field("${run_dir}/output", description="Directory striped with `striping.output`; "
                            "step outputs created under it inherit its layout.")
    striping: StripingSpec = Field(default_factory=StripingSpec,
                                   description="Stripe count/size/index per directory (`input`, `output`, "
                                   "`staging`, `scratch`; below).")

    @property
    def block_size(self) -> int | None:
        """``fs.local.block.size`` in bytes: ``split_size``, else the input stripe size rounded up to a multiple of
        at least 32 MiB (:func:`stripe_aligned_block_size`), else ``None`` (Hadoop's default, 32 MiB)."""
        if self.split_size:
            return self.split_size
        stripe = self.striping.input.size
        return stripe_aligned_block_size(stripe) if stripe else None

    @field_validator("root", "local_dirs", "input_dir", "output_dir")
    @classmethod
    def _paths_one_line(cls, value: str | None) -> str | None:
        return one_line_path(value)

    @field_validator("root", "local_dirs")
    @classmethod
    def _hadoop_dirs(cls, value: str | None) -> str | None:
        return hadoop_dir(value)


class HadoopSpec(_Model):
    """The Hadoop runtime and its tuning. Memory sizes take a unit (`2g`, `512m`); a bare number is MiB,
    as in Hadoop's `*.memory.mb` keys (held in bytes, written to Hadoop in MiB)."""

    home: str | None = Field(
        None, description="Hadoop install: our runtime (`lib/*.jar`) or a site install with the "
        "standard `share/hadoop/*` layout; default: `$HPC_HADOOP_HOME`, `$HADOOP_HOME`, then the "
        "runtime built in `hadoop-fs-shim/target/hadoop-runtime`, then the one `hpc-hadoop runtime install` put in "
        "the user prefix (`~/.local/share/hpc-hadoop/runtime/hadoop`) or the site prefix "
        "(`<venv>/share/hpc-hadoop/runtime/hadoop`).")
    java_home: str | None = Field(None, description="JDK for the client, the daemons and the "
                                  "containers (one JDK for all); default `$JAVA_HOME`, then `java` on PATH.")
    daemon_heap: DaemonHeap = Field(1 << 30, description="Heap of each daemon (ResourceManager, NodeManager, "
                              "JobHistoryServer); the paper (Table 1) used 2 GB.")
    map_memory: ContainerMemory = Field(1 << 30, description="Container size of a map task "
                                        "(`mapreduce.map.memory.mb`).")
    reduce_memory: ContainerMemory = Field(1 << 30, description="Container size of a reduce task.")
    am_memory: ContainerMemory = Field(1 << 30, description="Container size of the MapReduce ApplicationMaster.")
    heap_ratio: float = Field(0.8, gt=0.1, le=1.0, description="Task JVM heap ÷ container size "
                              "(Hadoop's `mapreduce.job.heap.memory-mb.ratio`, default 0.8).")
    containers_per_node: int | None = Field(
        None, ge=1, description="Concurrent map/reduce containers per node; default: the node's cores "
        "(the paper: 8 map + 5 reduce slots on 16 cores).")
    nodemanager_memory: ContainerMemory | None = Field(
        None, description="Memory a NodeManager offers (`yarn.nodemanager.resource.memory-mb`); default: "
        "containers_per_node × max(map, reduce) + ApplicationMaster, capped by the node's free RAM.")
    nodemanager_vcores: int | None = Field(None, ge=1, description="vcores a NodeManager offers; default: cores.")
    fast_start: bool = Field(True, description="Low-latency settings: 100 ms heartbeats and client "
                             "polling, uber mode for tiny jobs, quick-start JVM flags (C1 only, serial GC) for the "
                             "daemons, AM and tasks.")
    shuffle: Literal["auto", "http", "shared-fs"] = Field(
        "auto", description="How reducers get map outputs. `http`: Hadoop's shuffle, every map output fetched "
        "from the ShuffleHandler of the node that ran the map. `shared-fs`: each reducer reads map outputs "
        "straight from the NodeManager local dirs on the shared filesystem (hpc-hadoop's shuffle plugin; what it "
        "cannot read there it fetches over HTTP, per map). `auto`: `shared-fs` when `filesystem.local_dirs` is "
        "`shared`, else `http`. The run report gives each step's shuffle and its bytes read each way.")
    class_data_sharing: bool = Field(True, description="Start the daemons, the job clients and the MapReduce "
                                     "ApplicationMaster with JDK class-data-sharing archives (the site's, built by "
                                     "install.sh, else made by their first run and kept in ~/.cache/hpc-hadoop/cds):"
                                     " about half the daemons' start-up time, a third of the AM's CPU time.")
    properties: dict[str, dict[str, PropertyValue]] = Field(
        default_factory=dict, description="Any `*-site.xml` property, by file: `core-site`, `yarn-site`, "
        "`mapred-site`, `capacity-scheduler`, `hdfs-site`; these win over everything we set, except that task, "
        "node and shuffle timeouts are clamped to half the walltime. `-D key=value` on the command line sets one "
        "in the file that knows the key; a name no `*-default.xml` of the runtime knows gets a warning.")

    @field_validator("properties")
    @classmethod
    def _known_files(cls, value: dict[str, dict[str, PropertyValue]]) -> dict[str, dict[str, PropertyValue]]:
        for name in value:
            if name not in CONFIG_FILES:
                raise ValueError(f"unknown configuration file {name!r} (valid: {', '.join(CONFIG_FILES)})")
        return value

    @field_validator("home", "java_home")
    @classmethod
    def _home_one_line(cls, value: str | None) -> str | None:
        return one_line_path(value)


#: A scheduler name (partition, queue, account, QOS, parallel environment): what Slurm, PBS and Grid Engine
#: accept in names, plus ``,`` (Slurm's partition lists) and ``@`` (PBS ``queue@server``).
_BATCH_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.,+@:/=-]{0,127}")


def _control_character(value: str) -> str | None:
    """The first control character (newline, tab, ...) in ``value`` as ``repr``, or ``None``."""
    return next((repr(c) for c in value if ord(c) < 32 or ord(c) == 127), None)


def batch_name(value: str) -> str:
    """Check a name that goes into a ``#SBATCH``/``#PBS``/``#$`` line (partition, account, qos, SGE pe).

    Raises:
        ValueError: a newline or other control character (it would become a line of the batch script), a
            space, or a character outside letters, digits and ``_ . , + @ : / = -``.
    """
    bad = _control_character(value)
    if bad:
        raise ValueError(f"{value!r} contains the control character {bad}: it would end the batch directive "
                         "and become a line of the batch script (write the name on one line)")
    if not _BATCH_NAME_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a scheduler name (letters, digits and _ . , + @ : / = -; at most 128; "
                         "add other options with batch.extra_directives)")
    return value


#: Characters that Hadoop 3.4.2 cannot have in the path of a directory it runs in: whitespace, which YARN writes
#: URL-encoded (``%20``) when it makes the NodeManager's local dirs and on which its container launch script
#: splits (``/bin/mv: target 'c/...pid'``: measured); what ``java.net.URI`` quotes (``[ ] ^ | " < > ` \``, ``%``),
#: which ends up URL-encoded the same way (``%5B``: measured); glob characters (``{ } * ?``, input paths are
#: globs); ``,`` (``yarn.nodemanager.local-dirs`` and input paths are comma-separated lists); ``:`` (a
#: scheme to ``org.apache.hadoop.fs.Path``); ``#`` (a URI fragment).
HADOOP_UNSAFE = frozenset(' \t[]{}*?,:%#^|"<>`\\')
_VARIABLE_RE = re.compile(r"\$(\{\w+\}|\w+)")


def hadoop_unsafe(path: str) -> str | None:
    """The first character of :data:`HADOOP_UNSAFE` (or whitespace) in ``path``, described for an error line
    (``a space``, ``'['``), or ``None``. ``$VAR`` and ``${VAR}`` are left out (checked once expanded)."""
    bad = next((c for c in _VARIABLE_RE.sub("", path) if c in HADOOP_UNSAFE or c.isspace()), None)
    return None if bad is None else {" ": "a space", "\t": "a tab"}.get(bad, repr(bad))


#: The end of the error line for :func:`hadoop_unsafe`.
HADOOP_UNSAFE_WHY = "which Hadoop cannot have in a directory it runs in (YARN writes it URL-encoded or splits on it)"
HADOOP_SAFE_FIX = "choose a directory whose path has only letters, digits and / . _ - + = @ ~"


def hadoop_dir(value: str | None) -> str | None:
    """Field check of a directory that becomes Hadoop's (``filesystem.root``, ``filesystem.local_dirs``).

    Raises:
        ValueError: a character of :data:`HADOOP_UNSAFE`.
    """
    shown = None if value is None else hadoop_unsafe(value)
    if shown:
        raise ValueError(f"{value!r} contains {shown}, {HADOOP_UNSAFE_WHY}; {HADOOP_SAFE_FIX}")
    return value


def one_line_path(value: str | None) -> str | None:
    """Check a path that reaches generated files (batch directives such as ``--output=<root>/...``, ``-D`` flags,
    XML values): one line, no control character.

    Raises:
        ValueError: a newline or other control character (it would end a batch directive and become a line of
            the batch script).
    """
    bad = None if value is None else _control_character(value)
    if bad:
        raise ValueError(f"{value!r} contains the control character {bad}: a path in the cluster's files must be "
                         "one line (it would end a batch directive and become a line of the batch script)")
    return value


def _one_line(values: list[str]) -> list[str]:
    for value in values:
        bad = _control_character(value)
        if bad:
            raise ValueError(f"{value!r} contains the control character {bad}: it would become a line of its "
                             "own in the batch script (one directive per list item)")
    return values


class BatchSpec(_Model):
    """What the batch script asks of the scheduler (used by `submit` on Slurm, PBS, SGE)."""

    partition: str | None = Field(None, description="Slurm partition / PBS or SGE queue.")
    account: str | None = Field(None, description="Account (project) to charge.")
    qos: str | None = Field(None, description="Slurm QOS.")
    exclusive: bool = Field(True, description="Ask for whole nodes: Slurm `--exclusive` (all cores) and, without "
                            "`memory_per_node`, `--mem=0` (all memory); PBS Pro `place=scatter:excl`. Torque and Grid "
                            "Engine have no whole-node request: the cores come from `cores_per_node` (`ppn`, slots "
                            "per host of `sge.pe`). `false`: share nodes with other jobs (one core each unless "
                            "`cores_per_node`).")
    cores_per_node: int | None = Field(None, ge=1, description="Cores to ask for per node (Slurm "
                                       "`--cpus-per-task`, Torque `ppn`, PBS Pro `ncpus`, SGE slots per host); "
                                       "default: the whole node on Slurm and PBS Pro (`exclusive`), 1 on Torque and "
                                       "SGE. YARN is sized on what the allocation grants.")
    memory_per_node: NodeMemory | None = Field(None, description="Memory to ask for per node (Slurm "
                                               "`--mem`, PBS `mem`, SGE `h_vmem` per slot); a bare number is MiB; "
                                               "default: all of it with `exclusive` on Slurm (`--mem=0`).")
    extra_directives: list[str] = Field(default_factory=list, description="Directives added verbatim, "
                                        "e.g. `--constraint=ib` (as dask-jobqueue's job_extra_directives).")
    skip_directives: list[str] = Field(default_factory=list, description="Generated directives that contain "
                                       "any of these substrings are dropped.")
    prologue: list[str] = Field(default_factory=list, description="Shell lines run before the launcher, "
                                "e.g. `module load java/17`.")
    signal_lead: Seconds = Field(180, description="Teardown starts this long before the walltime ends "
                                  "(seconds), at most 10% of the walltime; the same lead on every scheduler "
                                  "(`launcher.schedulers.base.teardown_lead`).")

    @field_validator("partition", "account", "qos")
    @classmethod
    def _names_ok(cls, value: str | None) -> str | None:
        return None if value is None else batch_name(value)

    @field_validator("extra_directives", "skip_directives")
    @classmethod
    def _directives_one_line(cls, value: list[str]) -> list[str]:
        return _one_line(value)


# PBS's facts that its section of the job file (``pbs:``) is validated against. They are the PBS backend's
# (launcher/schedulers/pbs.py), which takes them from here, their one place: the job file's model sits below the
# schedulers (the layers contract of pyproject.toml), so it cannot take them from the backend.

#: A PBS flavor (``pbs.flavor``): Torque, or PBS Pro/OpenPBS.
PbsFlavor = Literal["torque", "pbspro"]
#: Each PBS flavor's fan-out launcher (:mod:`launcher.fanout.pbsdsh`).
PBS_FANOUTS: dict[PbsFlavor, str] = {"torque": "pbsdsh", "pbspro": "pbs_tmrsh"}
#: The PBS commands a job runs inside its allocation (``pbs.commands``): ``qstat`` (the allocation's walltime),
#: ``qdel`` and the fan-out launchers (:data:`PBS_FANOUTS`; a job runs its flavor's).
PBS_JOB_COMMANDS = ("qstat", "qdel", *PBS_FANOUTS.values())


class PbsSpec(_Model):
    """PBS settings (`scheduler: pbs`)."""

    flavor: PbsFlavor | None = Field(
        None, description="PBS dialect: `torque` (`-l nodes=N:ppn=M`, `pbsdsh`) or `pbspro` (PBS Pro/OpenPBS: "
        "`-l select=N:ncpus=M`, `pbs_tmrsh`); default: detected from `qstat --version`.")
    commands: dict[str, str] = Field(
        default_factory=dict, description="Absolute paths of the PBS commands the job runs inside its allocation "
        "(`qstat`, `qdel`, `pbsdsh` or `pbs_tmrsh`), e.g. `{qstat: /opt/pbs/bin/qstat}`; default: found on `PATH` "
        "at submission and written into the submitted job.yaml (PBS starts the job through a login shell, which "
        "resets `PATH` despite `-V`).")

    @field_validator("commands")
    @classmethod
    def _absolute_commands(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if name not in PBS_JOB_COMMANDS:
                raise ValueError(f"unknown PBS command {name!r} (valid: {', '.join(PBS_JOB_COMMANDS)})")
            one_line_path(path)
            if not os.path.isabs(path):
                raise ValueError(f"{name}: {path!r} is not an absolute path (write the command's full path, "
                                 f"e.g. /opt/pbs/bin/{name})")
        return value


class SgeSpec(_Model):
    """Grid Engine settings (`scheduler: sge`)."""

    pe: str = Field("mpi", description="Parallel environment (`-pe PE SLOTS`): one whose `allocation_rule` puts "
                    "`batch.cores_per_node` slots on each host and whose `control_slaves` is TRUE (`qrsh -inherit`).")

    @field_validator("pe")
    @classmethod
    def _pe_ok(cls, value: str) -> str:
        return batch_name(value)


class _StepBase(_Model):
    name: str | None = Field(None, description="Step name used in logs and the report.")
    args: list[str] = Field(default_factory=list, description="Program arguments; `${run_dir}` etc. are expanded. "
                            "A built-in example's input and output paths are made absolute against the job file's "
                            "directory; a jar's arguments are passed as written, and the step runs in its cluster "
                            "directory: give absolute paths (a relative one naming a file beside the job file is "
                            "warned about).")
    properties: dict[str, PropertyValue] = Field(default_factory=dict,
                                                 description="Per-job properties, passed as `-D key=value`.")
    output: str | None = Field(None, description="The step's output directory; it must not exist "
                               "(unless `--overwrite`). Known for the built-in examples.")

    @field_validator("args", mode="before")
    @classmethod
    def _args_as_strings(cls, value: object) -> object:
        if isinstance(value, list):
            return [str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in value]
        return value


#: The programs of Hadoop's examples jar a step may name (``example:``).
ExampleName = Literal["wordcount", "terasort", "teragen", "teravalidate", "pi", "grep", "randomwriter", "sort"]
EXAMPLES: tuple[str, ...] = get_args(ExampleName)


class ExampleStep(_StepBase):
    """A program of Hadoop's examples jar: `wordcount IN OUT`, `teragen ROWS OUT`, `terasort IN OUT`,
    `teravalidate OUT REPORT`, `pi MAPS SAMPLES`..."""

    example: ExampleName = Field(description="Name of the example program.")


class JarStep(_StepBase):
    """A user's MapReduce program: `jar` + optional `class` + `args`."""

    jar: str = Field(description="Path of the job jar (`${examples_jar}`, `${tests_jar}` allowed); a relative path "
                     "means the job file's directory.")
    main_class: str | None = Field(None, alias="class", description="Main class (default: the jar's manifest).")


class StreamingSpec(_Model):
    """Hadoop streaming: any executables as mapper and reducer."""

    mapper: str = Field(description="Mapper command, e.g. `cat` or `python3 mapper.py`.")
    reducer: str | None = Field(None, description="Reducer command; none = map-only job.")
    input: list[str] = Field(description="Input paths.")
    output: str = Field(description="Output directory.")
    files: list[str] = Field(default_factory=list, description="Files shipped to the tasks' working dirs "
                             "(relative paths: the job file's directory).")
    reducers: int | None = Field(None, ge=0, description="Number of reduce tasks; more than 0 needs a `reducer` "
                                 "(`cat` passes the sorted map output through).")

    @field_validator("input", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class StreamingStep(_Model):
    """A Hadoop streaming job."""

    name: str | None = None
    streaming: StreamingSpec
    properties: dict[str, PropertyValue] = Field(default_factory=dict)


#: ``executors:`` of a Spark step: ``auto`` (sized from the plan) or a number of executors.
Executors = Union[Literal["auto"], Annotated[int, Field(ge=1)]]


class SparkSpec(_Model):
    """Spark on the cluster's YARN (`spark:` and `pyspark:` steps, `hpc-hadoop exec -- spark-submit`). Used only
    when the job has a Spark step or this section."""

    home: str | None = Field(
        None, description="Spark install (`bin/spark-submit`, `jars/`): a site's `SPARK_HOME`; default: "
        "`$SPARK_HOME`, then the runtime `install.sh` puts in `spark-runtime/pyspark` (PyPI's `pyspark`, Spark "
        "built for Hadoop 3), then `spark/pyspark` in the user or site prefix of the Hadoop runtime. It must be at "
        "the same path on every node (the executors use its `jars/` in place).")
    python: str = Field("/usr/bin/python3", description="Python of the PySpark driver and executors "
                        "(`spark.pyspark.python`): one every node and every user can run.")
    executor_cores: int | None = Field(None, ge=1, description="Cores per executor; default: the largest "
                                       "divisor of a NodeManager's vcores up to 5.")
    executor_memory: ContainerMemory | None = Field(
        None, description="Heap of each executor (`spark.executor.memory`); default: what fits in a NodeManager "
        "next to the Spark ApplicationMaster, less YARN's memory overhead (`max(384 MiB, 10%)`).")
    conf: dict[str, PropertyValue] = Field(default_factory=dict, description="Any Spark property "
                                           "(`spark-defaults.conf` of the cluster); these win over ours.")

    @field_validator("home", "python")
    @classmethod
    def _paths_one_line(cls, value: str | None) -> str | None:
        return one_line_path(value)


class NotebookSpec(_Model):
    """`notebook:` (or `notebook: true`): JupyterLab on the cluster's master node, started with the cluster and
    stopped with it, its kernel's `spark` a SparkSession on the cluster's YARN (`hpc-hadoop notebook`, reached
    through `hpc-hadoop ui`). Implies Spark's defaults when the job has no `spark:` section."""

    dir: str | None = Field(
        None, description="Where the notebooks are kept (JupyterLab's root directory, on a filesystem the master "
        "node mounts); a relative path means the job file's directory; default: the job file's directory. Never "
        "inside the cluster directory, which `hpc-hadoop clean` deletes.")

    @field_validator("dir")
    @classmethod
    def _dir_one_line(cls, value: str | None) -> str | None:
        return one_line_path(value)


class _SparkAppSpec(_Model):
    """What every Spark application step has: its arguments, executors and output directory."""

    args: list[str] = Field(default_factory=list, description="Program arguments, passed as written; `${run_dir}` "
                            "etc. are expanded. The application runs in the step's cluster directory: give absolute "
                            "paths (a relative one naming a file beside the job file is warned about).")
    executors: Executors = Field("auto", description="Executors: `auto` (one per NodeManager vcore group, "
                                 "sized from the plan) or a number.")
    output: str | None = Field(None, description="The step's output directory; it must not exist "
                               "(unless `--overwrite`).")

    @field_validator("args", mode="before")
    @classmethod
    def _args_as_strings(cls, value: object) -> object:
        return _StepBase._args_as_strings(value)


class SparkJarSpec(_SparkAppSpec):
    """A Spark application in a jar, run with `spark-submit --master yarn --class CLASS JAR ARGS`."""

    jar: str = Field(description="The application jar (`${spark_examples_jar}` allowed); a relative path means "
                     "the job file's directory.")
    main_class: str = Field(alias="class", description="Main class, e.g. `org.hpchadoop.spark.examples.SparkPi`.")


class PySparkSpec(_SparkAppSpec):
    """A Python file run with `spark-submit --master yarn SCRIPT ARGS` and the cluster's Python (`spark.python`)."""

    script: str = Field(description="The Python file; a relative path means the job file's directory.")


class SparkStep(_Model):
    """A Spark application from a jar."""

    name: str | None = Field(None, description="Step name used in logs and the report.")
    spark: SparkJarSpec
    properties: dict[str, PropertyValue] = Field(default_factory=dict,
                                                 description="Spark properties, passed as `--conf key=value`.")


class PySparkStep(_Model):
    """A PySpark application."""

    name: str | None = Field(None, description="Step name used in logs and the report.")
    pyspark: PySparkSpec
    properties: dict[str, PropertyValue] = Field(default_factory=dict,
                                                 description="Spark properties, passed as `--conf key=value`.")


_STEP_MODELS: dict[str, type[_Model]] = {"Example": ExampleStep, "Jar": JarStep, "Streaming": StreamingStep,
                                         "Spark": SparkStep, "PySpark": PySparkStep}
#: The key that makes a step of each kind, in the order errors list them.
STEP_KEYS = ("example", "jar", "streaming", "spark", "pyspark")


def _step_kind(value: object) -> str | None:
    if isinstance(value, BaseModel):
        return {model: tag for tag, model in _STEP_MODELS.items()}[type(value)]  # type: ignore[index]
    if isinstance(value, Mapping):
        for tag in _STEP_MODELS:
            if tag.lower() in value:
                return tag
    return None


#: One step: chosen by which of ``example``, ``jar``, ``streaming``, ``spark``, ``pyspark`` it has.
Step = Annotated[Union[Annotated[ExampleStep, Tag("Example")], Annotated[JarStep, Tag("Jar")],
                       Annotated[StreamingStep, Tag("Streaming")], Annotated[SparkStep, Tag("Spark")],
                       Annotated[PySparkStep, Tag("PySpark")]], Discriminator(_step_kind)]


#: The values of ``scheduler``: the registered backends (:data:`launcher.util.registry.BUILT_IN`), in order; a new
#: scheduler is its module, its batch template and its line there (plus its settings section below, if it has some).
SCHEDULER_NAMES = tuple(BUILT_IN["scheduler"])
#: The batch systems among them (all but ``local``).
BATCH_SCHEDULERS = tuple(name for name in SCHEDULER_NAMES if name != "local")
if TYPE_CHECKING:
    SchedulerName = str
else:
    SchedulerName = Literal[SCHEDULER_NAMES]


#: ``security:``: ``per-cluster`` (a Kerberos realm per cluster), ``site`` (the site's realm), ``simple`` (no
#: authentication: Hadoop believes the user name a client claims).
SecurityMode = Literal["per-cluster", "site", "simple"]

#: A Kerberos principal: ``name@REALM`` or ``name/instance@REALM`` (letters, digits, ``.``, ``_``, ``-``; the realm in
#: upper case, as centres write them). Anything else (a parenthesis, a space) could not stand in ``auth_to_local``.
_PRINCIPAL = re.compile(r"(?P<name>[A-Za-z0-9._-]+)(?:/(?P<instance>[A-Za-z0-9._-]+))?@(?P<realm>[A-Z0-9.-]+)")


def split_principal(principal: str) -> tuple[str, str | None, str]:
    """``(name, instance or None, realm)`` of a principal (:data:`_PRINCIPAL`).

    Raises:
        ValueError: not ``name@REALM`` or ``name/instance@REALM``.
    """
    match = _PRINCIPAL.fullmatch(principal)
    if match is None:
        raise ValueError(f"{principal!r} is not a Kerberos principal: write name@REALM or name/instance@REALM "
                         "(letters, digits, '.', '_', '-'; the realm in upper case)")
    return match["name"], match["instance"], match["realm"]


def _expanded(value: str) -> str:
    """``~`` and ``$VAR`` expanded, made absolute (against the current directory: a job file's relative paths were
    already made absolute against its directory, :func:`launcher.config.load.absolute_paths`)."""
    return os.path.abspath(os.path.expandvars(os.path.expanduser(value)))


class KerberosSpec(_Model):
    """`security: site`: the site's Kerberos realm. The daemons log in from a keytab as a principal the centre gave
    you; your clients use your own ticket cache (`KRB5CCNAME`, or `/tmp/krb5cc_<uid>`; a `FILE:` cache, which Java
    reads). Read only under `security: site`."""

    service_principal: str = Field(
        description="The principal every daemon logs in as, with an instance part: `alice/hadoop@HPC.EXAMPLE.ORG` "
        "(Hadoop's RPC refuses a server principal without one: 'Kerberos principal name does NOT have the expected "
        "hostname part'). The instance is in lower case (Java lower-cases it).")
    keytab: str = Field(
        description="The keytab holding `service_principal`'s keys (a daemon must accept tickets: a ticket cache "
        "cannot); readable by you only (`chmod 600`). A relative path means the job file's directory. The launcher "
        "copies it into the cluster's `krb/` (0600) for the daemons and removes the copy at teardown; yours is never "
        "changed.")
    principal: str | None = Field(
        None, description="Your own principal, the one your ticket cache holds (`alice@HPC.EXAMPLE.ORG`): your "
        "clients authenticate with it. Default: the principal of your ticket cache (`KRB5CCNAME`, else "
        "`/tmp/krb5cc_<uid>`), else `<login name>@<service_principal's realm>`.")
    krb5_conf: str | None = Field(
        None, description="The site's `krb5.conf` (its realm's KDCs), on every node. Default: `KRB5_CONFIG`, else "
        "`/etc/krb5.conf`.")

    @field_validator("service_principal")
    @classmethod
    def _service_has_an_instance(cls, value: str) -> str:
        name, instance, realm = split_principal(value)
        if instance is None:
            raise ValueError(f"{value!r} has no instance part, and Hadoop's RPC refuses a server principal without "
                             f"one ('Kerberos principal name does NOT have the expected hostname part'): ask the "
                             f"centre for a principal such as {name}/hadoop@{realm} and its keytab")
        if instance != instance.lower():
            raise ValueError(f"{value!r}: Java lower-cases a server principal's instance, so tickets would be asked "
                             f"for {name}/{instance.lower()}@{realm}: use a principal whose instance is in lower case")
        return value

    @field_validator("principal")
    @classmethod
    def _principal_ok(cls, value: str | None) -> str | None:
        if value is not None:
            split_principal(value)
        return value

    @field_validator("keytab")
    @classmethod
    def _keytab_private(cls, value: str) -> str:
        path = _expanded(value)
        if not os.path.exists(path):
            raise ValueError(f"{path} does not exist: give the keytab the centre made for your service principal")
        if not os.path.isfile(path):
            raise ValueError(f"{path} is not a file: give the keytab file itself")
        mode = os.stat(path).st_mode & 0o777
        if mode & 0o077:
            raise ValueError(f"{path} has mode {mode:04o}: anyone who reads it can act as its principal (chmod 600 "
                             f"{path})")
        if not os.access(path, os.R_OK):
            raise ValueError(f"{path} is not readable by you: use your own keytab (chmod 600 {path})")
        one_line_path(path)
        return path

    @field_validator("krb5_conf")
    @classmethod
    def _krb5_conf_exists(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = _expanded(value)
        if not os.path.isfile(path):
            raise ValueError(f"{path} is not a file: give the site's krb5.conf (or leave krb5_conf out for "
                             "KRB5_CONFIG or /etc/krb5.conf)")
        one_line_path(path)
        return path


class JobSpec(_Model):
    """A whole job file, validated. Frozen: nothing changes it after loading."""

    name: str = Field(description="Job name: letters, digits, `-`, `_`, `.`; used in the cluster id.")
    site: str | None = Field(None, description="Site preset from `site-configs/`, the site's own or a shipped one "
                             "(see `hpc-hadoop sites`).")
    scheduler: SchedulerName = Field(
        "local", description="Batch system: `local` (this machine, no scheduler), "
        f"{', '.join(f'`{name}`' for name in BATCH_SCHEDULERS)}.")
    nodes: int = Field(1, ge=1, description="Nodes in the allocation (one NodeManager each).")
    walltime: Walltime = Field(3600, description="Walltime: `HH:MM:SS`, `D-HH:MM:SS`, `90m`, `2h`; a bare number "
                               "is minutes (Slurm's convention: `90` = 1 h 30); the cluster is torn down before it "
                               "ends.")
    nodemanager_on_master: bool = Field(True, description="Run a NodeManager on the master node too.")
    interface: str | None = Field(None, description="Network interface the daemons bind to (e.g. `ib0`); "
                                  "default: the address of the node's hostname.")
    setup: list[str] = Field(default_factory=list, description="Shell lines run on the master node before the "
                             "cluster starts (stage input data, unpack a corpus); `${run_dir}` etc. are expanded; "
                             "a failing line stops the run.")
    security: SecurityMode = Field(
        "per-cluster", description="Who may use the cluster. `per-cluster` (the default): a Kerberos realm of the "
        "cluster's own (a KDC on the master node, keytabs in the cluster directory): only the owner's credentials are "
        "accepted. `simple`: Hadoop's simple authentication, which believes the user name a client claims (anyone who "
        "reaches the ResourceManager can run code as the owner; the run report warns); the default of "
        "`filesystem.mode: hdfs`, whose DataNodes Hadoop secures only with privileged ports or SASL and HTTPS. "
        "`site`: the site's own realm (no KDC started; the daemons log in as the service principal and keytab of "
        "`kerberos:`).")
    kerberos: KerberosSpec | None = Field(None, validate_default=True, description="`security: site` only: the "
                                          "site's principals, keytab and krb5.conf.")
    filesystem: FilesystemSpec = Field(default_factory=FilesystemSpec)
    hadoop: HadoopSpec = Field(default_factory=HadoopSpec)
    batch: BatchSpec = Field(default_factory=BatchSpec)
    pbs: PbsSpec = Field(default_factory=PbsSpec)
    sge: SgeSpec = Field(default_factory=SgeSpec)
    spark: SparkSpec | None = Field(None, description="Spark on YARN; a job with a `spark:` or `pyspark:` step "
                                    "or a `notebook:` gets the defaults.")
    notebook: NotebookSpec | None = Field(None, description="JupyterLab on the master node with the cluster "
                                          "(`notebook: true`, or its fields).")
    steps: list[Step] = Field(
        default_factory=list, description="Hadoop jobs run in order; a failing step stops the run. Required by "
        "`submit` and `run`; `start` (an interactive cluster) runs them, if any, once the cluster is up.")

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", value):
            raise ValueError(f"{value!r} is not a valid name (letters, digits, '-', '_', '.'; at most 64)")
        return value

    @model_serializer(mode="wrap")
    def _without_no_notebook(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump (``plan.json``'s ``spec``, a cluster's ``job.yaml``) without ``notebook`` when there is none: a
        spec without one is written as releases before the field wrote it."""
        data: dict[str, Any] = handler(self)
        if data.get("notebook") is None:
            data.pop("notebook", None)
        return data

    @field_validator("notebook", mode="before")
    @classmethod
    def _notebook_flag(cls, value: object) -> object:
        """``notebook: true`` is ``notebook: {}``; ``false`` (or ``null``) is no notebook."""
        if value is True:
            return {}
        if value is False:
            return None
        return value

    @field_validator("steps", mode="before")
    @classmethod
    def _steps_have_a_kind(cls, value: object) -> object:
        if isinstance(value, list):
            for index, item in enumerate(value):
                if _step_kind(item) is None:
                    raise ValueError(f"step {index + 1} has none of `example`, `jar`, `streaming`, `spark`, "
                                     "`pyspark`")
                kinds = [k for k in STEP_KEYS if isinstance(item, Mapping) and k in item]
                if len(kinds) > 1:
                    raise ValueError(f"step {index + 1} has both `{kinds[0]}` and `{kinds[1]}`: a step runs one "
                                     "program (split it into two steps)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _hdfs_is_simple(cls, data: object) -> object:
        """``filesystem.mode: hdfs`` (for comparisons only) defaults to ``security: simple``: Hadoop runs a secure
        DataNode only on privileged ports (root) or with SASL data-transfer protection and HTTPS (keystores), which
        an on-demand cluster of an unprivileged user does not have (Hadoop's "Secure DataNode" documentation). An
        explicit ``security: per-cluster`` with ``hdfs`` is refused with that fix."""
        if isinstance(data, Mapping):
            filesystem = data.get("filesystem")
            hdfs = isinstance(filesystem, Mapping) and filesystem.get("mode") == "hdfs"
            if hdfs and "security" not in data:
                return {**data, "security": "simple"}
            if hdfs and data.get("security") == "per-cluster":
                raise ValueError("security: per-cluster cannot secure filesystem.mode: hdfs (a secure DataNode needs "
                                 "privileged ports or SASL and HTTPS): set security: simple, or use mode rawfs/shim")
        return data

    @field_validator("kerberos")
    @classmethod
    def _kerberos_only_for_site(cls, value: KerberosSpec | None, info: ValidationInfo) -> KerberosSpec | None:
        security = info.data.get("security")
        if value is not None and security is not None and security != "site":
            raise ValueError(f"read only under security: site, and this job has security: {security} (remove "
                             "`kerberos:` or set security: site)")
        if value is None and security == "site":
            raise ValueError("security: site needs this section: add service_principal (e.g. you/hadoop@YOUR.REALM) "
                             "and keytab (its keys, chmod 600), from your centre")
        return value

    @field_validator("filesystem")
    @classmethod
    def _site_is_not_for_hdfs(cls, value: FilesystemSpec, info: ValidationInfo) -> FilesystemSpec:
        """``filesystem.mode: hdfs`` (comparisons only) is not secured: Hadoop runs a secure DataNode only on
        privileged ports or with SASL data-transfer protection and HTTPS, which an unprivileged user's cluster has
        not (as under ``per-cluster``)."""
        if info.data.get("security") == "site" and value.mode == "hdfs":
            raise ValueError("security: site cannot secure mode: hdfs (a secure DataNode needs privileged ports or "
                             "SASL and HTTPS): set security: simple, or use mode rawfs or shim")
        return value

    @field_validator("nodes")
    @classmethod
    def _local_is_one_node(cls, value: int, info: ValidationInfo) -> int:
        if info.data.get("scheduler") == "local" and value != 1:
            raise ValueError("the local backend runs on this one machine: set nodes: 1, "
                             f"or scheduler: {'/'.join(BATCH_SCHEDULERS)}")
        return value

    def property_names(self, defines: Sequence[str] = ()) -> dict[str, list[str]]:
        """Every Hadoop property name of this job, by where it was given: ``-D`` (the command line's ``defines``,
        which land in ``hadoop.properties`` too and are named for the option only), ``hadoop.properties.<file>``,
        ``steps.N.properties`` and ``steps.N.args`` (``-D`` generic options,
        :func:`launcher.config.properties.defines_in_args`) of the steps Hadoop runs (``example``, ``jar``,
        ``streaming``; ``N`` counts from 1, as the job file's errors name a step). Spark steps' ``properties`` are
        Spark's (``--conf``), not checked here (issue 28 item 6)."""
        from launcher.config.properties import defines_in_args

        from_option = list(dict.fromkeys(d.partition("=")[0].strip() for d in defines))
        named: dict[str, list[str]] = {"-D": from_option} if from_option else {}
        for file, keys in self.hadoop.properties.items():
            named[f"hadoop.properties.{file}"] = [key for key in keys if key not in from_option]
        for i, step in enumerate(self.steps, start=1):
            if isinstance(step, (ExampleStep, JarStep, StreamingStep)):
                named[f"steps.{i}.properties"] = list(step.properties)
            if isinstance(step, (ExampleStep, JarStep)):
                named[f"steps.{i}.args"] = defines_in_args(step.args)
        return {where: keys for where, keys in named.items() if keys}


#: Step kinds run by ``spark-submit`` (re-exported by :mod:`launcher.render.spark`).
SPARK_KINDS = ("spark", "pyspark")


def uses_spark(spec: JobSpec) -> bool:
    """True when the job has a ``spark:`` or ``notebook:`` section or a ``spark:``/``pyspark:`` step: only then is
    Spark looked for, ``spark-conf/`` written and :mod:`launcher.render.spark` imported (re-exported there)."""
    return (spec.spark is not None or spec.notebook is not None
            or any(isinstance(s, (SparkStep, PySparkStep)) for s in spec.steps))
