"""Security in one room: what ``security:`` means for a cluster, the checks it makes of the nodes, its KDC, its keys.

Owns :mod:`~launcher.security.kerberos` (what ``security: per-cluster``, ``site`` and ``simple`` mean: the realm,
principals, keytabs and rules a plan carries as :attr:`ClusterPlan.security
<launcher.plan.cluster_plan.ClusterPlan.security>`), :mod:`~launcher.security.checks` (what secure mode needs of
every node, and the probe each node runs: ``python -m launcher.security.checks``), :mod:`~launcher.security.webauth`
(the signed ``hadoop.auth`` cookie of the launcher's own HTTP calls and the web servers' secrets),
:mod:`~launcher.security.keytabs` (the node agent opening its node's sealed keys into its working directory) and
:mod:`~launcher.security.kdc` (the per-cluster KDC, the keys sealed for the nodes, the secure-mode checks of every
node through the fan-out).

The room spans the data flow's layers, each module at the level of what it needs (the layers contract of
``[tool.importlinter]`` in ``pyproject.toml`` lists them there):

- :mod:`~launcher.security.kerberos` and :mod:`~launcher.security.checks` sit just below :mod:`launcher.plan` (the
  plan reads the first): they may import :mod:`launcher.schedulers`, :mod:`launcher.config`, :mod:`launcher.runtime`
  and :mod:`launcher.util` (today :mod:`launcher.config` and :mod:`launcher.util` only);
- :mod:`~launcher.security.webauth` and :mod:`~launcher.security.keytabs` beside :mod:`launcher.render`,
  :mod:`launcher.fanout` and :mod:`launcher.filesystems`: they may import :mod:`launcher.plan` and everything below
  it (the cluster, the steps, the node agent and the benchmarks use them);
- :mod:`~launcher.security.kdc` beside :mod:`launcher.cluster`, :mod:`launcher.steps` and :mod:`launcher.node`: it may
  import :mod:`launcher.fanout` (the nodes' probes), the plan and everything below them, not the cluster, the steps
  or the node agent; the life cycle and ``doctor`` use it.

Inside the room: ``kdc`` -> ``webauth`` | ``keytabs`` -> ``kerberos`` | ``checks`` (a second layers contract).
"""
