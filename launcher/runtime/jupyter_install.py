"""JupyterLab in a runtime prefix: a part of ``hpc-hadoop runtime install``
(:func:`launcher.runtime.install.prefix_parts`) for ``hpc-hadoop notebook``.

PyPI's ``jupyterlab``, ``ipykernel`` and ``nbclient`` of the pinned versions
(:data:`launcher.util.resources.JUPYTER_REQUIREMENTS`), installed with the running interpreter's pip (``python -m pip
install --target``, as ``install.sh`` does into a checkout's ``jupyter-runtime/`` and as Spark is installed:
:mod:`launcher.runtime.spark_install`) into ``<prefix>/jupyter``, so that the kernel's ``/usr/bin/python3`` on the
master node imports them, beside PySpark, with nothing but that directory on its path. The pins are kept in the
directory (:data:`PINS_FILE`): other pins reinstall it. pip reads its own configuration (``PIP_INDEX_URL``,
``PIP_FIND_LINKS``, ``PIP_NO_INDEX``: a site's mirror or wheelhouse). About 220 MB. Staged in a temporary directory
inside the prefix and renamed into place (:mod:`launcher.runtime.staging`).
"""

from __future__ import annotations

from pathlib import Path

from launcher.runtime.staging import PartResult, pip_part
from launcher.util.resources import JUPYTER_REQUIREMENTS, JUPYTER_SUBDIR

#: What a complete JupyterLab runtime directory has (``share/jupyter/lab/static``: JupyterLab's built application).
JUPYTER_FILES = ("jupyterlab/__init__.py", "ipykernel_launcher.py", "nbclient/__init__.py",
                 "share/jupyter/lab/static/package.json")
#: The file in the directory that names the pins it was installed with (one line: the requirements, space-separated;
#: what ``install.sh`` writes too).
PINS_FILE = ".hpc-hadoop-pins"


def jupyter_home(prefix: Path) -> Path:
    """JupyterLab's directory in ``prefix``: ``<prefix>/jupyter``."""
    return prefix / JUPYTER_SUBDIR


def pins() -> str:
    """The pins as :data:`PINS_FILE` holds them."""
    return " ".join(JUPYTER_REQUIREMENTS)


def jupyter_missing(home: Path, *, pinned: bool = False) -> list[str]:
    """What the directory ``home`` lacks of :data:`JUPYTER_FILES` (empty when it is complete); with ``pinned``, also
    :data:`PINS_FILE` naming today's pins (``"other pins"`` when it names others)."""
    lacking = [name for name in JUPYTER_FILES if not (home / name).is_file()]
    if pinned and not lacking:
        try:
            if (home / PINS_FILE).read_text().strip() != pins():
                lacking.append("other pins")
        except OSError:
            lacking.append(PINS_FILE)
    return lacking


def install_jupyter(prefix: Path, *, python: str | None = None) -> PartResult:
    """Put :data:`~launcher.util.resources.JUPYTER_REQUIREMENTS` into ``<prefix>/jupyter`` unless they are there.

    Raises:
        UserError: pip failed or timed out (the end of its output in the message), or what it installed lacks a part.
        OSError: the prefix cannot be written.
    """
    home = jupyter_home(prefix)
    if not jupyter_missing(home, pinned=True):
        return PartResult(path=home, changed=False)
    pip_part(prefix, JUPYTER_SUBDIR, JUPYTER_REQUIREMENTS, what="JupyterLab", python=python,
             lacking=jupyter_missing, stamp=(PINS_FILE, pins()))
    return PartResult(path=home, changed=True)
