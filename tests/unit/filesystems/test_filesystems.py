"""The filesystem layer (launcher/filesystems/): detection, striping per directory, the shim and hdfs modes in
the rendered configuration, the plan's HDFS roles, and the run report's ``filesystem`` section.

Detection runs the real ``statfs(2)`` on the local disk, on a tmpfs mounted by the test and on the OrangeFS
stand-in, and is checked against independent tools (``stat -f``, ``findmnt``, ``df``). Striping runs against the
stand-ins in ``tests/standins/`` because Lustre and OrangeFS cannot run on this kernel (it loads no modules):
Lustre's ``lfs``, and for OrangeFS a FUSE file system that behaves as OrangeFS's FUSE client (``orangefs_fuse.py``,
mounted here; the real ``setfattr``/``getfattr`` of the attr package run against it); each such test says so.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import struct
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks import harness
from launcher.cli.main import main
from launcher.config.spec import FilesystemSpec, JobSpec, StripeSpec
from launcher.filesystems import (
    NOT_APPLICABLE,
    GenericFilesystem,
    GpfsFilesystem,
    LustreFilesystem,
    OrangeFsFilesystem,
    check_shared_root,
    choose,
    decide,
    detect,
    gone,
    gone_error,
)
from launcher.filesystems import orangefs as orangefs_module
from launcher.filesystems.base import Layout
from launcher.filesystems.detect import FS_MAGIC, MountEntry, behind_fuse, mount_entry, parse_mounts
from launcher.filesystems.operations import try_operations
from launcher.filesystems.orangefs import decode_value, parse_getfattr
from launcher.lifecycle.health import Health
from launcher.lifecycle.observer import Observer
from launcher.lifecycle.record import RunRecord
from launcher.lifecycle.report import RunReport, directory_line
from launcher.lifecycle.runner import prepare_filesystem
from launcher.plan.cluster_plan import ClusterPlan
from launcher.render.config import CONFIG_TEMPLATES, render_config
from launcher.render.daemons import daemon_command, datanode_dir, format_command, namenode_dir, needs_format
from launcher.schedulers.base import Allocation, Node
from launcher.util.errors import CommandError, FilesystemLost, UserError
from tests.conftest import orangefs_standin
from tests.standins.orangefs_fuse import REFUSAL_MESSAGE

SpecFactory = Callable[..., JobSpec]
PlanFactory = Callable[..., ClusterPlan]


# -- detection ----------------------------------------------------------------------------------

def _tool(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_detection_on_the_local_disk_agrees_with_stat_findmnt_and_df(tmp_path: Path) -> None:
    found = detect(tmp_path)
    magic = int(_tool("stat", "-f", "-c", "%t", str(tmp_path)), 16)
    assert found.magic == hex(magic)
    assert found.type == FS_MAGIC.get(magic, hex(magic))
    assert found.mount_point == _tool("findmnt", "-n", "-o", "TARGET", "--target", str(tmp_path))
    assert found.source == _tool("findmnt", "-n", "-o", "SOURCE", "--target", str(tmp_path))
    avail = int(_tool("df", "-B1", "--output=avail", str(tmp_path)).splitlines()[-1])
    assert abs(found.free_bytes - avail) < 256 << 20  # others write to this disk meanwhile
    assert found.subtype is None and found.flock is True and found.flock_error is None


def test_detection_of_a_missing_directory_inspects_its_nearest_parent(tmp_path: Path) -> None:
    found = detect(tmp_path / "not" / "yet")
    assert found.path == str(tmp_path)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs mounted under ``tmp_path`` (unmounted afterwards)."""
    target = tmp_path / "tmpfs"
    target.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "hpc-hadoop-test", str(target)], check=True)
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def test_detection_on_tmpfs(tmpfs: Path) -> None:
    (tmpfs / "sub").mkdir()
    found = detect(tmpfs / "sub")
    assert (found.type, found.magic, found.label) == ("tmpfs", "0x1021994", "tmpfs")
    assert found.mount_point == str(tmpfs) and found.source == "hpc-hadoop-test" and found.mount_type == "tmpfs"
    assert found.total_bytes == 16 << 20 and found.flock
    assert choose("auto", found).name == "generic"


def test_mounts_parsing_unescapes_and_takes_the_last_stacked_mount() -> None:
    text = ("/dev/vda / ext4 rw 0 0\n"
            "/dev/vda /mnt/hhpfs ext4 rw 0 0\n"
            "pfs:/hhpfs /mnt/hhpfs fuse.glusterfs rw,user_id=0 0 0\n"
            "srv:/x /mnt/with\\040space nfs4 rw 0 0\n")
    entries = parse_mounts(text)
    assert entries[3].mount_point == "/mnt/with space"
    entry = mount_entry(Path("/mnt/hhpfs/a/b"), text)
    assert entry is not None and (entry.source, entry.fstype) == ("pfs:/hhpfs", "fuse.glusterfs")
    assert mount_entry(Path("/mnt/hhpfsX"), text).mount_point == "/"  # a prefix of a name is not a parent


@pytest.mark.parametrize(("fs_type", "expected"), [("lustre", "lustre"), ("orangefs", "orangefs"), ("gpfs", "gpfs"),
                                                   ("nfs", "generic"), ("fuse", "generic"), ("ext4", "generic")])
def test_auto_chooses_the_class_from_detection(tmp_path: Path, fs_type: str, expected: str) -> None:
    found = detect(tmp_path)
    found = type(found)(**{**found.__dict__, "type": fs_type})
    assert choose("auto", found).name == expected
    assert choose("lustre", found).name == "lustre"  # a name wins over detection


@pytest.mark.parametrize(("source", "fstype", "expected"), [
    ("pvfs2fuse#tcp://ofs1:3334/ofs", "fuse", "orangefs"),  # OrangeFS's FUSE client (issue 17)
    ("tcp://ofs1:3334/orangefs", "fuse", "orangefs"),
    ("anything", "fuse.pvfs2fuse", "orangefs"),
    ("10.1.1.1@tcp:/scratch", "fuse", "lustre"),
    ("10.0.0.1@o2ib1:10.0.0.2@o2ib1:/lus", "fuse", "lustre"),
    ("beegfs_nodev", "fuse", "beegfs"),
    ("/dev/gpfs0", "fuse", "gpfs"),
    ("pfs:/hhpfs", "fuse.glusterfs", None),
    ("me@login:/home/me", "fuse.sshfs", None),
    ("sshfs#me@login:/home/me", "fuse", None),
])
def test_a_parallel_filesystem_behind_fuse_is_recognised_from_its_mount(source: str, fstype: str,
                                                                        expected: str | None) -> None:
    assert behind_fuse(MountEntry(source, "/mnt/x", fstype, "rw")) == expected


