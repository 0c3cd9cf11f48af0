"""The one way to write a file that must be private: :func:`replace_private` (atomic, over whatever was there) and
:func:`create_private` (a new file, never an existing one). Both set the exact mode before any byte is written,
whatever the umask: a file is private itself, not only by the directory it is in (a 0700 cluster directory another
user gets into, a shared filesystem whose client lets other users past the modes of directories: issue 36).

Imports only the standard library (the secure-mode probe, which every node runs, writes its answer with it).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

#: The mode of a private file: the user's only.
PRIVATE_MODE = 0o600


def _write(fd: int, data: str | bytes, mode: int) -> None:
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, mode)  # exactly mode, whatever the umask took off at the open
        handle.write(data.encode() if isinstance(data, str) else data)


def replace_private(path: str | Path, data: str | bytes, *, tmp: str | Path | None = None,
                    mode: int = PRIVATE_MODE) -> None:
    """Write ``data`` (text, or bytes: a keytab) to ``path`` atomically, exactly ``mode`` (0600) from the moment the
    file exists: a new temporary file beside it (``.<name>.tmp<pid>``, or ``tmp``), created with ``os.open(O_CREAT |
    O_EXCL, mode)`` and set to ``mode`` with ``fchmod``, then renamed over ``path`` with ``os.replace``. A temporary
    file left by a process that died with this pid is removed first (``O_EXCL``: never written through a link).

    Raises:
        OSError: it could not be written (the temporary file is removed).
    """
    path = Path(path)
    temporary = Path(tmp) if tmp is not None else path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        temporary.unlink(missing_ok=True)
        _write(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), data, mode)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):  # a filesystem that refused the write may refuse this too: the first error
            temporary.unlink(missing_ok=True)


def create_private(path: str | Path, data: str | bytes, mode: int = PRIVATE_MODE) -> None:
    """Create ``path`` with ``data`` and exactly ``mode`` (0600; 0700 for a script), set before any byte is written;
    an existing file (or link) there is never opened.

    Raises:
        FileExistsError: ``path`` exists.
        OSError: it could not be written.
    """
    _write(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), data, mode)
