"""A node's keys, opened where its daemons read them: the agent's side of ``security: per-cluster`` and ``site``.

The launcher seals for each node what its daemons need (:func:`launcher.security.kdc.publish_keys`: the services
keytab, the cookie secrets of that node's web servers and the ApplicationMasters') into one file on the shared
filesystem (:meth:`launcher.security.kerberos.SecurityPlan.sealed_file`); each node's agent
(:mod:`launcher.node.agent`) opens its own into the node-local ``<work dir>/krb`` (:func:`open_node_keys`) before
any daemon starts. The keys never lie in the clear on the shared filesystem (issue 36 item 5).

Imports the plan (:class:`~launcher.plan.cluster_plan.ClusterPlan`), :mod:`launcher.util.sealed` and
:func:`launcher.util.files.replace_private`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from launcher.plan.cluster_plan import ClusterPlan
from launcher.util.files import replace_private
from launcher.util.sealed import JOB_COOKIE_ENV, KEY_ENV, SealError, key_from_environment, unseal


def open_node_keys(plan: ClusterPlan, node: str, krb_dir: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Open this node's sealed keys (:meth:`SecurityPlan.sealed_file`: the services keytab, the cookie secrets of
    its web servers and the ApplicationMasters') into ``krb_dir`` (made 0700), each file 0600 from its creation,
    written atomically. The key comes from this process's environment (:func:`launcher.util.sealed.
    key_from_environment`: what the launcher set on the fan-out's command, or the PBS job's cookie): the keys never
    lie in the clear on the shared filesystem (issue 36 item 5).

    Returns:
        The files written.

    Raises:
        OSError: the sealed file cannot be read, or the files cannot be written.
        SealError: no key in the environment, or the file does not open with it.
    """
    key = key_from_environment(os.environ if env is None else env, plan.cluster_id)
    if key is None:
        raise SealError(f"no {KEY_ENV} or {JOB_COOKIE_ENV} in the agent's environment: the fan-out did not pass "
                        "the cluster's key on")
    files = unseal(plan.security.sealed_file(node).read_bytes(), key, f"{plan.cluster_id}/{node}")
    krb_dir.mkdir(mode=0o700, exist_ok=True)
    krb_dir.chmod(0o700)
    written = []
    for name, data in files.items():
        replace_private(krb_dir / Path(name).name, data)
        written.append(krb_dir / Path(name).name)
    return written