# -- the OrangeFS stand-in (FUSE) ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def orangefs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The OrangeFS stand-in: OrangeFS's FUSE client as it behaves where hpc-hadoop can tell (OrangeFS cannot be
    installed here), with 4 data servers and ``user.pvfs2.*`` attributes kept."""
    with orangefs_standin(tmp_path_factory.mktemp("orangefs")) as mountpoint:
        yield mountpoint


@pytest.fixture(scope="module")
def orangefs_without_xattrs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The OrangeFS stand-in answering every extended-attribute call with ENOTSUP, as the stock ``pvfs2fuse``."""
    with orangefs_standin(tmp_path_factory.mktemp("orangefs-no-xattrs"), xattrs="none") as mountpoint:
        yield mountpoint


@pytest.fixture
def ofs_dir(orangefs: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh directory of this test on the OrangeFS stand-in."""
    directory = orangefs / request.node.name.replace("[", "-").replace("]", "")
    directory.mkdir()
    return directory


def test_orangefs_behind_fuse_is_detected_from_its_mount_source(orangefs: Path) -> None:
    """Issue 17 item 2, on the stand-in: statfs says fuse (0x65735546), the source says pvfs2fuse#tcp://..."""
    found = detect(orangefs)
    assert found.magic == "0x65735546" and found.mount_type == "fuse"
    assert found.source == "pvfs2fuse#tcp://ofs-server:3334/ofs"
    assert (found.type, found.via, found.label) == ("orangefs", "fuse", "orangefs (fuse)")
    assert choose("auto", found).name == "orangefs"
    decided = decide(FilesystemSpec(root=str(orangefs / "cluster")))
    assert (decided.name, decided.shim_layout, decided.striping_error) == ("orangefs", "orangefs", None)


def test_orangefs_attributes_set_with_setfattr_and_read_back(ofs_dir: Path) -> None:
    """The OrangeFS stand-in (FUSE) with the real setfattr/getfattr: names, hex values with the trailing NUL byte
    as OrangeFS 2.10 needs them, the bytes stored, and the layout read back."""
    out = ofs_dir / "out"
    outcome = OrangeFsFilesystem().stripe("output", out, StripeSpec(count=4, size="1m"))
    assert outcome.commands == (
        ("setfattr", "-n", "user.pvfs2.num_dfiles", "-v", "0x3400", str(out)),
        ("setfattr", "-n", "user.pvfs2.dist_name", "-v", "0x73696d706c655f73747269706500", str(out)),
        ("setfattr", "-n", "user.pvfs2.dist_params", "-v", "0x" + b"strip_size:1048576\0".hex(), str(out)),
        ("getfattr", "--absolute-names", "-d", "-m", r"^user\.pvfs2\.", "-e", "hex", str(out)),
    )
    assert {name: os.getxattr(out, name) for name in os.listxattr(out)} == {
        "user.pvfs2.num_dfiles": b"4\0", "user.pvfs2.dist_name": b"simple_stripe\0",
        "user.pvfs2.dist_params": b"strip_size:1048576\0"}
    assert outcome.status == "applied" and outcome.layout == {"count": 4, "size": 1048576, "index": None}
    # the empty probe file is stuffed (one data file until past its first strip: FileStuffing); it gets 4 (nd)
    assert outcome.effective == {"count": 4, "size": 1048576, "index": None, "stuffed": True}
    assert outcome.differs == ()
    assert os.listdir(out) == []  # the probe file is gone


def test_orangefs_the_layout_files_really_get_is_reported(ofs_dir: Path) -> None:
    """Issue 17 item 4 and issue 25 item 2, on the OrangeFS stand-in (4 data servers): count 8 is kept on the
    directory, but a file made in it gets 4 data files. A file has no ``user.pvfs2.*`` (reading them gave
    "effective not reported"): its layout is read from ``system.pvfs2.dh`` (32 bytes: 4 handles) and
    ``system.pvfs2.md`` (the strip size), and the report names the clamp."""
    outcome = OrangeFsFilesystem().stripe("output", ofs_dir / "out", StripeSpec(count=8, size="1m"))
    assert outcome.layout == {"count": 8, "size": 1048576, "index": None}
    assert outcome.effective == {"count": 4, "size": 1048576, "index": None, "stuffed": True}
    assert outcome.differs == ("count 8 asked, 4 given",)
    assert directory_line(outcome.to_record()) == (
        "applied: requested count 8, size 1048576; effective count 4, size 1048576, stuffed (one data file until a "
        f"file grows past its first strip) (count 8 asked, 4 given): {ofs_dir / 'out'}")
    a_file = ofs_dir / "out" / "part-00000"
    a_file.write_bytes(b"x")
    assert not [name for name in os.listxattr(a_file) if name.startswith("user.pvfs2.")]
    # Issue 37 item 1, as a real OrangeFS 2.10 server with FileStuffing yes: a small file has one data file (dh of 8
    # bytes) and keeps the count it gets, clamped to the 4 servers, in nd (0x04000000); past its first strip, 4.
    assert len(os.getxattr(a_file, "system.pvfs2.dh")) == 8 and os.getxattr(a_file, "system.pvfs2.nd") == b"\4\0\0\0"
    argv = OrangeFsFilesystem().file_layout_commands(a_file)
    assert argv == [["getfattr", "--absolute-names", "-n", name, "-e", "hex", str(a_file)]
                    for name in ("system.pvfs2.dh", "system.pvfs2.md")]
    assert OrangeFsFilesystem().read_file_layout(a_file) == Layout(count=4, size=1 << 20, stuffed=True)
    output = "".join(_tool(*a) + "\n" for a in argv)  # dh alone (a server without nd): what the file has now
    assert OrangeFsFilesystem().parse_file_layout(output) == Layout(count=1, size=1 << 20)
    with a_file.open("r+b") as grown:
        grown.seek((1 << 20) + 10)
        grown.write(b"past the first strip")
    assert len(os.getxattr(a_file, "system.pvfs2.dh")) == 32
    assert OrangeFsFilesystem().read_file_layout(a_file) == Layout(count=4, size=1 << 20, stuffed=False)


def test_orangefs_file_layout_attributes_decoded_as_orangefs_encodes_them() -> None:
    """``system.pvfs2.md`` as ``PINT_dist_encode`` writes it (u32 length 13, ``simple_stripe`` and its NUL, zero
    padding to 24 bytes, strip size 65536 as a little-endian int64) and ``system.pvfs2.dh`` of 2 handles, in
    ``getfattr -e hex`` output; another distribution's parameters are not taken for a strip size."""
    md = "0x" + "0d000000" + b"simple_stripe\0".hex() + "00" * 6 + "0000010000000000"
    assert orangefs_module.decode_distribution(bytes.fromhex(md[2:])) == ("simple_stripe", 65536)
    basic = struct.pack("<I", 10) + b"basic_dist\0\0" + b"\0" * 8
    assert orangefs_module.decode_distribution(basic) == ("basic_dist", None)
    output = f"# file: /ofs/f\nsystem.pvfs2.dh=0x{'ab' * 16}\n\n# file: /ofs/f\nsystem.pvfs2.md={md}\n\n"
    assert OrangeFsFilesystem().parse_file_layout(output) == Layout(count=2, size=65536)
    assert OrangeFsFilesystem().parse_file_layout("# file: /ofs/f\n") == Layout()


def test_orangefs_bench_rows_are_labelled_with_the_count_files_get(ofs_dir: Path, make_spec: SpecFactory) -> None:
    """Issue 25 item 2: a bench point asking stripe count 8 on the OrangeFS stand-in (4 data servers) is labelled
    4, the count its files get (it was labelled 8); the count asked is kept beside it."""
    outcome, note = harness.apply_stripe(ofs_dir / "work", 8, make_spec(filesystem={"root": str(ofs_dir)}))
    assert note is None and outcome["status"] == "applied" and outcome["differs"] == ["count 8 asked, 4 given"]
    assert harness.labelled_count(outcome, 8) == 4
    assert harness.labelled_count({"status": NOT_APPLICABLE, "effective": None}, 8) == 8


def test_orangefs_without_xattrs_a_run_that_asks_for_no_striping_goes_on(
        orangefs_without_xattrs: Path, make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    """Issue 17 item 3, on the OrangeFS stand-in without extended attributes (the stock pvfs2fuse): with nothing
    asked, no directory's layout is read (getfattr would fail), each says why and the report has a note."""
    root = orangefs_without_xattrs / "nothing-asked"
    root.mkdir()
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared", "root": str(root)}),
                          run_dir=root / "me" / "hpc-hadoop" / "t-20240101-000000-abcd")
    assert plan.filesystem.name == "orangefs" and "Operation not supported" in plan.filesystem.striping_error
    Path(plan.run_dir, "staging").mkdir(parents=True)
    report = RunReport(cluster_id=plan.cluster_id, name="t", run_dir=plan.run_dir, scheduler="slurm", job_id="1",
                       nodes=[n.name for n in plan.nodes])
    prepare_filesystem(plan, run_record(plan, report))
    assert {d.status for d in report.filesystem.directories} == {"not requested"}
    assert all("Operation not supported" in (d.reason or "") for d in report.filesystem.directories)
    assert [n for n in report.notes if "neither set nor read" in n]


@pytest.mark.parametrize("role", ["input", "output"])
def test_orangefs_without_xattrs_asked_striping_is_a_one_line_error(
        orangefs_without_xattrs: Path, role: str) -> None:
    """Issue 17 item 3: where striping is asked and the client has no extended attributes, the plan is refused
    (render, submit, doctor make it before anything is queued), naming the field and the fix."""
    spec = FilesystemSpec(root=str(orangefs_without_xattrs / "asked"), striping={role: {"count": 2}})
    with pytest.raises(UserError) as err:
        decide(spec)
    assert err.value.field == f"filesystem.striping.{role}"
    assert "Operation not supported" in err.value.message and "orangefs (fuse)" in err.value.message
    assert "kernel client" in err.value.fix and f"remove filesystem.striping.{role}" in err.value.fix
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("setting", "field"), [({"count": -1}, "count"), ({"count": 2, "index": 1}, "index")])
def test_orangefs_refuses_what_it_cannot_do_when_the_plan_is_made(orangefs: Path, setting: dict, field: str) -> None:
    """Issue 17 item 6, on the OrangeFS stand-in: a count of -1 (no "all servers" on OrangeFS) and an index are
    refused when the plan is made, not when the run stripes (after its directory was made)."""
    spec = FilesystemSpec(root=str(orangefs / "refused"), striping={"output": setting})
    with pytest.raises(UserError) as err:
        decide(spec)
    assert err.value.field == f"filesystem.striping.output.{field}"


