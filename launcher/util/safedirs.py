"""Directories below a root that other users can write to: made one level at a time and used only when they are ours,
as OpenSSH's ``StrictModes`` checks a user's files (issue 36; docs/admin-guide.md, Security notes).

The attacker designed against is a second, unprivileged user of the node. She can create any path in a root every user
writes to (``/tmp``, ``/var/tmp``, a 1777 scratch directory, a node-local disk) before our first run: a directory she
made, or one she can write, lets her rename what we put in it and leave a symbolic link farm in its place (the owner's
``hpc-hadoop exec ID -- yarn ...`` then runs her ``bin/yarn``). So every directory hpc-hadoop makes or reuses below
such a root goes through here:

* :func:`make_private_dir` makes each missing level below the root with ``mkdir(mode=0o700)`` (never
  ``parents=True`` below the root), and reads every level with ``lstat``, just made or found, before it goes one
  level down;
* :func:`check_private_dir` (one directory) and :func:`check_private_tree` (every level from below a root down to a
  directory) only check, for what is already there (``env``/``exec`` and the held run before they trust ``bin/`` or
  ``job.yaml``, a run's checks before anything starts).

A level is accepted when it is a directory (not a symbolic link, whatever it points to), owned by this process's uid,
and not writable by its group or by others (``mode & 0o022 == 0``): a site's ``<root>/<user>`` made by an administrator
for the user, the user's and mode 0755 or 0700, passes. A level that fails is refused with a :class:`UserError` (one
line, exit code 2) naming the directory, its owner (user name, or uid when it has none) and mode (octal), and the fix.

The root itself (``filesystem.root``, ``filesystem.local_dirs``, ``$TMPDIR``, ``/var/tmp``) is not checked: it is the
site's (often mode 1777, owned by root or an administrator) and every user's directory goes in it. A root whose
non-root owner is not the user, or one writable by others without the sticky bit (OrangeFS has none), lets its owner
or anyone rename ``<root>/<user>`` at any time: docs/admin-guide.md (Security notes) says what a site must do then.
A missing root is made as before (``mkdir -p``, the umask's mode). What the root must allow is checked once, before
anything is planned, by :func:`check_root` (issue 39): the user must be able to make ``<root>/<user>`` in it (or, for
a root not yet made, the root in its nearest existing parent); a root the user cannot write (another user's 0755, a
0555 one) is refused in one line naming it, its owner and mode, and the fix.

Imports only the standard library and :mod:`launcher.util.errors`.
"""

from __future__ import annotations

import getpass
import os
import pwd
import stat
from pathlib import Path

from launcher.util.errors import UserError

#: The mode of every directory made here (the umask may only narrow it).
PRIVATE_DIR_MODE = 0o700
#: The umask of the launcher from bring-up on, and of each agent and every daemon and container it starts: a file of
#: the owner's cluster is private itself, not only by its directory (issue 36 item 5: a shared FUSE mount's cached
#: permission answers let another user past a 0700 directory); Hadoop's own ``fs.permissions.umask-mode`` is the same.
PRIVATE_UMASK = 0o077
#: The umask this process had before :func:`private_umask` (``None``: not called).
_USER_UMASK: int | None = None


def private_umask() -> int:
    """Give this process :data:`PRIVATE_UMASK` (from the moment it makes or fills a cluster directory: every file it
    and its children make is private itself); returns the user's own umask, kept for what runs the user's commands
    (:func:`user_umask`)."""
    global _USER_UMASK
    before = os.umask(PRIVATE_UMASK)
    if _USER_UMASK is None:
        _USER_UMASK = before
    return _USER_UMASK


def user_umask() -> int:
    """The user's own umask: the one before :func:`private_umask`, else the current one (for the ``setup:`` lines,
    whose files are the user's)."""
    if _USER_UMASK is not None:
        return _USER_UMASK
    current = os.umask(0)
    os.umask(current)
    return current


