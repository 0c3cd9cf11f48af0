"""launcher/util/files.py: the one writer of private files (issue 38: one private-file writer, one atomic writer),
on real files with a umask that would leave them open to everyone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from launcher.util.files import create_private, replace_private


@pytest.fixture(autouse=True)
def open_umask() -> None:
    """A umask that takes nothing off: only the writer's own mode keeps the files private."""
    os.umask(0)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_replace_private_writes_text_and_bytes_0600_over_what_was_there(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("old")
    path.chmod(0o644)
    replace_private(path, "new")
    assert path.read_text() == "new" and mode(path) == 0o600
    replace_private(path, b"\x05\x02keytab")
    assert path.read_bytes() == b"\x05\x02keytab" and mode(path) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no temporary file left


def test_replace_private_replaces_a_link_never_its_target(tmp_path: Path) -> None:
    target = tmp_path / "someone-elses"
    target.write_text("theirs")
    link = tmp_path / "secret"
    link.symlink_to(target)
    stale = tmp_path / f".secret.tmp{os.getpid()}"
    stale.symlink_to(target)  # a temporary name planted first is removed, not written through
    replace_private(link, "mine")
    assert target.read_text() == "theirs" and not link.is_symlink() and link.read_text() == "mine"
    assert not os.path.lexists(stale)


def test_a_failed_replace_leaves_no_temporary_file(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        replace_private(tmp_path / "missing-dir" / "file", "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "kept").write_text("")
    with pytest.raises(OSError):
        replace_private(tmp_path / "full", "x", tmp=tmp_path / "t.tmp")  # a file cannot be renamed over a directory
    assert not (tmp_path / "t.tmp").exists() and (tmp_path / "full" / "kept").exists()


def test_create_private_makes_a_new_file_with_its_exact_mode_and_never_opens_an_existing_one(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    create_private(script, "#!/bin/sh\n", 0o700)
    assert mode(script) == 0o700 and script.read_text() == "#!/bin/sh\n"
    create_private(tmp_path / "plan.json", "{}")
    assert mode(tmp_path / "plan.json") == 0o600
    with pytest.raises(FileExistsError):
        create_private(script, "again")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        create_private(tmp_path / "link", "through a link")
    assert not (tmp_path / "nowhere").exists()
