"""Putting a built part of a runtime prefix in place (:mod:`launcher.runtime.install`,
:mod:`launcher.runtime.spark_install`): built in a temporary directory inside the prefix, its modes set, then renamed
into place whole, so that an interrupted or failed install leaves no half part that the launcher would pick up.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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