def test_doctor_tries_what_a_run_does_and_nothing_orangefs_refuses(built_runtime: Path, ofs_dir: Path) -> None:
    """Issue 17 item 1, and issue 25 items 1 and 6, on the OrangeFS stand-in: doctor tries create, every chmod mode
    a run sets, rename and symlink (all allowed here), and never the sticky bit, which OrangeFS refuses with a
    backtrace (its client exits after 8: doctor tried one each time, killing the mount at the 8th doctor). The
    stand-in counts no refused chmod; the setgid bit, which OrangeFS accepts, is not called refused."""
    before = refused_chmods(ofs_dir.parent)
    tried = {t.operation: t for t in try_operations(ofs_dir)}
    assert {name: t.error for name, t in tried.items() if t.error} == {}
    assert {"create a directory", "create a file", "rename", "symlink", "chmod 0770 a directory",
            "chmod 0404 a file"} <= set(tried)
    assert list(ofs_dir.iterdir()) == []  # the scratch directory is gone
    result = CliRunner().invoke(main, ["doctor", "--set", f"filesystem.root={ofs_dir}"])
    line = next(line for line in result.stdout.splitlines() if " operations " in line)
    assert line.split()[0] == "ok" and "never tried: the sticky bit" in line and "setgid" not in line, line
    assert refused_chmods(ofs_dir.parent) == before == 0
    os.chmod(ofs_dir, 0o2770)  # OrangeFS keeps setgid
    assert os.stat(ofs_dir).st_mode & 0o7777 == 0o2770


def refused_chmods(mountpoint: Path) -> int:
    """The ``chmod``s the OrangeFS stand-in mounted on ``mountpoint`` refused, from its log (one line each)."""
    return (mountpoint.parent / "orangefs-standin.log").read_text().count(REFUSAL_MESSAGE)


