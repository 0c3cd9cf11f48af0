"""The OrangeFS stand-in's permission window (tests/standins/orangefs_fuse.py, ``--permission-cache``): as the real
OrangeFS 2.10 ``pvfs2fuse`` client of issue 36 item 5, one root-owned client with ``allow_other`` serves every user
and reuses a permission result for any user for a moment, so another user read the owner's 0600 file in a 0700
directory right after the owner did (and a refusal of hers refused the owner).

The stand-in is really mounted (FUSE, as root) and two real unprivileged users, ``hhalice`` (the owner) and
``hhmallory``, run real commands on it (``head``, ``touch``, ``chmod``...). The window is asserted both ways, so
that the stand-in cannot lose the bug it imitates; outside the window its own checks must give what the kernel's
give (the same commands on a mount with ``--permission-cache 0``, where the kernel checks: ``default_permissions``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import orangefs_standin
from tests.users import TestUser, make_user, shared_base

#: The stand-in's window in these tests (its default): "within" is done right away, "after" after twice as long.
WINDOW = 0.5
#: What alice makes in a tree of hers: ``priv`` (0700) with ``key`` (0600, ``TOP secret``), ``pub`` (0755) with
#: ``readme`` (0644), ``tool`` (0711, a program) and ``open`` (0666).
ALICES_TREE = """
umask 077; mkdir priv; printf 'TOP secret' > priv/key
umask 022; mkdir pub; printf 'hello\\n' > pub/readme; cp /bin/true pub/tool; chmod 0711 pub/tool
touch pub/open; chmod 0666 pub/open
"""


@pytest.fixture(scope="module")
def users() -> tuple[TestUser, TestUser]:
    """alice (the owner) and mallory (another user of the node), created when this machine lacks them."""
    if os.geteuid() != 0:
        pytest.fail("these tests mount FUSE and run commands as other users: run them as root")
    return make_user("hhalice"), make_user("hhmallory")


@pytest.fixture(scope="module")
def mounts(users: tuple[TestUser, TestUser]) -> Iterator[dict[float, Path]]:
    """The stand-in mounted twice under a directory every user may enter: ``{WINDOW: with the window, 0: the
    kernel checks}``."""
    base = shared_base("hh-ofs-window")
    try:
        with orangefs_standin(base / "window", permission_cache=WINDOW) as window, \
                orangefs_standin(base / "kernel", permission_cache=0) as kernel:
            yield {WINDOW: window, 0: kernel}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def alices_tree(mount: Path, alice: TestUser, name: str) -> Path:
    """``<mount>/<name>``, alice's (0755), with :data:`ALICES_TREE` made in it by alice."""
    home = mount / name
    home.mkdir()
    alice.own(home, 0o755)
    made = alice.run(["sh", "-c", ALICES_TREE], cwd=home)
    assert made.returncode == 0, made.stderr
    return home


def head(user: TestUser, home: Path) -> subprocess.CompletedProcess[str]:
    """``head -c 3 priv/key`` as ``user`` in alice's tree ``home``."""
    return user.run(["head", "-c", "3", "priv/key"], cwd=home, timeout=30)


