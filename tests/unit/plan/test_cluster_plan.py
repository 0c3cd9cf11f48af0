"""Roles, ports, directories and memory sizing (launcher/plan/cluster_plan.py)."""

from __future__ import annotations

import getpass
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.filesystems import decide
from launcher.plan.cluster_plan import (
    PORT_BLOCK,
    PORT_OFFSETS,
    ClusterPlan,
    Ports,
    choose_ports,
    expand_root,
    port_range,
    size_memory,
    spec_offsets,
    used_offsets,
)
from launcher.render.config import render_config
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers.base import Allocation
from launcher.schedulers.slurm import SlurmScheduler
from launcher.util.errors import UserError
from launcher.util.units import GiB
from tests.ports import binds, eligible, every_base, in_own_network, listening
from tests.users import make_user

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]
AllocFactory = Callable[..., Allocation]


# -- memory ------------------------------------------------------------------------------------

def test_size_memory_defaults_from_cores(make_spec: SpecFactory, make_allocation: AllocFactory) -> None:
    mem = size_memory(make_spec(), make_allocation(cores=8, memory=64 * GiB))
    # 8 containers of 1 GiB + one 1 GiB ApplicationMaster, well under 64 GiB - 1 GiB OS - 3 daemon heaps
    assert mem.nodemanager_mb == 8 * 1024 + 1024
    assert mem.nodemanager_vcores == 8
    assert (mem.map_mb, mem.reduce_mb, mem.am_mb, mem.daemon_heap_mb) == (1024, 1024, 1024, 1024)
    assert (mem.map_heap_mb, mem.reduce_heap_mb, mem.am_heap_mb) == (819, 819, 819)
    assert mem.min_allocation_mb == 256


def test_size_memory_is_capped_by_node_memory(make_spec: SpecFactory, make_allocation: AllocFactory) -> None:
    mem = size_memory(make_spec(), make_allocation(cores=32, memory=16 * GiB))
    assert mem.nodemanager_mb == 16 * 1024 - 1024 - 3 * 1024


def test_size_memory_uses_largest_container(make_spec: SpecFactory, make_allocation: AllocFactory) -> None:
    spec = make_spec(hadoop={"containers_per_node": 2, "map_memory": "1g", "reduce_memory": "3g",
                             "am_memory": "512m", "heap_ratio": 0.5})
    mem = size_memory(spec, make_allocation(cores=8))
    assert mem.nodemanager_mb == 2 * 3072 + 512
    assert (mem.map_heap_mb, mem.reduce_heap_mb, mem.am_heap_mb) == (512, 1536, 256)
    assert mem.min_allocation_mb == 256


def test_size_memory_explicit_values_win(make_spec: SpecFactory, make_allocation: AllocFactory) -> None:
    spec = make_spec(hadoop={"nodemanager_memory": "6g", "nodemanager_vcores": 3, "map_memory": "128m"})
    mem = size_memory(spec, make_allocation(cores=8))
    assert mem.nodemanager_mb == 6144
    assert mem.nodemanager_vcores == 3
    assert mem.min_allocation_mb == 128


def test_size_memory_explicit_nodemanager_memory_too_small(make_spec: SpecFactory,
                                                          make_allocation: AllocFactory) -> None:
    with pytest.raises(UserError, match="less than one 1024 MiB container"):
        size_memory(make_spec(hadoop={"nodemanager_memory": "512m"}), make_allocation())


def test_size_memory_too_small_node(make_spec: SpecFactory, make_allocation: AllocFactory) -> None:
    with pytest.raises(UserError) as info:
        size_memory(make_spec(hadoop={"map_memory": "2g"}), make_allocation(cores=4, memory=5 * GiB))
    assert info.value.field == "hadoop.map_memory"
    assert "5 GiB" in str(info.value)
    assert "2048 MiB container" in str(info.value)
    assert info.value.fix


# -- ports -------------------------------------------------------------------------------------

#: What a second user on the node binds in a block: the ResourceManager's web port (the readiness poll's first
#: request goes to it with the launcher's cookie, issue 36 item 1).
SQUATTED = PORT_OFFSETS["rm_web"]


