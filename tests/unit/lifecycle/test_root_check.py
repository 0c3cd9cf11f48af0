"""A ``filesystem.root`` the user cannot write is refused in one line by every command, before anything is planned
(issue 39: another user's ``/tmp/hpc-hadoop-pfs``, mode 0755, ended ``submit`` in a ``PermissionError`` traceback):
the front door's check (:func:`launcher.util.safedirs.check_root`), on real directories. The tests run as root, so a
foreign owner is ``nobody`` (``chown``) and root's own 0555 directory stands for one the user made read-only."""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from launcher.cli.main import main
from launcher.util.errors import UserError
from launcher.util.safedirs import check_root

needs_root = pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")


def foreign_root(tmp_path: Path) -> Path:
    """``tmp_path/shared``, owned by ``nobody``, mode 0755: the first user's, no one else's to write."""
    root = tmp_path / "shared"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    os.chown(root, pwd.getpwnam("nobody").pw_uid, -1)
    return root


def read_only_root(tmp_path: Path) -> Path:
    """``tmp_path/mine``, the user's own, mode 0555."""
    root = tmp_path / "mine"
    root.mkdir()
    os.chmod(root, 0o555)
    return root


def job(tmp_path: Path, root: Path, write_yaml: Callable[..., Path], scheduler: str) -> Path:
    return write_yaml(tmp_path / "job.yaml", {"name": "rootcheck", "scheduler": scheduler,
                                              "filesystem": {"root": str(root)}, "steps": [{"example": "pi"}]})


#: command → (its arguments before the job file, the scheduler of the job file)
COMMANDS = {"render": (["render"], "slurm"), "submit": (["submit"], "slurm"), "start": (["start"], "slurm"),
            "run": (["run"], "local"), "submit-local": (["submit"], "local")}


@needs_root
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_foreign_root_is_one_line_naming_owner_and_mode(command: str, tmp_path: Path,
                                                         write_yaml: Callable[..., Path]) -> None:
    root = foreign_root(tmp_path)
    args, scheduler = COMMANDS[command]
    job_file = job(tmp_path, root, write_yaml, scheduler)
    result = CliRunner().invoke(main, [*args, str(job_file)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {job_file}: filesystem.root: {root} is not writable by you "
                               "(owner nobody, mode 0755)")
    assert f"ask nobody to `chmod 1777 {root}`" in lines[0]
    assert list(root.iterdir()) == []  # nothing made in it


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_read_only_root_of_the_users_own_is_refused_with_chmod(command: str, tmp_path: Path,
                                                                write_yaml: Callable[..., Path]) -> None:
    root = read_only_root(tmp_path)
    args, scheduler = COMMANDS[command]
    result = CliRunner().invoke(main, [*args, str(job(tmp_path, root, write_yaml, scheduler))])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, lines
    assert f"{root} is not writable by you (owner {pwd.getpwuid(os.getuid()).pw_name}, mode 0555)" in lines[0]
    assert f"(fix: `chmod u+w {root}`" in lines[0]


def test_a_missing_root_is_checked_in_its_nearest_existing_parent(tmp_path: Path) -> None:
    parent = read_only_root(tmp_path)
    with pytest.raises(UserError) as caught:
        check_root(parent / "a" / "b")
    assert str(caught.value).startswith(f"filesystem.root: {parent / 'a' / 'b'} does not exist and {parent}, where "
                                        "it would be made, is not writable by you (owner ")
    assert check_root(tmp_path / "new" / "root") == tmp_path  # made there by mkdir -p
    assert not (tmp_path / "new").exists()  # the check makes nothing


def test_a_sticky_world_writable_root_is_fine_and_a_file_is_not_a_root(tmp_path: Path) -> None:
    shared = tmp_path / "scratch"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    if os.getuid() == 0:
        os.chown(shared, pwd.getpwnam("nobody").pw_uid, -1)  # every user's, whoever owns it
    assert check_root(shared) == shared
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match=r"file, above .*, is a regular file, not a directory \(owner "):
        check_root(tmp_path / "file" / "root")


def test_doctor_says_it_in_the_same_words(tmp_path: Path, write_yaml: Callable[..., Path]) -> None:
    root = read_only_root(tmp_path)
    result = CliRunner().invoke(main, ["doctor", "--set", f"filesystem.root={root}"])
    line = next(line for line in result.stdout.splitlines() if " filesystem " in line)
    assert "fail" in line and f"{root} is not writable by you (owner " in line and "mode 0555" in line


@needs_root
def test_a_root_the_user_cannot_write_is_fine_when_their_own_directory_is_in_it(tmp_path: Path) -> None:
    """A site that makes each user's directory under a 0755 root (``/scratch/<user>``, as the integration tests'
    ``hhcarol`` and ``hhdave`` have it): the root is not the user's to write, their own level is there."""
    root = foreign_root(tmp_path)
    mine = root / pwd.getpwuid(os.getuid()).pw_name
    mine.mkdir(mode=0o700)
    assert check_root(root) == mine


def test_a_relative_root_naming_a_file_is_one_line_in_render_and_doctor(tmp_path: Path,
                                                                       write_yaml: Callable[..., Path]) -> None:
    """Issue 40: ``filesystem.root: ../../etc/passwd`` (a file, relative to the job file): ``render`` ends with one
    line and exit 2, ``doctor JOB`` with ``fail`` lines, neither with the ``NotADirectoryError`` traceback of the path
    probe or of the cluster directory's check below a file."""
    (tmp_path / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    job_file = write_yaml(tmp_path / "a" / "b" / "job.yaml", {"name": "rootfile", "scheduler": "local",
                                                              "filesystem": {"root": "../../passwd"},
                                                              "steps": [{"example": "pi"}]})
    rendered = CliRunner().invoke(main, ["render", str(job_file)])
    assert rendered.exit_code == 2 and "Traceback" not in rendered.output, rendered.output
    (line,) = rendered.stderr.splitlines()
    assert line.startswith(f"error: {job_file}: filesystem.root: {tmp_path / 'passwd'} is a regular file, not a "
                           "directory (owner "), line
    assert line.endswith("(fix: set filesystem.root to a directory you can write)"), line
    doctor = CliRunner().invoke(main, ["doctor", str(job_file)])
    assert doctor.exit_code == 1 and isinstance(doctor.exception, SystemExit), (doctor.exception, doctor.output)
    fails = [line for line in doctor.stdout.splitlines() if line.startswith("fail")]
    assert [line.split()[1] for line in fails] == ["filesystem", "job"], doctor.stdout
    assert f"{tmp_path / 'passwd'}, above {tmp_path / 'passwd'}/" in fails[1] and "is a regular file" in fails[1]
