"""``hpc-hadoop examples [copy DIR]``: the shipped examples (job files, the Python files their steps name, batch
scripts) listed, or copied into a directory of the user's (issue 39: an install from a wheel had no ``examples/``,
which the user guide's first command needs).

The examples are package data (:func:`launcher.util.resources.examples_dir`): ``examples/`` of the checkout, the
package's copy in an install from a wheel. A copy keeps their layout (``wordcount.yaml``, ``python/``, ``batch/``), so
the paths inside them that are relative to the job file (``python/wordcount.py``) work from the copy. Imported only
when the command is asked for (:class:`launcher.cli.main.LazyGroup`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import click

from launcher.cli.common import reports_errors
from launcher.util.errors import UserError
from launcher.util.resources import EXAMPLE_GLOBS, examples_dir
from launcher.util.safedirs import check_private_dir, make_private_dir, may_write, nearest_level, owner_name

#: Modes of a copied example: a script that starts with ``#!`` (the batch scripts) is executable, the rest is not.
SCRIPT_MODE, FILE_MODE = 0o755, 0o644
#: The end of a description's first sentence: a full stop before a space or the end.
_SENTENCE_END = re.compile(r"\.(\s|$)")


@dataclass(frozen=True)
class Example:
    """One shipped example: ``name`` is its path inside the examples (``python/wordcount.py``), ``path`` the file."""

    name: str
    path: Path

    @property
    def description(self) -> str:
        """The first sentence of its leading comment (``#`` lines after a ``#!`` line; a Python file's docstring),
        on one line; empty if it has none."""
        return describe(self.path.read_text(errors="replace"))

    @property
    def mode(self) -> int:
        """The mode of a copy: :data:`SCRIPT_MODE` for a file starting with ``#!``, else :data:`FILE_MODE`."""
        with self.path.open("rb") as file:
            return SCRIPT_MODE if file.read(2) == b"#!" else FILE_MODE


def describe(text: str) -> str:
    """The first sentence of the leading comment of ``text``: its ``#`` comment lines (after a ``#!`` line, up to the
    first other line; ``#SBATCH``-style directives end it) or its docstring (``\"\"\"...``), joined on one line."""
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if lines and lines[0].startswith('"""'):
        body = [lines[0][3:]]
        for line in lines[1:]:
            if '"""' in body[-1]:
                break
            body.append(line)
        parts = [" ".join(body).split('"""')[0]]
    else:
        parts = []
        for line in lines:
            if not line.startswith("# ") or not line[2:].strip():
                break
            parts.append(line[2:])
    joined = " ".join(" ".join(parts).split())
    end = _SENTENCE_END.search(joined)
    return joined[:end.start() + 1] if end else joined


def shipped_examples() -> list[Example]:
    """The shipped examples in listing order: the job files, then ``python/``, then ``batch/`` (each sorted by name).

    Raises:
        UserError: the package has no examples (:func:`launcher.util.resources.examples_dir`).
    """
    source = examples_dir()
    found: list[Example] = []
    for pattern in EXAMPLE_GLOBS:
        found += [Example(path.relative_to(source).as_posix(), path) for path in sorted(source.glob(pattern))
                  if path.is_file()]
    return found


def _check_target(target: Path) -> None:
    """Refuse a ``DIR`` that is not a directory or that this user cannot write into (its nearest existing level when
    it does not exist yet): one line naming it, its owner and mode, and the fix.

    Raises:
        UserError: exit code 2.
    """
    probe = nearest_level(target)
    info = os.stat(probe) if os.path.exists(probe) else os.lstat(probe)
    facts = f"owner {owner_name(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):04o}"
    what = str(target) if probe == target else f"{probe}, where {target} would be made,"
    if not stat.S_ISDIR(info.st_mode):
        raise UserError(f"{what} is a file, not a directory ({facts})", field="DIR",
                        fix="name a directory to copy the examples into, e.g. ~/hh-examples")
    if not may_write(probe, info):
        raise UserError(f"{what} is not writable by you ({facts})", field="DIR",
                        fix="name a directory of your own, e.g. ~/hh-examples")


def _own_levels(top: Path, target: Path, directory: Path) -> None:
    """``directory`` (``DIR`` or one below it) made and checked one level at a time below ``top``, ``DIR``'s
    nearest existing level (:func:`launcher.util.safedirs.make_private_dir`: each level ours, not a symbolic link,
    not writable by others; made 0700 when missing): in a 1777 ``/tmp`` another user may have made ``DIR`` first,
    and would then change the job files this user runs. A ``DIR`` that exists already is checked itself."""
    if top == target:
        check_private_dir(target, field="DIR")
        if directory != target:
            make_private_dir(target, directory, field="DIR")
    else:
        make_private_dir(top, directory, field="DIR")


def copy_examples(target: Path, *, force: bool = False) -> list[tuple[str, Path]]:
    """Copy every shipped example into ``target`` (made if missing, with the examples' subdirectories, one level at a
    time, each checked to be the user's: :func:`_own_levels`), each copy the user's with mode 0644 (0755 for a ``#!``
    script). A file already there is kept unless ``force``: nothing of the
    user's is lost (a symbolic link there is replaced by the file, never written through).

    Args:
        target: the directory (``DIR``).
        force: replace files that are already there.

    Returns:
        ``(what, path)`` per example, in listing order: ``what`` is ``copied``, ``replaced`` or ``kept``.

    Raises:
        UserError: ``target`` (or a directory to make in it) is a file or not writable, or a copy fails: one line
            naming it and the fix.
    """
    examples = shipped_examples()
    _check_target(target)
    target = Path(os.path.abspath(target))
    top = nearest_level(target)
    done: list[tuple[str, Path]] = []
    checked: set[Path] = set()
    for example in examples:
        dest = target / example.name
        try:
            if dest.parent not in checked:
                _own_levels(top, target, dest.parent)
                checked.add(dest.parent)
            there = os.path.lexists(dest)
            if there and dest.is_dir() and not dest.is_symlink():
                raise UserError(f"{dest} is a directory", field="DIR",
                                fix=f"move it away to get {example.name}, or copy into another DIR")
            if there and not force:
                done.append(("kept", dest))
                continue
            tmp = dest.with_name(f".{dest.name}.hpc-hadoop-copy")
            shutil.copyfile(example.path, tmp)
            os.chmod(tmp, example.mode)
            os.replace(tmp, dest)  # a symbolic link at dest is replaced, not followed
        except OSError as exc:
            raise UserError(f"{dest} cannot be written ({exc.strerror or exc})", field="DIR",
                            fix="name a directory of your own, e.g. ~/hh-examples") from None
        done.append(("replaced" if there else "copied", dest))
    return done


@click.group("examples", invoke_without_command=True)
@click.pass_context
@reports_errors
def examples_command(ctx: click.Context) -> None:
    """List the shipped examples (job files, their Python files, batch scripts), each with its first comment line;
    `hpc-hadoop examples copy DIR` copies them into DIR."""
    if ctx.invoked_subcommand is not None:
        return
    examples = shipped_examples()
    width = max((len(example.name) for example in examples), default=0)
    for example in examples:
        click.echo(f"{example.name:<{width}}  {example.description}".rstrip())
    click.echo(f"(in {examples_dir()}; `hpc-hadoop examples copy DIR` copies them into DIR, yours to change)")


@examples_command.command("copy")
@click.argument("target", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace files already in DIR (by default they are kept).")
@reports_errors
def copy_command(target: Path, force: bool) -> None:
    """Copy the examples into DIR (made if missing), keeping their layout (wordcount.yaml, python/, batch/); a file
    already in DIR is kept unless --force. One line per file."""
    target = Path(os.path.abspath(os.path.expanduser(target)))
    done = copy_examples(target, force=force)
    width = max(len(what) for what, _ in done)
    for what, path in done:
        note = " (already there: --force replaces it)" if what == "kept" else ""
        click.echo(f"{what:<{width}}  {path}{note}")
    click.echo(f"next: hpc-hadoop submit {target / 'wordcount.yaml'}")