def test_the_orangefs_standin_client_exits_after_8_refused_chmods(tmp_path: Path) -> None:
    """The stand-in as OrangeFS 2.10's pvfs2fuse (issue 25 item 1, ``GOSSIP_MAX_BT``): refused sticky-bit chmods 1
    to 7 give EINVAL, the 8th ECONNABORTED as the client exits, then every call ENOTCONN."""
    with orangefs_standin(tmp_path) as mountpoint:
        (mountpoint / "d").mkdir()
        errors = []
        for _ in range(9):
            with pytest.raises(OSError) as err:
                os.chmod(mountpoint / "d", 0o1777)
            errors.append(err.value.errno)
        assert errors == [errno.EINVAL] * 7 + [errno.ECONNABORTED, errno.ENOTCONN]
        with pytest.raises(OSError) as err:
            os.listdir(mountpoint)
        assert err.value.strerror == "Transport endpoint is not connected"
        assert refused_chmods(mountpoint) == 8 and "exiting (GOSSIP_MAX_BT)" in \
            (tmp_path / "orangefs-standin.log").read_text()


def test_doctor_fails_on_an_operation_a_run_needs(tmp_path: Path) -> None:
    """What a run needs and cannot do is named with the system's message (here the scratch directory cannot be
    made: its parent does not exist)."""
    tried = try_operations(tmp_path / "no-such-directory")
    assert [(t.operation, t.error) for t in tried] == [("create a directory", "No such file or directory")]


def _job(directory: Path, root: Path, striping: dict, scheduler: str = "local") -> Path:
    job = directory / "job.yaml"
    job.write_text(yaml.safe_dump({"name": "striped", "scheduler": scheduler, "walltime": "00:10:00",
                                   "filesystem": {"root": str(root), "striping": striping, "shared": True},
                                   "hadoop": {"daemon_heap": "512m", "map_memory": "512m", "reduce_memory": "512m",
                                              "am_memory": "512m"},
                                   "steps": [{"example": "pi", "args": [1, 10]}]}))
    return job


@pytest.mark.parametrize(("command", "scheduler"), [("render", "local"), ("submit", "local"), ("submit", "slurm"),
                                                    ("doctor", "local")])
@pytest.mark.parametrize(("striping", "field"), [
    ({"output": {"count": -1}}, "filesystem.striping.output.count"),
    ({"input": {"count": 2, "index": 0}}, "filesystem.striping.input.index")])
def test_orangefs_striping_it_cannot_do_is_refused_before_anything_is_made(
        built_runtime: Path, ofs_dir: Path, tmp_path: Path, command: str, scheduler: str, striping: dict,
        field: str) -> None:
    """Issue 17 item 6, on the OrangeFS stand-in: `render` accepted count -1 and index, which `submit` refused
    only after making a run directory; now every command refuses them first, on one line naming the field."""
    result = CliRunner().invoke(main, [command, str(_job(tmp_path, ofs_dir, striping, scheduler))])
    assert result.exit_code in (1, 2), result.output
    text = result.stderr if command != "doctor" else result.stdout
    assert field in text, text
    assert list(ofs_dir.iterdir()) == []  # no run directory, nothing queued


@pytest.mark.parametrize("command", ["render", "submit", "doctor"])
def test_orangefs_without_xattrs_asked_striping_fails_each_command_first(
        built_runtime: Path, orangefs_without_xattrs: Path, tmp_path: Path, command: str) -> None:
    """Issue 17 item 3, on the OrangeFS stand-in without extended attributes: striping asked for `output` only is
    a one-line error naming the field and the fix, before anything is made or queued."""
    root = orangefs_without_xattrs / f"cli-{command}"
    root.mkdir()
    result = CliRunner().invoke(main, [command, str(_job(tmp_path, root, {"output": {"count": 2}}))])
    assert result.exit_code != 0
    text = result.stderr if command != "doctor" else result.stdout
    line = next(line for line in text.splitlines() if "filesystem.striping.output" in line)
    assert "Operation not supported" in line and "input" not in line.split("filesystem.striping.output")[1][:40]
    assert "kernel client" in text
    assert list(root.iterdir()) == []


def test_render_shows_the_striping_plan(built_runtime: Path, ofs_dir: Path, tmp_path: Path) -> None:
    """Issue 17 item 6: `render` prints what the run will do to each striped directory, on the OrangeFS stand-in."""
    job = _job(tmp_path, ofs_dir, {"input": {"count": 2, "size": "1m"}, "output": {"count": 8}})
    result = CliRunner().invoke(main, ["render", str(job)])
    assert result.exit_code == 0, result.output
    section = result.stdout.split("==> filesystem <==\n")[1].split("==>")[0].splitlines()
    assert section[0].startswith("orangefs (fuse) at ") and "pvfs2fuse#tcp://" in section[0]
    by_role = {line.split()[0]: line for line in section[1:]}
    assert "count 2, size 1048576 (only if it holds no data then): setfattr -n user.pvfs2.num_dfiles -v 0x3200" \
        in by_role["input"]
    assert "count 8: setfattr -n user.pvfs2.num_dfiles -v 0x3800" in by_role["output"]
    assert by_role["staging"].endswith("not requested") and by_role["scratch"].endswith("not requested")


def test_the_reference_documents_every_striping_field() -> None:
    """Issue 17 item 6: `hpc-hadoop reference` printed `striping: mapping (below)` and nothing below it."""
    text = CliRunner().invoke(main, ["reference"]).stdout
    for field in ("input", "output", "staging", "scratch"):
        assert f"| `filesystem.striping.{field}` | mapping (below) |" in text
    for field in ("count", "size", "index"):
        assert f"| `filesystem.striping.<role>.{field}` |" in text


# -- stand-ins ----------------------------------------------------------------------------------

def calls(state: Path) -> list[tuple[str, list[str]]]:
    log = state / "calls.jsonl"
    if not log.exists():
        return []
    return [(c["tool"], c["argv"]) for c in map(json.loads, log.read_text().splitlines())]