def owner_name(uid: int) -> str:
    """The user name of ``uid`` (``/etc/passwd``, NSS), or ``uid <n>`` when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _kind(info: os.stat_result) -> str:
    """What a non-directory is, for the refusal: ``a symbolic link``, ``a regular file``..."""
    mode = info.st_mode
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a regular file"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a directory"


def refusal(path: Path, info: os.stat_result, *, field: str | None = None, file: str | None = None) -> UserError | None:
    """Why the directory ``path`` (whose ``lstat`` is ``info``) must not be used, as the :class:`UserError` to raise, or
    ``None`` when it is ours, a directory (not a symbolic link) and not writable by its group or others."""
    mode = stat.S_IMODE(info.st_mode)
    owner = owner_name(info.st_uid)
    facts = f"owner {owner}, mode {mode:04o}"
    ours = info.st_uid == os.getuid()
    undo = "remove it" if ours else f"remove it or ask {owner} to (it is not yours)"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return UserError(f"{path} is a symbolic link to {target} ({facts}): hpc-hadoop follows no link here",
                         field=field, file=file, fix=f"{undo}, then run again")
    if not stat.S_ISDIR(info.st_mode):
        return UserError(f"{path} is {_kind(info)}, not a directory ({facts})", field=field, file=file,
                         fix=f"{undo}, then run again")
    if not ours:
        return UserError(f"{path} is not yours ({facts}): hpc-hadoop uses no directory another user made",
                         field=field, file=file, fix=f"{undo}, then run again")
    writable = [who for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if mode & bit]
    if writable:
        return UserError(f"{path} is writable by {' and '.join(writable)} ({facts}): they could swap what is in it",
                         field=field, file=file, fix=f"chmod go-w {path}")
    return None


def check_private_dir(path: str | Path, *, field: str | None = None, file: str | None = None) -> os.stat_result:
    """Check that the existing directory ``path`` is ours: ``lstat`` it and refuse it unless it is owned by this
    process's uid, a directory, not a symbolic link, and not writable by its group or others.

    Args:
        field: the job file's field (or the argument) that put the directory there, for the error line
            (``filesystem.root``, ``filesystem.local_dirs``, ``ID``); ``file``: the job file.

    Returns:
        Its ``lstat``.

    Raises:
        UserError: it is not ours, a link, not a directory, or writable by others (:func:`refusal`).
        OSError: ``lstat`` fails on it (``FileNotFoundError``: it does not exist).
    """
    path = Path(path)
    info = os.lstat(path)
    refused = refusal(path, info, field=field, file=file)
    if refused is not None:
        raise refused
    return info


def levels(root: str | Path, path: str | Path) -> list[Path]:
    """The directories from just below ``root`` down to ``path``, parents first (``/r``, ``/r/a/b`` → ``/r/a``,
    ``/r/a/b``); both made absolute and normalized (``..`` resolved by name, no link followed).

    Raises:
        ValueError: ``path`` is not below ``root``.
    """
    top = Path(os.path.normpath(os.path.abspath(root)))
    below = Path(os.path.normpath(os.path.abspath(path)))
    parts = below.relative_to(top).parts  # ValueError when not below
    if not parts:
        raise ValueError(f"{below} is the root {top} itself, not a directory below it")
    return [top.joinpath(*parts[:index]) for index in range(1, len(parts) + 1)]


def check_private_tree(root: str | Path, path: str | Path, *, field: str | None = None, file: str | None = None,
                       missing_ok: bool = False) -> list[Path]:
    """:func:`check_private_dir` on every level from just below ``root`` down to ``path`` (the root is not checked),
    parents first: a directory is as safe as the least safe of the directories above it.

    Args:
        missing_ok: stop at the first level that does not exist (nothing below it can be anyone's yet) instead of
            raising ``FileNotFoundError``.

    Returns:
        The levels that exist (all checked).

    Raises:
        UserError: a level is refused (the first one, from the top); or ``root``, or a level above ``path``, is a file
            (``filesystem.root: ../../etc/passwd``: ``lstat`` below it fails with ``ENOTDIR``, issue 40), named with
            its owner and mode.
        OSError: ``lstat`` fails on a level (``FileNotFoundError`` without ``missing_ok``).
        ValueError: ``path`` is not below ``root``.
    """
    found = []
    for level in levels(root, path):
        try:
            check_private_dir(level, field=field, file=file)
        except FileNotFoundError:
            if missing_ok:
                break
            raise
        except NotADirectoryError:
            raise _not_a_directory_above(level, field=field, file=file) from None
        found.append(level)
    return found


def _not_a_directory_above(level: Path, *, field: str | None, file: str | None) -> UserError:
    """The refusal of ``level``, which cannot be looked at because a path above it is not a directory (``ENOTDIR``):
    that path named, what it is, its owner and mode."""
    above = level.parent
    while above != above.parent and not os.path.lexists(above):
        above = above.parent
    try:
        info = os.lstat(above)
    except OSError as exc:
        return UserError(f"{above}, above {level}, cannot be read ({exc.strerror})", field=field, file=file,
                         fix=f"set {field} to a directory you can write" if field else "give a directory")
    facts = f"owner {owner_name(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):04o}"
    return UserError(f"{above}, above {level}, is {_kind(info)}, not a directory ({facts})", field=field, file=file,
                     fix=f"set {field} to a directory you can write" if field else "give a directory")


def make_private_dir(root: str | Path, path: str | Path, *, field: str | None = None, file: str | None = None,
                     exist_ok: bool = True) -> list[Path]:
    """Make ``path`` below ``root`` one level at a time: each missing level with ``mkdir(mode=0o700)``, and every
    level, just made or already there, checked with :func:`check_private_dir` before the next one is made in it. A
    level another user makes between our look and our ``mkdir`` is found by the check that follows. ``root`` is made
    when it is missing (``mkdir -p``, the umask's mode), not checked.

    Args:
        field, file: for the error line (:func:`check_private_dir`).
        exist_ok: ``False``: ``path`` itself must be new (a new cluster directory: its id is unique).

    Returns:
        The levels made, parents first (to remove them again when what they were for is refused).

    Raises:
        UserError: a level is refused: nothing is made below it.
        FileExistsError: ``path`` exists and ``exist_ok`` is false.
        OSError: a level cannot be made (``PermissionError``: its parent is not writable) or read with ``lstat``.
        ValueError: ``path`` is not below ``root``.
    """
    chain = levels(root, path)
    Path(chain[0].parent).mkdir(parents=True, exist_ok=True)
    made = []
    for level in chain:
        try:
            os.mkdir(level, PRIVATE_DIR_MODE)
            made.append(level)
        except FileExistsError:
            if level == chain[-1] and not exist_ok:
                raise
        check_private_dir(level, field=field, file=file)
    return made


def may_write(path: str | Path, info: os.stat_result) -> bool:
    """Whether this process may make an entry in the directory ``path`` (whose ``stat`` is ``info``): for a user other
    than root, the kernel's answer (``os.access(W_OK | X_OK)``: its mode, ACLs, a read-only mount); for root, whom the
    kernel lets write anywhere, also what the mode says as it would to an unprivileged user of that uid and those groups
    (owner bits if the uid owns it, else group bits if one of its groups does, else the others' bits): a root owned by
    another user with mode 0755, or by root with mode 0555, is not written to even by root."""
    if not os.access(path, os.W_OK | os.X_OK):
        return False
    if os.getuid() != 0:
        return True
    mode = info.st_mode
    if info.st_uid == os.getuid():
        bits = stat.S_IWUSR | stat.S_IXUSR
    elif info.st_gid in {os.getgid(), *os.getgroups()}:
        bits = stat.S_IWGRP | stat.S_IXGRP
    else:
        bits = stat.S_IWOTH | stat.S_IXOTH
    return mode & bits == bits


def nearest_level(path: str | Path) -> Path:
    """``path`` when it exists (a symbolic link counts), else its nearest existing parent: where ``mkdir -p`` would
    make it. ``path`` is made absolute first."""
    probe = Path(os.path.abspath(path))
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    return probe


def check_root(root: str | Path, *, field: str | None = "filesystem.root", file: str | None = None) -> Path:
    """Check that the user can put their own directory (``<root>/<user>``) in ``root``, before anything is planned
    (issue 39: ``submit`` in another user's ``/tmp/hpc-hadoop-pfs`` ended in a ``PermissionError`` traceback): a root
    that exists must be a directory (a symbolic link to one is fine: the root is the site's, ``/scratch`` often is
    one) this process may write (:func:`may_write`); for a root not yet made, its nearest existing parent must be
    one, where ``mkdir -p`` makes it (``/tmp``, mode 1777, is). The root's owner is not checked: a 1777 root is
    every user's, whoever owns it (docs/admin-guide.md, Security notes).

    Args:
        root: ``filesystem.root``, absolute and expanded (:func:`launcher.plan.cluster_plan.expand_root`).
        field, file: for the error line.

    Returns:
        The directory that was checked: ``<root>/<user>`` when it is there already (then ``root`` need not be
        writable: a site's 0755 ``/scratch`` holding each user's own directory), else ``root``, or its nearest
        existing parent.

    Raises:
        UserError: that directory is not one, or is not writable by the user: one line naming it, its owner (user
            name, or uid) and mode (octal), and the fix.
    """
    root = Path(os.path.abspath(root))
    mine = root / getpass.getuser()
    if os.path.isdir(mine) and not os.path.islink(mine):
        # The user's level is there (a site that makes /scratch/<user> under a 0755 root, or an earlier run): the
        # root itself need not be writable; what is in it is checked as the user's (check_private_dir).
        return mine
    probe = nearest_level(root)
    try:
        info = os.stat(probe)
    except OSError as exc:  # a dangling link, a level we may not search
        raise UserError(f"{probe} cannot be read ({exc.strerror})", field=field, file=file,
                        fix="set filesystem.root to a directory you can write") from None
    mode, owner = stat.S_IMODE(info.st_mode), owner_name(info.st_uid)
    facts = f"owner {owner}, mode {mode:04o}"
    what = f"{root}" if probe == root else f"{root} does not exist and {probe}, where it would be made,"
    if not stat.S_ISDIR(info.st_mode):
        raise UserError(f"{root if probe == root else f'{probe}, above {root},'} is {_kind(info)}, not a directory "
                        f"({facts})", field=field, file=file,
                        fix="set filesystem.root to a directory you can write")
    if may_write(probe, info):
        return probe
    theirs = info.st_uid != os.getuid()
    fix = (f"ask {owner} to `chmod 1777 {probe}` (every user's, as /tmp is) or set filesystem.root to a directory of "
           "your own" if theirs else f"`chmod u+w {probe}`, or set filesystem.root to a directory you can write")
    why = f": hpc-hadoop cannot make {root / getpass.getuser()} in it" if probe == root else ""
    raise UserError(f"{what} is not writable by you ({facts}){why}",
                    field=field, file=file, fix=fix)


def check_trusted(path: str | Path, *, what: str, field: str | None = None) -> os.stat_result:
    """Check that ``path`` (a file or directory that changes what every user's jobs do: the site's layer, issue 39)
    can be changed only by its owner: neither it nor, if it is a symbolic link, what it points to is writable by its
    group or others; a symbolic link itself is root's or this user's; and no directory above it lets others rename it
    (writable by group or others without the sticky bit). Its owner may be anyone (root, the site's software account):
    the site chose it.

    Args:
        what: what it is, for the error line (``site config``).
        field: the variable or field that named it (``$HPC_HADOOP_SITE_DIR``).

    Returns:
        The ``stat`` of what it is (the link followed).

    Raises:
        UserError: one line naming it, its owner and mode, and the fix.
        OSError: it cannot be read (``FileNotFoundError``: it does not exist).
    """
    path = Path(os.path.abspath(path))
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode) and link.st_uid not in (0, os.getuid()):
        raise UserError(f"{path} is a symbolic link of {owner_name(link.st_uid)}'s: a {what} must not be another "
                        "user's", file=str(path), field=field, fix=f"replace the link by the {what} itself")
    info = os.stat(path)
    for level, facts in ((path, info), *((parent, os.stat(parent)) for parent in Path(os.path.realpath(path)).parents)):
        mode = stat.S_IMODE(facts.st_mode)
        sticky = level != path and mode & stat.S_ISVTX
        writable = [who for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if mode & bit]
        if writable and not sticky:
            owner = owner_name(facts.st_uid)
            ask = "" if facts.st_uid == os.getuid() else f"ask {owner} to "
            which = f"this {what} is" if level == path else f"{level}, a directory above this {what}, is"
            raise UserError(f"{which} writable by {' and '.join(writable)} (owner {owner}, mode {mode:04o}): they "
                            "could change every user's jobs", file=str(path), field=field,
                            fix=f"{ask}`chmod go-w {level}`")
    return info


__all__ = ["PRIVATE_DIR_MODE", "check_private_dir", "check_private_tree", "check_root", "check_trusted", "levels",
           "make_private_dir", "may_write", "nearest_level", "owner_name", "refusal"]