def candidates(cluster_id: str, count: int = 64) -> list[int]:
    """The port-block bases ``choose_ports`` tried before issue 36, as a second user computed them from the public
    cluster id: ``sha256(cluster_id) % slots`` first, then a stride of 7919 blocks, ``count`` of them."""
    first, end = port_range()
    slots = (end - first) // PORT_BLOCK
    start = int(hashlib.sha256(cluster_id.encode()).hexdigest(), 16) % slots
    return [first + ((start + i * 7919) % slots) * PORT_BLOCK for i in range(count)]


def test_ports_offsets() -> None:
    ports = Ports(base=30000)
    assert (ports.rm_scheduler, ports.rm_tracker, ports.rm, ports.rm_admin, ports.rm_web) == (
        30000, 30001, 30002, 30003, 30004)
    assert (ports.nm, ports.shuffle, ports.jhs, ports.jhs_web, ports.dn_ipc) == (30005, 30008, 30009, 30010, 30016)
    assert list(ports.all()) == list(range(30000, 30032))
    with pytest.raises(AttributeError):
        _ = ports.nonsense


@pytest.mark.parametrize(("mode", "count"), [("rawfs", 12), ("hdfs", 17)])
def test_used_offsets_are_those_of_the_plans_roles(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                   tmp_path: Path, mode: str, count: int) -> None:
    """YARN's daemons use +0..+11 of the block; HDFS mode adds the NameNode's and DataNodes' +12..+16; the other 15
    (or 20) ports of the block are free for anyone to take."""
    spec = make_spec(filesystem={"root": str(tmp_path), "mode": mode})
    plan = make_test_plan(spec)
    assert used_offsets(r for node in plan.nodes for r in node.roles) == set(range(count))
    assert spec_offsets(spec, 3) == spec_offsets(spec, 1) == set(range(count))
    assert spec_offsets(make_spec(filesystem={"root": str(tmp_path), "mode": mode}, nodemanager_on_master=False),
                        2) == set(range(count))


def test_choose_ports_returns_a_block_whose_used_ports_bind() -> None:
    offsets = used_offsets(["resourcemanager", "historyserver", "nodemanager"])
    ports = choose_ports(offsets)
    first, end = port_range()
    assert first <= ports.base and ports.base + PORT_BLOCK <= end
    assert (ports.base - first) % PORT_BLOCK == 0
    assert ports.base in eligible([ports.base])
    assert all(binds(ports.base + offset) for offset in offsets)


def test_64_busy_candidate_blocks_of_a_cluster_id_no_longer_stop_its_plan(make_spec: SpecFactory,
                                                                          make_test_plan: PlanFactory) -> None:
    """Issue 36 item 4: a second user binds the ResourceManager's web port in each of the 64 blocks computed from
    the cluster id; its plan (``start``) failed with ``no free block of 32 ports``, and now takes another block."""
    cluster_id = "wordcount-20240101-000000-abcd"
    tried = candidates(cluster_id)
    with listening(base + SQUATTED for base in tried):
        plan = make_test_plan(make_spec(), cluster_id=cluster_id)
    assert plan.ports.base not in tried


def test_two_plans_of_one_cluster_id_start_at_unpredictable_blocks(make_spec: SpecFactory,
                                                                   make_test_plan: PlanFactory) -> None:
    """The block no longer follows from the cluster id: 8 plans of one id take (at least 4) different blocks."""
    bases = {make_test_plan(make_spec(), cluster_id="same-20240101-000000-abcd").ports.base for _ in range(8)}
    assert len(bases) >= 4, bases


def test_a_busy_port_no_daemon_uses_takes_no_block_away(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                        tmp_path: Path) -> None:
    """In a network namespace of its own (tests/netns.py): every block but one has the ResourceManager's web port
    taken; that one has ports +17 and +31 taken, which no daemon uses, and +12, the NameNode's (``hdfs`` mode only):
    a YARN cluster gets that block, an ``hdfs`` one none."""
    cluster_id = "spare-20240101-000000-abcd"
    spare = eligible(candidates(cluster_id))[0]  # the block the id's hash gave first (before issue 36)

    def body() -> tuple[int, str]:
        with listening([*(base + SQUATTED for base in every_base() if base != spare),
                        spare + 17, spare + 31, spare + PORT_OFFSETS["nn"]]):
            yarn = make_test_plan(make_spec(), cluster_id=cluster_id).ports.base
            with pytest.raises(UserError) as refused:
                make_test_plan(make_spec(filesystem={"root": str(tmp_path), "mode": "hdfs"}), cluster_id=cluster_id)
        return yarn, str(refused.value)

    yarn, refused = in_own_network(body)
    assert yarn == spare
    assert "no free port block" in refused and "offsets 0-16" in refused


