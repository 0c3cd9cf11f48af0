"""``hpc-hadoop runtime module``: an Lmod module file (Lua) for this install, for a site without EasyBuild.

EasyBuild writes its own module from ``site-configs/easybuild/hpc-hadoop-<version>.eb``; a site that installs the
wheel by hand renders ``templates/modules/hpc-hadoop.lua.j2`` with this: ``PATH`` gets the install's ``bin/`` (the
venv hpc-hadoop runs from, ``sys.prefix``), ``HPC_HADOOP_SITE_DIR`` the site layer (:mod:`launcher.config.site`) when
one is named, ``JAVA_HOME`` a JDK when the site has no Java module for it, and ``HADOOP_HOME`` is unset (it would
win over the install's runtime, :func:`launcher.runtime.hadoop.find_hadoop_home`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jinja2

from launcher import __version__
from launcher.util.errors import UserError
from launcher.util.files import create_private, replace_private
from launcher.util.resources import templates_dir

#: The template, relative to the templates directory.
TEMPLATE = "modules/hpc-hadoop.lua.j2"
#: A module file is read by every user and written by the install's owner only.
MODULE_MODE = 0o644


def lua_string(value: object) -> str:
    """``value`` as a Lua double-quoted string literal: backslash, quote and control characters escaped
    (``\\ddd``), so that any path is read back by Lua exactly as given."""
    out = []
    for char in str(value):
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 32 or ord(char) == 127:
            out.append(f"\\{ord(char):03d}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def render(*, root: Path | None = None, site_dir: Path | None = None, java_home: Path | None = None) -> str:
    """The module file's text.

    Args:
        root: the install's prefix, whose ``bin/hpc-hadoop`` the module puts on ``PATH``; default ``sys.prefix``
            (the venv this hpc-hadoop runs from).
        site_dir: the site layer's directory for ``HPC_HADOOP_SITE_DIR`` (made absolute); ``None`` sets nothing,
            and the launcher reads ``/etc/hpc-hadoop``.
        java_home: a JDK directory for ``JAVA_HOME`` (and its ``bin/`` on ``PATH``); ``None`` sets nothing.

    Raises:
        UserError: ``root`` has no ``bin/hpc-hadoop``, or ``java_home`` has no ``bin/java`` (exit 2, one line).
    """
    prefix = (root or Path(sys.prefix)).absolute()
    if not (prefix / "bin" / "hpc-hadoop").is_file():
        raise UserError(f"{prefix} has no bin/hpc-hadoop: not an install of hpc-hadoop",
                        fix="run `hpc-hadoop runtime module` of the install the module is for (its bin/hpc-hadoop)")
    java = None if java_home is None else java_home.expanduser().absolute()
    if java is not None and not (java / "bin" / "java").is_file():
        raise UserError(f"{java} has no bin/java", field="--java-home",
                        fix="name a JDK's directory, e.g. /usr/lib/jvm/java-17-openjdk-amd64")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["lua"] = lua_string
    return env.get_template(TEMPLATE).render(
        version=__version__, root=str(prefix), java_home=None if java is None else str(java),
        site_dir=None if site_dir is None else str(site_dir.expanduser().absolute()))


def write(text: str, path: Path, *, force: bool = False) -> None:
    """Write the module file ``text`` to ``path``, mode 0644 exactly (a new file; with ``force`` an existing one is
    replaced by a new file, atomically: never written through a symbolic link).

    Raises:
        UserError: ``path`` exists and ``force`` is not given, its directory does not exist, or it cannot be
            written (exit 2, one line).
    """
    if not path.parent.is_dir():
        raise UserError(f"{path.parent} is not a directory", field="-o",
                        fix=f"make it first (mkdir -p {path.parent}) or name another file")
    try:
        if force:
            replace_private(path, text, mode=MODULE_MODE)
        else:
            create_private(path, text, mode=MODULE_MODE)
    except FileExistsError:
        raise UserError(f"{path} exists", field="-o", fix="give --force to replace it, or name another file") from None
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}", field="-o", fix="name a file you can write") from None


__all__ = ["MODULE_MODE", "TEMPLATE", "lua_string", "render", "write"]
