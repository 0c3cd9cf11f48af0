"""Putting a built part of a runtime prefix in place (:mod:`launcher.runtime.install`,
:mod:`launcher.runtime.spark_install`, :mod:`launcher.runtime.jupyter_install`): built in a temporary directory inside
the prefix, its modes set, then renamed into place whole, so that an interrupted or failed install leaves no half part
that the launcher would pick up; two installs into one prefix take turns (:func:`install_lock`). The build tools (pip,
Maven, ``javac``) run through :func:`run_tool`; a part pip installs, through :func:`pip_part`.
"""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from launcher.util.errors import UserError
from launcher.util.safedirs import check_private_dir, make_private_dir, nearest_level, owner_name

#: The mode of a prefix's directories that :func:`make_shared_dir` makes: every user of a site install reads them.
SHARED_DIR_MODE = 0o755
#: Seconds pip may take (a first Spark install downloads ~450 MB and builds the sdist's wheel).
PIP_TIMEOUT_S = 3600
#: The fix named when pip fails: it reads its own configuration and environment (``PIP_INDEX_URL``,
#: ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``: a site's mirror or wheelhouse); no option of ours changes where it downloads.
PIP_FIX = "check access to PyPI (or the index pip is configured with: PIP_INDEX_URL, pip.conf)"
#: Lines of a failed tool's output shown.
LOG_TAIL = 40


@dataclass(frozen=True)
class PartResult:
    """What installing one part did.

    Attributes:
        path: where the part is (Spark's home, ``<prefix>/spark/pyspark``; the jar; ``<prefix>/jupyter``).
        changed: ``False`` when it was complete already (nothing was written).
    """

    path: Path
    changed: bool


def run_tool(argv: list[str], log: Path, timeout: float, *, what: str, fix: str) -> None:
    """Run ``argv`` (stdin closed), its output into ``log``.

    Raises:
        UserError: it could not start, exited non-zero or ran longer than ``timeout`` seconds: ``what`` failed, the
            command and the last :data:`LOG_TAIL` lines of its output, and ``fix``.
    """
    try:
        with log.open("w") as out:
            code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=timeout, check=False).returncode
        why = f"exit {code}" if code else ""
    except subprocess.TimeoutExpired:
        why = f"more than {timeout:.0f} s"
    except OSError as exc:
        why = f"cannot run {argv[0]}: {exc.strerror}"
    if why:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-LOG_TAIL:]) if log.is_file() else ""
        raise UserError(f"{what} failed ({why}): {' '.join(argv)}" + (f"\n{tail}" if tail else ""), fix=fix)


def pip_part(prefix: Path, subdir: str, requirements: Sequence[str], *, what: str,
             lacking: Callable[[Path], list[str]], python: str | None = None,
             stamp: tuple[str, str] | None = None) -> None:
    """Install ``requirements`` with pip into ``<prefix>/<subdir>``: ``python -m pip install --target`` a stage in a
    temporary directory inside ``prefix``, checked, its modes set for every user (:func:`publish`), then renamed over
    the old one (:func:`replace_dir`).

    Args:
        prefix: the runtime prefix (made or checked by :func:`make_shared_dir`).
        subdir: the part's directory in it (``spark``, ``jupyter``).
        requirements: pip requirement specifiers (``pyspark==4.1.1``).
        what: the part as a failure names it ("Spark 4.1.1").
        lacking: what a staged directory lacks of a complete part (empty: complete).
        python: the interpreter whose pip installs it; default: the running one (``sys.executable``).
        stamp: ``(file name, text)`` written into the stage before it is published (the pins it was made with).

    Raises:
        UserError: the prefix is refused; pip failed or timed out (the end of its output in the message); the stage
            lacks a part ("report this as a bug").
        OSError: the prefix cannot be written.
    """
    make_shared_dir(prefix, field="--prefix")
    with tempfile.TemporaryDirectory(prefix=f".{subdir}-install-", dir=prefix) as tmp:
        work = Path(tmp)
        stage = work / subdir
        argv = [python or sys.executable, "-m", "pip", "install", "--no-input", "-q", "--target", str(stage),
                *requirements]
        run_tool(argv, work / "pip.log", PIP_TIMEOUT_S, what=f"installing {what}", fix=PIP_FIX)
        missing = lacking(stage)
        if missing:
            raise UserError(f"{what} as pip installed it in {stage} lacks {', '.join(missing)}",
                            fix="report this as a bug")
        if stamp:
            (stage / stamp[0]).write_text(stamp[1] + "\n")
        publish(stage)
        replace_dir(prefix / subdir, stage, work)


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