def test_a_busy_port_a_daemon_uses_takes_its_block_away(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    """Two blocks are free but for the JobHistoryServer's admin port (+11) in one of them: the plan gets the other,
    every time."""
    taken, free = eligible(every_base())[100:102]

    def body() -> set[int]:
        with listening([*(base + SQUATTED for base in every_base() if base not in (taken, free)),
                        taken + PORT_OFFSETS["jhs_admin"]]):
            return {make_test_plan(make_spec()).ports.base for _ in range(4)}

    assert in_own_network(body) == {free}


def test_no_free_block_names_the_blocks_tried_and_the_user_holding_a_busy_port(make_spec: SpecFactory,
                                                                              make_test_plan: PlanFactory) -> None:
    """Issue 36 item 4: one socket of hhmallory's in every block (on the ResourceManager's web port) stops the plan
    with one line (exit 2) that says how many blocks were tried and that she holds them."""
    mallory = make_user("hhmallory")
    ports = [base + SQUATTED for base in every_base()]
    tried = len(eligible(every_base()))
    binder = ("import socket, sys, time\n"
              "socks = []\n"
              "for port in map(int, sys.argv[1:]):\n"
              "    s = socket.socket(); s.bind(('0.0.0.0', port)); s.listen(); socks.append(s)\n"
              "print('ready', flush=True)\n"
              "time.sleep(120)\n")

    def body() -> tuple[str, int]:
        squatter = mallory.popen(["/usr/bin/python3", "-c", binder, *map(str, ports)])
        try:
            assert squatter.stdout is not None and squatter.stdout.readline() == "ready\n"
            with pytest.raises(UserError) as refused:
                make_test_plan(make_spec())
        finally:
            squatter.kill()
            squatter.wait()
        return str(refused.value), refused.value.exit_code

    message, exit_code = in_own_network(body)
    assert exit_code == 2 and "\n" not in message
    assert f"tried all {tried} blocks of {PORT_BLOCK} ports" in message, message
    assert f"listened on by hhmallory (uid {mallory.uid}), who listens on {tried} of the {tried} ports" in message
    sample = re.search(r"e\.g\. port (\d+),", message)
    assert sample and int(sample[1]) in ports, message


def test_a_busy_port_that_does_not_listen_is_said_so(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    """A port bound but not listening (no LISTEN entry, no owner to name) in every block: the refusal says so."""

    def body() -> str:
        with listening((base + SQUATTED for base in every_base()), listen=False), \
                pytest.raises(UserError) as refused:
            make_test_plan(make_spec())
        return str(refused.value)

    assert "held by a socket that does not listen" in in_own_network(body)


# -- roles and directories --------------------------------------------------------------------

def test_roles_on_three_nodes(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    plan = make_test_plan(make_spec())
    assert plan.master.name == "n1" and plan.master.address == "10.0.0.1"
    assert [n.name for n in plan.nodes] == ["n1", "n2", "n3"]
    assert plan.nodes[0].roles == ("resourcemanager", "historyserver", "nodemanager")
    assert plan.nodes[1].roles == ("nodemanager",)
    assert plan.nodes[2].roles == ("nodemanager",)
    assert [n.name for n in plan.nodemanagers] == ["n1", "n2", "n3"]
    assert plan.rm_web == f"http://10.0.0.1:{plan.ports.rm_web}"
    assert plan.jhs_web == f"http://10.0.0.1:{plan.ports.jhs_web}"
    assert plan.scheduler == "slurm" and plan.job_id == "4242" and plan.fanout == "srun"
    assert plan.deadline == 1_700_000_000.0 + 3600
    assert plan.node("n2") is plan.nodes[1]
    with pytest.raises(KeyError, match="n9"):
        plan.node("n9")


def test_nodemanager_on_master_false(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    plan = make_test_plan(make_spec(nodemanager_on_master=False))
    assert plan.nodes[0].roles == ("resourcemanager", "historyserver")
    assert [n.name for n in plan.nodemanagers] == ["n2", "n3"]


def test_single_node_keeps_its_nodemanager_even_when_master_is_excluded(
        make_spec: SpecFactory, make_test_plan: PlanFactory, make_allocation: AllocFactory) -> None:
    plan = make_test_plan(make_spec(nodes=1, nodemanager_on_master=False), make_allocation(1))
    assert plan.nodes[0].roles == ("resourcemanager", "historyserver", "nodemanager")


def test_nm_local_dirs_are_node_local_by_default_with_the_cluster_dir_as_fallback(
        make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    plan = make_test_plan(make_spec())
    dirs = [n.nm_local_dir for n in plan.nodes]
    assert dirs == [f"{n.work_dir}/nm-local" for n in plan.nodes] and len(set(dirs)) == 3
    assert not any(d.startswith(plan.run_dir) for d in dirs)
    assert [n.nm_shared_dir for n in plan.nodes] == [str(plan.path("nm-local", name)) for name in ("n1", "n2", "n3")]
    assert [n.log_dir for n in plan.nodes] == [str(plan.path("logs", name)) for name in ("n1", "n2", "n3")]


def test_nm_local_dirs_shared_puts_them_in_the_cluster_dir(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                           tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"  # a keyword, not a path relative to the job file
    job.write_text("name: t\nscheduler: local\nfilesystem:\n  local_dirs: shared\n"
                   "steps:\n  - example: pi\n    args: [1, 10]\n")
    spec, _ = load_spec(job)
    assert spec.filesystem.local_dirs == "shared"
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared"}))
    assert [n.nm_local_dir for n in plan.nodes] == [str(plan.path("nm-local", name)) for name in ("n1", "n2", "n3")]
    assert all(n.nm_shared_dir == "" for n in plan.nodes)


def test_filesystem_local_dirs_moves_nm_local_dirs(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                   monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MY_NODE_SCRATCH", "/node-local/ssd")
    plan = make_test_plan(make_spec(filesystem={"root": str(tmp_path), "local_dirs": "$MY_NODE_SCRATCH"}))
    user = getpass.getuser()
    dirs = [n.nm_local_dir for n in plan.nodes]
    assert dirs == [f"/node-local/ssd/hpc-hadoop-{user}/{plan.cluster_id}/{name}" for name in ("n1", "n2", "n3")]
    assert not any(d.startswith(plan.run_dir) for d in dirs)


def test_default_run_dir_is_under_root_user_and_cluster_id(make_spec: SpecFactory, alloc3: Allocation,
                                                           fake_runtime: HadoopRuntime, pfs_root: Path) -> None:
    from launcher.plan.cluster_plan import make_plan

    plan = make_plan(make_spec(), alloc3, fake_runtime, filesystem=decide(make_spec().filesystem))
    assert plan.cluster_id.startswith("t-")
    assert plan.run_dir == str(pfs_root / getpass.getuser() / "hpc-hadoop" / plan.cluster_id)
    assert plan.conf_dir == Path(plan.run_dir, "conf")
    assert list(pfs_root.iterdir()) == []  # planning creates nothing


def test_fewer_nodes_than_asked(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                make_allocation: AllocFactory) -> None:
    with pytest.raises(UserError, match="2 node\\(s\\).*asks for 3") as info:
        make_test_plan(make_spec(nodes=3), make_allocation(2))
    assert info.value.field == "nodes"


def test_plan_keeps_memory_runtime_and_spec(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                            fake_runtime: HadoopRuntime, alloc3: Allocation) -> None:
    spec = make_spec()
    plan = make_test_plan(spec)
    assert plan.memory == size_memory(spec, alloc3)
    assert plan.runtime == fake_runtime
    assert plan.spec == spec


# -- expand_root ---------------------------------------------------------------------------------

def test_expand_root_expands_vars_and_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SCRATCH_ROOT", "/lustre/scratch")
    monkeypatch.setenv("HOME", "/home/someone")
    assert expand_root("$MY_SCRATCH_ROOT/x") == Path("/lustre/scratch/x")
    assert expand_root("${MY_SCRATCH_ROOT}") == Path("/lustre/scratch")
    assert expand_root("~/pfs") == Path("/home/someone/pfs")


def test_expand_root_unset_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_SCRATCH", raising=False)
    with pytest.raises(UserError, match="unset environment variable") as info:
        expand_root("$NO_SUCH_SCRATCH/hadoop")
    assert info.value.field == "filesystem.root"
    assert info.value.fix


@pytest.mark.parametrize("relative", ["scratch", "./scratch", "scratch/../x"])
def test_expand_root_relative_path(relative: str) -> None:
    with pytest.raises(UserError, match="not an absolute path") as info:
        expand_root(relative)
    assert info.value.field == "filesystem.root"


@pytest.mark.parametrize(("root", "shown"), [("/scratch/my data", "a space"), ("/scratch/run[1]", "'['"),
                                             ("/scratch/a,b", "','"), ("/scratch/x:y", "':'"),
                                             ("/scratch/50%", "'%'"), ("/scratch/{a}", "'{'")])
def test_expand_root_refuses_characters_hadoop_mangles(root: str, shown: str) -> None:
    """Measured with Hadoop 3.4.2: a space or a ``[`` in the root ended up URL-encoded (``a%20c``, ``%5B``) in the
    NodeManager's local dirs, beside the root, and the container launch script split on the space."""
    with pytest.raises(UserError, match=f"contains {re.escape(shown)}, which Hadoop cannot have") as info:
        expand_root(root)
    assert info.value.field == "filesystem.root" and "letters, digits" in info.value.fix


def test_expand_root_keeps_ordinary_site_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH", "/lustre/atlas1/csc001/scratch/jdoe")
    for root in ("$SCRATCH/hadoop", "/gpfs/alpine/proj-shared/csc001/run_2026-11.v2", "/p/lustre1/jdoe+x@y=z~"):
        assert expand_root(root).is_absolute()


def test_a_local_dir_hadoop_would_split_is_refused_as_written_and_once_expanded(
        make_spec: SpecFactory, alloc3: Allocation, fake_runtime: HadoopRuntime,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from launcher.plan.cluster_plan import make_plan

    with pytest.raises(UserError, match="contains ','") as info:
        make_spec(filesystem={"local_dirs": "/local/a,/local/b"})
    assert info.value.field == "filesystem.local_dirs"
    monkeypatch.setenv("NODE_LOCALS", "/local/a,/local/b")
    spec = make_spec(filesystem={"local_dirs": "$NODE_LOCALS"})
    with pytest.raises(UserError, match="contains ','") as info:
        make_plan(spec, alloc3, fake_runtime, filesystem=decide(spec.filesystem))
    assert info.value.field == "filesystem.local_dirs"


def test_make_plan_reports_a_bad_root(make_spec: SpecFactory, alloc3: Allocation, fake_runtime: HadoopRuntime) -> None:
    from launcher.plan.cluster_plan import make_plan

    filesystem = decide(make_spec().filesystem)
    with pytest.raises(UserError, match="not an absolute path"):
        make_plan(make_spec(filesystem={"root": "relative/dir"}), alloc3, fake_runtime, filesystem=filesystem)


# -- persistence -------------------------------------------------------------------------------

def test_plan_json_round_trip(make_spec: SpecFactory, make_test_plan: PlanFactory, tmp_path: Path) -> None:
    plan = make_test_plan(make_spec(nodemanager_on_master=False, walltime="1-00:00:30",
                                    hadoop={"properties": {"yarn-site": {"x": True}}}))
    again = ClusterPlan.from_json(plan.to_json())
    assert again == plan
    assert isinstance(again.nodes, tuple) and isinstance(again.master.roles, tuple)
    assert again.ports.rm == plan.ports.rm
    assert again.spec == plan.spec
    assert again.spec.walltime == 86430
    run_dir = tmp_path / "saved"
    run_dir.mkdir()
    (run_dir / "plan.json").write_text(plan.to_json())
    assert ClusterPlan.load(run_dir) == plan


#: ``plan.json`` as release 0.1.0 wrote it (the hand-written ``to_json`` before :class:`ClusterPlan` was a record,
#: issue 38), from the unit tests' 3-node Slurm plan (``make_test_plan``), its paths moved below :data:`OLD_ROOT`:
#: ``plan-0.1.0.json`` ``security: site`` (a keytab, the user's principal), ``interface: ib0``,
#: ``filesystem.local_dirs: shared``, ``hadoop.shuffle: http``, 4 containers a node; ``plan-0.1.0-hdfs.json``
#: ``filesystem.mode: hdfs`` (a NameNode and DataNodes, ``security: simple``).
OLD_PLANS = Path(__file__).resolve().parents[2] / "data"
OLD_ROOT = "/scratch/alice/t"


def old_plan(name: str, tmp_path: Path) -> str:
    """The text of the fixture ``name``, its paths moved from :data:`OLD_ROOT` into ``tmp_path``, where its keytab
    is made (the spec is validated again as the plan is read: a ``security: site`` keytab must exist)."""
    keytab = tmp_path / "alice.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    return (OLD_PLANS / name).read_text().replace(OLD_ROOT, str(tmp_path))


@pytest.mark.parametrize("name", ["plan-0.1.0.json", "plan-0.1.0-hdfs.json"])
def test_plan_json_of_release_0_1_0_reads_and_is_written_back_byte_for_byte(name: str, tmp_path: Path) -> None:
    """Issue 38: the plan read through the record machinery writes the very text release 0.1.0 wrote (keys sorted,
    the spec as the job file's fields, the runtime as its ``to_dict``)."""
    text = old_plan(name, tmp_path)
    plan = ClusterPlan.from_json(text)
    assert plan.to_json() == text
    assert ClusterPlan.from_json(plan.to_json()) == plan


def test_plan_json_of_release_0_1_0_has_every_field(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "plan.json").write_text(old_plan("plan-0.1.0.json", tmp_path))
    plan = ClusterPlan.load(run_dir)
    assert plan.schema_version == 1 and plan.cluster_id == "t-20240101-000000-abcd" and plan.user == "alice"
    assert (plan.scheduler, plan.job_id, plan.fanout, plan.fanout_program) == ("slurm", "4242", "srun", None)
    assert plan.deadline == 1700003600.0 and plan.cores_per_node == 8 and plan.preview is False
    assert plan.run_dir == f"{tmp_path}/pfs/me/hpc-hadoop/t-20240101-000000-abcd"
    assert plan.conf_dir == Path(plan.run_dir, "conf")
    assert [n.name for n in plan.nodes] == ["n1", "n2", "n3"] and plan.master == plan.nodes[0]
    assert isinstance(plan.nodes, tuple) and plan.master.roles == ("resourcemanager", "historyserver", "nodemanager")
    assert plan.nodes[2].roles == ("nodemanager",) and plan.nodes[2].address == "10.0.0.3"
    assert plan.nodes[1].nm_local_dir == f"{plan.run_dir}/nm-local/n2" and plan.nodes[1].nm_shared_dir == ""
    assert plan.nodes[1].work_dir == f"{tmp_path}/node-tmp/hpc-hadoop-alice/t-20240101-000000-abcd/n2"
    assert plan.ports.base == 31328 and (plan.ports.rm, plan.ports.rm_web, plan.ports.dn_ipc) == (31330, 31332, 31344)
    assert plan.rm_web == "http://10.0.0.1:31332" and plan.jhs_web == "http://10.0.0.1:31338"
    memory = plan.memory
    assert (memory.nodemanager_mb, memory.nodemanager_vcores, memory.map_mb, memory.am_heap_mb) == (5120, 8, 1024, 819)
    fs = plan.filesystem
    assert (fs.name, fs.label, fs.shim_layout, fs.magic, fs.flock_error) == ("generic", "ext4", "none", "0xef53",
                                                                             "not checked")
    assert plan.runtime == HadoopRuntime(
        home=tmp_path / "hadoop", version="3.4.2",
        classpath=(f"{tmp_path}/hadoop/lib/*", f"{tmp_path}/hadoop/extra-classpath"),
        examples_jar=tmp_path / "hadoop/lib/hadoop-mapreduce-examples-3.4.2.jar",
        tests_jar=tmp_path / "hadoop/lib/hadoop-mapreduce-client-jobclient-3.4.2-tests.jar",
        streaming_jar=tmp_path / "hadoop/lib/hadoop-streaming-3.4.2.jar", java_home=tmp_path / "jdk", java_version=17)
    spec = plan.spec
    assert isinstance(spec, JobSpec) and spec.security == "site" and spec.interface == "ib0"
    assert spec.kerberos is not None and spec.kerberos.keytab == str(tmp_path / "alice.keytab")
    assert plan.security.mode == "site" and plan.security.realm == "HPC.EXAMPLE.ORG"
    assert plan.shuffle == "http" and plan.shuffle_dirs()["n2"] == plan.nodes[1].nm_local_dir
    with pytest.raises(ValidationError, match="frozen"):
        plan.user = "bob"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        plan.master.name = "n9"  # type: ignore[misc]


def test_plan_json_of_release_0_1_0_in_hdfs_mode(tmp_path: Path) -> None:
    plan = ClusterPlan.from_json(old_plan("plan-0.1.0-hdfs.json", tmp_path))
    assert plan.spec.filesystem.mode == "hdfs" and plan.spec.security == "simple"
    assert plan.master.roles == ("namenode", "datanode", "resourcemanager", "historyserver", "nodemanager")
    assert plan.nodes[1].roles == ("datanode", "nodemanager")
    assert plan.fs_uri("/x") == f"hdfs://10.0.0.1:{plan.ports.nn}/x" and plan.ports.nn == plan.ports.base + 12


@pytest.mark.parametrize("hadoop", [{}, {"am_memory": "1g", "map_memory": "512m", "nodemanager_memory": "3g"},
                                    {"am_memory": "2g", "map_memory": "1g", "nodemanager_memory": "4g"},
                                    {"am_memory": "512m", "map_memory": "512m", "nodemanager_memory": "64g"}])
def test_am_share_lets_two_ams_run_and_leaves_room_for_a_map(make_spec: SpecFactory, alloc3: Allocation,
                                                             fake_runtime: HadoopRuntime, hadoop: dict) -> None:
    from launcher.plan.cluster_plan import make_plan

    spec = make_spec(hadoop=hadoop, nodes=1)
    plan = make_plan(spec, alloc3, fake_runtime, filesystem=decide(spec.filesystem))
    total = plan.memory.nodemanager_mb * len(plan.nodemanagers)
    share = plan.am_resource_fraction
    assert 0.5 <= share <= 1.0 and round(share, 2) == share
    assert share * total >= min(2 * plan.memory.am_mb, total - plan.memory.map_mb)
    assert total - share * total >= plan.memory.map_mb
    assert f"<value>{share}</value>" in render_config(plan)["capacity-scheduler.xml"]


# -- issue 11, folded from tests/unit/test_real_site.py: Issue #11, "right on a real site": YAML 1.2 reading,
# memory in MiB, one teardown lead, our own walltime exception, batch names checked before they reach a batch
# script.


def test_bare_map_memory_is_mib_in_the_rendered_properties(make_spec: SpecFactory,
                                                           make_allocation: Callable[..., Any]) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec = make_spec(hadoop={"map_memory": 2048})
    mem = size_memory(spec, make_allocation())
    assert (mem.map_mb, mem.map_heap_mb) == (2048, 1638)


def test_small_node_blames_memory_per_node(make_spec: SpecFactory) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec = make_spec(batch={"memory_per_node": "4g"}, hadoop={"map_memory": "4g"})
    with pytest.raises(UserError) as info:
        size_memory(spec, SlurmScheduler().preview_allocation(spec))
    assert info.value.field == "batch.memory_per_node"
    assert "hadoop.map_memory" in str(info.value)


def test_small_nodemanager_memory_blames_itself(make_spec: SpecFactory, make_allocation: Callable[..., Any]) -> None:
    """Issue 11 (was ``tests/unit/test_real_site.py``)."""
    spec = make_spec(hadoop={"nodemanager_memory": "512m"})
    with pytest.raises(UserError) as info:
        size_memory(spec, make_allocation())
    assert info.value.field == "hadoop.nodemanager_memory"