def refused(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode != 0 and done.stdout == "" and "Permission denied" in done.stderr


def super_options(mountpoint: Path) -> set[str]:
    """The super block options of the mount on ``mountpoint`` (``/proc/self/mountinfo``, after ``-``, the third)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[4] == str(mountpoint):
            return set(fields[fields.index("-") + 3].split(","))
    raise AssertionError(f"{mountpoint} is not mounted")


def test_another_user_reads_the_owners_file_right_after_the_owner(mounts: dict[float, Path],
                                                                  users: tuple[TestUser, TestUser]) -> None:
    """Issue 36 item 5, the real client's bug imitated: the owner stats and reads her 0600 file in her 0700
    directory; another user's read right after gets its content; after the window she is refused."""
    alice, mallory = users
    home = alices_tree(mounts[WINDOW], alice, "after-owner")
    time.sleep(2 * WINDOW)  # alice's own results from making the tree are gone
    assert alice.run(["stat", "-c", "%a", "priv/key"], cwd=home).stdout.strip() == "600"
    start = time.monotonic()
    assert head(alice, home).stdout == "TOP"
    theirs = head(mallory, home)
    elapsed = time.monotonic() - start
    assert elapsed < WINDOW, f"the owner's read and mallory's took {elapsed:.2f} s, not within the {WINDOW} s window"
    assert (theirs.returncode, theirs.stdout) == (0, "TOP"), theirs.stderr
    time.sleep(2 * WINDOW)
    later = head(mallory, home)
    assert refused(later), later


def test_a_refusal_of_another_user_refuses_the_owner_right_after(mounts: dict[float, Path],
                                                                 users: tuple[TestUser, TestUser]) -> None:
    """Issue 36 item 5, the other way (the owner's KDC: ``Failed to store keytab ... Permission denied``): mallory
    is refused the owner's file, and the owner right after too; after the window the owner reads it."""
    alice, mallory = users
    home = alices_tree(mounts[WINDOW], alice, "before-owner")
    time.sleep(2 * WINDOW)
    start = time.monotonic()
    theirs = head(mallory, home)
    own = head(alice, home)
    elapsed = time.monotonic() - start
    assert elapsed < WINDOW, f"mallory's read and the owner's took {elapsed:.2f} s, not within the {WINDOW} s window"
    assert refused(theirs), theirs
    assert refused(own), own
    time.sleep(2 * WINDOW)
    later = head(alice, home)
    assert (later.returncode, later.stdout) == (0, "TOP"), later.stderr


def test_without_the_window_the_kernel_checks_each_user(mounts: dict[float, Path],
                                                        users: tuple[TestUser, TestUser]) -> None:
    """``--permission-cache 0``: mounted with ``default_permissions`` (the window mount without it, both with
    ``allow_other``), and mallory never reads the owner's file, even right after the owner."""
    alice, mallory = users
    assert {"allow_other", "default_permissions"} <= super_options(mounts[0])
    assert "allow_other" in super_options(mounts[WINDOW])
    assert "default_permissions" not in super_options(mounts[WINDOW])
    home = alices_tree(mounts[0], alice, "kernel")
    for _ in range(3):
        assert head(alice, home).stdout == "TOP"
        theirs = head(mallory, home)
        assert refused(theirs), theirs


def _python(code: str) -> list[str]:
    return ["/usr/bin/python3", "-c", f"import os; {code}"]


#: What mallory tries in alice's tree (and in her own directory ``../theirs``), and whether the kernel lets her.
CASES = [
    ("reads a 0644 file in a 0755 directory", ["cat", "pub/readme"], True),
    ("lists a 0755 directory", ["ls", "pub"], True),
    ("stats a 0644 file", ["stat", "-c", "%a %U", "pub/readme"], True),
    ("runs a 0711 program", ["pub/tool"], True),
    ("may read a 0644 file, says access(2)", ["test", "-r", "pub/readme"], True),
    ("makes a file in her own directory", ["touch", "../theirs/mine"], True),
    ("appends to a 0666 file (O_CREAT) in a 0755 directory", ["sh", "-c", "echo x >> pub/open"], True),
    ("may write a 0644 file, says access(2)", ["test", "-w", "pub/readme"], False),
    ("reads a 0600 file in a 0700 directory", ["cat", "priv/key"], False),
    ("stats a file in a 0700 directory", ["stat", "priv/key"], False),
    ("lists a 0700 directory", ["ls", "priv"], False),
    ("enters a 0700 directory", ["sh", "-c", "cd priv"], False),
    ("makes a file in a 0700 directory", ["touch", "priv/new"], False),
    ("makes a file in a 0755 directory", ["touch", "pub/new"], False),
    ("makes a directory in a 0755 directory", ["mkdir", "pub/sub"], False),
    ("appends to a 0644 file", ["sh", "-c", "echo x >> pub/readme"], False),
    ("truncates a 0644 file", ["truncate", "-s", "0", "pub/readme"], False),
    ("removes a file of a 0755 directory", ["rm", "-f", "pub/readme"], False),
    ("renames a file in a 0755 directory", ["mv", "pub/readme", "pub/moved"], False),
    ("moves her file into a 0755 directory", ["mv", "../theirs/mine", "pub/mine"], False),
    ("hard-links a 0644 file (protected_hardlinks)", ["ln", "pub/readme", "../theirs/link"], False),
    ("chmods the owner's file", ["chmod", "0666", "pub/readme"], False),
    ("chowns the owner's file to herself", _python("os.chown('pub/readme', os.getuid(), -1)"), False),
    ("sets the times of the owner's file", _python("os.utime('pub/readme', (0, 0))"), False),
    ("touches the owner's file", ["touch", "pub/readme"], False),
    ("sets a user. attribute on the owner's file", ["setfattr", "-n", "user.mallory", "-v", "1", "pub/readme"],
     False),
]


def test_outside_the_window_the_standins_checks_are_the_kernels(mounts: dict[float, Path],
                                                                users: tuple[TestUser, TestUser]) -> None:
    """Without ``default_permissions`` the stand-in decides: outside the window mallory gets from it what she gets
    from the kernel (the same exit code and output, on a mount where the kernel checks), for what :data:`CASES`
    lists."""
    alice, mallory = users
    homes = {}
    for cache, mount in mounts.items():
        homes[cache] = alices_tree(mount, alice, "cases")
        theirs = mount / "theirs"
        theirs.mkdir()
        mallory.own(theirs, 0o755)
    time.sleep(2 * WINDOW)
    wrong = []
    for what, argv, allowed in CASES:
        got = {cache: mallory.run(argv, cwd=home, timeout=30) for cache, home in homes.items()}
        kernel, standin = ((done.returncode, done.stdout, done.stderr) for done in (got[0], got[WINDOW]))
        if standin != kernel or (kernel[0] == 0) != allowed:
            wrong.append(f"mallory {what} ({' '.join(argv)}): kernel {kernel}, stand-in {standin}, "
                         f"expected {'allowed' if allowed else 'refused'}")
    assert wrong == [], "\n".join(wrong)
