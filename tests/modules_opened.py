"""Which of the project's modules a command imports and enters (issue 26 item 1).

Run a command of the ``hpc-hadoop`` group in this process, with a profile hook, and print two sorted lists:
the project's modules (``launcher.*``, ``benchmarks.*``) that were imported, and those that were *entered*: a
function or class body of the module was called from a frame of another module (a module's own top level, run
at import, and the methods :mod:`dataclasses` compiles into it do not count). Usage::

    .venv/bin/python -m tests.modules_opened render examples/wordcount.yaml
    .venv/bin/python -m tests.modules_opened submit examples/wordcount.yaml    # starts Hadoop: under the lock

The unit test ``tests/unit/cli/test_imports.py`` runs ``render`` and ``--help`` through :func:`opened` in a
child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any

PROJECT = ("launcher", "benchmarks")
#: Code that runs in a module's namespace without the module being entered: its own top level (at import) and the
#: methods :mod:`dataclasses` compiles there when a dataclass is defined.
_NOT_ENTERING = ("<module>", "__create_fn__")


@dataclass(frozen=True)
class Opened:
    """What one command opened: the project's modules imported and those entered (sorted names), and the command's
    exit code."""

    imported: list[str]
    entered: list[str]
    code: int


def _project(name: str | None) -> bool:
    return name is not None and name.split(".", 1)[0] in PROJECT


def measure(argv: list[str]) -> Opened:
    """Run ``hpc-hadoop ARGV`` in this process (Click, not standalone) and return what it opened.

    A ``SystemExit`` is caught: its code is :attr:`Opened.code` (0 when the command returns), and the lists are
    what was opened up to the end or the error.
    """
    entered: set[str] = set()
    code = 0

    def hook(frame: types.FrameType, event: str, _arg: Any) -> None:
        if event != "call" or frame.f_code.co_name in _NOT_ENTERING:
            return
        callee = frame.f_globals.get("__name__")
        caller = frame.f_back.f_globals.get("__name__") if frame.f_back is not None else None
        if _project(callee) and callee != caller:
            entered.add(str(callee))

    before = set(sys.modules)
    threading.setprofile(hook)  # the threads the command starts (a run's filesystem watch), then this one
    sys.setprofile(hook)
    try:
        from launcher.cli.main import main

        main.main(args=argv, prog_name="hpc-hadoop", standalone_mode=False)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    imported = sorted(name for name in set(sys.modules) - before if _project(name))
    return Opened(imported=imported, entered=sorted(entered), code=code)


def opened(argv: list[str], cwd: str | None = None) -> Opened:
    """:func:`measure` in a fresh interpreter (nothing imported before), its output on stdout dropped.

    Raises :class:`subprocess.CalledProcessError` if the child fails.
    """
    code = ("import contextlib, io, json, sys\nfrom tests.modules_opened import measure\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    got = measure(sys.argv[1:])\n"
            "print(json.dumps(got.__dict__))")
    out = subprocess.run([sys.executable, "-c", code, *argv], check=True, capture_output=True, text=True,
                         cwd=cwd).stdout
    data = json.loads(out.splitlines()[-1])
    return Opened(imported=data["imported"], entered=data["entered"], code=data["code"])


def main() -> None:
    """Print the two lists for the command in ``sys.argv[1:]``."""
    got = opened(sys.argv[1:])
    print(f"# exit code: {got.code}")
    print(f"# imported: {len(got.imported)}")
    print("\n".join(got.imported))
    print(f"# entered: {len(got.entered)}")
    print("\n".join(got.entered))


if __name__ == "__main__":
    main()