def test_lustre_setstripe_exact_argv_and_layout_read_back(lfs_standin: Path, tmp_path: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel): exact argv, read back with `lfs getstripe -d`, and the
    layout of a probe file made in the directory with `lfs getstripe FILE` (removed afterwards)."""
    out = tmp_path / "out"
    outcome = LustreFilesystem().stripe("output", out, StripeSpec(count=4, size="4m", index=2))
    made = calls(lfs_standin)
    assert made[:2] == [("lfs", ["setstripe", "-c", "4", "-S", "4194304", "-i", "2", str(out)]),
                        ("lfs", ["getstripe", "-d", str(out)])]
    assert len(made) == 3 and made[2][1][0] == "getstripe" and made[2][1][1].startswith(f"{out}/.hpc-hadoop-layout-")
    assert out.is_dir() and os.listdir(out) == []
    assert outcome.status == "applied"
    assert outcome.layout == outcome.effective == {"count": 4, "size": 4194304, "index": 2} and outcome.differs == ()
    assert outcome.commands == (("lfs", "setstripe", "-c", "4", "-S", "4194304", "-i", "2", str(out)),
                                ("lfs", "getstripe", "-d", str(out)))


def test_lustre_a_count_above_the_osts_is_reported_as_given(lfs_standin: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 item 4 on Lustre: stand-in `lfs` with 4 OSTs (Lustre cannot run on this kernel) gives a file 4
    stripes where its directory asks for 8; the outcome names the difference."""
    monkeypatch.setenv("HPC_STANDIN_OSTS", "4")
    outcome = LustreFilesystem().stripe("output", tmp_path / "out", StripeSpec(count=8, size="1m"))
    assert outcome.layout == {"count": 8, "size": 1048576, "index": -1}
    assert outcome.effective == {"count": 4, "size": 1048576, "index": 0}
    assert outcome.differs == ("count 8 asked, 4 given",)


def test_lustre_only_the_options_that_are_set(lfs_standin: Path, tmp_path: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel): no `-i` without an index, no `-c` without a count."""
    LustreFilesystem().stripe("staging", tmp_path / "s", StripeSpec(size="1m"))
    LustreFilesystem().stripe("scratch", tmp_path / "c", StripeSpec(count=-1))
    argvs = [argv for _, argv in calls(lfs_standin) if argv[0] == "setstripe"]
    assert argvs == [["setstripe", "-S", "1048576", str(tmp_path / "s")],
                     ["setstripe", "-c", "-1", str(tmp_path / "c")]]


def test_lustre_getstripe_parser_on_lustre_formats() -> None:
    lustre = LustreFilesystem()
    directory_default = "stripe_count:  8 stripe_size:   1048576 pattern:       raid0 stripe_offset: -1\n"
    assert lustre.parse_layout(directory_default).to_dict() == {"count": 8, "size": 1048576, "index": -1}
    a_file = ("/lustre/f\nlmm_stripe_count:  2\nlmm_stripe_size:   4194304\nlmm_pattern:       raid0\n"
              "lmm_layout_gen:    0\nlmm_stripe_offset: 5\n\tobdidx\t\t objid\t\t objid\t\t group\n"
              "\t     5\t         1234\t        0x4d2\t             0\n")
    assert lustre.parse_layout(a_file).to_dict() == {"count": 2, "size": 4194304, "index": 5}
    assert lustre.parse_layout("stripe_count: 1 stripe_size: 4M stripe_offset: 0").size == 4 << 20


def test_lustre_rejects_a_stripe_size_lfs_would_refuse(lfs_standin: Path, tmp_path: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel): the check happens before any lfs call."""
    with pytest.raises(UserError) as err:
        LustreFilesystem().stripe("output", tmp_path / "o", StripeSpec(size=100_000))
    assert err.value.field == "filesystem.striping.output.size" and "65536" in err.value.message
    assert calls(lfs_standin) == []


def test_lustre_input_with_data_is_never_restriped(lfs_standin: Path, tmp_path: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel): only `getstripe` runs on an input that holds data."""
    data = tmp_path / "in"
    data.mkdir()
    (data / "part-0").write_bytes(b"x" * 10)
    outcome = LustreFilesystem().stripe("input", data, StripeSpec(count=4, size="1m"), keep_data=True)
    assert outcome.status == "not restriped: holds data" and "never restriped" in outcome.reason
    assert calls(lfs_standin) == [("lfs", ["getstripe", "-d", str(data)])]
    assert (data / "part-0").read_bytes() == b"x" * 10


def test_a_failing_lfs_is_an_error_with_command_exit_code_and_output(lfs_standin: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel), made to fail (no state directory: exit 99)."""
    monkeypatch.delenv("HPC_STANDIN_DIR")
    with pytest.raises(CommandError) as err:
        LustreFilesystem().stripe("output", tmp_path / "o", StripeSpec(count=2))
    assert err.value.returncode == 99 and err.value.argv[:2] == ["lfs", "setstripe"]
    assert "HPC_STANDIN_DIR is not set" in str(err.value)
    with pytest.raises(CommandError) as missing:
        LustreFilesystem(lfs=str(tmp_path / "no-lfs")).stripe("output", tmp_path / "o", StripeSpec(count=2))
    assert missing.value.returncode == 127 and "install the lustre client tools" in str(missing.value)


def test_orangefs_has_no_starting_index(tmp_path: Path) -> None:
    """An index is refused, not dropped, before any command runs."""
    with pytest.raises(UserError) as err:
        OrangeFsFilesystem().stripe("output", tmp_path / "o", StripeSpec(count=2, index=1))
    assert err.value.field == "filesystem.striping.output.index"


def test_getfattr_parser_on_every_encoding() -> None:
    text = ('# file: /ofs/d\nuser.pvfs2.dist_name="simple_stripe\\000"\nuser.pvfs2.num_dfiles=0x3800\n'
            'user.pvfs2.dist_params=0sc3RyaXBfc2l6ZTo2NTUzNgA=\n\n')
    assert parse_getfattr(text) == {"user.pvfs2.dist_name": b"simple_stripe\0", "user.pvfs2.num_dfiles": b"8\0",
                                    "user.pvfs2.dist_params": b"strip_size:65536\0"}
    assert OrangeFsFilesystem().parse_layout(text).to_dict() == {"count": 8, "size": 65536, "index": None}
    assert decode_value("0x") == b""


@pytest.mark.parametrize("fs", [GpfsFilesystem(), GenericFilesystem("fuse.glusterfs")], ids=["gpfs", "generic"])
def test_without_striping_a_setting_is_reported_not_applicable(lfs_standin: Path, tmp_path: Path, fs) -> None:  # noqa: ANN001
    outcome = fs.stripe("output", tmp_path / "o", StripeSpec(count=4, size="1m"))
    assert outcome.status == NOT_APPLICABLE
    assert outcome.requested == {"count": 4, "size": 1048576, "index": None}
    assert outcome.reason and (fs.name == "gpfs" or "fuse.glusterfs" in outcome.reason)
    assert calls(lfs_standin) == [] and (tmp_path / "o").is_dir()


# -- the run report's filesystem section (runner.prepare_filesystem) ------------------------------

def run_record(plan: ClusterPlan, report: RunReport) -> RunRecord:
    """The writer of ``report``'s ``run.json``, as a run has it (the health checks need no cluster to tell a lost
    filesystem from another write error)."""
    return RunRecord(report, Health(plan, None, Observer(), report))


