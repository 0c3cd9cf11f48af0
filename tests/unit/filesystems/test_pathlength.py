"""The longest path a run makes under its root, and the refusal of a root too deep for the filesystem
(launcher/filesystems/pathlength.py; issue 25 item 3: OrangeFS's FUSE client makes no path of more than 254 bytes
below its mount point). The same with a real mount and real daemons: tests/integration/test_orangefs.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config.spec import JobSpec
from launcher.filesystems.pathlength import (
    AM_WEB_TMP,
    APP_ID,
    CONTAINER_FILE,
    CONTAINER_ID,
    NM_PRIVATE,
    ORANGEFS_FUSE_PATH_MAX,
    _encoded,
    check_path_lengths,
    history_file_name,
    run_paths,
    try_path,
)
from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.errors import UserError

#: A job history file's name as Hadoop 3.4.2 made it here (user root, job "word count", 1 map, 1 reduce).
REAL_JHIST = ("job_1795751286975_0001-1795751289384-root-word+count-1795751296198-1-1-SUCCEEDED-root.default-"
              "1795751294427.jhist")


def test_a_history_file_name_is_bounded_by_the_job_name_limit(make_spec: Callable[..., JobSpec],
                                                              make_test_plan: Callable[..., ClusterPlan]) -> None:
    """Hadoop's FileNameIndexUtils: ``-`` escaped as %2D, URL-encoding, the job name cut to
    mapreduce.jobhistory.jobname.limit encoded bytes (20 here, Hadoop's default 50)."""
    assert _encoded("hh-ofs") == "hh%2Dofs" and _encoded("word count") == "word+count"
    plan = make_test_plan(make_spec())
    name = history_file_name(plan, "word count")
    fields = name.removesuffix(".jhist").split("-")
    real = REAL_JHIST.removesuffix(".jhist").split("-")
    assert len(fields) == len(real) == 10 and fields[3] == "word+count" and fields[8] == real[8] == "root.default"
    # the longest: a job name cut to 20 bytes, 6-digit task counts
    longest = history_file_name(plan)
    assert len(longest) == len(REAL_JHIST) - len(real[2]) + len(_encoded(plan.user)) + 2 + 2 * 5  # 12 bytes of name
    limited = make_test_plan(make_spec(hadoop={"properties": {"mapred-site": {
        "mapreduce.jobhistory.jobname.limit": 50}}}))
    assert len(history_file_name(limited)) == len(longest) + 38


def test_the_longest_path_comes_from_the_plan(make_spec: Callable[..., JobSpec],
                                              make_test_plan: Callable[..., ClusterPlan], pfs_root: Path) -> None:
    """With filesystem.local_dirs: shared, what a NodeManager makes for each container in its local dir; the
    ApplicationMaster's web temp directory is node-local (issue 25: it was 251 bytes below the mount with a 3-byte
    root); with node-local dirs the longest is a job history file or a container where an agent falls back to
    nm-local/."""
    shared = plan_at(make_test_plan, make_spec(filesystem={"root": str(pfs_root), "local_dirs": "shared"}))
    assert shared.am_tmp_dir == str(Path(shared.nodes[0].work_dir).parent)
    paths = run_paths(shared)
    local_dir = shared.nodemanagers[0].nm_local_dir
    container = Path(local_dir, "usercache", shared.user, "appcache", APP_ID, CONTAINER_ID)
    by_path = {p.path: p for p in paths}
    exit_code = by_path[str(Path(local_dir, NM_PRIVATE))]
    assert exit_code.what == f"a container on {shared.nodemanagers[0].name}: its exit code file"
    assert exit_code.below_root == len(exit_code.path) - len(str(pfs_root)) - 1
    assert str(container / CONTAINER_FILE) in by_path
    assert not [p for p in paths if "jetty" in p.path] and len(NM_PRIVATE) == 135
    assert paths == sorted(paths, key=lambda p: -p.below_root)
    without = run_paths(shared.model_copy(update={"master": shared.master.model_copy(update={"work_dir": ""})}))
    assert without[0].path == str(container / AM_WEB_TMP) and without[0].below_root > 230
    local = run_paths(plan_at(make_test_plan, make_spec()))
    assert local[0].what in ("a job history file", "a container on n1, should it fall back to nm-local/: its exit "
                             "code file"), local[0]
    assert not [p for p in local if "container on" in p.what and "fall back" not in p.what]


def plan_at(make_test_plan: Callable[..., ClusterPlan], spec: JobSpec) -> ClusterPlan:
    """The plan of ``spec`` whose cluster directory is in its root."""
    return make_test_plan(spec, run_dir=Path(spec.filesystem.root, "me", "hpc-hadoop", "t-20240101-000000-abcd"))


def orangefs_plan(plan: ClusterPlan, mount: Path) -> ClusterPlan:
    """``plan`` as if its root were on OrangeFS behind pvfs2fuse mounted at ``mount``."""
    return plan.model_copy(update={"filesystem": plan.filesystem.model_copy(update={"label": "orangefs (fuse)",
                                                                                   "mount_point": str(mount)})})


def test_a_root_too_deep_for_pvfs2fuse_is_refused_in_one_line(make_spec: Callable[..., JobSpec],
                                                              make_test_plan: Callable[..., ClusterPlan],
                                                              pfs_root: Path) -> None:
    """The root's depth below the mount, the limit and the fix; a root of ordinary depth passes, also with
    local_dirs: shared."""
    mount = pfs_root.parent
    depth = len(pfs_root.name)
    plan = orangefs_plan(plan_at(make_test_plan, make_spec(filesystem={"root": str(pfs_root), "local_dirs": "shared"})),
                         mount)
    longest = check_path_lengths(plan, probe=False)
    assert depth + 1 + longest.below_root <= ORANGEFS_FUSE_PATH_MAX
    deep = pfs_root / ("d" * (ORANGEFS_FUSE_PATH_MAX - 1 - longest.below_root - depth))
    deep.mkdir()
    spec = make_spec(filesystem={"root": str(deep), "local_dirs": "shared"})
    plan = orangefs_plan(plan_at(make_test_plan, spec), mount)
    with pytest.raises(UserError) as caught:
        check_path_lengths(plan, probe=False)
    text = str(caught.value)
    assert "\n" not in text, text
    room = ORANGEFS_FUSE_PATH_MAX - 1 - longest.below_root
    assert text == (f"filesystem.root: {deep} is {room + 1} bytes below the mount point {mount} of orangefs (fuse), "
                    f"and a run makes paths {longest.below_root} bytes below it ({longest.what}): "
                    f"{ORANGEFS_FUSE_PATH_MAX + 1} bytes, more than the {ORANGEFS_FUSE_PATH_MAX} OrangeFS's FUSE "
                    f"client (pvfs2fuse) takes (fix: choose a filesystem.root at most {room} bytes below {mount}"
                    + (", or leave filesystem.local_dirs to node-local storage (its default))"
                       if longest.what.startswith("a container") else ")"))


def test_a_root_behind_a_symlink_is_as_deep_as_its_target(make_spec: Callable[..., JobSpec],
                                                            make_test_plan: Callable[..., ClusterPlan],
                                                            pfs_root: Path, tmp_path: Path) -> None:
    """Issue 37 item 2: ``$SCRATCH`` is often a symlink. A root that is a short symlink (inside the mount, or
    outside it) to a directory deep below the mount point is measured where it leads, and refused with the depth,
    the limit and the deepest allowed root; the code before measured the link itself (12 bytes) or found no depth."""
    mount = pfs_root.parent
    longest = check_path_lengths(orangefs_plan(plan_at(make_test_plan, make_spec(
        filesystem={"root": str(pfs_root), "local_dirs": "shared"})), mount), probe=False)
    room = ORANGEFS_FUSE_PATH_MAX - 1 - longest.below_root
    deep = pfs_root / ("d" * (room + 1 - len(pfs_root.name) - 1))
    deep.mkdir()
    assert len(os.fsencode(deep.relative_to(mount))) == room + 1
    inside, outside = pfs_root / "s", tmp_path / "scratch-link"
    inside.symlink_to(deep)
    outside.symlink_to(deep)
    for link in (inside, outside):
        plan = orangefs_plan(plan_at(make_test_plan, make_spec(filesystem={"root": str(link),
                                                                           "local_dirs": "shared"})), mount)
        with pytest.raises(UserError) as caught:
            check_path_lengths(plan, probe=False)
        text = str(caught.value)
        print(text)
        assert text.startswith(f"filesystem.root: {link} (the symlinks resolved: {deep}) is {room + 1} bytes below "
                               f"the mount point {mount} of orangefs (fuse)"), text
        assert f"fix: choose a filesystem.root at most {room} bytes below {mount}" in text, text


def test_a_path_of_the_length_asked_is_made_and_removed(tmp_path: Path) -> None:
    assert try_path(tmp_path, 300) is None and os.listdir(tmp_path) == []


def test_a_history_that_never_reached_done_is_named_in_one_line(tmp_path: Path) -> None:
    """Issue 25: a run reported success while its .jhist, made under a name cut short, never reached done/."""
    from launcher.steps.jobhistory import history_not_kept

    job = "job_1795751286975_0002"
    intermediate, done = tmp_path / "intermediate" / "root", tmp_path / "done" / "2026" / "11" / "27" / "000000"
    intermediate.mkdir(parents=True)
    (intermediate / f"{job}.summary_tmp").write_text("")
    (intermediate / f"{job}-1795751289384-root-aaaa.j").write_text("")
    assert history_not_kept(tmp_path, job, wait_s=0) == (
        f"the job history of {job} was not kept: no .jhist in {tmp_path / 'done'} 0 s after the job, and "
        f"{tmp_path / 'intermediate'} has only {job}-1795751289384-root-aaaa.j, {job}.summary_tmp of it")
    done.mkdir(parents=True)
    (done / f"{job}-1795751289384-root-word+count-1795751296198-1-1-SUCCEEDED-root.default-1.jhist").write_text("")
    assert history_not_kept(tmp_path, job, wait_s=0) is None


def test_the_probe_in_a_file_says_so_instead_of_raising(tmp_path: Path) -> None:
    """Issue 40: the probe's directory is a file (``filesystem.root: ../../etc/passwd``): what went wrong, not the
    ``NotADirectoryError`` of ``tempfile.mkdtemp``."""
    (tmp_path / "passwd").write_text("x")
    assert try_path(tmp_path / "passwd", 300) == "ENOTDIR (Not a directory)"
