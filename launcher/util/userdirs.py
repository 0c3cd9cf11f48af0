"""Every per-user directory of hpc-hadoop, in one place: the user's own ones from :mod:`platformdirs`, the node-local
ones under ``/var/tmp`` and ``$TMPDIR``.

On Linux (``platformdirs``' XDG rules, ``$XDG_*`` honoured when it is an absolute path, ignored otherwise):

* :func:`cache_dir`: ``$XDG_CACHE_HOME/hpc-hadoop`` (default ``~/.cache/hpc-hadoop``): class-data-sharing archives
  (``cds/``, :mod:`launcher.runtime.cds`), the benchmarks' Mahout build (``mahout-0.13.0/``);
* :func:`config_file`: ``$HPC_HADOOP_CONFIG``, else ``$XDG_CONFIG_HOME/hpc-hadoop/config.yaml`` (default
  ``~/.config/hpc-hadoop/config.yaml``: :func:`default_config_file`): the user's defaults (:mod:`launcher.config.spec`);
* :func:`site_dir`: ``$HPC_HADOOP_SITE_DIR``, else ``/etc/hpc-hadoop``: the site's layer (``config.yaml``,
  ``site-configs/``), not the user's, read by :mod:`launcher.config.site`;
* :func:`clusters_dir`: ``$XDG_STATE_HOME/hpc-hadoop/clusters`` (default ``~/.local/state/hpc-hadoop/clusters``):
  the index of the user's clusters (:mod:`launcher.lifecycle.clusters.index`);
* :func:`node_record_dir`: ``/var/tmp/hpc-hadoop-<user>``: a run's final record kept on its node when the cluster
  directory cannot be written (:mod:`launcher.lifecycle.report`);
* :func:`node_work_root`: ``$TMPDIR/hpc-hadoop-<user>`` (``/tmp`` when ``$TMPDIR`` is unset or relative): the
  daemons' node-local working directories (:mod:`launcher.plan`).

Until issue 26 the user config ignored ``$XDG_CONFIG_HOME`` and the Mahout build ignored ``$XDG_CACHE_HOME``;
both follow them now (unset, the paths are the same as before). Nothing here creates a directory. Imports only the
standard library and :mod:`platformdirs`.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

#: The application's name in every per-user directory.
APP = "hpc-hadoop"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hpc-hadoop`` (default ``~/.cache/hpc-hadoop``)."""
    return platformdirs.user_cache_path(APP, appauthor=False)


#: The site's layer when ``$HPC_HADOOP_SITE_DIR`` does not name another (:func:`site_dir`).
DEFAULT_SITE_DIR = Path("/etc/hpc-hadoop")


def config_file() -> Path:
    """The user's defaults: ``$HPC_HADOOP_CONFIG``, else :func:`default_config_file`; the file may not exist."""
    env = os.environ.get("HPC_HADOOP_CONFIG")
    return Path(env) if env else default_config_file()


def default_config_file() -> Path:
    """``$XDG_CONFIG_HOME/hpc-hadoop/config.yaml`` (default ``~/.config/hpc-hadoop/config.yaml``), whatever
    ``$HPC_HADOOP_CONFIG`` says; the file may not exist."""
    return platformdirs.user_config_path(APP, appauthor=False) / "config.yaml"


def site_dir() -> Path:
    """The site's layer: ``$HPC_HADOOP_SITE_DIR`` (what a site's module sets), else :data:`DEFAULT_SITE_DIR`
    (``/etc/hpc-hadoop``); the directory may not exist, and a relative value is returned as it is (the loader refuses
    it: :func:`launcher.config.site.site_layer_dir`)."""
    env = os.environ.get("HPC_HADOOP_SITE_DIR")
    return Path(env) if env else DEFAULT_SITE_DIR


def clusters_dir() -> Path:
    """The index of the user's clusters: ``$XDG_STATE_HOME/hpc-hadoop/clusters`` (default
    ``~/.local/state/hpc-hadoop/clusters``)."""
    return platformdirs.user_state_path(APP, appauthor=False) / "clusters"


def per_user(root: str | Path, user: str) -> Path:
    """``root/hpc-hadoop-<user>``: the user's own directory in a directory every user writes (``/var/tmp``, ``/tmp``,
    a site's node-local disk)."""
    return Path(root) / f"{APP}-{user}"


def node_record_dir(user: str) -> Path:
    """``/var/tmp/hpc-hadoop-<user>``: node-local, and it outlives the job (whose ``$TMPDIR`` the batch system deletes
    at its end) and a reboot."""
    return per_user("/var/tmp", user)


def node_work_root(user: str) -> Path:
    """Where the daemons' node-local working directories go: ``$TMPDIR/hpc-hadoop-<user>`` (``/tmp`` when
    ``$TMPDIR`` is unset or relative). Node-local on every HPC node (a RAM disk on diskless ones); the batch
    system's per-job ``$TMPDIR`` where it sets one."""
    tmp = os.environ.get("TMPDIR", "")
    return per_user(tmp if os.path.isabs(tmp) else "/tmp", user)
