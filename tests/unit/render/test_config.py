"""The rendered Hadoop configuration (launcher/render/config.py and templates/)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from launcher.config.load import load_spec
from launcher.config.spec import JobSpec
from launcher.filesystems import decide
from launcher.lifecycle.submit import render_script
from launcher.plan.cluster_plan import ClusterPlan, used_offsets
from launcher.render.clients import render_wrappers
from launcher.render.config import (
    CONFIG_TEMPLATES,
    EXCLUDE_FILE,
    NO_CHECKSUM_FILESYSTEM,
    SECURE_TEMPLATES,
    render_config,
    write_files,
    xml_value,
)
from launcher.runtime.hadoop import HadoopRuntime
from launcher.schedulers import get_scheduler
from launcher.schedulers.base import Allocation, BatchScheduler
from launcher.util.errors import UserError

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]

XML_FILES = ("core-site.xml", "yarn-site.xml", "mapred-site.xml", "capacity-scheduler.xml")
#: The low-latency settings of fast_start (docs/architecture.md, Hadoop runtime), all 100 ms when on.
FAST_SETTINGS = {
    "yarn-site.xml": ["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"],
    "mapred-site.xml": ["yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms",
                        "mapreduce.client.progressmonitor.pollinterval", "mapreduce.client.completion.pollinterval",
                        "yarn.client.application-client-protocol.poll-interval-ms"],
}


def properties(text: str) -> dict[str, list[str]]:
    """name → every value given to it in a *-site.xml (a name should appear once)."""
    root = ET.fromstring(text)
    assert root.tag == "configuration"
    found: dict[str, list[str]] = {}
    for prop in root.findall("property"):
        found.setdefault(prop.findtext("name"), []).append(prop.findtext("value"))
    return found


def single(text: str) -> dict[str, str]:
    """name → value, checking that no name appears twice."""
    props = properties(text)
    duplicates = {k: v for k, v in props.items() if len(v) > 1}
    assert not duplicates, f"properties set twice: {duplicates}"
    return {k: v[0] for k, v in props.items()}


@pytest.fixture
def plan(make_spec: SpecFactory, make_test_plan: PlanFactory) -> ClusterPlan:
    return make_test_plan(make_spec())


@pytest.fixture
def files(plan: ClusterPlan) -> dict[str, str]:
    return render_config(plan)


def test_every_file_is_rendered(files: dict[str, str]) -> None:
    assert set(files) == {*CONFIG_TEMPLATES, *SECURE_TEMPLATES, EXCLUDE_FILE}  # per-cluster: the default
    assert files[EXCLUDE_FILE] == ""  # no node taken out of YARN yet
    assert all(text.strip() for name, text in files.items() if name != EXCLUDE_FILE)


@pytest.mark.parametrize("name", XML_FILES)
def test_every_xml_parses_and_starts_with_the_declaration(files: dict[str, str], name: str) -> None:
    assert files[name].startswith('<?xml version="1.0"')
    assert single(files[name])


def test_no_hdfs(files: dict[str, str]) -> None:
    core = single(files["core-site.xml"])
    assert core["fs.defaultFS"] == "file:///"
    assert core["fs.file.checksum.verify"] == "false"
    # never RawLocalFileSystem as file:// (FileSystem.getLocal casts to LocalFileSystem): the shim's subclass
    assert core["fs.file.impl"] == NO_CHECKSUM_FILESYSTEM == "org.hpchadoop.fs.NoChecksumLocalFileSystem"


@pytest.mark.parametrize("mode", ["rawfs", "shim", "hdfs"])
def test_no_crc_files_by_default_and_hadoops_checksums_on_request(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                                  tmp_path: Path, mode: str) -> None:
    default = single(render_config(make_test_plan(make_spec(filesystem={"root": str(tmp_path), "mode": mode})))
                     ["core-site.xml"])
    assert default["fs.file.impl"] == NO_CHECKSUM_FILESYSTEM
    assert default["fs.file.checksum.verify"] == "false"
    assert default["fs.AbstractFileSystem.file.impl"] == "org.apache.hadoop.fs.local.RawLocalFs"
    spec = make_spec(filesystem={"root": str(tmp_path), "mode": mode, "checksums": True})
    assert spec.filesystem.checksums is True
    hadoops = single(render_config(make_test_plan(spec))["core-site.xml"])
    # Hadoop's LocalFileSystem, which writes and verifies .crc files, with explicit modes kept private (issue 36)
    assert hadoops["fs.file.impl"] == "org.hpchadoop.fs.PrivateLocalFileSystem"
    assert "fs.file.checksum.verify" not in hadoops and "fs.AbstractFileSystem.file.impl" not in hadoops


@pytest.mark.parametrize("mode", ["rawfs", "hdfs"])
def test_the_ports_the_configuration_gives_out_are_the_plans_used_offsets(make_spec: SpecFactory,
                                                                         make_test_plan: PlanFactory, tmp_path: Path,
                                                                         mode: str) -> None:
    """Issue 36 item 4: ``choose_ports`` needs only the used offsets of the block free (``DAEMON_PORTS`` of the plan's
    roles), so every port of the block a daemon is configured with must be one of them, and each of them is given
    out: the ``host:port`` values and ``*.port`` keys of every rendered file, in YARN and in ``hdfs`` mode."""
    plan = make_test_plan(make_spec(filesystem={"root": str(tmp_path), "mode": mode}))
    block = plan.ports.all()
    given = set()
    for text in render_config(plan).values():
        if not text.startswith("<?xml"):
            continue
        for name, value in single(text).items():
            numbers = re.findall(r":(\d+)\b", value) + ([value] if name.endswith(".port") and value.isdigit() else [])
            given.update(int(n) - block.start for n in numbers if int(n) in block)
    used = used_offsets(r for node in plan.nodes for r in node.roles)
    assert given == used == set(range(17 if mode == "hdfs" else 12))


def test_resourcemanager_addresses_use_master_and_plan_ports(plan: ClusterPlan, files: dict[str, str]) -> None:
    yarn = single(files["yarn-site.xml"])
    a, p = plan.master.address, plan.ports
    assert a == "10.0.0.1"
    assert yarn["yarn.resourcemanager.hostname"] == a
    assert yarn["yarn.resourcemanager.scheduler.address"] == f"{a}:{p.rm_scheduler}"
    assert yarn["yarn.resourcemanager.resource-tracker.address"] == f"{a}:{p.rm_tracker}"
    assert yarn["yarn.resourcemanager.address"] == f"{a}:{p.rm}"
    assert yarn["yarn.resourcemanager.admin.address"] == f"{a}:{p.rm_admin}"
    assert yarn["yarn.resourcemanager.webapp.address"] == f"{a}:{p.rm_web}"
    assert yarn["yarn.nodemanager.address"] == f"${{yarn.nodemanager.hostname}}:{p.nm}"
    mapred = single(files["mapred-site.xml"])
    assert mapred["mapreduce.jobhistory.address"] == f"{a}:{p.jhs}"
    assert mapred["mapreduce.jobhistory.webapp.address"] == f"{a}:{p.jhs_web}"
    assert mapred["mapreduce.shuffle.port"] == str(p.shuffle)
    every_port = [v for text in files.values() if text.startswith("<?xml")
                  for v in single(text).values() if v.startswith(f"{a}:")]
    assert all(p.base <= int(v.rsplit(":", 1)[1]) < p.base + 32 for v in every_port)


def test_memory_values_equal_the_plan(plan: ClusterPlan, files: dict[str, str]) -> None:
    m = plan.memory
    yarn = single(files["yarn-site.xml"])
    assert yarn["yarn.nodemanager.resource.memory-mb"] == str(m.nodemanager_mb)
    assert yarn["yarn.nodemanager.resource.cpu-vcores"] == str(m.nodemanager_vcores)
    assert yarn["yarn.scheduler.minimum-allocation-mb"] == str(m.min_allocation_mb)
    assert yarn["yarn.scheduler.maximum-allocation-mb"] == str(m.nodemanager_mb)
    mapred = single(files["mapred-site.xml"])
    assert mapred["mapreduce.map.memory.mb"] == str(m.map_mb)
    assert mapred["mapreduce.reduce.memory.mb"] == str(m.reduce_mb)
    assert mapred["yarn.app.mapreduce.am.resource.mb"] == str(m.am_mb)
    assert mapred["mapreduce.map.java.opts"].split()[0] == f"-Xmx{m.map_heap_mb}m"
    assert mapred["mapreduce.reduce.java.opts"].split()[0] == f"-Xmx{m.reduce_heap_mb}m"
    assert mapred["yarn.app.mapreduce.am.command-opts"].split()[0] == f"-Xmx{m.am_heap_mb}m"
    assert f"HADOOP_HEAPSIZE_MAX={m.daemon_heap_mb}m" in files["hadoop-env.sh"]


def test_directories_and_shared_storage_settings(plan: ClusterPlan, files: dict[str, str]) -> None:
    yarn = single(files["yarn-site.xml"])
    assert yarn["yarn.nodemanager.local-dirs"] == "${hpc.nm.local.dir}"
    assert yarn["yarn.nodemanager.log-dirs"] == "${hpc.nm.log.dir}"
    assert yarn["yarn.nodemanager.hostname"] == "${hpc.node.address}"
    assert yarn["yarn.resourcemanager.recovery.enabled"] == "false"
    assert yarn["yarn.nodemanager.recovery.enabled"] == "false"
    assert yarn["yarn.nodemanager.remote-app-log-dir"] == f"file://{plan.run_dir}/app-logs"
    # issue 25 item 1: log aggregation without Hadoop's 1777 chmod of app-logs/ (refused by OrangeFS)
    assert yarn["yarn.log-aggregation.file-controller.TFile.class"] == "org.hpchadoop.fs.PreparedDirTFileController"
    assert yarn["yarn.admin.acl"] == plan.user
    mapred = single(files["mapred-site.xml"])
    assert mapred["mapreduce.map.speculative"] == "false"
    assert mapred["mapreduce.reduce.speculative"] == "false"
    assert mapred["yarn.app.mapreduce.am.staging-dir"] == f"file://{plan.run_dir}/staging"
    assert mapred["mapreduce.jobhistory.done-dir"] == f"file://{plan.run_dir}/history/done"
    cap = single(files["capacity-scheduler.xml"])
    assert cap["yarn.scheduler.capacity.node-locality-delay"] == "-1"
    for queue in ("root", "root.default"):  # root's ACLs default to "*" and a child queue inherits them
        assert cap[f"yarn.scheduler.capacity.{queue}.acl_submit_applications"] == plan.user
        assert cap[f"yarn.scheduler.capacity.{queue}.acl_administer_queue"] == plan.user


def test_classpath_reaches_the_containers(plan: ClusterPlan, files: dict[str, str]) -> None:
    expected = ",".join(plan.runtime.classpath)
    assert single(files["yarn-site.xml"])["yarn.application.classpath"] == expected
    assert single(files["mapred-site.xml"])["mapreduce.application.classpath"] == expected


def test_split_size_sets_the_local_block_size(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                              tmp_path: Path) -> None:
    with_split = render_config(make_test_plan(make_spec(filesystem={"root": str(tmp_path), "split_size": "256m"})))
    assert single(with_split["core-site.xml"])["fs.local.block.size"] == str(256 << 20)
    without = render_config(make_test_plan(make_spec()))
    assert "fs.local.block.size" not in single(without["core-site.xml"])


@pytest.mark.parametrize(("stripe", "block"), [("1m", 32 << 20), ("3m", 33 << 20), ("64m", 64 << 20)])
def test_input_stripe_gives_a_stripe_aligned_split_of_at_least_32_mib(
        make_spec: SpecFactory, make_test_plan: PlanFactory, tmp_path: Path, stripe: str, block: int) -> None:
    spec = make_spec(filesystem={"root": str(tmp_path), "striping": {"input": {"size": stripe}}})
    assert spec.filesystem.block_size == block
    core = single(render_config(make_test_plan(spec))["core-site.xml"])
    assert core["fs.local.block.size"] == str(block)
    assert "pfs.split.size" not in core


def test_property_override_replaces_the_template_value_and_extras_are_appended(
        make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    spec = make_spec(hadoop={"properties": {
        "yarn-site": {"yarn.nodemanager.vmem-check-enabled": True, "yarn.resourcemanager.am.max-attempts": 3,
                      "my.extra.flag": False, "my.extra.text": "a<&>b \"q\""},
        "mapred-site": {"mapreduce.map.speculative": True},
        "core-site": {"io.file.buffer.size": 65536},
        "capacity-scheduler": {"yarn.scheduler.capacity.root.default.capacity": 50},
    }})
    files = render_config(make_test_plan(spec))
    yarn = single(files["yarn-site.xml"])
    assert yarn["yarn.nodemanager.vmem-check-enabled"] == "true"
    assert yarn["yarn.resourcemanager.am.max-attempts"] == "3"
    assert yarn["my.extra.flag"] == "false"
    assert yarn["my.extra.text"] == 'a<&>b "q"'
    assert "a&lt;&amp;&gt;b" in files["yarn-site.xml"]
    names = [p.findtext("name") for p in ET.fromstring(files["yarn-site.xml"]).findall("property")]
    assert names[-2:] == ["my.extra.flag", "my.extra.text"]  # extras after the template's own
    assert single(files["mapred-site.xml"])["mapreduce.map.speculative"] == "true"
    assert single(files["core-site.xml"])["io.file.buffer.size"] == "65536"
    assert single(files["capacity-scheduler.xml"])["yarn.scheduler.capacity.root.default.capacity"] == "50"
    # another file's overrides do not leak
    assert "my.extra.flag" not in single(files["mapred-site.xml"])


def test_override_with_a_dotted_name_from_set(make_test_plan: PlanFactory, pfs_root: Path) -> None:
    from launcher.config.load import load_spec

    spec, _ = load_spec(None, data={"name": "t", "scheduler": "slurm", "nodes": 3,
                                    "filesystem": {"root": str(pfs_root)}, "steps": [{"example": "pi"}]},
                        sets=['hadoop.properties.yarn-site."yarn.nodemanager.resource.memory-mb"=777'])
    assert single(render_config(make_test_plan(spec))["yarn-site.xml"])["yarn.nodemanager.resource.memory-mb"] == "777"


@pytest.mark.parametrize(("value", "text"), [(True, "true"), (False, "false"), (3, "3"), (0.5, "0.5"),
                                             ("a<b>&c", "a&lt;b&gt;&amp;c"), ("plain", "plain")])
def test_xml_value(value: object, text: str) -> None:
    assert xml_value(value) == text


def test_hadoop_env_passes_bash_n(tmp_path: Path, files: dict[str, str]) -> None:
    script = tmp_path / "hadoop-env.sh"
    script.write_text(files["hadoop-env.sh"])
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_hadoop_env_quotes_odd_paths(make_spec: SpecFactory, make_test_plan: PlanFactory, tmp_path: Path,
                                     fake_runtime: HadoopRuntime, alloc3: Allocation) -> None:
    from launcher.plan.cluster_plan import make_plan

    odd = dataclasses.replace(fake_runtime, java_home=tmp_path / "my jdk's $HOME",
                              classpath=(str(tmp_path / "lib dir") + "/*",))
    plan = make_plan(make_spec(), alloc3, odd, filesystem=decide(make_spec().filesystem), cluster_id="q-1",
                     run_dir=tmp_path / "run dir")
    script = tmp_path / "env.sh"
    script.write_text(render_config(plan)["hadoop-env.sh"])
    proc = subprocess.run(["bash", "-c", f'. "{script}" && printf "%s\\n" "$JAVA_HOME" "$HADOOP_CONF_DIR" '
                           '"$HADOOP_CLASSPATH" "$HADOOP_OPTS"'],
                          capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    java_home, conf_dir, cp, opts = proc.stdout.splitlines()
    assert java_home == str(tmp_path / "my jdk's $HOME")
    assert conf_dir == str(tmp_path / "run dir" / "conf")
    assert cp == str(tmp_path / "lib dir") + "/*"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in opts


def test_fast_start_sets_100_ms(files: dict[str, str]) -> None:
    for name, keys in FAST_SETTINGS.items():
        props = single(files[name])
        assert all(props[key] == "100" for key in keys), name
    mapred = single(files["mapred-site.xml"])
    assert mapred["mapreduce.job.ubertask.enable"] == "true"
    assert "-XX:+UseSerialGC" in mapred["yarn.app.mapreduce.am.command-opts"]


def test_fast_start_false_removes_the_100_ms_settings(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    files = render_config(make_test_plan(make_spec(hadoop={"fast_start": False})))
    yarn = single(files["yarn-site.xml"])
    assert yarn["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"] == "1000"
    mapred = single(files["mapred-site.xml"])
    for key in FAST_SETTINGS["mapred-site.xml"]:
        assert key not in mapred
    assert "mapreduce.job.ubertask.enable" not in mapred
    assert "-XX:TieredStopAtLevel=1" not in mapred["yarn.app.mapreduce.am.command-opts"]
    intervals = {k: v for name in XML_FILES for k, v in single(files[name]).items() if "interval" in k}
    assert intervals and "100" not in intervals.values()


def test_large_clusters_keep_the_default_nm_heartbeat(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                      make_allocation: Callable[..., Allocation]) -> None:
    plan = make_test_plan(make_spec(nodes=65), make_allocation(65))
    yarn = single(render_config(plan)["yarn-site.xml"])
    assert yarn["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"] == "1000"


def test_write_files_never_overwrites(tmp_path: Path, files: dict[str, str]) -> None:
    conf = tmp_path / "conf"
    written = write_files(conf, files)
    assert sorted(p.name for p in written) == sorted(files)
    assert (conf / "core-site.xml").read_text() == files["core-site.xml"]
    assert (conf / "hadoop-env.sh").stat().st_mode & 0o777 == 0o700
    with pytest.raises(FileExistsError):
        write_files(conf, files)


# -- issue 13 item 12, folded from tests/unit/test_escaping.py: Values from a job file that reach a shell, an
# XML file or a batch script are escaped or refused (issue 13 item 12): a fuzz test feeds hostile values
# (newlines, quotes, ``$(...)``, backquotes, ``]]>``, ``;``) to every field that ends up in a generated file,
# then parses every XML file, runs ``bash -n`` on every script, and runs the scripts themselves
# (``hadoop-env.sh`` sourced, the ``bin/`` wrappers' ``classpath``, each batch script with a stand-in Python
# that records its arguments): a value is either refused with a ``UserError`` or arrives exactly as written, and
# the canary command never runs.


NASTY = ["plain.value-1", "a\nb", "it's", 'say "hi"', "$(touch CANARY)", "`touch CANARY`", "x]]>y",
         "a;touch CANARY", "$HOME", "back\\slash", "two words", "<&>", "tab\there", "#hash"]


FIELDS: dict[str, Callable[[str, Path], dict[str, Any]]] = {
    "name": lambda v, tmp: {"name": v},
    "filesystem.root": lambda v, tmp: {"filesystem": {"root": str(tmp / f"root-{v}")}},
    "filesystem.local_dirs": lambda v, tmp: {"filesystem": {"local_dirs": str(tmp / f"local-{v}")}},
    "batch.partition": lambda v, tmp: {"batch": {"partition": v}},
    "batch.account": lambda v, tmp: {"batch": {"account": v}},
    "batch.qos": lambda v, tmp: {"batch": {"qos": v}},
    "sge.pe": lambda v, tmp: {"sge": {"pe": v}},
    "hadoop.properties": lambda v, tmp: {"hadoop": {"properties": {"core-site": {"hpc.test.value": v}}}},
    "hadoop.properties key": lambda v, tmp: {"hadoop": {"properties": {"core-site": {f"hpc.test.{v}": "1"}}}},
}


BATCH = [("slurm", None), ("pbs", "pbspro"), ("pbs", "torque"), ("sge", None)]


PREFIX = {"slurm": "#SBATCH ", "pbs": "#PBS ", "sge": "#$ "}


def spec_with(field: str, value: str, tmp_path: Path, scheduler: str, flavor: str | None) -> JobSpec | None:
    """The spec with ``value`` in ``field``, or ``None`` when it is refused (a one-line ``UserError``)."""
    data: dict[str, Any] = {"name": "fuzz", "scheduler": scheduler, "filesystem": {"root": str(tmp_path / "root")},
                            "batch": {"cores_per_node": 2}, "steps": [{"example": "pi", "args": ["1", "10"]}]}
    for key, part in FIELDS[field](value, tmp_path).items():
        data[key] = {**data[key], **part} if isinstance(part, dict) and isinstance(data.get(key), dict) else part
    if flavor:
        data["pbs"] = {"flavor": flavor}
    try:
        spec, _ = load_spec(None, data=data)
    except UserError as exc:
        assert "\n" not in str(exc), str(exc)
        return None
    return spec


def shell_ok(script: Path) -> None:
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr + script.read_text()


def check_config(plan: ClusterPlan, field: str, value: str, out: Path, canary: Path) -> None:
    """Every XML file parses (and a property value arrives as written); ``hadoop-env.sh`` and the wrappers run."""
    files = render_config(plan)
    for name, text in files.items():
        if name.endswith(".xml"):
            root = ElementTree.fromstring(text)
            values = {p.findtext("name"): p.findtext("value") for p in root.iter("property")}
            if name == "core-site.xml" and field == "hadoop.properties":
                assert values["hpc.test.value"] == value
    env = out / "hadoop-env.sh"
    env.write_text(files["hadoop-env.sh"])
    shell_ok(env)
    shown = subprocess.run(["bash", "-c", 'source "$1"; printf %s "$HADOOP_CONF_DIR"', "_", str(env)],
                           capture_output=True, text=True, check=True).stdout
    assert shown == str(plan.conf_dir)
    for command, text in render_wrappers(plan).items():
        wrapper = out / command
        wrapper.write_text(text)
        shell_ok(wrapper)
        cp = subprocess.run(["bash", str(wrapper), "classpath"], capture_output=True, text=True, check=True).stdout
        assert cp.strip().split(":")[0] == str(plan.conf_dir)
    assert not canary.exists(), f"{field}={value!r} ran a command"


def check_batch_script(spec: JobSpec, scheduler: BatchScheduler, run_dir: Path, out: Path, canary: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch script passes ``bash -n``, every directive stays on its own line, and run with a stand-in Python
    it calls ``python -m launcher.cli run --run-dir RUN_DIR RUN_DIR/job.yaml`` with the exact paths."""
    recorder = out / "python"
    recorder.write_text(f'#!/bin/bash\nprintf "%s\\n" "$@" > {out}/argv\n')
    recorder.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(recorder))
    script = out / "batch.sh"
    text = render_script(spec, scheduler, run_dir)
    script.write_text(text)
    shell_ok(script)
    lines = text.splitlines()
    directives = lines[1:lines.index(next(line for line in lines if line.startswith("# Generated")))]
    assert all(line.startswith(PREFIX[scheduler.name]) for line in directives), directives
    run_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False, timeout=30)
    assert proc.returncode == 0, proc.stderr
    argv = (out / "argv").read_text().splitlines()
    assert argv == ["-m", "launcher.cli", "run", "--run-dir", str(run_dir), str(run_dir / "job.yaml")]
    assert not canary.exists()


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_hostile_values_are_refused_or_arrive_as_written(field: str, tmp_path: Path,
                                                         make_test_plan: Callable[..., ClusterPlan],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13 item 12 (was ``tests/unit/test_escaping.py``)."""
    canary = tmp_path / "canary"
    accepted = 0
    for index, template in enumerate(NASTY):
        value = template.replace("CANARY", str(canary))
        for scheduler_name, flavor in BATCH:
            spec = spec_with(field, value, tmp_path, scheduler_name, flavor)
            if spec is None:
                continue
            accepted += 1
            out = tmp_path / f"out-{index}-{scheduler_name}-{flavor}"
            out.mkdir()
            root = Path(spec.filesystem.root)
            plan = make_test_plan(spec, run_dir=root / "me" / "hpc-hadoop" / "fuzz-20240101-000000-abcd")
            if scheduler_name == BATCH[0][0]:  # the configuration does not depend on the batch system
                check_config(plan, field, value, out, canary)
            scheduler = get_scheduler(scheduler_name)
            assert isinstance(scheduler, BatchScheduler)
            check_batch_script(spec, scheduler, Path(plan.run_dir), out, canary, monkeypatch)
    assert accepted >= len(BATCH), f"{field}: even the plain value was refused, nothing was checked"


def test_per_cluster_security_renders_hadoops_secure_mode(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    """Issue 27: Kerberos, service-level ACLs naming the owner, the daemons' principals and keytab, the realm's
    krb5.conf in every container JVM; a client without a ticket waits 1 min, not 15."""
    plan = make_test_plan(make_spec(security="per-cluster"))
    files = render_config(plan)
    realm, keytab = plan.security.realm, "${hpc.node.krb}/services.keytab"  # each daemon's node-local copy
    core, yarn, mapred = (single(files[name]) for name in ("core-site.xml", "yarn-site.xml", "mapred-site.xml"))
    assert core["hadoop.security.authentication"] == "kerberos" and core["hadoop.security.authorization"] == "true"
    assert f"RULE:[1:$1@$0]({plan.user}@" in core["hadoop.security.auth_to_local"]
    assert yarn["yarn.resourcemanager.principal"] == f"rm/_HOST@{realm}"
    assert yarn["yarn.resourcemanager.keytab"] == keytab
    assert yarn["yarn.nodemanager.principal"] == f"nm/_HOST@{realm}" and yarn["yarn.nodemanager.keytab"] == keytab
    assert mapred["mapreduce.jobhistory.principal"] == f"jhs/_HOST@{realm}"
    assert yarn["yarn.acl.enable"] == "true" and yarn["yarn.admin.acl"] == plan.user
    assert yarn["hpc.rm.connect.max-wait.ms"] == "60000"
    krb5 = f"-Djava.security.krb5.conf={plan.security.krb5_conf}"
    for key in ("mapreduce.admin.map.child.java.opts", "mapreduce.admin.reduce.child.java.opts",
                "yarn.app.mapreduce.am.admin-command-opts"):
        assert krb5 in mapred[key], key
    policy = single(files["hadoop-policy.xml"])
    assert policy["security.service.authorization.default.acl"] == plan.user
    assert policy["security.applicationclient.protocol.acl"] == plan.user
    assert policy["security.resourcetracker.protocol.acl"] == plan.user
    assert policy["security.applicationmaster.protocol.acl"] == "*"  # YARN tokens only this cluster hands out
    assert f"export KRB5CCNAME=FILE:{plan.security.ccache}" in files["hadoop-env.sh"]
    for command, text in render_wrappers(plan).items():
        assert f"export KRB5CCNAME=FILE:{plan.security.ccache}" in text and krb5 in text, command


def test_per_cluster_security_authenticates_every_web_server(make_spec: SpecFactory,
                                                             make_test_plan: PlanFactory) -> None:
    """Issue 27 item 2: Hadoop's AuthenticationFilter (Kerberos, nobody anonymous) on every web server, with the
    cluster's HTTP principals and one cookie secret for all of them; the ResourceManager's own filter variant off."""
    plan = make_test_plan(make_spec(security="per-cluster"))
    files = render_config(plan)
    core, yarn = single(files["core-site.xml"]), single(files["yarn-site.xml"])
    assert core["hadoop.http.filter.initializers"] == ("org.apache.hadoop.security.AuthenticationFilterInitializer,"
                                                       "org.hpchadoop.security.NoWebDelegationTokensInitializer")
    assert core["hadoop.http.authentication.type"] == "kerberos"
    assert core["hadoop.http.authentication.simple.anonymous.allowed"] == "false"
    assert core["hadoop.http.authentication.kerberos.principal"] == f"HTTP/_HOST@{plan.security.realm}"
    assert core["hadoop.http.authentication.kerberos.keytab"] == "${hpc.node.krb}/services.keytab"
    assert core["hpc.node.krb"] == str(plan.security.realm_dir)  # for a process without -Dhpc.node.krb
    assert core["hadoop.http.authentication.kerberos.name.rules"] == plan.security.auth_to_local
    assert core["hadoop.http.authentication.signature.secret.file"] == "${hpc.http.secret}"  # each daemon's own
    assert core["hpc.http.secret"] == str(plan.security.http_secret)  # for a process without -Dhpc.http.secret
    assert plan.security.http_secret == plan.security.realm_dir / "http-signature.secret"
    assert not plan.security.realm_dir.is_relative_to(plan.run_dir)  # node-local (issue 36 item 5)
    assert int(core["hadoop.http.authentication.token.validity"]) <= 60
    assert yarn["yarn.webapp.enable-rest-app-submissions"] == "false"
    assert yarn["yarn.resourcemanager.webapp.delegation-token-auth-filter.enabled"] == "false"
    assert "hadoop.http.staticuser.user" not in core


def test_simple_security_renders_no_kerberos(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    plan = make_test_plan(make_spec(security="simple"))
    files = render_config(plan)
    assert single(files["core-site.xml"])["hadoop.security.authentication"] == "simple"
    assert "hadoop-policy.xml" not in files and "krb5" not in "".join(files.values())
    assert "KRB5CCNAME" not in "".join(render_wrappers(plan).values())
    # the web servers stay Hadoop's defaults: anonymous visitors are dr.who, and no static user is set (with
    # hadoop.http.staticuser.user = the owner, anyone could kill the owner's application with a plain PUT)
    rendered = "".join(files.values())
    for key in ("hadoop.http.filter.initializers", "hadoop.http.authentication.", "hadoop.http.staticuser.user",
                "delegation-token-auth-filter"):
        assert key not in rendered, key


def test_site_security_renders_the_sites_principal_without_host_and_no_kdc(
        tmp_path: Path, make_spec: SpecFactory, make_test_plan: PlanFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 item 4: under ``security: site`` every daemon (web servers included) is the centre's service
    principal, logged in from the copy of its keytab in ``krb/``; the site's krb5.conf everywhere; only that principal
    and the user's own map to the owner; the clients use the user's own ticket cache."""
    keytab, conf = tmp_path / "me.keytab", tmp_path / "site-krb5.conf"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    conf.write_text("[libdefaults]\n")
    monkeypatch.setenv("KRB5CCNAME", "FILE:/home/alice/krb5cc")
    plan = make_test_plan(make_spec(security="site", kerberos={
        "service_principal": "alice/hadoop@HPC.EXAMPLE.ORG", "principal": "alice@HPC.EXAMPLE.ORG",
        "keytab": str(keytab), "krb5_conf": str(conf)}))
    files = render_config(plan)
    core, yarn, mapred = (single(files[name]) for name in ("core-site.xml", "yarn-site.xml", "mapred-site.xml"))
    service, copy = "alice/hadoop@HPC.EXAMPLE.ORG", "${hpc.node.krb}/site.keytab"  # each node's copy of krb/'s
    assert core["hpc.node.krb"] == str(plan.security.realm_dir)
    assert core["hadoop.security.authentication"] == "kerberos" and core["hadoop.security.authorization"] == "true"
    assert core["hadoop.security.auth_to_local"] == (r"RULE:[2:$1/$2@$0](alice/hadoop@HPC\.EXAMPLE\.ORG)s/.*/"
                                                     f"{plan.user}/\n"
                                                     rf"RULE:[1:$1@$0](alice@HPC\.EXAMPLE\.ORG)s/.*/{plan.user}/")
    for props, key in ((yarn, "yarn.resourcemanager"), (yarn, "yarn.nodemanager"), (mapred, "mapreduce.jobhistory")):
        assert props[f"{key}.principal"] == service and props[f"{key}.keytab"] == copy, key
    assert core["hadoop.http.authentication.type"] == "kerberos"
    assert core["hadoop.http.authentication.kerberos.principal"] == service  # no HTTP/<host> at a site: cookie only
    assert core["hadoop.http.authentication.kerberos.keytab"] == copy
    assert core["hpc.http.secret"] == str(plan.security.realm_dir / "http-signature.secret")
    assert core["hadoop.http.authentication.simple.anonymous.allowed"] == "false"
    assert "_HOST" not in files["core-site.xml"] + files["yarn-site.xml"] + files["mapred-site.xml"]
    assert str(keytab) not in "".join(files.values())  # the user's own keytab is never named: the copy is
    krb5 = f"-Djava.security.krb5.conf={conf}"
    assert krb5 in mapred["yarn.app.mapreduce.am.admin-command-opts"]
    assert single(files["hadoop-policy.xml"])["security.applicationclient.protocol.acl"] == plan.user
    assert "export KRB5CCNAME=FILE:/home/alice/krb5cc" in files["hadoop-env.sh"]
    for command, text in render_wrappers(plan).items():
        assert "export KRB5CCNAME=FILE:/home/alice/krb5cc" in text and krb5 in text, command
