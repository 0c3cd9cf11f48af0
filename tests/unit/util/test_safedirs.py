"""launcher/util/safedirs.py and the cluster directory's levels (issue 36 item 2): a directory below a root every user
writes to is made one level at a time, mode 0700, and used only when it is ours, not a symbolic link and not writable
by others, on real directories owned by real accounts (``hhmallory``, ``hhalice``: ``tests/users.py``; the suite runs
as root, so root's own directories are "ours" here and alice's admin-made directory is tried as alice herself)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.plan.cluster_plan import cluster_dir_root, make_cluster_directory
from launcher.util import safedirs
from launcher.util.errors import UserError
from launcher.util.safedirs import check_private_dir, check_private_tree, levels, make_private_dir
from tests.conftest import REPO
from tests.users import TestUser, make_user, sticky_dir


@pytest.fixture
def sticky_root() -> Iterator[Path]:
    """A root like ``/tmp`` or a scratch filesystem's: mode 1777, every user may make a directory in it (under
    ``/tmp``, which every user can reach: :func:`tests.users.shared_base`)."""
    with sticky_dir("hh-safedirs", "scratch") as root:
        yield root


def mallorys(path: Path, mallory: TestUser, *, levels: int = 1, mode: int = 0o777) -> Path:
    """``path`` and the ``levels - 1`` directories above it made by mallory herself (her uid: ``mkdir`` in her own
    process), each then given ``mode``."""
    chain = [path, *path.parents][:levels][::-1]
    for level in chain:
        done = mallory.run(["sh", "-c", 'mkdir "$1" && chmod "$2" "$1"', "sh", str(level), f"{mode:o}"], cwd=Path("/"))
        assert done.returncode == 0, done.stderr
    return path


def test_levels_below_a_root_parents_first(tmp_path: Path) -> None:
    assert levels(tmp_path, tmp_path / "a" / "b") == [tmp_path / "a", tmp_path / "a" / "b"]
    assert levels(tmp_path, tmp_path / "a" / ".." / "c") == [tmp_path / "c"]  # normalized by name
    with pytest.raises(ValueError):
        levels(tmp_path / "a", tmp_path / "b")
    with pytest.raises(ValueError):
        levels(tmp_path, tmp_path)


def test_each_level_is_made_0700_one_at_a_time_whatever_the_umask(sticky_root: Path) -> None:
    target = sticky_root / "me" / "hpc-hadoop" / "c-1"
    old = os.umask(0)
    try:
        made = make_private_dir(sticky_root, target)
    finally:
        os.umask(old)
    assert made == [sticky_root / "me", sticky_root / "me" / "hpc-hadoop", target]
    assert [oct(p.stat().st_mode & 0o7777) for p in made] == ["0o700"] * 3
    assert make_private_dir(sticky_root, target) == []  # all there and ours: nothing to make, accepted
    with pytest.raises(FileExistsError):
        make_private_dir(sticky_root, target, exist_ok=False)


def test_a_directory_another_user_made_is_refused_and_nothing_is_made_in_it(sticky_root: Path) -> None:
    mallory = make_user("hhmallory")
    hers = mallorys(sticky_root / "me" / "hpc-hadoop", mallory, levels=2)  # <root>/me and <root>/me/hpc-hadoop
    with pytest.raises(UserError) as refused:
        make_private_dir(sticky_root, hers / "c-1", field="filesystem.root")
    assert str(refused.value) == (
        f"filesystem.root: {sticky_root / 'me'} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses no "
        "directory another user made (fix: remove it or ask hhmallory to (it is not yours), then run again)")
    assert list(hers.iterdir()) == []
    with pytest.raises(UserError, match=r"me is not yours \(owner hhmallory, mode 0777\)"):
        check_private_tree(sticky_root, hers / "c-1", missing_ok=True)


def test_a_directory_of_ours_that_others_can_write_is_refused_with_chmod_as_the_fix(sticky_root: Path) -> None:
    mine = sticky_root / "me"
    mine.mkdir()
    mine.chmod(0o777)  # made by us, but with umask 000
    with pytest.raises(UserError) as refused:
        make_private_dir(sticky_root, mine / "hpc-hadoop")
    assert str(refused.value) == (f"{mine} is writable by its group and others (owner root, mode 0777): they could "
                                  f"swap what is in it (fix: chmod go-w {mine})")
    mine.chmod(0o775)
    with pytest.raises(UserError, match=r"writable by its group \(owner root, mode 0775\)"):
        check_private_dir(mine)
    assert not (mine / "hpc-hadoop").exists()
    mine.chmod(0o755)  # a site's admin-made directory, readable by all: accepted
    assert make_private_dir(sticky_root, mine / "hpc-hadoop") == [mine / "hpc-hadoop"]


def test_a_symbolic_link_is_refused_even_to_a_directory_of_ours(sticky_root: Path) -> None:
    elsewhere = sticky_root.parent / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (sticky_root / "me").symlink_to(elsewhere)
    with pytest.raises(UserError) as refused:
        make_private_dir(sticky_root, sticky_root / "me" / "hpc-hadoop")
    assert str(refused.value) == (f"{sticky_root / 'me'} is a symbolic link to {elsewhere} (owner root, mode 0777): "
                                  "hpc-hadoop follows no link here (fix: remove it, then run again)")
    assert list(elsewhere.iterdir()) == []


def test_a_file_and_an_owner_without_a_name_are_named_as_they_are(sticky_root: Path) -> None:
    (sticky_root / "f").write_text("")
    with pytest.raises(UserError, match=r"f is a regular file, not a directory \(owner root, mode 06"):
        check_private_dir(sticky_root / "f")
    nobody = sticky_root / "nobody"
    nobody.mkdir(mode=0o700)
    os.chown(nobody, 48213, 48213)  # a uid no account has
    with pytest.raises(UserError) as refused:
        check_private_dir(nobody)
    assert f"{nobody} is not yours (owner uid 48213, mode 0700)" in str(refused.value)
    assert "ask uid 48213 to" in str(refused.value)


def test_check_private_tree_stops_at_the_first_missing_level_when_asked(sticky_root: Path) -> None:
    (sticky_root / "me").mkdir(mode=0o700)
    assert check_private_tree(sticky_root, sticky_root / "me" / "x" / "y", missing_ok=True) == [sticky_root / "me"]
    with pytest.raises(FileNotFoundError):
        check_private_tree(sticky_root, sticky_root / "me" / "x")


HELPER_AS_USER = """
import json, os, sys
from pathlib import Path
from launcher.plan.cluster_plan import make_cluster_directory
run_dir = Path(sys.argv[1])
made = make_cluster_directory(run_dir)
print(json.dumps({"made": [str(p) for p in made],
                  "modes": {str(p): oct(os.stat(p).st_mode & 0o7777) for p in (run_dir.parent.parent, run_dir.parent,
                                                                               run_dir)}}))