def _prepare(plan: ClusterPlan) -> dict:
    Path(plan.run_dir, "staging").mkdir(parents=True)
    report = RunReport(cluster_id=plan.cluster_id, name="t", run_dir=plan.run_dir, scheduler="slurm", job_id="1",
                       nodes=[n.name for n in plan.nodes])
    prepare_filesystem(plan, run_record(plan, report))
    on_disk = json.loads(Path(plan.run_dir, "run.json").read_text())["filesystem"]
    assert on_disk == report.filesystem.dump()
    return on_disk


STRIPES = {"input": {"count": 2, "size": "1m"}, "output": {"count": 4, "size": "4m", "index": 0},
           "staging": {"count": 1}, "scratch": {"size": "2m"}}


def test_report_on_lustre_every_directory_applied_except_an_input_with_data(
        lfs_standin: Path, make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel); filesystem.type lustre names the class."""
    corpus = pfs_root / "corpus"
    corpus.mkdir()
    (corpus / "words.txt").write_text("a b\n")
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared", "root": str(pfs_root), "type": "lustre",
                                                "striping": STRIPES, "input_dir": "${fs_root}/corpus"}))
    section = _prepare(plan)
    assert section["class"] == "lustre" and section["striping"] is True
    by_role = [(d["role"], d["status"], d["path"]) for d in section["directories"]]
    assert by_role == [("input", "not restriped: holds data", str(corpus)),
                       ("output", "applied", f"{plan.run_dir}/output"),
                       ("staging", "applied", f"{plan.run_dir}/staging"),
                       *[("scratch", "applied", n.nm_local_dir) for n in plan.nodes]]
    output = section["directories"][1]
    assert output["layout"] == {"count": 4, "size": 4 << 20, "index": 0}
    assert section["directories"][3]["layout"]["size"] == 2 << 20
    setstripes = [argv for _, argv in calls(lfs_standin) if argv[0] == "setstripe"]
    assert setstripes[0] == ["setstripe", "-c", "4", "-S", "4194304", "-i", "0", f"{plan.run_dir}/output"]
    assert all(str(corpus) not in argv for argv in setstripes)


def test_report_on_a_filesystem_without_striping_keeps_every_setting(
        lfs_standin: Path, make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path) -> None:
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared", "root": str(pfs_root), "striping": STRIPES}))
    section = _prepare(plan)
    assert section["class"] == "generic" and section["type"] == detect(pfs_root).label
    assert [d["role"] for d in section["directories"]] == ["input", "output", "staging", "scratch", "scratch",
                                                          "scratch"]
    assert {d["status"] for d in section["directories"]} == {NOT_APPLICABLE}
    assert section["directories"][1]["requested"] == {"count": 4, "size": 4 << 20, "index": 0}
    assert all(d["reason"] for d in section["directories"])
    assert calls(lfs_standin) == []


def test_report_node_local_scratch_and_hdfs_staging_are_not_applicable(
        lfs_standin: Path, make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path, tmp_path: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel)."""
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "type": "lustre", "mode": "hdfs",
                                                "local_dirs": str(tmp_path / "ssd"), "striping": STRIPES}))
    section = _prepare(plan)
    entries = {(d["role"], d["status"]) for d in section["directories"]}
    assert ("staging", NOT_APPLICABLE) in entries and ("scratch", NOT_APPLICABLE) in entries
    assert ("output", "applied") in entries
    staging = next(d for d in section["directories"] if d["role"] == "staging")
    assert staging["path"].startswith("hdfs://10.0.0.1:") and "mode hdfs" in staging["reason"]
    assert not (tmp_path / "ssd").exists()  # node-local dirs are made by each node's agent


