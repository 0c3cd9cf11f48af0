"""Putting a built part of a runtime prefix in place (:mod:`launcher.runtime.install`,
:mod:`launcher.runtime.spark_install`): built in a temporary directory inside the prefix, its modes set, then renamed
into place whole, so that an interrupted or failed install leaves no half part that the launcher would pick up; two
installs into one prefix take turns (:func:`install_lock`).
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from launcher.util.errors import UserError
from launcher.util.safedirs import check_private_dir, make_private_dir, nearest_level, owner_name

#: The mode of a prefix's directories that :func:`make_shared_dir` makes: every user of a site install reads them.
SHARED_DIR_MODE = 0o755


def make_shared_dir(path: Path, *, field: str | None = None) -> None:
    """Make the directory ``path`` (a runtime prefix, a site archive directory) that other users read: each missing
    level one at a time from its nearest existing parent (:func:`launcher.util.safedirs.make_private_dir`), every one
    checked to be ours, not a symbolic link and not writable by others before the next is made in it, then set to
    0755; an existing ``path`` is checked the same way (:func:`launcher.util.safedirs.check_private_dir`), and the
    existing parent the first level goes into must not be writable by others unless it is sticky (``/tmp``). Under a
    root another user can write (``--prefix /tmp/x``), a level she made first is refused, never used.

    Raises:
        UserError: a level is refused (one line naming it, its owner and mode, ``field``).
        OSError: a level cannot be made.
    """
    top = nearest_level(path)
    if top == Path(os.path.abspath(path)):
        check_private_dir(path, field=field)
        return
    info = os.stat(top)
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:  # others could rename what we make in it
        raise UserError(f"{top} is writable by others without the sticky bit (owner {owner_name(info.st_uid)}, mode "
                        f"{stat.S_IMODE(info.st_mode):04o}): {path} would be made in it", field=field,
                        fix="name a directory below one of your own, or below a sticky one such as /tmp")
    for level in make_private_dir(top, path, field=field):
        level.chmod(SHARED_DIR_MODE)


def replace_dir(home: Path, built: Path, work: Path) -> None:
    """Move the directory ``built`` to ``home`` (both in the same prefix, so a rename); an old (incomplete or other
    version) one at ``home`` is moved into ``work`` first, and so removed with it.

    Raises:
        OSError: a rename failed (e.g. the prefix is not writable).
    """
    if home.exists() or home.is_symlink():
        home.rename(work / "old")
    built.rename(home)


def publish(root: Path) -> None:
    """Set the modes of everything under ``root`` (``root`` too) for a prefix every user of a site install reads:
    readable by all (directories and executables also searchable/runnable by all), writable by the owner only
    (whatever umask the installing account has: a software account's 077 would otherwise hide a site's Spark from
    its users). Symbolic links are left alone (the builds make none).

    Raises:
        OSError: a mode cannot be set.
    """
    for path in (root, *root.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode) & ~0o022 | 0o444
        if stat.S_ISDIR(info.st_mode) or info.st_mode & stat.S_IXUSR:
            mode |= 0o111
        if mode != stat.S_IMODE(info.st_mode):
            os.chmod(path, mode)


@contextmanager
def install_lock(prefix: Path, *, say: Callable[[str], None] = lambda line: None) -> Iterator[None]:
    """Hold ``prefix``'s install lock: an exclusive ``flock`` of the prefix directory itself (made and checked by
    :func:`make_shared_dir` first; no file is added to it). A second ``runtime install`` into the same prefix waits
    until the first is done, then finds its parts complete and writes nothing (without it, both would build every
    part and the last rename would win). The kernel drops the lock when its holder ends, however it ends.

    Args:
        prefix: the runtime prefix.
        say: called once with a line saying what it waits for, when another install holds the lock.

    Raises:
        UserError: the prefix is refused (:func:`make_shared_dir`).
        OSError: the prefix cannot be made or opened.
    """
    make_shared_dir(prefix)
    fd = os.open(prefix, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another runtime install into {prefix} to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
