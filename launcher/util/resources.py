"""Where the package data and the runtimes are: the one module that knows the installed layout.

Package data (the Jinja2 templates, the site presets, the examples, the shim's pom, sources and built jar) ships
inside the package and is found with :func:`importlib.util.find_spec` (the package's directory, without importing
it): ``setup.py`` maps the checkout's ``templates/``, ``site-configs/``, ``examples/`` and ``hadoop-fs-shim/`` to the
subpackages ``launcher._data.templates``, ``launcher._data.site_configs``, ``launcher._data.examples`` and
``launcher._data.shim``. A wheel carries copies of them; an editable install (``pip install -e .``, what
``install.sh`` does) reads the checkout's directories in place. ``$HPC_HADOOP_SHARE``, when set, still names a
directory holding ``templates/`` and ``site-configs/`` that wins over the package's (docs/admin-guide.md).

The runtimes (Hadoop's jars, Spark) are too large for a wheel; they are looked for, in this order after the job
file's ``hadoop.home`` and the environment (:func:`launcher.runtime.find_hadoop_home`), in

1. the checkout's build output (``hadoop-fs-shim/target/hadoop-runtime``, ``spark-runtime/pyspark``), which
   exists only in a checkout that ran ``install.sh`` (:func:`checkout`: the editable install it makes);
2. the user prefix, ``<platformdirs user data dir>/runtime`` (``~/.local/share/hpc-hadoop/runtime`` on Linux,
   ``$XDG_DATA_HOME`` honoured), where ``hpc-hadoop runtime install`` puts it by default;
3. the site prefix, ``<sys.prefix>/share/hpc-hadoop/runtime``: beside the Python environment hpc-hadoop is
   installed in, so one ``hpc-hadoop runtime install --site`` by the software account serves every user of that
   install, at the same path on every node that mounts it.

Inside a prefix the Hadoop runtime is ``hadoop/`` (the layout of ``hadoop-fs-shim/target/hadoop-runtime``),
Spark is ``spark/pyspark`` with our examples jar beside it, ``spark/`` + :data:`SPARK_EXAMPLES_JAR` (the layout of
``spark-runtime/`` in a checkout), and the class-data-sharing archives are ``hadoop/cds/``
(:func:`launcher.runtime.cds.site_root`): ``hpc-hadoop runtime install`` puts every part there.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import platformdirs

from launcher.util.errors import UserError

#: The name of the application's directories (platformdirs' ``appname``).
APP = "hpc-hadoop"
#: A prefix's subdirectories: the Hadoop runtime and Spark (``pyspark`` inside, as ``pip install --target``
#: lays it out).
HADOOP_SUBDIR = "hadoop"
SPARK_SUBDIR = "spark"
#: The shim jar's name pattern (``hpc-hadoop-fs-shim-<version>.jar``), as Maven names it.
SHIM_JAR_GLOB = "hpc-hadoop-fs-shim-*.jar"
#: The Spark ``install.sh`` (its ``spark_version``) and ``hpc-hadoop runtime install`` put in place: PyPI's
#: ``pyspark`` of this version (Spark built for Hadoop 3), in ``spark-runtime/pyspark`` of a checkout and
#: ``<prefix>/spark/pyspark`` of a prefix.
SPARK_VERSION = "4.1.1"
#: Our Spark examples jar (``org.hpchadoop.spark.examples.SparkPi``, ``KMeans``, ``TeraSort``; Maven Central has no
#: ``spark-examples`` jar for Spark 4), beside the ``pyspark`` directory: ``spark-runtime/`` of a checkout,
#: ``<prefix>/spark/`` of a prefix. Built from ``spark-examples/src`` (:func:`spark_examples_sources`).
SPARK_EXAMPLES_JAR = "hpc-hadoop-spark-examples.jar"
#: A prefix's subdirectory of JupyterLab (``hpc-hadoop notebook``): PyPI's ``jupyterlab``, ``ipykernel`` and
#: ``nbclient`` installed with ``pip install --target``, as Spark is, so that every node's ``/usr/bin/python3`` (the
#: kernel's, which imports ``pyspark`` from Spark's ``python/lib``) imports them with nothing else on its path:
#: ``jupyter-runtime/`` of a checkout (``install.sh``), ``<prefix>/jupyter`` of a prefix.
JUPYTER_SUBDIR = "jupyter"
#: The pinned distributions of that part (``install.sh`` and ``runtime install`` install these; ``site-up.sh`` puts
#: their wheels in the site test's wheelhouse).
JUPYTER_REQUIREMENTS = ("jupyterlab==4.6.6", "ipykernel==7.4.0", "nbclient==0.11.0")


def _package_dir(name: str, share_subdir: str) -> Path:
    """The directory of the data subpackage ``launcher._data.<name>``, or ``$HPC_HADOOP_SHARE/<share_subdir>``.

    The package is found, not imported (:func:`importlib.util.find_spec`: its ``__init__`` is not run), where the
    import system would find it: in the installed package, or where an editable install maps it in the checkout.

    Raises:
        TypeError: the package is not installed as a directory (e.g. imported from a zip), which a Jinja2 file
            loader and a JVM classpath need; wheels are always installed unpacked.
    """
    share = os.environ.get("HPC_HADOOP_SHARE")
    if share:
        return Path(share) / share_subdir
    spec = importlib.util.find_spec(f"launcher._data.{name}")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    found = [Path(location) for location in locations if Path(location).is_dir()]
    if not found:
        raise TypeError(f"launcher._data.{name} is not a directory on disk ({locations!r}); "
                        "install hpc-hadoop unpacked")
    return found[0]


def templates_dir() -> Path:
    """The Jinja2 templates (batch scripts, Hadoop configuration files): ``templates/`` of the checkout."""
    return _package_dir("templates", "templates")


def site_configs_dir() -> Path:
    """The site presets (``<name>.yaml``): ``site-configs/`` of the checkout."""
    return _package_dir("site_configs", "site-configs")


#: The shipped examples, as globs inside ``examples/`` of the checkout (``setup.py`` ships the same): the job files,
#: the Python files their steps name (``python/``) and the batch scripts (``batch/``).
EXAMPLE_GLOBS = ("*.yaml", "python/*.py", "batch/*")


def examples_dir() -> Path:
    """The shipped examples (``examples/`` of the checkout; the package data ``launcher._data.examples`` of an
    install from a wheel): ``$HPC_HADOOP_SHARE/examples`` when that directory exists, else the package's, else
    ``examples/`` of the checkout (an editable install made before the examples were package data) or of the source
    tree the package is imported from (``PYTHONPATH``).

    Raises:
        UserError: none of them exists (a package built without its examples): one line naming the fix.
    """
    share = os.environ.get("HPC_HADOOP_SHARE")
    if share and (Path(share) / "examples").is_dir():
        return Path(share) / "examples"
    spec = importlib.util.find_spec("launcher._data.examples")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if Path(location).is_dir():
            return Path(location)
    source = Path(__file__).resolve().parents[2]  # the source tree this package is imported from, if one
    for root in (checkout(), source if (source / "setup.py").is_file() else None):
        if root is not None and (root / "examples").is_dir():
            return root / "examples"
    raise UserError(f"this hpc-hadoop ({Path(__file__).resolve().parents[1]}) has no examples",
                    fix="reinstall it from a wheel built with them (or take examples/ from its source checkout)")


def shim_project_dir() -> Path:
    """The shim's Maven project as shipped: ``pom.xml``, ``src/main/`` and, when it was built before the package,
    ``target/hpc-hadoop-fs-shim-*.jar`` (``hadoop-fs-shim/`` of the checkout)."""
    return _package_dir("shim", "hadoop-fs-shim")


def spark_examples_sources() -> Path:
    """The Java sources of our Spark examples jar (``spark-examples/src`` of the checkout; the package data
    ``launcher._data.spark_examples``, its ``src/``, of an install from a wheel): ``$HPC_HADOOP_SHARE/spark-examples``
    when that directory exists, else the package's, else ``spark-examples/`` of the checkout or of the source tree the
    package is imported from (``PYTHONPATH``, or an editable install made before the sources were package data).

    Raises:
        UserError: none of them has a ``src/`` (a package built without them): one line naming the fix.
    """
    share = os.environ.get("HPC_HADOOP_SHARE")
    candidates = [Path(share) / "spark-examples"] if share else []
    spec = importlib.util.find_spec("launcher._data.spark_examples")
    candidates += [Path(location) for location in (spec.submodule_search_locations or [])] if spec else []
    source = Path(__file__).resolve().parents[2]
    candidates += [root / "spark-examples" for root in (checkout(), source if (source / "setup.py").is_file() else None)
                   if root is not None]
    for candidate in candidates:
        if (candidate / "src").is_dir():
            return candidate / "src"
    raise UserError(f"this hpc-hadoop ({Path(__file__).resolve().parents[1]}) has no Spark examples sources",
                    fix="reinstall it from a wheel built with them (spark-examples/src of its source checkout)")


def packaged_shim_jar() -> Path | None:
    """The shim jar shipped with the package (the checkout's ``hadoop-fs-shim/target/`` in an editable install),
    newest version last by name; ``None`` when the package was built without it."""
    found = sorted(p for p in (shim_project_dir() / "target").glob(SHIM_JAR_GLOB) if "sources" not in p.name)
    return found[-1] if found else None


def checkout() -> Path | None:
    """The checkout hpc-hadoop runs from: ``$HPC_HADOOP_SHARE`` if set, else the directory holding the shim project
    when the package data lies outside the package (an editable install maps it from the checkout); ``None`` for
    an install from a wheel, whose package data is inside the package."""
    share = os.environ.get("HPC_HADOOP_SHARE")
    if share:
        return Path(share)
    project = shim_project_dir()
    return None if project.resolve().is_relative_to(Path(__file__).resolve().parents[1]) else project.parent


def checkout_hadoop_runtime() -> Path:
    """The Hadoop runtime ``mvn package`` assembles beside the shim project (``install.sh`` in a checkout:
    ``hadoop-fs-shim/target/hadoop-runtime``); never there in an install from a wheel."""
    return shim_project_dir() / "target" / "hadoop-runtime"


def checkout_spark() -> Path | None:
    """The Spark ``install.sh`` installs in a checkout (``spark-runtime/pyspark``, may not exist); ``None`` outside
    a checkout."""
    root = checkout()
    return root / "spark-runtime" / "pyspark" if root is not None else None


def checkout_jupyter() -> Path | None:
    """The JupyterLab ``install.sh`` installs in a checkout (``jupyter-runtime/``, may not exist); ``None`` outside a
    checkout."""
    root = checkout()
    return root / "jupyter-runtime" if root is not None else None


def user_prefix() -> Path:
    """The user's runtime prefix: ``<user data dir>/runtime`` (``~/.local/share/hpc-hadoop/runtime``)."""
    return platformdirs.user_data_path(APP) / "runtime"


def site_prefix() -> Path:
    """The installation's runtime prefix: ``<sys.prefix>/share/hpc-hadoop/runtime`` (``sys.prefix`` is the venv
    hpc-hadoop is installed in)."""
    return Path(sys.prefix) / "share" / APP / "runtime"


def prefixes() -> list[tuple[str, Path]]:
    """The runtime prefixes in search order, each with a label for messages: user, then site."""
    return [("user prefix", user_prefix()), ("site prefix", site_prefix())]