"""


def test_a_user_directory_the_site_made_for_her_is_accepted_and_hpc_hadoop_is_made_0700(sticky_root: Path) -> None:
    """``<root>/<user>`` made by an administrator for alice (hers, mode 0755): her cluster directory is made in it;
    ``hpc-hadoop`` is 0700 (it lists every cluster id), and one left 0755 by an earlier release is narrowed."""
    alice = make_user("hhalice")
    home = sticky_root / alice.name
    home.mkdir()
    alice.own(home, 0o755)
    run_dir = home / "hpc-hadoop" / "c-1"  # as alice: <root>/<user>/hpc-hadoop/<id>, below the 1777 root
    done = alice.run([sys.executable, "-c", HELPER_AS_USER, str(run_dir)], env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["made"] == [str(home / "hpc-hadoop"), str(run_dir)]
    assert result["modes"] == {str(home): "0o755", str(home / "hpc-hadoop"): "0o700", str(run_dir): "0o700"}
    (home / "hpc-hadoop").chmod(0o755)  # as hpc-hadoop made it before issue 36
    done = alice.run([sys.executable, "-c", HELPER_AS_USER, str(home / "hpc-hadoop" / "c-2")],
                     env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["modes"][str(home / "hpc-hadoop")] == "0o700"


def test_mallorys_hpc_hadoop_in_alices_directory_is_refused_as_alice(sticky_root: Path) -> None:
    """alice's own ``<root>/<user>`` once left writable (0777), where mallory made ``hpc-hadoop``: refused as it is
    hers, and alice's cluster directory is not made in it."""
    alice, mallory = make_user("hhalice"), make_user("hhmallory")
    home = sticky_root / alice.name
    home.mkdir()
    alice.own(home, 0o777)
    hers = mallorys(home / "hpc-hadoop", mallory)
    alice.own(home, 0o755)  # alice tightened her directory since; mallory's hpc-hadoop stayed
    done = alice.run([sys.executable, "-c", HELPER_AS_USER, str(hers / "c-1")], env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 1 and "UserError" in done.stderr, done.stderr[-3000:]
    assert (f"filesystem.root: {hers} is not yours (owner hhmallory, mode 0777): hpc-hadoop uses no directory another "
            "user made (fix: remove it or ask hhmallory to (it is not yours), then run again)") in done.stderr
    assert list(hers.iterdir()) == []


def test_a_cluster_directory_elsewhere_is_checked_below_its_parent(tmp_path: Path) -> None:
    """``run --run-dir`` of a directory not shaped ``<root>/<user>/hpc-hadoop/<id>``: only it is below the root."""
    assert cluster_dir_root(tmp_path / "somewhere" / "c-1") == tmp_path / "somewhere"
    made = make_cluster_directory(tmp_path / "somewhere" / "c-1")
    assert made == [tmp_path / "somewhere" / "c-1"]


def test_the_helper_imports_only_the_standard_library_and_the_errors() -> None:
    """The module imports only the standard library and launcher.util.errors (it is at the bottom of the layers)."""
    done = subprocess.run([sys.executable, "-c", "import sys, launcher.util.safedirs as s; "
                           "print(sorted(m for m in sys.modules if m.startswith('launcher')))"],
                          capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "['launcher', 'launcher.util', 'launcher.util.errors', 'launcher.util.safedirs']"


def test_making_a_cluster_directory_makes_the_process_umask_private_and_keeps_the_users(tmp_path: Path) -> None:
    """Issue 36 item 5: from the cluster directory on, what the launcher (and its children) write is private itself
    (umask 077: logs/kdc.log, steps/*.log were 0644 under the usual 022); the ``setup:`` lines keep the user's."""
    os.umask(0o022)
    run_dir = tmp_path / "root" / "alice" / "hpc-hadoop" / "c-1"
    make_cluster_directory(run_dir)
    (run_dir / "kdc.log").write_text("x")
    assert (run_dir / "kdc.log").stat().st_mode & 0o777 == 0o600
    assert safedirs.user_umask() == 0o022 and safedirs.private_umask() == 0o022