def test_a_failed_striping_command_is_in_the_report(lfs_standin: Path, make_spec: SpecFactory,
                                                    make_test_plan: PlanFactory, pfs_root: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel), made to fail after the plan was made."""
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "type": "lustre", "striping": STRIPES}))
    monkeypatch.delenv("HPC_STANDIN_DIR")
    with pytest.raises(CommandError):
        _prepare(plan)
    report = json.loads(Path(plan.run_dir, "run.json").read_text())["filesystem"]
    assert report["directories"][-1]["status"] == "failed" and "exited with 99" in report["directories"][-1]["reason"]
    assert set(report["directories"][-1]) == {"role", "path", "status", "requested", "reason"}  # as before: no layout


def test_a_write_of_the_filesystem_section_on_a_lost_filesystem_is_the_lost_filesystem_error(
        make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path, monkeypatch: pytest.MonkeyPatch,
        statvfs_gone: Callable[[str], None]) -> None:
    """Issue 38: ``run.json``'s filesystem section is written through :class:`RunRecord`, so a write that fails
    because the shared filesystem went away is :class:`FilesystemLost`, not the ``OSError`` met on the way."""
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared", "root": str(pfs_root)}))
    Path(plan.run_dir, "staging").mkdir(parents=True)
    report = RunReport(cluster_id=plan.cluster_id, name="t", run_dir=plan.run_dir, scheduler="slurm", job_id="1",
                       nodes=[n.name for n in plan.nodes])
    record = run_record(plan, report)

    def write(*args: object, **kwargs: object) -> Path:
        raise OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), str(Path(plan.run_dir, "run.json")))

    monkeypatch.setattr(RunReport, "write", write)
    statvfs_gone(record.health.mount)
    with pytest.raises(FilesystemLost, match="is gone"):
        prepare_filesystem(plan, record)


# -- rendering: rawfs, shim, hdfs --------------------------------------------------------------------

def props(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    names = [p.findtext("name") for p in root.findall("property")]
    assert len(names) == len(set(names)), "a property is set twice"
    return {p.findtext("name"): p.findtext("value") for p in root.findall("property")}


def test_rawfs_is_file_and_has_no_hdfs_site(make_spec: SpecFactory, make_test_plan: PlanFactory) -> None:
    files = render_config(make_test_plan(make_spec(security="simple")))
    assert set(files) == {*CONFIG_TEMPLATES, "nodes.exclude"}  # no hdfs-site.xml
    assert props(files["core-site.xml"])["fs.defaultFS"] == "file:///"
    assert props(files["mapred-site.xml"])["yarn.app.mapreduce.am.staging-dir"].startswith("file:///")


def test_shim_mode_configuration(lfs_standin: Path, make_spec: SpecFactory, make_test_plan: PlanFactory,
                                 pfs_root: Path) -> None:
    """Stand-in `lfs` (Lustre cannot run on this kernel): the plan checks that layouts can be read."""
    plan = make_test_plan(make_spec(filesystem={"local_dirs": "shared", "root": str(pfs_root), "mode": "shim",
                                                "type": "lustre", "striping": STRIPES}))
    files = render_config(plan)
    core = props(files["core-site.xml"])
    assert core["fs.defaultFS"] == "pfs:///"
    assert core["fs.pfs.impl"] == "org.hpchadoop.fs.PfsFileSystem"
    assert core["fs.AbstractFileSystem.pfs.impl"] == "org.hpchadoop.fs.PfsFs"
    assert core["pfs.layout"] == "lustre"
    # issue 17 item 5: each role's layout for the directories created in its own directory
    assert core["pfs.stripe.roles"] == "input,output,staging,scratch"
    assert (core["pfs.stripe.output.dir"], core["pfs.stripe.output.count"], core["pfs.stripe.output.size"],
            core["pfs.stripe.output.index"]) == (f"{plan.run_dir}/output", "4", str(4 << 20), "0")
    assert (core["pfs.stripe.input.dir"], core["pfs.stripe.input.count"], core["pfs.stripe.input.size"]) == \
        (f"{plan.run_dir}/input", "2", str(1 << 20))
    assert "pfs.stripe.input.index" not in core and core["pfs.stripe.staging.dir"] == f"{plan.run_dir}/staging"
    assert core["pfs.stripe.scratch.dir"] == f"{plan.run_dir}/nm-local"
    # no split_size: no pfs.split.size, so the shim derives blocks from stripes; 1 MiB input stripes → 32 MiB
    assert "pfs.split.size" not in core
    assert core["fs.local.block.size"] == str(32 << 20)
    assert core["pfs.locality.hosts"] == "10.0.0.1,10.0.0.2,10.0.0.3"
    mapred, yarn = props(files["mapred-site.xml"]), props(files["yarn-site.xml"])
    assert mapred["yarn.app.mapreduce.am.staging-dir"] == f"pfs://{plan.run_dir}/staging"
    assert mapred["mapreduce.jobhistory.done-dir"] == f"pfs://{plan.run_dir}/history/done"
    assert mapred["mapreduce.jobhistory.intermediate-done-dir"] == f"pfs://{plan.run_dir}/history/intermediate"
    assert yarn["yarn.nodemanager.remote-app-log-dir"] == f"pfs://{plan.run_dir}/app-logs"
    assert "hdfs-site.xml" not in files


def test_shim_layout_follows_detection_and_split_size_wins(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                           pfs_root: Path) -> None:
    spec = make_spec(filesystem={"root": str(pfs_root), "mode": "shim", "split_size": "256m",
                                 "striping": {"input": {"size": "1m"}}})
    core = props(render_config(make_test_plan(spec))["core-site.xml"])
    assert core["pfs.layout"] == "none"  # the test root is a local disk
    assert core["fs.local.block.size"] == core["pfs.split.size"] == str(256 << 20)  # explicit: wins in the shim
    assert "pfs.stripe.roles" not in core  # nothing to stripe on a local disk


def test_the_users_properties_win_over_the_mode(make_spec: SpecFactory, make_test_plan: PlanFactory,
                                                pfs_root: Path) -> None:
    spec = make_spec(filesystem={"root": str(pfs_root), "mode": "shim"},
                     hadoop={"properties": {"mapred-site": {"yarn.app.mapreduce.am.staging-dir": "pfs:///elsewhere"}}})
    assert props(render_config(make_test_plan(spec))["mapred-site.xml"])["yarn.app.mapreduce.am.staging-dir"] \
        == "pfs:///elsewhere"


def test_hdfs_mode_configuration(make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path) -> None:
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "mode": "hdfs", "split_size": "64m"}))
    files = render_config(plan)
    nn = f"hdfs://10.0.0.1:{plan.ports.nn}"
    assert props(files["core-site.xml"])["fs.defaultFS"] == nn
    hdfs = props(files["hdfs-site.xml"])
    assert hdfs["dfs.namenode.rpc-address"] == f"10.0.0.1:{plan.ports.nn}"
    assert hdfs["dfs.namenode.http-address"] == f"10.0.0.1:{plan.ports.nn_web}"
    assert hdfs["dfs.namenode.name.dir"] == f"file://{plan.run_dir}/hdfs/name"
    assert hdfs["dfs.datanode.data.dir"] == f"file://{plan.run_dir}/hdfs/data/${{hpc.node.name}}"
    assert hdfs["dfs.datanode.address"] == f"${{hpc.node.address}}:{plan.ports.dn}"
    assert hdfs["dfs.datanode.http.address"] == f"${{hpc.node.address}}:{plan.ports.dn_web}"
    assert hdfs["dfs.datanode.ipc.address"] == f"${{hpc.node.address}}:{plan.ports.dn_ipc}"
    assert hdfs["dfs.replication"] == "1" and hdfs["dfs.blocksize"] == str(64 << 20)
    mapred = props(files["mapred-site.xml"])
    assert mapred["yarn.app.mapreduce.am.staging-dir"] == f"{nn}{plan.run_dir}/staging"
    assert mapred["mapreduce.jobhistory.done-dir"] == f"{nn}{plan.run_dir}/history/done"
    # app-logs/ on HDFS is made by Hadoop (1777 is fine there): Hadoop's own log-aggregation controller
    assert "yarn.log-aggregation.file-controller.TFile.class" not in props(files["yarn-site.xml"])


def test_hdfs_mode_roles_and_memory(make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path) -> None:
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "mode": "hdfs"}, nodemanager_on_master=False))
    assert plan.nodes[0].roles == ("namenode", "datanode", "resourcemanager", "historyserver")
    assert [n.roles for n in plan.nodes[1:]] == [("datanode", "nodemanager")] * 2
    hadoop = {"daemon_heap": "8g", "containers_per_node": 40}  # more than 64 GiB nodes hold: memory decides
    rawfs = make_test_plan(make_spec(hadoop=hadoop, filesystem={"root": str(pfs_root)}))
    hdfs = make_test_plan(make_spec(hadoop=hadoop, filesystem={"root": str(pfs_root), "mode": "hdfs"}))
    assert rawfs.memory.nodemanager_mb - hdfs.memory.nodemanager_mb == 2 * 8192  # two more daemon heaps


def test_namenode_format_command(make_spec: SpecFactory, make_test_plan: PlanFactory, pfs_root: Path) -> None:
    plan = make_test_plan(make_spec(filesystem={"root": str(pfs_root), "mode": "hdfs"}))
    master = plan.nodes[0]
    command = format_command(plan, master)
    assert command.argv[-5:] == ["org.apache.hadoop.hdfs.server.namenode.NameNode", "-format", "-nonInteractive",
                                 "-clusterid", plan.cluster_id]
    assert "-Dhadoop.log.file=namenode-format.log" in command.argv
    assert command.out == Path(master.log_dir) / "namenode-format.out"
    assert f"-Dhpc.node.name={plan.nodes[1].name}" in daemon_command(plan, plan.nodes[1], "datanode").argv
    assert namenode_dir(plan) == Path(plan.run_dir, "hdfs", "name")
    assert datanode_dir(plan, plan.nodes[2]) == Path(plan.run_dir, "hdfs", "data", "n3")
    assert needs_format(plan)
    (namenode_dir(plan) / "current").mkdir(parents=True)
    (namenode_dir(plan) / "current" / "VERSION").write_text("namespaceID=1\n")
    assert not needs_format(plan)


def test_unknown_mode_and_type_are_refused(make_spec: SpecFactory) -> None:
    with pytest.raises(UserError, match="rawfs"):
        make_spec(filesystem={"mode": "rawfile"})
    with pytest.raises(UserError, match="lustre"):
        make_spec(filesystem={"type": "beegfs"})
    with pytest.raises(UserError, match="stripe"):
        make_spec(filesystem={"striping": {"input": {"stripes": 2}}})


def test_a_step_failed_on_a_full_filesystem_names_it(tmp_path: Path) -> None:
    """Issue 13 item 6: the fewest free bytes seen while the step ran decide, not what is free after it (a failed
    task's partial output is deleted when it fails); ENOSPC with room on the root points at node-local dirs."""
    from launcher.filesystems import FULL_FREE_BYTES, full_filesystem

    mount = detect(tmp_path).mount_point
    full = full_filesystem(tmp_path, [], min_free=3 << 20)
    assert full is not None and full.startswith(f"the filesystem of {mount} filled up (3 MiB free at the lowest, of ")
    elsewhere = full_filesystem(tmp_path, ["java.io.IOException: No space left on device"], min_free=FULL_FREE_BYTES)
    assert elsewhere is not None and "check the nodes' local directories" in elsewhere
    assert full_filesystem(tmp_path, ["Exception: boom"], min_free=FULL_FREE_BYTES) is None


# -- issue 11, folded from tests/unit/test_shared_root.py: Issue #11: a batch job's cluster directory must be
# on a filesystem every node shares (launcher/filesystems/__init__.py ``check_shared_root``,
# launcher/filesystems/detect.py ``node_local_type``), checked before anything is queued.


detect_module = importlib.import_module("launcher.filesystems.detect")


def _allocation(scheduler: str = "slurm", nodes: int = 1, preview: bool = False) -> Allocation:
    return Allocation(scheduler=scheduler, job_id="1", nodes=tuple(Node(f"n{i}", "10.0.0.1") for i in range(nodes)),
                      cores_per_node=4, memory_per_node=8 << 30, walltime=600.0, preview=preview)


def test_a_batch_job_with_a_local_root_is_refused(make_spec: Callable[..., JobSpec]) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    spec = make_spec()
    with pytest.raises(UserError, match="which the compute nodes do not share") as info:
        check_shared_root(spec, _allocation(preview=True))
    assert info.value.field == "filesystem.root" and "parallel filesystem" in info.value.fix
    with pytest.raises(UserError):
        check_shared_root(spec, _allocation(nodes=3))  # `run` inside a 3-node allocation


def test_local_backend_one_node_run_and_shared_true_may_use_a_local_root(make_spec: Callable[..., JobSpec]) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    check_shared_root(make_spec(scheduler="local", nodes=1), _allocation("local"))
    check_shared_root(make_spec(nodes=1), _allocation(nodes=1))  # `run` in a one-node allocation: all on that node
    check_shared_root(make_spec(filesystem={"root": "/tmp/x", "shared": True}), _allocation(preview=True))


def test_shared_false_refuses_even_a_shared_filesystem(make_spec: Callable[..., JobSpec],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 (was ``tests/unit/test_shared_root.py``)."""
    monkeypatch.setattr(detect_module, "node_local_type", lambda path: None)
    check_shared_root(make_spec(), _allocation(preview=True))
    with pytest.raises(UserError, match="declared node-local"):
        check_shared_root(make_spec(filesystem={"root": "/tmp/x", "shared": False}), _allocation(preview=True))


# -- issue 25 item 4, folded from tests/unit/test_lost_filesystem.py: The shared filesystem gone in the middle
# of a run (issue 25 item 4), the parts that need no daemons: what tells that a mount is gone (``ENOTCONN``,
# ``ECONNABORTED``), the one line that says so, and the run's final record kept on the node.
# tests/integration/test_lost_filesystem.py kills the OrangeFS stand-in's client under a running cluster.


ENOTCONN = OSError(errno.ENOTCONN, os.strerror(errno.ENOTCONN), "/mnt/ofs/me/hpc-hadoop/c1/run.json")


def test_a_mount_is_gone_when_its_error_and_the_mount_point_say_so(monkeypatch: pytest.MonkeyPatch,
                                                                    statvfs_gone: Callable[[str], None]) -> None:
    """Issue 25 item 4 (was ``tests/unit/test_lost_filesystem.py``)."""
    try:
        try:
            raise ENOTCONN
        except OSError:
            raise RuntimeError("while writing run.json") from None  # noqa: TRY301
    except RuntimeError as exc:
        wrapped: BaseException = exc
    assert gone_error(wrapped) is ENOTCONN  # the context kept by `from None` is searched too
    assert gone_error(OSError(errno.ENOSPC, "No space left on device")) is None
    assert gone("/mnt/ofs") is None  # not a mount here: statvfs fails with ENOENT, which is not "gone"
    statvfs_gone("/mnt/ofs")
    lost = gone("/mnt/ofs", ENOTCONN, "during step 1 (wordcount)")
    assert isinstance(lost, FilesystemLost)
    assert str(lost) == ("the shared filesystem at /mnt/ofs is gone (ENOTCONN: Transport endpoint is not connected) "
                         "during step 1 (wordcount)")
    assert lost.to_dict() == {"mount": "/mnt/ofs", "errno": "ENOTCONN",
                              "strerror": "Transport endpoint is not connected"}
    assert gone("/mnt/ofs", OSError(errno.ENOSPC, "full")) is None  # the error must say so too
    assert gone(os.getcwd(), ENOTCONN) is None  # ... and the mount point (a socket's ENOTCONN is not the mount's)
