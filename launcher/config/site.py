"""The site's layer (issue 39: a site installs hpc-hadoop once, and sets its defaults without rebuilding the wheel): a
directory, ``/etc/hpc-hadoop`` unless ``$HPC_HADOOP_SITE_DIR`` names another (what a site's module sets:
:func:`launcher.util.userdirs.site_dir`), holding

* ``config.yaml``: the site's defaults, any job-file field (a layer above the preset, below the user's config);
* ``site-configs/<name>.yaml``: the site's presets, read besides the shipped ones (``site-configs/`` of the
  package); one named as a shipped one replaces it.

A site directory that does not exist is no layer. One that exists is read only when no one but its owner can change it
(:func:`launcher.util.safedirs.check_trusted`: it, its files and ``site-configs/`` not writable by group or others, no
directory above it that lets others rename it, no symbolic link of another user's): a site layer another user can
write would let her change every user's jobs, so it is refused in one line (exit 2).

Imports only :mod:`launcher.util`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from launcher.util.errors import UserError
from launcher.util.safedirs import check_trusted
from launcher.util.userdirs import site_dir

#: The environment variable naming the site's layer (else ``/etc/hpc-hadoop``).
SITE_DIR_ENV = "HPC_HADOOP_SITE_DIR"
#: The file of the site's defaults in the site's layer.
SITE_CONFIG_NAME = "config.yaml"
#: The directory of the site's presets in the site's layer (and of the shipped ones in the package).
PRESETS_NAME = "site-configs"


def _field() -> str | None:
    """What named the site directory, for an error line: ``$HPC_HADOOP_SITE_DIR`` when it is set."""
    return f"${SITE_DIR_ENV}" if os.environ.get(SITE_DIR_ENV) else None


def site_layer_dir() -> Path | None:
    """The site's layer directory (:func:`launcher.util.userdirs.site_dir`) when it exists and is trusted, else
    ``None`` (no site layer).

    Raises:
        UserError: ``$HPC_HADOOP_SITE_DIR`` is relative; the directory is not one, or another user can change it
            (:func:`launcher.util.safedirs.check_trusted`).
    """
    path = site_dir()
    if not path.is_absolute():
        raise UserError(f"{str(path)!r} is not an absolute path", field=_field(),
                        fix="set it to the site's directory, e.g. /etc/hpc-hadoop")
    if not os.path.lexists(path):
        return None
    try:
        info = check_trusted(path, what="site directory", field=_field())
    except FileNotFoundError:  # a dangling link
        raise UserError(f"{path} is a symbolic link to nothing", field=_field(), fix="remove it or mend it") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UserError(f"{path} is not a directory", field=_field(), fix="make it the site's directory or unset it")
    return path


def site_config_path() -> Path:
    """Where the site's defaults would be: ``<site dir>/config.yaml`` (the file may not exist)."""
    return site_dir() / SITE_CONFIG_NAME


def site_config_file() -> Path | None:
    """The site's defaults, ``<site dir>/config.yaml``, when the site layer (:func:`site_layer_dir`) has them.

    Raises:
        UserError: as :func:`site_layer_dir`; the file is writable by others (or a foreign link).
    """
    layer = site_layer_dir()
    if layer is None or not os.path.lexists(layer / SITE_CONFIG_NAME):
        return None
    check_trusted(layer / SITE_CONFIG_NAME, what="site config")
    return layer / SITE_CONFIG_NAME


def site_layer_presets() -> dict[str, Path]:
    """The site's own presets, ``<site dir>/site-configs/*.yaml``: name → file, by name (none without a site layer).

    Raises:
        UserError: as :func:`site_layer_dir`; ``site-configs/`` or a preset in it is writable by others.
    """
    layer = site_layer_dir()
    if layer is None or not os.path.lexists(layer / PRESETS_NAME):
        return {}
    check_trusted(layer / PRESETS_NAME, what="site preset directory")
    found = {}
    for path in sorted((layer / PRESETS_NAME).glob("*.yaml")):
        check_trusted(path, what="site preset")
        found[path.stem] = path
    return found


__all__ = ["PRESETS_NAME", "SITE_CONFIG_NAME", "SITE_DIR_ENV", "site_config_file",
           "site_config_path", "site_layer_dir", "site_layer_presets"]
